/* SPDX-License-Identifier: MIT */
/*
 * The software PT backend's tracer: drives target processes with ptrace,
 * single-steps every traced thread, classifies each retired instruction
 * (emu-insn.h) and feeds the control flow to one packet generator per
 * thread (emu-pt.h).  Optionally writes the ground truth: every executed
 * branch, one per line (docs/emulate.md).
 *
 * It knows nothing of the capture framework: the framework glue (emu.c)
 * and the unit tests give it hooks.  Threads are PTRACE_SEIZE'd with
 * PTRACE_O_TRACECLONE and PTRACE_O_TRACEEXEC; new threads are traced when
 * the thread_new hook returns a sink, otherwise they are detached.
 *
 * Model (docs/emulate.md): a system call is a TIP.PGD at the syscall and a
 * TIP.PGE at the instruction it returns to; a signal delivered to a
 * handler is FUP(interrupted IP) + TIP.PGD, then TIP.PGE(handler); its
 * return goes through rt_sigreturn, a system call.
 *
 * The virtual clock: one TSC tick per instruction retired by any traced
 * thread, starting at the host's TSC when stepping starts (or 0 without a
 * usable time conversion); a system call that takes longer than
 * slow_syscall_ns of real time while no other traced thread retires an
 * instruction moves the clock to its real end.
 */
#ifndef MT_EMU_TRACE_H
#define MT_EMU_TRACE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "emu-insn.h"
#include "emu-pt.h"

struct mt_emu_hooks {
	void *ctx;		/* first argument of every hook */
	/*
	 * Thread @tid of @pid appeared (also each initial thread).  Set
	 * *sink and *sink_ctx to trace it, or leave *sink NULL to let it
	 * run untraced.  Returns 0 or -MT_E_*.
	 */
	int (*thread_new)(void *ctx, pid_t pid, pid_t tid,
	    mt_emu_pt_sink_fn *sink, void **sink_ctx);
	/* Thread @tid ended (its sink is no longer used). */
	void (*thread_exit)(void *ctx, pid_t tid);
	/* Process @pid ended with waitpid @status; returns 1 when every
	 * target has ended, else 0. */
	int (*proc_exit)(void *ctx, pid_t pid, int status);
	/* Called between steps, and every few milliseconds while no thread
	 * is being stepped (all run natively or wait in system calls); may
	 * wait up to @timeout_ms.  Returns 0 to go on, > 0 an event that
	 * ends mt_emu_trace_run, < 0 an error.  May be NULL. */
	int (*poll)(void *ctx, int timeout_ms);
	mt_emu_fix_fn fix;	/* undo probe int3 in code bytes; may be NULL */
	/*
	 * With o.follow_forks: a traced thread of @parent forked process
	 * @pid.  Returns 1 to trace it (its thread then goes through
	 * thread_new), 0 to let it run untraced.  May be NULL (never).
	 */
	int (*proc_new)(void *ctx, pid_t pid, pid_t parent);
	/* With o.follow_forks: process @pid's main thread is about to exit
	 * (PTRACE_EVENT_EXIT), its maps still readable.  May be NULL. */
	void (*proc_exiting)(void *ctx, pid_t pid);
};

struct mt_emu_trace_opts {
	uint64_t config;	/* PT config bits (RTIT_CTL layout) */
	const char *start_at;	/* symbol of the main executable, or NULL */
	int follow_forks;	/* PTRACE_O_TRACEFORK/VFORK/EXIT: offer
				 * child processes to the proc_new hook */
	FILE *ground_truth;	/* branch log, or NULL; not owned */
	uint64_t ground_truth_max;	/* its bytes at most (whole lines);
				 * 0: no cap */
	unsigned poll_every;	/* steps between poll hooks (>= 1) */
	uint64_t tsc0;		/* virtual clock at the start */
	double tsc_per_ns;	/* to turn real time into ticks */
	uint64_t slow_syscall_ns;	/* a system call longer than this
				 * moves the clock by its real time;
				 * 0: never */
};

/*
 * A point where the virtual clock and the real clocks were read together:
 * stepping began, or a thread returned from mmap, munmap, mprotect or
 * mremap.  The sideband's records carry real perf times; these points
 * turn them into virtual times (emu.c).
 */
struct mt_emu_ckpt {
	uint64_t mono;		/* CLOCK_MONOTONIC ns */
	uint64_t host_tsc;	/* the host's TSC */
	uint64_t clock;		/* virtual TSC: a mapping made by then is in
				 * place from this tick on */
};

/* Counters, for docs and --verbose. */
struct mt_emu_trace_stats {
	uint64_t steps;		/* single-step stops handled */
	uint64_t insns;		/* instructions retired (clock ticks) */
	uint64_t branches;	/* control transfers generated */
	uint64_t signals;	/* signals delivered to handlers */
	uint64_t syscalls;
	uint64_t threads;	/* threads traced */
	uint64_t odd;		/* stops the model did not expect */
	uint64_t late;		/* steps that retired two instructions */
	double seconds;		/* wall time spent stepping */
};

/* The event mt_emu_trace_run returns when every target has exited. */
#define MT_EMU_EV_EXIT 1000

struct mt_emu_trace;

/* Returns NULL when out of memory.  @o and @h are copied. */
struct mt_emu_trace *mt_emu_trace_new(const struct mt_emu_trace_opts *o,
    const struct mt_emu_hooks *h);
void mt_emu_trace_free(struct mt_emu_trace *t);

/*
 * Seize process @pid.  @before_exec: @pid has not exec'd the target yet;
 * tracing starts at the exec (or at start_at after it).  Otherwise every
 * thread of @pid is seized now and interrupted.  Returns 0, -MT_E_PERM,
 * -MT_E_SYS (errno set) or -MT_E_NOMEM.
 */
int mt_emu_trace_seize(struct mt_emu_trace *t, pid_t pid, int before_exec);

/*
 * Is there a symbol @sym (--start-at) in the executable @exe?  For a
 * check before the target starts.  Returns 0, or -MT_E_NOTFOUND /
 * -MT_E_* with a one-line reason in @msg.
 */
int mt_emu_trace_check_start(const char *exe, const char *sym, char *msg,
    size_t msgsz);

/*
 * Step until the poll hook returns an event (returned, > 0), every target
 * has exited (MT_EMU_EV_EXIT), or an error (< 0).  @msg gets a reason.
 */
int mt_emu_trace_run(struct mt_emu_trace *t, char *msg, size_t msgsz);

/* Before a snapshot: end every thread's packets (FUP + TIP.PGD where
 * packets are on) so each ring ends on a complete packet; note it in the
 * ground truth as "snapshot N".  Returns 0 or -MT_E_*. */
int mt_emu_trace_stop(struct mt_emu_trace *t, unsigned index);
/* After a snapshot: threads resume with TIP.PGE at their next step. */
int mt_emu_trace_resume(struct mt_emu_trace *t);

/* Let every thread run free and untraced; restores a pending start-at
 * breakpoint.  Idempotent. */
void mt_emu_trace_detach(struct mt_emu_trace *t);

/* The virtual clock now (TSC ticks). */
uint64_t mt_emu_trace_clock(const struct mt_emu_trace *t);

/* The clock points so far, oldest first (*@ck valid until the next step). */
size_t mt_emu_trace_ckpts(const struct mt_emu_trace *t,
    const struct mt_emu_ckpt **ck);

const struct mt_emu_trace_stats *mt_emu_trace_stats(
    const struct mt_emu_trace *t);

struct mt_emu_jit;
/*
 * The JIT code recorded in the @i-th traced process (emu-jit.h), its pid
 * in *@pid; NULL past the last process.
 */
const struct mt_emu_jit *mt_emu_trace_jit(const struct mt_emu_trace *t,
    size_t i, pid_t *pid);

/* 1 once a ground-truth line did not fit under o.ground_truth_max: no
 * more are written. */
int mt_emu_trace_gt_full(const struct mt_emu_trace *t);

#endif /* MT_EMU_TRACE_H */
