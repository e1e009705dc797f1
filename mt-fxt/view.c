/* SPDX-License-Identifier: MIT */
/*
 * The view (see view.h).  Per thread it mirrors the reconstruction's stack
 * and marks each frame pending, shown or hidden:
 *
 *  - region: the time the filters keep (--time, --around-trigger,
 *    --between).  When a region opens, the frames open at that moment are
 *    shown again as inferred frames beginning at the region start; when
 *    it closes, every shown frame ends.  Outside a region nothing is shown.
 *  - depth: frames at depth >= --max-depth are hidden (their time stays in
 *    the ancestor); without it, Perfetto's limit applies: the frame at
 *    depth FXT_DEPTH_CAP is shown as `[deeper frames folded]` and the ones
 *    above it are hidden.  An outer inferred frame begins at its
 *    segment's start and encloses everything the segment showed before,
 *    which it makes one level deeper: it is shown only while all of that
 *    stays below the cap.
 *  - --min-duration: a frame stays pending until it has lasted NS; one
 *    that ends sooner is dropped (with everything it held).
 *
 * Segments are passed on as they open and close while a region is open,
 * and every open one is re-opened (at the region start) when a region
 * opens, so the output sees balanced segments.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "grow.h"
#include "opts.h"
#include "out.h"
#include "sym.h"
#include "thrtab.h"
#include "view.h"

enum { PENDING = 0, SHOWN = 1, HIDDEN = 2 };

struct ventry {
	struct frame f;		/* as the reconstruction gave it */
	uint64_t start;		/* begin time (after clamping) */
	uint8_t state;		/* PENDING, SHOWN or HIDDEN */
	uint8_t marker;		/* shown as the fold marker */
};

struct vseg {
	uint32_t base;		/* first entry index */
	uint64_t create;	/* start time */
	uint32_t top;		/* 1 + the deepest depth shown inside it (as
				 * deepened by later outer frames), 0 none */
	uint8_t out;		/* passed on to the output */
};

struct vthread {
	const struct sym_thread *t;
	int8_t excluded;	/* not in --tid */
	uint8_t active;		/* a region is open */
	uint8_t between;	/* --between: inside START..STOP */
	struct ventry *e;	/* the stack, bottom first */
	uint32_t n, cap;
	uint32_t pending;	/* lowest pending index, n if none */
	struct vseg *s;
	uint32_t ns, caps;
	uint64_t now;		/* latest time seen */
	uint8_t seen;		/* now is set */
	uint64_t rstart;	/* start of the open region */
};

struct view {
	const struct fxt_opts *o;	/* options (not owned) */
	struct out *out;		/* hooks (not owned) */
	struct sym *sym;
	struct fxt_stats *st;
	struct thrtab thr;		/* struct vthread by sym_thread index */
	uint32_t cap;			/* depth: entries at >= cap hidden */
	int marker;			/* cap is Perfetto's: show a marker */
	uint32_t n_marker;		/* "[deeper frames folded]" */
	uint32_t n_start, n_stop;	/* --between names, 0 none */
	uint64_t nshown;		/* shown frames open, all threads */
	int err;
};

int
view_new(struct view **vp, const struct fxt_opts *o, struct out *out,
    struct sym *sym, struct fxt_stats *st)
{
	struct view *v = calloc(1, sizeof(*v));

	*vp = NULL;
	if (v == NULL)
		return -MT_E_NOMEM;
	v->o = o;
	v->out = out;
	v->sym = sym;
	v->st = st;
	v->cap = FXT_DEPTH_CAP;
	v->marker = 1;
	if (o->max_depth && o->max_depth <= FXT_DEPTH_CAP) {
		v->cap = o->max_depth;
		v->marker = 0;
	}
	v->n_marker = sym_cintern(sym, "[deeper frames folded]");
	if (o->between_start) {
		v->n_start = sym_cintern(sym, o->between_start);
		v->n_stop = sym_cintern(sym, o->between_stop);
	}
	if (sym_error(sym)) {
		free(v);
		return -MT_E_NOMEM;
	}
	*vp = v;
	return 0;
}

static void
vthread_fini(void *p)
{
	struct vthread *vt = p;

	free(vt->e);
	free(vt->s);
}

void
view_free(struct view *v)
{
	if (v == NULL)
		return;
	thrtab_free(&v->thr, vthread_fini);
	free(v);
}

int
view_error(const struct view *v)
{
	return v->err;
}

_Static_assert(FXT_MAX_TIDS <= 64, "fxt_stats.tids_seen is a 64-bit mask");

/* Whether thread @tid is shown; notes the --tid entries it matches. */
static int
tid_wanted(const struct view *v, uint32_t tid)
{
	size_t i;
	int found = 0;

	if (v->o->ntids == 0)
		return 1;
	for (i = 0; i < v->o->ntids; i++)
		if (v->o->tids[i] == tid) {
			v->st->tids_seen |= 1ull << i;
			found = 1;
		}
	return found;
}

static struct vthread *
get(struct view *v, const struct sym_thread *t)
{
	struct vthread *vt;
	int fresh;

	vt = thrtab_get(&v->thr, t->index, sizeof(*vt), &fresh);
	if (vt == NULL) {
		v->err = -MT_E_NOMEM;
		return NULL;
	}
	if (fresh) {
		vt->t = t;
		vt->excluded = !tid_wanted(v, t->tid);
		/* Without --time or --between the region is always open. */
		vt->active = !v->o->have_time && v->o->between_start == NULL;
	}
	return vt->excluded ? NULL : vt;
}

/* Show entry @i (its ancestors are shown or hidden already). */
static void
show(struct view *v, struct vthread *vt, uint32_t i)
{
	struct ventry *x = &vt->e[i];
	struct frame f;

	x->state = SHOWN;
	v->nshown++;
	v->st->written++;
	if (x->marker) {
		f = (struct frame){ .name = v->n_marker, .flags = FR_SYNTH };
		v->out->ops->begin(v->out, vt->t, x->start, &f);
	} else {
		v->out->ops->begin(v->out, vt->t, x->start, &x->f);
	}
}

/* Show the pending frames that have lasted long enough by @now. */
static void
settle(struct view *v, struct vthread *vt, uint64_t now)
{
	while (vt->pending < vt->n) {
		struct ventry *x = &vt->e[vt->pending];

		if (x->state == PENDING) {
			if (now - x->start < v->o->min_duration)
				return;
			show(v, vt, vt->pending);
		}
		vt->pending++;
	}
}

/*
 * State of a new entry at index @i with @flags, in segment @s (the
 * innermost open one, NULL none).  Keeps the depth below the cap.
 */
static uint8_t
initial_state(struct view *v, struct vthread *vt, uint32_t i, uint32_t flags,
    struct vseg *s, uint8_t *marker)
{
	*marker = 0;
	if (!vt->active)
		return HIDDEN;
	if ((flags & FR_OUTER) && s != NULL) {
		/* Below everything @s showed: all of it one deeper. */
		if (i >= v->cap || s->top >= v->cap) {
			v->st->folded++;
			return HIDDEN;
		}
		s->top = s->top > 0 && s->top + 1 > i + 1 ? s->top + 1 : i + 1;
		return PENDING;
	}
	if (i > v->cap || (i == v->cap && !v->marker)) {
		v->st->folded++;
		return HIDDEN;
	}
	if (i == v->cap) {
		v->st->folded++;
		*marker = 1;
	}
	if (s != NULL && s->top < i + 1)
		s->top = i + 1;
	return PENDING;
}

static void
out_seg_push(struct view *v, struct vthread *vt, struct vseg *s, uint64_t ts)
{
	s->out = 1;
	s->create = ts;
	v->out->ops->seg_push(v->out, vt->t, ts);
}

/* Open a region at @ts: re-open segments, show open frames as inferred. */
static void
region_open(struct view *v, struct vthread *vt, uint64_t ts)
{
	uint32_t i, k = 0;

	vt->active = 1;
	vt->rstart = ts;
	vt->pending = vt->n;
	for (i = 0; i < vt->ns; i++)
		vt->s[i].top = 0;
	for (i = 0; i < vt->n; i++) {
		uint8_t marker;

		while (k < vt->ns && vt->s[k].base <= i)
			out_seg_push(v, vt, &vt->s[k++], ts);
		vt->e[i].start = ts;
		vt->e[i].f.flags |= FR_INFERRED;
		vt->e[i].f.flags &= ~(uint32_t)FR_OUTER;
		vt->e[i].state = initial_state(v, vt, i, vt->e[i].f.flags,
		    k > 0 ? &vt->s[k - 1] : NULL, &marker);
		vt->e[i].marker = marker;
		/* Frames going on across the region start are shown whole:
		 * they are not short, and must precede inner segments. */
		if (vt->e[i].state == PENDING)
			show(v, vt, i);
	}
	while (k < vt->ns)
		out_seg_push(v, vt, &vt->s[k++], ts);
}

/* Close the region at @ts: end what is shown, close segments. */
static void
region_close(struct view *v, struct vthread *vt, uint64_t ts)
{
	uint32_t i = vt->n, k = vt->ns;

	while (i > 0) {
		struct ventry *x = &vt->e[--i];

		while (k > 0 && vt->s[k - 1].base > i) {
			if (vt->s[--k].out)
				v->out->ops->seg_pop(v->out, vt->t, ts);
			vt->s[k].out = 0;
		}
		if (x->state == SHOWN) {
			v->st->written++;
			v->out->ops->end(v->out, vt->t, ts, x->marker ?
			    &(struct frame){ .name = v->n_marker,
			    .flags = FR_SYNTH } : &x->f);
			v->nshown--;
		} else if (x->state == PENDING)
			v->st->filtered++;
		x->state = HIDDEN;
	}
	while (k > 0) {
		if (vt->s[--k].out)
			v->out->ops->seg_pop(v->out, vt->t, ts);
		vt->s[k].out = 0;
	}
	vt->pending = vt->n;
	vt->active = 0;
}

/*
 * Move the thread's clock to @ts and apply --time: a region opens when
 * the clock reaches FROM (at FROM if the thread was there before, so the
 * frames open then are shown from FROM) and closes at TO, even when no
 * event of the thread falls inside.
 */
static void
advance(struct view *v, struct vthread *vt, uint64_t ts)
{
	const struct fxt_opts *o = v->o;
	uint64_t prev = vt->seen ? vt->now : ts;

	if (!vt->seen || ts > vt->now)
		vt->now = ts;
	vt->seen = 1;
	if (!o->have_time)
		return;
	if (!vt->active && vt->now >= o->time_from && prev <= o->time_to &&
	    (o->between_start == NULL || vt->between))
		region_open(v, vt, prev > o->time_from ? prev : o->time_from);
	if (vt->active && vt->now > o->time_to)
		region_close(v, vt, o->time_to);
}

void
view_seg_push(struct view *v, const struct sym_thread *t, uint64_t ts)
{
	struct vthread *vt = get(v, t);
	struct vseg *s;

	if (vt == NULL)
		return;
	if (fxt_grow((void **)&vt->s, &vt->caps, vt->ns + 1,
	    sizeof(*vt->s)) < 0) {
		v->err = -MT_E_NOMEM;
		return;
	}
	s = &vt->s[vt->ns++];
	s->base = vt->n;
	s->create = ts;
	s->out = 0;
	s->top = 0;
	advance(v, vt, ts);
	/*
	 * The output orders events by segment: frames still pending below
	 * a new segment are decided now, and kept (with --min-duration, a
	 * frame holding a system call or interrupt is not dropped).
	 */
	if (vt->active)
		for (; vt->pending < vt->n; vt->pending++)
			if (vt->e[vt->pending].state == PENDING)
				show(v, vt, vt->pending);
	if (vt->active && !s->out)
		out_seg_push(v, vt, s, ts < vt->rstart ? vt->rstart : ts);
}

void
view_seg_pop(struct view *v, const struct sym_thread *t, uint64_t ts)
{
	struct vthread *vt = get(v, t);

	if (vt == NULL || vt->ns == 0)
		return;
	advance(v, vt, ts);
	if (vt->s[vt->ns - 1].out)
		v->out->ops->seg_pop(v->out, vt->t, ts);
	vt->ns--;
	/* Its frames were inside the enclosing segment's. */
	if (vt->ns > 0 && vt->s[vt->ns - 1].top < vt->s[vt->ns].top)
		vt->s[vt->ns - 1].top = vt->s[vt->ns].top;
}

void
view_begin(struct view *v, const struct sym_thread *t, uint64_t ts,
    const struct frame *f)
{
	struct vthread *vt = get(v, t);
	struct ventry *x;
	uint8_t marker;

	if (vt == NULL)
		return;
	advance(v, vt, ts);
	if (v->n_start && f->name == v->n_start && !vt->between &&
	    !(f->flags & (FR_OUTER | FR_INLINED))) {
		vt->between = 1;
		v->st->between_hits++;
		if (!vt->active && (!v->o->have_time ||
		    (vt->now >= v->o->time_from && vt->now <= v->o->time_to)))
			region_open(v, vt, ts);
	} else if (v->n_stop && f->name == v->n_stop && vt->between &&
	    !(f->flags & (FR_OUTER | FR_INLINED))) {
		vt->between = 0;
		if (vt->active)
			region_close(v, vt, ts);
	}
	if (fxt_grow((void **)&vt->e, &vt->cap, vt->n + 1,
	    sizeof(*vt->e)) < 0) {
		v->err = -MT_E_NOMEM;
		return;
	}
	x = &vt->e[vt->n];
	x->f = *f;
	x->start = vt->active && ts < vt->rstart ? vt->rstart : ts;
	/* An outer frame starts with its segment as the output knows it. */
	if (vt->active && (f->flags & FR_OUTER) && vt->ns > 0 &&
	    vt->s[vt->ns - 1].out)
		x->start = vt->s[vt->ns - 1].create;
	x->state = initial_state(v, vt, vt->n, f->flags,
	    vt->ns > 0 ? &vt->s[vt->ns - 1] : NULL, &marker);
	x->marker = marker;
	if (!vt->active)
		v->st->filtered++;
	vt->n++;
	settle(v, vt, vt->now);
}

void
view_end(struct view *v, const struct sym_thread *t, uint64_t ts)
{
	struct vthread *vt = get(v, t);
	struct ventry *x;

	if (vt == NULL || vt->n == 0)
		return;
	advance(v, vt, ts);
	settle(v, vt, ts);
	x = &vt->e[vt->n - 1];
	if (x->state == SHOWN) {
		v->nshown--;
		v->st->written++;
		v->out->ops->end(v->out, vt->t, ts,
		    x->marker ? &(struct frame){ .name = v->n_marker,
		    .flags = FR_SYNTH } : &x->f);
	} else if (x->state == PENDING) {
		/* Shorter than --min-duration: its time stays in the parent. */
		v->st->dropped++;
		if (vt->n < 2 || vt->e[vt->n - 2].state != PENDING)
			v->st->dropped_ns += ts - x->start;
	}
	vt->n--;
	if (vt->pending > vt->n)
		vt->pending = vt->n;
}

void
view_trigger(struct view *v, const struct sym_thread *t, uint64_t ts,
    uint64_t ip, uint32_t what)
{
	struct vthread *vt = get(v, t);

	if (vt == NULL)
		return;
	advance(v, vt, ts);
	settle(v, vt, vt->now);
	if (vt->active) {
		v->st->written++;
		v->out->ops->trigger(v->out, vt->t, ts, ip, what);
	}
}

uint64_t
view_open_frames(const struct view *v)
{
	return v->nshown;
}

int
view_split(struct view *v, int (*swap)(void *ctx), void *ctx)
{
	uint32_t i;
	int rc;

	for (i = 0; i < v->thr.n; i++) {
		struct vthread *vt = thrtab_at(&v->thr, i);

		if (vt == NULL || vt->excluded || !vt->active)
			continue;
		region_close(v, vt, vt->now);
		vt->active = 2;	/* to reopen */
	}
	rc = swap(ctx);
	for (i = 0; i < v->thr.n; i++) {
		struct vthread *vt = thrtab_at(&v->thr, i);

		if (vt == NULL || vt->excluded || vt->active != 2)
			continue;
		vt->active = 0;
		region_open(v, vt, vt->now);
	}
	return rc;
}
