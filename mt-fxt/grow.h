/* SPDX-License-Identifier: MIT */
/* Growing the arrays mt-fxt keeps per thread, per stack and per table. */
#ifndef MT_FXT_GROW_H
#define MT_FXT_GROW_H

#include <stddef.h>
#include <stdint.h>

/*
 * Make the array *@p of *@cap elements of @elem bytes hold at least @need,
 * doubling its capacity.  New elements are not initialised.
 * Returns 0, or -MT_E_NOMEM (the array is then unchanged).
 */
int fxt_grow_to(void **p, uint32_t *cap, uint32_t need, size_t elem);

/* The common case, room already there, without a call. */
static inline int
fxt_grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	return need <= *cap ? 0 : fxt_grow_to(p, cap, need, elem);
}

#endif /* MT_FXT_GROW_H */
