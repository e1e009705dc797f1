/* SPDX-License-Identifier: MIT */
/*
 * The ptrace stepper's state (struct mt_emu_trace, its threads and
 * processes), shared by its three files: emu-trace.c (tables, clock
 * points, ground truth, stops, the loop, detaching), emu-step.c (the
 * model of one thread's steps) and emu-start.c (--start-at).  Private to
 * them: everyone else uses emu-trace.h.
 */
#ifndef MT_EMU_TRACE_INT_H
#define MT_EMU_TRACE_INT_H

#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "emu-insn.h"
#include "emu-trace.h"

struct user_regs_struct;
struct mt_emu_jit;
struct mt_emu_pt;

enum phase {
	PH_IDLE,		/* nothing seized yet */
	PH_WAIT_EXEC,		/* run mode: the target has not exec'd */
	PH_WAIT_START,		/* running natively up to start_at */
	PH_STEP,		/* single-stepping */
};

enum mode {
	M_NATIVE,		/* resumed with PTRACE_CONT */
	M_STEP,			/* resumed with PTRACE_SINGLESTEP */
};

struct thr {
	pid_t tid;		/* thread */
	pid_t pid;		/* its process */
	int mode;		/* enum mode */
	int running;		/* resumed; its next stop is pending */
	int started;		/* ip and insn are valid */
	int asked;		/* the thread_new hook was asked */
	int held;		/* stopped, to be resumed by the loop */
	int held_sig;		/* signal to deliver then */
	int detach;		/* untraced: detach at its next stop */
	int gone;		/* exited or detached */
	int injected;		/* a signal was injected at the last resume */
	int orphan;		/* a fork child stopped before its parent's
				 * fork event: held until that comes */
	int gstop;		/* in a group-stop (SIGSTOP...): resumed
				 * with PTRACE_LISTEN, so it stays stopped
				 * until a SIGCONT */
	int reenable;		/* TIP.PGE at ip before its next event */
	int in_syscall;		/* stepping over a system call */
	uint64_t sysno;		/* its number (rax) */
	uint64_t sys_clock;	/* clock when it started */
	struct timespec sys_t0;	/* real time when it started */
	uint64_t ip;		/* next instruction to retire */
	struct mt_emu_insn insn;	/* the instruction at ip */
	int xol;		/* in the kernel's [uprobes] page: xol_insn
				 * retires where the thread comes out */
	struct mt_emu_insn xol_insn;	/* the instruction that went in */
	struct mt_emu_pt *pt;	/* packet generator; NULL: untraced */
	uint64_t jit_synced;	/* the latest JIT version time it ran */
};

struct proc {
	pid_t pid;
	struct mt_emu_code *code;	/* instruction cache */
	struct mt_emu_jit *jit;		/* its JIT code (emu-jit.h) */
	int exited;
	uint64_t xol_lo, xol_hi;	/* its [uprobes] page, once seen */
};

struct mt_emu_trace {
	struct mt_emu_trace_opts o;
	struct mt_emu_hooks h;
	int phase;			/* enum phase */
	struct thr *thr;		/* threads, also gone ones */
	size_t nthr, capthr;
	struct proc procs[64];		/* target processes, and the
					 * children followed */
	size_t nprocs;
	uint64_t clock;			/* virtual TSC */
	uint64_t bp_addr;		/* start-at int3 address, 0: none */
	long bp_orig;			/* the word it replaced */
	pid_t bp_pid;			/* process holding the int3 */
	unsigned since_poll;		/* steps since the last poll hook */
	struct timespec t_start;	/* when stepping began */
	int stepping_timed;		/* t_start is set */
	struct mt_emu_trace_stats st;
	struct mt_emu_ckpt *ck;		/* clock points (emu-trace.h) */
	size_t nck, capck;
	char *msg;			/* run()'s message buffer */
	size_t msgsz;
	uint64_t gt_bytes;		/* ground truth written */
	int gt_full;			/* a line did not fit: no more */
};

/* emu-trace.c */

/* Notes a clock point at virtual tick @clock. */
void et_ckpt_add(struct mt_emu_trace *t, uint64_t clock);
/* Seconds from @a to @b. */
double et_ts_diff(const struct timespec *a, const struct timespec *b);
/* A ground-truth line "TID KIND 0xFROM 0xTO" (when there is a log). */
void et_gt(struct mt_emu_trace *t, pid_t tid, const char *kind,
    uint64_t from, uint64_t to);
/* The process record of @pid, or NULL. */
struct proc *et_proc_find(struct mt_emu_trace *t, pid_t pid);
/* Asks the thread_new hook whether to trace @th; 0 or -MT_E_*. */
int et_thr_ask(struct mt_emu_trace *t, struct thr *th);
/* PTRACE_GETREGS of @tid; 0 or -MT_E_SYS. */
int et_get_regs(pid_t tid, struct user_regs_struct *r);

/* emu-step.c */

/* The code cache's hook (mt_emu_fix_fn): undo uprobe int3 bytes. */
void et_code_fix(void *ctx, pid_t pid, uint64_t addr, uint8_t *buf,
    size_t len);
/* Fetches the instruction at th->ip; 0 or -MT_E_*. */
int et_fetch(struct mt_emu_trace *t, struct thr *th);
/* Resumes a held thread now, delivering @sig. */
void et_resume_now(struct mt_emu_trace *t, struct thr *th, int sig);
/* Where a thread held in an interrupt stop resumes. */
uint64_t et_resume_ip(const struct user_regs_struct *r);
/* Begins stepping @th at @ip; 0 or -MT_E_*. */
int et_start_step(struct mt_emu_trace *t, struct thr *th, uint64_t ip);
/* A step finished for @th; 0 or -MT_E_*. */
int et_step_done(struct mt_emu_trace *t, struct thr *th);
/* Settles whether @th's probed instruction was a uprobe's or an int3. */
void et_probe_settle(struct thr *th);

/* emu-start.c */

/* Plants the start-at int3 in @th's process; 0 or -MT_E_* (t->msg). */
int et_plant_start(struct mt_emu_trace *t, struct thr *th);
/* Takes the start-at int3 out, through thread @tid. */
void et_unplant(struct mt_emu_trace *t, pid_t tid);
/* @th stopped at the start-at int3 (@r its registers): steps from it. */
int et_hit_start(struct mt_emu_trace *t, struct thr *th,
    struct user_regs_struct *r);

#endif /* MT_EMU_TRACE_INT_H */
