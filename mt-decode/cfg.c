/* SPDX-License-Identifier: MIT */
/*
 * The cached block decoder (cfg.h): libipt's query decoder for the
 * packets, the walk cache for the code between two queries.  Function by
 * function it mirrors libipt 2.0.5's pt_block_decoder.c (named in the
 * comments), reduced to what decode.c reads from blocks and events.
 */
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "cfg.h"
#include "ild.h"
#include "image.h"
#include "pq.h"
#include "walk.h"

#define CFG_RETSTACK	64	/* libipt's pt_max_retstack */
#define CFG_MAX_WALKS	(1u << 22)	/* the cache's bound (about 300 MiB) */
#define CFG_MAX_NINSN	65535	/* struct pt_block's u16 ninsn */

struct cfg_dec {
	struct pt_query_decoder *q;	/* libipt's, or NULL with pq */
	struct pq *pq;			/* mt's own query layer (pq.h) */
	int pq_refused;			/* pq answered PQ_ABORT */
	struct image_set *is;		/* not owned */
	uint32_t pid;			/* whose image */
	struct walk_cache *wc;		/* not owned */
	uint64_t ip;			/* next instruction (libipt's ip) */
	int mode;			/* enum pt_exec_mode */
	int status;			/* last query status */
	int enabled;			/* tracing enabled */
	int process_event;		/* ev fetched, not yet delivered */
	struct pt_event ev;		/* the event in process */
	uint64_t rs[CFG_RETSTACK + 1];	/* return addresses, a ring */
	uint8_t top, bottom;		/* as libipt's pt_retstack */
	struct {
		uint64_t lo, hi;	/* [lo, hi), hi == 0: none */
		int isid;
	} sec;				/* the section looked up last */
	uint64_t max_walks;		/* bound on the walk cache */
	int full;			/* 1: it reached the bound */
	/* cfg_run: per walk index, the walk index + 1 reached by its
	 * conditional branch taken [0] and not taken [1] (0: not known);
	 * per decoder, whose process and image do not change */
	uint32_t (*succ)[2];
	uint32_t nsucc;
};

struct cfg_dec *
cfg_new(const struct pt_config *cfg, struct image_set *is, uint32_t pid,
    struct walk_cache *wc, int own)
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
	free(d->succ);
	free(d);
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

/* pt_retstack_push: a full stack drops its oldest entry. */
static void
cfg_push(struct cfg_dec *d, uint64_t ip)
{
	d->rs[d->top] = ip;
	d->top = (uint8_t)((d->top + 1) % (CFG_RETSTACK + 1));
	if (d->top == d->bottom)
		d->bottom = (uint8_t)((d->bottom + 1) % (CFG_RETSTACK + 1));
}

/* pt_retstack_pop; an empty stack is an error libipt reports: abort. */
static int
cfg_pop(struct cfg_dec *d, uint64_t *ip)
{
	if (d->top == d->bottom)
		return CFG_ABORT;
	d->top = (uint8_t)((d->top + CFG_RETSTACK) % (CFG_RETSTACK + 1));
	*ip = d->rs[d->top];
	return 0;
}

/* pt_blk_status */
static int
cfg_status(const struct cfg_dec *d, int flags)
{
	if (!d->enabled)
		flags |= pts_ip_suppressed;
	if ((d->status & pts_eos) && !d->process_event)
		flags |= pts_eos;
	return flags;
}

/* pt_blk_fetch_event: 1 with an event in process, 0 without one. */
static int
cfg_fetch_event(struct cfg_dec *d)
{
	int st;

	if (d->process_event)
		return 1;
	if (!(d->status & pts_event_pending))
		return 0;
	st = cfg_q_event(d, &d->ev);
	if (st < 0)
		return CFG_ABORT;
	d->process_event = 1;
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
};

/* Is @ip after @lo, up to @hi (inside a run of straight-line code)? */
static inline int
cfg_inside(uint64_t ip, uint64_t lo, uint64_t hi)
{
	return ip > lo && ip <= hi;
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
	uint8_t buf[16];
	struct ild_insn in;
	int r, bits = d->mode == ptem_16bit ? 16 : d->mode == ptem_32bit ?
	    32 : 64;

	for (*n = 0; ip < target; (*n)++) {
		r = pt_iscache_read(image_set_iscache(d->is), buf, sizeof(buf),
		    isid, ip);
		if (r <= 0 || ild_decode(buf, (size_t)r, ip, bits, &in) < 0)
			return CFG_ABORT;
		*last = ip;
		ip += in.len;
	}
	return ip == target ? 0 : CFG_ABORT;
}

/*
 * Proceed from d->ip without trace (pt_blk_proceed_to_ip with @target,
 * else to the next decision point), adding the instructions to @blk and
 * the return addresses of direct calls to the stack.  At a branch that
 * needs trace, d->ip is that branch and *@pw its walk.  A target inside
 * straight-line code, or a block libipt would cut, is CFG_ABORT.
 */
static int
cfg_proceed(struct cfg_dec *d, struct pt_block *blk, int has_target,
    uint64_t target, const struct walk **pw)
{
	const struct walk *w;
	const struct walk_tr *t = NULL;
	uint64_t seg, last = 0;
	uint32_t k, base, n;
	int isid;

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
 * The query for the branch that ends walk @w (pt_blk_next_ip and the
 * cached paths of pt_blk_proceed_no_event_cached); d->ip is the branch.
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
	/* libipt's cached and uncached paths differ here: not ours. */
	if (st & pts_ip_suppressed)
		return CFG_ABORT;
	d->status = st;
	d->ip = ip;
	return 0;
}

/*
 * pt_blk_set_disable_resume_ip for the branch that ends walk @w: after a
 * near or far call, else 0.  WK_FAR does not say which far transfer.
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
 * pt_blk_proceed_to_ip for an event that must be reached without trace:
 * 1 when reached, CFG_ABORT otherwise.
 */
static int
cfg_reach(struct cfg_dec *d, struct pt_block *blk, uint64_t ip)
{
	const struct walk *w;

	return cfg_proceed(d, blk, 1, ip, &w) == CFG_AT_TARGET ? 1 :
	    CFG_ABORT;
}

/* pt_blk_proceed_event */
static int
cfg_proceed_event(struct cfg_dec *d, struct pt_block *blk)
{
	const struct pt_event *ev = &d->ev;
	const struct walk *w = NULL;
	int rc;

	switch (ev->type) {
	case ptev_enabled:
	case ptev_overflow:
	case ptev_stop:
	case ptev_pwre:
	case ptev_pwrx:
	case ptev_tick:
	case ptev_cbr:
	case ptev_mnt:
		break;
	case ptev_disabled:
		/*
		 * Suppressed: it binds to the next branch that needs trace
		 * (or a MOV CR3, which user code does not run).  Else to its
		 * IP, or to a branch on the way there.
		 */
		rc = cfg_proceed(d, blk, !ev->ip_suppressed,
		    ev->variant.disabled.ip, &w);
		if (rc == CFG_AT_BRANCH)
			rc = cfg_resume_ip(d, w);
		else if (rc != CFG_AT_TARGET)
			return CFG_ABORT;
		if (rc < 0)
			return CFG_ABORT;
		break;
	case ptev_async_disabled:
		if (cfg_reach(d, blk, ev->variant.async_disabled.at) < 0)
			return CFG_ABORT;
		break;
	case ptev_async_branch:
		if (cfg_reach(d, blk, ev->variant.async_branch.from) < 0)
			return CFG_ABORT;
		break;
	case ptev_paging:
	case ptev_vmcs:
		if (d->enabled)
			return CFG_ABORT;	/* binds to an instruction */
		break;
	case ptev_exec_mode:
		if (!ev->ip_suppressed && d->ip != ev->variant.exec_mode.ip)
			return CFG_ABORT;
		break;
	case ptev_async_paging:
		/* Where it binds with trace: only when already there. */
		if (!ev->ip_suppressed && d->ip != ev->variant.async_paging.ip)
			return CFG_ABORT;
		break;
	case ptev_async_vmcs:
		if (!ev->ip_suppressed && d->ip != ev->variant.async_vmcs.ip)
			return CFG_ABORT;
		break;
	case ptev_tsx:
		if (!ev->ip_suppressed &&
		    cfg_reach(d, blk, ev->variant.tsx.ip) < 0)
			return CFG_ABORT;
		break;
	case ptev_exstop:
		if (d->enabled && !ev->ip_suppressed &&
		    cfg_reach(d, blk, ev->variant.exstop.ip) < 0)
			return CFG_ABORT;
		break;
	case ptev_mwait:
		if (d->enabled && !ev->ip_suppressed &&
		    cfg_reach(d, blk, ev->variant.mwait.ip) < 0)
			return CFG_ABORT;
		break;
	default:
		return CFG_ABORT;	/* ptwrite */
	}
	return cfg_status(d, pts_event_pending);
}

/*
 * pt_blk_proceed_trailing_event: is there an event at the current IP?
 * (No instruction is ever postponed here: the events that postpone one
 * are refused.)
 */
static int
cfg_trailing_event(struct cfg_dec *d)
{
	const struct pt_event *ev = &d->ev;
	int rc = cfg_fetch_event(d);

	if (rc <= 0)
		return rc < 0 ? rc : cfg_status(d, 0);
	switch (ev->type) {
	case ptev_disabled:
		break;
	case ptev_async_disabled:
		if (d->ip == ev->variant.async_disabled.at)
			return cfg_status(d, pts_event_pending);
		break;
	case ptev_async_branch:
		if (d->ip == ev->variant.async_branch.from)
			return cfg_status(d, pts_event_pending);
		break;
	case ptev_paging:
	case ptev_vmcs:
		if (!d->enabled)
			return cfg_status(d, pts_event_pending);
		break;
	case ptev_exec_mode:
		if (ev->ip_suppressed || d->ip == ev->variant.exec_mode.ip)
			return cfg_status(d, pts_event_pending);
		break;
	case ptev_async_paging:
		if (ev->ip_suppressed || d->ip == ev->variant.async_paging.ip)
			return cfg_status(d, pts_event_pending);
		break;
	case ptev_async_vmcs:
		if (ev->ip_suppressed || d->ip == ev->variant.async_vmcs.ip)
			return cfg_status(d, pts_event_pending);
		break;
	case ptev_tsx:
		if (ev->ip_suppressed || d->ip == ev->variant.tsx.ip)
			return cfg_status(d, pts_event_pending);
		break;
	case ptev_exstop:
		if (ev->ip_suppressed || !d->enabled ||
		    d->ip == ev->variant.exstop.ip)
			return cfg_status(d, pts_event_pending);
		break;
	case ptev_mwait:
		if (ev->ip_suppressed || !d->enabled ||
		    d->ip == ev->variant.mwait.ip)
			return cfg_status(d, pts_event_pending);
		break;
	case ptev_enabled:
	case ptev_overflow:
	case ptev_stop:
	case ptev_pwre:
	case ptev_pwrx:
	case ptev_tick:
	case ptev_cbr:
	case ptev_mnt:
		return cfg_status(d, pts_event_pending);
	default:
		return CFG_ABORT;
	}
	return cfg_status(d, 0);
}

/* pt_blk_sync_reset, then pt_blk_start on the status of a sync. */
static void
cfg_reset(struct cfg_dec *d)
{
	d->mode = ptem_unknown;
	d->ip = 0;
	d->status = 0;
	d->enabled = 0;
	d->process_event = 0;
	d->top = d->bottom = 0;
	memset(&d->ev, 0, sizeof(d->ev));
}

static int
cfg_start(struct cfg_dec *d, int st)
{
	if (st < 0)
		return st == -pte_eos ? st : CFG_ABORT;
	d->status = st;
	if (!(st & pts_ip_suppressed))
		d->enabled = 1;
	return cfg_trailing_event(d);
}

int
cfg_sync_set(struct cfg_dec *d, uint64_t off)
{
	cfg_reset(d);
	if (d->pq_refused)
		return CFG_ABORT;
	return cfg_start(d, d->pq ? cfg_q(d, pq_sync_set(d->pq, &d->ip, off)) :
	    pt_qry_sync_set(d->q, &d->ip, off));
}

int
cfg_sync_forward(struct cfg_dec *d)
{
	cfg_reset(d);
	if (d->pq_refused)
		return CFG_ABORT;
	return cfg_start(d, d->pq ? cfg_q(d, pq_sync_forward(d->pq, &d->ip)) :
	    pt_qry_sync_forward(d->q, &d->ip));
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
	rc = cfg_fetch_event(d);
	if (rc < 0)
		return rc;
	if (rc > 0)
		return cfg_proceed_event(d, blk);
	if (!d->enabled)
		return (d->status & pts_eos) ? -pte_eos : CFG_ABORT;
	rc = cfg_proceed(d, blk, 0, 0, &w);
	if (rc == CFG_AT_BRANCH) {
		rc = cfg_branch(d, w);
		if (rc < 0)
			return rc == -pte_eos ? rc : CFG_ABORT;
	} else if (rc != CFG_AT_SECTION) {
		return CFG_ABORT;
	}
	return cfg_trailing_event(d);
}

/* Remember that walk @from's branch @which leads to walk @to. */
static void
cfg_link(struct cfg_dec *d, uint32_t from, int which, uint32_t to)
{
	uint32_t n;
	uint32_t (*ns)[2];

	if (from >= d->nsucc) {
		n = d->nsucc ? d->nsucc : 1024;
		while (n <= from)
			n *= 2;
		ns = realloc(d->succ, n * sizeof(*ns));
		if (ns == NULL)
			return;		/* only a cache */
		memset(ns + d->nsucc, 0, (n - d->nsucc) * sizeof(*ns));
		d->succ = ns;
		d->nsucc = n;
	}
	d->succ[from][which] = to + 1;
}

int
cfg_run(struct cfg_dec *d, cfg_walk_fn fn, void *arg)
{
	const struct walk *w, *base = walk_array(d->wc);
	const struct walk_tr *tr;
	uint64_t nw, ni;
	uint32_t k, from = 0, next = 0, at;
	int isid, rc, taken = 0, n = 0, link = 0;

	if (d->process_event || !d->enabled || d->mode == ptem_unknown ||
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
			if (link)
				cfg_link(d, from, !taken, (uint32_t)(w - base));
		}
		if (w->len == 0 || w->term == WK_NONE ||
		    w->len > CFG_MAX_NINSN)
			break;		/* cfg_next's blocks */
		if (w->ntr > 0) {
			tr = walk_tr_array(d->wc) + w->tr;
			for (k = 0; k < w->ntr; k++)
				if (tr[k].kind == WK_CALL)
					cfg_push(d, tr[k].from + tr[k].size);
		}
		n++;
		fn(arg, w);	/* w stays valid until the next walk_get */
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
			at = (uint32_t)(w - base);
			if (at < d->nsucc)
				next = d->succ[at][!taken];
			from = at;
			link = next == 0;
		} else {
			d->ip = w->term_ip;
			rc = cfg_branch(d, w);
			if (rc < 0)
				return rc == -pte_eos ? rc : CFG_ABORT;
		}
		if (d->status & (pts_event_pending | pts_eos))
			return cfg_trailing_event(d);
	}
	return n > 0 ? cfg_status(d, 0) : CFG_SLOW;
}

int
cfg_event(struct cfg_dec *d, struct pt_event *uev)
{
	struct pt_event *ev = &d->ev;

	if (!d->process_event)
		return CFG_ABORT;
	switch (ev->type) {
	case ptev_enabled:
		if (ev->variant.enabled.ip == d->ip)
			ev->variant.enabled.resumed = 1;
		if (ev->status_update || ev->ip_suppressed || d->enabled)
			return CFG_ABORT;
		d->ip = ev->variant.enabled.ip;
		d->enabled = 1;
		break;
	case ptev_async_disabled:
		if (d->ip != ev->variant.async_disabled.at)
			return CFG_ABORT;
		/* fall through */
	case ptev_disabled:
		if (ev->status_update || !d->enabled)
			return CFG_ABORT;
		d->enabled = 0;
		break;
	case ptev_async_branch:
		if (d->ip != ev->variant.async_branch.from ||
		    ev->status_update || !d->enabled)
			return CFG_ABORT;
		d->ip = ev->variant.async_branch.to;
		break;
	case ptev_async_paging:
		if (!ev->ip_suppressed && d->ip != ev->variant.async_paging.ip)
			return CFG_ABORT;
		break;
	case ptev_async_vmcs:
		if (!ev->ip_suppressed && d->ip != ev->variant.async_vmcs.ip)
			return CFG_ABORT;
		break;
	case ptev_paging:
	case ptev_vmcs:
		/* The image does not depend on the address space here. */
		break;
	case ptev_overflow:
		if (ev->status_update)
			return CFG_ABORT;
		d->enabled = !ev->ip_suppressed;
		d->ip = ev->ip_suppressed ? 0 : ev->variant.overflow.ip;
		break;
	case ptev_exec_mode:
		if (!ev->ip_suppressed && d->ip != ev->variant.exec_mode.ip)
			return CFG_ABORT;
		if (ev->status_update && d->enabled &&
		    d->mode != ptem_unknown &&
		    d->mode != (int)ev->variant.exec_mode.mode)
			return CFG_ABORT;
		d->mode = ev->variant.exec_mode.mode;
		break;
	case ptev_tsx:
		if (!ev->ip_suppressed && d->ip != ev->variant.tsx.ip)
			return CFG_ABORT;
		break;
	case ptev_stop:
		if (ev->status_update || d->enabled)
			return CFG_ABORT;
		break;
	case ptev_exstop:
		if (!ev->ip_suppressed && d->enabled &&
		    d->ip != ev->variant.exstop.ip)
			return CFG_ABORT;
		break;
	case ptev_mwait:
		if (!ev->ip_suppressed && d->enabled &&
		    d->ip != ev->variant.mwait.ip)
			return CFG_ABORT;
		break;
	case ptev_pwre:
	case ptev_pwrx:
	case ptev_tick:
	case ptev_cbr:
	case ptev_mnt:
		break;
	default:
		return CFG_ABORT;
	}
	d->process_event = 0;
	*uev = *ev;
	return cfg_trailing_event(d);
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
