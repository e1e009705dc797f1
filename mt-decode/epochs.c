/* SPDX-License-Identifier: MIT */
/*
 * The images of a process over time (epochs.h).
 */
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "epochs.h"
#include "err.h"

/* More sections than this in one process: one image, no epochs (the
 * overlap test below is quadratic). */
#define EPOCHS_MAX_SECS 8192

/* A section's place in time order: its time, then the order added. */
struct epoch_ord {
	uint64_t time;
	size_t i;		/* index in the order added */
};

static int
by_time(const void *a, const void *b)
{
	const struct epoch_ord *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
overlap(const struct epoch_sec *a, const struct epoch_sec *b)
{
	return a->vaddr < b->vaddr + b->size && b->vaddr < a->vaddr + a->size;
}

/* @secs (@n, in the order added) into ep->sec in time order. */
static int
sort_by_time(struct epochs *ep, const struct epoch_sec *secs, size_t n)
{
	struct epoch_ord *o = malloc(n * sizeof(*o));
	size_t i;

	if (o == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < n; i++) {
		o[i].time = secs[i].time;
		o[i].i = i;
	}
	qsort(o, n, sizeof(*o), by_time);
	for (i = 0; i < n; i++)
		ep->sec[i] = secs[o[i].i];
	free(o);
	return 0;
}

int
epochs_build(struct epochs *ep, const struct epoch_sec *secs, size_t n,
    struct pt_image_section_cache *isc)
{
	uint64_t *t = NULL;
	size_t i, j, nt = 0;
	int rc = -MT_E_NOMEM;

	memset(ep, 0, sizeof(*ep));
	if (n < 2 || n > EPOCHS_MAX_SECS)
		return 0;
	ep->sec = malloc(n * sizeof(*ep->sec));
	ep->repl = calloc(n, 1);
	t = malloc(n * sizeof(*t));
	if (ep->sec == NULL || ep->repl == NULL || t == NULL)
		goto out;
	ep->nsec = n;
	ep->isc = isc;
	if ((rc = sort_by_time(ep, secs, n)) < 0)
		goto out;
	rc = -MT_E_NOMEM;
	/* A timed section over one seen before it (other bytes) replaces. */
	for (i = 0; i < n; i++) {
		if (ep->sec[i].time == 0)
			continue;
		for (j = 0; j < i && !ep->repl[i]; j++)
			if (ep->sec[j].isid != ep->sec[i].isid &&
			    overlap(&ep->sec[j], &ep->sec[i]))
				ep->repl[i] = 1;
		if (ep->repl[i] && (nt == 0 || t[nt - 1] != ep->sec[i].time))
			t[nt++] = ep->sec[i].time;
	}
	if (nt == 0) {
		rc = 0;
		goto out;
	}
	qsort(t, nt, sizeof(*t), u64_cmp);
	ep->start = malloc((nt + 1) * sizeof(*ep->start));
	ep->img = calloc(nt + 1, sizeof(*ep->img));
	if (ep->start == NULL || ep->img == NULL)
		goto out;
	ep->start[0] = 0;
	memcpy(ep->start + 1, t, nt * sizeof(*t));
	ep->n = nt + 1;
	free(t);
	return 0;
out:
	/* also with no replacement: one image serves */
	epochs_release(ep);
	free(t);
	return rc;
}

/* The image of epoch @e: every section before its end (or replacing
 * nothing), in time order.  NULL when out of memory. */
static struct pt_image *
epoch_image(const struct epochs *ep, size_t e)
{
	uint64_t end = e + 1 < ep->n ? ep->start[e + 1] : UINT64_MAX;
	struct pt_image *img = pt_image_alloc(NULL);
	size_t i;

	/* (A section libipt refuses is refused in every image.) */
	for (i = 0; img != NULL && i < ep->nsec; i++)
		if (ep->sec[i].time < end || !ep->repl[i])
			(void)pt_image_add_cached(img, ep->isc,
			    ep->sec[i].isid, NULL);
	return img;
}

int
epochs_at(struct epochs *ep, uint64_t time, uint64_t *next,
    struct pt_image **img)
{
	size_t lo = 0, hi;

	*next = UINT64_MAX;
	*img = NULL;
	if (ep->n == 0)
		return 0;
	hi = ep->n;
	while (hi - lo > 1) {	/* the last epoch starting at or before */
		size_t m = lo + (hi - lo) / 2;

		if (ep->start[m] <= time)
			lo = m;
		else
			hi = m;
	}
	if (lo + 1 < ep->n)
		*next = ep->start[lo + 1];
	if (ep->img[lo] == NULL && (ep->img[lo] = epoch_image(ep, lo)) == NULL)
		return -MT_E_NOMEM;
	*img = ep->img[lo];
	return 0;
}

void
epochs_release(struct epochs *ep)
{
	size_t i;

	if (ep->img != NULL)
		for (i = 0; i < ep->n; i++)
			pt_image_free(ep->img[i]);
	free(ep->img);
	free(ep->start);
	free(ep->sec);
	free(ep->repl);
	memset(ep, 0, sizeof(*ep));
}
