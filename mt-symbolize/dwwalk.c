/* SPDX-License-Identifier: MIT */
/*
 * The DIE walk and its cache (dwwalk.h).  A DIE's kept children answer
 * "does it hold pc" from the ranges dwarf_ranges() gave once, which is
 * what dwarf_haspc() computes each time (elfutils 0.188: 1 when a range
 * read before any error holds pc), so the chain is the same with and
 * without the cache.
 */
#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>

#include "dwwalk.h"
#include "err.h"

#define KID_BUCKETS 4096

/* A child that can hold code, or a namespace / module. */
struct kid {
	Dwarf_Die die;
	int tag;
	size_t r0, nr;		/* its ranges: w->rng[r0 .. r0 + nr) */
};

/* The kept children of one DIE. */
struct kids {
	Dwarf_Off off;		/* the parent's DIE offset (the key) */
	struct kid *v;		/* owned */
	size_t n;
	struct kids *next;	/* bucket chain */
};

struct sym_dwwalk {
	struct kids *b[KID_BUCKETS];	/* owned */
	Dwarf_Addr (*rng)[2];		/* [begin, end) pairs; owned */
	size_t nrng, caprng;
};

int
sym_dwwalk_new(struct sym_dwwalk **wp)
{
	*wp = calloc(1, sizeof(**wp));
	return *wp != NULL ? 0 : -MT_E_NOMEM;
}

void
sym_dwwalk_free(struct sym_dwwalk *w)
{
	size_t i;

	if (w == NULL)
		return;
	for (i = 0; i < KID_BUCKETS; i++) {
		while (w->b[i] != NULL) {
			struct kids *k = w->b[i];

			w->b[i] = k->next;
			free(k->v);
			free(k);
		}
	}
	free(w->rng);
	free(w);
}

static int
holds_code(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	    tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
	    tag == DW_TAG_catch_block;
}

static int
add_range(struct sym_dwwalk *w, Dwarf_Addr b, Dwarf_Addr e)
{
	if (w->nrng == w->caprng) {
		size_t cap = w->caprng ? 2 * w->caprng : 1024;
		void *v = realloc(w->rng, cap * sizeof(*w->rng));

		if (v == NULL)
			return -MT_E_NOMEM;
		w->rng = v;
		w->caprng = cap;
	}
	w->rng[w->nrng][0] = b;
	w->rng[w->nrng++][1] = e;
	return 0;
}

/* The kept children of @parent, made on first use; NULL out of memory. */
static struct kids *
kids_of(struct sym_dwwalk *w, Dwarf_Die *parent)
{
	Dwarf_Off off = dwarf_dieoffset(parent);
	size_t h = (size_t)((off ^ off >> 12) * 0x9e3779b97f4a7c15ull >> 52) %
	    KID_BUCKETS, cap = 0;
	struct kids *k;
	Dwarf_Die c;

	for (k = w->b[h]; k != NULL; k = k->next)
		if (k->off == off)
			return k;
	k = calloc(1, sizeof(*k));
	if (k == NULL)
		return NULL;
	k->off = off;
	if (dwarf_child(parent, &c) == 0) {
		do {
			int tag = dwarf_tag(&c);
			struct kid *x;

			if (!holds_code(tag) && tag != DW_TAG_namespace &&
			    tag != DW_TAG_module)
				continue;
			if (k->n == cap) {
				cap = cap ? 2 * cap : 8;
				x = realloc(k->v, cap * sizeof(*x));
				if (x == NULL)
					goto nomem;
				k->v = x;
			}
			x = &k->v[k->n++];
			x->die = c;
			x->tag = tag;
			x->r0 = w->nrng;
			x->nr = 0;
			if (holds_code(tag)) {
				Dwarf_Addr base, b, e;
				ptrdiff_t o = 0;

				while ((o = dwarf_ranges(&c, o, &base, &b,
				    &e)) > 0) {
					if (add_range(w, b, e) < 0)
						goto nomem;
					x->nr++;
				}
			}
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	k->next = w->b[h];
	w->b[h] = k;
	return k;
nomem:
	free(k->v);
	free(k);
	return NULL;
}

static int
kid_has(const struct sym_dwwalk *w, const struct kid *x, Dwarf_Addr pc)
{
	size_t i;

	for (i = x->r0; i < x->r0 + x->nr; i++)
		if (pc >= w->rng[i][0] && pc < w->rng[i][1])
			return 1;
	return 0;
}

/* The next child of the level (cached in @k, else by libdw), or 0. */
struct level {
	struct kids *k;
	size_t i;
	Dwarf_Die die;
	int started;
};

static int
level_next(struct level *l, Dwarf_Die *parent)
{
	if (l->k != NULL) {
		if (l->i >= l->k->n)
			return 0;
		l->die = l->k->v[l->i++].die;
		return 1;
	}
	if (!l->started) {
		l->started = 1;
		return dwarf_child(parent, &l->die) == 0;
	}
	return dwarf_siblingof(&l->die, &l->die) == 0;
}

static int
level_has(const struct sym_dwwalk *w, struct level *l, Dwarf_Addr pc)
{
	if (l->k != NULL)
		return kid_has(w, &l->k->v[l->i - 1], pc);
	return dwarf_haspc(&l->die, pc) == 1;
}

static int
walk(struct sym_dwwalk *w, Dwarf_Die *parent, Dwarf_Addr pc,
    Dwarf_Die *chain, int n, int max, int last)
{
	struct level l = { .k = NULL };
	Dwarf_Die hit;
	int found = 0, hit_tag = 0;

	if (n >= max)
		return n;	/* nothing deeper can be added */
	l.k = w != NULL ? kids_of(w, parent) : NULL;
	while ((!found || last) && level_next(&l, parent)) {
		int tag = l.k != NULL ? l.k->v[l.i - 1].tag : dwarf_tag(&l.die);
		int m;

		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (!level_has(w, &l, pc))
				break;
			if (found && hit_tag != tag)
				break;
			hit = l.die;
			hit_tag = tag;
			found = 1;
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
			if (n > 0 || found)
				break;
			m = walk(w, &l.die, pc, chain, n, max, last);
			if (m > n)
				return m;
			break;
		default:
			break;
		}
	}
	if (!found)
		return n;
	if (hit_tag == DW_TAG_subprogram || hit_tag == DW_TAG_inlined_subroutine) {
		if (n >= max)
			return n;
		chain[n++] = hit;
	}
	return walk(w, &hit, pc, chain, n, max, last);
}

int
sym_dwwalk_chain(struct sym_dwwalk *w, Dwarf_Die *cu, Dwarf_Addr pc,
    Dwarf_Die *chain, int max, int last)
{
	return walk(w, cu, pc, chain, 0, max, last);
}
