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
					 * its version (index into g_times
					 * plus one) */
	uint8_t byte[QC_PAGE];		/* the byte recorded last */
};

static struct qc_page **g_tab;	/* open addressing by page; NULL: free */
static size_t g_cap, g_n;	/* slots (a power of two), pages */
static uint64_t *g_times;	/* g_times[v - 1]: version v's time,
				 * nondecreasing; version 1 is time 0 */
static size_t g_ntimes, g_captimes;

static size_t
slot_of(uint64_t page, size_t cap)
{
	return (size_t)((page * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static int
grow_tab(void)
{
	size_t cap = g_cap ? g_cap * 2 : 256, i, k;
	struct qc_page **t = calloc(cap, sizeof(*t));

	if (t == NULL)
		return -1;
	for (i = 0; i < g_cap; i++) {
		if (g_tab[i] == NULL)
			continue;
		for (k = slot_of(g_tab[i]->page, cap); t[k] != NULL;
		    k = (k + 1) & (cap - 1))
			;
		t[k] = g_tab[i];
	}
	free(g_tab);
	g_tab = t;
	g_cap = cap;
	return 0;
}

/* The page @page, made (all bytes unrecorded) when @make; else NULL. */
static struct qc_page *
page_get(uint64_t page, int make)
{
	struct qc_page *p;
	size_t k;

	if (g_cap > 0)
		for (k = slot_of(page, g_cap); g_tab[k] != NULL;
		    k = (k + 1) & (g_cap - 1))
			if (g_tab[k]->page == page)
				return g_tab[k];
	if (!make)
		return NULL;
	if ((g_n + 1) * 2 > g_cap && grow_tab() < 0)
		return NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->page = page;
	for (k = slot_of(page, g_cap); g_tab[k] != NULL;
	    k = (k + 1) & (g_cap - 1))
		;
	g_tab[k] = p;
	g_n++;
	return p;
}

/* A new version of time @t; returns its number, or 0. */
static uint32_t
new_version(uint64_t t)
{
	if (g_ntimes == g_captimes) {
		size_t cap = g_captimes ? g_captimes * 2 : 64;
		uint64_t *n = realloc(g_times, cap * sizeof(*n));

		if (n == NULL || cap > UINT32_MAX)
			return 0;
		g_times = n;
		g_captimes = cap;
	}
	g_times[g_ntimes++] = t;
	return (uint32_t)g_ntimes;
}

uint64_t
qc_block(uint64_t vaddr, const uint8_t *code, size_t len,
    uint64_t (*version)(void))
{
	struct qc_page *p = NULL;
	uint32_t v = 0;
	int differ = 0;
	size_t i;

	if (len == 0 || vaddr + len < vaddr)
		return 0;
	if (g_ntimes == 0 && new_version(0) == 0)
		return 0;
	/* What was recorded at these addresses before. */
	for (i = 0; i < len; i++) {
		uint64_t a = vaddr + i;
		size_t o = (size_t)(a & (QC_PAGE - 1));

		if (p == NULL || p->page != a >> QC_SHIFT)
			p = page_get(a >> QC_SHIFT, 0);
		if (p == NULL || p->ver[o] == 0)
			continue;
		if (p->byte[o] != code[i])
			differ = 1;
		else if (p->ver[o] > v)
			v = p->ver[o];
	}
	if (differ)
		v = new_version(version());
	else if (v == 0)
		v = 1;		/* never recorded: the code there since 0 */
	if (v == 0)
		return 0;
	/* Remember them: a new version's bytes all belong to it; bytes
	 * agreeing with those recorded keep their own version. */
	for (i = 0, p = NULL; i < len; i++) {
		uint64_t a = vaddr + i;
		size_t o = (size_t)(a & (QC_PAGE - 1));

		if (p == NULL || p->page != a >> QC_SHIFT)
			p = page_get(a >> QC_SHIFT, 1);
		if (p == NULL)
			break;
		if (differ || p->ver[o] == 0) {
			p->byte[o] = code[i];
			p->ver[o] = v;
		}
	}
	return g_times[v - 1];
}
