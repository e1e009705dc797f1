/* SPDX-License-Identifier: MIT */
/*
 * The ptrace stepper's model of one thread (emu-trace-int.h): fetching
 * the instruction at its IP (code cache, JIT code, probed bytes),
 * resuming it natively or for one step, and retiring each stepped
 * instruction into branch packets, system calls, signals and the
 * kernel's [uprobes] page as user-only PT shows them (docs/emulate.md).
 */
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>

#include "emu-jit.h"
#include "emu-pt.h"
#include "emu-trace-int.h"
#include "emu-uprobe.h"
#include "err.h"

/*
 * Undo uprobe int3 bytes in @buf, @len bytes read from @pid at @addr, the
 * start of an instruction: mt's own triggers through the framework's
 * hook, then anyone else's (emu-uprobe.h): in a file mapping whose file
 * holds another byte there, the file's byte is the instruction's.
 * Whether it really was a uprobe is only known after the step
 * (et_probe_settle).
 */
void
et_code_fix(void *ctx, pid_t pid, uint64_t addr, uint8_t *buf, size_t len)
{
	struct mt_emu_trace *t = ctx;
	uint8_t b;

	if (t->h.fix != NULL)
		t->h.fix(t->h.ctx, pid, addr, buf, len);
	if (len > 0 && buf[0] == 0xcc &&
	    mt_emu_uprobe_file_byte(pid, addr, &b) == 0)
		buf[0] = b;
}

/*
 * A new version of JIT code (qc_block, emu-jit.h) is recorded now: every
 * thread's pending TNT bits go out with the times they had, and the clock
 * moves on by a crystal tick, so that no packet of the old code is dated
 * at or after the version's time, the clock's new value, also once the
 * times are nanoseconds (a tick is 0.4 ns: one tick more was seen to
 * round to the old code's last nanosecond, and libipt's CYC time took
 * the new bytes for the old code's last return).
 */
static uint64_t
jit_version(void *ctx)
{
	struct mt_emu_trace *t = ctx;
	size_t i;

	for (i = 0; i < t->nthr; i++)
		if (t->thr[i].pt != NULL)
			(void)mt_emu_pt_flush(t->thr[i].pt);
	t->clock += MT_EMU_CPUID15_EBX;
	return t->clock;
}

/*
 * th->insn is in executable memory that is no file's (JIT code): its
 * bytes are read again (the program may have rewritten them) and
 * recorded (emu-jit.h).  Before the thread first runs a version later
 * than any it ran, a PSB+ with the full TSC and FUP at the instruction
 * (mt_emu_pt_sync, as the qemu backend does) dates the switch to the new
 * bytes for a decoder.
 */
static int
fetch_jit(struct mt_emu_trace *t, struct thr *th, struct proc *p)
{
	uint8_t bytes[16];
	uint64_t time;
	int rc;

	if (mt_emu_code_read(p->code, th->tid, th->ip, &th->insn, bytes) < 0)
		return 0;
	rc = mt_emu_jit_insn(p->jit, th->tid, th->ip, bytes, th->insn.len,
	    jit_version, t, &time);
	if (rc == -MT_E_IO)
		return 0;
	if (rc < 0 || time <= th->jit_synced)
		return rc;
	th->jit_synced = time;
	return th->pt != NULL ? mt_emu_pt_sync(th->pt, th->ip, t->clock) : 0;
}

/* Fetch the instruction at th->ip; an unreadable one stops the model. */
int
et_fetch(struct mt_emu_trace *t, struct thr *th)
{
	struct proc *p = et_proc_find(t, th->pid);

	th->started = 1;
	if (p == NULL || mt_emu_code_get(p->code, th->tid, th->ip,
	    &th->insn) < 0) {
		memset(&th->insn, 0, sizeof(th->insn));
		th->insn.ip = th->ip;
		th->insn.cls = MT_EMU_I_BAD;
		return 0;
	}
	if (p->jit != NULL && mt_emu_jit_is(p->jit, th->ip))
		return fetch_jit(t, th, p);
	return 0;
}

void
et_resume_now(struct mt_emu_trace *t, struct thr *th, int sig)
{
	struct user_regs_struct r;

	if (th->detach) {
		ptrace(PTRACE_DETACH, th->tid, NULL, (void *)(long)sig);
		th->gone = 1;
		return;
	}
	/* Stopped it stays: the next report is its SIGCONT.  (Should the
	 * kernel refuse, it is stepped on as before.) */
	if (th->gstop && ptrace(PTRACE_LISTEN, th->tid, NULL, NULL) == 0) {
		th->running = 1;
		return;
	}
	th->gstop = 0;
	th->injected = sig;
	if (th->mode == M_NATIVE) {
		ptrace(PTRACE_CONT, th->tid, NULL, (void *)(long)sig);
		th->running = 1;
		return;
	}
	if (th->insn.cls == MT_EMU_I_SYSCALL && !th->in_syscall) {
		/* User-only tracing: the packets stop at the syscall. */
		th->in_syscall = 1;
		th->sysno = et_get_regs(th->tid, &r) == 0 ? r.rax : ~0ull;
		th->sys_clock = t->clock;
		clock_gettime(CLOCK_MONOTONIC, &th->sys_t0);
		t->st.syscalls++;
		et_gt(t, th->tid, "syscall", th->ip, 0);
		if (th->pt != NULL)
			mt_emu_pt_disable(th->pt, t->clock);
	}
	ptrace(PTRACE_SINGLESTEP, th->tid, NULL, (void *)(long)sig);
	th->running = 1;
}

/*
 * Where a thread held in an interrupt stop resumes.  Stopped inside a
 * system call the kernel will restart (rax -ERESTART*, orig_rax the call),
 * the kernel moves the IP back over the 2-byte syscall instruction when
 * it resumes and enters the call again: the model must start there, or
 * it would take that blocking call for a single step in flight (waiting
 * for it, deaf to --duration, and misplacing its packets).
 */
uint64_t
et_resume_ip(const struct user_regs_struct *r)
{
	long rv = (long)r->rax;

	if ((long)r->orig_rax >= 0 && (rv == -512 || rv == -513 ||
	    rv == -514 || rv == -516))
		return r->rip - 2;	/* ERESTARTSYS..ERESTART_RESTARTBLOCK */
	return r->rip;
}

/* Begin stepping @th at @ip: TIP.PGE (with PSB+ the first time). */
int
et_start_step(struct mt_emu_trace *t, struct thr *th, uint64_t ip)
{
	int rc;

	if ((rc = et_thr_ask(t, th)) < 0 || th->detach)
		return rc;
	th->mode = M_STEP;
	th->ip = ip;
	if ((rc = et_fetch(t, th)) < 0)
		return rc;
	if (!t->stepping_timed) {
		clock_gettime(CLOCK_MONOTONIC, &t->t_start);
		t->stepping_timed = 1;
		et_ckpt_add(t, t->clock);
	}
	et_gt(t, th->tid, "start", 0, ip);
	if (th->pt != NULL)
		rc = mt_emu_pt_enable(th->pt, ip, t->clock);
	return rc;
}

/*
 * Account for instruction @in, after which the IP was @rip.  @depth
 * counts instructions retired in the same step: under a hypervisor the
 * trap after an emulated instruction (cpuid) comes one instruction late.
 */
static int
retire(struct mt_emu_trace *t, struct thr *th, const struct mt_emu_insn *in,
    uint64_t rip, int depth)
{
	uint64_t from = in->ip, fall = in->ip + in->len;
	struct mt_emu_pt *pt = th->pt;
	struct mt_emu_insn next;
	struct proc *p;
	int rc = 0;

	if (in->rep && rip == from)
		return 0;	/* one iteration of a rep string insn */
	if (in->cls == MT_EMU_I_OTHER && rip == from)
		return 0;	/* a stop with nothing retired (after exec) */
	t->clock++;
	t->st.insns++;
	switch (in->cls) {
	case MT_EMU_I_OTHER:
		if (rip == fall)
			break;
		p = et_proc_find(t, th->pid);
		if (depth < 2 && p != NULL &&
		    mt_emu_code_get(p->code, th->tid, fall, &next) == 0 &&
		    next.cls != MT_EMU_I_SYSCALL && next.cls != MT_EMU_I_INT) {
			t->st.late++;
			return retire(t, th, &next, rip, depth + 1);
		}
		goto odd;
	case MT_EMU_I_JCC:
		et_gt(t, th->tid, rip != fall ? "jcc" : "jcc-nt", from, rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_COND, from, in->len,
			    rip, 0, t->clock);
		break;
	case MT_EMU_I_JMP:
		et_gt(t, th->tid, "jmp", from, rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_JMP, from, in->len,
			    rip, 0, t->clock);
		break;
	case MT_EMU_I_JMP_IND:
	case MT_EMU_I_FAR:
		et_gt(t, th->tid, in->cls == MT_EMU_I_FAR ? "far" : "ijmp", from,
		    rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_JMP_IND, from,
			    in->len, rip, 0, t->clock);
		break;
	case MT_EMU_I_CALL:
		et_gt(t, th->tid, "call", from, rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_CALL, from, in->len,
			    rip, !in->disp0, t->clock);
		break;
	case MT_EMU_I_CALL_IND:
		et_gt(t, th->tid, "icall", from, rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_CALL_IND, from,
			    in->len, rip, 1, t->clock);
		break;
	case MT_EMU_I_RET:
		et_gt(t, th->tid, "ret", from, rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_RET, from, in->len,
			    rip, 0, t->clock);
		break;
	case MT_EMU_I_SYSCALL:
		/* TIP.PGD went out before the step (resume()). */
		th->in_syscall = 0;
		if (th->sysno == SYS_mmap || th->sysno == SYS_munmap ||
		    th->sysno == SYS_mprotect || th->sysno == SYS_mremap) {
			if ((p = et_proc_find(t, th->pid)) != NULL) {
				mt_emu_code_flush(p->code);
				mt_emu_jit_stale(p->jit);
			}
			/* The mapping changed during the call: from its
			 * tick on, as far as the trace can tell. */
			et_ckpt_add(t, th->sys_clock);
		}
		{
			struct timespec now;
			double ns;

			/* Real time counts only while nothing else ran: the
			 * stepping of other threads is far slower than they
			 * would run, and their instructions already moved the
			 * clock. */
			clock_gettime(CLOCK_MONOTONIC, &now);
			ns = et_ts_diff(&th->sys_t0, &now) * 1e9;
			if (t->o.slow_syscall_ns > 0 &&
			    ns > (double)t->o.slow_syscall_ns &&
			    t->clock == th->sys_clock + 1) {
				uint64_t end = th->sys_clock +
				    (uint64_t)(ns * t->o.tsc_per_ns);

				if (end > t->clock)
					t->clock = end;
			}
		}
		et_gt(t, th->tid, "sysret", 0, rip);
		if (pt != NULL)
			rc = mt_emu_pt_enable(pt, rip, t->clock);
		break;
	case MT_EMU_I_INT:
		/*
		 * int3 / int n: the kernel takes over and raises a signal
		 * for the program (on_stop passes it on).  User-only
		 * tracing shows FUP(insn) + TIP.PGD; packets resume at the
		 * handler or, when there is none, where the IP is next.
		 */
		et_gt(t, th->tid, "int", from, rip);
		if (pt != NULL && (rc = mt_emu_pt_async_disable(pt, from,
		    t->clock)) < 0)
			return rc;
		th->reenable = 1;
		t->st.branches++;
		return 0;
	case MT_EMU_I_BAD:
	default:
		goto odd;
	}
	if (in->cls != MT_EMU_I_OTHER)
		t->st.branches++;
	return rc;
odd:
	/* Not what the instruction does by itself: the kernel moved the IP
	 * (a fault handled, an int n).  Asynchronous, as hardware shows it. */
	t->st.odd++;
	et_gt(t, th->tid, "async", from, rip);
	if (pt != NULL) {
		if ((rc = mt_emu_pt_async_disable(pt, from, t->clock)) < 0)
			return rc;
		rc = mt_emu_pt_enable(pt, rip, t->clock);
	}
	return rc;
}

/*
 * Is @ip in the [uprobes] page of @th's process (emu-uprobe.h)?  Only an
 * unreadable @ip makes maps be read.
 */
static int
in_uprobes(struct mt_emu_trace *t, struct thr *th, uint64_t ip)
{
	struct proc *p = et_proc_find(t, th->pid);
	struct mt_emu_insn in;

	if (p == NULL)
		return 0;
	if (ip >= p->xol_lo && ip < p->xol_hi)
		return 1;
	if (mt_emu_code_get(p->code, th->tid, ip, &in) != -MT_E_IO ||
	    mt_emu_uprobe_page(th->pid, &p->xol_lo, &p->xol_hi) < 0)
		return 0;
	return ip >= p->xol_lo && ip < p->xol_hi;
}

/*
 * @th's step from th->insn went to @rip: into the [uprobes] page (a return
 * to the uretprobe trampoline, or the out-of-line copy of a probed
 * instruction), or out of it.  The kernel's code there is not the
 * program's: it is stepped through unrecorded, and the instruction that
 * went in retires where the thread comes out (the return address the
 * uretprobe saved, the instruction after the probed one), as if it had
 * gone there directly.  Returns 1 while inside, else 0 (retire normally,
 * with th->insn the instruction that went in).
 */
static int
xol_follow(struct mt_emu_trace *t, struct thr *th, uint64_t rip)
{
	if (!th->xol) {
		if (rip == th->insn.ip + th->insn.len ||
		    (th->insn.target != 0 && rip == th->insn.target) ||
		    !in_uprobes(t, th, rip))
			return 0;
		th->xol = 1;
		th->xol_insn = th->insn;
	} else if (!in_uprobes(t, th, rip)) {
		th->xol = 0;
		th->insn = th->xol_insn;
		return 0;
	}
	/* Stepped on as an unknown instruction: no system call model. */
	memset(&th->insn, 0, sizeof(th->insn));
	th->insn.ip = rip;
	th->insn.cls = MT_EMU_I_BAD;
	return 1;
}

/* A step finished for @th (SIGTRAP stop, stepping mode). */
int
et_step_done(struct mt_emu_trace *t, struct thr *th)
{
	struct user_regs_struct r;
	siginfo_t si;
	int rc = 0;

	t->st.steps++;
	if (et_get_regs(th->tid, &r) < 0)
		return 0;	/* died meanwhile: its exit follows */
	if (!th->started)
		return et_start_step(t, th, r.rip);
	if (th->injected && ptrace(PTRACE_GETSIGINFO, th->tid, NULL, &si) == 0
	    && si.si_code == SIGTRAP) {
		th->reenable = 0;
		/* The kernel built a signal frame and entered the handler
		 * (ptrace_notify after signal delivery while stepping).  In
		 * the [uprobes] page, the instruction that went in is shown
		 * interrupted. */
		th->xol = 0;
		t->st.signals++;
		et_gt(t, th->tid, "signal", th->ip, r.rip);
		if (th->pt != NULL && !th->in_syscall)
			rc = mt_emu_pt_async_disable(th->pt, th->ip, t->clock);
		if (th->in_syscall) {
			/* Interrupted system call: it returns into the
			 * handler. */
			th->in_syscall = 0;
		}
		if (rc == 0 && th->pt != NULL)
			rc = mt_emu_pt_enable(th->pt, r.rip, t->clock);
		th->ip = r.rip;
		if (rc == 0)
			rc = et_fetch(t, th);
		return rc;
	}
	if (th->reenable) {
		th->reenable = 0;
		if (th->pt != NULL && !th->in_syscall &&
		    (rc = mt_emu_pt_enable(th->pt, th->ip, t->clock)) < 0)
			return rc;
	}
	if (xol_follow(t, th, r.rip))
		return 0;
	if ((rc = retire(t, th, &th->insn, r.rip, 0)) < 0)
		return rc;
	if (r.rip != th->ip) {
		th->ip = r.rip;
		if ((rc = et_fetch(t, th)) < 0)
			return rc;
	}
	if (th->pt != NULL)
		rc = mt_emu_pt_tick(th->pt, th->ip, t->clock);
	return rc;
}

/*
 * @th stepped an instruction whose first byte is an int3 in memory but
 * not in its file (et_code_fix), and stopped with SIGTRAP.  A uprobe's: the
 * original instruction retired and the SIGTRAP is the kernel's report,
 * not the program's (emu-uprobe.h).  The program's own int3: the
 * instruction was that int3.
 */
void
et_probe_settle(struct thr *th)
{
	if (!mt_emu_uprobe_own_trap(th->tid))
		return;
	th->insn.cls = MT_EMU_I_INT;
	th->insn.len = 1;
	th->insn.target = 0;
	th->insn.rep = 0;
	th->insn.disp0 = 0;
	th->insn.probed = 0;
}
