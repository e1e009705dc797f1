/* SPDX-License-Identifier: MIT */
/* Events in time order across threads (see order.h). */
#include <stdlib.h>

#include "err.h"
#include "grow.h"
#include "order.h"

int
order_add(struct order *o, const struct oev *e)
{
	if (fxt_grow((void **)&o->v, &o->cap, o->n + 1, sizeof(*o->v)) < 0)
		return -MT_E_NOMEM;
	o->v[o->n] = *e;
	o->v[o->n].seq = o->n;
	o->n++;
	return 0;
}

static int
by_key(const void *pa, const void *pb)
{
	const struct oev *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int
order_flush(struct order *o, int (*take)(void *ctx, const struct oev *e),
    void *ctx)
{
	uint32_t i;
	int ret = 0;

	qsort(o->v, o->n, sizeof(*o->v), by_key);
	for (i = 0; i < o->n && ret == 0; i++)
		ret = take(ctx, &o->v[i]);
	o->n = 0;
	return ret;
}

void
order_free(struct order *o)
{
	free(o->v);
	o->v = NULL;
	o->n = o->cap = 0;
}
