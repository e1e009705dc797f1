/* SPDX-License-Identifier: MIT */
/* Telling a resumed goroutine apart after it left again (see gorsim.h). */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "events.h"
#include "gor.h"
#include "gorsim.h"
#include "grow.h"
#include "stack.h"

/* A frame of a bare stack. */
struct gsf {
	uint64_t site;		/* its call instruction, 0 not seen */
	uint32_t id, alias;	/* stack_runs() */
	uint8_t m;		/* runtime.mcall/morestack */
	uint8_t sched;		/* runtime.schedule */
	uint8_t exit;		/* goexit */
};

/* A goroutine: its frames, bottom first (those below are not known). */
struct gsg {
	struct gsf *f;
	uint32_t n, cap;
	uint8_t gone;		/* it exited */
};

struct gsw {
	struct gsg *g;		/* the parked goroutines, then new ones */
	uint32_t ng, capg;
	uint32_t cur;		/* the one running */
	int root;		/* the candidate the resume took it for */
	uint32_t rootg;		/* its goroutine */
	uint8_t dead;		/* a return disagreed */
};

struct gsim {
	struct gsw w[GSIM_MAX_WORLDS];
	uint32_t nw;
	uint8_t kernel;		/* in a kernel entry */
	uint8_t over;		/* a split past GSIM_MAX_WORLDS */
	uint64_t first;		/* gsim_first_park() */
};

/* What an event says, the same for every world. */
struct gsev {
	uint8_t kind;		/* MT_EV_CALL, _RET, _JMP; 0 the gogo switch */
	uint64_t a[2];
	uint32_t ret_id;	/* RET: the function returned to */
	struct gsf f;		/* CALL, JMP: the target */
};

static void
world_free(struct gsw *w)
{
	uint32_t i;

	for (i = 0; i < w->ng; i++)
		free(w->g[i].f);
	free(w->g);
	memset(w, 0, sizeof(*w));
}

static int
push(struct gsg *g, const struct gsf *f)
{
	if (fxt_grow((void **)&g->f, &g->cap, g->n + 1, sizeof(*g->f)) < 0)
		return -MT_E_NOMEM;
	g->f[g->n++] = *f;
	return 0;
}

/* A new goroutine in @w; its index, or -MT_E_NOMEM. */
static int
add_g(struct gsw *w)
{
	if (fxt_grow((void **)&w->g, &w->capg, w->ng + 1, sizeof(*w->g)) < 0)
		return -MT_E_NOMEM;
	memset(&w->g[w->ng], 0, sizeof(w->g[w->ng]));
	return (int)w->ng++;
}

static int
world_copy(struct gsw *d, const struct gsw *s)
{
	uint32_t i;

	memset(d, 0, sizeof(*d));
	d->cur = s->cur;
	d->root = s->root;
	d->rootg = s->rootg;
	for (i = 0; i < s->ng; i++) {
		struct gsg *g;

		if (add_g(d) < 0)
			return -MT_E_NOMEM;
		g = &d->g[i];
		g->gone = s->g[i].gone;
		if (s->g[i].n == 0)
			continue;
		g->f = malloc(s->g[i].n * sizeof(*g->f));
		if (g->f == NULL)
			return -MT_E_NOMEM;
		memcpy(g->f, s->g[i].f, s->g[i].n * sizeof(*g->f));
		g->n = g->cap = s->g[i].n;
	}
	return 0;
}

static void
describe(struct recon *r, uint32_t loc, uint64_t site, struct gsf *f)
{
	memset(f, 0, sizeof(*f));
	f->site = site;
	f->id = stack_ident(r, loc);
	f->m = (uint8_t)stack_loc_named(r, loc, r->n_gogo_dst);
	f->sched = (uint8_t)stack_loc_named(r, loc, r->n_sched);
	f->exit = (uint8_t)stack_loc_named(r, loc, r->n_goexit);
}

/*
 * The goroutine running in @w leaves at gogo's jump to @addr, as
 * go_switch and gor_leave take it: without runtime.schedule above its
 * innermost mcall/morestack it goes on in that call's caller; else it
 * parks there (exits: goexit, or none open), and the goroutine parked
 * after a call @addr returns to goes on, a new one if none; several:
 * the world splits.  Returns 0 or -MT_E_NOMEM.
 */
static int
leave(struct gsim *s, struct gsw *w, uint64_t addr)
{
	struct gsg *g = &w->g[w->cur];
	uint32_t i, n = 0, first = 0;
	int k = (int)g->n - 1, sched = 0, ng;

	for (; k >= 0 && !g->f[k].m; k--)
		sched |= g->f[k].sched;
	if (k >= 0 && !sched) {
		g->n = (uint32_t)k;
		return 0;
	}
	if (k < 0 || (k > 0 && g->f[k - 1].exit) ||
	    ((uint32_t)k + 1 < g->n && g->f[k + 1].exit)) {
		g->gone = 1;
		g->n = 0;
	} else {
		g->n = (uint32_t)k + 1;
		if (s->first == 0 && w->cur == w->rootg)
			s->first = g->f[k].site;
	}
	for (i = 0; i < w->ng; i++) {
		const struct gsg *x = &w->g[i];

		if (x->gone || x->n == 0 || !x->f[x->n - 1].m ||
		    !gor_returns_to(x->f[x->n - 1].site, addr))
			continue;
		if (n++ == 0) {
			first = i;
			continue;
		}
		/* another it may be: a world of its own */
		if (s->nw == GSIM_MAX_WORLDS) {
			s->over = 1;
			return 0;
		}
		if (world_copy(&s->w[s->nw], w) < 0)
			return -MT_E_NOMEM;
		s->w[s->nw].cur = i;
		s->w[s->nw].g[i].n--;
		s->nw++;
	}
	if (n > 0) {
		w->cur = first;
		w->g[first].n--;	/* its mcall/morestack returns */
		return 0;
	}
	if ((ng = add_g(w)) < 0)
		return ng;
	w->cur = (uint32_t)ng;
	return 0;
}

/* @x in world @w: 0, or -MT_E_NOMEM. */
static int
step(struct gsim *s, struct gsw *w, const struct gsev *x)
{
	struct gsg *g = &w->g[w->cur];

	switch (x->kind) {
	case 0:
		return leave(s, w, x->a[1]);
	case MT_EV_CALL:
		return push(g, &x->f);
	case MT_EV_JMP:
		if (g->n > 0) {
			struct gsf *t = &g->f[g->n - 1];
			uint64_t site = t->site;

			*t = x->f;
			t->site = site;
		}
		return 0;
	case MT_EV_RET:
		if (g->n == 0)
			return 0;	/* below what is known of it */
		g->n--;
		if (g->f[g->n].site != 0)
			w->dead |= !gor_returns_to(g->f[g->n].site, x->a[1]);
		else if (g->n > 0 && x->ret_id != 0 && g->f[g->n - 1].id != 0)
			w->dead |= g->f[g->n - 1].id != x->ret_id &&
			    g->f[g->n - 1].alias != x->ret_id;
		return 0;
	}
	return 0;
}

static int
same_frame(const struct gsf *a, const struct gsf *b)
{
	return a->site == b->site && a->id == b->id && a->alias == b->alias &&
	    a->m == b->m && a->sched == b->sched && a->exit == b->exit;
}

/* @a and @b hold the same stacks and run the same goroutine. */
static int
same_world(const struct gsw *a, const struct gsw *b)
{
	uint32_t i, k;

	if (a->ng != b->ng || a->cur != b->cur)
		return 0;
	for (i = 0; i < a->ng; i++) {
		const struct gsg *x = &a->g[i], *y = &b->g[i];

		if (x->gone != y->gone || x->n != y->n)
			return 0;
		for (k = 0; k < x->n; k++)
			if (!same_frame(&x->f[k], &y->f[k]))
				return 0;
	}
	return 1;
}

/*
 * After a switch: a world the same as one before it is dropped, as
 * nothing that follows can tell them apart (the goroutines swapped
 * where their frames were the same): either is the trace's.
 */
static void
merge(struct gsim *s)
{
	uint32_t i, j;

	for (i = 1; i < s->nw; i++)
		for (j = 0; j < i && !s->w[i].dead; j++)
			if (!s->w[j].dead && same_world(&s->w[i], &s->w[j]))
				s->w[i].dead = 1;
}

/* Drop the dead worlds; then the verdict (gsim_event). */
static int
verdict(struct gsim *s)
{
	uint32_t i, j = 0;

	for (i = 0; i < s->nw; i++) {
		if (s->w[i].dead)
			world_free(&s->w[i]);
		else if (j++ != i)
			s->w[j - 1] = s->w[i];
	}
	for (i = j; i < s->nw; i++)
		memset(&s->w[i], 0, sizeof(s->w[i]));
	s->nw = j;
	if (s->over || s->nw == 0)
		return GOR_NEW;
	for (i = 1; i < s->nw; i++)
		if (s->w[i].root != s->w[0].root)
			return GOR_WAIT;
	return s->w[0].root;
}

int
gsim_event(struct recon *r, struct rthread *rt, const struct bev *e)
{
	struct gsim *s = rt->gsim;
	struct gsev x;
	uint32_t i, n;

	memset(&x, 0, sizeof(x));
	switch (e->kind) {
	case MT_EV_SYSCALL:
	case MT_EV_IRQ:
		s->kernel |= e->a[1] != 0;
		return GOR_WAIT;
	case MT_EV_SYSRET:
	case MT_EV_IRET:
		s->kernel = 0;
		return GOR_WAIT;
	case MT_EV_RET:
	case MT_EV_JMP:
		if (stack_loc_named(r, e->loc[0], r->n_gogo) &&
		    !stack_loc_named(r, e->loc[1], r->n_gogo)) {
			s->kernel = 0;
			break;	/* x.kind 0: the switch */
		}
		/* FALLTHROUGH */
	case MT_EV_CALL:
		if (s->kernel)
			return GOR_WAIT;
		x.kind = e->kind;
		if (e->kind == MT_EV_RET)
			x.ret_id = stack_ident(r, e->loc[1]);
		else
			describe(r, e->loc[1], e->a[0], &x.f);
		break;
	default:
		return GOR_WAIT;
	}
	x.a[0] = e->a[0];
	x.a[1] = e->a[1];
	/* the worlds split off now run from the next event */
	for (i = 0, n = s->nw; i < n && !s->over; i++)
		if (!s->w[i].dead && step(s, &s->w[i], &x) < 0)
			return r->err = -MT_E_NOMEM, GOR_NEW;
	if (x.kind == 0)
		merge(s);
	return verdict(s);
}

/* Add parked goroutine @p to world @w.  Returns 0 or -MT_E_NOMEM. */
static int
add_parked(struct recon *r, struct gsw *w, const struct rpark *p)
{
	uint32_t k;
	int g = add_g(w);

	for (k = 0; g >= 0 && k < p->nfr; k++) {
		const struct rframe *f = &p->fr[k];
		struct gsf b;

		if (!f->real)
			continue;
		memset(&b, 0, sizeof(b));
		b.site = f->site;
		b.id = f->fn;
		b.alias = f->alias;
		b.m = (uint8_t)stack_is_name(f->f.name, r->n_gogo_dst);
		b.sched = (uint8_t)stack_is_name(f->f.name, r->n_sched);
		b.exit = (uint8_t)stack_is_name(f->f.name, r->n_goexit);
		if (push(&w->g[g], &b) < 0)
			return -MT_E_NOMEM;
	}
	return g < 0 ? g : 0;
}

/*
 * World @w, where candidate @root resumed: the goroutines parked on the
 * thread, then the candidates parked on others.
 */
static int
world_init(struct recon *r, struct rthread *rt, struct gsw *w,
    uint32_t root)
{
	uint32_t i;

	w->root = (int)root;
	for (i = 0; i < rt->npark; i++) {
		if (rt->cand[root].of == rt && rt->park[i].id == rt->cand[root].id)
			w->cur = w->ng;
		if (add_parked(r, w, &rt->park[i]) < 0)
			return -MT_E_NOMEM;
	}
	for (i = 0; i < rt->ncand; i++) {
		const struct rpark *p = gor_cand_park(rt, i);

		if (p == NULL || rt->cand[i].of == rt)
			continue;
		if (i == root)
			w->cur = w->ng;
		if (add_parked(r, w, p) < 0)
			return -MT_E_NOMEM;
	}
	w->rootg = w->cur;
	w->g[w->cur].n--;	/* its mcall/morestack returns */
	return 0;
}

int
gsim_start(struct recon *r, struct rthread *rt, uint32_t n)
{
	struct gsim *s;
	uint32_t i, k;
	int v = GOR_WAIT;

	gsim_stop(rt);
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return r->err = -MT_E_NOMEM, GOR_NEW;
	rt->gsim = s;
	for (i = 0; i < rt->ncand; i++) {
		if (!rt->cand[i].ok || gor_cand_park(rt, i) == NULL)
			continue;
		if (s->nw == GSIM_MAX_WORLDS)
			return GOR_NEW;
		if (world_init(r, rt, &s->w[s->nw++], i) < 0)
			return r->err = -MT_E_NOMEM, GOR_NEW;
	}
	for (k = 0; k < n && v == GOR_WAIT; k++)
		v = gsim_event(r, rt, &rt->pend[k].e);
	return v;
}

uint64_t
gsim_first_park(const struct rthread *rt)
{
	return rt->gsim != NULL ? rt->gsim->first : 0;
}

void
gsim_stop(struct rthread *rt)
{
	uint32_t i;

	if (rt->gsim == NULL)
		return;
	for (i = 0; i < rt->gsim->nw; i++)
		world_free(&rt->gsim->w[i]);
	free(rt->gsim);
	rt->gsim = NULL;
}
