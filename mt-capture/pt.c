/* SPDX-License-Identifier: MIT */
/*
 * The live Intel PT backend, written to the kernel ABI
 * (include/uapi/linux/perf_event.h, kernel/events/core.c,
 * arch/x86/events/intel/pt.c; docs/capture.md):
 * one intel_pt event per traced thread (pid = tid, cpu = -1, no inherit:
 * the kernel refuses to mmap an inherited per-task event; a child
 * process the framework follows from its FORK record gets its own), or with
 * --all-threads one per CPU with inherit (the events of every existing
 * thread on a CPU redirected into one ring with PERF_EVENT_IOC_SET_OUTPUT),
 * as perf does.  Each has a small data ring and its AUX area mapped
 * PROT_READ, which puts the AUX ring in overwrite (snapshot) mode.
 *
 * A snapshot: PERF_EVENT_IOC_DISABLE (the kernel updates aux_head only when
 * the event stops), read aux_head (an offset inside the buffer), let the
 * framework's mt_ring_extract copy the data, PERF_EVENT_IOC_ENABLE to
 * resume.  In run mode the events are opened disabled with enable_on_exec
 * on the gated child, so tracing starts at its execve.
 *
 * The target runs freely: run() only waits in mt_cap_poll().
 *
 * With a single-snapshot uprobe trigger and per-thread buffers, the
 * trigger is also put in the PT event's group with aux_pause (kernel
 * 6.13+), so PT stops at the trigger instruction; older kernels refuse it
 * and the asynchronous IOC_DISABLE remains.  The PT events' own data-ring
 * records (ITRACE_START, AUX with TRUNCATED) are drained whenever the wait
 * wakes and at each stop, and stored as SIDEBAND chunks of their buffer.
 * None of this code has run on PT hardware (see docs/capture.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "buf.h"
#include "err.h"
#include "backend.h"
#include "perfenv.h"
#include "proc.h"
#include "ptattr.h"
#include "sbevent.h"
#include "snap.h"
#include "sysfs.h"

struct pt_priv {
	struct mt_pmu pmu;
	size_t page;
	uint32_t uprobe_type;	/* 0: no uprobe PMU */
	int no_aux_pause;	/* the kernel refused aux_action once */
	int pause_err;		/* its errno */
	size_t npaused;		/* buffers with their aux_pause events */
	int running;		/* recording runs (started, not stopped):
				 * a buffer opened now is enabled at once */
};

struct pt_buf {
	int fd;			/* the event whose rings these are */
	int *extra;		/* per-CPU: other threads' events */
	size_t nextra;
	void *base;		/* mmap page + data ring */
	size_t base_len;
	void *aux;		/* AUX ring, PROT_READ */
	size_t aux_len;
	int pause[MT_CAP_MAX_TRIGGERS];	/* aux_pause uprobes in the group */
	size_t npause;
	struct mt_wbuf sb;	/* the event's own records (ITRACE_START,
				 * AUX with its flags, LOST) drained so far */
};

/* How often (ms) the sideband is trimmed to the rings' oldest data;
 * MT_PT_TRIM_MS, a whole number of ms, sets another period (tests). */
#define PT_TRIM_PERIOD_MS	10000

/* attr.sample_type of the PT events (mt_ptattr_fill): sample_id layout. */
#define PT_SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

static int
pt_probe(struct mt_cap *c, struct mt_snap_ptcfg *ptcfg, char *msg,
    size_t msgsz)
{
	const struct mt_cap_opts *o = mt_cap_opts(c);
	struct pt_priv *p;
	char vendor[16] = "this CPU";
	int rc;

	(void)ptcfg;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -MT_E_NOMEM;
	rc = mt_pmu_read(&p->pmu, o->sysfs_root, "intel_pt", msg, msgsz);
	if (rc == -MT_E_NOPMU) {
		struct mt_snap_host h;

		mt_proc_host(&h, 0);
		if (h.vendor[0] != '\0')
			snprintf(vendor, sizeof(vendor), "%s", h.vendor);
		free(h.kernel);
		free(h.hostname);
		snprintf(msg, msgsz, "no Intel PT on this machine (%s): "
		    "%s/sys/bus/event_source/devices has no intel_pt PMU (an "
		    "AMD or older CPU, or a VM that does not pass PT "
		    "through); use --backend emulate (software PT: the same "
		    "snapshot, much slower)", vendor, o->sysfs_root);
		free(p);
		return rc;
	}
	if (rc < 0) {
		free(p);
		return rc;
	}
	p->page = (size_t)sysconf(_SC_PAGESIZE);
	{
		struct mt_pmu up;
		char m[256];

		if (mt_pmu_read(&up, o->sysfs_root, "uprobe", m,
		    sizeof(m)) == 0)
			p->uprobe_type = up.type;
	}
	mt_cap_set_priv(c, p);
	return 0;
}

static int
pt_attach(struct mt_cap *c, pid_t pid, char *msg, size_t msgsz)
{
	/* perf_event_open checks ptrace access itself; nothing to stop. */
	(void)c;
	(void)pid;
	(void)msg;
	(void)msgsz;
	return 0;
}

static int
peo(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1,
	    PERF_FLAG_FD_CLOEXEC);
}

static void
buf_free(struct pt_buf *pb, size_t page)
{
	size_t i;

	(void)page;
	if (pb == NULL)
		return;
	if (pb->aux != NULL)
		munmap(pb->aux, pb->aux_len);
	if (pb->base != NULL)
		munmap(pb->base, pb->base_len);
	for (i = 0; i < pb->nextra; i++)
		close(pb->extra[i]);
	free(pb->extra);
	for (i = 0; i < pb->npause; i++)
		close(pb->pause[i]);
	mt_wbuf_release(&pb->sb);
	if (pb->fd >= 0)
		close(pb->fd);
	free(pb);
}

/*
 * --filter: "filter OFF/SIZE@PATH" per range (the kernel's address filter
 * syntax, perf_event_parse_addr_filter() in kernel/events/core.c), file
 * offsets that the kernel re-applies at every mmap of that file, so a
 * library mapped later is covered.  At most caps/num_address_ranges.
 */
static int
set_filters(struct mt_cap *c, struct pt_buf *pb, char *msg, size_t msgsz)
{
	struct pt_priv *p = mt_cap_priv(c);
	char *f = NULL;
	size_t len = 0, i, k;
	FILE *fp;
	const char *path;
	uint64_t off, size, nr = 0;
	int rc = 0;

	if (mt_cap_filter(c, 0, &path, &off, &size) < 0)
		return 0;
	(void)mt_pmu_cap(&p->pmu, "caps/num_address_ranges", &nr);
	fp = open_memstream(&f, &len);
	if (fp == NULL)
		return -MT_E_NOMEM;
	for (i = 0; mt_cap_filter(c, i, &path, &off, &size) == 0; i++)
		fprintf(fp, "%sfilter 0x%llx/0x%llx@%s", i ? "," : "",
		    (unsigned long long)off, (unsigned long long)size, path);
	fclose(fp);
	if (i > nr) {
		snprintf(msg, msgsz, "%zu --filter ranges, but this CPU has "
		    "%llu address ranges (intel_pt/caps/num_address_ranges)",
		    i, (unsigned long long)nr);
		rc = -1;
	} else if (ioctl(pb->fd, PERF_EVENT_IOC_SET_FILTER, f) < 0) {
		snprintf(msg, msgsz, "PERF_EVENT_IOC_SET_FILTER '%s': %s", f,
		    strerror(errno));
		rc = -1;
	}
	for (k = 0; rc == 0 && k < pb->nextra; k++)
		if (ioctl(pb->extra[k], PERF_EVENT_IOC_SET_FILTER, f) < 0) {
			snprintf(msg, msgsz, "PERF_EVENT_IOC_SET_FILTER: %s",
			    strerror(errno));
			rc = -1;
		}
	free(f);
	return rc;
}

/*
 * Single snapshot, per-thread buffer: put a uprobe for each trigger in the
 * PT event's group with aux_pause, so the kernel stops PT at the trigger
 * instruction itself instead of microseconds later when mt-capture reacts.
 * Kernels before 6.13 refuse the attr (its reserved bits are set): then
 * the asynchronous IOC_DISABLE is all there is, as in magic-trace.  Not
 * with --multi-snapshot (resuming a paused event is left to the kernel's
 * aux_resume, which this does not use) nor per-CPU buffers (a uprobe
 * event opened with inherit breaks the target's clone).
 */
static void
add_aux_pause(struct mt_cap *c, struct pt_buf *pb, pid_t tid)
{
	struct pt_priv *p = mt_cap_priv(c);
	const char *path;
	uint64_t off;
	size_t i;
	int hw;

	for (i = 0; !p->no_aux_pause && p->uprobe_type != 0 &&
	    pb->npause < MT_CAP_MAX_TRIGGERS &&
	    mt_cap_trigger_site(c, i, &path, &off, &hw) == 0; i++) {
		struct perf_event_attr a;
		int fd;

		if (hw)
			continue;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = p->uprobe_type;
		a.config1 = (uint64_t)(uintptr_t)path;
		a.config2 = off;
		a.sample_period = 1;
		mt_ptattr_set_aux_action(&a, MT_PTATTR_AUX_PAUSE);
		fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, pb->fd,
		    PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			p->no_aux_pause = 1;
			p->pause_err = errno;
			return;
		}
		pb->pause[pb->npause++] = fd;
	}
	if (pb->npause > 0)
		p->npaused++;
}

/*
 * META aux-pause: whether the kernel stops PT at the trigger itself
 * (armed) or the snapshot also holds what ran until mt-capture's
 * IOC_DISABLE (docs/formats/snapshot.md).  Only with uprobe triggers.
 */
static int
pt_annotate(struct mt_cap *c, struct mt_snap *s)
{
	const struct mt_cap_opts *o = mt_cap_opts(c);
	struct pt_priv *p = mt_cap_priv(c);
	const char *path;
	uint64_t off;
	char v[128];
	size_t i;
	int hw, uprobes = 0, rc;

	/* Each PT event's own records, as a SIDEBAND of its thread/CPU. */
	for (i = 0; i < mt_cap_nbufs(c); i++) {
		struct mt_cap_buf *b = mt_cap_buf(c, i);
		struct pt_buf *pb = b->bk;
		struct mt_snap_sideband sb;

		if (pb == NULL || pb->sb.len == 0)
			continue;
		memset(&sb, 0, sizeof(sb));
		sb.cpu = b->cpu >= 0 ? (uint32_t)b->cpu : MT_SNAP_NONE;
		sb.tid = b->tid >= 0 ? (uint32_t)b->tid : MT_SNAP_NONE;
		sb.sample_type = PT_SAMPLE_TYPE;
		sb.len = pb->sb.len;
		sb.data = pb->sb.p;
		if ((rc = mt_snap_add_sideband(s, &sb)) < 0)
			return rc;
	}
	for (i = 0; mt_cap_trigger_site(c, i, &path, &off, &hw) == 0; i++)
		uprobes |= !hw;
	if (!uprobes)
		return 0;
	if (p->no_aux_pause)
		snprintf(v, sizeof(v), "refused: %s (aux_action needs kernel "
		    "6.13+)", strerror(p->pause_err));
	else if (p->npaused > 0 && p->npaused == mt_cap_nbufs(c))
		snprintf(v, sizeof(v), "armed");
	else
		snprintf(v, sizeof(v), "not used (%s)", o->multi_snapshot ?
		    "--multi-snapshot" : mt_cap_ptcfg(c)->per_cpu ?
		    "per-CPU buffers" : "no uprobe PMU");
	return mt_snap_add_meta(s, "aux-pause", v);
}

static int
pt_buf_open(struct mt_cap *c, struct mt_cap_buf *b, char *msg, size_t msgsz)
{
	const struct mt_cap_opts *o = mt_cap_opts(c);
	struct pt_priv *p = mt_cap_priv(c);
	struct mt_ptattr_mode md;
	struct perf_event_attr a;
	struct perf_event_mmap_page *pg;
	enum mt_perfenv_stage stage = MT_PERFENV_OPEN;
	const char *what = "the intel_pt event";
	struct pt_buf *pb;
	size_t t;
	int err;

	pb = calloc(1, sizeof(*pb));
	if (pb == NULL)
		return -MT_E_NOMEM;
	pb->fd = -1;
	mt_wbuf_init(&pb->sb);
	md.kernel = o->kernel;
	md.enable_on_exec = !o->attach;
	md.inherit = b->cpu >= 0;
	mt_ptattr_fill(&a, p->pmu.type, mt_cap_ptcfg(c)->config, &md);
	if (b->cpu < 0) {
		pb->fd = peo(&a, b->tid, -1);
	} else {
		/* Per CPU: every thread of every target, one ring. */
		pid_t tids[4096];
		size_t i;

		for (i = 0; i < mt_cap_ntargets(c); i++) {
			pid_t pid = mt_cap_target(c, i);
			int n = o->attach ? mt_proc_threads(pid, tids, 4096) :
			    0;

			if (n <= 0) {
				tids[0] = pid;
				n = 1;
			}
			for (t = 0; t < (size_t)n; t++) {
				int fd = peo(&a, tids[t], b->cpu);
				int *nx;

				if (fd < 0 && errno == ESRCH)
					continue;
				if (fd < 0)
					goto fail_errno;
				if (pb->fd < 0) {
					pb->fd = fd;
					continue;
				}
				nx = realloc(pb->extra, (pb->nextra + 1) *
				    sizeof(int));
				if (nx == NULL) {
					close(fd);
					buf_free(pb, p->page);
					return -MT_E_NOMEM;
				}
				pb->extra = nx;
				pb->extra[pb->nextra++] = fd;
			}
		}
	}
	if (pb->fd < 0)
		goto fail_errno;
	if (set_filters(c, pb, msg, msgsz) < 0) {
		buf_free(pb, p->page);
		return -MT_E_UNSUPP;
	}
	pb->base_len = (1 + mt_cap_plan(c)->pt_pages) * p->page;
	stage = MT_PERFENV_MAP;
	what = "the intel_pt data ring";
	pb->base = mmap(NULL, pb->base_len, PROT_READ | PROT_WRITE,
	    MAP_SHARED, pb->fd, 0);
	if (pb->base == MAP_FAILED) {
		pb->base = NULL;
		goto fail_errno;
	}
	pg = pb->base;
	pb->aux_len = (size_t)mt_cap_plan(c)->aux_bytes;
	pg->aux_offset = pb->base_len;
	pg->aux_size = pb->aux_len;
	/* PROT_READ only: overwrite (snapshot) mode
	 * (rb->aux_overwrite, kernel/events/ring_buffer.c rb_alloc_aux()). */
	stage = MT_PERFENV_MAP_AUX;
	what = "the intel_pt AUX ring";
	pb->aux = mmap(NULL, pb->aux_len, PROT_READ, MAP_SHARED, pb->fd,
	    (off_t)pg->aux_offset);
	if (pb->aux == MAP_FAILED) {
		pb->aux = NULL;
		goto fail_errno;
	}
	/* Only now: the kernel refuses to redirect output into an event
	 * that has no ring yet (perf too maps first, then redirects). */
	for (t = 0; t < pb->nextra; t++)
		if (ioctl(pb->extra[t], PERF_EVENT_IOC_SET_OUTPUT,
		    pb->fd) < 0) {
			err = errno;
			snprintf(msg, msgsz, "PERF_EVENT_IOC_SET_OUTPUT: %s",
			    strerror(err));
			buf_free(pb, p->page);
			errno = err;
			return -MT_E_SYS;
		}
	if (mt_ring_init_mapped(&b->ring, pb->aux, pb->aux_len) < 0) {
		snprintf(msg, msgsz, "AUX size %zu is not a power of two",
		    pb->aux_len);
		buf_free(pb, p->page);
		return -MT_E_INVAL;
	}
	if (b->cpu < 0 && !o->multi_snapshot)
		add_aux_pause(c, pb, b->tid);
	/* A child process followed while recording runs (its FORK
	 * record, capture-poll.c): traced from now on. */
	if (p->running && ioctl(pb->fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		err = errno;
		snprintf(msg, msgsz, "PERF_EVENT_IOC_ENABLE: %s",
		    strerror(err));
		buf_free(pb, p->page);
		errno = err;
		return -MT_E_SYS;
	}
	b->bk = pb;
	return 0;
fail_errno:
	err = errno;
	mt_perfenv_hint(err, stage, what, o->kernel, msg, msgsz);
	buf_free(pb, p->page);
	errno = err;
	return err == EACCES || err == EPERM ? -MT_E_PERM : -MT_E_SYS;
}

static int
each_fd(struct mt_cap *c, unsigned long req)
{
	size_t i, k;
	int rc = 0;

	for (i = 0; i < mt_cap_nbufs(c); i++) {
		struct pt_buf *pb = mt_cap_buf(c, i)->bk;

		if (pb == NULL)
			continue;
		/* On an inherited event the ioctl reaches its children. */
		if (ioctl(pb->fd, req, 0) < 0)
			rc = -MT_E_SYS;
		for (k = 0; k < pb->nextra; k++)
			if (ioctl(pb->extra[k], req, 0) < 0)
				rc = -MT_E_SYS;
	}
	return rc;
}

static int
pt_start(struct mt_cap *c, char *msg, size_t msgsz)
{
	struct pt_priv *p = mt_cap_priv(c);

	p->running = 1;
	/* run: enable_on_exec starts tracing at the child's execve. */
	if (!mt_cap_opts(c)->attach)
		return 0;
	if (each_fd(c, PERF_EVENT_IOC_ENABLE) < 0) {
		snprintf(msg, msgsz, "PERF_EVENT_IOC_ENABLE: %s",
		    strerror(errno));
		return -MT_E_SYS;
	}
	return 0;
}

/*
 * Copy the records the kernel wrote into each PT event's own data ring
 * (ITRACE_START: which thread a per-CPU buffer starts with; AUX with
 * TRUNCATED/PARTIAL/COLLISION; LOST) and free the ring for more: a ring
 * of a few pages fills after a few dozen context switches.
 */
static int
pt_drain(struct mt_cap *c)
{
	struct pt_priv *p = mt_cap_priv(c);
	size_t i;

	for (i = 0; i < mt_cap_nbufs(c); i++) {
		struct pt_buf *pb = mt_cap_buf(c, i)->bk;
		struct perf_event_mmap_page *pg;
		const uint8_t *data;
		uint64_t size;

		if (pb == NULL || pb->base == NULL)
			continue;
		pg = pb->base;
		data = (const uint8_t *)pb->base + p->page;
		size = pb->base_len - p->page;
		mt_sbev_copy_ring(pg, data, size, &pb->sb);
		if (pb->sb.err)
			return pb->sb.err;
	}
	return 0;
}

/*
 * Perf time of the oldest data still in any PT ring, from the TSC of its
 * oldest PSB+ (PSB+ every 2^(psb_period+11) bytes: Intel SDM Vol. 3C,
 * "Intel Processor Trace", IA32_RTIT_CTL.PSBFreq).  Returns 0 when it
 * cannot be known: no time conversion, or a ring holding data without
 * any dated PSB+ (tsc=0).
 */
static uint64_t
oldest_in_rings(struct mt_cap *c)
{
	const struct mt_snap_timeconv *tc = mt_cap_timeconv(c);
	uint64_t oldest = UINT64_MAX, tsc, k;
	size_t i;

	if (!tc->cap_user_time_zero)
		return 0;
	for (i = 0; i < mt_cap_nbufs(c); i++) {
		struct mt_cap_buf *b = mt_cap_buf(c, i);

		if (b->ring.base == NULL)
			continue;
		if (mt_ring_oldest_tsc(b->ring.base, b->ring.size, &tsc)) {
			if (mt_snap_tsc_to_ns(tc, tsc) < oldest)
				oldest = mt_snap_tsc_to_ns(tc, tsc);
			continue;
		}
		for (k = 0; k < b->ring.size && b->ring.base[k] == 0; k++)
			;
		if (k < b->ring.size)
			return 0;	/* data, undated */
	}
	return oldest == UINT64_MAX ? 0 : oldest;
}

/* The sideband and the PT events' own records, to perf time @before. */
static void
pt_trim(struct mt_cap *c, uint64_t before)
{
	size_t i;

	(void)mt_cap_trim_sideband(c, before);
	for (i = 0; i < mt_cap_nbufs(c); i++) {
		struct pt_buf *pb = mt_cap_buf(c, i)->bk;

		if (pb != NULL)
			pb->sb.len = mt_sbev_trim_buf(pb->sb.p, pb->sb.len,
			    PT_SAMPLE_TYPE, before);
	}
}

static long
trim_period_ms(void)
{
	const char *e = getenv("MT_PT_TRIM_MS");
	char *end;
	long v;

	if (e == NULL || *e < '0' || *e > '9')
		return PT_TRIM_PERIOD_MS;
	errno = 0;
	v = strtol(e, &end, 10);
	return *end == '\0' && errno == 0 && v > 0 ? v : PT_TRIM_PERIOD_MS;
}

static int
pt_run(struct mt_cap *c)
{
	struct timespec now, last;
	uint64_t oldest;
	long period = trim_period_ms();
	int ev, rc;

	clock_gettime(CLOCK_MONOTONIC, &last);
	while ((ev = mt_cap_poll(c, -1)) == MT_CAP_EV_NONE) {
		if ((rc = pt_drain(c)) < 0)
			return rc;
		/*
		 * Every 10 s: context switches older than the oldest data
		 * in the rings describe nothing the snapshot can hold (1 s
		 * of margin for the PSB period and the conversion).
		 */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - last.tv_sec) * 1000L + (now.tv_nsec -
		    last.tv_nsec) / 1000000L < period)
			continue;
		last = now;
		oldest = oldest_in_rings(c);
		if (oldest > 1000000000ull)
			pt_trim(c, oldest - 1000000000ull);
	}
	return ev;
}

static int
pt_stop(struct mt_cap *c)
{
	size_t i;

	/* A thread that exited has ESRCH-free fds: DISABLE still works. */
	((struct pt_priv *)mt_cap_priv(c))->running = 0;
	(void)each_fd(c, PERF_EVENT_IOC_DISABLE);
	for (i = 0; i < mt_cap_nbufs(c); i++) {
		struct mt_cap_buf *b = mt_cap_buf(c, i);
		struct pt_buf *pb = b->bk;
		struct perf_event_mmap_page *pg;
		uint64_t head;

		if (pb == NULL)
			continue;
		pg = pb->base;
		head = __atomic_load_n(&pg->aux_head, __ATOMIC_ACQUIRE);
		/* An offset inside the buffer for PT snapshot rings; mask
		 * anyway should a kernel report a running count. */
		b->ring.head = head & (b->ring.size - 1);
	}
	/* With the AUX records of this stop. */
	return pt_drain(c);
}

static int
pt_resume(struct mt_cap *c)
{
	((struct pt_priv *)mt_cap_priv(c))->running = 1;
	return each_fd(c, PERF_EVENT_IOC_ENABLE);
}

static void
pt_detach(struct mt_cap *c)
{
	struct pt_priv *p = mt_cap_priv(c);

	/* The target never stops under PT: only stop tracing it. */
	if (p != NULL)
		p->running = 0;
	(void)each_fd(c, PERF_EVENT_IOC_DISABLE);
}

static void
pt_close(struct mt_cap *c)
{
	struct pt_priv *p = mt_cap_priv(c);
	size_t i;

	for (i = 0; i < mt_cap_nbufs(c); i++) {
		struct mt_cap_buf *b = mt_cap_buf(c, i);

		buf_free(b->bk, p != NULL ? p->page : 0);
		b->bk = NULL;
		b->ring.base = NULL;	/* was the AUX mapping */
	}
	free(p);
	mt_cap_set_priv(c, NULL);
}

const struct mt_cap_backend_ops mt_cap_backend_pt = {
	.name = "pt",
	.snap_backend = MT_SNAP_BK_INTEL_PT,
	.reaps_children = 0,
	.switch_sideband = 1,
	.trig_threads = 1,
	.trig_forks = 1,
	.probe = pt_probe,
	.attach = pt_attach,
	.buf_open = pt_buf_open,
	.start = pt_start,
	.run = pt_run,
	.stop = pt_stop,
	.annotate = pt_annotate,
	.resume = pt_resume,
	.detach = pt_detach,
	.close = pt_close,
};
