/* SPDX-License-Identifier: MIT */
/*
 * Runs of per-CPU buffers and their merge by start time (runs.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "events.h"
#include "runs.h"

#define RUNS_COPY (1u << 20)	/* bytes read at once */

void
runs_init(struct runs *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->fd = -1;
}

struct run_rec *
runs_add(struct runs *rs, uint64_t key, uint32_t tid)
{
	struct run_rec *r;

	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 16;

		r = realloc(rs->r, cap * sizeof(*r));
		if (r == NULL)
			return NULL;
		rs->r = r;
		rs->cap = cap;
	}
	r = &rs->r[rs->n++];
	memset(r, 0, sizeof(*r));
	r->key = key;
	r->tid = tid;
	return r;
}

void
runs_release(struct runs *rs)
{
	if (rs->fd >= 0)
		close(rs->fd);
	free(rs->r);
	runs_init(rs);
}

/* A run in merge order, and which of its records are written. */
struct runs_pos {
	const struct run_rec *rec;
	int fd;
	uint32_t tid;
	size_t pos;		/* its place in the output */
	uint8_t first, last;	/* the tid's first / last run */
};

static int
runs_by_tid(const void *a, const void *b)
{
	const struct runs_pos *x = *(const struct runs_pos *const *)a;
	const struct runs_pos *y = *(const struct runs_pos *const *)b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Does run @i of @a start before run @j of @b (a before b in buffers)? */
static int
runs_before(const struct runs *a, size_t i, const struct runs *b, size_t j)
{
	if (a->r[i].key != b->r[j].key)
		return a->r[i].key < b->r[j].key;
	return a->cpu < b->cpu;
}

/* Copy bytes [@from, @to) of @fd to @w. */
static int
runs_copy(int fd, uint64_t from, uint64_t to, struct mt_evw *w, char *buf)
{
	while (from < to) {
		size_t want = to - from > RUNS_COPY ? RUNS_COPY :
		    (size_t)(to - from);
		ssize_t k = pread(fd, buf, want, (off_t)from);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;	/* the file shrank */
			return -MT_E_IO;
		}
		if (mt_evw_raw(w, buf, (size_t)k) < 0)
			return -MT_E_IO;
		from += (uint64_t)k;
	}
	return 0;
}

int
runs_merge(const struct runs *rs, size_t n, struct mt_evw *w)
{
	struct runs_pos *p = NULL, **byt = NULL;
	size_t *next = NULL, total = 0, i, k, best;
	char *buf = NULL;
	int rc = -MT_E_NOMEM;

	for (i = 0; i < n; i++)
		total += rs[i].n;
	if (total == 0)
		return 0;
	p = calloc(total, sizeof(*p));
	byt = calloc(total, sizeof(*byt));
	next = calloc(n, sizeof(*next));
	buf = malloc(RUNS_COPY);
	if (p == NULL || byt == NULL || next == NULL || buf == NULL)
		goto out;
	/* k-way merge: the buffer whose next run starts first. */
	for (k = 0; k < total; k++) {
		best = n;
		for (i = 0; i < n; i++)
			if (next[i] < rs[i].n && (best == n ||
			    runs_before(&rs[i], next[i], &rs[best],
			    next[best])))
				best = i;
		p[k].rec = &rs[best].r[next[best]++];
		p[k].fd = rs[best].fd;
		p[k].tid = p[k].rec->tid;
		p[k].pos = k;
		byt[k] = &p[k];
	}
	qsort(byt, total, sizeof(*byt), runs_by_tid);
	for (k = 0; k < total; k++) {
		byt[k]->first = k == 0 || byt[k - 1]->tid != byt[k]->tid;
		byt[k]->last = k + 1 == total || byt[k + 1]->tid != byt[k]->tid;
	}
	rc = 0;
	for (k = 0; rc == 0 && k < total; k++) {
		const struct run_rec *r = p[k].rec;

		rc = runs_copy(p[k].fd, p[k].first ? r->head : r->body,
		    p[k].last ? r->stop : r->tail, w, buf);
	}
out:
	free(buf);
	free(next);
	free(byt);
	free(p);
	return rc;
}
