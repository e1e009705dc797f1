/* SPDX-License-Identifier: MIT */
/*
 * setjmp/longjmp out of nested calls: each round dives 3 to 7 levels
 * deep through dive() and jumps back to main from the bottom.
 */
#include <setjmp.h>

#define GT_NFN 3
static const char *const gt_names[GT_NFN] = { "main", "dive", "bottom" };
enum { MAIN, DIVE, BOTTOM };
#include "gt.h"

#define ROUNDS 12

static jmp_buf env;
static volatile unsigned long sink;

__attribute__((noinline)) static void
bottom(int r)
{
	GT_ENTER(BOTTOM);
	sink += (unsigned long)r;
	longjmp(env, 1);
}

__attribute__((noinline)) static void
dive(int n, int r)
{
	GT_ENTER(DIVE);
	if (n > 1)
		dive(n - 1, r);
	else
		bottom(r);
	sink++;
	GT_LEAVE();
}

int
main(void)
{
	volatile int r = 0;
	int depth;

	GT_ENTER(MAIN);
	depth = GT_DEPTH;
	if (setjmp(env) != 0) {
		GT_DEPTH = depth;
		r++;
	}
	if (r < ROUNDS)
		dive(3 + r % 5, r);
	GT_LEAVE();
	gt_print();
	return 0;
}
