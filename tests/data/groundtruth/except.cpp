// SPDX-License-Identifier: MIT
// A C++ exception thrown and caught in a loop, through three frames
// between the catch in main and the throw.
#include <cstdio>

#define GT_NFN 5
/* The names mt-symbolize gives them, demangled. */
static const char *const gt_names[GT_NFN] = {
	"main", "first(int)", "second(int)", "third(int)", "thrower(int)",
};
enum { MAIN, FIRST, SECOND, THIRD, THROWER };
#include "gt.h"

#define ROUNDS 6

static volatile unsigned long sink;

__attribute__((noinline)) static void
thrower(int r)
{
	GT_ENTER(THROWER);
	if (r >= 0)
		throw r;
	GT_LEAVE();
}

__attribute__((noinline)) static void
third(int r)
{
	GT_ENTER(THIRD);
	thrower(r);
	sink++;
	GT_LEAVE();
}

__attribute__((noinline)) static void
second(int r)
{
	GT_ENTER(SECOND);
	third(r);
	sink++;
	GT_LEAVE();
}

__attribute__((noinline)) static void
first(int r)
{
	GT_ENTER(FIRST);
	second(r);
	sink++;
	GT_LEAVE();
}

int
main()
{
	GT_ENTER(MAIN);
	for (int r = 0; r < ROUNDS; r++) {
		int depth = GT_DEPTH;

		try {
			first(r);
		} catch (int) {
			GT_DEPTH = depth;
			sink++;
		}
	}
	GT_LEAVE();
	gt_print();
	return 0;
}
