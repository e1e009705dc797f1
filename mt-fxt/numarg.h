/* SPDX-License-Identifier: MIT */
/* Numeric option arguments of mt-fxt, with unit suffixes. */
#ifndef MT_FXT_NUMARG_H
#define MT_FXT_NUMARG_H

#include <stdint.h>

enum numarg_units {
	NUMARG_PLAIN,	/* a decimal number */
	NUMARG_TIME,	/* nanoseconds; suffixes ns, us, ms, s */
	NUMARG_SIZE,	/* bytes; suffixes k, m, g (powers of 1024) */
};

/* Parse @s into @v; returns 0, or -1 if malformed or out of range. */
int numarg(const char *s, uint64_t *v, enum numarg_units u);
/* "A,B" (modifies @s); returns 0 or -1. */
int numarg_pair(char *s, uint64_t *a, uint64_t *b, enum numarg_units u);

#endif /* MT_FXT_NUMARG_H */
