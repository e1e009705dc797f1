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

static int
by_time(const void *a, const void *b)
{
	const struct epoch_sec *x = *(const struct epoch_sec *const *)a;
	const struct epoch_sec *y = *(const struct epoch_sec *const *)b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x < y ? -1 : x > y;	/* then in the order added */
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

int
epochs_build(struct epochs *ep, const struct epoch_sec *secs, size_t n,
    struct pt_image_section_cache *isc)
{
	const struct epoch_sec **ord = NULL;
	uint8_t *repl = NULL;
	uint64_t *t = NULL;
	size_t i, j, nt = 0, e;
	int rc = -MT_E_NOMEM;

	memset(ep, 0, sizeof(*ep));
	if (n < 2 || n > EPOCHS_MAX_SECS)
		return 0;
	ord = malloc(n * sizeof(*ord));
	repl = calloc(n, 1);
	t = malloc(n * sizeof(*t));
	if (ord == NULL || repl == NULL || t == NULL)
		goto out;
	for (i = 0; i < n; i++)
		ord[i] = &secs[i];
	qsort(ord, n, sizeof(*ord), by_time);
	/* A timed section over one seen before it (other bytes) replaces. */
	for (i = 0; i < n; i++) {
		if (ord[i]->time == 0)
			continue;
		for (j = 0; j < i && !repl[i]; j++)
			if (ord[j]->isid != ord[i]->isid &&
			    overlap(ord[j], ord[i]))
				repl[i] = 1;
		if (repl[i] && (nt == 0 || t[nt - 1] != ord[i]->time))
			t[nt++] = ord[i]->time;
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
	for (e = 0; e < ep->n; e++) {
		uint64_t end = e + 1 < ep->n ? ep->start[e + 1] : UINT64_MAX;

		ep->img[e] = pt_image_alloc(NULL);
		if (ep->img[e] == NULL)
			goto out;
		/* (A section libipt refuses is refused in every image.) */
		for (i = 0; i < n; i++)
			if (ord[i]->time < end || !repl[i])
				(void)pt_image_add_cached(ep->img[e], isc,
				    ord[i]->isid, NULL);
	}
	rc = 0;
out:
	if (rc < 0)
		epochs_release(ep);
	free(ord);
	free(repl);
	free(t);
	return rc;
}

struct pt_image *
epochs_at(const struct epochs *ep, uint64_t time, uint64_t *next)
{
	size_t lo = 0, hi;

	*next = UINT64_MAX;
	if (ep->n == 0)
		return NULL;
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
	return ep->img[lo];
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
	memset(ep, 0, sizeof(*ep));
}
