/* SPDX-License-Identifier: MIT */
/*
 * The versions of the guest's JIT code (see qcode.h): a copy of every
 * byte recorded, by guest page, with the version it belongs to.
 */
#include <stdlib.h>
#include <string.h>

#include "qcode.h"

#define QC_PAGE		4096
#define QC_SHIFT	12

/* A guest page that held recorded JIT code. */
struct qc_page {
	uint64_t page;			/* guest address >> QC_SHIFT */
	uint32_t ver[QC_PAGE];		/* per byte: 0 never recorded, else
					 * its version (index into q->times
					 * plus one) */
	uint8_t byte[QC_PAGE];		/* the byte recorded last */
};

struct qc {
	struct qc_page **tab;	/* open addressing by page; NULL: free */
	size_t cap, n;		/* slots (a power of two), pages */
	uint64_t *times;	/* times[v - 1]: version v's time,
				 * nondecreasing; version 1 is time 0 */
	size_t ntimes, captimes;
};

struct qc *
qc_new(void)
{
	return calloc(1, sizeof(struct qc));
}

void
qc_free(struct qc *q)
{
	size_t i;

	if (q == NULL)
		return;
	for (i = 0; i < q->cap; i++)
		free(q->tab[i]);
	free(q->tab);
	free(q->times);
	free(q);
}

static size_t
slot_of(uint64_t page, size_t cap)
{
	return (size_t)((page * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static int
grow_tab(struct qc *q)
{
	size_t cap = q->cap ? q->cap * 2 : 256, i, k;
	struct qc_page **t = calloc(cap, sizeof(*t));

	if (t == NULL)
		return -1;
	for (i = 0; i < q->cap; i++) {
		if (q->tab[i] == NULL)
			continue;
		for (k = slot_of(q->tab[i]->page, cap); t[k] != NULL;
		    k = (k + 1) & (cap - 1))
			;
		t[k] = q->tab[i];
	}
	free(q->tab);
	q->tab = t;
	q->cap = cap;
	return 0;
}

/* The page @page, made (all bytes unrecorded) when @make; else NULL. */
static struct qc_page *
page_get(struct qc *q, uint64_t page, int make)
{
	struct qc_page *p;
	size_t k;

	if (q->cap > 0)
		for (k = slot_of(page, q->cap); q->tab[k] != NULL;
		    k = (k + 1) & (q->cap - 1))
			if (q->tab[k]->page == page)
				return q->tab[k];
	if (!make)
		return NULL;
	if ((q->n + 1) * 2 > q->cap && grow_tab(q) < 0)
		return NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->page = page;
	for (k = slot_of(page, q->cap); q->tab[k] != NULL;
	    k = (k + 1) & (q->cap - 1))
		;
	q->tab[k] = p;
	q->n++;
	return p;
}

/* A new version of time @t; returns its number, or 0. */
static uint32_t
new_version(struct qc *q, uint64_t t)
{
	if (q->ntimes == q->captimes) {
		size_t cap = q->captimes ? q->captimes * 2 : 64;
		uint64_t *n = realloc(q->times, cap * sizeof(*n));

		if (n == NULL || cap > UINT32_MAX)
			return 0;
		q->times = n;
		q->captimes = cap;
	}
	q->times[q->ntimes++] = t;
	return (uint32_t)q->ntimes;
}

uint64_t
qc_block(struct qc *q, uint64_t vaddr, const uint8_t *code, size_t len,
    uint64_t (*version)(void *), void *ctx, int force, int *fresh)
{
	struct qc_page *p = NULL;
	uint32_t v = 0;
	int differ = 0, unknown = 0;
	size_t i;

	if (fresh != NULL)
		*fresh = 0;
	if (len == 0 || vaddr + len < vaddr)
		return 0;
	if (q->ntimes == 0 && new_version(q, 0) == 0)
		return 0;
	/* What was recorded at these addresses before. */
	for (i = 0; i < len; i++) {
		uint64_t a = vaddr + i;
		size_t o = (size_t)(a & (QC_PAGE - 1));

		if (p == NULL || p->page != a >> QC_SHIFT)
			p = page_get(q, a >> QC_SHIFT, 0);
		if (p == NULL || p->ver[o] == 0) {
			unknown = 1;
			continue;
		}
		if (p->byte[o] != code[i])
			differ = 1;
		else if (p->ver[o] > v)
			v = p->ver[o];
	}
	differ |= force;
	if (differ)
		v = new_version(q, version(ctx));
	else if (v == 0)
		v = 1;		/* never recorded: the code there since 0 */
	if (v == 0)
		return 0;
	if (fresh != NULL)
		*fresh = differ || unknown;
	/* Remember them: a new version's bytes all belong to it; bytes
	 * agreeing with those recorded keep their own version. */
	for (i = 0, p = NULL; i < len; i++) {
		uint64_t a = vaddr + i;
		size_t o = (size_t)(a & (QC_PAGE - 1));

		if (p == NULL || p->page != a >> QC_SHIFT)
			p = page_get(q, a >> QC_SHIFT, 1);
		if (p == NULL)
			break;
		if (differ || p->ver[o] == 0) {
			p->byte[o] = code[i];
			p->ver[o] = v;
		}
	}
	return q->times[v - 1];
}

int
qc_known(struct qc *q, uint64_t vaddr, const uint8_t *code, size_t len,
    uint64_t *time)
{
	struct qc_page *p = NULL;
	uint32_t v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		uint64_t a = vaddr + i;
		size_t o = (size_t)(a & (QC_PAGE - 1));

		if (p == NULL || p->page != a >> QC_SHIFT)
			p = page_get(q, a >> QC_SHIFT, 0);
		if (p == NULL || p->ver[o] == 0 || p->byte[o] != code[i])
			return 0;
		if (p->ver[o] > v)
			v = p->ver[o];
	}
	if (v == 0)
		return 0;
	*time = q->times[v - 1];
	return 1;
}
