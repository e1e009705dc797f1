/* SPDX-License-Identifier: MIT */
/*
 * Go's goroutines (see gor.h).  The stream carries no
 * stack pointer, so which goroutine gogo resumes is told by where it
 * jumps: the return address of the runtime.mcall (or morestack) call the
 * goroutine parked in, saved in its gobuf.pc.  Most goroutines park in
 * the same place (gopark), so when several could resume there, the
 * returns that follow tell them apart: the first return below the
 * resumed frame goes back to its caller, which only some of them have.
 * The events are held until one is left, then applied to its stack; when
 * it leaves before one is, gorsim.c follows it.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "events.h"
#include "gor.h"
#include "gorsim.h"
#include "grow.h"
#include "stack.h"
#include "sym.h"

int
gor_returns_to(uint64_t site, uint64_t addr)
{
	return site != 0 && addr > site && addr - site <= CALL_MAXLEN;
}

/* Log that what follows goes to @t's track. */
static void
to_track(struct recon *r, struct rthread *rt, struct sym_thread *t)
{
	struct op *o = stack_log_add(r, OP_TRACK);

	if (o != NULL)
		o->track = t;
	rt->track = t;
}

/* @t has nothing open: a later new goroutine may run on it. */
static void
spare(struct recon *r, struct rthread *rt, struct sym_thread *t)
{
	if (fxt_grow((void **)&rt->spare, &rt->capspare, rt->nspare + 1,
	    sizeof(*rt->spare)) < 0) {
		r->err = -MT_E_NOMEM;
		return;
	}
	rt->spare[rt->nspare++] = t;
}

/* End parked goroutine @i's frames and window, and forget it. */
static void
retire(struct recon *r, struct rthread *rt, uint32_t i)
{
	struct rpark *p = &rt->park[i];
	struct sym_thread *back = rt->track;
	uint32_t k;

	to_track(r, rt, p->t);
	for (k = 0; k < p->nfr; k++)
		stack_log_add(r, OP_END);
	stack_log_add(r, OP_SEG_POP);
	to_track(r, rt, back);
	spare(r, rt, p->t);
	free(p->fr);
	memmove(p, p + 1, (rt->npark - i - 1) * sizeof(*p));
	rt->npark--;
}

/* The runtime.goexit0 above index @k or runtime.goexit1 below it. */
static int
exiting(struct recon *r, struct rthread *rt, int k)
{
	int b = stack_real_below(rt, k);
	uint32_t i;

	if (b >= 0 && stack_is_name(rt->fr[b].f.name, r->n_goexit))
		return 1;
	for (i = (uint32_t)k + 1; i < rt->nfr; i++)
		if (rt->fr[i].real)
			return stack_is_name(rt->fr[i].f.name, r->n_goexit);
	return 0;
}

/*
 * (mt) The goroutine leaving at frame @k is one of several parked ones
 * gogo resumed at @addr, never told apart, and it parks again where it
 * resumed, right above the resumed frame (a goroutine preempted again
 * in morestack before any return): nothing below was learned, so the
 * parked ones stay as they were, and it is still one of them.  The
 * frames from the resumed one's up to @k are that call's (a jump keeps
 * the call's site).
 */
static int
again(struct rthread *rt, int k, uint64_t addr)
{
	uint64_t site = rt->fr[k].site;
	int b = k, i;

	if (addr == 0 || !gor_returns_to(site, addr))
		return 0;
	for (i = k; (i = stack_real_below(rt, i)) >= 0 &&
	    rt->fr[i].site == site;)
		b = i;
	/* @b the lowest of them: the resumed frame is the bottom one */
	return (i = stack_real_below(rt, b)) >= 0 &&
	    stack_real_below(rt, i) < 0;
}

void
gor_leave(struct recon *r, struct rthread *rt, int k)
{
	struct rpark *p;
	uint64_t addr = rt->gagain;

	rt->gagain = 0;
	if (k < 0 || rt->nseg != 1 || exiting(r, rt, k) ||
	    again(rt, k, addr)) {
		/* Nothing to resume: its frames end, its track is free. */
		stack_close_window(r, rt);
		rt->live = 1;
		rt->tparked = 0;
		return;
	}
	stack_pop_to(r, rt, (uint32_t)k + 1);
	if (rt->npark == GOR_MAX_PARK)
		retire(r, rt, 0);
	if (fxt_grow((void **)&rt->park, &rt->cappark, rt->npark + 1,
	    sizeof(*rt->park)) < 0) {
		r->err = -MT_E_NOMEM;
		return;
	}
	p = &rt->park[rt->npark];
	memset(p, 0, sizeof(*p));
	p->fr = malloc(rt->nfr * sizeof(*p->fr));
	if (p->fr == NULL) {
		r->err = -MT_E_NOMEM;
		return;
	}
	rt->npark++;
	memcpy(p->fr, rt->fr, rt->nfr * sizeof(*p->fr));
	p->nfr = rt->nfr;
	p->t = rt->track;
	p->id = ++r->gor_ids;
	p->ptime = rt->btime;
	/* A window opened in this batch starts at the batch's time. */
	p->create = rt->seg[0].create_op == STACK_NONE ? rt->seg[0].create :
	    rt->btime;
	/* Its frames stay open on its track: no end is logged. */
	rt->nfr = 0;
	rt->nmark = 0;
	rt->intx = 0;
	rt->tparked = 1;
}

/* A new candidate parked on @of: its gcand, NULL if out of memory. */
static struct gcand *
add_cand(struct recon *r, struct rthread *rt, struct rthread *of)
{
	struct gcand *c;

	if (fxt_grow((void **)&rt->cand, &rt->capcand, rt->ncand + 1,
	    sizeof(*rt->cand)) < 0) {
		r->err = -MT_E_NOMEM;
		return NULL;
	}
	c = &rt->cand[rt->ncand++];
	memset(c, 0, sizeof(*c));
	c->of = of;
	c->k = -1;
	c->ok = 1;
	return c;
}

/*
 * The goroutine below the innermost runtime.mcall/morestack of @rt, with
 * runtime.schedule above it (it parked, but the thread had nothing else
 * to run: gogo did not jump out there), when that call returns to
 * @addr: the index of its mcall/morestack frame, else -1.
 */
static int
asleep(struct recon *r, struct rthread *rt, uint64_t addr)
{
	int k, sched = 0;

	if (!rt->live || rt->nseg != 1 || rt->deciding || rt->tparked)
		return -1;
	for (k = stack_top_real(rt); k >= 0; k = stack_real_below(rt, k)) {
		if (stack_is_name(rt->fr[k].f.name, r->n_gogo_dst))
			break;
		sched |= stack_is_name(rt->fr[k].f.name, r->n_sched);
	}
	return k >= 0 && sched && gor_returns_to(rt->fr[k].site, addr) ?
	    k : -1;
}

/* Add the goroutines parked on @of after a call @addr returns to. */
static void
cands_of(struct recon *r, struct rthread *rt, struct rthread *of,
    uint64_t addr, uint64_t when)
{
	struct gcand *c;
	uint32_t i;
	int k;

	for (i = 0; i < of->npark && !r->err; i++) {
		const struct rpark *p = &of->park[i];

		/* on another thread: parked by now */
		if (gor_returns_to(p->fr[p->nfr - 1].site, addr) &&
		    (of == rt || p->ptime <= when) &&
		    (c = add_cand(r, rt, of)) != NULL)
			c->id = p->id;
	}
	if (of != rt && of->btime <= when &&
	    (k = asleep(r, of, addr)) >= 0 && (c = add_cand(r, rt, of)) != NULL) {
		c->k = k;
		c->site = of->fr[k].site;
		c->fn = of->fr[k].fn;
	}
}

/*
 * (mt) The goroutines parked on other threads of the process that a
 * call @addr returns to, by @when: the Go scheduler moves goroutines
 * between threads (one may sleep in the scheduler since, gogo not having
 * jumped out there).  Returns how many.
 */
static uint32_t
cands_elsewhere(struct recon *r, struct rthread *rt, uint64_t addr,
    uint64_t when)
{
	uint32_t i;

	rt->gwide = 1;
	for (i = 0; rt->t->pid != 0 && i < r->thr.n; i++) {
		struct rthread *of = thrtab_at(&r->thr, i);

		if (of != NULL && of != rt && of->t->pid == rt->t->pid)
			cands_of(r, rt, of, addr, when);
	}
	return rt->ncand;
}

uint32_t
gor_candidates(struct recon *r, struct rthread *rt, uint64_t addr)
{
	rt->ncand = 0;
	rt->gwide = 0;
	cands_of(r, rt, rt, addr, rt->btime);
	return rt->ncand > 0 ? rt->ncand :
	    cands_elsewhere(r, rt, addr, rt->btime);
}

struct rpark *
gor_cand_park(struct rthread *rt, uint32_t i)
{
	struct gcand *c = &rt->cand[i];
	struct rthread *of = c->of;
	uint32_t k;

	if (c->k < 0) {
		for (k = 0; k < of->npark; k++)
			if (of->park[k].id == c->id)
				return &of->park[k];
		return NULL;	/* resumed meanwhile by another thread */
	}
	/* still asleep above it: the frames there are its own */
	if (!of->live || of->nseg != 1 || of->tparked ||
	    (uint32_t)c->k >= of->nfr || of->fr[c->k].site != c->site ||
	    of->fr[c->k].fn != c->fn)
		return NULL;
	c->view.t = of->track;
	c->view.fr = of->fr;
	c->view.nfr = (uint32_t)c->k + 1;
	c->view.create = of->seg[0].create;
	return &c->view;
}

int
gor_enter(struct recon *r, struct rthread *rt, int idx)
{
	struct sym_thread *t;
	struct rthread *of;
	struct rpark *p;

	if (idx == GOR_NEW) {
		if (rt->tparked) {
			/* A track with nothing open, else a new one. */
			if (rt->nspare > 0) {
				t = rt->spare[--rt->nspare];
			} else {
				t = sym_track(r->sym, rt->t, ++rt->ntracks + 1);
				if (t == NULL) {
					r->err = -MT_E_NOMEM;
					return 0;
				}
			}
			to_track(r, rt, t);
			rt->tparked = 0;
		}
		stack_open_window(r, rt, 0);
		return 0;
	}
	if ((p = gor_cand_park(rt, (uint32_t)idx)) == NULL)
		return gor_enter(r, rt, GOR_NEW);
	of = rt->cand[idx].of;
	if (!rt->tparked)
		spare(r, rt, rt->track);	/* its window was closed */
	if (fxt_grow((void **)&rt->fr, &rt->capfr, p->nfr,
	    sizeof(*rt->fr)) < 0 || fxt_grow((void **)&rt->seg, &rt->capseg,
	    1, sizeof(*rt->seg)) < 0) {
		r->err = -MT_E_NOMEM;
		return 0;
	}
	to_track(r, rt, p->t);
	memcpy(rt->fr, p->fr, p->nfr * sizeof(*rt->fr));
	rt->nfr = p->nfr;
	rt->nseg = 1;
	memset(rt->seg, 0, sizeof(*rt->seg));
	rt->seg[0].create = p->create;
	rt->seg[0].create_op = STACK_NONE;
	rt->live = 1;
	rt->tparked = 0;
	free(p->fr);
	memmove(p, p + 1, (size_t)(of->park + of->npark - p - 1) * sizeof(*p));
	of->npark--;
	return 1;
}

void
gor_defer(struct rthread *rt, const struct bev *e, uint64_t ts)
{
	rt->deciding = 1;
	rt->gjump = *e;
	rt->gtime = ts;
	rt->gdepth = rt->gdown = 0;
	rt->gkernel = 0;
	rt->gwatched = 0;
	gsim_stop(rt);
}

int
gor_hold(struct recon *r, struct rthread *rt, uint64_t t, const struct bev *e)
{
	if (fxt_grow((void **)&rt->pend, &rt->cappend, rt->npend + 1,
	    sizeof(*rt->pend)) < 0)
		return r->err = -MT_E_NOMEM;
	rt->pend[rt->npend].t = t;
	rt->pend[rt->npend].e = *e;
	rt->npend++;
	return 0;
}

/*
 * The real frame @down frames below the resumed one (the frame below
 * the mcall/morestack on top), -1 if @p has none.
 */
static int
level(const struct rpark *p, uint32_t down)
{
	int i = (int)p->nfr - 1;	/* the mcall/morestack */

	for (down++; i-- > 0;)
		if (p->fr[i].real && --down == 0)
			return i;
	return -1;
}

/*
 * A return at @e from the frame @rt->gdown below the resumed one: keep
 * the candidates whose frame there was called from where it returns (the
 * call's site), or, for a frame whose call was not seen, whose caller
 * runs the function returned to.
 */
static void
check(struct recon *r, struct rthread *rt, const struct bev *e)
{
	uint32_t id = stack_ident(r, e->loc[1]), i;

	for (i = 0; i < rt->ncand; i++) {
		const struct rpark *p = gor_cand_park(rt, i);
		int x, y, ok;

		if (p == NULL)
			rt->cand[i].ok = 0;
		if (!rt->cand[i].ok || (x = level(p, rt->gdown)) < 0)
			continue;
		if (p->fr[x].site != 0)
			ok = gor_returns_to(p->fr[x].site, e->a[1]);
		else if ((y = level(p, rt->gdown + 1)) >= 0 && id != 0)
			ok = stack_runs(&p->fr[y], id);
		else
			continue;	/* nothing to tell */
		rt->cand[i].ok = (uint8_t)ok;
	}
}

uint32_t
gor_left(struct rthread *rt)
{
	uint32_t i, n = 0;

	for (i = 0; i < rt->ncand; i++) {
		rt->cand[i].ok &= gor_cand_park(rt, i) != NULL;
		n += rt->cand[i].ok;
	}
	return n;
}

/* Worlds' verdict @v: held until they agree, or the events held run out. */
static int
followed(struct rthread *rt, int v)
{
	if (v == GOR_WAIT && rt->npend < GOR_MAX_HELD)
		return GOR_WAIT;
	gsim_stop(rt);
	return v == GOR_WAIT ? GOR_NEW : v;
}

/*
 * (mt) gogo jumps out while several parked goroutines may be the one it
 * resumed: when that one parks elsewhere than where it resumed (it
 * blocked deeper before a return told it), the worlds of gorsim.c
 * follow it.  Returns gor_verdict(), or theirs.
 */
static int
switched(struct recon *r, struct rthread *rt)
{
	uint32_t left = gor_left(rt);
	int v;

	if (left > 1) {
		v = gsim_start(r, rt, rt->gwatched);
		if (!(rt->gdown == 0 && gor_returns_to(gsim_first_park(rt),
		    rt->gjump.a[1])))
			return followed(rt, v);
		gsim_stop(rt);	/* parked again where it resumed: again() */
	}
	rt->gagain = rt->gdown == 0 && left > 1 ? rt->gjump.a[1] : 0;
	return gor_verdict(rt, 1);
}

static int
watch(struct recon *r, struct rthread *rt, const struct bev *e)
{
	rt->gwatched++;
	if (rt->gsim != NULL)
		return followed(rt, gsim_event(r, rt, e));
	switch (e->kind) {
	case MT_EV_CALL:
		rt->gdepth += !rt->gkernel;
		break;
	case MT_EV_SYSCALL:
	case MT_EV_IRQ:
		rt->gkernel |= e->a[1] != 0;
		break;
	case MT_EV_SYSRET:
	case MT_EV_IRET:
		rt->gkernel = 0;
		break;
	case MT_EV_RET:
	case MT_EV_JMP:
		/* gogo jumps out again: the next switch. */
		if (stack_loc_named(r, e->loc[0], r->n_gogo) &&
		    !stack_loc_named(r, e->loc[1], r->n_gogo))
			return switched(r, rt);
		if (e->kind == MT_EV_JMP || rt->gkernel)
			break;
		if (rt->gdepth > 0) {
			rt->gdepth--;
			break;
		}
		check(r, rt, e);
		rt->gdown++;
		break;
	default:
		break;
	}
	return gor_verdict(rt, rt->npend >= GOR_MAX_HELD);
}

int
gor_watch(struct recon *r, struct rthread *rt, const struct bev *e)
{
	uint32_t n, k;
	int v = watch(r, rt, e);

	if (v != GOR_NEW || rt->gwide || gor_left(rt) > 0)
		return v;
	/*
	 * (mt) Every goroutine parked on the thread disagreed: those
	 * parked on others are candidates, the held events watched again.
	 */
	rt->ncand = 0;
	recon_settle(r, rt, rt->gtime, 0);
	if (cands_elsewhere(r, rt, rt->gjump.a[1], rt->gtime) == 0)
		return GOR_NEW;
	n = rt->gwatched;
	gor_defer(rt, &rt->gjump, rt->gtime);
	for (k = 0, v = GOR_WAIT; k < n && v == GOR_WAIT; k++)
		v = watch(r, rt, &rt->pend[k].e);
	return v;
}

int
gor_verdict(struct rthread *rt, int force)
{
	uint32_t i, n = gor_left(rt);
	int last = GOR_NEW;

	if (force)
		gsim_stop(rt);
	for (i = 0; i < rt->ncand; i++)
		if (rt->cand[i].ok)
			last = (int)i;
	if (n == 0)
		return GOR_NEW;
	if (!force)
		return GOR_WAIT;
	return n == 1 ? last : GOR_NEW;
}

void
gor_close(struct recon *r, struct rthread *rt)
{
	while (rt->npark > 0 && !r->err)
		retire(r, rt, rt->npark - 1);
	rt->tparked = 0;
	rt->gagain = 0;
}

void
gor_fini(struct rthread *rt)
{
	uint32_t i;

	for (i = 0; i < rt->npark; i++)
		free(rt->park[i].fr);
	gsim_stop(rt);
	free(rt->cand);
	free(rt->park);
	free(rt->spare);
	free(rt->pend);
}
