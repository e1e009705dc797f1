/* SPDX-License-Identifier: MIT */
/*
 * The reconstruction's stack primitives (see stack.h): frames pushed and
 * popped on a thread's stack are logged, and the log is replayed to the
 * view with times when a batch of same-timestamp events is applied.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "grow.h"
#include "out.h"
#include "stack.h"
#include "sym.h"
#include "view.h"

int
stack_is_name(uint32_t name, const uint32_t set[3])
{
	return name != 0 && (name == set[0] || name == set[1] ||
	    name == set[2]);
}

/*
 * The log.
 */

struct op *
stack_log_add(struct recon *r, int kind)
{
	struct op *o;

	if (fxt_grow((void **)&r->log, &r->caplog, r->nlog + 1,
	    sizeof(*r->log)) < 0) {
		r->err = -MT_E_NOMEM;
		return NULL;
	}
	o = &r->log[r->nlog++];
	memset(o, 0, sizeof(*o));
	o->kind = (uint8_t)kind;
	o->tref = STACK_NONE;
	return o;
}

/*
 * Replay the log to the view from @start, spreading @left ns over the
 * frames that begin, then forget it.  Entries go to the track the last
 * OP_TRACK named (the thread's own track before any).
 */
void
stack_log_replay(struct recon *r, struct rthread *rt, uint64_t start,
    uint64_t left)
{
	uint64_t used = 0;
	uint32_t n = 0, i;

	for (i = 0; i < r->nlog; i++)
		n += r->log[i].share;
	for (i = 0; i < r->nlog; i++) {
		struct op *o = &r->log[i];

		if (!o->fixed)
			o->ts = start + used;
		else if (o->tref != STACK_NONE)
			o->ts = r->log[o->tref].ts;
		switch (o->kind) {
		case OP_BEGIN:
			view_begin(r->v, rt->shown, o->ts, &o->f);
			break;
		case OP_END:
			view_end(r->v, rt->shown, o->ts);
			break;
		case OP_SEG_PUSH:
			view_seg_push(r->v, rt->shown, o->ts);
			break;
		case OP_SEG_POP:
			view_seg_pop(r->v, rt->shown, o->ts);
			break;
		case OP_TRIGGER:
			view_trigger(r->v, rt->shown, o->ts, o->f.addr, o->f.name);
			break;
		case OP_TRACK:
			rt->shown = o->track;
			break;
		}
		if (o->share) {
			uint64_t share = left / n--;

			used += share;
			left -= share;
		}
	}
	for (i = 0; i < rt->nseg; i++)
		if (rt->seg[i].create_op != STACK_NONE) {
			rt->seg[i].create = r->log[rt->seg[i].create_op].ts;
			rt->seg[i].create_op = STACK_NONE;
		}
	r->nlog = 0;
}

/*
 * Stack primitives.
 */

struct rseg *
stack_topseg(struct rthread *rt)
{
	return &rt->seg[rt->nseg - 1];
}

int
stack_seg_empty(struct rthread *rt)
{
	return rt->nfr == stack_topseg(rt)->base;
}

/*
 * Push @f.  An inferred frame begins when its segment began; a frame
 * that @shares takes a share of the batch's time.
 */
struct rframe *
stack_push(struct recon *r, struct rthread *rt, const struct frame *f,
    uint32_t fn, int real, int share)
{
	struct rframe *x;
	struct op *o;

	if (fxt_grow((void **)&rt->fr, &rt->capfr, rt->nfr + 1,
	    sizeof(*rt->fr)) < 0 || (o = stack_log_add(r, OP_BEGIN)) == NULL) {
		r->err = -MT_E_NOMEM;
		return NULL;
	}
	x = &rt->fr[rt->nfr++];
	memset(x, 0, sizeof(*x));
	x->f = *f;
	x->fn = fn;
	x->real = (uint8_t)real;
	o->f = *f;
	o->share = (uint8_t)share;
	if (f->flags & FR_INFERRED) {
		o->fixed = 1;
		o->ts = stack_topseg(rt)->create;
		o->tref = stack_topseg(rt)->create_op;
		o->share = 0;
		r->st->inferred++;
	}
	r->st->frames++;
	return x;
}

void
stack_pop(struct recon *r, struct rthread *rt)
{
	rt->nfr--;
	stack_log_add(r, OP_END);
	/* A handler whose interrupted frame ended is no longer open. */
	while (rt->nmark > 0 && rt->mark[rt->nmark - 1].depth > rt->nfr)
		rt->nmark--;
	if (rt->intx && rt->txdepth > rt->nfr)
		rt->txdepth = rt->nfr;
}

/* End every frame of the current segment from index @k up. */
void
stack_pop_to(struct recon *r, struct rthread *rt, uint32_t k)
{
	while (rt->nfr > k && rt->nfr > stack_topseg(rt)->base)
		stack_pop(r, rt);
}

/* Index of the innermost real frame of the current segment, -1 if none. */
int
stack_top_real(struct rthread *rt)
{
	uint32_t i = rt->nfr;

	while (i > stack_topseg(rt)->base) {
		i--;
		if (rt->fr[i].real)
			return (int)i;
	}
	return -1;
}

/* The innermost real frame below index @below, -1 if none. */
int
stack_real_below(struct rthread *rt, int below)
{
	while (below > (int)stack_topseg(rt)->base) {
		below--;
		if (rt->fr[below].real)
			return below;
	}
	return -1;
}

/*
 * Push the function at (@loc, @addr) and the functions inlined there,
 * entered by the call at @site (0 none).  With FR_INFERRED in @flags the
 * frames begin at the segment start.  Returns the index of the real
 * frame (pushing may move the stack: no pointer), -1 if out of memory.
 */
int
stack_push_loc(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr,
    uint32_t flags, uint64_t site)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);
	struct frame f = { .addr = addr, .flags = flags };
	struct rframe *y;
	uint32_t k, op0 = 0;
	int x = (int)rt->nfr;

	if (l == NULL) {
		f.name = addr ? sym_addr_name(r->sym, addr) : r->n_unknown;
		y = stack_push(r, rt, &f, 0, 1, 1);
		if (y == NULL)
			return -1;
		y->site = site;
		return x;
	}
	for (k = 0; k < l->nframes; k++) {
		f.name = l->frames[k].name;
		f.file = l->frames[k].file;
		f.line = l->frames[k].line;
		f.flags = flags | (k ? FR_INLINED : 0);
		y = stack_push(r, rt, &f, l->frames[k].fn, k == 0, k == 0);
		if (y == NULL)
			return -1;
		if (k == 0) {
			y->site = site;
			op0 = r->nlog - 1;
		} else if (!(flags & FR_INFERRED)) {
			/* Inlined frames begin with their function. */
			r->log[r->nlog - 1].fixed = 1;
			r->log[r->nlog - 1].tref = op0;
		}
	}
	return x;
}

/* End the innermost real frame of the segment and what is above it. */
void
stack_pop_real(struct recon *r, struct rthread *rt)
{
	int ti = stack_top_real(rt);

	if (ti >= 0)
		stack_pop_to(r, rt, (uint32_t)ti);
}

uint32_t
stack_ident(struct recon *r, uint32_t loc)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);

	return l ? l->frames[0].fn : 0;
}

/*
 * Frame @x runs function @id: its own, or the one a resume at its stopped
 * address showed (a symbol boundary inside the code, see gap_resume).
 */
int
stack_runs(const struct rframe *x, uint32_t id)
{
	return x->fn == id || (x->alias != 0 && x->alias == id);
}

/* @addr is known to be inside its function, not at its entry. */
int
stack_mid_function(struct recon *r, uint32_t loc, uint64_t addr)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);

	return l != NULL && l->frames[0].start != 0 &&
	    addr != l->frames[0].start;
}

/* @addr is known to be its function's entry. */
int
stack_at_entry(struct recon *r, uint32_t loc, uint64_t addr)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);

	return l != NULL && l->frames[0].start != 0 &&
	    addr == l->frames[0].start;
}

int
stack_loc_named(struct recon *r, uint32_t loc, const uint32_t set[3])
{
	const struct sym_loc *l = sym_loc(r->sym, loc);

	return l != NULL && stack_is_name(l->frames[0].name, set);
}

/* Make the inlined frames above the top real frame match @loc's chain. */
void
stack_set_inline(struct recon *r, struct rthread *rt, uint32_t loc)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);
	struct frame f = { .flags = FR_INLINED };
	int ti = stack_top_real(rt);
	uint32_t m = 0, k;

	if (l == NULL || ti < 0 || rt->fr[ti].fn != l->frames[0].fn)
		return;
	/* Nothing inlined there, nothing above the frame (nearly always). */
	if (l->nframes == 1 && (uint32_t)ti + 1 == rt->nfr)
		return;
	while ((uint32_t)ti + 1 + m < rt->nfr && m + 1 < l->nframes &&
	    rt->fr[ti + 1 + m].fn == l->frames[m + 1].fn)
		m++;
	stack_pop_to(r, rt, (uint32_t)ti + 1 + m);
	for (k = m + 1; k < l->nframes && !r->err; k++) {
		f.name = l->frames[k].name;
		f.file = l->frames[k].file;
		f.line = l->frames[k].line;
		f.addr = l->addr;
		stack_push(r, rt, &f, l->frames[k].fn, 0, 0);
	}
}

/*
 * Replace the top real frame by the function at (@loc, @addr): a tail
 * call, a PLT stub, a return into another function.  The new frame
 * returns where the old one would have.
 */
void
stack_replace_top(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr)
{
	int ti = stack_top_real(rt);
	uint64_t site = 0;
	uint32_t prev = 0;
	int x;

	if (ti >= 0) {
		site = rt->fr[ti].site;
		prev = rt->fr[ti].fn;
		stack_pop_to(r, rt, (uint32_t)ti);
	}
	x = stack_push_loc(r, rt, loc, addr, 0, site);
	if (x >= 0)
		rt->fr[x].prev = prev;
}

/*
 * magic-trace's check_current_symbol: execution is in the function of
 * (@loc, @addr).  An empty segment infers it; a different function on
 * top is replaced, when the new one has an identity (mt: code named by
 * address only proves nothing).
 */
void
stack_check_current(struct recon *r, struct rthread *rt, uint32_t loc,
    uint64_t addr)
{
	uint32_t id = stack_ident(r, loc);
	int ti;

	if (stack_seg_empty(rt)) {
		if (addr != 0 || loc != 0)
			stack_push_loc(r, rt, loc, addr, FR_INFERRED | FR_OUTER, 0);
		return;
	}
	ti = stack_top_real(rt);
	if (id == 0 || ti < 0)
		return;
	if (stack_runs(&rt->fr[ti], id))
		stack_set_inline(r, rt, loc);
	else if (!(rt->fr[ti].f.flags & FR_SYNTH))
		stack_replace_top(r, rt, loc, addr);
}

/* The innermost real frame at or below @from entered by a call that
 * returns to @to (mt: a non-local exit), -1 if none. */
int
stack_find_site(struct rthread *rt, int from, uint64_t to)
{
	for (; from >= (int)stack_topseg(rt)->base; from--) {
		const struct rframe *x = &rt->fr[from];

		if (x->real && x->site != 0 && to > x->site &&
		    to - x->site <= CALL_MAXLEN)
			return from;
	}
	return -1;
}

/* The innermost real frame below @below running function @id, -1. */
int
stack_find_fn(struct rthread *rt, int below, uint32_t id)
{
	while ((below = stack_real_below(rt, below)) >= 0)
		if (stack_runs(&rt->fr[below], id) &&
		    !(rt->fr[below].f.flags & FR_SYNTH))
			return below;
	return -1;
}

void
stack_open_window(struct recon *r, struct rthread *rt, uint64_t create)
{
	if (fxt_grow((void **)&rt->seg, &rt->capseg, 1, sizeof(*rt->seg)) < 0 ||
	    stack_log_add(r, OP_SEG_PUSH) == NULL) {
		r->err = -MT_E_NOMEM;
		return;
	}
	rt->nseg = 1;
	memset(rt->seg, 0, sizeof(*rt->seg));
	rt->seg[0].create = create;
	rt->seg[0].create_op = r->nlog - 1;
	rt->live = 1;
	rt->nmark = 0;
	rt->intx = 0;
}

/* End every frame and segment of @rt. */
void
stack_close_window(struct recon *r, struct rthread *rt)
{
	while (rt->nseg > 0) {
		stack_pop_to(r, rt, 0);
		rt->nseg--;
		stack_log_add(r, OP_SEG_POP);
	}
	rt->live = 0;
	rt->nmark = 0;
	rt->intx = 0;
}
