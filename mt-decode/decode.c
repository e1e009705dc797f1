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

/* A branch whose destination is not known yet. */
struct dec_pend {
	uint8_t kind;		/* enum walk_kind; WK_NONE: nothing pending */
	uint8_t leaves;		/* WK_COND: as walk.leaves */
	uint64_t from;		/* the branch instruction */
	uint64_t fall;		/* the instruction after it */
	uint64_t time;		/* its time */
};

/* State shared by all buffers of one run. */
struct dec_run {
	const struct decode_opts *o;
	const struct mt_snap *s;
	struct mt_evw *w;
	struct decode_stats *st;
	struct image_set *is;
	struct walk_cache *wc;
	struct thr_set ts;
	int perf_clock;		/* 1: times are perf ns from TSC */
	uint32_t *seen;		/* tids whose thread record was written */
	size_t nseen;
	/* Parallel decode (parallel.c): a worker's own copies of the
	 * images; NULL: image_set_image_at(). */
	struct pt_image *(*image)(void *arg, uint32_t pid, uint64_t time,
	    uint64_t *next);
	void *image_arg;
	struct decode_progress *prog;	/* NULL: none (and in workers) */
	int cfg;		/* the buffer goes through cfg.h: 1 on
				 * libipt's query decoder, 2 on pq.h */
	int cfg_full;		/* cfg.h gave up: its cache was full */
	int cfg_pq;		/* pq.h refused the trace */
};

/*
 * The image of @pid at @time for this run (a worker's copy under -j);
 * *@next: when another image takes over (image_set_image_at()).
 */
static struct pt_image *
dec_image(const struct dec_run *r, uint32_t pid, uint64_t time,
    uint64_t *next)
{
	return r->image ? r->image(r->image_arg, pid, time, next) :
	    image_set_image_at(r->is, pid, time, next);
}

struct dec_buf;
static inline int dec_next(struct dec_buf *b, struct pt_block *blk);
static inline int dec_ev(struct dec_buf *b, struct pt_event *ev);
static inline void dec_offset(const struct dec_buf *b, uint64_t *off);

/* State of one buffer's decode. */
struct dec_buf {
	struct dec_run *r;
	const struct mt_snap_aux *aux;
	struct pt_block_decoder *dec;	/* libipt's, or NULL with cfg */
	struct cfg_dec *cfg;	/* the cached decoder (cfg.h), or NULL */
	const struct thr_cpu *cpu;	/* per-CPU switch list, or NULL */
	size_t swi;		/* next switch in cpu */
	uint32_t pid, tid;	/* the thread running now */
	uint64_t icount;	/* instructions decoded (relative time) */
	uint64_t walks;		/* blocks of the fast path (dec_walk) */
	uint64_t now;		/* perf ns of the current position */
	uint64_t img_next;	/* now from which the image changes */
	uint64_t last_t;	/* time of the last record written */
	uint64_t last_ip;	/* last instruction decoded */
	uint64_t clk_tsc;	/* TSC dec_clock last converted, if clk_ok */
	int clk_ok;
	size_t trigi;		/* next trigger (index into snapshot) */
	struct dec_pend pend;
	int tx_abort;		/* the last event was a TSX abort */
	int xol;		/* in a [uprobes] slot: the probed
				 * instruction runs out of line (no record) */
	uint64_t xol_br;	/* in the slot of this probed ret or
				 * indirect branch (written at its end) */
	struct xol_view *xv;	/* its bytes in the slot, or NULL */
	int xol_img;		/* the decoder has xv's image, not img */
	struct pt_image *img;	/* the image dec_set_image gave it */
	uint64_t gap_at;	/* the last event: a trap (FUP + TIP.PGD)
				 * here, maybe a probe's (dec_probe_branch) */
	struct mt_ev ev;	/* record being written */
	/* A segment of the buffer (-j N, parallel.h); NULL: all of it. */
	const struct dec_unit *u;
	struct dec_unit_res *res;
	size_t tgt;		/* next later segment whose start we look for */
	int in_join;		/* past its first event: stop at the next block */
	int at_self;		/* u->self reported: mark at the next block */
	uint64_t join_off;	/* in_join: decoder offset before the block */
	/* Per-CPU buffers with switches (runs.h): the runs of this buffer,
	 * written to runs->fd; NULL: thread records once per run of mt. */
	struct runs *runs;
	struct run_rec *run;	/* the run being written */
	uint64_t run_last;	/* its last record's time (or its start) */
	int run_ev;		/* it has an event */
	/* Decoded since the last branch or event that took trace (dec_loop) */
	uint64_t nt_insns;	/* instructions */
	uint64_t nt_ip;		/* a block start to meet again (Brent) */
	uint32_t nt_len, nt_pow;	/* blocks since nt_ip; next power of 2 */
	uint64_t nt_off;	/* decoder offset at the last block */
	uint64_t nt_off_insns;	/* instructions decoded since it moved */
};

/* Give @b's decoder the image of its process at its time. */
static int
dec_set_image(struct dec_buf *b)
{
	struct pt_image *img = dec_image(b->r, b->pid, b->now, &b->img_next);

	if (img == NULL || pt_blk_set_image(b->dec, img) < 0)
		return -MT_E_IPT;
	b->img = img;
	b->xol_img = 0;
	return 0;
}

/* Out of a probed branch's slot: the decoder's own image again. */
static void
dec_xol_end(struct dec_buf *b)
{
	b->xol_br = 0;
	if (b->xol_img) {
		b->xol_img = 0;
		(void)pt_blk_set_image(b->dec, b->img);
	}
}

/*
 * The block decoder's calls: libipt's, or the cached decoder's (cfg.h),
 * which gives the same blocks and events or CFG_ABORT.
 */
static inline int
dec_next(struct dec_buf *b, struct pt_block *blk)
{
	return b->cfg ? cfg_next(b->cfg, blk) :
	    pt_blk_next(b->dec, blk, sizeof(*blk));
}

static inline int
dec_ev(struct dec_buf *b, struct pt_event *ev)
{
	return b->cfg ? cfg_event(b->cfg, ev) :
	    pt_blk_event(b->dec, ev, sizeof(*ev));
}

static inline void
dec_offset(const struct dec_buf *b, uint64_t *off)
{
	if (b->cfg)
		cfg_get_offset(b->cfg, off);
	else
		pt_blk_get_offset(b->dec, off);
}

/* dec_stretch: this segment reached the start of a later one. */
#define DEC_JOINED (-1000)
/* dec_stretch: the output could not be written (errno set). */
#define DEC_IOERR (-1001)
/* dec_stretch: code that needs no trace runs in a circle (dec_loop). */
#define DEC_LOOP (-1002)
/* Instructions decoded without taking trace that make a loop certain. */
#define DEC_LOOP_INSNS (1u << 20)
/* Instructions decoded while the trace offset stays that make one so. */
#define DEC_LOOP_STUCK (1u << 24)

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

static uint64_t
dec_tsc_ns(const struct mt_snap_timeconv *tc, uint64_t tsc)
{
	return mt_snap_tsc_to_ns(tc, tsc);
}

static void
dec_emit(struct dec_buf *b, enum mt_ev_kind k, uint64_t time, uint64_t a0,
    uint64_t a1)
{
	b->ev.kind = k;
	b->ev.time = time;
	b->last_t = time;
	if (b->run != NULL) {
		if (!b->run_ev && time < b->run->key)
			b->run->key = time;	/* the first run of a buffer */
		b->run_ev = 1;
		if (time > b->run_last)
			b->run_last = time;
	}
	b->ev.tid = b->tid;
	b->ev.addr[0] = a0;
	b->ev.addr[1] = a1;
	mt_evw_write(b->r->w, &b->ev);
	b->r->st->events++;
}

static void
dec_emit_str(struct dec_buf *b, enum mt_ev_kind k, uint64_t time,
    uint64_t ip, uint64_t num, const char *str)
{
	b->ev.num = num;
	b->ev.str[0] = str;
	dec_emit(b, k, time, ip, 0);
	b->ev.str[0] = NULL;
	b->ev.num = 0;
}

/* Write the thread record of the current thread. */
static void
dec_thread_rec(struct dec_buf *b)
{
	struct mt_ev ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = MT_EV_THREAD;
	ev.pid = b->pid;
	ev.tid = b->tid;
	ev.str[0] = thr_comm(&b->r->ts, b->tid);
	mt_evw_write(b->r->w, &ev);
}

/* Write the thread record of the current thread once per run. */
static int
dec_thread(struct dec_buf *b)
{
	struct dec_run *r = b->r;
	size_t i;

	for (i = 0; i < r->nseen; i++)
		if (r->seen[i] == b->tid)
			return 0;
	if ((r->nseen & (r->nseen - 1)) == 0) {
		uint32_t *n = realloc(r->seen,
		    (r->nseen ? 2 * r->nseen : 8) * sizeof(*n));

		if (n == NULL)
			return -MT_E_NOMEM;
		r->seen = n;
	}
	r->seen[r->nseen++] = b->tid;
	dec_thread_rec(b);
	return 0;
}

/* Where the next byte of this buffer's stream goes (written so far). */
static int
dec_run_pos(struct dec_buf *b, uint64_t *pos)
{
	off_t o;

	if (mt_evw_flush(b->r->w) < 0)
		return -MT_E_IO;
	o = lseek(b->runs->fd, 0, SEEK_CUR);
	if (o < 0)
		return -MT_E_IO;
	*pos = (uint64_t)o;
	return 0;
}

/* Start a run of the current thread that began at @start (runs.h). */
static int
dec_run_open(struct dec_buf *b, uint64_t start)
{
	uint64_t head;
	int rc = dec_run_pos(b, &head);

	if (rc < 0)
		return rc;
	b->run = runs_add(b->runs, start, b->tid);
	if (b->run == NULL)
		return -MT_E_NOMEM;
	b->run->head = head;
	b->run_ev = 0;
	b->run_last = start == UINT64_MAX ? 0 : start;
	dec_thread_rec(b);
	return dec_run_pos(b, &b->run->body);
}

/* End the current run: its thread's `end` at @t (kept for its last run). */
static int
dec_run_close(struct dec_buf *b, uint64_t t)
{
	struct run_rec *run = b->run;
	int rc = dec_run_pos(b, &run->tail);

	if (rc < 0)
		return rc;
	b->run_ev = 1;		/* `end` does not move the start */
	dec_emit(b, MT_EV_END, t, 0, 0);
	b->run = NULL;
	return dec_run_pos(b, &run->stop);
}

/* The time of instruction @idx of the block that starts at icount. */
static inline uint64_t
dec_time(const struct dec_buf *b, uint64_t idx)
{
	return b->r->perf_clock ? b->now : b->icount + idx;
}

/*
 * Did the trigger @t fire on this buffer's CPU?  A thread is "current" on
 * a CPU from its switch-in to the next one there, also after it left
 * (switch-outs are not kept), so a hit could otherwise be written by two
 * buffers, one of them out of time order.
 */
static int
dec_trigger_here(const struct dec_buf *b, const struct mt_snap_trigger *t)
{
	uint32_t cpu;

	return !thr_on_cpu(&b->r->ts, t->tid, t->time, &cpu) ||
	    cpu == b->cpu->cpu;
}

/* Triggers of this thread that fired by now (perf clock only). */
static void
dec_triggers(struct dec_buf *b, uint64_t upto)
{
	const struct mt_snap *s = b->r->s;

	for (; b->trigi < s->ntriggers; b->trigi++) {
		const struct mt_snap_trigger *t = &s->triggers[b->trigi];

		/*
		 * A hit at the current time waits until time moves on:
		 * events that share its nanosecond (the call that reached
		 * the probe among them) come before it.
		 */
		if (t->time >= upto)
			return;
		if (t->tid != b->tid || (b->cpu != NULL &&
		    !dec_trigger_here(b, t)))
			continue;
		dec_emit_str(b, MT_EV_TRIGGER, t->time < b->last_t ?
		    b->last_t : t->time, t->ip, 0, t->what);
	}
}

/*
 * Before a gap that starts at @t with the thread at @ip (0: unknown): the
 * hits of this thread up to @t.  The probe that fired stopped the thread
 * there (the uprobe's trap, a software backend's stop for the snapshot),
 * so the hit belongs to the stack it reached, before the gap, not to the
 * gap's [untraced] frame.  The next hit, if it is this thread's at @ip and
 * not earlier, is the one that stopped it, recorded a little later (the
 * trap's handling): it takes the gap's time.
 */
static void
dec_triggers_before_gap(struct dec_buf *b, uint64_t t, uint64_t ip)
{
	const struct mt_snap *s = b->r->s;
	const struct mt_snap_trigger *h;

	if (!b->r->perf_clock || b->trigi >= s->ntriggers)
		return;
	if (t < UINT64_MAX)
		dec_triggers(b, t + 1);
	if (ip == 0 || b->trigi >= s->ntriggers)
		return;
	h = &s->triggers[b->trigi];
	if (h->tid == b->tid && h->ip == ip && h->time >= t &&
	    (b->cpu == NULL || dec_trigger_here(b, h))) {
		dec_emit_str(b, MT_EV_TRIGGER, t, h->ip, 0, h->what);
		b->trigi++;
	}
}

/* Follow the per-CPU switch list up to the current time. */
static int
dec_switch(struct dec_buf *b)
{
	const struct thr_cpu *c = b->cpu;
	int rc;

	if (c->nsw == 0 || b->swi >= c->nsw || c->sw[b->swi].time > b->now)
		return 0;
	while (b->swi < c->nsw && c->sw[b->swi].time <= b->now)
		b->swi++;
	if (c->sw[b->swi - 1].tid == b->tid)
		return 0;
	/* Hits of the thread switched out before the switch are its own. */
	if (b->trigi < b->r->s->ntriggers)
		dec_triggers(b, c->sw[b->swi - 1].time);
	if (b->run != NULL) {
		rc = dec_run_close(b, b->run_last);
		if (rc < 0)
			return rc;
	}
	b->tid = c->sw[b->swi - 1].tid;
	b->pid = c->sw[b->swi - 1].pid;
	rc = dec_set_image(b);
	if (rc < 0)
		return -MT_E_IPT;
	/* The branch pending belonged to the thread switched out. */
	b->pend.kind = WK_NONE;
	dec_xol_end(b);
	b->gap_at = 0;
	if (b->runs != NULL)
		return dec_run_open(b, c->sw[b->swi - 1].time);
	return dec_thread(b);
}

/*
 * An unconditional jump between two pieces of code of no known function,
 * or from a known function into such code: it could not be classified
 * (--stats).
 */
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
	dec_enter(b, w->ip);
	if (w->ntr > 0) {
		const struct walk_tr *tr = walk_tr_array(r->wc) + w->tr;

		for (k = 0; k < w->ntr; k++)
			dec_transition(b, &tr[k], b->icount + tr[k].idx);
	}
	dec_set_pend(b, w->term, w->term_ip, w->term_size, w->leaves,
	    b->icount + w->len - 1);
	b->icount += w->len;
	b->last_ip = w->term_ip;
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
static inline void
dec_clock(struct dec_buf *b)
{
	uint64_t tsc, t;
	uint32_t lm, lc;

	if (pt_blk_time(b->dec, &tsc, &lm, &lc) < 0)
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

static void
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
static void
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
static int
dec_stretch(struct dec_buf *b, int st)
{
	struct pt_block blk;
	struct pt_event ev;
	uint64_t mismatch;
	int rc, perf = b->r->perf_clock;

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

			st = cfg_run(b->cfg, dec_walk, b);
			b->r->st->blocks += b->walks - nw;
			b->r->st->instructions += b->icount - ic;
			if (b->walks != nw)
				dec_loop_reset(b);
			if (st != CFG_SLOW) {
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

static int
dec_config(const struct mt_snap *s, const struct mt_snap_aux *a,
    struct pt_config *cfg)
{
	const struct mt_snap_ptcfg *p = &s->ptcfg;
	uint64_t *ab[4][2];
	size_t i;

	pt_config_init(cfg);
	cfg->begin = a->data;
	cfg->end = a->data + a->len;
	if (s->has_host && strcmp(s->host.vendor, "GenuineIntel") == 0) {
		cfg->cpu.vendor = pcv_intel;
		cfg->cpu.family = s->host.family;
		cfg->cpu.model = s->host.model;
		cfg->cpu.stepping = s->host.stepping;
		/* Unknown CPUs (-pte_bad_cpu) get no workarounds. */
		(void)pt_cpu_errata(&cfg->errata, &cfg->cpu);
	}
	/*
	 * The timing parameters hold whatever the vendor: the software
	 * backend records its virtual clock's on any host (an AMD one too),
	 * and without them libipt ignores MTC and CYC.
	 */
	if (s->has_host) {
		cfg->nom_freq = (uint8_t)s->host.max_nonturbo_ratio;
		cfg->cpuid_0x15_eax = s->host.cpuid_15[0];
		cfg->cpuid_0x15_ebx = s->host.cpuid_15[1];
	}
	if (!s->has_ptcfg)
		return 0;
	cfg->mtc_freq = (uint8_t)MT_PT_CFG_MTC_PERIOD(p->config);
	ab[0][0] = &cfg->addr_filter.addr0_a;
	ab[0][1] = &cfg->addr_filter.addr0_b;
	ab[1][0] = &cfg->addr_filter.addr1_a;
	ab[1][1] = &cfg->addr_filter.addr1_b;
	ab[2][0] = &cfg->addr_filter.addr2_a;
	ab[2][1] = &cfg->addr_filter.addr2_b;
	ab[3][0] = &cfg->addr_filter.addr3_a;
	ab[3][1] = &cfg->addr_filter.addr3_b;
	for (i = 0; i < p->nfilters && i < 4; i++) {
		*ab[i][0] = p->filters[i].a;
		*ab[i][1] = p->filters[i].b;
		cfg->addr_filter.config.addr_cfg |=
		    (uint64_t)(p->filters[i].cfg & 0xf) << (4 * i);
	}
	return 0;
}

/*
 * Decode buffer @a, or with @u the segment of it @u describes (results in
 * @res): the segment starts at its PSB (seg > 0: no thread record, no
 * bytes before sync) and ends where it joins a later segment's decode,
 * or at the end of the buffer.
 */
static int
dec_buffer(struct dec_run *r, const struct mt_snap_aux *a,
    const struct dec_unit *u, struct dec_unit_res *res, struct runs *runs)
{
	struct dec_buf b;
	struct pt_config cfg;
	uint64_t off = 0, last_sync = 0, err_off = 0;
	int st, rc = 0, first = 1, later = u != NULL && u->seg > 0;

	memset(&b, 0, sizeof(b));
	b.r = r;
	b.aux = a;
	b.u = u;
	b.res = res;
	b.runs = runs;
	if (u != NULL && u->runs != NULL) {
		b.runs = u->runs;
		b.runs->fd = u->fd;
	}
	if (res != NULL) {
		memset(res, 0, sizeof(*res));
		res->joined = -1;
	}
	if (!later) {
		r->st->buffers++;
		r->st->pt_bytes += a->len;
	}
	if (a->tid != MT_SNAP_NONE) {
		b.tid = a->tid;
		b.pid = thr_pid(&r->ts, a->tid);
	} else if (a->cpu != MT_SNAP_NONE && r->perf_clock) {
		b.cpu = thr_cpu(&r->ts, a->cpu);
	}
	if (b.cpu != NULL && b.cpu->nsw > 0) {
		b.tid = b.cpu->sw[0].tid;
		b.pid = b.cpu->sw[0].pid;
	}
	dec_config(r->s, a, &cfg);
	if (r->cfg) {
		b.cfg = cfg_new(&cfg, r->is, b.pid, r->wc, r->cfg == 2);
		if (b.cfg == NULL)
			return -MT_E_NOMEM;
	} else {
		b.dec = pt_blk_alloc_decoder(&cfg);
		if (b.dec == NULL)
			return -MT_E_NOMEM;
		if (dec_set_image(&b) < 0) {
			rc = -MT_E_IPT;
			goto out;
		}
	}
	if (b.runs != NULL)
		rc = dec_run_open(&b, b.cpu != NULL && b.cpu->nsw > 0 ?
		    b.cpu->sw[0].time : UINT64_MAX);
	else if (!later)
		rc = dec_thread(&b);
	if (rc < 0)
		goto out;
	for (;;) {
		if (later && first) {
			/* parallel.c checked that it syncs */
			st = b.cfg ? cfg_sync_set(b.cfg, u->start) :
			    pt_blk_sync_set(b.dec, u->start);
			if (st == CFG_ABORT) {
				rc = CFG_ABORT;
				goto out;
			}
			if (st < 0) {
				rc = -MT_E_IPT;
				goto out;
			}
			off = u->start;
		} else {
			st = b.cfg ? cfg_sync_forward(b.cfg) :
			    pt_blk_sync_forward(b.dec);
			if (st == CFG_ABORT) {
				rc = CFG_ABORT;
				goto out;
			}
			if (st < 0) {
				if (first)
					r->st->bytes_before_sync += a->len;
				else if (err_off < a->len)
					r->st->bytes_skipped +=
					    a->len - err_off;
				break;
			}
			if (b.cfg)
				cfg_get_sync_offset(b.cfg, &off);
			else
				pt_blk_get_sync_offset(b.dec, &off);
			if (first)
				r->st->bytes_before_sync += off;
			else if (off > err_off)
				r->st->bytes_skipped += off - err_off;
			if (!first && off <= last_sync)
				break;
		}
		first = 0;
		last_sync = off;
		if (r->perf_clock)
			dec_clock(&b);
		st = dec_stretch(&b, st);
		if (st == -pte_eos)
			break;
		if (st == DEC_JOINED)
			goto out;	/* the later segment goes on */
		if (st == CFG_ABORT) {
			rc = CFG_ABORT;
			goto out;
		}
		if (st == -pte_nomem || st == DEC_IOERR) {
			rc = st == DEC_IOERR ? -MT_E_IO : -MT_E_NOMEM;
			goto out;
		}
		dec_error(&b, st);
		dec_offset(&b, &err_off);
		b.xol = 0;
		dec_xol_end(&b);
		b.gap_at = 0;
	}
	if (res != NULL)
		res->joined = -1;	/* decoded to the end of the buffer */
	if (r->perf_clock)
		dec_triggers(&b, UINT64_MAX);
	else
		for (; b.trigi < r->s->ntriggers; b.trigi++)
			if (r->s->triggers[b.trigi].tid == b.tid)
				dec_emit_str(&b, MT_EV_TRIGGER, dec_time(&b, 0),
				    r->s->triggers[b.trigi].ip, 0,
				    r->s->triggers[b.trigi].what);
	if (b.run != NULL)	/* (a trigger may be later than the trace) */
		rc = dec_run_close(&b, dec_time(&b, 0) > b.last_t ?
		    dec_time(&b, 0) : b.last_t);
	else
		dec_emit(&b, MT_EV_END, dec_time(&b, 0), 0, 0);
	if (r->prog != NULL)
		r->prog->done += a->len;
	if (res != NULL)
		res->stop_icount = b.icount;
out:
	pt_blk_free_decoder(b.dec);
	xol_view_free(b.xv);
	r->cfg_full = cfg_full(b.cfg);
	r->cfg_pq = cfg_pq_refused(b.cfg);
	cfg_free(b.cfg);
	return rc;
}

/* Smallest perf time in the trace: the first TSC of each buffer. */
static uint64_t
dec_time_base(const struct mt_snap *s)
{
	uint64_t best = UINT64_MAX;
	size_t i;

	for (i = 0; i < s->naux; i++) {
		struct pt_config cfg;
		struct pt_packet_decoder *pd;
		struct pt_packet pkt;
		int n;

		dec_config(s, &s->aux[i], &cfg);
		pd = pt_pkt_alloc_decoder(&cfg);
		if (pd == NULL)
			continue;
		if (pt_pkt_sync_forward(pd) >= 0) {
			for (n = 0; n < 4096; n++) {
				if (pt_pkt_next(pd, &pkt, sizeof(pkt)) < 0)
					break;
				if (pkt.type != ppt_tsc)
					continue;
				uint64_t t = dec_tsc_ns(&s->timeconv,
				    pkt.payload.tsc.tsc);
				if (t < best)
					best = t;
				break;
			}
		}
		pt_pkt_free_decoder(pd);
	}
	for (i = 0; i < s->ntriggers; i++)
		if (s->triggers[i].time < best)
			best = s->triggers[i].time;
	return best == UINT64_MAX ? 0 : best;
}

static void
dec_info(struct dec_run *r, const char *key, const char *value)
{
	struct mt_ev ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = MT_EV_INFO;
	ev.str[0] = key;
	ev.str[1] = value;
	mt_evw_write(r->w, &ev);
}

static int
dec_header(struct dec_run *r)
{
	static const char *const backends[] = { "intel_pt", "emulate", "raw",
	    "perf" };
	const struct mt_snap *s = r->s;
	struct mt_ev ev;
	char num[32], *cmd;
	size_t i, j;

	dec_info(r, "source", r->o->source ? r->o->source : "-");
	dec_info(r, "clock", r->perf_clock ? "perf" : "relative");
	snprintf(num, sizeof(num), "%llu", r->perf_clock ?
	    (unsigned long long)dec_time_base(s) : 0ull);
	dec_info(r, "time-base", num);
	if (s->has_ptcfg && s->ptcfg.backend < 4)
		dec_info(r, "backend", backends[s->ptcfg.backend]);
	dec_info(r, "branches", r->o->all_branches ? "all" : "calls");
	for (i = 0; i < s->nprocs; i++) {
		const struct mt_snap_process *p = &s->procs[i];

		cmd = malloc(p->cmdline_len + 1);
		if (cmd == NULL)
			return -MT_E_NOMEM;
		memcpy(cmd, p->cmdline, p->cmdline_len);
		cmd[p->cmdline_len] = '\0';
		for (j = 0; j < p->cmdline_len; j++)
			if (cmd[j] == '\0')
				cmd[j] = j + 1 == p->cmdline_len ? '\0' : ' ';
		memset(&ev, 0, sizeof(ev));
		ev.kind = MT_EV_PROC;
		ev.pid = p->pid;
		ev.str[0] = p->comm;
		ev.str[1] = cmd;
		mt_evw_write(r->w, &ev);
		free(cmd);
	}
	for (i = 0; i < image_set_nmods(r->is); i++) {
		const struct image_mod *m = image_set_mod(r->is, i);

		memset(&ev, 0, sizeof(ev));
		ev.kind = MT_EV_MOD;
		ev.pid = m->pid;
		ev.addr[0] = m->start;
		ev.addr[1] = m->end;
		ev.num = m->pgoff;
		ev.str[0] = m->buildid;
		ev.str[1] = m->path;
		/* mapped then (dlopen, JIT); no use against relative times */
		ev.time = r->perf_clock ? m->time : 0;
		mt_evw_write(r->w, &ev);
	}
	return 0;
}

/* Is a buffer per-CPU with context switches (decoded into runs)? */
static int
dec_has_switches(const struct dec_run *r)
{
	uint32_t pid, tid;
	size_t i;

	for (i = 0; i < r->s->naux; i++)
		if (!dec_static_tid(r, i, &pid, &tid))
			return 1;
	return 0;
}

static struct pt_image *
dec_view_image(void *arg, uint32_t pid, uint64_t time, uint64_t *next)
{
	return image_view_image_at(arg, pid, time, next);
}

static int dec_cfg_cut(struct dec_run *c, const struct mt_snap_aux *a,
    const struct dec_unit *u, struct dec_unit_res *res, struct mt_evw *w,
    int fd, struct decode_stats *st, size_t nseen);

/* Is @fd the null device (what is written there is never read)? */
static int
dec_fd_null(int fd)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 && S_ISCHR(sb.st_mode) &&
	    sb.st_rdev == makedev(1, 3);
}

/*
 * Buffer @a through the cached decoder (cfg.h) into a temporary file,
 * copied to the output when it decoded all of it; when it could not
 * (CFG_ABORT), the file and the counters of the attempt are dropped and
 * libipt's block decoder decodes the buffer.  An output file no one sees
 * before the end (-o: renamed when complete) takes the stream directly
 * and is cut back instead: no copy through the kernel twice.  So does
 * the null device, where nothing needs cutting back.
 */
static int
dec_cfg_buffer(struct dec_run *r, const struct mt_snap_aux *a)
{
	struct decode_stats saved = *r->st;
	struct mt_evw *out = r->w, *tw = NULL;
	size_t nseen = r->nseen;
	char buf[65536];
	off_t hdr;
	ssize_t n;
	int fd, rc;

	if (r->o->out_fd >= 0 && (r->o->out_private ||
	    dec_fd_null(r->o->out_fd)))
		return dec_cfg_cut(r, a, NULL, NULL, out, r->o->out_fd, r->st,
		    nseen);
	fd = par_tmpfile();
	if (fd < 0)
		return -MT_E_IO;
	rc = mt_evw_new(&tw, fd);
	if (rc >= 0)
		rc = mt_evw_flush(tw);
	hdr = lseek(fd, 0, SEEK_CUR);	/* after the header line */
	if (rc >= 0 && hdr < 0)
		rc = -MT_E_IO;
	if (rc >= 0) {
		r->w = tw;
		r->cfg = 2;
		rc = dec_buffer(r, a, NULL, NULL, NULL);
		if (rc == CFG_ABORT && r->cfg_pq) {
			/* mt's query layer refused it: libipt's */
			*r->st = saved;
			r->nseen = nseen;
			r->st->cfg_pq_refused++;
			rc = mt_evw_flush(tw);
			if (rc >= 0 && (ftruncate(fd, hdr) < 0 ||
			    lseek(fd, hdr, SEEK_SET) < 0))
				rc = -MT_E_IO;
			r->cfg = 1;
			if (rc >= 0)
				rc = dec_buffer(r, a, NULL, NULL, NULL);
		}
		r->cfg = 0;
		r->w = out;
	}
	if (rc == CFG_ABORT) {
		uint64_t pqr = r->st->cfg_pq_refused - saved.cfg_pq_refused;

		*r->st = saved;
		r->nseen = nseen;
		r->st->cfg_fallbacks++;
		r->st->cfg_pq_refused += pqr;
		if (r->cfg_full)
			r->st->cfg_full++;
		mt_evw_free(tw);
		close(fd);
		return dec_buffer(r, a, NULL, NULL, NULL);
	}
	if (rc >= 0)
		rc = mt_evw_flush(tw);
	if (rc >= 0 && lseek(fd, hdr, SEEK_SET) < 0)
		rc = -MT_E_IO;
	/* The kernel copies (no read into and write from here), when it can. */
	if (rc >= 0 && r->o->out_fd >= 0)
		rc = mt_evw_flush(out);
	while (rc >= 0 && r->o->out_fd >= 0 &&
	    (n = sendfile(r->o->out_fd, fd, NULL, 1 << 30)) != 0) {
		if (n < 0 && errno != EINTR) {
			if (errno != EINVAL && errno != ENOSYS)
				rc = -MT_E_IO;
			break;	/* not with this output: read and write */
		}
	}
	while (rc >= 0 && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0)
			rc = -MT_E_IO;
		else
			rc = mt_evw_raw(out, buf, (size_t)n);
	}
	if (rc >= 0)
		r->st->cfg_buffers++;
	mt_evw_free(tw);
	close(fd);
	return rc;
}

/* Cut what @w wrote to @fd since @start off again (the null device: no
 * need). */
static int
dec_cut_back(struct mt_evw *w, int fd, off_t start)
{
	if (mt_evw_flush(w) < 0)
		return -1;
	if (dec_fd_null(fd))
		return 0;
	return ftruncate(fd, start) < 0 || lseek(fd, start, SEEK_SET) < 0 ?
	    -1 : 0;
}

/*
 * Buffer @a (unit @u of a -j N worker, or NULL) through the cached
 * decoder (cfg.h) straight into @w, whose file @fd no one reads before
 * the end; when it gives the buffer back, what it wrote is cut off the
 * file and libipt's block decoder decodes the buffer.
 */
static int
dec_cfg_cut(struct dec_run *c, const struct mt_snap_aux *a,
    const struct dec_unit *u, struct dec_unit_res *res, struct mt_evw *w,
    int fd, struct decode_stats *st, size_t nseen)
{
	struct decode_stats saved = *st;
	uint64_t pqr;
	off_t start;
	int rc;

	if (mt_evw_flush(w) < 0 || (start = lseek(fd, 0, SEEK_CUR)) < 0)
		return -MT_E_IO;
	c->cfg = 2;
	rc = dec_buffer(c, a, u, res, NULL);
	if (rc == CFG_ABORT && c->cfg_pq) {
		/* mt's query layer refused it: libipt's */
		*st = saved;
		c->nseen = nseen;
		st->cfg_pq_refused++;
		if (dec_cut_back(w, fd, start) < 0)
			return -MT_E_IO;
		c->cfg = 1;
		rc = dec_buffer(c, a, u, res, NULL);
	}
	c->cfg = 0;
	if (rc != CFG_ABORT) {
		if (rc >= 0)
			st->cfg_buffers++;
		return rc;
	}
	pqr = st->cfg_pq_refused - saved.cfg_pq_refused;
	*st = saved;
	c->nseen = nseen;
	st->cfg_fallbacks++;
	st->cfg_pq_refused += pqr;
	if (c->cfg_full)
		st->cfg_full++;
	if (dec_cut_back(w, fd, start) < 0)
		return -MT_E_IO;
	return dec_buffer(c, a, u, res, NULL);
}

/* Unit @u of a -j N worker into the unit's temporary file (dec_cfg_cut). */
static int
dec_cfg_unit(struct dec_run *c, const struct dec_unit *u,
    struct dec_unit_res *res, struct mt_evw *w, struct decode_stats *st,
    size_t nseen)
{
	return dec_cfg_cut(c, &c->s->aux[u->buf], u, res, w, u->fd, st,
	    nseen);
}

/*
 * Buffer @i in the sequential loop (into runs @rs, or NULL).  A timed
 * trace's buffer gets a fresh image view, as under -j N (parallel.h).
 * A buffer of one thread without perf time goes through the cached
 * decoder unless --no-cache (cfg.h).
 */
static int
dec_seq_buffer(struct dec_run *r, size_t i, struct runs *rs)
{
	struct image_view *v = NULL;
	uint32_t pid, tid;
	int rc;

	if (!r->o->no_cache && !r->perf_clock && rs == NULL &&
	    dec_static_tid(r, i, &pid, &tid))
		return dec_cfg_buffer(r, &r->s->aux[i]);
	if (!par_timed(r->s))
		return dec_buffer(r, &r->s->aux[i], NULL, NULL, rs);
	rc = image_view_new(&v, r->is);
	if (rc < 0)
		return rc;
	r->image = dec_view_image;
	r->image_arg = v;
	rc = dec_buffer(r, &r->s->aux[i], NULL, NULL, rs);
	r->image = NULL;
	r->image_arg = NULL;
	image_view_free(v);
	return rc;
}

/*
 * Per-CPU buffers with switches: each buffer's stream into its own
 * temporary file, in runs (by -j N workers, or here one after the
 * other: the same bytes), then the runs of all buffers merged by start
 * time into the output (runs.h).
 */
static int
dec_runs_one(struct dec_run *r, size_t i, struct runs *rs)
{
	struct mt_evw *out = r->w, *w = NULL;
	int rc;

	rs->fd = par_tmpfile();
	rc = rs->fd < 0 ? -MT_E_IO : mt_evw_new(&w, rs->fd);
	if (rc >= 0) {
		r->w = w;
		rc = dec_seq_buffer(r, i, rs);
		r->w = out;
	}
	if (rc >= 0)
		return mt_evw_free(w);
	mt_evw_free(w);
	return rc;
}

static int
dec_runs_decode(struct dec_run *r, const struct mt_snap *s, int jobs)
{
	struct runs *rs = calloc(s->naux, sizeof(*rs));
	struct mt_evw *out = r->w;
	size_t i;
	int rc = PAR_SEQUENTIAL;

	if (rs == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < s->naux; i++) {
		runs_init(&rs[i]);
		rs[i].cpu = s->aux[i].cpu;
	}
	if (jobs > 1)
		rc = par_decode_runs(r, s, r->is, r->st, jobs, rs, r->prog);
	if (rc == PAR_SEQUENTIAL)
		for (rc = 0, i = 0; rc >= 0 && i < s->naux; i++)
			rc = dec_runs_one(r, i, &rs[i]);
	if (rc >= 0)
		rc = runs_merge(rs, s->naux, out);
	for (i = 0; i < s->naux; i++)
		runs_release(&rs[i]);
	free(rs);
	return rc;
}

/*
 * PT bytes that make a worker worth its cost when -j is not given: each
 * worker walks its code anew, copies the images, and on the 2-CPU
 * machines the bench runs on a second thread costs CPU (bench/RESULTS.md).
 */
#define DEC_AUTO_BYTES	(8u << 20)

/* Workers for @s: o->jobs, fewer on little work when -j was not given. */
static int
dec_jobs(const struct decode_opts *o, const struct mt_snap *s)
{
	uint64_t pt = 0;
	size_t i;

	if (!o->jobs_auto)
		return o->jobs;
	for (i = 0; i < s->naux; i++)
		pt += s->aux[i].len;
	pt /= DEC_AUTO_BYTES;	/* workers the work is worth */
	return pt < 1 ? 1 : pt < (uint64_t)o->jobs ? (int)pt : o->jobs;
}

static int
dec_all(const struct decode_opts *o, const struct mt_snap *s,
    struct mt_evw *w, struct decode_stats *st, struct decode_diag *d)
{
	struct dec_run r;
	const char *msg;
	size_t i;
	int rc;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.s = s;
	r.w = w;
	r.st = st;
	r.prog = o->progress;
	r.perf_clock = s->has_timeconv && s->timeconv.cap_user_time_zero &&
	    s->has_ptcfg && (s->ptcfg.config & MT_PT_CFG_TSC);
	rc = image_set_new(&r.is, s, &o->img);
	if (rc < 0)
		return rc;
	rc = thr_set_build(&r.ts, s, r.is, &d->off, &d->msg);
	if (rc >= 0)
		rc = image_set_read_probes(r.is);	/* every mapping is in */
	if (rc < 0)
		goto out;
	for (i = 0; (msg = image_set_warning(r.is, i)) != NULL; i++) {
		st->no_image++;
		if (o->warn != NULL)
			o->warn(o->warn_arg, msg);
	}
	r.wc = walk_cache_new(image_set_iscache(r.is), image_set_fn_lookup,
	    r.is);
	if (r.wc == NULL) {
		rc = -MT_E_NOMEM;
		goto out;
	}
	rc = dec_header(&r);
	if (rc >= 0 && dec_has_switches(&r)) {
		rc = dec_runs_decode(&r, s, dec_jobs(o, s));
		goto out;
	}
	/*
	 * -j N: buffers decoded by parallel.c's workers (same output); it
	 * also takes timed traces with split buffers under -j 1.
	 */
	if (rc >= 0)
		rc = par_decode(&r, s, r.is, st, dec_jobs(o, s),
		    !o->jobs_auto, o->out_fd, w, r.prog);
	if (rc == PAR_SEQUENTIAL)
		for (rc = 0, i = 0; rc >= 0 && i < s->naux; i++)
			rc = dec_seq_buffer(&r, i, NULL);
out:
	if (r.wc != NULL) {
		uint64_t nw, ni;

		walk_cache_counts(r.wc, &nw, &ni);
		st->walks += nw;	/* workers added theirs */
		st->walk_insns += ni;
	}
	walk_cache_free(r.wc);
	thr_set_release(&r.ts);
	image_set_free(r.is);
	free(r.seen);
	return rc;
}

int
decode_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	int rc = pthread_attr_init(&a);

	if (rc != 0)
		return rc;
	rc = pthread_attr_setstacksize(&a, DECODE_STACK);
	if (rc == 0)
		rc = pthread_create(th, &a, fn, arg);
	pthread_attr_destroy(&a);
	return rc;
}

/* decode_run's arguments and result, for its thread. */
struct dec_call {
	const struct decode_opts *o;
	const struct mt_snap *s;
	struct mt_evw *w;
	struct decode_stats *st;
	struct decode_diag *d;
	int rc;			/* dec_all's status */
	int err;		/* its errno (-MT_E_IO) */
};

static void *
dec_call_main(void *arg)
{
	struct dec_call *c = arg;

	c->rc = dec_all(c->o, c->s, c->w, c->st, c->d);
	c->err = errno;
	return NULL;
}

int
decode_run(const struct decode_opts *o, const struct mt_snap *s,
    struct mt_evw *w, struct decode_stats *st, struct decode_diag *d)
{
	struct dec_call c = { o, s, w, st, d, 0, 0 };
	pthread_t th;

	if (decode_thread_start(&th, dec_call_main, &c) != 0)
		return -MT_E_NOMEM;
	pthread_join(th, NULL);
	errno = c.err;
	return c.rc;
}

/*
 * Hooks for parallel.c (-j N, issue 10): a worker is a copy of the run
 * with its own walk cache, images, output and counters, decoding whole
 * buffers with dec_buffer() exactly as the sequential loop does.
 */
struct dec_run *
dec_fork(const struct dec_run *r, struct pt_image *(*image)(void *,
    uint32_t, uint64_t, uint64_t *), void *image_arg)
{
	struct dec_run *c = malloc(sizeof(*c));

	if (c == NULL)
		return NULL;
	*c = *r;
	c->seen = NULL;
	c->nseen = 0;
	c->prog = NULL;		/* the writing thread shows progress */
	c->image = image;
	c->image_arg = image_arg;
	c->wc = walk_cache_new(image_set_iscache(r->is), image_set_fn_lookup,
	    r->is);
	if (c->wc == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

int
dec_fork_unit(struct dec_run *c, const struct dec_unit *u,
    struct dec_unit_res *res, struct mt_evw *w, struct decode_stats *st,
    const uint32_t *seen, size_t nseen)
{
	size_t cap = 8;

	while (cap < nseen + 1)
		cap *= 2;
	free(c->seen);
	c->seen = malloc(cap * sizeof(*c->seen));
	if (c->seen == NULL)
		return -MT_E_NOMEM;
	if (nseen > 0)
		memcpy(c->seen, seen, nseen * sizeof(*seen));
	c->nseen = nseen;	/* cap > nseen: dec_thread's growth holds */
	c->w = w;
	c->st = st;
	if (!c->o->no_cache && !c->perf_clock && u->runs == NULL)
		return dec_cfg_unit(c, u, res, w, st, nseen);
	return dec_buffer(c, &c->s->aux[u->buf], u, res, NULL);
}

int
dec_seg_sig(const struct dec_run *r, size_t i, uint64_t psb, uint64_t after,
    struct dec_sig *sig)
{
	const struct mt_snap_aux *a = &r->s->aux[i];
	struct pt_block_decoder *dec;
	struct pt_config cfg;
	struct pt_event ev;
	struct pt_block blk;
	struct dec_buf b;
	uint32_t pid, tid;
	uint64_t blocks;
	int st, found = 0, rc = -1;

	if (!dec_static_tid(r, i, &pid, &tid))
		return -1;
	dec_config(r->s, a, &cfg);
	dec = pt_blk_alloc_decoder(&cfg);
	if (dec == NULL)
		return -1;
	memset(&b, 0, sizeof(b));
	b.dec = dec;
	st = pt_blk_set_image(dec, dec_image(r, pid, 0, &b.img_next));
	if (st >= 0)
		st = pt_blk_sync_set(dec, psb);
	if (st < 0 || (after == 0 && !(st & pts_event_pending)))
		goto out;
	/*
	 * The first event past @after, then on to the next block; no error
	 * on the way (a resync would skip code the decoders of the segment
	 * before do not).  A bound on the blocks keeps a PSB-less stretch
	 * from costing a whole decode.
	 */
	for (blocks = 0; blocks < (after ? 1u << 20 : 64); blocks++) {
		while (st & pts_event_pending) {
			st = pt_blk_event(dec, &ev, sizeof(ev));
			if (st < 0)
				goto out;
			if (!found) {
				dec_sig_of(&b, &ev, sig);
				found = sig->off > after;
			}
		}
		pt_blk_get_offset(dec, &sig->blk_off);
		st = pt_blk_next(dec, &blk, sizeof(blk));
		if (found && blk.ninsn > 0) {
			sig->blk_ip = blk.ip;
			rc = 0;
			break;
		}
		if (st < 0)
			break;
	}
out:
	pt_blk_free_decoder(dec);
	return rc;
}

int
dec_perf_clock(const struct dec_run *r)
{
	return r->perf_clock;
}

void
dec_fork_free(struct dec_run *c, struct decode_stats *st)
{
	uint64_t nw, ni;

	if (c == NULL)
		return;
	walk_cache_counts(c->wc, &nw, &ni);
	st->walks += nw;
	st->walk_insns += ni;
	walk_cache_free(c->wc);
	free(c->seen);
	free(c);
}

int
dec_static_tid(const struct dec_run *r, size_t i, uint32_t *pid,
    uint32_t *tid)
{
	const struct mt_snap_aux *a = &r->s->aux[i];
	const struct thr_cpu *cpu = NULL;

	/* The same choice as dec_buffer's. */
	if (a->tid != MT_SNAP_NONE) {
		*tid = a->tid;
		*pid = thr_pid(&r->ts, a->tid);
		return 1;
	}
	if (a->cpu != MT_SNAP_NONE && r->perf_clock)
		cpu = thr_cpu(&r->ts, a->cpu);
	if (cpu != NULL && cpu->nsw > 0)
		return 0;	/* switches: threads known only by decoding */
	*tid = 0;
	*pid = 0;
	return 1;
}

void
decode_progress_start(struct decode_progress *dp, const struct mt_snap *s,
    int fd)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < s->naux; i++)
		total += s->aux[i].len;
	mt_progress_init(&dp->p, "mt-decode", total,
	    mt_progress_interval_ms());
	dp->fd = fd;
	dp->done = 0;
}

/* Write all of @buf to @fd; a progress line that cannot be shown is lost. */
static void
dec_progress_write(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, buf, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		buf += k;
		n -= (size_t)k;
	}
}

void
decode_progress_show(struct decode_progress *dp, uint64_t done,
    uint64_t events)
{
	char line[160];
	size_t n = mt_progress_format(&dp->p, line, sizeof(line), done, events,
	    "events");
	int saved = errno;

	dec_progress_write(dp->fd, line, n);
	errno = saved;
}

void
decode_progress_end(struct decode_progress *dp)
{
	char line[16];
	size_t n = mt_progress_clear(&dp->p, line, sizeof(line));
	int saved = errno;

	dec_progress_write(dp->fd, line, n);
	errno = saved;
}
