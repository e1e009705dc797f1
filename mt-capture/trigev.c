/* SPDX-License-Identifier: MIT */
/*
 * Trigger events: uprobe and hardware breakpoint perf events, their
 * rings and hits (see trigev.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include "err.h"
#include "sysfs.h"
#include "tracefs.h"
#include "trigev.h"

struct trig_ev {
	int fd;
	void *map;		/* 1 + 1 pages */
	unsigned site;
	int cpu;
	struct mt_trig_hit last;	/* the ring's last sample (dedup) */
	int last_kept;
};

struct mt_trig {
	struct trig_ev *ev;
	size_t nev, cap;
	size_t page;
	int *extra;		/* events redirected into ev[] rings */
	size_t nextra;
	const struct mt_trig_site *sites;	/* the caller's */
	struct perf_event_attr *attr;	/* per site; type 0: none */
	size_t nsites;
	pid_t *bound;		/* threads the uprobe events are bound to */
	size_t nbound;
	int enabled;
	int inherit;		/* tracefs uprobes, inherited */
	char tracefs[PATH_MAX];	/* its directory */
	char group[32];		/* MT_TRACEFS_GROUP<our pid> */
	unsigned char *defined;	/* per site: tracefs event t<i> defined */
	char how[PATH_MAX + 256];	/* which path, for -v */
};

/* ID: which event a sample came from, to drop one hit seen twice. */
#define TRIG_SAMPLE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	PERF_SAMPLE_ID)

/*
 * Open @proto in each thread of @tids on every CPU; the first event of a
 * (site, CPU) owns its ring, the others write into it.  Opened disabled
 * until mt_trig_enable, or enabled if the triggers are on already.  On an
 * error, @msg says "<what> in thread N: reason".
 */
static int
open_bound(struct mt_trig *t, unsigned site, const struct perf_event_attr
    *proto, const char *what, const pid_t *tids, size_t ntids, char *msg,
    size_t msgsz)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), c;
	size_t k, i;

	for (c = 0; c < ncpu; c++) {
		struct trig_ev *ev = NULL;

		for (i = 0; i < t->nev; i++)
			if (t->ev[i].site == site && t->ev[i].cpu == (int)c)
				ev = &t->ev[i];
		for (k = 0; k < ntids; k++) {
			struct perf_event_attr a = *proto;
			int fd, err, *nx;

			a.disabled = !t->enabled;
			fd = (int)syscall(SYS_perf_event_open, &a, tids[k],
			    (int)c, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd < 0 && (errno == ENODEV || errno == ESRCH))
				continue;
			if (fd < 0) {
				err = errno;
				if (tids[k] < 0)
					snprintf(msg, msgsz, "%s: %s", what,
					    strerror(err));
				else
					snprintf(msg, msgsz, "%s in thread "
					    "%d: %s", what, (int)tids[k],
					    strerror(err));
				return err == EACCES || err == EPERM ?
				    -MT_E_PERM : -MT_E_SYS;
			}
			if (ev == NULL) {
				/* The first event of this CPU owns the ring. */
				if (t->nev == t->cap) {
					struct trig_ev *ne = realloc(t->ev,
					    (t->cap * 2 + 8) * sizeof(*ne));

					if (ne == NULL) {
						close(fd);
						return -MT_E_NOMEM;
					}
					t->ev = ne;
					t->cap = t->cap * 2 + 8;
				}
				ev = &t->ev[t->nev];
				ev->fd = fd;
				ev->site = site;
				ev->cpu = (int)c;
				ev->map = mmap(NULL, 2 * t->page, PROT_READ |
				    PROT_WRITE, MAP_SHARED, fd, 0);
				if (ev->map == MAP_FAILED) {
					err = errno;
					close(fd);
					snprintf(msg, msgsz, "cannot map the "
					    "trigger ring: %s",
					    strerror(err));
					return -MT_E_SYS;
				}
				t->nev++;
				continue;
			}
			nx = realloc(t->extra, (t->nextra + 1) * sizeof(int));
			if (nx == NULL) {
				close(fd);
				return -MT_E_NOMEM;
			}
			t->extra = nx;
			t->extra[t->nextra++] = fd;
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ev->fd) < 0) {
				snprintf(msg, msgsz, "cannot share the "
				    "trigger ring: %s", strerror(errno));
				return -MT_E_SYS;
			}
		}
	}
	return 0;
}

/* Open uprobe site @i (t->attr[i]) in @tids; a refusal gets the hint. */
static int
open_uprobe(struct mt_trig *t, const struct mt_trig_site *site, unsigned i,
    const pid_t *tids, size_t ntids, char *msg, size_t msgsz)
{
	char what[PATH_MAX + 128];
	size_t n;
	int rc;

	snprintf(what, sizeof(what), "cannot open the uprobe for trigger %s",
	    site->desc);
	rc = open_bound(t, i, &t->attr[i], what, tids, ntids, msg, msgsz);
	if (rc == -MT_E_PERM && (n = strlen(msg)) < msgsz)
		snprintf(msg + n, msgsz - n, "; uprobe triggers need root or "
		    "CAP_SYS_ADMIN (CAP_PERFMON suffices on kernels 5.8+ "
		    "without the 2025 revert ba677dbe), or use a hw: "
		    "trigger");
	return rc;
}

/* Drop the tracefs uprobes t defined (their events must be closed). */
static void
undefine(struct mt_trig *t)
{
	char ev[32];
	size_t i;

	for (i = 0; t->defined != NULL && i < t->nsites; i++)
		if (t->defined[i]) {
			snprintf(ev, sizeof(ev), "t%zu", i);
			(void)mt_tracefs_uprobe_del(t->tracefs, t->group, ev);
			t->defined[i] = 0;
		}
}

/*
 * Define each uprobe site in tracefs and make t->attr[i] its inherited
 * tracepoint event.  Returns 0, or -1 with why in @why (nothing left
 * defined).
 */
static int
use_tracefs(struct mt_trig *t, char *why, size_t whysz)
{
	size_t i;

	if (mt_tracefs_dir(t->tracefs, sizeof(t->tracefs), why, whysz) < 0)
		return -1;
	(void)mt_tracefs_reap(t->tracefs);
	snprintf(t->group, sizeof(t->group), MT_TRACEFS_GROUP "%d",
	    (int)getpid());
	for (i = 0; i < t->nsites; i++) {
		struct perf_event_attr *a = &t->attr[i];
		char ev[32];
		uint64_t id;

		if (t->sites[i].hw)
			continue;
		snprintf(ev, sizeof(ev), "t%zu", i);
		if (mt_tracefs_uprobe_add(t->tracefs, t->group, ev,
		    t->sites[i].path, t->sites[i].offset, &id, why,
		    whysz) < 0) {
			undefine(t);
			return -1;
		}
		t->defined[i] = 1;
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = id;
		a->inherit = 1;
	}
	t->inherit = 1;
	return 0;
}

/* t->how of tracefs events, for -v. */
static void
tracefs_how(struct mt_trig *t)
{
	snprintf(t->how, sizeof(t->how), "tracefs uprobe events %s/t* "
	    "(%s/uprobe_events), inherited by new threads and child "
	    "processes", t->group, t->tracefs);
}

int
mt_trig_open(struct mt_trig **out, const struct mt_trig_site *sites,
    size_t nsites, const char *sysfs_root, const pid_t *tids, size_t ntids,
    int inherit, char *msg, size_t msgsz)
{
	static const pid_t everyone = -1;
	char why[PATH_MAX + 128] = "not asked for";
	struct mt_trig *t;
	struct mt_pmu pmu;
	size_t i;
	int rc;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL || (t->attr = calloc(nsites + 1,
	    sizeof(*t->attr))) == NULL ||
	    (t->defined = calloc(nsites + 1, 1)) == NULL ||
	    (tids != NULL && (t->bound = malloc((ntids + 1) *
	    sizeof(pid_t))) == NULL)) {
		mt_trig_free(t);
		return -MT_E_NOMEM;
	}
	t->sites = sites;
	t->nsites = nsites;
	t->page = (size_t)sysconf(_SC_PAGESIZE);
	if (tids != NULL) {
		memcpy(t->bound, tids, ntids * sizeof(pid_t));
		t->nbound = ntids;
	}
	for (i = 0; i < nsites && sites[i].hw; i++)
		;
	if (i < nsites && inherit && tids != NULL)
		(void)use_tracefs(t, why, sizeof(why));
	rc = i == nsites || t->inherit ? 0 : mt_pmu_read(&pmu, sysfs_root,
	    "uprobe", msg, msgsz);
	if (rc < 0) {
		if (rc == -MT_E_NOPMU)
			snprintf(msg, msgsz, "this kernel has no uprobe PMU "
			    "(CONFIG_UPROBE_EVENTS): triggers need it");
		mt_trig_free(t);
		return rc;
	}
	if (!t->inherit)
		snprintf(t->how, sizeof(t->how), "uprobe PMU events bound to "
		    "each thread%s (tracefs uprobes: %s)", tids == NULL ?
		    " (system-wide)" : ", a new one's when its sideband "
		    "FORK record is read", why);
	for (i = 0; i < nsites; i++) {
		struct perf_event_attr *a = &t->attr[i];

		if (sites[i].hw)
			continue;
		a->size = sizeof(*a);
		if (!t->inherit) {
			a->type = pmu.type;
			a->config1 = (uint64_t)(uintptr_t)sites[i].path;
			a->config2 = sites[i].offset;
		}
		a->sample_period = 1;
		a->wakeup_events = 1;
		a->sample_type = TRIG_SAMPLE;
		/*
		 * A uprobe PMU event cannot inherit: a child event re-reads
		 * config1, a pointer into our memory, in the target, and its
		 * clone() fails; a tracefs event is an id.  Bound to
		 * threads, the int3 goes only into their memory; pid -1
		 * puts it into every process that maps the file.
		 */
		rc = tids != NULL ? open_uprobe(t, &sites[i], (unsigned)i, tids,
		    ntids, msg, msgsz) : open_uprobe(t, &sites[i], (unsigned)i,
		    &everyone, 1, msg, msgsz);
		if (rc < 0) {
			mt_trig_free(t);
			return rc;
		}
	}
	if (t->inherit)
		tracefs_how(t);
	*out = t;
	return 0;
}

int
mt_trig_inherits(const struct mt_trig *t)
{
	return t != NULL && t->inherit;
}

const char *
mt_trig_how(const struct mt_trig *t)
{
	return t != NULL ? t->how : "";
}

int
mt_trig_add_thread(struct mt_trig *t, pid_t tid, char *msg, size_t msgsz)
{
	pid_t *nb;
	size_t i;
	int rc;

	if (t == NULL || t->bound == NULL)
		return 0;
	for (i = 0; i < t->nbound; i++)
		if (t->bound[i] == tid)
			return 0;
	if ((nb = realloc(t->bound, (t->nbound + 1) * sizeof(*nb))) == NULL)
		return -MT_E_NOMEM;
	t->bound = nb;
	t->bound[t->nbound++] = tid;
	for (i = 0; i < t->nsites; i++) {
		if (t->attr[i].type == 0)
			continue;
		rc = open_uprobe(t, &t->sites[i], (unsigned)i, &tid, 1, msg,
		    msgsz);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int
mt_trig_open_hw(struct mt_trig *t, unsigned site, uint64_t addr,
    const pid_t *tids, size_t ntids, char *msg, size_t msgsz)
{
	struct perf_event_attr a;
	char what[128];
	size_t n;
	int rc;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_X;
	a.bp_addr = addr;
	a.bp_len = sizeof(long);
	a.sample_period = 1;
	a.wakeup_events = 1;
	a.sample_type = TRIG_SAMPLE;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.inherit = 1;		/* threads created later */
	snprintf(what, sizeof(what), "cannot open the hardware breakpoint "
	    "at 0x%llx", (unsigned long long)addr);
	rc = open_bound(t, site, &a, what, tids, ntids, msg, msgsz);
	if (rc < 0 && errno == ENOSPC && (n = strlen(msg)) < msgsz)
		snprintf(msg + n, msgsz - n, " (all 4 debug registers of the "
		    "thread are in use)");
	return rc;
}

void
mt_trig_free(struct mt_trig *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nextra; i++)
		close(t->extra[i]);
	free(t->extra);
	free(t->attr);
	free(t->bound);
	for (i = 0; i < t->nev; i++) {
		munmap(t->ev[i].map, 2 * t->page);
		close(t->ev[i].fd);
	}
	undefine(t);	/* after the close: an event in use is EBUSY */
	free(t->defined);
	free(t->ev);
	free(t);
}

size_t
mt_trig_fds(const struct mt_trig *t, int *fds, size_t max)
{
	size_t i;

	for (i = 0; t != NULL && i < t->nev && i < max; i++)
		if (fds != NULL)
			fds[i] = t->ev[i].fd;
	return i;
}

size_t
mt_trig_parse(const uint8_t *data, uint64_t size, uint64_t head,
    uint64_t *tailp, unsigned site, const pid_t *pids, size_t npids,
    int (*other)(void *, pid_t), void *arg, struct mt_trig_hit *hits,
    size_t max)
{
	uint64_t tail = *tailp, j;
	size_t k, n = 0;

	while (tail + 8 <= head) {
		uint8_t rec[40];
		uint16_t rsz;
		uint32_t type;

		for (j = 0; j < 8; j++)
			rec[j] = data[(tail + j) & (size - 1)];
		memcpy(&type, rec, 4);
		memcpy(&rsz, rec + 6, 2);
		if (rsz < 8 || tail + rsz > head)
			break;
		if (type == PERF_RECORD_SAMPLE && rsz >= 8 + 24) {
			struct mt_trig_hit h;
			uint32_t pt[2];
			int ours = 0;

			/* Never consume a sample there is no room for. */
			if (n == max)
				break;
			for (j = 0; j < 40 && j < rsz; j++)
				rec[j] = data[(tail + j) & (size - 1)];
			memcpy(&h.ip, rec + 8, 8);
			memcpy(pt, rec + 16, 8);
			memcpy(&h.time, rec + 24, 8);
			h.id = 0;
			if (rsz >= 8 + 32)
				memcpy(&h.id, rec + 32, 8);
			h.pid = pt[0];
			h.tid = pt[1];
			h.trigger = site;
			for (k = 0; k < npids; k++)
				if ((pid_t)h.pid == pids[k])
					ours = 1;
			if (!ours && other != NULL)
				ours = other(arg, (pid_t)h.pid);
			if (ours)
				hits[n++] = h;
		}
		tail += rsz;
	}
	*tailp = tail;
	return n;
}

size_t
mt_trig_drop_doubles(struct mt_trig_hit *last, int *last_kept,
    struct mt_trig_hit *h, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		/* One hit, two events: another id, or (kernels whose
		 * perf_tp_event shares the sample data) the same time. */
		int twice = *last_kept && h[i].tid == last->tid &&
		    h[i].pid == last->pid && h[i].ip == last->ip &&
		    (h[i].id != last->id || h[i].time == last->time);

		*last = h[i];
		*last_kept = !twice;
		if (!twice)
			h[k++] = h[i];
	}
	return k;
}

size_t
mt_trig_read(struct mt_trig *t, const pid_t *pids, size_t npids,
    int (*other)(void *, pid_t), void *arg, struct mt_trig_hit *hits,
    size_t max)
{
	size_t i, k, n = 0;

	for (i = 0; t != NULL && i < t->nev && n < max; i++) {
		struct perf_event_mmap_page *pg = t->ev[i].map;
		const uint8_t *data = (const uint8_t *)pg + t->page;
		uint64_t head, tail;

		head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		tail = pg->data_tail;
		k = mt_trig_parse(data, t->page, head, &tail, t->ev[i].site,
		    pids, npids, other, arg, hits + n, max - n);
		__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
		n += mt_trig_drop_doubles(&t->ev[i].last, &t->ev[i].last_kept,
		    hits + n, k);
	}
	return n;
}

int
mt_trig_enable(struct mt_trig *t, int on, int drop)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE :
	    PERF_EVENT_IOC_DISABLE;
	size_t i;
	int rc = 0;

	if (t != NULL)
		t->enabled = on;
	for (i = 0; t != NULL && i < t->nev; i++) {
		struct perf_event_mmap_page *pg = t->ev[i].map;

		if (on && drop)	/* queued hits are older than this start */
			__atomic_store_n(&pg->data_tail, __atomic_load_n(
			    &pg->data_head, __ATOMIC_ACQUIRE),
			    __ATOMIC_RELEASE);
		if (ioctl(t->ev[i].fd, req, 0) < 0)
			rc = -MT_E_SYS;
	}
	for (i = 0; t != NULL && i < t->nextra; i++)
		if (ioctl(t->extra[i], req, 0) < 0)
			rc = -MT_E_SYS;
	return rc;
}
