/* SPDX-License-Identifier: MIT */
/*
 * Per-thread state of mt-fxt's stages (recon, view, defer, the
 * aggregating outputs): a table indexed by the sym_thread index (0, 1,
 * 2... in order of creation), holding one zeroed block per thread,
 * allocated on first use.  Each stage keeps its own table of its own
 * struct; the table code is this one.
 */
#ifndef MT_FXT_THRTAB_H
#define MT_FXT_THRTAB_H

#include <stddef.h>
#include <stdint.h>

struct thrtab {
	void **p;		/* index -> block, NULL none yet */
	uint32_t n;		/* entries in p */
};

/* thrtab_get() for a thread without a block yet (thrtab.c). */
void *thrtab_add(struct thrtab *t, uint32_t index, size_t size, int *fresh);

/*
 * The block of thread @index: an existing one, or a new zeroed block of
 * @size bytes (then *@fresh is set to 1, else 0).  NULL when memory runs
 * out.  Called for every event: the common case is inline.
 */
static inline void *
thrtab_get(struct thrtab *t, uint32_t index, size_t size, int *fresh)
{
	if (index < t->n && t->p[index] != NULL) {
		*fresh = 0;
		return t->p[index];
	}
	return thrtab_add(t, index, size, fresh);
}

/* The block of thread @index, NULL if it has none. */
static inline void *
thrtab_at(const struct thrtab *t, uint32_t index)
{
	return index < t->n ? t->p[index] : NULL;
}

/* Free every block (after @fini on it, if not NULL) and the table. */
void thrtab_free(struct thrtab *t, void (*fini)(void *block));

#endif /* MT_FXT_THRTAB_H */
