/* SPDX-License-Identifier: MIT */
/*
 * A timer signal (SIGALRM from setitimer every 10 ms) whose handler calls
 * work(), taken while main loops through outer > middle > leaf.  The
 * deepest nesting is the recursion of nest() before the timer starts, so
 * it does not depend on where the signals land.
 */
#define GT_NFN 7
static const char *const gt_names[GT_NFN] = {
	"main", "nest", "outer", "middle", "leaf", "handler", "work",
};
enum { MAIN, NEST, OUTER, MIDDLE, LEAF, HANDLER, WORK };
#include "gt.h"
#include "gtsig.h"

#define SIGNALS 30
#define LEAF_LOOP 256

static volatile int handled;

static void
handler(int sig)
{
	GTS_HANDLER_ENTER(sig);
	handled++;
	GT_LEAVE();
}

/* A loop of its own: most signals land in it, three frames above main,
 * and main's loop goes round some 40,000 times under QEMU, not 900,000
 * (a test reads every frame). */
__attribute__((noinline)) static void
leaf(int i)
{
	int k;

	GT_ENTER(LEAF);
	for (k = 0; k < LEAF_LOOP; k++)
		sink += (unsigned long)i;
	GT_LEAVE();
}

__attribute__((noinline)) static void
middle(int i)
{
	GT_ENTER(MIDDLE);
	leaf(i);
	leaf(i + 1);
	GT_LEAVE();
}

__attribute__((noinline)) static void
outer(int i)
{
	GT_ENTER(OUTER);
	middle(i);
	GT_LEAVE();
}

int
main(void)
{
	int i = 0;

	GT_ENTER(MAIN);
	nest(8);
	gts_install(handler);
	gts_timer(10000, 10000);
	while (handled < SIGNALS)
		outer(i++);
	gts_timer(0, 0);
	GT_LEAVE();
	gt_print();
	return 0;
}
