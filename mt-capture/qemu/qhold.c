/* SPDX-License-Identifier: MIT */
/*
 * Signals (qhold.h).  QEMU delivers a signal between two blocks: the
 * next block is the handler's first.  After a block that ends in a
 * direct call or jump, or falls through, the interrupted address is
 * known (plugin.c, follow()).
 * After a conditional branch, an indirect branch or a return, it is
 * where the branch went, which only the next block would have said.
 * QEMU 7.2's plugins read no register, but the thread comes back to
 * that address when the handler returns: rt_sigreturn restores the
 * context QEMU saved, and the first block after it starts there.  So a
 * delivery there is held: the blocks the handler runs are logged, not
 * written (qh_block), and when rt_sigreturn brings the thread back,
 * the branch is written to the address it resumes at, then FUP there and
 * TIP.PGD, TIP.PGE at the handler, as the processor writes them, then
 * the logged blocks, through the same code as if they had not waited
 * (qh_resolve).
 *
 * A block is taken for a delivery when it starts at a handler the guest
 * registered (qsig.h).  An indirect call or jump to a handler, or a
 * return to one, may also be the program's own: the hold then ends
 * when the handler returns elsewhere than to a restorer, and the branch
 * is written as it was.  A delivery that cannot wait for the return (a
 * system call in the handler other than rt_sigreturn, a snapshot, a
 * longjmp out, another signal entered unexpectedly, too many blocks) is
 * written at once with FUP at the branch, as if it had not run
 * (docs/emulate.md, "Honest limits").
 */
#include <stdlib.h>

#include "emu-insn.h"
#include "emu-pt.h"
#include "qblk.h"
#include "qhold.h"
#include "qsig.h"
#include "qthread.h"

#define SYS_RT_SIGRETURN	15

/* Room for one more entry in the log: 0, or -1 (full, or no memory). */
static int
room(struct hold *h)
{
	size_t cap = h->cap ? h->cap * 2 : 256;
	struct held *l;

	if (h->n < h->cap)
		return 0;
	if (cap > QH_MAX || (l = realloc(h->log, cap * sizeof(*l))) == NULL)
		return -1;
	h->log = l;
	h->cap = cap;
	return 0;
}

/* Start holding the delivery of a signal to the handler at @next, right
 * after @p, when @next is a handler's: 1, else 0.  The caller logs the
 * handler's first block (qh_log), for which there is room. */
int
qh_start(struct vst *v, const struct qb_blk *p, uint64_t next)
{
	if (v->replaying || !qs_is_handler(next))
		return 0;
	v->hold.n = 0;
	if (room(&v->hold) < 0)
		return 0;
	v->hold.from = p;
	v->hold.n = 0;
	v->hold.depth = 0;
	v->holding = 1;
	v->slow = 1;
	return 1;
}

/* Log @b, started at @tsc: 0, or -1 when the log is full. */
int
qh_log(struct vst *v, const struct qb_blk *b, uint64_t tsc)
{
	struct hold *h = &v->hold;

	if (room(h) < 0)
		return -1;
	h->log[h->n].b = b;
	h->log[h->n].tsc = tsc;
	h->n++;
	return 0;
}

/*
 * The held delivery's packets, then those of every block logged since,
 * as qt_step() would have written them then: @how says how the delivery
 * is written, @at is the interrupted address for QH_EXACT.  The clock
 * goes back to each block's time meanwhile.
 */
void
qh_resolve(struct vst *v, enum qh_how how, uint64_t at)
{
	struct hold *h = &v->hold;
	const struct qb_blk *p = h->from;
	uint64_t tsc = v->tsc, skipped = v->skipped;
	size_t i;

	v->holding = 0;
	v->replaying = 1;
	v->prev = p;
	v->insys = 0;
	if (how == QH_EXACT && p->cls == MT_EMU_I_JCC && at != p->target &&
	    at != p->fall)
		how = QH_UNKNOWN;	/* the handler changed where it resumes */
	for (i = 0; i < h->n; i++) {
		const struct held *e = &h->log[i];

		v->tsc = e->tsc;
		if (e->b == NULL) {
			qt_sys_enter(v, 1);
			continue;
		}
		if (i > 0 || how == QH_BRANCH) {
			qt_step(v, e->b);
			v->prev = e->b;
			continue;
		}
		qt_odd();
		if (how == QH_EXACT) {
			static const char *const kind[] = {
				[MT_EMU_I_JCC] = "jcc", [MT_EMU_I_RET] = "ret",
				[MT_EMU_I_JMP_IND] = "ijmp",
				[MT_EMU_I_CALL_IND] = "icall",
				[MT_EMU_I_FAR] = "far",
			};
			static const enum mt_emu_pt_ev ev[] = {
				[MT_EMU_I_JCC] = MT_EMU_PT_COND,
				[MT_EMU_I_RET] = MT_EMU_PT_RET,
				[MT_EMU_I_JMP_IND] = MT_EMU_PT_JMP_IND,
				[MT_EMU_I_CALL_IND] = MT_EMU_PT_CALL_IND,
				[MT_EMU_I_FAR] = MT_EMU_PT_JMP_IND,
			};

			qt_gt(v, p->cls == MT_EMU_I_JCC && at == p->fall ?
			    "jcc-nt" : kind[p->cls], p->last, at);
			mt_emu_pt_branch(v->pt, ev[p->cls], p->last, p->len, at,
			    p->cls == MT_EMU_I_CALL_IND, v->tsc);
		} else {
			at = p->last;
		}
		qt_gt(v, "async", at, e->b->pc);
		mt_emu_pt_async_disable(v->pt, at, v->tsc);
		mt_emu_pt_enable(v->pt, e->b->pc, v->tsc);
		qt_step_due(v, e->b);
		v->prev = e->b;
	}
	h->n = 0;
	v->replaying = 0;
	/* The first block may have moved the clock (jit_sync); no other. */
	v->tsc = tsc + (v->skipped - skipped);
	qt_set_slow(v);
}

/*
 * @b starts while a delivery is held (after the handler's first block):
 * log it and return 1, or end the hold and return 0 (@b is then stepped
 * as usual).  The thread comes back from rt_sigreturn where it was
 * interrupted, unless another signal is delivered right then (the block
 * is a handler's, as the processor shows it: TIP.PGE there after the
 * system call, which needs no address); a return from the handler's
 * first frame goes to a restorer, or the handler was called.
 */
int
qh_block(struct vst *v, const struct qb_blk *b)
{
	struct hold *h = &v->hold;
	const struct qb_blk *p = v->prev;
	uint64_t next = b->pc;
	int split = 0;

	if (v->insys) {		/* rt_sigreturn (qh_syscall) */
		if (qs_is_handler(next)) {
			v->insys = 0;
			h->depth = 0;
			goto log;
		}
		qh_resolve(v, QH_EXACT, next);
		return 0;
	}
	if (b->since > v->synced)
		goto unknown;	/* JIT code's clock: not while held */
	/* QEMU moved the last instruction into the next block (follow). */
	if (next == p->last && next != p->target && p->ninsns > 1) {
		split = 1;
		goto log;
	}
	switch (p->cls) {
	case MT_EMU_I_OTHER:
		if (next == p->fall || (p->rep && next == p->last))
			goto log;
		break;
	case MT_EMU_I_JCC:
		if (next == p->target || next == p->fall)
			goto log;
		break;
	case MT_EMU_I_JMP:
		if (next == p->target)
			goto log;
		break;
	case MT_EMU_I_CALL:
		if (next != p->target)
			break;
		h->depth += !p->disp0;
		goto log;
	case MT_EMU_I_CALL_IND:
		if (qs_is_handler(next))
			break;
		h->depth++;
		goto log;
	case MT_EMU_I_JMP_IND:
	case MT_EMU_I_FAR:
		if (qs_is_handler(next))
			break;
		goto log;
	case MT_EMU_I_RET:
		if (qs_is_handler(next))
			break;
		if (h->depth > 0) {
			h->depth--;
			goto log;
		}
		if (qs_is_restorer(next))
			goto log;
		/* The handler's frame returned to a caller: it was called. */
		qh_resolve(v, QH_BRANCH, 0);
		return 0;
	default:
		break;
	}
unknown:
	qh_resolve(v, QH_UNKNOWN, 0);
	return 0;
log:
	if (qh_log(v, b, v->tsc) < 0)
		goto unknown;
	if (split && !qt_host_clock())
		v->tsc--;	/* as qt_step's follow() does */
	return 1;
}

/* A system call starts while a delivery is held: rt_sigreturn is
 * logged (1), any other ends the hold (0: its entry is written). */
int
qh_syscall(struct vst *v, int64_t num)
{
	if (num == SYS_RT_SIGRETURN && !v->insys &&
	    qh_log(v, NULL, v->tsc) == 0) {
		v->insys = 1;
		return 1;
	}
	qh_resolve(v, QH_UNKNOWN, 0);
	return 0;
}

