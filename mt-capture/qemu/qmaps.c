/* SPDX-License-Identifier: MIT */
/*
 * The guest's code mappings, JIT code bytes and trigger addresses (see
 * qmaps.h).  QEMU's user mode maps the guest's files into its own address
 * space at guest address + guest_base, so the host's /proc/self/maps
 * holds the guest's mappings next to QEMU's own; a mapping counts as the
 * guest's when a translated block lies in it.  QEMU keeps guest code
 * pages read-only on the host, so the maps written here mark them
 * executable, as the guest sees them.
 *
 * DIR/maps is a log: each file mapping new to a rescan is appended as
 * "TICK" and its /proc/PID/maps line, TICK the clock of the latest
 * mmap-family return before the rescan (0: none yet, the mappings QEMU
 * made itself).  The mapping was made before TICK's return or at it, and
 * none of its code ran before the rescan, so from TICK on it holds the
 * code at its addresses, also where an unloaded library was before.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qcode.h"
#include "qemu-ipc.h"
#include "qmaps.h"

#define MAX_RANGES 1024

/* A mapping that held translated code (kept after it is unmapped, so
 * that a trace of a library unloaded since still decodes). */
struct range {
	uint64_t start, end;	/* host addresses [start, end) */
	uint64_t pgoff;		/* file offset of start */
	char perms[5];		/* as /proc/self/maps shows them */
	char *path;		/* the file; "" for anonymous; owned */
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_dir[4096];
static struct range g_ranges[MAX_RANGES];
static size_t g_nranges;
static uint64_t g_seeds[MAX_RANGES];	/* a host code address per range */
static size_t g_nseeds;
static int64_t g_base;			/* host - guest address */
static struct qm_trigger *g_trig;
static size_t g_ntrig;
static int g_code_fd = -1;
static struct qc *g_qc;			/* JIT code's versions (qcode.h) */
static int g_maps_fd = -1;		/* DIR/maps, appended to */
static int g_dirty;			/* mappings changed since the scan */
static uint64_t g_change_tick;		/* clock of the latest change */

int
qm_init(const char *dir, struct qm_trigger *trig, size_t ntrig)
{
	char path[4200];

	snprintf(g_dir, sizeof(g_dir), "%s", dir);
	g_trig = trig;
	g_ntrig = ntrig;
	snprintf(path, sizeof(path), "%s/code", dir);
	g_code_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0600);
	snprintf(path, sizeof(path), "%s/maps", dir);
	g_maps_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0600);
	return g_code_fd < 0 || g_maps_fd < 0 ? -1 : 0;
}

void
qm_changed(uint64_t tick)
{
	uint64_t t = __atomic_load_n(&g_change_tick, __ATOMIC_RELAXED);

	/* The latest of the threads' changes (their clocks differ). */
	while (t < tick && !__atomic_compare_exchange_n(&g_change_tick, &t,
	    tick, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	__atomic_store_n(&g_dirty, 1, __ATOMIC_RELEASE);
}

static const struct range *
find_range(uint64_t h)
{
	size_t i;

	for (i = 0; i < g_nranges; i++)
		if (h >= g_ranges[i].start && h < g_ranges[i].end)
			return &g_ranges[i];
	return NULL;
}

static int
seeded(uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < g_nseeds; i++)
		if (g_seeds[i] >= start && g_seeds[i] < end)
			return 1;
	return 0;
}

static void
resolve_triggers(uint64_t start, uint64_t end, uint64_t pgoff,
    const char *path)
{
	size_t i;

	for (i = 0; i < g_ntrig; i++) {
		struct qm_trigger *t = &g_trig[i];

		if (strcmp(t->path, path) == 0 && t->offset >= pgoff &&
		    t->offset - pgoff < end - start)
			__atomic_store_n(&t->addr, start + (t->offset - pgoff) -
			    (uint64_t)g_base, __ATOMIC_RELEASE);
	}
}

/* Append @r to DIR/maps, at guest addresses, known from @tick on. */
static void
log_range(const struct range *r, uint64_t tick)
{
	char line[4400];
	int n;

	if (g_maps_fd < 0 || r->path[0] != '/')
		return;	/* JIT code: DIR/code has it */
	n = snprintf(line, sizeof(line), "%llu %llx-%llx %c%cx%c %08llx "
	    "00:00 0 %s\n", (unsigned long long)tick,
	    (unsigned long long)(r->start - (uint64_t)g_base),
	    (unsigned long long)(r->end - (uint64_t)g_base),
	    r->perms[0], r->perms[1], r->perms[3],
	    (unsigned long long)r->pgoff, r->path);
	/* One write with O_APPEND: a reader sees whole lines or none. */
	if (n > 0 && (size_t)n < sizeof(line))
		(void)!write(g_maps_fd, line, (size_t)n);
}

/* Record a mapping found at @tick: it replaces the ranges it overlaps. */
static void
add_range(uint64_t lo, uint64_t hi, uint64_t off, const char *perms,
    const char *file, uint64_t tick)
{
	struct range *r;
	size_t i, k = 0;
	char *path = strdup(file);

	if (path == NULL)
		return;
	for (i = 0; i < g_nranges; i++) {
		r = &g_ranges[i];
		if (r->start < hi && lo < r->end) {
			if (r->start == lo && r->end == hi && r->pgoff == off &&
			    strcmp(r->path, file) == 0) {
				free(path);
				return;	/* known already */
			}
			free(r->path);
			continue;
		}
		g_ranges[k++] = *r;
	}
	g_nranges = k;
	if (g_nranges == MAX_RANGES) {
		free(path);
		return;
	}
	r = &g_ranges[g_nranges++];
	r->start = lo;
	r->end = hi;
	r->pgoff = off;
	snprintf(r->perms, sizeof(r->perms), "%s", perms);
	r->path = path;
	log_range(r, tick);
}

/* Reread /proc/self/maps: record the mappings that hold a seed. */
static void
rescan(void)
{
	char line[4600], perms[8], file[4096];
	unsigned long long lo, hi, off;
	uint64_t tick = __atomic_load_n(&g_change_tick, __ATOMIC_RELAXED);
	FILE *in;

	in = fopen("/proc/self/maps", "re");
	if (in == NULL)
		return;
	while (fgets(line, sizeof(line), in) != NULL) {
		int pos = 0;

		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %*u %n", &lo, &hi,
		    perms, &off, &pos) < 4 || strlen(perms) != 4)
			continue;
		if (!seeded(lo, hi))
			continue;
		if (pos > 0)
			sscanf(line + pos, "%4095[^\n]", file);
		add_range(lo, hi, off, perms, file, tick);
		if (file[0] == '/')
			resolve_triggers(lo, hi, off, file);
	}
	fclose(in);
}

void
qm_put_code(uint64_t vaddr, const uint8_t *code, size_t len, uint64_t since)
{
	struct mtq_code rec;
	uint8_t buf[sizeof(rec) + MTQ_CODE_MAX];

	if (g_code_fd < 0 || len == 0 || len > MTQ_CODE_MAX)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.addr = vaddr;
	rec.len = (uint32_t)len;
	rec.since = since;
	memcpy(buf, &rec, sizeof(rec));
	memcpy(buf + sizeof(rec), code, len);
	/* One write with O_APPEND: records never interleave. */
	(void)!write(g_code_fd, buf, sizeof(rec) + len);
}

int
qm_block(uint64_t vaddr, const void *haddr, const uint8_t *code, size_t len,
    uint64_t (*version)(void *), uint64_t *since, int *jit)
{
	uint64_t h = (uint64_t)(uintptr_t)haddr;
	const struct range *r;
	int changed = 0;

	pthread_mutex_lock(&g_lock);
	g_base = (int64_t)(h - vaddr);
	r = find_range(h);
	if (r == NULL || __atomic_exchange_n(&g_dirty, 0, __ATOMIC_ACQUIRE)) {
		if (r == NULL && g_nseeds < MAX_RANGES)
			g_seeds[g_nseeds++] = h;
		rescan();
		r = find_range(h);
		changed = 1;
	}
	*since = 0;
	*jit = (r == NULL || r->path[0] != '/') && len <= MTQ_CODE_MAX;
	if (*jit && g_qc == NULL)
		g_qc = qc_new();
	if (*jit && g_qc != NULL)
		*since = qc_block(g_qc, vaddr, code, len, version, NULL, 0,
		    NULL);
	pthread_mutex_unlock(&g_lock);
	return changed;
}

uint64_t
qm_trigger_addr(size_t i)
{
	return i < g_ntrig ? __atomic_load_n(&g_trig[i].addr,
	    __ATOMIC_ACQUIRE) : 0;
}
