/* SPDX-License-Identifier: MIT */
/*
 * mt-capture import-perf: what `perf record -e intel_pt//` wrote, as a
 * snapshot (docs/perf.md has the mapping).
 *
 *   AUXTRACE_INFO + intel_pt attr  -> PTCFG (config, filters, per_cpu)
 *   AUXTRACE_INFO + TIME_CONV      -> TIMECONV
 *   CPUID, NRCPUS, priv[] ratios   -> HOST
 *   kernel records (MMAP2, COMM,   -> SIDEBAND chunks, one per CPU for
 *   SWITCH, ITRACE_START, ...)        per-CPU recordings, re-encoded with
 *                                     one sample_id layout; MMAP/MMAP2 of
 *                                     files with a known build-id become
 *                                     MMAP2 records in build-id form
 *   COMM records                   -> THREAD chunks, and PROCESS chunks
 *                                     for main threads (parent from
 *                                     FORK, exe from the first MMAP)
 *   AUXTRACE records               -> AUX chunks: one per record in
 *                                     snapshot mode (index counts the
 *                                     snapshots of each buffer); in full
 *                                     mode the contiguous records of one
 *                                     buffer are joined
 *   BUILD_ID feature               -> ELF chunks, from perf's build-id
 *                                     cache or the recorded path when its
 *                                     build-id matches
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "elffile.h"
#include "err.h"
#include "perf.h"
#include "perfdata.h"
#include "sideband.h"
#include "snap.h"

#define ST_OUT	(MT_SB_ST_IP | MT_SB_ST_TID | MT_SB_ST_TIME | MT_SB_ST_CPU | \
    MT_SB_ST_IDENTIFIER)
#define MAX_ELF_SIZE	(1ull << 31)

struct im {
	const struct perf_import_opts *o;
	const struct mt_pd *pd;
	struct mt_snap *s;
	struct perf_diag *d;
	int per_cpu;
};

static void __attribute__((format(printf, 2, 3)))
warnf(struct im *m, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (m->o->warn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	m->o->warn(m->o->warn_arg, msg);
}

/* "GenuineIntel,6,85,4" into the HOST chunk. */
static void
parse_cpuid(struct mt_snap_host *h, const char *s)
{
	const char *c = strchr(s, ',');
	unsigned f = 0, mo = 0, st = 0;
	size_t n;

	if (c == NULL)
		return;
	n = (size_t)(c - s) < sizeof(h->vendor) - 1 ? (size_t)(c - s) :
	    sizeof(h->vendor) - 1;
	memcpy(h->vendor, s, n);
	h->vendor[n] = 0;
	if (sscanf(c + 1, "%u,%u,%u", &f, &mo, &st) >= 2) {
		h->family = (uint16_t)f;
		h->model = (uint8_t)mo;
		h->stepping = (uint8_t)st;
	}
}

/* The filter string that follows priv[FILTER_STR_LEN], or NULL. */
static char *
filter_str(const struct mt_pd *pd)
{
	uint64_t len = mt_pd_priv(pd, MT_PD_IPT_FILTER_STR_LEN, 0);
	size_t first = MT_PD_IPT_FILTER_STR_LEN + 1, i;
	char *s;

	if (len == 0 || len > 4096 || pd->npriv < first ||
	    (len + 1 + 7) / 8 > pd->npriv - first)
		return NULL;
	s = calloc(1, (size_t)len + 8);
	if (s == NULL)
		return NULL;
	for (i = 0; i < (len + 7) / 8; i++)
		mt_put_le64((uint8_t *)s + 8 * i, pd->priv[first + i]);
	s[len] = 0;
	return s;
}

/* The address where @file's offset @off is mapped, from MMAP records. */
static int
file_off_addr(const struct mt_pd *pd, const char *file, uint64_t off,
    uint64_t *addr)
{
	struct mt_sb_reader rd;
	struct mt_sb_rec r;
	size_t i;

	for (i = 0; i < pd->nevents; i++) {
		const struct mt_pd_event *ev = &pd->events[i];
		const struct mt_pd_attr *a = &pd->attrs[ev->attr];

		mt_sb_reader_init(&rd, ev->p, ev->size, a->sample_type,
		    !!(a->flags & MT_PD_ATTR_SAMPLE_ID_ALL), 0);
		if (mt_sb_next(&rd, &r) != 0 || (r.type != MT_SB_MMAP &&
		    r.type != MT_SB_MMAP2))
			continue;
		if (strcmp(r.u.mmap.filename, file) == 0 &&
		    off >= r.u.mmap.pgoff &&
		    off - r.u.mmap.pgoff < r.u.mmap.len) {
			*addr = r.u.mmap.addr + (off - r.u.mmap.pgoff);
			return 0;
		}
	}
	return -1;
}

/*
 * The kernel's address-filter syntax that perf stores:
 * "filter|start|stop ADDR[/SIZE][@FILE]", comma or space separated.
 * With @FILE, ADDR is a file offset, placed with the MMAP records.
 */
static void
parse_filters(struct im *m, const char *str)
{
	struct mt_snap_ptcfg *c = &m->s->ptcfg;
	char *dup = strdup(str), *save = NULL, *tok, *act = NULL;

	if (dup == NULL)
		return;
	for (tok = strtok_r(dup, ", \t", &save); tok != NULL;
	    tok = strtok_r(NULL, ", \t", &save)) {
		char *file, *slash, *end;
		uint64_t a, size = 0;

		if (act == NULL) {
			act = tok;
			continue;
		}
		file = strchr(tok, '@');
		if (file != NULL)
			*file++ = 0;
		slash = strchr(tok, '/');
		if (slash != NULL) {
			*slash++ = 0;
			size = strtoull(slash, &end, 0);
		}
		a = strtoull(tok, &end, 0);
		if (c->nfilters < MT_SNAP_MAX_FILTERS && *end == 0 &&
		    (strcmp(act, "filter") == 0 || strcmp(act, "stop") == 0) &&
		    (file == NULL || file_off_addr(m->pd, file, a, &a) == 0)) {
			struct mt_snap_filter *f = &c->filters[c->nfilters++];

			f->cfg = strcmp(act, "filter") == 0 ? 1 : 2;
			f->a = a;
			f->b = a + (size ? size - 1 : 0);
		} else {
			warnf(m, "address filter '%s %s' not imported", act,
			    tok);
		}
		act = NULL;
	}
	free(dup);
}

/* @d is about AUXTRACE_INFO value @i: name its offset in the file. */
static void
priv_off(struct perf_diag *d, const struct mt_pd *pd, size_t i)
{
	d->off = pd->auxtrace_info_off + 16 + 8 * (uint64_t)i;
	d->has_off = 1;
}

static int
import_config(struct im *m, const struct mt_pd_attr *pa)
{
	const struct mt_pd *pd = m->pd;
	struct mt_snap *s = m->s;
	struct mt_snap_host h;
	char *filt;
	size_t i;

	s->has_ptcfg = 1;
	s->ptcfg.backend = MT_SNAP_BK_PERF;
	s->ptcfg.pmu_type = pa->type;
	s->ptcfg.config = pa->config;
	s->ptcfg.user = !(pa->flags & MT_PD_ATTR_EXCLUDE_USER);
	s->ptcfg.kernel = !(pa->flags & MT_PD_ATTR_EXCLUDE_KERNEL);
	m->per_cpu = mt_pd_priv(pd, MT_PD_IPT_PER_CPU_MMAPS, 0) != 0;
	for (i = 0; i < pd->naux; i++)
		if (pd->aux[i].cpu != MT_PD_NONE)
			m->per_cpu = 1;
	s->ptcfg.per_cpu = (uint8_t)m->per_cpu;
	filt = filter_str(pd);
	if (filt != NULL) {
		parse_filters(m, filt);
		free(filt);
	}

	if (mt_pd_priv(pd, MT_PD_IPT_TIME_SHIFT, 0) > 63) {
		/* perf's mmap page never has one: the file is corrupt. */
		snprintf(m->d->msg, sizeof(m->d->msg), "AUXTRACE_INFO "
		    "time_shift %llu is over 63", (unsigned long long)
		    mt_pd_priv(pd, MT_PD_IPT_TIME_SHIFT, 0));
		priv_off(m->d, pd, MT_PD_IPT_TIME_SHIFT);
		return -MT_E_CORRUPT;
	}
	s->has_timeconv = 1;
	s->timeconv.time_shift = (uint16_t)mt_pd_priv(pd,
	    MT_PD_IPT_TIME_SHIFT, 0);
	s->timeconv.time_mult = (uint32_t)mt_pd_priv(pd, MT_PD_IPT_TIME_MULT,
	    0);
	s->timeconv.time_zero = mt_pd_priv(pd, MT_PD_IPT_TIME_ZERO, 0);
	s->timeconv.cap_user_time_zero = mt_pd_priv(pd,
	    MT_PD_IPT_CAP_USER_TIME_ZERO, 0) != 0;
	if (pd->has_time_conv && pd->time_conv.extended) {
		s->timeconv.time_cycles = pd->time_conv.time_cycles;
		s->timeconv.time_mask = pd->time_conv.time_mask;
		s->timeconv.cap_user_time_short =
		    pd->time_conv.cap_user_time_short;
	}

	memset(&h, 0, sizeof(h));
	if (pd->cpuid != NULL)
		parse_cpuid(&h, pd->cpuid);
	h.cpuid_15[0] = (uint32_t)mt_pd_priv(pd, MT_PD_IPT_TSC_CTC_D, 0);
	h.cpuid_15[1] = (uint32_t)mt_pd_priv(pd, MT_PD_IPT_TSC_CTC_N, 0);
	h.max_nonturbo_ratio = (uint32_t)mt_pd_priv(pd,
	    MT_PD_IPT_MAX_NONTURBO_RATIO, 0);
	h.nr_cpus = pd->nr_cpus_online;
	h.kernel = pd->osrelease;
	h.hostname = pd->hostname;
	s->has_host = 1;
	return mt_snap_set_host(s, &h);
}

/* The build-id perf recorded for @filename, or NULL. */
static const struct mt_pd_build_id *
find_build_id(const struct mt_pd *pd, const char *filename)
{
	size_t i;

	for (i = 0; i < pd->nbuild_ids; i++)
		if (strcmp(pd->build_ids[i].filename, filename) == 0)
			return &pd->build_ids[i];
	return NULL;
}

/* One SIDEBAND chunk per CPU (per-CPU) or one for all. */
struct sb_out {
	uint32_t cpu;
	struct mt_wbuf w;
};

static int
import_sideband(struct im *m)
{
	const struct mt_pd *pd = m->pd;
	struct sb_out *outs = NULL;
	size_t nouts = 0, i, j;
	struct mt_sb_reader rd;
	struct mt_sb_rec r;
	int rc = 0;

	for (i = 0; i < pd->nevents && rc == 0; i++) {
		const struct mt_pd_event *ev = &pd->events[i];
		const struct mt_pd_attr *a = &pd->attrs[ev->attr];
		uint32_t cpu = MT_SNAP_NONE;

		mt_sb_reader_init(&rd, ev->p, ev->size, a->sample_type,
		    !!(a->flags & MT_PD_ATTR_SAMPLE_ID_ALL), ev->off);
		rc = mt_sb_next(&rd, &r);
		if (rc < 0) {
			m->d->has_off = 1;
			m->d->off = rd.err_off;
			snprintf(m->d->msg, sizeof(m->d->msg),
			    "corrupt %s record: %s", mt_sb_type_name(r.type),
			    rd.err_msg);
			break;
		}
		rc = 0;
		if (r.type == MT_SB_SAMPLE)
			continue;
		if (r.type == MT_SB_COMM) {
			struct mt_snap_thread t = { .pid = r.u.comm.pid,
			    .tid = r.u.comm.tid,
			    .comm = (char *)(uintptr_t)r.u.comm.comm };

			for (j = 0; j < m->s->nthreads; j++)
				if (m->s->threads[j].tid == t.tid)
					break;
			if (j < m->s->nthreads) {
				char *c = strdup(t.comm);

				if (c == NULL)
					return -MT_E_NOMEM;
				free(m->s->threads[j].comm);
				m->s->threads[j].comm = c;
				m->s->threads[j].pid = t.pid;
			} else if (mt_snap_add_thread(m->s, &t) < 0) {
				rc = -MT_E_NOMEM;
				break;
			}
		}
		if ((r.type == MT_SB_MMAP || r.type == MT_SB_MMAP2) &&
		    !(r.misc & MT_SB_MISC_MMAP_BUILD_ID)) {
			const struct mt_pd_build_id *b =
			    find_build_id(pd, r.u.mmap.filename);

			if (b != NULL) {
				r.type = MT_SB_MMAP2;
				r.misc |= MT_SB_MISC_MMAP_BUILD_ID;
				r.u.mmap.build_id_len = b->len;
				memcpy(r.u.mmap.build_id, b->id, b->len);
				if (r.u.mmap.prot == 0)
					r.u.mmap.prot = 5;
			}
		}
		if (m->per_cpu && (a->sample_type & MT_SB_ST_CPU))
			cpu = r.id.cpu;
		for (j = 0; j < nouts && outs[j].cpu != cpu; j++)
			;
		if (j == nouts) {
			struct sb_out *no = realloc(outs,
			    (nouts + 1) * sizeof(*no));

			if (no == NULL) {
				rc = -MT_E_NOMEM;
				break;
			}
			outs = no;
			outs[nouts].cpu = cpu;
			mt_wbuf_init(&outs[nouts].w);
			nouts++;
		}
		if (!(a->flags & MT_PD_ATTR_SAMPLE_ID_ALL))
			memset(&r.id, 0, sizeof(r.id));
		rc = mt_sb_write(&outs[j].w, &r, ST_OUT);
		if (rc > 0)
			rc = 0;
		else if (rc == -MT_E_LIMIT || rc == -MT_E_INVAL)
			rc = 0;	/* cannot be re-encoded: dropped */
	}
	for (j = 0; j < nouts; j++) {
		struct mt_snap_sideband sb = { .cpu = outs[j].cpu,
		    .tid = MT_SNAP_NONE, .sample_type = ST_OUT,
		    .len = outs[j].w.len, .data = outs[j].w.p };

		if (rc == 0 && outs[j].w.err)
			rc = outs[j].w.err;
		if (rc == 0 && mt_snap_add_sideband(m->s, &sb) < 0)
			rc = -MT_E_NOMEM;
		mt_wbuf_release(&outs[j].w);
	}
	free(outs);
	return rc;
}

static int
import_aux(struct im *m)
{
	const struct mt_pd *pd = m->pd;
	int snapshot = mt_pd_priv(pd, MT_PD_IPT_SNAPSHOT_MODE, 0) != 0;
	uint32_t *count = NULL;		/* AUX chunks per idx so far */
	size_t *owner = NULL;		/* record -> 1 + its chunk's first */
	uint32_t maxidx = 0;
	size_t i, j;
	int rc = 0;

	for (j = 0; j < pd->naux; j++)
		if (pd->aux[j].idx > maxidx)
			maxidx = pd->aux[j].idx;
	if (maxidx > 1u << 20) {
		m->d->has_off = 1;
		m->d->off = pd->aux[0].off;
		snprintf(m->d->msg, sizeof(m->d->msg),
		    "AUXTRACE idx %u out of range", maxidx);
		return -MT_E_CORRUPT;
	}
	count = calloc((size_t)maxidx + 1, sizeof(*count));
	owner = calloc(pd->naux + 1, sizeof(*owner));
	if (count == NULL || owner == NULL) {
		rc = -MT_E_NOMEM;
		goto out;
	}
	for (i = 0; i < pd->naux && rc == 0; i++) {
		const struct mt_pd_auxtrace *a = &pd->aux[i];
		struct mt_snap_aux x;
		uint64_t len = a->size, next = a->offset + a->size, pos = 0;

		if (owner[i] != 0)
			continue;
		owner[i] = i + 1;
		/* Full-trace mode: later records of this idx that continue
		 * where this one ends are the same stream. */
		for (j = i + 1; !snapshot && j < pd->naux; j++) {
			if (owner[j] != 0 || pd->aux[j].idx != a->idx)
				continue;
			if (pd->aux[j].offset != next)
				break;
			owner[j] = i + 1;
			len += pd->aux[j].size;
			next += pd->aux[j].size;
		}
		memset(&x, 0, sizeof(x));
		x.tid = a->cpu == MT_PD_NONE ? a->tid : MT_SNAP_NONE;
		x.cpu = a->cpu;
		x.index = count[a->idx]++;
		x.flags = snapshot ? MT_SNAP_AUX_WRAPPED : 0;
		x.ring_size = len;	/* perf does not record it */
		x.head = 0;
		x.len = len;
		x.data = malloc(len ? (size_t)len : 1);
		if (x.data == NULL) {
			rc = -MT_E_NOMEM;
			break;
		}
		for (j = i; j < pd->naux; j++) {
			if (owner[j] != i + 1)
				continue;
			memcpy(x.data + pos, pd->aux[j].data,
			    (size_t)pd->aux[j].size);
			pos += pd->aux[j].size;
		}
		rc = mt_snap_add_aux(m->s, &x);
		free(x.data);
	}
out:
	free(count);
	free(owner);
	return rc;
}

/* Read the whole of @path if it is an ELF file with build-id @b. */
static int
try_elf(struct im *m, const char *path, const struct mt_pd_build_id *b,
    const char *recorded)
{
	struct mt_elf *e = NULL;
	const uint8_t *id;
	size_t n;
	struct stat st;
	struct mt_snap_elf x;
	int fd, rc;
	ssize_t k;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > MAX_ELF_SIZE)
		return 0;
	if (mt_elf_open(&e, path) < 0)
		return 0;
	n = mt_elf_build_id(e, &id);
	rc = n == b->len && memcmp(id, b->id, n) == 0;
	mt_elf_free(e);
	if (!rc) {
		warnf(m, "'%s': build-id differs from the one perf recorded "
		    "for '%s': not bundled", path, recorded);
		return 0;
	}
	memset(&x, 0, sizeof(x));
	x.build_id_len = b->len;
	memcpy(x.build_id, b->id, b->len);
	x.path = (char *)(uintptr_t)recorded;
	x.len = (uint64_t)st.st_size;
	x.data = malloc(x.len ? (size_t)x.len : 1);
	if (x.data == NULL)
		return -MT_E_NOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	k = fd < 0 ? -1 : pread(fd, x.data, (size_t)x.len, 0);
	if (fd >= 0)
		close(fd);
	rc = k == (ssize_t)x.len ? mt_snap_add_elf(m->s, &x) : 0;
	free(x.data);
	return rc < 0 ? rc : (k == (ssize_t)x.len);
}

static int
import_elfs(struct im *m)
{
	const struct mt_pd *pd = m->pd;
	char path[4096], hex[41];
	size_t i, j;
	int rc;

	if (!m->o->bundle)
		return 0;
	for (i = 0; i < pd->nbuild_ids; i++) {
		const struct mt_pd_build_id *b = &pd->build_ids[i];

		if (b->pid == -1 || b->len == 0 || b->filename[0] != '/' ||
		    (b->misc & MT_SB_MISC_CPUMODE_MASK) == MT_SB_MISC_KERNEL)
			continue;
		for (j = 0; j < b->len; j++)
			snprintf(hex + 2 * j, 3, "%02x", b->id[j]);
		rc = 0;
		if (m->o->debug_dir != NULL) {
			/* ~/.debug/.build-id/ab/cdef... -> ../../PATH/BID,
			 * a directory holding "elf" (older perf: the file) */
			snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/elf",
			    m->o->debug_dir, hex, hex + 2);
			rc = try_elf(m, path, b, b->filename);
			if (rc == 0) {
				snprintf(path, sizeof(path),
				    "%s/.build-id/%.2s/%s", m->o->debug_dir,
				    hex, hex + 2);
				rc = try_elf(m, path, b, b->filename);
			}
		}
		if (rc == 0)
			rc = try_elf(m, b->filename, b, b->filename);
		if (rc < 0)
			return rc;
		if (rc == 0)
			warnf(m, "'%s' (build-id %s) not found: not bundled",
			    b->filename, hex);
	}
	return 0;
}

/*
 * A PROCESS chunk for each process whose main thread (pid == tid) has a
 * COMM: its parent from the FORK record that made it, its executable as
 * the first file it mapped executable.  perf.data does not record the
 * target's command line.
 */
static int
import_processes(struct im *m)
{
	const struct mt_pd *pd = m->pd;
	struct mt_sb_reader rd;
	struct mt_sb_rec r;
	size_t i, j;
	int rc = 0;

	for (i = 0; i < m->s->nthreads && rc == 0; i++) {
		const struct mt_snap_thread *t = &m->s->threads[i];
		struct mt_snap_process p = { .pid = t->pid, .comm = t->comm };
		char *exe = NULL;

		if (t->pid != t->tid)
			continue;
		for (j = 0; j < pd->nevents; j++) {
			const struct mt_pd_event *ev = &pd->events[j];
			const struct mt_pd_attr *a = &pd->attrs[ev->attr];

			mt_sb_reader_init(&rd, ev->p, ev->size, a->sample_type,
			    !!(a->flags & MT_PD_ATTR_SAMPLE_ID_ALL), 0);
			if (mt_sb_next(&rd, &r) != 0)
				continue;
			if (r.type == MT_SB_FORK && r.u.task.pid == t->pid &&
			    r.u.task.tid == t->pid)
				p.ppid = r.u.task.ppid;
			if (exe == NULL && (r.type == MT_SB_MMAP ||
			    r.type == MT_SB_MMAP2) && r.u.mmap.pid == t->pid &&
			    !(r.misc & MT_SB_MISC_MMAP_DATA) &&
			    r.u.mmap.filename[0] == '/' &&
			    (r.type == MT_SB_MMAP || (r.u.mmap.prot & 4)))
				exe = (char *)(uintptr_t)r.u.mmap.filename;
		}
		p.exe = exe;
		rc = mt_snap_add_process(m->s, &p);
	}
	return rc;
}

/*
 * Code perf read from flat (non-ELF) files, as the MMAP2 records of an
 * export-perf file name them (page dumps, vDSO copies): bundled as BLOB
 * chunks, since a decoder looks up mapped paths as ELF files only.  Done
 * even without bundling: the snapshot could not be decoded otherwise.
 * Only files under o->flat_dir (the perf.data's directory, where
 * export-perf puts them) are read: a perf.data from elsewhere must not
 * copy arbitrary local files into a snapshot.
 */
/* Is @path, resolved, inside the directory @dir (absolute, resolved)? */
static int
under_dir(const char *dir, const char *path)
{
	char *real;
	size_t n;
	int ok;

	if (dir == NULL || (real = realpath(path, NULL)) == NULL)
		return 0;
	n = strlen(dir);
	ok = strncmp(real, dir, n) == 0 && (real[n] == '/' ||
	    (n > 0 && dir[n - 1] == '/'));
	free(real);
	return ok;
}

static int
import_flat_files(struct im *m)
{
	const struct mt_pd *pd = m->pd;
	struct mt_sb_reader rd;
	struct mt_sb_rec r;
	uint64_t total = 0;
	size_t i, j;
	int rc = 0;

	for (i = 0; i < pd->nevents && rc == 0; i++) {
		const struct mt_pd_event *ev = &pd->events[i];
		const struct mt_pd_attr *a = &pd->attrs[ev->attr];
		const struct mt_sb_mmap *mm = &r.u.mmap;
		struct mt_snap_blob b;
		unsigned char magic[4];
		struct stat st;
		ssize_t k;
		int fd, dup = 0;

		mt_sb_reader_init(&rd, ev->p, ev->size, a->sample_type,
		    !!(a->flags & MT_PD_ATTR_SAMPLE_ID_ALL), ev->off);
		if (mt_sb_next(&rd, &r) != 0 || (r.type != MT_SB_MMAP &&
		    r.type != MT_SB_MMAP2) || (r.misc & MT_SB_MISC_MMAP_DATA) ||
		    mm->filename[0] != '/' || mm->len == 0)
			continue;
		for (j = 0; j < m->s->nblobs; j++)
			if (m->s->blobs[j].addr == mm->addr &&
			    m->s->blobs[j].pid == mm->pid &&
			    strcmp(m->s->blobs[j].name, mm->filename) == 0)
				dup = 1;
		if (dup)
			continue;
		/* O_NONBLOCK and a regular file: a FIFO must not hang */
		fd = open(mm->filename, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		if (!under_dir(m->o->flat_dir, mm->filename)) {
			if (pread(fd, magic, 4, 0) == 4 &&
			    memcmp(magic, "\177ELF", 4) != 0)
				warnf(m, "'%s' is not an ELF file and lies "
				    "outside the perf.data's directory: not "
				    "bundled", mm->filename);
			close(fd);
			continue;
		}
		if (pread(fd, magic, 4, 0) != 4 ||
		    memcmp(magic, "\177ELF", 4) == 0 ||
		    mm->pgoff >= (uint64_t)st.st_size) {
			close(fd);
			continue;
		}
		memset(&b, 0, sizeof(b));
		b.pid = mm->pid;
		b.kind = MT_SNAP_BLOB_MEMORY;
		b.addr = mm->addr;
		b.name = (char *)(uintptr_t)mm->filename;
		b.len = (uint64_t)st.st_size - mm->pgoff;
		if (b.len > mm->len)
			b.len = mm->len;
		total += b.len;
		if (total > MAX_ELF_SIZE) {
			close(fd);
			warnf(m, "'%s': flat code files above 2 GiB in all: "
			    "not bundled", mm->filename);
			break;
		}
		b.data = malloc((size_t)b.len);
		if (b.data == NULL) {
			close(fd);
			return -MT_E_NOMEM;
		}
		k = pread(fd, b.data, (size_t)b.len, (off_t)mm->pgoff);
		close(fd);
		if (k == (ssize_t)b.len)
			rc = mt_snap_add_blob(m->s, &b);
		free(b.data);
	}
	return rc;
}

int
perf_import(const struct perf_import_opts *o, const struct mt_pd *pd,
    struct mt_snap *s, struct perf_diag *d)
{
	struct im m = { .o = o, .pd = pd, .s = s, .d = d };
	const struct mt_pd_attr *pa;
	int rc;

	memset(d, 0, sizeof(*d));
	if (!pd->has_auxtrace_info ||
	    pd->auxtrace_type != MT_PD_AUXTRACE_INTEL_PT) {
		snprintf(d->msg, sizeof(d->msg), "no Intel PT data "
		    "(AUXTRACE_INFO of type 1) in this perf.data");
		return -MT_E_UNSUPP;
	}
	if (pd->npriv < MT_PD_IPT_NPRIV_MIN) {
		snprintf(d->msg, sizeof(d->msg), "AUXTRACE_INFO has %zu "
		    "values, Intel PT needs at least %d", pd->npriv,
		    MT_PD_IPT_NPRIV_MIN);
		priv_off(d, pd, 0);
		return -MT_E_CORRUPT;
	}
	pa = mt_pd_pt_attr(pd);
	if (pa == NULL) {
		snprintf(d->msg, sizeof(d->msg), "no event of the Intel PT "
		    "PMU type %llu recorded",
		    (unsigned long long)pd->priv[MT_PD_IPT_PMU_TYPE]);
		priv_off(d, pd, MT_PD_IPT_PMU_TYPE);
		return -MT_E_CORRUPT;
	}
	rc = mt_snap_add_meta(s, "reason", "import");
	if (rc == 0)
		rc = mt_snap_add_meta(s, "backend-name", "perf");
	if (rc == 0 && o->source != NULL)
		rc = mt_snap_add_meta(s, "source", o->source);
	if (rc == 0)
		rc = mt_snap_add_meta(s, "perf-mode", pd->pipe ? "pipe" :
		    "file");
	if (rc == 0)
		rc = import_config(&m, pa);
	if (rc == 0)
		rc = import_sideband(&m);
	if (rc == 0)
		rc = import_processes(&m);
	if (rc == 0)
		rc = import_aux(&m);
	if (rc == 0)
		rc = import_elfs(&m);
	if (rc == 0)
		rc = import_flat_files(&m);
	if (rc == -MT_E_NOMEM && d->msg[0] == 0)
		snprintf(d->msg, sizeof(d->msg), "out of memory");
	return rc;
}
