/* SPDX-License-Identifier: MIT */
/*
 * The decode loop (decode.h).  One struct dec_buf per PT buffer follows
 * libipt's documented block loop (docs/decode.md; libipt's doc/howto_libipt.md and
 * ptxed's decode_block()):
 * drain events before every pt_blk_next (also right after a sync), use a
 * block's instructions even when pt_blk_next failed, and after an error
 * report it and resync at the next PSB, stopping when the offset no longer
 * advances.
 *
 * Calls and jumps inside a block come from the walk cache (walk.h).  The
 * branch that ends a block (indirect call or jump, return, conditional
 * branch, far transfer) is held as pending until whatever comes next says
 * where it went: the next block's IP, the IP of a disable event, or the
 * source of an asynchronous branch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <intel-pt.h>

#include "cfg.h"
#include "decode.h"
#include "err.h"
#include "events.h"
#include "ild.h"
#include "image.h"
#include "parallel.h"
#include "runs.h"
#include "snap.h"
#include "threads.h"
#include "walk.h"
#include "xol.h"

#include "decbuf.h"

/* Where the next byte written to @fd goes. */
static uint64_t
dec_fd_pos(int fd)
{
	off_t o = lseek(fd, 0, SEEK_CUR);

	return o < 0 ? 0 : (uint64_t)o;
}

static int
dec_sig_equal(const struct dec_sig *a, const struct dec_sig *b)
{
	return a->off == b->off && a->type == b->type && a->ip == b->ip &&
	    a->has_tsc == b->has_tsc && a->tsc == b->tsc;
}

static inline void
dec_count_jmp(struct dec_buf *b, int leaves)
{
	if (leaves == WL_UNKNOWN)
		b->r->st->jmp_unknown_src++;
	else if (leaves == WL_LEAVES_UNKNOWN)
		b->r->st->jmp_unknown_dst++;
}

/*
 * Resolve the pending branch: it went to @to (0: unknown).  @disabled:
 * tracing stopped right after it (TIP.PGD).
 */
static void
dec_resolve(struct dec_buf *b, uint64_t to, int disabled)
{
	struct dec_pend *p = &b->pend;
	int all = b->r->o->all_branches, leaves;

	switch (p->kind) {
	case WK_CALL:
		dec_emit(b, MT_EV_CALL, p->time, p->from, to);
		break;
	case WK_RET:
		dec_emit(b, MT_EV_RET, p->time, p->from, to);
		break;
	case WK_JMP:
		leaves = to ? walk_leaves(b->r->wc, p->from, to) : WL_INSIDE;
		dec_count_jmp(b, leaves);
		if (leaves & WL_LEAVES)
			dec_emit(b, MT_EV_JMP, p->time, p->from, to);
		else if (all)
			dec_emit(b, MT_EV_BR, p->time, p->from, to);
		break;
	case WK_COND:
		if (to == p->fall || to == 0)
			break;
		if (p->leaves == WL_LEAVES_UNKNOWN)
			b->r->st->jmp_unknown_dst++;
		if (p->leaves & WL_LEAVES)
			dec_emit(b, MT_EV_JMP, p->time, p->from, to);
		else if (all)
			dec_emit(b, MT_EV_BR, p->time, p->from, to);
		break;
	case WK_SYSCALL:
		/* Without the kernel traced the disable record says it. */
		if (!disabled)
			dec_emit(b, MT_EV_SYSCALL, p->time, p->from, to);
		break;
	case WK_SYSRET:
		dec_emit(b, MT_EV_SYSRET, p->time, p->from, to);
		break;
	case WK_IRET:
		dec_emit(b, MT_EV_IRET, p->time, p->from, to);
		break;
	case WK_INT:
		dec_emit(b, MT_EV_IRQ, p->time, p->from, to);
		break;
	case WK_FAR:
		dec_emit(b, MT_EV_JMP, p->time, p->from, to);
		break;
	default:
		break;
	}
	p->kind = WK_NONE;
}

static void
dec_set_pend(struct dec_buf *b, int kind, uint64_t ip, uint64_t size,
    int leaves, uint64_t time)
{
	b->pend.kind = (uint8_t)kind;
	b->pend.from = ip;
	b->pend.fall = ip + size;
	b->pend.leaves = (uint8_t)leaves;
	b->pend.time = time;
}

static void
dec_transition(struct dec_buf *b, const struct walk_tr *t, uint64_t time)
{
	if (t->kind == WK_CALL) {
		dec_emit(b, MT_EV_CALL, time, t->from, t->to);
		return;
	}
	dec_count_jmp(b, t->leaves);
	if (t->leaves & WL_LEAVES)
		dec_emit(b, MT_EV_JMP, time, t->from, t->to);
	else if (b->r->o->all_branches)
		dec_emit(b, MT_EV_BR, time, t->from, t->to);
}

/* A block's last instruction spans two sections: libipt gave its bytes. */
static void
dec_truncated(struct dec_buf *b, const struct pt_block *blk, uint64_t time)
{
	uint64_t target;
	int k = walk_insn(b->r->wc, blk->raw, blk->size, blk->end_ip,
	    blk->mode, &target);

	if ((k == WK_CALL || k == WK_JMP) && target != 0) {
		struct walk_tr t = { .kind = (uint8_t)k, .from = blk->end_ip,
		    .to = target };

		t.leaves = (uint8_t)walk_leaves(b->r->wc, blk->end_ip, target);
		dec_transition(b, &t, time);
	} else if (k != WK_NONE) {
		dec_set_pend(b, k, blk->end_ip, blk->size, target ?
		    walk_leaves(b->r->wc, blk->end_ip, target) : WL_UNKNOWN,
		    time);
	}
}

/* A block starts at @ip: the branch pending went there. */
static inline void
dec_enter(struct dec_buf *b, uint64_t ip)
{
	/*
	 * A conditional branch not taken, or taken inside its function
	 * without --all-branches (the common cases), writes nothing.
	 */
	if (b->pend.kind == WK_COND && (ip == b->pend.fall ||
	    (!(b->pend.leaves & WL_LEAVES) && !b->r->o->all_branches)))
		b->pend.kind = WK_NONE;
	else if (b->pend.kind != WK_NONE)
		dec_resolve(b, ip, 0);
}

static inline void dec_loop_reset(struct dec_buf *b);

/*
 * A block of exactly walk @w, its branch last (cfg_run): what dec_block
 * does with such a block, without looking the walk up again.
 */
/* inlined where cfg_run (inlined here too) calls it, once per walk */
static inline __attribute__((always_inline)) void
dec_walk(void *arg, const struct walk *w)
{
	struct dec_buf *b = arg;
	struct dec_run *r = b->r;
	uint32_t k;

	b->walks++;	/* counted into st by the caller, with icount;
			 * its branch takes trace: dec_loop_reset there */
	if (b->pend.kind != WK_NONE)
		dec_enter(b, w->ip);
	if (w->ntr > 0) {
		const struct walk_tr *tr = walk_tr_array(r->wc) + w->tr;

		for (k = 0; k < w->ntr; k++)
			dec_transition(b, &tr[k], b->icount + tr[k].idx);
	}
	/*
	 * A conditional branch inside its function without --all-branches
	 * writes nothing wherever it goes (dec_enter, dec_resolve): pending,
	 * it would be dropped unseen, so it is not made pending.
	 */
	if (w->term != WK_COND || (w->leaves & WL_LEAVES) || b->all)
		dec_set_pend(b, w->term, w->term_ip, w->term_size, w->leaves,
		    b->icount + w->len - 1);
	b->icount += w->len;
	b->last_ip = w->term_ip;
}

/*
 * @walks walks each ending in a conditional branch that stays in its
 * function, without transitions, after such a walk (cfg_run's paths):
 * what dec_walk does with each, at once (nothing is pending, and they
 * make nothing pending without --all-branches).
 */
static inline __attribute__((always_inline)) void
dec_jump(void *arg, uint32_t walks, uint64_t insns, uint64_t last_ip)
{
	struct dec_buf *b = arg;

	b->walks += walks;
	b->icount += insns;
	b->last_ip = last_ip;
}

static int
dec_block(struct dec_buf *b, const struct pt_block *blk)
{
	struct dec_run *r = b->r;
	const struct walk *w;
	uint32_t rem = blk->ninsn, base = 0, k;

	dec_enter(b, blk->ip);
	w = walk_get(r->wc, blk->ip, blk->isid, blk->mode);
	if (w == NULL)
		return -MT_E_NOMEM;
	for (;;) {
		for (k = 0; k < w->ntr; k++) {
			const struct walk_tr *t = walk_tr_at(r->wc, w->tr + k);

			if (t->idx >= rem)
				break;
			dec_transition(b, t, dec_time(b, base + t->idx));
		}
		if (rem < w->len)
			break;
		if (rem == w->len) {
			if (w->term == WK_NONE)
				break;
			if (w->term_ip != blk->end_ip) {
				r->st->walk_mismatch++;
				break;
			}
			dec_set_pend(b, w->term, w->term_ip, w->term_size,
			    w->leaves, dec_time(b, base + rem - 1));
			break;
		}
		if (w->term == WK_NONE && w->cont != 0) {
			uint64_t cont = w->cont;

			rem -= w->len;
			base += w->len;
			w = walk_get(r->wc, cont, blk->isid, blk->mode);
			if (w == NULL)
				return -MT_E_NOMEM;
			continue;
		}
		if (blk->truncated && rem == w->len + 1 && w->term == WK_NONE)
			dec_truncated(b, blk, dec_time(b, base + rem - 1));
		else
			r->st->walk_mismatch++;
		break;
	}
	b->icount += blk->ninsn;
	b->last_ip = blk->end_ip;
	return 0;
}

static const char *
dec_disable_reason(const struct dec_buf *b)
{
	if (b->pend.kind == WK_SYSCALL)
		return "syscall";
	if (b->r->s->has_ptcfg && b->r->s->ptcfg.nfilters > 0)
		return "filter";
	return "other";
}

/*
 * The probed instruction at @at (where the trap before this step was)
 * is a ret or an indirect call or jmp, stepped in the slot at @slot: its
 * TIP is consumed in the slot, so the decoder gets, for this step, an
 * image with its bytes there (xol.h).  Returns 1 if so, 0 if not (or the
 * view could not be made: the NOPs stay), CFG_ABORT on the cached
 * decoder, which reads the image set's own NOPs (libipt decodes the
 * buffer then).
 */
static int
dec_xol_branch(struct dec_buf *b, uint64_t at, uint64_t slot)
{
	struct pt_image *img;
	struct ild_insn in;
	uint8_t raw[16];

	if (image_set_insn_at(b->r->is, b->pid, at, raw, &in) < 0 || in.rel ||
	    (in.cls != ILD_RET && in.cls != ILD_CALL && in.cls != ILD_JMP))
		return 0;
	if (b->cfg != NULL)
		return CFG_ABORT;
	if (b->xv == NULL && xol_view_new(&b->xv) < 0)
		return 0;
	img = xol_view_image(b->xv, b->r->is, b->img, b->pid, slot, raw,
	    in.len);
	if (img == NULL || pt_blk_set_image(b->dec, img) < 0)
		return 0;
	b->xol_img = 1;
	return 1;
}

/*
 * Tracing resumes in a [uprobes] slot (@ev, at time @t): a uprobe's trap
 * (the disable just written, at the probed instruction) is done and the
 * kernel single-steps a copy of that instruction out of line, in a page
 * whose bytes no snapshot has (not even the live process's: /proc/PID/mem
 * refuses it).  Written as the thread resuming at the probed instruction
 * and leaving traced code at once, reason `uprobe`; the slot's NOPs
 * (image.c) and the disable that ends the single step write nothing, and
 * the next enable, after the probed instruction, ends the gap.  A probed
 * ret or indirect branch is decoded in its slot (dec_xol_branch) and
 * written at its end (dec_probe_branch).  Returns 0 or CFG_ABORT.
 */
static int
dec_xol(struct dec_buf *b, const struct pt_event *ev, uint64_t t)
{
	uint64_t ip = b->last_ip, at = b->gap_at;
	int rc;

	b->pend.kind = WK_NONE;
	b->gap_at = 0;
	if (b->xol)
		return 0;	/* (a PSB+ restating the enable) */
	b->xol = 1;
	if (ip == 0 || image_set_in_xol(b->r->is, b->pid, ip))
		ip = ev->variant.enabled.ip;
	/*
	 * The trap that started this step was at the probed instruction;
	 * without it (the trace starts in the slot) it is not known.
	 */
	rc = at != 0 ? dec_xol_branch(b, at, ev->variant.enabled.ip) : 0;
	if (rc == CFG_ABORT)
		return rc;
	if (!ev->status_update)
		dec_emit(b, MT_EV_ENABLE, t, ip, 0);
	b->last_ip = ip;
	/*
	 * The probed branch leaves the slot for its target, where tracing
	 * resumes: written there as the branch from the probe
	 * (dec_probe_branch), the thread never leaving traced code.
	 */
	if (rc == 1) {
		b->xol_br = at;
		return 0;
	}
	dec_emit_str(b, MT_EV_DISABLE, t, ip, 0, "uprobe");
	return 0;
}

/*
 * Tracing resumes at @to (at time @t) after a trap at b->gap_at, or
 * after the slot of the probed branch b->xol_br.  A probed call, jmp or
 * jcc is not stepped in a slot but emulated by the kernel
 * (branch_emulate_op, arch/x86/kernel/uprobes.c), so tracing resumes at
 * its target; a ret or indirect branch was stepped in its slot (dec_xol)
 * and resumes at its target.  Either way the probed branch ran: written
 * as the thread resuming at the probe and branching from there to @to.
 * Returns 1 if so, else 0 (not a probe, or @to not where it goes).
 */
static int
dec_probe_branch(struct dec_buf *b, uint64_t to, uint64_t t)
{
	uint64_t x = b->xol_br ? b->xol_br : b->gap_at, len, target;
	struct ild_insn in;
	uint8_t raw[16];
	int cls, stepped = b->xol_br != 0;

	dec_xol_end(b);
	b->gap_at = 0;
	if (x == 0 || to == x)
		return 0;
	if (stepped) {
		/* dec_xol_branch read it: a ret or indirect branch */
		if (image_set_insn_at(b->r->is, b->pid, x, raw, &in) < 0)
			return 0;
		cls = in.cls;
		len = in.len;
		target = 0;
	} else if (image_set_probe(b->r->is, b->pid, x, &cls, &len,
	    &target) < 0) {
		return 0;
	}
	if (!stepped && (target != to || (cls != WK_CALL &&
	    cls != WK_JMP && cls != WK_COND)))
		return 0;
	if (!stepped)
		dec_emit(b, MT_EV_ENABLE, t, x, 0);
	dec_set_pend(b, cls, x, len, cls == WK_COND ? walk_leaves(b->r->wc,
	    x, to) : WL_INSIDE, t);
	dec_resolve(b, to, 0);
	b->xol = 0;
	b->last_ip = to;
	return 1;
}

/*
 * The status of dec_stretch for an error of dec_switch (-MT_E_*): the
 * output or memory.
 */
static int
dec_switch_status(int rc)
{
	return rc == -MT_E_IO ? DEC_IOERR : -pte_nomem;
}

/* Returns 0 or dec_switch's error. */
static int
dec_event(struct dec_buf *b, const struct pt_event *ev)
{
	uint64_t t, ip;
	const char *why;
	int rc, aborted;

	b->r->st->ipt_events++;
	if (b->r->perf_clock && ev->has_tsc) {
		t = dec_tsc_ns(&b->r->s->timeconv, ev->tsc);
		if (t > b->now)
			b->now = t;
		/*
		 * Code replaced at this time (a JIT's, epochs.h): the
		 * qemu backend writes a PSB+ where a thread first runs the
		 * new code, whose TSC is the only exact time before it.
		 */
		if (b->now >= b->img_next && b->dec != NULL &&
		    dec_set_image(b) < 0)
			return -MT_E_NOMEM;
		/*
		 * An event belongs to the thread running at its time: the
		 * enable that starts a thread's run on this CPU comes
		 * before the run's first block.
		 */
		if (b->cpu != NULL) {
			rc = dec_switch(b);
			if (rc < 0)
				return rc;
		}
	}
	t = dec_time(b, 0);
	aborted = b->tx_abort;
	b->tx_abort = 0;
	switch (ev->type) {
	case ptev_enabled:
		if (image_set_in_xol(b->r->is, b->pid,
		    ev->variant.enabled.ip)) {
			if (dec_xol(b, ev, t) == CFG_ABORT)
				return CFG_ABORT;
			break;
		}
		if ((b->gap_at != 0 || b->xol_br != 0) &&
		    dec_probe_branch(b, ev->variant.enabled.ip, t))
			break;
		b->xol = 0;
		if (b->pend.kind != WK_NONE)
			dec_resolve(b, ev->variant.enabled.ip, 0);
		if (!ev->status_update)
			dec_emit(b, MT_EV_ENABLE, t, ev->variant.enabled.ip, 0);
		b->last_ip = ev->variant.enabled.ip;
		break;
	case ptev_disabled:
		if (b->xol)
			break;	/* the slot's single step ends: dec_xol() */
		ip = ev->ip_suppressed ? 0 : ev->variant.disabled.ip;
		why = dec_disable_reason(b);
		if (b->pend.kind != WK_NONE)
			dec_resolve(b, ip, 1);
		dec_triggers_before_gap(b, t, b->last_ip);
		dec_emit_str(b, MT_EV_DISABLE, t, b->last_ip, 0, why);
		break;
	case ptev_async_disabled:
		if (b->xol)
			break;	/* the slot's single step ends: dec_xol() */
		if (b->pend.kind != WK_NONE)
			dec_resolve(b, ev->variant.async_disabled.at, 0);
		dec_triggers_before_gap(b, t, ev->variant.async_disabled.at);
		dec_emit_str(b, MT_EV_DISABLE, t, ev->variant.async_disabled.at,
		    0, "async");
		b->last_ip = ev->variant.async_disabled.at;
		b->gap_at = b->last_ip;
		break;
	case ptev_async_branch:
		if (b->pend.kind != WK_NONE)
			dec_resolve(b, ev->variant.async_branch.from, 0);
		ip = ev->ip_suppressed ? 0 : ev->variant.async_branch.to;
		if (aborted) {
			/*
			 * The FUP + TIP after MODE.TSX(abort): the abort
			 * branches to the handler XBEGIN named, like a jump.
			 */
			dec_set_pend(b, WK_JMP, ev->variant.async_branch.from,
			    0, 2, t);
			dec_resolve(b, ip, 0);
		} else {
			dec_emit(b, MT_EV_IRQ, t,
			    ev->variant.async_branch.from, ip);
		}
		b->last_ip = ip;
		break;
	case ptev_overflow:
		b->pend.kind = WK_NONE;
		b->xol = 0;
		dec_xol_end(b);
		b->gap_at = 0;
		b->r->st->overflows++;
		ip = ev->ip_suppressed ? 0 : ev->variant.overflow.ip;
		dec_emit(b, MT_EV_OVERFLOW, t, ip, 0);
		if (ip)
			b->last_ip = ip;
		break;
	case ptev_tsx:
		/* PSB+ restates the mode: not a begin, commit or abort. */
		if (ev->status_update)
			break;
		ip = ev->ip_suppressed ? 0 : ev->variant.tsx.ip;
		if (b->pend.kind != WK_NONE && ip)
			dec_resolve(b, ip, 0);
		dec_emit_str(b, MT_EV_TX, t, ip, 0, ev->variant.tsx.aborted ?
		    "abort" : ev->variant.tsx.speculative ? "begin" :
		    "commit");
		b->tx_abort = ev->variant.tsx.aborted;
		if (ip)
			b->last_ip = ip;
		break;
	default:
		/* Paging, exec mode, VMCS, power, timing: no record. */
		break;
	}
	return 0;
}

/* Time after a block or a sync, from libipt's timing model. */
void
dec_clock(struct dec_buf *b)
{
	uint64_t tsc, t;
	uint32_t lm, lc;

	if ((b->cfg != NULL ? cfg_time(b->cfg, &tsc, &lm, &lc) :
	    pt_blk_time(b->dec, &tsc, &lm, &lc)) < 0)
		return;
	/* Most blocks end at the same time as the one before. */
	if (b->clk_ok && tsc == b->clk_tsc)
		return;
	b->clk_tsc = tsc;
	b->clk_ok = 1;
	t = dec_tsc_ns(&b->r->s->timeconv, tsc);
	if (t > b->now)
		b->now = t;
	/* A library unloaded and another mapped there (epochs.h). */
	if (b->now >= b->img_next)
		(void)dec_set_image(b);
}

void
dec_error(struct dec_buf *b, int st)
{
	uint64_t off = 0;
	int code = pt_errcode(st);

	dec_offset(b, &off);
	b->r->st->errors++;
	if (code >= 0 && code < DECODE_NERR)
		b->r->st->err_by_code[code]++;
	b->pend.kind = WK_NONE;
	dec_emit_str(b, MT_EV_ERROR, dec_time(b, 0), b->last_ip, off,
	    st == DEC_LOOP ? "never-ending loop" : pt_errstr(code));
}

/*
 * The trace behind the decoder is not read again (a resync that goes
 * back maps it again from the page cache): in a mapped snapshot
 * (mt_snap_map_fd) its pages more than DEC_DROP_BYTES behind offset @off
 * are unmapped, from where this decoder began, a step of at least
 * DEC_DROP_BYTES at a time, so that the peak RSS holds the trace ahead
 * of the decoder, not all it read (bench/RESULTS.md, session 10).  The
 * slow path looks at each block's offset; the cached decoder's fast path
 * (cfg_run, which returns at events and PSB+) every DEC_DROP_EVERY
 * returns.
 */
#define DEC_DROP_BYTES	(64u << 10)
#define DEC_DROP_EVERY	64u

static void
dec_drop_pages(struct dec_buf *b, uint64_t off)
{
	const uint8_t *p = b->aux->data;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uint64_t end;

	if (b->drop_next == 0 || off > b->aux->len) {
		b->drop_from = off;	/* where this decoder began */
	} else {
		end = off - DEC_DROP_BYTES;
		end = (((uintptr_t)p + end) & ~(pg - 1)) - (uintptr_t)p;
		mt_snap_drop(b->r->s, p + b->drop_from, end - b->drop_from);
		b->drop_from = end;
	}
	b->drop_next = b->drop_from + 2 * DEC_DROP_BYTES;
}

static inline void
dec_drop(struct dec_buf *b, uint64_t off)
{
	if (off >= b->drop_next)
		dec_drop_pages(b, off);
}

/* Trace was taken (a branch that needs it, an event): start over. */
static inline void
dec_loop_reset(struct dec_buf *b)
{
	b->nt_insns = 0;
	b->nt_len = 0;
	b->nt_pow = 0;
}

/*
 * Block @blk was decoded: does the decoder run in a circle?  Code whose
 * branches are all direct jumps and calls takes no trace, so libipt
 * decodes it on for ever once the trace has nothing more to say there (a
 * `jmp .` at the end of a buffer; hostile code bytes).  Such code is
 * deterministic: an instruction met twice since the last branch or event
 * that took trace is a loop that never ends.  Block starts are compared
 * by Brent's cycle search; a loop too long for it to see soon ends at
 * DEC_LOOP_INSNS instructions, far more than code without a conditional
 * branch, a return or an indirect branch holds; a block the walk did not
 * explain, at DEC_LOOP_STUCK instructions without a packet read.  perf's
 * decoder stops such code too ("Never-ending loop", intel-pt-decoder.c).
 */
static int
dec_loop(struct dec_buf *b, const struct pt_block *blk, uint64_t mismatch)
{
	uint64_t off = 0;

	/*
	 * Whatever the walk says: no packet read for DEC_LOOP_STUCK
	 * instructions (a TNT packet holds 47 branches at the most).
	 */
	dec_offset(b, &off);
	if (off != b->nt_off) {
		b->nt_off = off;
		b->nt_off_insns = 0;
		dec_drop(b, off);
	} else if ((b->nt_off_insns += blk->ninsn) > DEC_LOOP_STUCK) {
		return 1;
	}
	/* (A block the walk did not explain may have taken trace.) */
	if (b->pend.kind != WK_NONE || blk->truncated ||
	    b->r->st->walk_mismatch != mismatch) {
		dec_loop_reset(b);
		return 0;
	}
	b->nt_insns += blk->ninsn;
	if (b->nt_pow != 0 && blk->ip == b->nt_ip)
		return 1;
	if (b->nt_insns > DEC_LOOP_INSNS)
		return 1;
	if (++b->nt_len > b->nt_pow) {
		b->nt_ip = blk->ip;
		b->nt_pow = b->nt_pow ? 2 * b->nt_pow : 1;
		b->nt_len = 0;
	}
	return 0;
}

/* A progress line: the buffers before this one and our offset in it. */
static void
dec_progress(struct dec_buf *b)
{
	uint64_t off = 0;

	dec_offset(b, &off);
	decode_progress_show(b->r->prog, b->r->prog->done + off,
	    b->r->st->events);
}

/* The fields of an event that identify it in a linear decode. */
void
dec_sig_of(struct dec_buf *b, const struct pt_event *ev, struct dec_sig *sig)
{
	memset(sig, 0, sizeof(*sig));
	dec_offset(b, &sig->off);
	sig->type = (uint32_t)ev->type;
	sig->ip = ev->variant.enabled.ip;	/* the first field of any */
	sig->has_tsc = ev->has_tsc;
	sig->tsc = ev->has_tsc ? ev->tsc : 0;
}

/*
 * Is @ev the first event a later segment's decoder reports after its
 * sync?  Then the two decoders are at the same packet and IP, and the
 * rest of this segment is the later one's (parallel.h).
 */
static void
dec_join_check(struct dec_buf *b, const struct pt_event *ev)
{
	const struct dec_unit *u = b->u;
	struct dec_sig sig;

	dec_sig_of(b, ev, &sig);
	while (b->tgt < u->nnext && sig.off > u->next[b->tgt].off)
		b->tgt++;	/* passed it (a resync jumped over) */
	if (b->tgt < u->nnext && dec_sig_equal(&sig, &u->next[b->tgt])) {
		b->in_join = 1;
		b->res->joined = (int64_t)b->tgt;
	}
}

/* Is @ev the event this segment's output is kept after (u->self)? */
static void
dec_self_check(struct dec_buf *b, const struct pt_event *ev)
{
	struct dec_sig sig;

	dec_sig_of(b, ev, &sig);
	if (dec_sig_equal(&sig, b->u->self))
		b->at_self = 1;
}

/*
 * The first block of a segment (its output is kept from here), or the
 * first block after the join (this segment stops here, once the branch
 * pending has gone to the block).  Counters exclude the block.
 */
static int
dec_seam(struct dec_buf *b, const struct pt_block *blk)
{
	struct dec_unit_res *res = b->res;

	if (b->u->seg > 0 && !res->marked) {
		/*
		 * After u->self the branch pending goes to this block: the
		 * segment before wrote it when it joined here.
		 */
		if (b->pend.kind != WK_NONE)
			dec_resolve(b, blk->ip, 0);
		if (mt_evw_flush(b->r->w) < 0)
			return DEC_IOERR;
		res->mark = dec_fd_pos(b->u->fd);
		res->marked = 1;
		res->mark_st = *b->r->st;
		res->mark_st.instructions -= blk->ninsn;
		res->mark_st.blocks--;
	}
	if (b->in_join && (blk->ip != b->u->next[b->tgt].blk_ip ||
	    b->join_off != b->u->next[b->tgt].blk_off)) {
		/* Not where the later decoder starts: look further. */
		b->in_join = 0;
		b->res->joined = -1;
		b->tgt++;
	}
	if (b->in_join) {
		if (b->pend.kind != WK_NONE)
			dec_resolve(b, blk->ip, 0);
		res->stop_icount = b->icount;
		b->r->st->instructions -= blk->ninsn;
		b->r->st->blocks--;
		return DEC_JOINED;
	}
	return 0;
}

/* The documented loop over one synced stretch; returns libipt's status. */
int
dec_stretch(struct dec_buf *b, int st)
{
	struct pt_block blk;
	struct pt_event ev;
	uint64_t mismatch, off = 0;
	int rc, perf = b->r->perf_clock;

	if (b->drop_next == 0) {
		dec_offset(b, &off);
		dec_drop(b, off);	/* where this decoder begins */
	}
	for (;;) {
		while (st & pts_event_pending) {
			st = dec_ev(b, &ev);
			if (st < 0)
				return st;
			if (b->u != NULL && !b->in_join && b->tgt < b->u->nnext)
				dec_join_check(b, &ev);
			if (b->u != NULL && b->u->self != NULL && !b->at_self)
				dec_self_check(b, &ev);
			rc = dec_event(b, &ev);
			if (rc == CFG_ABORT)
				return rc;	/* a probed branch's slot */
			if (rc < 0)
				return dec_switch_status(rc);
			dec_loop_reset(b);
		}
		/*
		 * Past pts_eos libipt may still decode linear code until it
		 * needs trace; the next call then says -pte_eos.
		 */
		/*
		 * The cached decoder's fast path, where nothing but the
		 * blocks happens: relative time, not at a -j seam.
		 */
		if (b->cfg != NULL && !perf && !b->xol && (b->u == NULL ||
		    (!b->in_join && (b->u->seg == 0 || b->res->marked)))) {
			uint64_t ic = b->icount, nw = b->walks;

			st = cfg_run(b->cfg, dec_walk, dec_jump, b);
			b->r->st->blocks += b->walks - nw;
			b->r->st->instructions += b->icount - ic;
			if (b->walks != nw)
				dec_loop_reset(b);
			if (st != CFG_SLOW) {
				if (++b->drop_n == DEC_DROP_EVERY) {
					b->drop_n = 0;
					dec_offset(b, &off);
					dec_drop(b, off);
				}
				if (b->r->prog != NULL &&
				    mt_progress_due(&b->r->prog->p))
					dec_progress(b);
				if (st < 0)
					return st;
				continue;
			}
		}
		if (b->in_join)
			dec_offset(b, &b->join_off);
		st = dec_next(b, &blk);
		b->r->st->blocks++;
		if (blk.ninsn > 0) {
			b->r->st->instructions += blk.ninsn;
			if (perf) {
				dec_clock(b);
				if (b->cpu != NULL) {
					rc = dec_switch(b);
					if (rc < 0)
						return dec_switch_status(rc);
				}
				if (b->trigi < b->r->s->ntriggers)
					dec_triggers(b, b->now);
			}
			if (b->u != NULL && (b->in_join ||
			    (b->u->seg > 0 && !b->res->marked &&
			    (b->u->self == NULL || b->at_self)))) {
				rc = dec_seam(b, &blk);
				if (rc != 0)
					return rc;
			}
			mismatch = b->r->st->walk_mismatch;
			if (!b->xol && dec_block(b, &blk) < 0)
				return -pte_nomem;
			if (st >= 0 && !b->xol && dec_loop(b, &blk, mismatch))
				return DEC_LOOP;
		}
		if (b->r->prog != NULL && mt_progress_due(&b->r->prog->p))
			dec_progress(b);
		if (st < 0)
			return st;
	}
}
