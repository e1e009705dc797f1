/* SPDX-License-Identifier: MIT */
/*
 * mt's QEMU plugin (mt-qemu.so): turns the blocks a guest executes into
 * the Intel PT packets a processor tracing user mode would have written,
 * one ring per guest thread, in files mt-capture reads (qemu-ipc.h).
 *
 * At translation each block gets a record (qblk.h, shared by every
 * translation of the same code): its first address, its length in
 * instructions and what its last instruction does (capstone,
 * through emu-insn.h; QEMU ends a block at every branch).  Each time a
 * block runs, its exec callback knows where the previous block of that
 * thread went, which is all PT records: a TNT bit for a conditional
 * branch, a TIP for an indirect branch or an uncompressed return,
 * nothing for direct jumps and calls, TIP.PGD at a system call and
 * TIP.PGE where the thread comes back (the packet generator emu-pt.h,
 * shared with the ptrace backend, writes the bytes).  A change of block
 * that the last instruction cannot explain (a signal handler entered, a
 * fault) is FUP + TIP.PGD, TIP.PGE at the new address; a signal's
 * delivery right after a branch whose target only the next block would
 * say waits for the handler's return to say it (qhold.c).
 *
 * Every thread has its own state, reached by the vCPU index QEMU passes:
 * guest threads are host threads, and the hot path takes no lock.  The
 * common block changes are resolved inline (tb_exec), the rest by
 * follow().
 *
 * The clock is virtual: one TSC tick per guest instruction, per thread (a
 * new thread starts at its creator's clock), so two runs of the same
 * deterministic program give the same trace (docs/emulate.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "emu-insn.h"
#include "emu-pt.h"
#include "qblk.h"
#include "qgt.h"
#include "qemu-ipc.h"
#include "qmaps.h"
#include "qplugin.h"
#include "qhold.h"
#include "qsig.h"
#include "qthread.h"
#include "ring.h"

#define MAX_VCPUS	MTQ_MAX_THREADS
#define SYS_MMAP	9
#define SYS_MPROTECT	10
#define SYS_MUNMAP	11
#define SYS_RT_SIGACTION	13
#define SYS_RT_SIGRETURN	15
#define SYS_MREMAP	25
#define SYS_CLONE	56
#define SYS_FORK	57
#define SYS_VFORK	58
#define SYS_EXIT	60
#define SYS_EXIT_GROUP	231
#define SYS_CLONE3	435
#define CLONE_VM_FLAG	0x100

QP_EXPORT int qemu_plugin_version = QP_API_VERSION;

struct opts {
	uint64_t size;		/* ring bytes */
	uint64_t config;	/* PT config (RTIT_CTL bits) */
	uint64_t tsc0;		/* clock of the first thread */
	int all_threads;	/* trace every thread, not the first only */
	int ground_truth;	/* write gt.N */
	uint64_t gt_max;	/* bytes of all gt.N together, at most */
	int host_clock;		/* the host's TSC, not the instruction count */
};

static struct opts g_o;
static char g_dir[4096];
static struct mtq_ctl *g_ctl;
static struct vst *g_v[MAX_VCPUS];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct qm_trigger g_trig[QM_MAX_TRIGGERS];
static size_t g_ntrig;
static uint64_t g_clone_tsc;	/* creator's clock at the last clone */
static int g_nthreads;		/* vCPUs seen */
static pid_t g_pid;		/* the process the rings belong to */
static struct mt_emu_code *g_code;	/* capstone for classification */
static uint64_t g_jit_gen;	/* new versions of JIT code so far */

/* After a change of off, insys, started or gt. */
void
qt_set_slow(struct vst *v)
{
	v->slow = v->off || v->insys || !v->started || g_o.host_clock ||
	    v->gt != NULL || v->holding;
}

void
qt_odd(void)
{
	atomic_fetch_add_explicit(&g_ctl->odd, 1, memory_order_relaxed);
}

int
qt_host_clock(void)
{
	return g_o.host_clock;
}

/* Instructions executed: the virtual clock counts them. */
static uint64_t
insns_of(const struct vst *v)
{
	return g_o.host_clock ? v->insns : v->tsc - v->tsc0 - v->skipped;
}

static int
ring_sink(void *ctx, const uint8_t *p, size_t n)
{
	struct vst *v = ctx;

	mt_ring_write(&v->ring, p, n);
	atomic_store_explicit(&v->hdr->written, v->ring.written,
	    memory_order_relaxed);
	atomic_store_explicit(&v->hdr->head, v->ring.head,
	    memory_order_release);
	return 0;
}

/* ---- configuration ---- */

static int
read_config(const char *dir)
{
	char path[4200], line[4600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/config", dir);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	g_o.gt_max = UINT64_MAX;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long a, b;
		char file[4096];

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "snapshot-size %llu", &a) == 1)
			g_o.size = a;
		else if (sscanf(line, "config %llx", &a) == 1)
			g_o.config = a;
		else if (sscanf(line, "tsc0 %llu", &a) == 1)
			g_o.tsc0 = a;
		else if (sscanf(line, "all-threads %llu", &a) == 1)
			g_o.all_threads = a != 0;
		else if (sscanf(line, "ground-truth %llu", &a) == 1)
			g_o.ground_truth = a != 0;
		else if (sscanf(line, "ground-truth-max %llu", &a) == 1)
			g_o.gt_max = a;
		else if (sscanf(line, "host-clock %llu", &a) == 1)
			g_o.host_clock = a != 0;
		else if (sscanf(line, "trigger %llu %llx %4095[^\n]", &a, &b,
		    file) == 3 && a == g_ntrig && g_ntrig < QM_MAX_TRIGGERS) {
			g_trig[g_ntrig].offset = b;
			g_trig[g_ntrig].path = strdup(file);
			if (g_trig[g_ntrig].path == NULL)
				break;
			g_ntrig++;
		}
	}
	fclose(f);
	return g_o.size >= 4096 && (g_o.size & (g_o.size - 1)) == 0 ? 0 : -1;
}

/* ---- threads ---- */

/* The first block of a thread ran: make its ring (on its own thread). */
static void
thread_start(struct vst *v)
{
	char name[32];
	void *p;

	v->started = 1;
	/* Held until the ring is published: rings are numbered in order. */
	pthread_mutex_lock(&g_lock);
	v->idx = (int)atomic_load(&g_ctl->nrings);
	snprintf(name, sizeof(name), "ring.%d", v->idx);
	p = mtq_map(g_dir, name, MTQ_HDR_SIZE + g_o.size, 1);
	if (p == NULL) {
		v->off = 1;
		v->slow = 1;
		pthread_mutex_unlock(&g_lock);
		return;
	}
	v->hdr = p;
	v->hdr->magic = MTQ_MAGIC;
	v->hdr->tid = (uint32_t)syscall(SYS_gettid);
	v->hdr->size = g_o.size;
	if (mt_ring_init_mapped(&v->ring, (uint8_t *)p + MTQ_HDR_SIZE,
	    g_o.size) < 0 || mt_emu_pt_init(&v->packets, g_o.config, ring_sink,
	    v) < 0) {
		v->off = 1;
		v->slow = 1;
		pthread_mutex_unlock(&g_lock);
		return;
	}
	v->pt = &v->packets;
	if (g_o.ground_truth)
		qg_open(v, v->idx);
	/* Publish the ring only once it is complete. */
	atomic_store(&v->hdr->state, MTQ_T_RUN);
	atomic_store(&g_ctl->nrings, (uint32_t)v->idx + 1);
	pthread_mutex_unlock(&g_lock);
	qt_set_slow(v);
}

static void
thread_end(struct vst *v)
{
	if (v->holding)
		qh_resolve(v, QH_UNKNOWN, 0);
	free(v->hold.log);
	v->hold.log = NULL;
	v->hold.cap = 0;
	if (v->pt != NULL) {
		if (mt_emu_pt_enabled(v->pt) && v->prev != NULL)
			mt_emu_pt_async_disable(v->pt, v->prev->fall, v->tsc);
		mt_emu_pt_flush(v->pt);
	}
	if (v->hdr != NULL) {
		atomic_store(&v->hdr->insns, insns_of(v));
		atomic_store(&v->hdr->blocks, v->blocks);
		atomic_store(&v->hdr->state, MTQ_T_EXITED);
	}
	qg_close(v, 0);
	v->off = 1;
	v->slow = 1;
}

static void
vcpu_init(qp_id_t id, unsigned int vcpu)
{
	struct vst *v;

	(void)id;
	if (vcpu >= MAX_VCPUS)
		return;
	v = aligned_alloc(64, (sizeof(*v) + 63) & ~(size_t)63);
	if (v == NULL)
		return;
	memset(v, 0, sizeof(*v));
	pthread_mutex_lock(&g_lock);
	/* QEMU reuses the index of a thread that ended. */
	if (g_v[vcpu] != NULL && !g_v[vcpu]->off)
		thread_end(g_v[vcpu]);
	v->tsc = g_o.host_clock ? __rdtsc() : g_nthreads == 0 ? g_o.tsc0 :
	    __atomic_load_n(&g_clone_tsc, __ATOMIC_RELAXED);
	v->tsc0 = v->tsc;
	v->off = g_nthreads > 0 && !g_o.all_threads;
	v->slow = 1;	/* not started */
	v->seen = atomic_load(&g_ctl->release);
	g_nthreads++;
	g_v[vcpu] = v;
	pthread_mutex_unlock(&g_lock);
}

/* Ticks a hit is dated after its instruction (trigger_exec). */
#define HIT_SLACK	16

/* ---- stopping for a snapshot ---- */

static void
pause_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

/*
 * A snapshot was requested: end the packets before @pc (unless a system
 * call already did), publish the head, acknowledge and wait for the
 * release; then resume the packets at @pc.
 */
static void
park(struct vst *v, uint64_t pc, uint64_t tsc)
{
	uint32_t r;
	int was_on;

	if (v->holding)
		qh_resolve(v, QH_UNKNOWN, 0);
	r = atomic_load(&g_ctl->req);
	was_on = v->pt != NULL && mt_emu_pt_enabled(v->pt);

	if (was_on) {
		mt_emu_pt_async_disable(v->pt, pc, tsc);
		qt_gt(v, "stop", pc, 0);
	}
	if (v->pt != NULL)
		mt_emu_pt_flush(v->pt);
	if (v->gt != NULL)
		fflush(v->gt);
	atomic_store(&v->hdr->insns, insns_of(v));
	atomic_store(&v->hdr->blocks, v->blocks);
	atomic_store(&v->hdr->tsc, v->tsc);
	atomic_store(&v->hdr->ack, r);
	v->seen = r;
	while ((int32_t)(atomic_load(&g_ctl->release) - r) < 0 &&
	    !atomic_load(&g_ctl->off)) {
		if (getppid() == 1)	/* mt-capture is gone */
			atomic_store(&g_ctl->off, 1);
		pause_us(100);
	}
	if (atomic_load(&g_ctl->off)) {
		thread_end(v);
		return;
	}
	if (was_on) {
		qt_gt(v, "start", 0, pc);
		mt_emu_pt_enable(v->pt, pc, tsc);
	}
}

/* ---- execution ---- */

/* The previous block @p of @v was followed by @next: 1 when that is a
 * signal's delivery now held (qh_start), else 0. */
static int
follow(struct vst *v, const struct qb_blk *p, uint64_t next)
{
	struct mt_emu_pt *pt = v->pt;

	/* The common cases first, as plain tests: an indirect jump on the
	 * class would be mispredicted on a mix of branches. */
	if (p->cls == MT_EMU_I_JCC && (next == p->target || next == p->fall)) {
		qt_gt(v, next != p->fall ? "jcc" : "jcc-nt", p->last, next);
		mt_emu_pt_branch(pt, MT_EMU_PT_COND, p->last, p->len, next, 0,
		    v->tsc);
		return 0;
	}
	if (p->cls == MT_EMU_I_RET && (next != p->last || p->ninsns == 1)) {
		if (qh_start(v, p, next))
			return 1;
		qt_gt(v, "ret", p->last, next);
		mt_emu_pt_branch(pt, MT_EMU_PT_RET, p->last, p->len, next, 0,
		    v->tsc);
		return 0;
	}
	if (p->cls == MT_EMU_I_CALL && next == p->target) {
		qt_gt(v, "call", p->last, next);
		mt_emu_pt_branch(pt, MT_EMU_PT_CALL, p->last, p->len, next,
		    !p->disp0, v->tsc);
		return 0;
	}

	/* QEMU moved the last instruction into the next block (it crosses
	 * a page, or it is a rep string instruction going round): it did
	 * not run here. */
	if (next == p->last && next != p->target && p->ninsns > 1) {
		if (!g_o.host_clock)
			v->tsc--;
		return 0;
	}
	switch (p->cls) {
	case MT_EMU_I_OTHER:
		if (next == p->fall || (p->rep && next == p->last))
			return 0;
		break;
	case MT_EMU_I_JCC:
		if (next != p->target && next != p->fall)
			break;
		qt_gt(v, next != p->fall ? "jcc" : "jcc-nt", p->last, next);
		mt_emu_pt_branch(pt, MT_EMU_PT_COND, p->last, p->len, next, 0,
		    v->tsc);
		return 0;
	case MT_EMU_I_JMP:
		if (next != p->target)
			break;
		qt_gt(v, "jmp", p->last, next);
		return 0;
	case MT_EMU_I_CALL:
		if (next != p->target)
			break;
		qt_gt(v, "call", p->last, next);
		mt_emu_pt_branch(pt, MT_EMU_PT_CALL, p->last, p->len, next,
		    !p->disp0, v->tsc);
		return 0;
	case MT_EMU_I_JMP_IND:
	case MT_EMU_I_FAR:
		if (qh_start(v, p, next))
			return 1;
		qt_gt(v, p->cls == MT_EMU_I_FAR ? "far" : "ijmp", p->last, next);
		mt_emu_pt_branch(pt, MT_EMU_PT_JMP_IND, p->last, p->len, next,
		    0, v->tsc);
		return 0;
	case MT_EMU_I_CALL_IND:
		if (qh_start(v, p, next))
			return 1;
		qt_gt(v, "icall", p->last, next);
		mt_emu_pt_branch(pt, MT_EMU_PT_CALL_IND, p->last, p->len, next,
		    1, v->tsc);
		return 0;
	case MT_EMU_I_RET:
		if (qh_start(v, p, next))
			return 1;
		qt_gt(v, "ret", p->last, next);
		mt_emu_pt_branch(pt, MT_EMU_PT_RET, p->last, p->len, next, 0,
		    v->tsc);
		return 0;
	case MT_EMU_I_SYSCALL:
		if (!v->insys)
			break;
		v->insys = 0;
		qt_set_slow(v);
		qt_gt(v, "sysret", 0, next);
		/*
		 * Back from a signal handler: a PSB+ first.  Its return to
		 * the restorer was a TIP, which pops the return stack of
		 * perf's decoder but not libipt's (nor this encoder's), so
		 * the interrupted code's next compressed return would decode
		 * differently in each; the PSB+ empties all three.
		 */
		if (v->sigreturn)
			mt_emu_pt_sync(pt, next, v->tsc);
		mt_emu_pt_enable(pt, next, v->tsc);
		return 0;
	default:
		break;
	}
	/*
	 * Not what the last instruction does: a signal handler entered, a
	 * fault, int3.  Asynchronous, as hardware shows it: FUP where the
	 * thread was interrupted.  QEMU delivers signals between blocks, so
	 * a block that ends in a direct call or jump, or falls through, ran
	 * whole: it was interrupted at the target (the call pushed its
	 * return address).  After a conditional or indirect branch, or a
	 * fault inside the block, where it went is unknown: FUP at the last
	 * instruction, as if it had not run, unless it is a signal's delivery
	 * held until the handler returns (qh_start).
	 */
	if (p->cls == MT_EMU_I_JCC && qh_start(v, p, next))
		return 1;
	atomic_fetch_add_explicit(&g_ctl->odd, 1, memory_order_relaxed);
	if (v->insys) {
		v->insys = 0;	/* a signal interrupted the system call */
		qt_set_slow(v);
		qt_gt(v, "async", p->last, next);
	} else {
		uint64_t at = p->last;

		if (p->cls == MT_EMU_I_CALL) {
			qt_gt(v, "call", p->last, p->target);
			mt_emu_pt_branch(pt, MT_EMU_PT_CALL, p->last, p->len,
			    p->target, !p->disp0, v->tsc);
			at = p->target;
		} else if (p->cls == MT_EMU_I_JMP) {
			qt_gt(v, "jmp", p->last, p->target);
			at = p->target;
		} else if (p->cls == MT_EMU_I_OTHER) {
			at = p->fall;
		}
		qt_gt(v, "async", at, next);
		mt_emu_pt_async_disable(pt, at, v->tsc);
	}
	mt_emu_pt_enable(pt, next, v->tsc);
	return 0;
}

/*
 * @v is about to run @b, JIT code of a version it has not run yet
 * (qcode.h): its clock moves up to the version's time if it is behind
 * (threads have clocks of their own), so that the PSB+ written before
 * the block (mt_emu_pt_sync, or the enable of a new thread) dates it at
 * or after that time, and a decoder takes the new bytes from there on.
 */
static void
jit_sync(struct vst *v, const struct qb_blk *b)
{
	if (v->tsc < b->since) {
		v->skipped += b->since - v->tsc;
		v->tsc = b->since;
	}
	v->synced = b->since;
}

/*
 * The previous block's end and what is due before @b runs, for every
 * block but the common cases tb_exec has inline: pending branches out
 * when JIT code was rewritten, how the previous block ended (follow), a
 * PSB+ before a new version of JIT code, the timing packets.
 */
/* What is due before @b runs once the previous block's end is written:
 * a PSB+ before a new version of JIT code, the timing packets. */
void
qt_step_due(struct vst *v, const struct qb_blk *b)
{
	if (b->since > v->synced) {
		jit_sync(v, b);
		mt_emu_pt_sync(v->pt, b->pc, v->tsc);
	}
	/* follow() may have moved the clock back (a split instruction). */
	mt_emu_pt_tick(v->pt, b->pc, v->tsc);
}

void
qt_step(struct vst *v, const struct qb_blk *b)
{
	/*
	 * JIT code was written over other code: this thread's pending
	 * branches (perhaps the old code's) go out now, with the times
	 * they had, all before the new code's.
	 */
	if (__atomic_load_n(&g_jit_gen, __ATOMIC_SEQ_CST) != v->jit_gen) {
		v->jit_gen = __atomic_load_n(&g_jit_gen, __ATOMIC_SEQ_CST);
		mt_emu_pt_flush(v->pt);
	}
	if (follow(v, v->prev, b->pc)) {
		/* A held delivery: @b is the handler's first block (there
		 * is room for it), unless it is JIT code of a new version,
		 * whose clock cannot wait. */
		qh_log(v, b, v->tsc);
		if (b->since > v->synced)
			qh_resolve(v, QH_UNKNOWN, 0);
		return;
	}
	qt_step_due(v, b);
}

/* The packets of a system call's entry, after the block v->prev;
 * @sigreturn: it is rt_sigreturn. */
void
qt_sys_enter(struct vst *v, int sigreturn)
{
	if (v->prev != NULL && v->prev->cls == MT_EMU_I_SYSCALL) {
		qt_gt(v, "syscall", v->prev->last, 0);
		mt_emu_pt_disable(v->pt, v->tsc);
	} else {
		/* Not at a syscall instruction: end where the block did. */
		mt_emu_pt_async_disable(v->pt, v->prev != NULL ?
		    v->prev->last : 0, v->tsc);
	}
	mt_emu_pt_flush(v->pt);
	v->insys = 1;
	v->sigreturn = sigreturn;
	v->slow = 1;
}

/* The block @b starts: count it in the clock. */
static inline void
advance(struct vst *v, const struct qb_blk *b)
{
	v->prev = b;
	if (!g_o.host_clock)
		v->tsc += b->ninsns;
	else
		v->insns += b->ninsns;
	v->blocks++;
}

/* tb_exec's every case: a thread's first block, after a system call, a
 * snapshot to stop for, the host clock, a ground-truth log. */
static __attribute__((noinline)) void
tb_exec_full(struct vst *v, const struct qb_blk *b)
{
	if (g_o.host_clock)
		v->tsc = __rdtsc();
	if (!v->started) {
		thread_start(v);
		if (v->off)
			return;
		v->jit_gen = __atomic_load_n(&g_jit_gen, __ATOMIC_SEQ_CST);
		if (b->since > v->synced)
			jit_sync(v, b);	/* the enable writes PSB+ */
		qt_gt(v, "start", 0, b->pc);
		mt_emu_pt_enable(v->pt, b->pc, v->tsc);
	} else {
		int held;

		if (v->insys)
			atomic_store(&v->hdr->state, MTQ_T_RUN);
		held = v->holding && qh_block(v, b);
		if (!held && atomic_load_explicit(&g_ctl->req,
		    memory_order_relaxed) != v->seen && v->insys) {
			park(v, b->pc, v->tsc);
			if (v->off)
				return;
		}
		if (!held)
			qt_step(v, b);
	}
	if (atomic_load_explicit(&g_ctl->req, memory_order_relaxed) !=
	    v->seen) {
		park(v, b->pc, v->tsc);
		if (v->off)
			return;
	}
	advance(v, b);
}

/* A block of a running thread, any case. */
static __attribute__((noinline)) void
tb_step(struct vst *v, const struct qb_blk *b)
{
	qt_step(v, b);
	advance(v, b);
}

/* The previous block ended in an indirect jump or call, or in a return
 * that compression does not cover (tb_exec checked the rest): TIP, then
 * what is due after it. */
static __attribute__((noinline)) void
tb_tip(struct vst *v, const struct qb_blk *b, enum mt_emu_pt_ev ev)
{
	const struct qb_blk *p = v->prev;

	if (qs_nhandlers != 0 && qs_is_handler(b->pc)) {
		tb_step(v, b);	/* perhaps a signal's delivery (follow) */
		return;
	}
	mt_emu_pt_branch(v->pt, ev, p->last, p->len, b->pc, 1, v->tsc);
	mt_emu_pt_tick(v->pt, b->pc, v->tsc);
	advance(v, b);
}

/*
 * A block starts.  When the previous one ended in a conditional branch, a
 * direct call, a compressed return, a direct jump or a fall-through (nine
 * blocks in ten of bench/cap-calls.cpp), no packet is due and no JIT code
 * was rewritten, this costs only what is inline here: no call, so no
 * saved registers either (every other case goes to tb_tip, tb_step or
 * tb_exec_full, as tail calls).  What it does is what qt_step() would,
 * without the ground-truth log: a thread that writes one takes
 * tb_exec_full for every block, and a test compares the packets of the
 * two captures byte for byte (tests/mt-capture-qemu.bats).
 */
static void
tb_exec(unsigned int vcpu, void *udata)
{
	const struct qb_blk *b = udata, *p;
	struct vst *v = vcpu < MAX_VCPUS ? g_v[vcpu] : NULL;
	struct mt_emu_pt *pt;
	uint64_t next, side;
	int taken;

	if (v == NULL)
		return;
	if (v->slow || atomic_load_explicit(&g_ctl->req,
	    memory_order_relaxed) != v->seen) {
		if (!v->off)
			tb_exec_full(v, b);
		return;
	}
	p = v->prev;
	pt = &v->packets;
	next = b->pc;
	if (!mt_emu_pt_quiet(pt, v->tsc) || b->since > v->synced ||
	    __atomic_load_n(&g_jit_gen, __ATOMIC_RELAXED) != v->jit_gen) {
		tb_step(v, b);
		return;
	}
	mt_emu_pt_clock(pt, v->tsc);
	if (p->cls == MT_EMU_I_JCC) {
		/*
		 * Not a branch on the direction (the guest's own branches
		 * would mispredict here again): the side @next must be on,
		 * chosen with arithmetic, then one test that holds.
		 */
		taken = next != p->fall;
		side = p->fall ^ ((p->fall ^ p->target) &
		    (0 - (uint64_t)taken));
		if (next != side)
			goto other;
		mt_emu_pt_bit(pt, taken);
	} else switch (p->cls) {
	case MT_EMU_I_RET:
		if (next == p->last && p->ninsns > 1)
			goto other;
		/* Compressed when the newest return address is @next. */
		if (!mt_emu_pt_ret_pop(pt, next)) {
			tb_tip(v, b, MT_EMU_PT_RET);
			return;
		}
		mt_emu_pt_bit(pt, 1);
		break;
	case MT_EMU_I_JMP_IND:
	case MT_EMU_I_CALL_IND:
		if (next == p->last && p->ninsns > 1)
			goto other;
		tb_tip(v, b, p->cls == MT_EMU_I_JMP_IND ? MT_EMU_PT_JMP_IND :
		    MT_EMU_PT_CALL_IND);
		return;
	case MT_EMU_I_CALL:
		if (next != p->target)
			goto other;
		mt_emu_pt_call(pt, p->fall, !p->disp0, v->tsc);
		break;
	case MT_EMU_I_OTHER:
		if (next != p->fall)
			goto other;
		break;
	case MT_EMU_I_JMP:
		if (next != p->target)
			goto other;
		break;
	default:
		goto other;
	}
	/* advance(), for the virtual clock. */
	v->prev = b;
	v->tsc += b->ninsns;
	v->blocks++;
	return;
other:
	tb_step(v, b);
}

/*
 * A trigger's instruction is about to run: note the hit, ask for a
 * snapshot and stop right there, as the ptrace backend does (FUP at the
 * instruction).  @udata: the trigger's index, and the instruction's
 * index in its block shifted left by 8.
 */
static void
trigger_exec(unsigned int vcpu, void *udata)
{
	size_t i = (uintptr_t)udata & 0xff;
	uint64_t k = (uintptr_t)udata >> 8, tsc;
	struct vst *v = vcpu < MAX_VCPUS ? g_v[vcpu] : NULL;
	uint32_t n, slot;

	if (v == NULL || v->off || v->hdr == NULL || v->prev == NULL)
		return;
	/* The virtual clock moved past the block when it began. */
	tsc = g_o.host_clock ? __rdtsc() : v->tsc - v->prev->ninsns + k;
	n = atomic_fetch_add(&g_ctl->nhits, 1);
	slot = n % MTQ_MAX_HITS;
	/*
	 * A little after the stop.  The decoder times the call that reached
	 * the trigger and the stop from MTC and CYC packets, which may put
	 * them a few ticks past @tsc (and the encoder's clock may already
	 * be past @tsc: it moved to the block's end when the block began).
	 * A hit earlier than the decoded stop would come before the call;
	 * one a little later is placed at the stop (mt-decode: the thread's
	 * next hit at the address where tracing stopped).
	 */
	if (v->pt != NULL && mt_emu_pt_time(v->pt) > tsc)
		g_ctl->hits[slot].tsc = mt_emu_pt_time(v->pt) + HIT_SLACK;
	else
		g_ctl->hits[slot].tsc = tsc + HIT_SLACK;
	g_ctl->hits[slot].tid = v->hdr->tid;
	g_ctl->hits[slot].trigger = (uint32_t)i;
	g_ctl->hits[slot].ip = qm_trigger_addr(i);
	atomic_store(&g_ctl->hit_ready[slot], n + 1);
	/* Only the first hit since the last release asks for a snapshot. */
	{
		uint32_t r = atomic_load(&g_ctl->release);

		atomic_compare_exchange_strong(&g_ctl->req, &r, r + 1);
	}
	if (atomic_load(&g_ctl->req) != v->seen)
		park(v, g_ctl->hits[slot].ip, tsc);
}

static void
syscall_enter(qp_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
    uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
    uint64_t a7, uint64_t a8)
{
	struct vst *v = vcpu < MAX_VCPUS ? g_v[vcpu] : NULL;

	(void)id; (void)a2; (void)a3; (void)a4; (void)a5; (void)a6;
	(void)a7; (void)a8;
	if (num == SYS_CLONE || num == SYS_CLONE3)
		__atomic_store_n(&g_clone_tsc, v != NULL ? v->tsc : 0,
		    __ATOMIC_RELAXED);
	(void)a1;
	if (num == SYS_RT_SIGACTION && v != NULL)
		v->sigact = a2;
	if (v == NULL || v->off || v->pt == NULL)
		return;
	if (v->holding && qh_syscall(v, num)) {
		atomic_store(&v->hdr->tsc, v->tsc);
		atomic_store(&v->hdr->state, MTQ_T_SYSCALL);
		return;
	}
	qt_sys_enter(v, num == SYS_RT_SIGRETURN);
	if (num == SYS_EXIT || num == SYS_EXIT_GROUP) {
		if (num == SYS_EXIT_GROUP)
			atomic_store(&g_ctl->exited, 1);
		thread_end(v);
		return;
	}
	atomic_store(&v->hdr->tsc, v->tsc);
	atomic_store(&v->hdr->state, MTQ_T_SYSCALL);
}

static void
syscall_return(qp_id_t id, unsigned int vcpu, int64_t num, int64_t ret)
{
	struct vst *v = vcpu < MAX_VCPUS ? g_v[vcpu] : NULL;
	size_t i;

	(void)id;
	if (num == SYS_RT_SIGACTION && ret == 0 && v != NULL)
		qs_sigaction(v->sigact);
	/* The clock of the return: code mapped by the call runs after. */
	if (num == SYS_MMAP || num == SYS_MPROTECT || num == SYS_MUNMAP ||
	    num == SYS_MREMAP)
		qm_changed(g_o.host_clock ? __rdtsc() : v != NULL ? v->tsc :
		    0);
	/* The child of fork(2) runs a copy of this plugin: it must not
	 * write the parent's rings. */
	if ((num == SYS_FORK || num == SYS_VFORK || num == SYS_CLONE ||
	    num == SYS_CLONE3) && ret == 0 && getpid() != g_pid) {
		for (i = 0; i < MAX_VCPUS; i++)
			if (g_v[i] != NULL) {
				g_v[i]->off = 1;
				g_v[i]->slow = 1;
				/* The parent writes what was
				 * buffered: drop our copy. */
				qg_close(g_v[i], 1);
			}
	}
}

/* ---- translation ---- */

/* Ticks another thread's clock may be read behind: it is read without a
 * lock, a block or two late, and QEMU blocks hold at most 512
 * instructions. */
#define JIT_SKEW	2048

/*
 * The time of a new version of JIT code (qcode.h), translated now by
 * the calling thread, which runs it next.  The version count changes
 * first: every other thread, at its next block, writes its pending
 * branches with the times they had (tb_exec), so none of the old code's
 * is dated later than its clock now.  The time is then the latest clock:
 * the translating thread's own (its old code ran before it), another
 * thread's plus JIT_SKEW.  A thread runs the new code only once its clock
 * has reached that time and a PSB+ has said so (jit_sync).
 */
static uint64_t
jit_version(void *unused)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	uint64_t t = 1, c;
	size_t i;

	(void)unused;
	__atomic_add_fetch(&g_jit_gen, 1, __ATOMIC_SEQ_CST);
	if (g_o.host_clock)
		return __rdtsc();
	for (i = 0; i < MAX_VCPUS; i++) {
		const struct vst *v = g_v[i];

		if (v == NULL || v->off || !v->started || v->hdr == NULL)
			continue;
		c = __atomic_load_n(&v->tsc, __ATOMIC_RELAXED);
		if (v->hdr->tid != tid)
			c += JIT_SKEW;
		if (c > t)
			t = c;
	}
	return t;
}

static void
tb_trans(qp_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i, k, len = 0;
	struct qemu_plugin_insn *last;
	struct mt_emu_insn in;
	uint8_t code[4096];
	struct qb_blk blk, *b = &blk;
	const struct qb_blk *rec;
	int jit, made;

	(void)id;
	if (n == 0)
		return;
	memset(b, 0, sizeof(*b));
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		size_t sz = qemu_plugin_insn_size(insn);

		if (len + sz <= sizeof(code)) {
			memcpy(code + len, qemu_plugin_insn_data(insn), sz);
			len += sz;
		}
	}
	last = qemu_plugin_tb_get_insn(tb, n - 1);
	b->pc = qemu_plugin_tb_vaddr(tb);
	qs_set_base((uint64_t)(uintptr_t)qemu_plugin_insn_haddr(
	    qemu_plugin_tb_get_insn(tb, 0)) - b->pc);
	b->last = qemu_plugin_insn_vaddr(last);
	b->ninsns = (uint32_t)n;
	qm_block(b->pc, qemu_plugin_insn_haddr(qemu_plugin_tb_get_insn(tb, 0)),
	    code, len, jit_version, &b->since, &jit);
	memset(&in, 0, sizeof(in));
	if (mt_emu_code_classify(g_code, qemu_plugin_insn_data(last),
	    qemu_plugin_insn_size(last), b->last, &in) < 0)
		in.cls = MT_EMU_I_BAD;
	b->len = (uint8_t)qemu_plugin_insn_size(last);
	b->fall = b->last + b->len;
	b->cls = in.cls;
	b->target = in.target;
	b->rep = in.rep;
	b->disp0 = in.disp0;
	/* A retranslation of the same code gets the record it had, and its
	 * bytes are in DIR/code already. */
	if ((rec = qb_intern(b, code, len, jit, &made)) == NULL)
		return;
	if (made && jit)
		qm_put_code(b->pc, code, len, b->since);
	atomic_fetch_add_explicit(&g_ctl->translated, 1, memory_order_relaxed);
	atomic_store_explicit(&g_ctl->records, qb_count(),
	    memory_order_relaxed);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QP_CB_NO_REGS,
	    (void *)(uintptr_t)rec);
	for (k = 0; k < g_ntrig; k++) {
		uint64_t a = qm_trigger_addr(k);

		for (i = 0; a != 0 && i < n; i++) {
			struct qemu_plugin_insn *insn =
			    qemu_plugin_tb_get_insn(tb, i);

			if (qemu_plugin_insn_vaddr(insn) == a)
				qemu_plugin_register_vcpu_insn_exec_cb(insn,
				    trigger_exec, QP_CB_NO_REGS,
				    (void *)(uintptr_t)(k | i << 8));
		}
	}
}

static void
at_exit(qp_id_t id, void *udata)
{
	size_t i;

	(void)id;
	(void)udata;
	if (getpid() != g_pid)
		return;
	atomic_store(&g_ctl->exited, 1);
	for (i = 0; i < MAX_VCPUS; i++)
		if (g_v[i] != NULL && g_v[i]->gt != NULL)
			fflush(g_v[i]->gt);
}

QP_EXPORT int
qemu_plugin_install(qp_id_t id, const struct qp_info *info, int argc,
    char **argv)
{
	int i;

	if (info->system_emulation) {
		fprintf(stderr, "mt-qemu: for qemu-user only\n");
		return -1;
	}
	for (i = 0; i < argc; i++)
		if (strncmp(argv[i], "dir=", 4) == 0)
			snprintf(g_dir, sizeof(g_dir), "%s", argv[i] + 4);
	if (g_dir[0] == '\0' || read_config(g_dir) < 0) {
		fprintf(stderr, "mt-qemu: needs dir=DIR holding mt-capture's "
		    "config\n");
		return -1;
	}
	g_ctl = mtq_map(g_dir, "ctl", sizeof(struct mtq_ctl), 0);
	g_code = mt_emu_code_new(0, NULL, NULL);
	if (g_ctl == NULL || g_ctl->magic != MTQ_MAGIC || g_code == NULL ||
	    qm_init(g_dir, g_trig, g_ntrig) < 0) {
		fprintf(stderr, "mt-qemu: cannot open '%s/ctl'\n", g_dir);
		return -1;
	}
	g_pid = getpid();
	qg_init(g_dir, g_ctl, g_o.gt_max);
	qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_vcpu_syscall_cb(id, syscall_enter);
	qemu_plugin_register_vcpu_syscall_ret_cb(id, syscall_return);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
