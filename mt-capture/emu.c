/* SPDX-License-Identifier: MIT */
/*
 * The software PT backend ("--backend emulate"): the capture framework's
 * backend interface (backend.h) over the ptrace tracer (emu-trace.h).
 * Packets go into each thread's framework ring with mt_ring_write(), so
 * the snapshot is extracted by the same code as live Intel PT's; the
 * framework's sideband, uprobe triggers and signals are seen through
 * mt_cap_poll() between steps.
 *
 * The snapshot records the virtual clock (docs/emulate.md): HOST cpuid_15
 * and max_nonturbo_ratio match the TMA/MTC/CBR packets the generator
 * writes, and TIMECONV is the kernel's when it gives one (the clock starts
 * at the host TSC), else a synthetic 2.5 GHz conversion from the start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>
#include <sys/stat.h>

#include "backend.h"
#include "emu-jit.h"
#include "emu-trace.h"
#include "err.h"
#include "proc.h"
#include "sideband.h"
#include "snap.h"

#define SYNTH_TSC0 (1ull << 32)	/* synthetic clock's first tick */

struct emu {
	struct mt_emu_trace *tr;	/* the stepping loop; created lazily */
	FILE *gt;			/* --ground-truth file, or NULL */
	char *gt_tmp;			/* its temporary name; owned */
	int gt_direct;			/* not a regular file: no rename */
	int gt_said;			/* its cap was reported */
	uint64_t config;		/* PT config bits in use */
	int real_tsc;			/* clock starts at the host TSC */
	uint64_t tsc0;			/* clock at creation */
	uint64_t mono0;			/* CLOCK_MONOTONIC ns at creation */
	unsigned nsnap;			/* snapshots taken */
	uint64_t *stop_tsc;		/* virtual clock at each stop; owned */
};

static int
ring_sink(void *ctx, const uint8_t *p, size_t n)
{
	struct mt_cap_buf *b = ctx;

	mt_ring_write(&b->ring, p, n);
	return 0;
}

static int
hook_thread_new(void *ctx, pid_t pid, pid_t tid, mt_emu_pt_sink_fn *sink,
    void **sink_ctx)
{
	struct mt_cap *c = ctx;
	struct mt_cap_buf *b = mt_cap_buf_find(c, tid);
	int rc;

	if ((rc = mt_cap_trig_thread(c, tid)) < 0)
		return rc;
	if (b == NULL && (mt_cap_opts(c)->all_threads || tid == pid)) {
		if ((rc = mt_cap_buf_add(c, pid, tid, -1, &b)) < 0)
			return rc;
	}
	if (b != NULL) {
		*sink = ring_sink;
		*sink_ctx = b;
	}
	return 0;
}

static void
hook_thread_exit(void *ctx, pid_t tid)
{
	struct mt_cap_buf *b = mt_cap_buf_find(ctx, tid);

	if (b != NULL)
		b->exited = 1;
}

static int
hook_proc_exit(void *ctx, pid_t pid, int status)
{
	return mt_cap_note_exit(ctx, pid, status);
}

static int
hook_proc_new(void *ctx, pid_t pid, pid_t parent)
{
	return mt_cap_follow(ctx, pid, parent);
}

static void
hook_proc_exiting(void *ctx, pid_t pid)
{
	mt_cap_note_exiting(ctx, pid);
}

static int
hook_poll(void *ctx, int timeout_ms)
{
	struct emu *e = mt_cap_priv(ctx);

	if (e->gt != NULL && !e->gt_said && e->tr != NULL &&
	    mt_emu_trace_gt_full(e->tr)) {
		e->gt_said = 1;
		mt_cap_gt_full(ctx);
	}
	return mt_cap_poll(ctx, timeout_ms);
}

static void
hook_fix(void *ctx, pid_t pid, uint64_t addr, uint8_t *buf, size_t len)
{
	mt_cap_fix_code(ctx, pid, addr, buf, len);
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
emu_probe(struct mt_cap *c, struct mt_snap_ptcfg *ptcfg, char *msg,
    size_t msgsz)
{
	const struct mt_cap_opts *o = mt_cap_opts(c);
	struct emu *e;

	if (o->kernel) {
		snprintf(msg, msgsz, "the emulate backend traces user space "
		    "only: drop --kernel");
		return -MT_E_UNSUPP;
	}
	if (o->nfilters > 0) {
		snprintf(msg, msgsz, "the emulate backend does not implement "
		    "--filter");
		return -MT_E_UNSUPP;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -MT_E_NOMEM;
	if (o->ground_truth != NULL) {
		/* A regular file is written under a temporary name and
		 * renamed when complete; a device or fifo is written to. */
		struct stat sb;
		int direct = stat(o->ground_truth, &sb) == 0 &&
		    !S_ISREG(sb.st_mode);

		if (direct)
			e->gt_tmp = strdup(o->ground_truth);
		else if (asprintf(&e->gt_tmp, "%s.tmp.%d", o->ground_truth,
		    (int)getpid()) < 0)
			e->gt_tmp = NULL;
		if (e->gt_tmp == NULL) {
			free(e);
			return -MT_E_NOMEM;
		}
		e->gt_direct = direct;
		e->gt = fopen(e->gt_tmp, "w");
		if (e->gt == NULL) {
			snprintf(msg, msgsz, "cannot open '%s': %s",
			    e->gt_tmp, strerror(errno));
			free(e->gt_tmp);
			free(e);
			return -MT_E_IO;
		}
	}
	/* Branch tracing is what the generator writes; keep the timing
	 * terms the framework chose. */
	ptcfg->config |= 1ull << 13;
	ptcfg->user = 1;
	ptcfg->kernel = 0;
	ptcfg->per_cpu = 0;
	e->config = ptcfg->config;
	mt_cap_set_priv(c, e);
	return 0;
}

static int
make_tracer(struct mt_cap *c, struct emu *e)
{
	const struct mt_snap_timeconv *tc = mt_cap_timeconv(c);
	struct mt_emu_trace_opts to;
	struct mt_emu_hooks h;

	memset(&to, 0, sizeof(to));
	memset(&h, 0, sizeof(h));
	e->real_tsc = tc != NULL && tc->cap_user_time_zero && tc->time_mult;
	/* Without the kernel's conversion the clock starts at 2^32 ticks
	 * (never 0, which some consumers take for "no time"). */
	e->tsc0 = e->real_tsc ? __rdtsc() : SYNTH_TSC0;
	e->mono0 = mono_ns();
	to.config = e->config;
	to.start_at = mt_cap_opts(c)->start_at;
	to.ground_truth = e->gt;
	to.ground_truth_max = mt_cap_opts(c)->ground_truth_max;
	to.poll_every = 1;
	/* Longer than ptrace's own delays on a loaded machine. */
	to.slow_syscall_ns = 10000000;
	to.tsc0 = e->tsc0;
	to.tsc_per_ns = e->real_tsc ?
	    (double)(1ull << tc->time_shift) / tc->time_mult : 2.5;
	h.ctx = c;
	h.thread_new = hook_thread_new;
	h.thread_exit = hook_thread_exit;
	h.proc_exit = hook_proc_exit;
	h.poll = hook_poll;
	h.fix = hook_fix;
	/* --all-threads: child processes too. */
	to.follow_forks = mt_cap_opts(c)->all_threads;
	h.proc_new = hook_proc_new;
	h.proc_exiting = hook_proc_exiting;
	e->tr = mt_emu_trace_new(&to, &h);
	return e->tr == NULL ? -MT_E_NOMEM : 0;
}

static int
emu_attach(struct mt_cap *c, pid_t pid, char *msg, size_t msgsz)
{
	struct emu *e = mt_cap_priv(c);
	char comm[64];
	pid_t tracer;
	int rc;

	if (e->tr == NULL && (rc = make_tracer(c, e)) < 0)
		return rc;
	/* Before the program runs (run: it waits before its exec). */
	if (mt_cap_opts(c)->start_at != NULL && pid == mt_cap_target(c, 0) &&
	    (rc = mt_emu_trace_check_start(mt_cap_exe(c),
	    mt_cap_opts(c)->start_at, msg, msgsz)) < 0)
		return rc;
	/* A process has one tracer: name it rather than guess at
	 * permissions when ptrace would fail. */
	if (mt_cap_opts(c)->attach && mt_proc_tracer(pid, &tracer, comm,
	    sizeof(comm)) == 0 && tracer > 0) {
		snprintf(msg, msgsz, "process %d is already traced by PID %d "
		    "(%s); a process has one tracer at a time: detach that "
		    "one first", (int)pid, (int)tracer, comm[0] ? comm : "?");
		return -MT_E_PERM;
	}
	rc = mt_emu_trace_seize(e->tr, pid, !mt_cap_opts(c)->attach);
	if (rc == -MT_E_PERM)
		snprintf(msg, msgsz, "cannot ptrace process %d: permission "
		    "denied (see /proc/sys/kernel/yama/ptrace_scope, or run "
		    "as root)", (int)pid);
	else if (rc < 0)
		snprintf(msg, msgsz, "cannot ptrace process %d: %s", (int)pid,
		    strerror(errno));
	return rc;
}

static int
emu_buf_open(struct mt_cap *c, struct mt_cap_buf *b, char *msg,
    size_t msgsz)
{
	int rc = mt_ring_init(&b->ring, mt_cap_opts(c)->snapshot_size);

	if (rc < 0)
		snprintf(msg, msgsz, "cannot allocate a %llu-byte ring: %s",
		    (unsigned long long)mt_cap_opts(c)->snapshot_size,
		    mt_strerror(rc));
	b->bk = NULL;
	return rc;
}

static int
emu_start(struct mt_cap *c, char *msg, size_t msgsz)
{
	(void)c;
	(void)msg;
	(void)msgsz;
	return 0;
}

static int
emu_run(struct mt_cap *c)
{
	struct emu *e = mt_cap_priv(c);
	char msg[256] = "";
	int rc;

	rc = mt_emu_trace_run(e->tr, msg, sizeof(msg));
	if (rc == MT_EMU_EV_EXIT)
		return MT_CAP_EV_EXIT;
	if (rc < 0 && msg[0] != '\0')
		fprintf(stderr, "mt-capture: emulate: %s\n", msg);
	return rc;
}

static int
emu_stop(struct mt_cap *c)
{
	struct emu *e = mt_cap_priv(c);

	uint64_t *p;

	/* Rings are written by us: their heads are always current. */
	p = realloc(e->stop_tsc, (e->nsnap + 1) * sizeof(*p));
	if (p == NULL)
		return -MT_E_NOMEM;
	e->stop_tsc = p;
	e->stop_tsc[e->nsnap] = mt_emu_trace_clock(e->tr);
	return mt_emu_trace_stop(e->tr, e->nsnap++);
}

static int
meta_u64(struct mt_snap *s, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return mt_snap_add_meta(s, key, buf);
}

/* What virtual_time() converts with. */
struct retime {
	const struct mt_snap_timeconv *tc;	/* the snapshot's */
	int real_tsc;		/* tc is the kernel's: host TSC to perf ns */
	const struct mt_emu_ckpt *ck;	/* clock points, oldest first */
	size_t nck;
	uint64_t now;		/* virtual clock at the snapshot */
};

/*
 * The virtual perf time of a sideband record made at real perf time @t:
 * that of the first clock point at or after it (the return from the
 * mmap that made the record), else of the snapshot.
 */
static uint64_t
virtual_time(void *arg, uint64_t t)
{
	const struct retime *rt = arg;
	size_t lo = 0, hi = rt->nck;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		uint64_t real = rt->real_tsc ? mt_snap_tsc_to_ns(rt->tc,
		    rt->ck[m].host_tsc) : rt->ck[m].mono;

		if (real < t)
			lo = m + 1;
		else
			hi = m;
	}
	return mt_snap_tsc_to_ns(rt->tc, lo < rt->nck ? rt->ck[lo].clock :
	    rt->now);
}

/*
 * The JIT code the threads ran (emu-jit.h): a BLOB per page version, from
 * its time on (0: always), on the snapshot's clock.
 */
static int
add_jit(struct emu *e, struct mt_snap *s)
{
	const struct mt_emu_jit_copy *c;
	const struct mt_emu_jit *j;
	struct mt_snap_blob b;
	size_t i, k, n;
	pid_t pid;
	int rc;

	for (i = 0; (j = mt_emu_trace_jit(e->tr, i, &pid)) != NULL; i++) {
		n = mt_emu_jit_copies(j, &c);
		for (k = 0; k < n; k++) {
			memset(&b, 0, sizeof(b));
			b.pid = (uint32_t)pid;
			b.kind = MT_SNAP_BLOB_JIT;
			b.addr = c[k].addr;
			b.name = (char *)(uintptr_t)"[jit]";
			b.len = c[k].len;
			b.data = c[k].data;
			b.time = c[k].time != 0 ? mt_snap_tsc_to_ns(&s->timeconv,
			    c[k].time) : 0;
			if ((rc = mt_snap_add_blob(s, &b)) < 0)
				return rc;
		}
	}
	return 0;
}

static int
emu_annotate(struct mt_cap *c, struct mt_snap *s)
{
	struct emu *e = mt_cap_priv(c);
	const struct mt_emu_trace_stats *st = mt_emu_trace_stats(e->tr);
	struct retime rt;
	char buf[64];
	size_t i;
	int rc;

	s->has_host = 1;
	s->host.cpuid_15[0] = MT_EMU_CPUID15_EAX;
	s->host.cpuid_15[1] = MT_EMU_CPUID15_EBX;
	s->host.cpuid_15[2] = MT_EMU_CRYSTAL_HZ;
	s->host.max_nonturbo_ratio = MT_EMU_NOM_FREQ;
	if (!e->real_tsc) {
		/* Virtual TSC from 0 at 2.5 GHz: ns = tsc * 0.4. */
		s->has_timeconv = 1;
		memset(&s->timeconv, 0, sizeof(s->timeconv));
		s->timeconv.time_shift = 20;
		s->timeconv.time_mult = 419430;	/* 0.4 * 2^20 */
		s->timeconv.time_zero = e->mono0 - mt_snap_tsc_to_ns(&s->timeconv,
		    SYNTH_TSC0);
		s->timeconv.cap_user_time_zero = 1;
	}
	/*
	 * A trigger is noticed between two steps: its time is the virtual
	 * time of that point (the sideband keeps real times; the stepped
	 * program runs far slower than the clock says).
	 */
	for (i = 0; i < s->ntriggers; i++)
		if (s->triggers[i].index < e->nsnap)
			s->triggers[i].time = mt_snap_tsc_to_ns(&s->timeconv,
			    e->stop_tsc[s->triggers[i].index]);
	/*
	 * The sideband's records likewise: a library mapped over another
	 * (dlclose, dlopen) must replace it in the decoder's image at the
	 * point of the trace where the mmap returned (epochs in mt-decode).
	 */
	rt.tc = &s->timeconv;
	rt.real_tsc = e->real_tsc;
	rt.nck = mt_emu_trace_ckpts(e->tr, &rt.ck);
	rt.now = mt_emu_trace_clock(e->tr);
	for (i = 0; i < s->nsideband; i++)
		(void)mt_sb_retime(s->sideband[i].data, s->sideband[i].len,
		    s->sideband[i].sample_type, virtual_time, &rt);
	if ((rc = add_jit(e, s)) < 0)
		return rc;
	snprintf(buf, sizeof(buf), "%.0f", st->seconds > 0 ?
	    (double)st->steps / st->seconds : 0.0);
	if ((rc = mt_snap_add_meta(s, "emulate-clock",
	    "1 tick per instruction retired")) < 0 ||
	    (rc = meta_u64(s, "emulate-instructions", st->insns)) < 0 ||
	    (rc = meta_u64(s, "emulate-steps", st->steps)) < 0 ||
	    (rc = mt_snap_add_meta(s, "emulate-steps-per-second", buf)) < 0)
		return rc;
	return 0;
}

static int
emu_resume(struct mt_cap *c)
{
	struct emu *e = mt_cap_priv(c);

	return mt_emu_trace_resume(e->tr);
}

static void
emu_detach(struct mt_cap *c)
{
	struct emu *e = mt_cap_priv(c);

	if (e != NULL)
		mt_emu_trace_detach(e->tr);
}

static void
emu_close(struct mt_cap *c)
{
	struct emu *e = mt_cap_priv(c);

	if (e == NULL)
		return;
	if (e->gt != NULL && !e->gt_said && e->tr != NULL &&
	    mt_emu_trace_gt_full(e->tr))
		mt_cap_gt_full(c);
	mt_emu_trace_free(e->tr);
	if (e->gt != NULL) {
		const char *path = mt_cap_opts(c)->ground_truth;

		if (ferror(e->gt) | fclose(e->gt)) {
			fprintf(stderr, "mt-capture: cannot write '%s': %s\n",
			    e->gt_tmp, strerror(errno));
			if (!e->gt_direct)
				unlink(e->gt_tmp);
		} else if (!e->gt_direct && rename(e->gt_tmp, path) != 0) {
			fprintf(stderr, "mt-capture: cannot rename '%s' to "
			    "'%s': %s\n", e->gt_tmp, path, strerror(errno));
			unlink(e->gt_tmp);
		}
	}
	free(e->gt_tmp);
	free(e->stop_tsc);
	free(e);
	mt_cap_set_priv(c, NULL);
}

const struct mt_cap_backend_ops mt_cap_backend_emulate = {
	.name = "emulate",
	.snap_backend = MT_SNAP_BK_EMULATE,
	.reaps_children = 1,
	.trig_threads = 1,
	.probe = emu_probe,
	.attach = emu_attach,
	.buf_open = emu_buf_open,
	.start = emu_start,
	.run = emu_run,
	.stop = emu_stop,
	.annotate = emu_annotate,
	.resume = emu_resume,
	.detach = emu_detach,
	.close = emu_close,
};
