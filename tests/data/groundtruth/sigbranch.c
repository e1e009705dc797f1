/* SPDX-License-Identifier: MIT */
/*
 * A timer signal (SIGALRM, a one-shot timer of 50 us armed again by the
 * loop once the handler ran) taken while main loops through code whose
 * blocks end in an indirect jump (a computed goto: jmp *%reg), an
 * indirect call through a table (call *mem) and the callee's return, so
 * that signals land right after each of them, where the qemu backend
 * only learns the branch's target when the handler returns
 * (tests/pipeline-groundtruth.bats).  One shot at a time: no signal is
 * pending when the handler returns.  The deepest nesting is nest()'s
 * recursion before the timer, so it does not depend on where the
 * signals land.
 */
#define GT_NFN 7
static const char *const gt_names[GT_NFN] = {
	"main", "nest", "hop", "skip", "jump", "handler", "work",
};
enum { MAIN, NEST, HOP, SKIP, JUMP, HANDLER, WORK };
#include "gt.h"
#include "gtsig.h"

#define SIGNALS 150

static volatile int handled, armed;

static void
handler(int sig)
{
	GTS_HANDLER_ENTER(sig);
	handled++;
	armed = 0;
	GT_LEAVE();
}

__attribute__((noinline)) static int
hop(int i)
{
	GT_ENTER(HOP);
	sink += (unsigned long)i;
	GT_LEAVE();
	return 1;
}

__attribute__((noinline)) static int
skip(int i)
{
	GT_ENTER(SKIP);
	sink ^= (unsigned long)i;
	GT_LEAVE();
	return 2;
}

__attribute__((noinline)) static int
jump(int i)
{
	GT_ENTER(JUMP);
	sink -= (unsigned long)i;
	GT_LEAVE();
	return 3;
}

static int (*volatile fns[3])(int) = { hop, skip, jump };

int
main(void)
{
	static void *const lab[3] = { &&l0, &&l1, &&l2 };
	unsigned i = 0;
	int r = 0;

	GT_ENTER(MAIN);
	nest(8);
	gts_install(handler);
	while (handled < SIGNALS) {
		if (!armed) {
			armed = 1;
			gts_timer(50, 0);
		}
		goto *lab[i++ % 3];
l0:
		r += fns[0]((int)i);
		continue;
l1:
		r += fns[1]((int)i);
		continue;
l2:
		r += fns[2]((int)i);
	}
	sink += (unsigned long)r;
	GT_LEAVE();
	gt_print();
	return 0;
}
