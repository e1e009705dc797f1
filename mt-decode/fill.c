/* SPDX-License-Identifier: MIT */
/*
 * libipt 2.0.5's block cache, modelled (fill.h): a set of the
 * instructions holding an entry, keyed by libipt's section and offset,
 * and a bit per walk whose instructions all hold one (such a walk never
 * ends a block, and is not decoded again).
 *
 * Checked while it was written against libipt's own blocks: every block
 * end of libipt's block decoder on the generated timed traces (CYC and
 * TSC only, user and kernel, 2.27 M blocks) was where this model put
 * one (bench/RESULTS.md, session 10).
 */
#include <stdlib.h>
#include <string.h>

#include "fill.h"
#include "ild.h"
#include "image.h"
#include "walk.h"

#define FILL_RUN	1024	/* instructions filled in a row end a block */
#define FILL_SEC_SHIFT	44	/* key: section << 44 | offset */

struct fill {
	struct image_set *is;	/* not owned */
	uint64_t *key;		/* the set: open addressing, 0 empty */
	size_t n, cap;		/* keys held; slots (a power of 2) */
	uint64_t *warm;		/* a bit per walk index: all entries held */
	size_t nwarm;		/* words in warm */
	int *base;		/* isid -> image_set_section_base, 0: not
				 * looked up yet */
	size_t nbase;		/* entries in base */
	int off;		/* MT_DECODE_NO_FILL: no block ends */
};

struct fill *
fill_new(struct image_set *is)
{
	struct fill *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->is = is;
	/* for tests and comparisons: what the model changes (decode.md) */
	f->off = getenv("MT_DECODE_NO_FILL") != NULL;
	return f;
}

void
fill_free(struct fill *f)
{
	if (f == NULL)
		return;
	free(f->key);
	free(f->warm);
	free(f->base);
	free(f);
}

static size_t
fill_slot(const uint64_t *key, size_t cap, uint64_t k)
{
	size_t i = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);

	while (key[i] != 0 && key[i] != k)
		i = (i + 1) & (cap - 1);
	return i;
}

static int
fill_has(const struct fill *f, uint64_t k)
{
	return f->cap != 0 && f->key[fill_slot(f->key, f->cap, k)] == k;
}

static int
fill_add(struct fill *f, uint64_t k)
{
	size_t i;

	if ((f->n + 1) * 2 >= f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 1u << 14;
		uint64_t *key = calloc(cap, sizeof(*key));

		if (key == NULL)
			return -1;
		for (i = 0; i < f->cap; i++)
			if (f->key[i] != 0)
				key[fill_slot(key, cap, f->key[i])] = f->key[i];
		free(f->key);
		f->key = key;
		f->cap = cap;
	}
	i = fill_slot(f->key, f->cap, k);
	if (f->key[i] == 0) {
		f->key[i] = k;
		f->n++;
	}
	return 0;
}

/* libipt's section of @isid (fill.h), or -1. */
static int
fill_section(struct fill *f, int isid)
{
	size_t n, i;
	int *b;

	if (isid <= 0)
		return -1;
	if ((size_t)isid >= f->nbase) {
		n = (size_t)isid * 2;
		b = realloc(f->base, n * sizeof(*b));
		if (b == NULL)
			return -1;
		for (i = f->nbase; i < n; i++)
			b[i] = 0;
		f->base = b;
		f->nbase = n;
	}
	if (f->base[isid] == 0)
		f->base[isid] = image_set_section_base(f->is, isid);
	return f->base[isid];
}

static int
fill_is_warm(const struct fill *f, size_t wi)
{
	return wi / 64 < f->nwarm && (f->warm[wi / 64] >> (wi % 64) & 1);
}

static int
fill_set_warm(struct fill *f, size_t wi)
{
	size_t n, j;
	uint64_t *w;

	if (wi / 64 >= f->nwarm) {
		n = (wi / 64 + 1) * 2;
		w = realloc(f->warm, n * sizeof(*w));
		if (w == NULL)
			return -1;
		for (j = f->nwarm; j < n; j++)
			w[j] = 0;
		f->warm = w;
		f->nwarm = n;
	}
	f->warm[wi / 64] |= 1ull << (wi % 64);
	return 0;
}

int
fill_walk(struct fill *f, uint32_t pid, int isid, uint64_t lo, uint64_t hi,
    int bits, const struct walk *w, size_t wi, uint32_t *run,
    struct fill_cut *cut)
{
	struct ild_insn in;
	uint64_t ip = w->ip, nip, sec;
	uint32_t k;
	int traced, xol, anyxol = 0;

	if (f->off || fill_is_warm(f, wi)) {
		*run = 0;
		return 0;
	}
	if (fill_section(f, isid) < 0)
		return -1;
	sec = (uint64_t)f->base[isid] << FILL_SEC_SHIFT;
	for (k = 0; k < w->len; k++) {
		if (ip < lo || ip >= hi ||
		    image_set_decode(f->is, isid, ip, bits, &in) < 0)
			return -1;
		/* a branch that needs trace ends the walk (and the block) */
		traced = in.cls != ILD_OTHER && !((in.cls == ILD_CALL ||
		    in.cls == ILD_JMP) && in.rel);
		nip = !traced && in.rel ? in.target : ip + in.len;
		xol = image_set_in_xol(f->is, pid, ip);
		if (xol)
			anyxol = 1;
		if (!xol && fill_has(f, sec | (ip - lo))) {
			*run = 0;
		} else {
			if (!xol && fill_add(f, sec | (ip - lo)) < 0)
				return -1;
			++*run;
			if (!traced && (in.cls == ILD_CALL ||
			    (in.cls == ILD_JMP && in.target < ip + in.len) ||
			    (nip >= lo && nip < hi &&
			    fill_has(f, sec | (nip - lo)) &&
			    !image_set_in_xol(f->is, pid, nip)) ||
			    *run == FILL_RUN)) {
				cut->at = k;
				cut->last = ip;
				cut->next = nip;
				return 1;
			}
		}
		ip = nip;
	}
	if (!anyxol && fill_set_warm(f, wi) < 0)
		return -1;
	return 0;
}
