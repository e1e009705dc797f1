/* SPDX-License-Identifier: MIT */
/*
 * The software PT backend's ptrace stepping loop (see emu-trace.h).
 *
 * Each traced thread is single-stepped (PTRACE_SINGLESTEP) on its own: the
 * loop waits for any thread's stop, accounts for the instruction that
 * thread retired and steps it again, so threads run concurrently, one
 * instruction at a time each.
 *
 * Kinds of stops and what they mean here:
 *   SIGTRAP, no event   a step finished (or, right after a signal was
 *                       injected, the kernel entered its handler: siginfo
 *                       si_code SIGTRAP from ptrace_notify, no instruction
 *                       retired); in the native phase, the start-at int3
 *   other signal        signal-delivery-stop: injected on the next step
 *   PTRACE_EVENT_CLONE  a new thread; its own first stop comes separately
 *   PTRACE_EVENT_EXEC   the target image starts (run mode) or changed
 *   PTRACE_EVENT_STOP   a new thread's first stop, or our interrupt
 * A rep-prefixed string instruction traps once per iteration with the IP
 * unchanged: it retires only when the IP moves.
 *
 * This file holds the thread and process tables, the clock points and
 * the ground truth, the handling of each stop, the loop and detaching;
 * emu-step.c the model of one thread's steps, emu-start.c --start-at.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <x86intrin.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "emu-jit.h"
#include "emu-trace.h"
#include "emu-trace-int.h"
#include "err.h"
#include "proc.h"

/*
 * Note a clock point at virtual tick @clock (never before the previous
 * point's).  Past 1M points the later ones are not kept: their mappings
 * then take the clock of the snapshot.
 */
void
et_ckpt_add(struct mt_emu_trace *t, uint64_t clock)
{
	struct timespec now;
	struct mt_emu_ckpt *c;

	if (t->nck == t->capck) {
		size_t n = t->capck ? 2 * t->capck : 64;

		if (n > (1u << 20) || (c = realloc(t->ck, n * sizeof(*c))) ==
		    NULL)
			return;
		t->ck = c;
		t->capck = n;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	c = &t->ck[t->nck++];
	c->mono = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	c->host_tsc = __rdtsc();
	c->clock = t->nck > 1 && c[-1].clock > clock ? c[-1].clock : clock;
}

size_t
mt_emu_trace_ckpts(const struct mt_emu_trace *t,
    const struct mt_emu_ckpt **ck)
{
	*ck = t->ck;
	return t->nck;
}

double
et_ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	    (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* A line of the ground truth, @n bytes of @line (snprintf's return for
 * a buffer of @size), unless it would pass the cap (then no line after
 * it either). */
static void
gt_line(struct mt_emu_trace *t, const char *line, int n, size_t size)
{
	if (t->o.ground_truth == NULL || t->gt_full || n <= 0 ||
	    (size_t)n >= size)
		return;
	if (t->o.ground_truth_max != 0 &&
	    t->gt_bytes + (uint64_t)n > t->o.ground_truth_max) {
		t->gt_full = 1;
		return;
	}
	t->gt_bytes += (uint64_t)n;
	fwrite(line, 1, (size_t)n, t->o.ground_truth);
}

void
et_gt(struct mt_emu_trace *t, pid_t tid, const char *kind, uint64_t from,
    uint64_t to)
{
	char line[96];

	if (t->o.ground_truth != NULL)
		gt_line(t, line, snprintf(line, sizeof(line),
		    "%d %s 0x%llx 0x%llx\n", (int)tid, kind,
		    (unsigned long long)from, (unsigned long long)to),
		    sizeof(line));
}

int
mt_emu_trace_gt_full(const struct mt_emu_trace *t)
{
	return t->gt_full;
}

struct proc *
et_proc_find(struct mt_emu_trace *t, pid_t pid)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	return NULL;
}

static struct thr *
thr_find(struct mt_emu_trace *t, pid_t tid)
{
	size_t i;

	for (i = t->nthr; i-- > 0;)
		if (t->thr[i].tid == tid && !t->thr[i].gone)
			return &t->thr[i];
	return NULL;
}

/* A thread record for @tid of @pid (the hook is asked when it starts). */
static struct thr *
thr_add(struct mt_emu_trace *t, pid_t pid, pid_t tid)
{
	struct thr *th;

	if (t->nthr == t->capthr) {
		size_t n = t->capthr ? t->capthr * 2 : 16;
		struct thr *p = realloc(t->thr, n * sizeof(*p));

		if (p == NULL)
			return NULL;
		t->thr = p;
		t->capthr = n;
	}
	th = &t->thr[t->nthr++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->pid = pid;
	th->mode = t->phase == PH_STEP ? M_STEP : M_NATIVE;
	return th;
}

/* Ask the hook whether to trace @th; untraced threads are let go. */
int
et_thr_ask(struct mt_emu_trace *t, struct thr *th)
{
	mt_emu_pt_sink_fn sink = NULL;
	void *sink_ctx = NULL;
	int rc;

	if (th->asked)
		return 0;
	th->asked = 1;
	if (t->h.thread_new != NULL &&
	    (rc = t->h.thread_new(t->h.ctx, th->pid, th->tid, &sink,
	    &sink_ctx)) < 0)
		return rc;
	if (sink == NULL) {
		th->detach = 1;
		return 0;
	}
	th->pt = mt_emu_pt_new(t->o.config, sink, sink_ctx);
	if (th->pt == NULL)
		return -MT_E_NOMEM;
	t->st.threads++;
	return 0;
}

/*
 * Is @status (waitpid, PTRACE_SEIZE'd tracee) a group-stop?  The kernel
 * reports it as PTRACE_EVENT_STOP with the stopping signal; our own
 * interrupt or the end of a group-stop come with SIGTRAP (ptrace(2)).
 */
static int
is_group_stop(int status)
{
	int sig = WSTOPSIG(status);

	return WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP &&
	    (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	    sig == SIGTTOU);
}

int
et_get_regs(pid_t tid, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, r) == 0 ? 0 : -MT_E_SYS;
}

/*
 * Resume a thread held in a ptrace-stop, delivering @sig: only marked
 * here; the loop resumes it after the poll hook ran, so a trigger hit by
 * the instruction just stepped is seen while every stepped thread is
 * still stopped after it (deterministic snapshot ends).
 */
static void
resume(struct mt_emu_trace *t, struct thr *th, int sig)
{
	(void)t;
	th->held = 1;
	th->held_sig = sig;
}

static void
thread_gone(struct mt_emu_trace *t, struct thr *th, int status)
{
	struct proc *p;

	if (th->pt != NULL) {
		if (mt_emu_pt_enabled(th->pt))
			mt_emu_pt_async_disable(th->pt, th->ip, t->clock);
		mt_emu_pt_flush(th->pt);
		mt_emu_pt_free(th->pt);
		th->pt = NULL;
		if (t->h.thread_exit != NULL)
			t->h.thread_exit(t->h.ctx, th->tid);
	}
	th->gone = 1;
	th->running = 0;
	if (th->tid == th->pid && (p = et_proc_find(t, th->pid)) != NULL) {
		p->exited = 1;
		(void)status;
	}
}

static int
on_exec(struct mt_emu_trace *t, struct thr *th)
{
	struct user_regs_struct r;
	struct proc *p = et_proc_find(t, th->pid);
	int rc;

	if (p != NULL) {
		mt_emu_code_flush(p->code);
		p->xol_lo = p->xol_hi = 0;	/* a new mm */
		/* Its JIT code went with the old mm (not kept). */
		mt_emu_jit_free(p->jit);
		if ((p->jit = mt_emu_jit_new(p->pid)) == NULL)
			return -MT_E_NOMEM;
	}
	th->xol = 0;
	if (et_get_regs(th->tid, &r) < 0)
		return -MT_E_SYS;
	if (t->phase == PH_WAIT_EXEC) {
		if (t->o.start_at != NULL)
			return et_plant_start(t, th);
		t->phase = PH_STEP;
		return et_start_step(t, th, r.rip);
	}
	if (th->mode == M_STEP) {
		th->in_syscall = 0;
		et_gt(t, th->tid, "sysret", 0, r.rip);
		th->ip = r.rip;
		if ((rc = et_fetch(t, th)) < 0)
			return rc;
		if (th->pt != NULL && (rc = mt_emu_pt_enable(th->pt, r.rip,
		    t->clock)) < 0)
			return rc;
	}
	return 0;
}

/*
 * A traced thread of @parent forked process @child (o.follow_forks): the
 * proc_new hook decides whether it is traced; if not it is detached at
 * its first stop.  A child whose first stop came first was held
 * (orphan): go on with it now.
 */
static int
new_proc(struct mt_emu_trace *t, pid_t child, pid_t parent)
{
	struct user_regs_struct r;
	struct thr *th = thr_find(t, child);
	struct proc *p;
	int follow, rc = 0;

	follow = t->h.proc_new != NULL && et_proc_find(t, child) == NULL &&
	    t->nprocs < sizeof(t->procs) / sizeof(t->procs[0]) &&
	    t->h.proc_new(t->h.ctx, child, parent) > 0;
	if (follow) {
		p = &t->procs[t->nprocs];
		memset(p, 0, sizeof(*p));
		p->pid = child;
		if ((p->code = mt_emu_code_new(child, et_code_fix, t)) == NULL)
			return -MT_E_NOMEM;
		if ((p->jit = mt_emu_jit_new(child)) == NULL) {
			mt_emu_code_free(p->code);
			return -MT_E_NOMEM;
		}
		t->nprocs++;
	}
	if (th == NULL) {
		if ((th = thr_add(t, child, child)) == NULL)
			return -MT_E_NOMEM;
		th->running = 1;	/* its first stop is on its way */
	}
	th->detach = !follow;
	if (th->orphan) {
		th->orphan = 0;
		if (follow && t->phase == PH_STEP && et_get_regs(child, &r) == 0)
			rc = et_start_step(t, th, et_resume_ip(&r));
		resume(t, th, 0);
	}
	return rc;
}

/* Handle one waitpid result.  Returns 0, MT_EMU_EV_EXIT or -MT_E_*. */
static int
on_stop(struct mt_emu_trace *t, pid_t tid, int status)
{
	struct user_regs_struct r;
	struct thr *th = thr_find(t, tid);
	int sig, ev, rc = 0;
	unsigned long msg;

	if (th == NULL) {
		pid_t pid;

		if (WIFEXITED(status) || WIFSIGNALED(status))
			return 0;
		/* A new thread whose first stop beat the clone event. */
		pid = mt_proc_tgid(tid);
		if (pid == tid && t->o.follow_forks && et_proc_find(t, pid) ==
		    NULL) {
			/* A new process whose first stop beat the fork
			 * event: held until then. */
			if ((th = thr_add(t, pid, tid)) == NULL)
				return -MT_E_NOMEM;
			th->orphan = 1;
			return 0;
		}
		if (pid < 0 || et_proc_find(t, pid) == NULL)
			return 0;
		if ((th = thr_add(t, pid, tid)) == NULL)
			return -MT_E_NOMEM;
	}
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		thread_gone(t, th, status);
		if (tid == th->pid && t->h.proc_exit != NULL &&
		    t->h.proc_exit(t->h.ctx, tid, status))
			return MT_EMU_EV_EXIT;
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0;
	th->running = 0;
	th->gstop = is_group_stop(status);
	sig = WSTOPSIG(status);
	ev = status >> 16;
	switch (ev) {
	case PTRACE_EVENT_CLONE:
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0 &&
		    thr_find(t, (pid_t)msg) == NULL) {
			/* thr_add may move the table: find th again. */
			if (thr_add(t, th->pid, (pid_t)msg) == NULL)
				return -MT_E_NOMEM;
			th = thr_find(t, tid);
		}
		resume(t, th, 0);
		return 0;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0)
			rc = new_proc(t, (pid_t)msg, th->pid);
		/* new_proc may move the table: find th again. */
		if ((th = thr_find(t, tid)) != NULL)
			resume(t, th, 0);
		return rc;
	case PTRACE_EVENT_EXIT:
		/* The main thread leaves: its maps are still there. */
		if (tid == th->pid && t->h.proc_exiting != NULL)
			t->h.proc_exiting(t->h.ctx, tid);
		resume(t, th, 0);
		return 0;
	case PTRACE_EVENT_EXEC:
		rc = on_exec(t, th);
		resume(t, th, 0);
		return rc;
	case PTRACE_EVENT_STOP:
		/* A new thread's first stop, our interrupt, a group stop
		 * (then it listens: resume() keeps it stopped). */
		if (th->gstop) {
			resume(t, th, 0);
			return 0;
		}
		if (t->phase == PH_STEP && th->mode == M_NATIVE &&
		    !th->detach) {
			if (et_get_regs(tid, &r) == 0)
				rc = et_start_step(t, th, et_resume_ip(&r));
		} else if (t->phase == PH_STEP && !th->started && !th->detach) {
			if (et_get_regs(tid, &r) == 0)
				rc = et_start_step(t, th, et_resume_ip(&r));
		}
		resume(t, th, 0);
		return rc;
	case 0:
		break;
	default:
		resume(t, th, 0);
		return 0;
	}
	if (sig == SIGTRAP && th->mode == M_NATIVE) {
		if (t->bp_addr != 0 && et_get_regs(tid, &r) == 0 &&
		    r.rip == t->bp_addr + 1 && th->pid == t->bp_pid &&
		    !th->detach) {
			rc = et_hit_start(t, th, &r);
			resume(t, th, 0);
			return rc;
		}
		resume(t, th, sig);
		return 0;
	}
	if (sig == SIGTRAP && th->mode == M_STEP) {
		int own;

		if (th->started && th->insn.probed)
			et_probe_settle(th);
		/* After int3 the SIGTRAP is the program's own: deliver it. */
		own = th->started && th->insn.cls == MT_EMU_I_INT &&
		    !th->injected;

		rc = et_step_done(t, th);
		resume(t, th, own ? SIGTRAP : 0);
		return rc;
	}
	/* Signal-delivery-stop: deliver it with the next step. */
	resume(t, th, sig);
	return 0;
}

struct mt_emu_trace *
mt_emu_trace_new(const struct mt_emu_trace_opts *o,
    const struct mt_emu_hooks *h)
{
	struct mt_emu_trace *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->o = *o;
	t->h = *h;
	if (t->o.poll_every == 0)
		t->o.poll_every = 1;
	if (t->o.tsc_per_ns <= 0)
		t->o.tsc_per_ns = 2.5;
	t->clock = o->tsc0;
	return t;
}

void
mt_emu_trace_free(struct mt_emu_trace *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nthr; i++)
		mt_emu_pt_free(t->thr[i].pt);
	for (i = 0; i < t->nprocs; i++) {
		mt_emu_code_free(t->procs[i].code);
		mt_emu_jit_free(t->procs[i].jit);
	}
	free(t->thr);
	free(t->ck);
	free(t);
}

int
mt_emu_trace_seize(struct mt_emu_trace *t, pid_t pid, int before_exec)
{
	const long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
	    (t->o.follow_forks ? PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
	    PTRACE_O_TRACEEXIT : 0);
	struct proc *p;
	struct thr *th;
	struct dirent *de;
	char path[64];
	DIR *d;
	int tid, status;

	if (t->nprocs == sizeof(t->procs) / sizeof(t->procs[0]))
		return -MT_E_LIMIT;
	p = &t->procs[t->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->code = mt_emu_code_new(pid, et_code_fix, t);
	if (p->code == NULL)
		return -MT_E_NOMEM;
	if ((p->jit = mt_emu_jit_new(pid)) == NULL) {
		mt_emu_code_free(p->code);
		return -MT_E_NOMEM;
	}
	t->nprocs++;
	if (before_exec) {
		if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)opts) != 0)
			return errno == EPERM ? -MT_E_PERM : -MT_E_SYS;
		if ((th = thr_add(t, pid, pid)) == NULL)
			return -MT_E_NOMEM;
		th->running = 1;
		t->phase = PH_WAIT_EXEC;
		return 0;
	}
	/* Attach: seize and interrupt every thread there is now. */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -MT_E_SYS;
	while ((de = readdir(d)) != NULL) {
		tid = atoi(de->d_name);
		if (tid <= 0 || ptrace(PTRACE_SEIZE, tid, NULL,
		    (void *)opts) != 0)
			continue;
		ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
		if (waitpid(tid, &status, __WALL) != tid)
			continue;
		if ((th = thr_add(t, pid, tid)) == NULL) {
			closedir(d);
			return -MT_E_NOMEM;
		}
		/* A stopped process (SIGSTOP, Ctrl+Z) is left stopped. */
		th->gstop = is_group_stop(status);
	}
	closedir(d);
	if (thr_find(t, pid) == NULL)
		return errno == EPERM ? -MT_E_PERM : -MT_E_SYS;
	return 0;
}

/* Attach mode: every thread is held stopped; begin. */
static int
begin_attached(struct mt_emu_trace *t)
{
	struct user_regs_struct r;
	size_t i;
	int rc;

	if (t->o.start_at != NULL) {
		struct thr *th = thr_find(t, t->procs[0].pid);

		if (th == NULL)
			th = &t->thr[0];
		if ((rc = et_plant_start(t, th)) < 0)
			return rc;
	} else {
		t->phase = PH_STEP;
	}
	for (i = 0; i < t->nthr; i++) {
		struct thr *th = &t->thr[i];

		if (th->gone || th->running)
			continue;
		if (t->phase == PH_STEP && !th->detach && !th->gstop &&
		    et_get_regs(th->tid, &r) == 0 &&
		    (rc = et_start_step(t, th, et_resume_ip(&r))) < 0)
			return rc;
		resume(t, th, 0);
	}
	return 0;
}

#define IDLE_POLL_MS 5	/* poll period while no step is in flight */

/* Is a thread executing a single step (not a system call, not native)? */
static int
stepping_in_flight(const struct mt_emu_trace *t)
{
	size_t i;

	for (i = 0; i < t->nthr; i++) {
		const struct thr *th = &t->thr[i];

		if (th->running && !th->gone && th->mode == M_STEP &&
		    !th->in_syscall && !th->gstop)
			return 1;
	}
	return 0;
}

int
mt_emu_trace_run(struct mt_emu_trace *t, char *msg, size_t msgsz)
{
	struct timespec now;
	int status, rc, ev;
	size_t i;
	pid_t tid;

	t->msg = msg;
	t->msgsz = msgsz;
	if (t->phase == PH_IDLE) {
		if ((rc = begin_attached(t)) < 0)
			return rc;
	}
	for (;;) {
		if (t->h.poll != NULL && ++t->since_poll >= t->o.poll_every) {
			t->since_poll = 0;
			ev = t->h.poll(t->h.ctx, 0);
			if (ev != 0) {
				rc = ev;
				break;
			}
		}
		for (i = 0; i < t->nthr; i++) {
			struct thr *th = &t->thr[i];

			if (th->held && !th->gone) {
				th->held = 0;
				et_resume_now(t, th, th->held_sig);
			}
		}
		/*
		 * While a single step is in flight its stop comes within
		 * microseconds: block.  Otherwise every thread runs natively
		 * or waits in a system call, maybe for long: look every few
		 * milliseconds, so triggers, signals and --duration are seen.
		 */
		if (stepping_in_flight(t)) {
			tid = waitpid(-1, &status, __WALL);
		} else {
			tid = waitpid(-1, &status, __WALL | WNOHANG);
			if (tid == 0) {
				ev = t->h.poll != NULL ?
				    t->h.poll(t->h.ctx, IDLE_POLL_MS) : 0;
				if (ev == 0 && t->h.poll == NULL)
					usleep(IDLE_POLL_MS * 1000);
				if (ev != 0) {
					rc = ev;
					break;
				}
				continue;
			}
		}
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD) {
				rc = MT_EMU_EV_EXIT;
				break;
			}
			snprintf(msg, msgsz, "waitpid: %s", strerror(errno));
			rc = -MT_E_SYS;
			break;
		}
		rc = on_stop(t, tid, status);
		if (rc != 0)
			break;
	}
	if (t->stepping_timed) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		t->st.seconds = et_ts_diff(&t->t_start, &now);
	}
	return rc;
}

int
mt_emu_trace_stop(struct mt_emu_trace *t, unsigned index)
{
	size_t i;
	int rc;

	if (t->o.ground_truth != NULL) {
		char line[32];

		gt_line(t, line, snprintf(line, sizeof(line), "snapshot %u\n",
		    index), sizeof(line));
		if (fflush(t->o.ground_truth) != 0 ||
		    ferror(t->o.ground_truth))
			return -MT_E_IO;
	}
	for (i = 0; i < t->nthr; i++) {
		struct thr *th = &t->thr[i];

		if (th->gone || th->pt == NULL)
			continue;
		if (mt_emu_pt_enabled(th->pt)) {
			rc = mt_emu_pt_async_disable(th->pt, th->ip, t->clock);
			if (rc < 0)
				return rc;
			th->reenable = 1;
		}
		if ((rc = mt_emu_pt_flush(th->pt)) < 0)
			return rc;
	}
	return 0;
}

int
mt_emu_trace_resume(struct mt_emu_trace *t)
{
	(void)t;	/* threads re-enable at their next stop */
	return 0;
}

/* Is SIGTRAP queued for thread @tid itself (SigPnd in its status)? */
static int
trap_pending(pid_t tid)
{
	char path[64], line[128];
	unsigned long long mask = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "SigPnd: %llx", &mask) == 1) {
			found = 1;
			break;
		}
	fclose(f);
	return found && (mask & (1ull << (SIGTRAP - 1))) != 0;
}

/*
 * A thread interrupted while its single step (or a stepped system call)
 * was completing stops at PTRACE_EVENT_STOP with the step's SIGTRAP still
 * queued: the kernel reports the interrupt before it dequeues signals.
 * Detached like that, the SIGTRAP is delivered untraced and kills the
 * process.  Let it dequeue the SIGTRAP into a signal-delivery-stop, where
 * detaching with signal 0 discards it.  Other signals dequeued first are
 * delivered on.  Returns the signal to detach with (0 or one such signal
 * stopped at last), or -1 if the thread is gone.
 */
static int
drain_trap(pid_t tid)
{
	int status, sig = 0, n;

	for (n = 0; n < 16 && trap_pending(tid); n++) {
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig) != 0)
			return -1;
		if (waitpid(tid, &status, __WALL) != tid ||
		    WIFEXITED(status) || WIFSIGNALED(status))
			return -1;
		sig = 0;
		if (WIFSTOPPED(status) && (status >> 16) == 0) {
			if (WSTOPSIG(status) == SIGTRAP)
				break;
			sig = WSTOPSIG(status);
		}
	}
	return sig;
}

void
mt_emu_trace_detach(struct mt_emu_trace *t)
{
	size_t i;
	int status, sig;

	if (t == NULL)
		return;
	for (i = 0; i < t->nthr; i++) {
		struct thr *th = &t->thr[i];

		if (th->gone)
			continue;
		sig = th->held ? th->held_sig : 0;
		th->held = 0;
		if (th->running) {
			ptrace(PTRACE_INTERRUPT, th->tid, NULL, NULL);
			if (waitpid(th->tid, &status, __WALL) != th->tid ||
			    WIFEXITED(status) || WIFSIGNALED(status)) {
				th->gone = 1;
				continue;
			}
			/* Keep a real signal that was about to be delivered. */
			if ((status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP)
				sig = WSTOPSIG(status);
			else if ((sig = drain_trap(th->tid)) < 0) {
				th->gone = 1;
				continue;
			}
		}
		if (t->bp_addr != 0 && th->pid == t->bp_pid)
			et_unplant(t, th->tid);
		ptrace(PTRACE_DETACH, th->tid, NULL, (void *)(long)sig);
		th->gone = 1;
		th->running = 0;
	}
}

const struct mt_emu_trace_stats *
mt_emu_trace_stats(const struct mt_emu_trace *t)
{
	return &t->st;
}

uint64_t
mt_emu_trace_clock(const struct mt_emu_trace *t)
{
	return t->clock;
}

const struct mt_emu_jit *
mt_emu_trace_jit(const struct mt_emu_trace *t, size_t i, pid_t *pid)
{
	if (i >= t->nprocs)
		return NULL;
	*pid = t->procs[i].pid;
	return t->procs[i].jit;
}

