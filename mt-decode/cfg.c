/* SPDX-License-Identifier: MIT */
/*
 * The cached block decoder (cfg.h): a packet layer (mt's pq.h, or
 * libipt's query decoder) for TNT bits, branch targets and events, the
 * walk cache (walk.h) for the code between two of them.
 *
 * Its parts:
 *
 * - cfg_proceed() moves along walks without trace: to a target IP, to
 *   the next branch that needs trace, or to where a section's code ends;
 *   cfg_branch() asks the packet layer where that branch goes.
 * - Events are handled through two tables per event type: how it binds
 *   (rules[]: at once, at its IP, only while tracing is off, where it may
 *   be moved to) and what delivering it changes (its effect and what the
 *   decoder's state must be).  cfg_bind() answers for the event in hand
 *   whether it binds where the decoder stands, or (in cfg_next) moves the
 *   decoder there; cfg_event() delivers it.
 * - Every call ends in cfg_settle(): the next event taken from the packet
 *   layer if one is pending, and the status built in one place
 *   (cfg_tell()).
 *
 * What it must show its caller is what libipt 2.0.5's block decoder
 * returns for the same calls (decode.c runs one loop on either, and
 * tests/mt-decode-cache.bats compares their streams byte for byte).  The
 * facts of that behaviour it relies on:
 *
 * - An event is reported (pts_event_pending) only where it binds: an
 *   asynchronous branch or disable at its source IP; MODE.Exec, PIP and
 *   VMCS of a TIP, and TSX, at their IP unless it is suppressed; EXSTOP
 *   and MWAIT likewise, or anywhere while tracing is off; paging and
 *   VMCS events while tracing is off; enable, overflow, stop, power,
 *   tick, CBR and MNT events wherever the decoder stands.  A
 *   synchronous disable is reported by the next call after a block,
 *   never at its end: it binds at its IP (an empty block when already
 *   there), or with a suppressed IP at the next branch that needs trace.
 *   To an asynchronous branch's or disable's IP, and to a MODE.Exec's
 *   (a mid-trace PSB+'s, at its FUP) or TSX's, libipt proceeds without
 *   trace (pt_blk_proceed_to_ip) and without its block cache.
 * - After a disable at a branch, decoding resumes (with no IP of its own)
 *   after a near call, SYSCALL or INT, else at 0.
 * - An enable at the IP where the decoder stands is marked resumed.
 * - Returns may be compressed: a near call pushes its return address on
 *   a stack of 64 (a full stack drops its oldest); a return answered by
 *   a taken TNT bit pops it.
 * - pts_ip_suppressed while tracing is off; pts_eos once the packet layer
 *   says so and no event is in hand.
 * - libipt follows direct calls and jumps inside one block; a direct
 *   branch out of the section, or code running into its end, ends it.
 */
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "cfg.h"
#include "fill.h"
#include "ild.h"
#include "image.h"
#include "pq.h"
#include "walk.h"

#define CFG_RETSTACK	64	/* return addresses kept (a power of 2) */
#define CFG_PATHS	1024	/* cfg_run's paths kept (a power of 2) */
#define CFG_PATH_BITS	24	/* TNT bits one path takes at most */
#define CFG_MAX_WALKS	(1u << 22)	/* the cache's bound (about 300 MiB) */
#define CFG_MAX_NINSN	65535	/* struct pt_block's u16 ninsn */

/*
 * A path (cfg_run): from walk @from, the @nbits TNT bits @bits (the
 * first highest) taken by walks of walk.quiet WQ_COND | WQ_NO_TR, one
 * walk a bit, lead to walk @to; @insns the instructions of those walks,
 * @last the branch of the last.  Walks are index + 1 (0: an empty slot).
 */
struct cfg_path {
	uint32_t from, to;
	uint32_t bits;
	uint32_t nbits;
	uint32_t insns;		/* CFG_PATH_BITS walks of CFG_MAX_NINSN */
	uint64_t last;
};

struct cfg_dec {
	struct pt_query_decoder *q;	/* libipt's, or NULL with pq */
	struct pq *pq;			/* mt's own query layer (pq.h) */
	int pq_refused;			/* pq answered PQ_ABORT */
	struct image_set *is;		/* not owned */
	uint32_t pid;			/* whose image */
	struct walk_cache *wc;		/* not owned */
	uint64_t ip;			/* the next instruction */
	int mode;			/* enum pt_exec_mode */
	int status;			/* the packet layer's last status */
	int enabled;			/* tracing enabled */
	int have_ev;			/* ev taken, not yet delivered */
	struct pt_event ev;		/* the event in hand */
	uint64_t rs[CFG_RETSTACK];	/* return addresses, a ring: */
	uint8_t rs_top, rs_n;		/* the next slot, entries held */
	struct {
		uint64_t lo, hi;	/* [lo, hi), hi == 0: none */
		int isid;
	} sec;				/* the section looked up last */
	uint64_t max_walks;		/* bound on the walk cache */
	int full;			/* 1: it reached the bound */
	/* cfg_run's links from a walk's branch to the walk after it
	 * (walk.succ: per direction of a conditional branch, the last
	 * target of any other), this decoder's: its process and image do
	 * not change */
	uint32_t tag;
	/* runs of those links taken by TNT bits (struct cfg_path), a
	 * direct-mapped table made at the first use; NULL: not yet */
	struct cfg_path *paths;
	struct cfg_path path_open;	/* the last path not kept */
	int use_paths;			/* cfg_paths() */
	/* libipt's block cache modelled (fill.h), not owned: blocks end
	 * where libipt's fill ends them; NULL: not needed (relative time) */
	struct fill *fill;
};

struct cfg_dec *
cfg_new(const struct pt_config *cfg, struct image_set *is, uint32_t pid,
    struct walk_cache *wc, int own, struct fill *fill)
{
	struct cfg_dec *d = calloc(1, sizeof(*d));
	const char *e;
	int rc;

	if (d == NULL)
		return NULL;
	if (own) {
		d->pq = malloc(sizeof(*d->pq));
		rc = d->pq != NULL ? pq_init(d->pq, cfg) : -pte_nomem;
		if (rc == PQ_ABORT)
			d->pq_refused = 1;
		if (rc < 0) {
			if (d->pq != NULL)
				pq_fini(d->pq);
			free(d->pq);
			d->pq = NULL;
			if (rc != PQ_ABORT) {
				free(d);
				return NULL;
			}
		}
	}
	if (d->pq == NULL && !d->pq_refused) {
		d->q = pt_qry_alloc_decoder(cfg);
		if (d->q == NULL) {
			free(d);
			return NULL;
		}
	}
	d->is = is;
	d->pid = pid;
	d->wc = wc;
	d->fill = fill;
	d->tag = walk_tag_new(wc);
	d->max_walks = CFG_MAX_WALKS;
	e = getenv("MT_DECODE_CACHE_WALKS");	/* tests */
	if (e != NULL && *e != '\0')
		d->max_walks = strtoull(e, NULL, 10);
	return d;
}

void
cfg_free(struct cfg_dec *d)
{
	if (d == NULL)
		return;
	pt_qry_free_decoder(d->q);
	if (d->pq != NULL)
		pq_fini(d->pq);
	free(d->pq);
	free(d->paths);
	free(d);
}

void
cfg_paths(struct cfg_dec *d, int on)
{
	d->use_paths = on && d->pq != NULL;
}

int
cfg_pq_refused(const struct cfg_dec *d)
{
	return d != NULL && d->pq_refused;
}

/*
 * The query calls: mt's own layer (pq.h) or libipt's.  A refusal of
 * pq is remembered, so the caller can try again with libipt's.
 */
static inline int
cfg_q(struct cfg_dec *d, int st)
{
	if (st == PQ_ABORT) {
		d->pq_refused = 1;
		return CFG_ABORT;
	}
	return st;
}

static int
cfg_q_cond(struct cfg_dec *d, int *taken)
{
	return d->pq ? cfg_q(d, pq_cond_branch(d->pq, taken)) :
	    pt_qry_cond_branch(d->q, taken);
}

static int
cfg_q_indirect(struct cfg_dec *d, uint64_t *ip)
{
	return d->pq ? cfg_q(d, pq_indirect_branch(d->pq, ip)) :
	    pt_qry_indirect_branch(d->q, ip);
}

static int
cfg_q_event(struct cfg_dec *d, struct pt_event *ev)
{
	return d->pq ? cfg_q(d, pq_event(d->pq, ev)) :
	    pt_qry_event(d->q, ev, sizeof(*ev));
}

/* Push a return address; a full stack drops its oldest. */
static inline void
cfg_push(struct cfg_dec *d, uint64_t ip)
{
	d->rs[d->rs_top] = ip;
	d->rs_top = (uint8_t)((d->rs_top + 1) & (CFG_RETSTACK - 1));
	if (d->rs_n < CFG_RETSTACK)
		d->rs_n++;
}

/* Pop one; an empty stack is an error of the trace: CFG_ABORT. */
static int
cfg_pop(struct cfg_dec *d, uint64_t *ip)
{
	if (d->rs_n == 0)
		return CFG_ABORT;
	d->rs_n--;
	d->rs_top = (uint8_t)((d->rs_top - 1) & (CFG_RETSTACK - 1));
	*ip = d->rs[d->rs_top];
	return 0;
}

/*
 * The status the caller gets: @pending (pts_event_pending or 0) with
 * what the decoder's state says.
 */
static int
cfg_tell(const struct cfg_dec *d, int pending)
{
	int st = pending;

	if (!d->enabled)
		st |= pts_ip_suppressed;
	if ((d->status & pts_eos) && !d->have_ev)
		st |= pts_eos;
	return st;
}

/*
 * The event in hand, taken from the packet layer when it has one
 * pending: 1 with an event, 0 without, CFG_ABORT.
 */
static int
cfg_take_event(struct cfg_dec *d)
{
	int st;

	if (d->have_ev)
		return 1;
	if (!(d->status & pts_event_pending))
		return 0;
	st = cfg_q_event(d, &d->ev);
	if (st < 0)
		return CFG_ABORT;
	d->have_ev = 1;
	d->status = st;
	return 1;
}

/* The section holding @ip (one section, not overlapped), or CFG_ABORT. */
static int
cfg_isid(struct cfg_dec *d, uint64_t ip)
{
	if (ip >= d->sec.lo && ip < d->sec.hi)
		return d->sec.isid;
	if (image_set_section_at(d->is, d->pid, ip, &d->sec.isid, &d->sec.lo,
	    &d->sec.hi) < 0) {
		d->sec.hi = 0;
		return CFG_ABORT;
	}
	return d->sec.isid;
}

/* Results of cfg_proceed. */
enum {
	CFG_AT_BRANCH = 0,	/* at a branch that needs trace (in blk) */
	CFG_AT_TARGET = 1,	/* reached the target IP */
	CFG_AT_SECTION = 2,	/* a direct branch left the section */
	CFG_AT_FILL = 3,	/* libipt's fill ends the block (fill.h) */
};

/* Is @ip after @lo, up to @hi (inside a run of straight-line code)? */
static inline int
cfg_inside(uint64_t ip, uint64_t lo, uint64_t hi)
{
	return ip > lo && ip <= hi;
}

/* The operand size of the mode, for ild_decode. */
static inline int
cfg_bits(const struct cfg_dec *d)
{
	return d->mode == ptem_16bit ? 16 : d->mode == ptem_32bit ? 32 : 64;
}

/*
 * Decode straight-line code from @ip in section @isid up to @target
 * (which must be an instruction's start): *@n gets the instructions
 * before it, *@last the address of the last of them.
 */
static int
cfg_step(struct cfg_dec *d, int isid, uint64_t ip, uint64_t target,
    uint32_t *n, uint64_t *last)
{
	struct ild_insn in;

	for (*n = 0; ip < target; (*n)++) {
		if (image_set_decode(d->is, isid, ip, cfg_bits(d), &in) < 0)
			return CFG_ABORT;
		*last = ip;
		ip += in.len;
	}
	return ip == target ? 0 : CFG_ABORT;
}

/*
 * With perf time, where libipt's fill ends the block inside walk @w
 * (fill.h), *@run instructions filled in a row before it:
 * CFG_AT_FILL with the block ended there (its calls pushed, d->ip the
 * instruction after it), 0 when the block goes on, or CFG_ABORT.
 */
static int
cfg_fill_cut(struct cfg_dec *d, struct pt_block *blk, const struct walk *w,
    int isid, uint32_t *run)
{
	const struct walk_tr *t;
	struct fill_cut cut;
	uint32_t k;
	int rc = fill_walk(d->fill, d->pid, isid, d->sec.lo, d->sec.hi,
	    cfg_bits(d), w, (size_t)(w - walk_array(d->wc)), run, &cut);

	if (rc <= 0)
		return rc < 0 ? CFG_ABORT : 0;
	for (k = 0; k < w->ntr; k++) {
		t = walk_tr_at(d->wc, w->tr + k);
		if (t->idx > cut.at)
			break;
		if (t->kind == WK_CALL)
			cfg_push(d, t->from + t->size);
	}
	blk->ninsn = (uint16_t)(blk->ninsn + cut.at + 1);
	blk->end_ip = cut.last;
	d->ip = cut.next;
	return CFG_AT_FILL;
}

/*
 * Proceed from d->ip without trace (to @target when @has_target, else
 * to the next branch that needs trace), adding the instructions to @blk and
 * the return addresses of direct calls to the stack.  At a branch that
 * needs trace, d->ip is that branch and *@pw its walk.  A target inside
 * straight-line code, or a block libipt would cut, is CFG_ABORT.  With
 * @fill (no event in hand, a model of libipt's cache), the block ends
 * where libipt's fill ends it: CFG_AT_FILL.
 */
static int
cfg_proceed(struct cfg_dec *d, struct pt_block *blk, int has_target,
    uint64_t target, int fill, const struct walk **pw)
{
	const struct walk *w;
	const struct walk_tr *t = NULL;
	uint64_t seg, last = 0;
	uint32_t k, base, n, run = 0;
	int isid, rc;

	if (has_target && d->ip == target)
		return CFG_AT_TARGET;
	/* No MODE.Exec yet: libipt decodes no instruction (an error). */
	if (d->mode == ptem_unknown)
		return CFG_ABORT;
	isid = cfg_isid(d, d->ip);
	if (isid < 0)
		return CFG_ABORT;
	if (blk->ninsn == 0)
		blk->isid = isid;
	else if (blk->isid != isid)
		return CFG_ABORT;
	for (;;) {
		w = walk_get(d->wc, d->ip, isid, d->mode);
		if (w == NULL || w->len == 0 ||
		    blk->ninsn + w->len > CFG_MAX_NINSN)
			return CFG_ABORT;
		seg = d->ip;
		base = 0;
		if (fill && (rc = cfg_fill_cut(d, blk, w, isid, &run)) != 0)
			return rc;
		for (k = 0; k < w->ntr; k++) {
			t = walk_tr_at(d->wc, w->tr + k);
			if (has_target && cfg_inside(target, seg, t->from))
				goto step;
			if (t->kind == WK_CALL)
				cfg_push(d, t->from + t->size);
			seg = t->to;
			base = t->idx + 1;
			if (has_target && t->to == target) {
				blk->ninsn = (uint16_t)(blk->ninsn + t->idx + 1);
				blk->end_ip = t->from;
				d->ip = target;
				return CFG_AT_TARGET;
			}
		}
		if (w->term != WK_NONE) {
			if (has_target && cfg_inside(target, seg, w->term_ip))
				goto step;
			blk->ninsn = (uint16_t)(blk->ninsn + w->len);
			blk->end_ip = w->term_ip;
			d->ip = w->term_ip;
			*pw = w;
			return CFG_AT_BRANCH;
		}
		/*
		 * No branch that needs trace: the walk stopped at its size
		 * limit (it goes on at cont), or its last instruction is a
		 * direct branch out of the section (libipt ends the block).
		 */
		if (w->cont != 0) {
			if (has_target && (cfg_inside(target, seg, w->cont) ||
			    target == w->cont))
				return CFG_ABORT;
			blk->ninsn = (uint16_t)(blk->ninsn + w->len);
			d->ip = w->cont;
			continue;
		}
		if (w->ntr > 0 && t->idx + 1 == w->len) {
			blk->ninsn = (uint16_t)(blk->ninsn + w->len);
			blk->end_ip = t->from;
			d->ip = t->to;
			return CFG_AT_SECTION;
		}
		/*
		 * Straight-line code up to the end of the section's bytes
		 * (libipt goes on in the next section): find where.
		 */
		if (has_target && target > seg && target < d->sec.hi)
			goto step;
		if (cfg_step(d, isid, seg, d->sec.hi, &n, &last) < 0 ||
		    base + n != w->len)
			return CFG_ABORT;
		blk->ninsn = (uint16_t)(blk->ninsn + w->len);
		blk->end_ip = last;
		d->ip = d->sec.hi;
		return CFG_AT_SECTION;
	}
step:
	/* The target is inside straight-line code from seg: decode there. */
	if (cfg_step(d, isid, seg, target, &n, &last) < 0 || n == 0)
		return CFG_ABORT;
	blk->ninsn = (uint16_t)(blk->ninsn + base + n);
	blk->end_ip = last;
	d->ip = target;
	return CFG_AT_TARGET;
}

/*
 * Where the branch that ends walk @w goes, from the packet layer (d->ip
 * is the branch): a conditional branch takes a TNT bit; a return takes
 * a TNT bit (compressed: the return stack says where) or a TIP; a near
 * call pushes its return address and takes a TIP like any other.
 */
static int
cfg_branch(struct cfg_dec *d, const struct walk *w)
{
	uint64_t ip = 0;
	int st, taken;

	switch (w->term) {
	case WK_COND:
		st = cfg_q_cond(d, &taken);
		if (st < 0)
			return st;
		ip = taken ? w->term_target : w->term_ip + w->term_size;
		break;
	case WK_RET:
		st = cfg_q_cond(d, &taken);
		if (st >= 0) {
			if (!taken || cfg_pop(d, &ip) < 0)
				return CFG_ABORT;
			break;
		}
		if (st != -pte_bad_query)
			return st;
		st = cfg_q_indirect(d, &ip);
		break;
	case WK_CALL:
		cfg_push(d, w->term_ip + w->term_size);
		st = cfg_q_indirect(d, &ip);
		break;
	default:
		st = cfg_q_indirect(d, &ip);
		break;
	}
	if (st < 0)
		return st;
	/* libipt's result for a suppressed target depends on its block
	 * cache: not decoded here */
	if (st & pts_ip_suppressed)
		return CFG_ABORT;
	d->status = st;
	d->ip = ip;
	return 0;
}

/*
 * Where decoding resumes after a disable at the branch that ends walk
 * @w: after a near call, SYSCALL or INT, else 0.  WK_FAR does not say
 * which far transfer it is: CFG_ABORT.
 */
static int
cfg_resume_ip(struct cfg_dec *d, const struct walk *w)
{
	if (w->term == WK_FAR)
		return CFG_ABORT;
	if (w->term == WK_CALL || w->term == WK_SYSCALL || w->term == WK_INT)
		d->ip = w->term_ip + w->term_size;
	else
		d->ip = 0;
	return 0;
}

/*
 * How each event type binds and what delivering it does (the facts in
 * the header).  An event binds where the decoder stands when one of its
 * bind conditions holds; otherwise cfg_next may move there (move), and
 * cfg_settle says nothing yet.
 */
enum {
	B_ALWAYS = 1,		/* wherever the decoder stands */
	B_SUPPRESSED = 2,	/* anywhere when its IP is suppressed */
	B_OFF = 4,		/* anywhere while tracing is off */
	B_AT_IP = 8,		/* at its IP (field ip) */
};
enum {
	M_NONE,			/* it cannot be moved to: CFG_ABORT */
	M_TO_IP,		/* without trace to its IP */
	M_TO_BRANCH,		/* to its IP, or (suppressed) to the next
				 * branch that needs trace */
};
enum {
	FX_NONE,
	FX_ENABLE,		/* tracing on at its IP */
	FX_DISABLE,		/* tracing off */
	FX_BRANCH,		/* on at the asynchronous branch's target */
	FX_OVERFLOW,		/* on at its IP, or off when suppressed */
	FX_MODE,		/* the execution mode */
};
/* What the decoder's state must be to deliver it. */
enum {
	N_ON = 1,		/* tracing on */
	N_OFF = 2,		/* tracing off */
	N_NO_UPDATE = 4,	/* not a status update */
	N_IP = 8,		/* an IP (not suppressed) */
};

static const struct cfg_rule {
	uint8_t known;		/* 0: not decoded here (PTWRITE): abort */
	uint8_t bind;		/* B_* */
	uint8_t move;		/* M_* */
	uint8_t effect;		/* FX_* */
	uint8_t need;		/* N_* */
	uint16_t ip;		/* offset of its IP in struct pt_event */
} rules[] = {
#define IPF(m)	(uint16_t)offsetof(struct pt_event, variant.m)
	[ptev_enabled] = { 1, B_ALWAYS, M_NONE, FX_ENABLE,
	    N_OFF | N_NO_UPDATE | N_IP, 0 },
	[ptev_disabled] = { 1, 0, M_TO_BRANCH, FX_DISABLE,
	    N_ON | N_NO_UPDATE, IPF(disabled.ip) },
	[ptev_async_disabled] = { 1, B_AT_IP, M_TO_IP, FX_DISABLE,
	    N_ON | N_NO_UPDATE, IPF(async_disabled.at) },
	[ptev_async_branch] = { 1, B_AT_IP, M_TO_IP, FX_BRANCH,
	    N_ON | N_NO_UPDATE, IPF(async_branch.from) },
	[ptev_paging] = { 1, B_OFF, M_NONE, FX_NONE, 0, 0 },
	[ptev_async_paging] = { 1, B_SUPPRESSED | B_AT_IP, M_NONE, FX_NONE,
	    0, IPF(async_paging.ip) },
	[ptev_overflow] = { 1, B_ALWAYS, M_NONE, FX_OVERFLOW,
	    N_NO_UPDATE, 0 },
	[ptev_exec_mode] = { 1, B_SUPPRESSED | B_AT_IP, M_TO_IP, FX_MODE,
	    0, IPF(exec_mode.ip) },
	[ptev_tsx] = { 1, B_SUPPRESSED | B_AT_IP, M_TO_IP, FX_NONE,
	    0, IPF(tsx.ip) },
	[ptev_stop] = { 1, B_ALWAYS, M_NONE, FX_NONE,
	    N_OFF | N_NO_UPDATE, 0 },
	[ptev_vmcs] = { 1, B_OFF, M_NONE, FX_NONE, 0, 0 },
	[ptev_async_vmcs] = { 1, B_SUPPRESSED | B_AT_IP, M_NONE, FX_NONE,
	    0, IPF(async_vmcs.ip) },
	[ptev_exstop] = { 1, B_SUPPRESSED | B_OFF | B_AT_IP, M_TO_IP,
	    FX_NONE, 0, IPF(exstop.ip) },
	[ptev_mwait] = { 1, B_SUPPRESSED | B_OFF | B_AT_IP, M_TO_IP,
	    FX_NONE, 0, IPF(mwait.ip) },
	[ptev_pwre] = { 1, B_ALWAYS, M_NONE, FX_NONE, 0, 0 },
	[ptev_pwrx] = { 1, B_ALWAYS, M_NONE, FX_NONE, 0, 0 },
	[ptev_tick] = { 1, B_ALWAYS, M_NONE, FX_NONE, 0, 0 },
	[ptev_cbr] = { 1, B_ALWAYS, M_NONE, FX_NONE, 0, 0 },
	[ptev_mnt] = { 1, B_ALWAYS, M_NONE, FX_NONE, 0, 0 },
#undef IPF
};

/* The rule of @ev's type, NULL for types not decoded here. */
static const struct cfg_rule *
cfg_rule(const struct pt_event *ev)
{
	if ((unsigned)ev->type >= sizeof(rules) / sizeof(rules[0]) ||
	    !rules[ev->type].known)
		return NULL;
	return &rules[ev->type];
}

/* The IP field of @ev that @r names. */
static inline uint64_t
cfg_ev_ip(const struct pt_event *ev, const struct cfg_rule *r)
{
	uint64_t ip;

	memcpy(&ip, (const char *)ev + r->ip, sizeof(ip));
	return ip;
}

/* Does @ev (of rule @r) bind where the decoder stands? */
static int
cfg_binds_here(const struct cfg_dec *d, const struct pt_event *ev,
    const struct cfg_rule *r)
{
	return (r->bind & B_ALWAYS) ||
	    ((r->bind & B_SUPPRESSED) && ev->ip_suppressed) ||
	    ((r->bind & B_OFF) && !d->enabled) ||
	    ((r->bind & B_AT_IP) && d->ip == cfg_ev_ip(ev, r));
}

/*
 * Move without trace to where the event in hand binds, the code on the
 * way into @blk; 0, or CFG_ABORT where the walks cannot take it there.
 */
static int
cfg_move(struct cfg_dec *d, struct pt_block *blk, const struct cfg_rule *r)
{
	const struct pt_event *ev = &d->ev;
	const struct walk *w = NULL;
	int rc;

	switch (r->move) {
	case M_TO_IP:
		rc = cfg_proceed(d, blk, 1, cfg_ev_ip(ev, r), 0, &w);
		return rc == CFG_AT_TARGET ? 0 : CFG_ABORT;
	case M_TO_BRANCH:
		rc = cfg_proceed(d, blk, !ev->ip_suppressed, cfg_ev_ip(ev, r),
		    0, &w);
		if (rc == CFG_AT_BRANCH)
			return cfg_resume_ip(d, w);
		return rc == CFG_AT_TARGET ? 0 : CFG_ABORT;
	default:
		return CFG_ABORT;
	}
}

/*
 * The status for the event in hand: pending where it binds.  With @blk
 * (cfg_next) the decoder is first moved to where it binds; without, an
 * event that binds elsewhere waits for the next cfg_next.
 */
static int
cfg_bind(struct cfg_dec *d, struct pt_block *blk)
{
	const struct cfg_rule *r = cfg_rule(&d->ev);

	if (r == NULL)
		return CFG_ABORT;
	if (cfg_binds_here(d, &d->ev, r))
		return cfg_tell(d, pts_event_pending);
	if (blk == NULL)
		return cfg_tell(d, 0);
	if (cfg_move(d, blk, r) < 0)
		return CFG_ABORT;
	return cfg_tell(d, pts_event_pending);
}

/* The end of every call: the next event, and whether it binds here. */
static int
cfg_settle(struct cfg_dec *d)
{
	int rc = cfg_take_event(d);

	if (rc <= 0)
		return rc < 0 ? rc : cfg_tell(d, 0);
	return cfg_bind(d, NULL);
}

/* A new sync: nothing known, nothing held. */
static void
cfg_reset(struct cfg_dec *d)
{
	d->mode = ptem_unknown;
	d->ip = 0;
	d->status = 0;
	d->enabled = 0;
	d->have_ev = 0;
	d->rs_top = d->rs_n = 0;
	memset(&d->ev, 0, sizeof(d->ev));
}

/* After the packet layer synced with status @st (its IP in d->ip). */
static int
cfg_begin(struct cfg_dec *d, int st)
{
	if (st < 0)
		return st == -pte_eos ? st : CFG_ABORT;
	d->status = st;
	if (!(st & pts_ip_suppressed))
		d->enabled = 1;
	return cfg_settle(d);
}

int
cfg_sync_set(struct cfg_dec *d, uint64_t off)
{
	cfg_reset(d);
	if (d->pq_refused)
		return CFG_ABORT;
	return cfg_begin(d, d->pq ? cfg_q(d, pq_sync_set(d->pq, &d->ip, off)) :
	    pt_qry_sync_set(d->q, &d->ip, off));
}

int
cfg_sync_forward(struct cfg_dec *d)
{
	cfg_reset(d);
	if (d->pq_refused)
		return CFG_ABORT;
	return cfg_begin(d, d->pq ? cfg_q(d, pq_sync_forward(d->pq, &d->ip)) :
	    pt_qry_sync_forward(d->q, &d->ip));
}

int
cfg_time(const struct cfg_dec *d, uint64_t *tsc, uint32_t *lost_mtc,
    uint32_t *lost_cyc)
{
	if (d->q == NULL)
		return -pte_no_time;
	return pt_qry_time(d->q, tsc, lost_mtc, lost_cyc);
}

int
cfg_full(const struct cfg_dec *d)
{
	return d != NULL && d->full;
}

int
cfg_next(struct cfg_dec *d, struct pt_block *blk)
{
	const struct walk *w = NULL;
	uint64_t nw, ni;
	int rc;

	/* The walk cache only grows: past its bound, libipt decodes. */
	walk_cache_counts(d->wc, &nw, &ni);
	if (nw >= d->max_walks) {
		d->full = 1;
		return CFG_ABORT;
	}

	memset(blk, 0, sizeof(*blk));
	blk->ip = d->ip;
	blk->mode = (enum pt_exec_mode)d->mode;
	rc = cfg_take_event(d);
	if (rc < 0)
		return rc;
	if (rc > 0)
		return cfg_bind(d, blk);
	if (!d->enabled)
		return (d->status & pts_eos) ? -pte_eos : CFG_ABORT;
	rc = cfg_proceed(d, blk, 0, 0, d->fill != NULL, &w);
	if (rc == CFG_AT_BRANCH) {
		rc = cfg_branch(d, w);
		if (rc < 0)
			return rc == -pte_eos ? rc : CFG_ABORT;
	} else if (rc != CFG_AT_SECTION && rc != CFG_AT_FILL) {
		return CFG_ABORT;
	}
	return cfg_settle(d);
}

/*
 * The path from walk @from (index + 1, walk.quiet all set) that the
 * next @m TNT bits @bits take along this decoder's links: the table's
 * entry when it has one, else one made (kept unless a link it needs is
 * not made yet).
 * NULL when not even one bit can be taken that way.
 */
static const struct cfg_path *
cfg_path_find(struct cfg_dec *d, const struct walk *base, uint32_t from,
    uint64_t bits, int m)
{
	struct cfg_path *p, tmp;
	const struct walk *w;
	uint32_t h, nx = 0;
	int k, open = 0, taken;

	if (d->paths == NULL) {
		d->paths = calloc(CFG_PATHS, sizeof(*d->paths));
		if (d->paths == NULL) {
			d->use_paths = 0;
			return NULL;
		}
	}
	h = (from * 0x9e3779b1u + (uint32_t)(m >= 4 ? bits >> (m - 4) :
	    (bits | 0x10u << m))) * 0x85ebca6bu;
	p = &d->paths[h >> (32 - 10)];
	_Static_assert(CFG_PATHS == 1u << 10, "the hash's 10 bits");
	if (p->from == from && (int)p->nbits <= m &&
	    bits >> (m - (int)p->nbits) == p->bits)
		return p;
	tmp.from = from;
	tmp.insns = 0;
	tmp.last = 0;
	w = base + from - 1;
	for (k = 0; k < m; k++) {
		if (w->quiet != (WQ_COND | WQ_NO_TR))
			break;
		taken = (int)(bits >> (m - 1 - k)) & 1;
		nx = w->tag == d->tag ? w->succ[!taken] : 0;
		if (nx == 0) {
			open = 1;
			break;
		}
		tmp.insns += w->len;
		tmp.last = w->term_ip;
		tmp.to = nx;
		w = base + nx - 1;
	}
	if (k == 0)
		return NULL;
	tmp.nbits = (uint32_t)k;
	tmp.bits = (uint32_t)(bits >> (m - k));
	if (open) {
		/* not kept: the link missing is made once that bit comes */
		d->path_open = tmp;
		return &d->path_open;
	}
	*p = tmp;
	return p;
}

/*
 * cfg_run with a disable in hand (a branch out of the filter's ranges):
 * it binds at the next branch that needs trace, the end of the walk
 * from d->ip when that walk ends in one and its IP (the branch's
 * target, unless suppressed) is nowhere on the walk's way.  What
 * cfg_next, cfg_move and cfg_proceed would do then, for that walk as
 * @fn's block: its calls pushed, the decoder at its branch, then at
 * where decoding resumes after the disable (cfg_resume_ip), the event
 * pending.  CFG_SLOW for every other event or walk: cfg_next decides.
 */
static int
cfg_run_to_disable(struct cfg_dec *d, cfg_walk_fn fn, void *arg)
{
	const struct walk *w;
	const struct walk_tr *tr = NULL;
	uint64_t nw, ni, to = d->ev.variant.disabled.ip, seg = d->ip;
	uint32_t k;
	int isid, has_to = !d->ev.ip_suppressed;

	if (d->ev.type != ptev_disabled || d->ev.status_update ||
	    !d->enabled || d->mode == ptem_unknown || (has_to && to == d->ip))
		return CFG_SLOW;
	walk_cache_counts(d->wc, &nw, &ni);
	if (nw >= d->max_walks)
		return CFG_SLOW;
	isid = cfg_isid(d, d->ip);
	if (isid < 0)
		return CFG_SLOW;
	w = walk_get(d->wc, d->ip, isid, d->mode);
	if (w == NULL || w->len == 0 || w->term == WK_NONE ||
	    w->term == WK_FAR || w->len > CFG_MAX_NINSN)
		return CFG_SLOW;
	if (w->ntr > 0)
		tr = walk_tr_array(d->wc) + w->tr;
	/* cfg_proceed's stops on the way to the disable's IP */
	for (k = 0; has_to && k < w->ntr; k++) {
		if (cfg_inside(to, seg, tr[k].from) || tr[k].to == to)
			return CFG_SLOW;
		seg = tr[k].to;
	}
	if (has_to && cfg_inside(to, seg, w->term_ip))
		return CFG_SLOW;
	for (k = 0; k < w->ntr; k++)
		if (tr[k].kind == WK_CALL)
			cfg_push(d, tr[k].from + tr[k].size);
	fn(arg, w);
	d->ip = w->term_ip;
	(void)cfg_resume_ip(d, w);
	return cfg_tell(d, pts_event_pending);
}

int
cfg_run(struct cfg_dec *d, cfg_walk_fn fn, cfg_jump_fn jump, void *arg)
{
	const struct cfg_path *p;
	uint64_t bits;
	int quiet = 0, m;
	const struct walk *w, *base = walk_array(d->wc);
	const struct walk_tr *tr;
	uint64_t nw, ni;
	uint32_t k, from = 0, next = 0;
	int isid, rc, taken = 0, n = 0, link = 0;

	/* blocks that end where libipt's fill ends them: cfg_next's */
	if (d->fill != NULL)
		return CFG_SLOW;
	if (d->have_ev)
		return cfg_run_to_disable(d, fn, arg);
	if (!d->enabled || d->mode == ptem_unknown ||
	    (d->status & (pts_event_pending | pts_eos)))
		return CFG_SLOW;
	for (;;) {
		if (next != 0) {
			/* the walk this branch led to before */
			w = base + next - 1;
		} else {
			walk_cache_counts(d->wc, &nw, &ni);
			if (nw >= d->max_walks)
				break;	/* cfg_next says so */
			isid = cfg_isid(d, d->ip);
			if (isid < 0)
				break;
			w = walk_get(d->wc, d->ip, isid, d->mode);
			if (w == NULL)
				break;
			base = walk_array(d->wc);
			if (w->len == 0 || w->term == WK_NONE ||
			    w->len > CFG_MAX_NINSN)
				break;	/* cfg_next's blocks */
			/* only walks this loop takes are linked: a link
			 * needs no check */
			if (link)
				walk_link(d->wc, from, !taken,
				    (uint32_t)(w - base), d->tag);
		}
		if ((quiet & WQ_COND) && w->quiet == (WQ_COND | WQ_NO_TR) &&
		    d->use_paths &&
		    (m = pq_tnt_peek(d->pq, CFG_PATH_BITS, &bits)) > 0 &&
		    (p = cfg_path_find(d, base, (uint32_t)(w - base) + 1,
		    bits, m)) != NULL) {
			/* the bits' walks at once: they write nothing */
			jump(arg, p->nbits, p->insns, p->last);
			d->status = pq_tnt_skip(d->pq, (int)p->nbits);
			n += (int)p->nbits;
			next = p->to;
			d->ip = base[next - 1].ip;
			link = 0;
			if (d->status & (pts_event_pending | pts_eos))
				return cfg_settle(d);
			continue;
		}
		if (w->ntr > 0) {
			tr = walk_tr_array(d->wc) + w->tr;
			for (k = 0; k < w->ntr; k++)
				if (tr[k].kind == WK_CALL)
					cfg_push(d, tr[k].from + tr[k].size);
		}
		n++;
		fn(arg, w);	/* w stays valid until the next walk_get */
		quiet = w->quiet;	/* WQ_COND: nothing pending after it */
		link = 0;
		next = 0;
		if (w->term == WK_COND && d->pq != NULL) {
			/* cfg_branch's query, without its switch */
			rc = pq_tnt_take(d->pq, &taken);
			if (rc < 0)
				rc = cfg_q(d, pq_cond_branch(d->pq, &taken));
			if (rc < 0) {
				d->ip = w->term_ip;
				return rc == -pte_eos ? rc : CFG_ABORT;
			}
			d->ip = taken ? w->term_target :
			    w->term_ip + w->term_size;
			d->status = rc;
			if (w->tag == d->tag)
				next = w->succ[!taken];
			if (next == 0) {
				from = (uint32_t)(w - base);
				link = 1;
			}
		} else {
			d->ip = w->term_ip;
			rc = cfg_branch(d, w);
			if (rc < 0)
				return rc == -pte_eos ? rc : CFG_ABORT;
			/* a return or indirect branch: the walk it led to
			 * last (succ[0]), if it went there again */
			if (w->tag == d->tag && w->succ[0] != 0 &&
			    base[w->succ[0] - 1].ip == d->ip) {
				next = w->succ[0];
			} else {
				from = (uint32_t)(w - base);
				taken = 1;
				link = 1;
			}
		}
		if (d->status & (pts_event_pending | pts_eos))
			return cfg_settle(d);
	}
	return n > 0 ? cfg_tell(d, 0) : CFG_SLOW;
}

int
cfg_event(struct cfg_dec *d, struct pt_event *uev)
{
	struct pt_event *ev = &d->ev;
	const struct cfg_rule *r = cfg_rule(ev);

	if (!d->have_ev || r == NULL)
		return CFG_ABORT;
	if ((r->bind & B_AT_IP) && !cfg_binds_here(d, ev, r))
		return CFG_ABORT;	/* not where it binds */
	if (((r->need & N_ON) && !d->enabled) ||
	    ((r->need & N_OFF) && d->enabled) ||
	    ((r->need & N_NO_UPDATE) && ev->status_update) ||
	    ((r->need & N_IP) && ev->ip_suppressed))
		return CFG_ABORT;
	switch (r->effect) {
	case FX_ENABLE:
		if (ev->variant.enabled.ip == d->ip)
			ev->variant.enabled.resumed = 1;
		d->ip = ev->variant.enabled.ip;
		d->enabled = 1;
		break;
	case FX_DISABLE:
		d->enabled = 0;
		break;
	case FX_BRANCH:
		d->ip = ev->variant.async_branch.to;
		break;
	case FX_OVERFLOW:
		d->enabled = !ev->ip_suppressed;
		d->ip = ev->ip_suppressed ? 0 : ev->variant.overflow.ip;
		break;
	case FX_MODE:
		/* a status update may not change the mode while tracing */
		if (ev->status_update && d->enabled &&
		    d->mode != ptem_unknown &&
		    d->mode != (int)ev->variant.exec_mode.mode)
			return CFG_ABORT;
		d->mode = ev->variant.exec_mode.mode;
		break;
	default:
		break;		/* paging and VMCS: one image for all */
	}
	d->have_ev = 0;
	*uev = *ev;
	return cfg_settle(d);
}

int
cfg_get_offset(const struct cfg_dec *d, uint64_t *off)
{
	return d->pq ? pq_get_offset(d->pq, off) : pt_qry_get_offset(d->q, off);
}

int
cfg_get_sync_offset(const struct cfg_dec *d, uint64_t *off)
{
	return d->pq ? pq_get_sync_offset(d->pq, off) :
	    pt_qry_get_sync_offset(d->q, off);
}
