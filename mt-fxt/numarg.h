/* SPDX-License-Identifier: MIT */
/* Numeric option arguments of mt-fxt, with unit suffixes. */
#ifndef MT_FXT_NUMARG_H
#define MT_FXT_NUMARG_H

#include <stddef.h>
#include <stdint.h>

enum numarg_units {
	NUMARG_PLAIN,	/* a decimal number */
	NUMARG_TIME,	/* nanoseconds; suffixes ns, us, ms, s */
	NUMARG_SIZE,	/* bytes; suffixes k, m, g (powers of 1024) */
};

/* Parse @s into @v; returns 0, or -1 if malformed or out of range. */
int numarg(const char *s, uint64_t *v, enum numarg_units u);
/* "A,B" into @a and @b; returns 0, or -1 if either is malformed. */
int numarg_pair(const char *s, uint64_t *a, uint64_t *b,
    enum numarg_units u);
/*
 * Append the comma-separated u32 numbers of @s to @v, which holds *@n of
 * at most @max.  Returns 0, or -1 if one is empty, malformed, too large
 * or one too many.
 */
int numarg_list(const char *s, uint32_t *v, size_t max, size_t *n);

#endif /* MT_FXT_NUMARG_H */
