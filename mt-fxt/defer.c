/* SPDX-License-Identifier: MIT */
/* Holding back events at a segment's start time (see defer.h). */
#include <stdlib.h>
#include <string.h>

#include "defer.h"
#include "err.h"
#include "grow.h"
#include "out.h"
#include "sym.h"
#include "thrtab.h"

struct ditem {
	int kind;		/* DEFER_BEGIN or DEFER_END */
	uint64_t ts;
	struct frame f;
};

struct dscope {
	uint64_t create;	/* the segment's start time */
	uint32_t first;		/* its first item in the thread's queue */
	uint32_t front;		/* where the next outer inlined frame goes */
};

struct dthread {
	struct ditem *q;	/* held items of all open scopes */
	uint32_t nq, capq;
	struct dscope *s;
	uint32_t ns, caps;
};

struct defer {
	defer_emit_fn emit;
	void *ctx;
	struct thrtab thr;	/* struct dthread by sym_thread index */
	int err;
};

int
defer_new(struct defer **dp, defer_emit_fn emit, void *ctx)
{
	struct defer *d = calloc(1, sizeof(*d));

	*dp = d;
	if (d == NULL)
		return -MT_E_NOMEM;
	d->emit = emit;
	d->ctx = ctx;
	return 0;
}

static void
dthread_fini(void *p)
{
	struct dthread *dt = p;

	free(dt->q);
	free(dt->s);
}

void
defer_free(struct defer *d)
{
	if (d == NULL)
		return;
	thrtab_free(&d->thr, dthread_fini);
	free(d);
}

int
defer_error(const struct defer *d)
{
	return d->err;
}

static struct dthread *
get(struct defer *d, const struct sym_thread *t)
{
	struct dthread *dt;
	int fresh;

	dt = thrtab_get(&d->thr, t->index, sizeof(*dt), &fresh);
	if (dt == NULL)
		d->err = -MT_E_NOMEM;
	return dt;
}

void
defer_seg_push(struct defer *d, const struct sym_thread *t, uint64_t ts)
{
	struct dthread *dt = get(d, t);
	struct dscope *s;

	if (dt == NULL)
		return;
	if (fxt_grow((void **)&dt->s, &dt->caps, dt->ns + 1,
	    sizeof(*dt->s)) < 0) {
		d->err = -MT_E_NOMEM;
		return;
	}
	s = &dt->s[dt->ns++];
	s->create = ts;
	s->first = s->front = dt->nq;
}

void
defer_seg_pop(struct defer *d, const struct sym_thread *t)
{
	struct dthread *dt = get(d, t);
	uint32_t i, first;

	if (dt == NULL || dt->ns == 0)
		return;
	first = dt->s[--dt->ns].first;
	/*
	 * A segment opened at its parent's start time: its events sort
	 * together with the parent's and nest inside them, so they stay
	 * held, after the parent's, until the parent closes.
	 */
	if (dt->ns > 0 && dt->s[dt->ns - 1].create == dt->s[dt->ns].create)
		return;
	for (i = first; i < dt->nq; i++)
		d->emit(d->ctx, t, dt->q[i].kind, dt->q[i].ts, &dt->q[i].f);
	dt->nq = first;
}

void
defer_event(struct defer *d, const struct sym_thread *t, int kind,
    uint64_t ts, const struct frame *f)
{
	struct dthread *dt = get(d, t);
	struct dscope *s;
	uint32_t at;

	if (dt == NULL)
		return;
	if (dt->ns == 0 || dt->s[dt->ns - 1].create != ts) {
		d->emit(d->ctx, t, kind, ts, f);
		return;
	}
	s = &dt->s[dt->ns - 1];
	if (fxt_grow((void **)&dt->q, &dt->capq, dt->nq + 1,
	    sizeof(*dt->q)) < 0) {
		d->err = -MT_E_NOMEM;
		return;
	}
	if (kind == DEFER_BEGIN && (f->flags & FR_OUTER)) {
		at = (f->flags & FR_INLINED) ? s->front : s->first;
		s->front = at + 1;
	} else {
		at = dt->nq;
	}
	memmove(&dt->q[at + 1], &dt->q[at], (dt->nq - at) * sizeof(*dt->q));
	dt->q[at].kind = kind;
	dt->q[at].ts = ts;
	dt->q[at].f = *f;
	dt->nq++;
}
