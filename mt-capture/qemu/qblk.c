/* SPDX-License-Identifier: MIT */
/*
 * The plugin's block records (qblk.h): a hash table of every record made,
 * keyed by all of its fields, its instruction bytes and whether they are
 * JIT code.  A record is reused only when it would be made again
 * identical, from identical bytes: it then describes exactly the code
 * that runs.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "qblk.h"

/* Records sit apart from their keys, each in a cache line of its own,
 * packed in chunks: the exec callback reads one line per block. */
#define QB_LINE		64
#define QB_CHUNK	64	/* records per chunk */

_Static_assert(sizeof(struct qb_blk) <= QB_LINE, "a record fits a line");

/* A record and what it was made from (the exec callback sees rec only). */
struct qb_ent {
	struct qb_blk *rec;
	uint64_t hash;		/* of rec and the bytes */
	size_t len;		/* instruction bytes */
	int jit;		/* outside file mappings */
	uint8_t code[];		/* the bytes */
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct qb_ent **g_tab;	/* open addressing; NULL: free */
static size_t g_cap;		/* slots, a power of two */
static uint64_t g_n;		/* records */
static uint8_t *g_chunk;	/* the chunk being filled */
static size_t g_used;		/* records in it */

/* FNV-1a over @n bytes, from @h. */
static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

/* The fields of @b one by one (the struct's padding is not compared). */
static uint64_t
hash_of(const struct qb_blk *b, const uint8_t *code, size_t len, int jit)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = fnv(h, &jit, sizeof(jit));
	h = fnv(h, &b->pc, sizeof(b->pc));
	h = fnv(h, &b->last, sizeof(b->last));
	h = fnv(h, &b->fall, sizeof(b->fall));
	h = fnv(h, &b->target, sizeof(b->target));
	h = fnv(h, &b->ninsns, sizeof(b->ninsns));
	h = fnv(h, &b->len, 1);
	h = fnv(h, &b->cls, 1);
	h = fnv(h, &b->rep, 1);
	h = fnv(h, &b->disp0, 1);
	h = fnv(h, &b->since, sizeof(b->since));
	return fnv(h, code, len);
}

static int
same(const struct qb_ent *e, uint64_t hash, const struct qb_blk *b,
    const uint8_t *code, size_t len, int jit)
{
	const struct qb_blk *r = e->rec;

	return e->hash == hash && e->len == len && e->jit == jit &&
	    r->pc == b->pc && r->last == b->last && r->fall == b->fall &&
	    r->target == b->target && r->ninsns == b->ninsns &&
	    r->len == b->len && r->cls == b->cls && r->rep == b->rep &&
	    r->disp0 == b->disp0 && r->since == b->since &&
	    memcmp(e->code, code, len) == 0;
}

/* Room for one more record, or NULL. */
static struct qb_blk *
new_rec(void)
{
	if (g_chunk == NULL || g_used == QB_CHUNK) {
		g_chunk = aligned_alloc(QB_LINE, QB_LINE * QB_CHUNK);
		if (g_chunk == NULL)
			return NULL;
		g_used = 0;
	}
	return (struct qb_blk *)(void *)(g_chunk + QB_LINE * g_used);
}

static int
grow(void)
{
	size_t cap = g_cap ? g_cap * 2 : 1024, i, k;
	struct qb_ent **t = calloc(cap, sizeof(*t));

	if (t == NULL)
		return -1;
	for (i = 0; i < g_cap; i++) {
		if (g_tab[i] == NULL)
			continue;
		for (k = g_tab[i]->hash & (cap - 1); t[k] != NULL;
		    k = (k + 1) & (cap - 1))
			;
		t[k] = g_tab[i];
	}
	free(g_tab);
	g_tab = t;
	g_cap = cap;
	return 0;
}

const struct qb_blk *
qb_intern(const struct qb_blk *b, const uint8_t *code, size_t len,
    int jit, int *made)
{
	uint64_t h = hash_of(b, code, len, jit);
	const struct qb_blk *r = NULL;
	struct qb_ent *e;
	size_t k;

	*made = 0;
	pthread_mutex_lock(&g_lock);
	if (g_cap > 0)
		for (k = h & (g_cap - 1); g_tab[k] != NULL;
		    k = (k + 1) & (g_cap - 1))
			if (same(g_tab[k], h, b, code, len, jit)) {
				r = g_tab[k]->rec;
				goto out;
			}
	if ((g_n + 1) * 2 > g_cap && grow() < 0)
		goto out;
	if ((e = malloc(sizeof(*e) + len)) == NULL)
		goto out;
	if ((e->rec = new_rec()) == NULL) {
		free(e);
		goto out;
	}
	g_used++;
	*e->rec = *b;
	e->hash = h;
	e->len = len;
	e->jit = jit;
	memcpy(e->code, code, len);
	for (k = h & (g_cap - 1); g_tab[k] != NULL; k = (k + 1) & (g_cap - 1))
		;
	g_tab[k] = e;
	__atomic_store_n(&g_n, g_n + 1, __ATOMIC_RELAXED);
	r = e->rec;
	*made = 1;
out:
	pthread_mutex_unlock(&g_lock);
	return r;
}

uint64_t
qb_count(void)
{
	return __atomic_load_n(&g_n, __ATOMIC_RELAXED);
}
