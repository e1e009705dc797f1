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
#include <sys/syscall.h>
#include <x86intrin.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "elffile.h"
#include "emu-jit.h"
#include "emu-trace.h"
#include "emu-uprobe.h"
#include "err.h"
#include "proc.h"

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

/*
 * Note a clock point at virtual tick @clock (never before the previous
 * point's).  Past 1M points the later ones are not kept: their mappings
 * then take the clock of the snapshot.
 */
static void
ckpt_add(struct mt_emu_trace *t, uint64_t clock)
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

static double
ts_diff(const struct timespec *a, const struct timespec *b)
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

static void
gt(struct mt_emu_trace *t, pid_t tid, const char *kind, uint64_t from,
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

static struct proc *
proc_find(struct mt_emu_trace *t, pid_t pid)
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

static pid_t
tgid_of(pid_t tid)
{
	char path[64], line[256];
	FILE *f;
	pid_t pid = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Tgid:", 5) == 0) {
			pid = (pid_t)atoi(line + 5);
			break;
		}
	fclose(f);
	return pid;
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
static int
thr_ask(struct mt_emu_trace *t, struct thr *th)
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

static int
get_regs(pid_t tid, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, r) == 0 ? 0 : -MT_E_SYS;
}

/*
 * Undo uprobe int3 bytes in @buf, @len bytes read from @pid at @addr, the
 * start of an instruction: mt's own triggers through the framework's
 * hook, then anyone else's (emu-uprobe.h): in a file mapping whose file
 * holds another byte there, the file's byte is the instruction's.
 * Whether it really was a uprobe is only known after the step
 * (probe_settle).
 */
static void
code_fix(void *ctx, pid_t pid, uint64_t addr, uint8_t *buf, size_t len)
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
static int
fetch(struct mt_emu_trace *t, struct thr *th)
{
	struct proc *p = proc_find(t, th->pid);

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
resume_now(struct mt_emu_trace *t, struct thr *th, int sig)
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
		th->sysno = get_regs(th->tid, &r) == 0 ? r.rax : ~0ull;
		th->sys_clock = t->clock;
		clock_gettime(CLOCK_MONOTONIC, &th->sys_t0);
		t->st.syscalls++;
		gt(t, th->tid, "syscall", th->ip, 0);
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
static uint64_t
resume_ip(const struct user_regs_struct *r)
{
	long rv = (long)r->rax;

	if ((long)r->orig_rax >= 0 && (rv == -512 || rv == -513 ||
	    rv == -514 || rv == -516))
		return r->rip - 2;	/* ERESTARTSYS..ERESTART_RESTARTBLOCK */
	return r->rip;
}

/* Begin stepping @th at @ip: TIP.PGE (with PSB+ the first time). */
static int
start_step(struct mt_emu_trace *t, struct thr *th, uint64_t ip)
{
	int rc;

	if ((rc = thr_ask(t, th)) < 0 || th->detach)
		return rc;
	th->mode = M_STEP;
	th->ip = ip;
	if ((rc = fetch(t, th)) < 0)
		return rc;
	if (!t->stepping_timed) {
		clock_gettime(CLOCK_MONOTONIC, &t->t_start);
		t->stepping_timed = 1;
		ckpt_add(t, t->clock);
	}
	gt(t, th->tid, "start", 0, ip);
	if (th->pt != NULL)
		rc = mt_emu_pt_enable(th->pt, ip, t->clock);
	return rc;
}

/* The file address of the symbol @sym of @e. */
static int
start_sym(struct mt_elf *e, const char *sym, uint64_t *addr)
{
	const struct mt_elf_sym *syms;
	size_t n, i;
	int rc;

	if ((rc = mt_elf_syms(e, &syms, &n)) < 0)
		return rc;
	for (i = 0; i < n; i++)
		if (strcmp(syms[i].name, sym) == 0) {
			*addr = syms[i].start;
			return 0;
		}
	return -MT_E_NOTFOUND;
}

int
mt_emu_trace_check_start(const char *exe, const char *sym, char *msg,
    size_t msgsz)
{
	struct mt_elf *e;
	uint64_t addr;
	int rc;

	if ((rc = mt_elf_open(&e, exe)) < 0) {
		snprintf(msg, msgsz, "--start-at: cannot read ELF file '%s': "
		    "%s", exe, mt_strerror(rc));
		return rc;
	}
	rc = start_sym(e, sym, &addr);
	if (rc < 0)
		snprintf(msg, msgsz, "--start-at: no symbol '%s' in '%s'%s",
		    sym, exe, mt_elf_has_symtab(e) ? "" :
		    " (it has no .symtab: only exported names)");
	mt_elf_free(e);
	return rc;
}

/* The mapping of file offset 0 of @arg, the executable's path. */
static int
is_exe_start(const struct mt_proc_map *m, void *arg)
{
	return m->pgoff == 0 && strcmp(m->path, arg) == 0;
}

/* The address of @sym in the main executable of @pid, loaded. */
static int
resolve_start(pid_t pid, const char *sym, uint64_t *addr)
{
	char exe[4096], path[64];
	const struct mt_elf_seg *segs;
	struct mt_proc_map m;
	struct mt_elf *e = NULL;
	uint64_t minv = ~0ull;
	size_t i, nseg;
	ssize_t len;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	if (len <= 0)
		return -MT_E_SYS;
	exe[len] = '\0';
	if ((rc = mt_elf_open(&e, exe)) < 0)
		return rc;
	rc = start_sym(e, sym, addr);
	if (rc < 0 || mt_elf_type(e) != MT_ELF_DYN)
		goto out;
	/* PIE: the load bias is where the file's lowest segment landed. */
	nseg = mt_elf_segs(e, &segs);
	for (i = 0; i < nseg; i++)
		if (segs[i].vaddr < minv)
			minv = segs[i].vaddr & ~0xfffull;
	if ((rc = mt_proc_find_map(pid, is_exe_start, exe, &m)) == 0)
		*addr += m.start - minv;
out:
	mt_elf_free(e);
	return rc;
}

/* Run natively to start_at: plant an int3 there (th is stopped). */
static int
plant_start(struct mt_emu_trace *t, struct thr *th)
{
	uint64_t addr;
	long word;
	int rc;

	rc = resolve_start(th->pid, t->o.start_at, &addr);
	if (rc < 0) {
		snprintf(t->msg, t->msgsz, "--start-at: cannot find '%s' in "
		    "the main executable of process %d: %s", t->o.start_at,
		    (int)th->pid, mt_strerror(rc));
		return rc;
	}
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, th->tid, (void *)(uintptr_t)addr, NULL);
	if (errno != 0 || ptrace(PTRACE_POKETEXT, th->tid,
	    (void *)(uintptr_t)addr, (void *)((word & ~0xffL) | 0xcc)) != 0) {
		snprintf(t->msg, t->msgsz, "--start-at: cannot write a "
		    "breakpoint at 0x%llx: %s", (unsigned long long)addr,
		    strerror(errno));
		return -MT_E_SYS;
	}
	t->bp_addr = addr;
	t->bp_orig = word;
	t->bp_pid = th->pid;
	t->phase = PH_WAIT_START;
	return 0;
}

static void
unplant(struct mt_emu_trace *t, pid_t tid)
{
	if (t->bp_addr == 0)
		return;
	ptrace(PTRACE_POKETEXT, tid, (void *)(uintptr_t)t->bp_addr,
	    (void *)t->bp_orig);
	t->bp_addr = 0;
}

/* The thread stopped at the start-at int3: step from here on. */
static int
hit_start(struct mt_emu_trace *t, struct thr *th,
    struct user_regs_struct *r)
{
	size_t i;
	int rc;

	r->rip = t->bp_addr;
	unplant(t, th->tid);
	if (ptrace(PTRACE_SETREGS, th->tid, NULL, r) != 0)
		return -MT_E_SYS;
	t->phase = PH_STEP;
	rc = start_step(t, th, r->rip);
	/* Other threads ran natively: stop them to step or let them go. */
	for (i = 0; i < t->nthr; i++) {
		struct thr *o = &t->thr[i];

		if (o == th || o->gone)
			continue;
		if (o->running)
			ptrace(PTRACE_INTERRUPT, o->tid, NULL, NULL);
	}
	return rc;
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
	if (th->tid == th->pid && (p = proc_find(t, th->pid)) != NULL) {
		p->exited = 1;
		(void)status;
	}
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
		p = proc_find(t, th->pid);
		if (depth < 2 && p != NULL &&
		    mt_emu_code_get(p->code, th->tid, fall, &next) == 0 &&
		    next.cls != MT_EMU_I_SYSCALL && next.cls != MT_EMU_I_INT) {
			t->st.late++;
			return retire(t, th, &next, rip, depth + 1);
		}
		goto odd;
	case MT_EMU_I_JCC:
		gt(t, th->tid, rip != fall ? "jcc" : "jcc-nt", from, rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_COND, from, in->len,
			    rip, 0, t->clock);
		break;
	case MT_EMU_I_JMP:
		gt(t, th->tid, "jmp", from, rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_JMP, from, in->len,
			    rip, 0, t->clock);
		break;
	case MT_EMU_I_JMP_IND:
	case MT_EMU_I_FAR:
		gt(t, th->tid, in->cls == MT_EMU_I_FAR ? "far" : "ijmp", from,
		    rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_JMP_IND, from,
			    in->len, rip, 0, t->clock);
		break;
	case MT_EMU_I_CALL:
		gt(t, th->tid, "call", from, rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_CALL, from, in->len,
			    rip, !in->disp0, t->clock);
		break;
	case MT_EMU_I_CALL_IND:
		gt(t, th->tid, "icall", from, rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_CALL_IND, from,
			    in->len, rip, 1, t->clock);
		break;
	case MT_EMU_I_RET:
		gt(t, th->tid, "ret", from, rip);
		if (pt != NULL)
			rc = mt_emu_pt_branch(pt, MT_EMU_PT_RET, from, in->len,
			    rip, 0, t->clock);
		break;
	case MT_EMU_I_SYSCALL:
		/* TIP.PGD went out before the step (resume()). */
		th->in_syscall = 0;
		if (th->sysno == SYS_mmap || th->sysno == SYS_munmap ||
		    th->sysno == SYS_mprotect || th->sysno == SYS_mremap) {
			if ((p = proc_find(t, th->pid)) != NULL) {
				mt_emu_code_flush(p->code);
				mt_emu_jit_stale(p->jit);
			}
			/* The mapping changed during the call: from its
			 * tick on, as far as the trace can tell. */
			ckpt_add(t, th->sys_clock);
		}
		{
			struct timespec now;
			double ns;

			/* Real time counts only while nothing else ran: the
			 * stepping of other threads is far slower than they
			 * would run, and their instructions already moved the
			 * clock. */
			clock_gettime(CLOCK_MONOTONIC, &now);
			ns = ts_diff(&th->sys_t0, &now) * 1e9;
			if (t->o.slow_syscall_ns > 0 &&
			    ns > (double)t->o.slow_syscall_ns &&
			    t->clock == th->sys_clock + 1) {
				uint64_t end = th->sys_clock +
				    (uint64_t)(ns * t->o.tsc_per_ns);

				if (end > t->clock)
					t->clock = end;
			}
		}
		gt(t, th->tid, "sysret", 0, rip);
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
		gt(t, th->tid, "int", from, rip);
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
	gt(t, th->tid, "async", from, rip);
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
	struct proc *p = proc_find(t, th->pid);
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
static int
step_done(struct mt_emu_trace *t, struct thr *th)
{
	struct user_regs_struct r;
	siginfo_t si;
	int rc = 0;

	t->st.steps++;
	if (get_regs(th->tid, &r) < 0)
		return 0;	/* died meanwhile: its exit follows */
	if (!th->started)
		return start_step(t, th, r.rip);
	if (th->injected && ptrace(PTRACE_GETSIGINFO, th->tid, NULL, &si) == 0
	    && si.si_code == SIGTRAP) {
		th->reenable = 0;
		/* The kernel built a signal frame and entered the handler
		 * (ptrace_notify after signal delivery while stepping).  In
		 * the [uprobes] page, the instruction that went in is shown
		 * interrupted. */
		th->xol = 0;
		t->st.signals++;
		gt(t, th->tid, "signal", th->ip, r.rip);
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
			rc = fetch(t, th);
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
		if ((rc = fetch(t, th)) < 0)
			return rc;
	}
	if (th->pt != NULL)
		rc = mt_emu_pt_tick(th->pt, th->ip, t->clock);
	return rc;
}

static int
on_exec(struct mt_emu_trace *t, struct thr *th)
{
	struct user_regs_struct r;
	struct proc *p = proc_find(t, th->pid);
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
	if (get_regs(th->tid, &r) < 0)
		return -MT_E_SYS;
	if (t->phase == PH_WAIT_EXEC) {
		if (t->o.start_at != NULL)
			return plant_start(t, th);
		t->phase = PH_STEP;
		return start_step(t, th, r.rip);
	}
	if (th->mode == M_STEP) {
		th->in_syscall = 0;
		gt(t, th->tid, "sysret", 0, r.rip);
		th->ip = r.rip;
		if ((rc = fetch(t, th)) < 0)
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

	follow = t->h.proc_new != NULL && proc_find(t, child) == NULL &&
	    t->nprocs < sizeof(t->procs) / sizeof(t->procs[0]) &&
	    t->h.proc_new(t->h.ctx, child, parent) > 0;
	if (follow) {
		p = &t->procs[t->nprocs];
		memset(p, 0, sizeof(*p));
		p->pid = child;
		if ((p->code = mt_emu_code_new(child, code_fix, t)) == NULL)
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
		if (follow && t->phase == PH_STEP && get_regs(child, &r) == 0)
			rc = start_step(t, th, resume_ip(&r));
		resume(t, th, 0);
	}
	return rc;
}

/*
 * @th stepped an instruction whose first byte is an int3 in memory but
 * not in its file (code_fix), and stopped with SIGTRAP.  A uprobe's: the
 * original instruction retired and the SIGTRAP is the kernel's report,
 * not the program's (emu-uprobe.h).  The program's own int3: the
 * instruction was that int3.
 */
static void
probe_settle(struct thr *th)
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
		pid = tgid_of(tid);
		if (pid == tid && t->o.follow_forks && proc_find(t, pid) ==
		    NULL) {
			/* A new process whose first stop beat the fork
			 * event: held until then. */
			if ((th = thr_add(t, pid, tid)) == NULL)
				return -MT_E_NOMEM;
			th->orphan = 1;
			return 0;
		}
		if (pid < 0 || proc_find(t, pid) == NULL)
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
			if (get_regs(tid, &r) == 0)
				rc = start_step(t, th, resume_ip(&r));
		} else if (t->phase == PH_STEP && !th->started && !th->detach) {
			if (get_regs(tid, &r) == 0)
				rc = start_step(t, th, resume_ip(&r));
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
		if (t->bp_addr != 0 && get_regs(tid, &r) == 0 &&
		    r.rip == t->bp_addr + 1 && th->pid == t->bp_pid &&
		    !th->detach) {
			rc = hit_start(t, th, &r);
			resume(t, th, 0);
			return rc;
		}
		resume(t, th, sig);
		return 0;
	}
	if (sig == SIGTRAP && th->mode == M_STEP) {
		int own;

		if (th->started && th->insn.probed)
			probe_settle(th);
		/* After int3 the SIGTRAP is the program's own: deliver it. */
		own = th->started && th->insn.cls == MT_EMU_I_INT &&
		    !th->injected;

		rc = step_done(t, th);
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
	p->code = mt_emu_code_new(pid, code_fix, t);
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
		if ((rc = plant_start(t, th)) < 0)
			return rc;
	} else {
		t->phase = PH_STEP;
	}
	for (i = 0; i < t->nthr; i++) {
		struct thr *th = &t->thr[i];

		if (th->gone || th->running)
			continue;
		if (t->phase == PH_STEP && !th->detach && !th->gstop &&
		    get_regs(th->tid, &r) == 0 &&
		    (rc = start_step(t, th, resume_ip(&r))) < 0)
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
				resume_now(t, th, th->held_sig);
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
		t->st.seconds = ts_diff(&t->t_start, &now);
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
			unplant(t, th->tid);
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
