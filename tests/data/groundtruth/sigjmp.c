/* SPDX-License-Identifier: MIT */
/*
 * A timer signal (SIGALRM every 10 ms) whose handler calls work() and
 * then leaves by siglongjmp() to main, out of outer > middle > spin.
 * SIGALRM is blocked but in spin's endless loop, so the signal never
 * lands between a call and the counter of the function it entered.  The
 * deepest nesting is nest()'s, before the timer.
 */
#include <setjmp.h>

#define GT_NFN 7
static const char *const gt_names[GT_NFN] = {
	"main", "nest", "outer", "middle", "spin", "handler", "work",
};
enum { MAIN, NEST, OUTER, MIDDLE, SPIN, HANDLER, WORK };
#include "gt.h"
#include "gtsig.h"

#define SIGNALS 20

static sigjmp_buf env;

static void
handler(int sig)
{
	GTS_HANDLER_ENTER(sig);
	siglongjmp(env, 1);
}

/* Unblock SIGALRM and wait for it: the handler jumps out. */
__attribute__((noinline)) static void
spin(void)
{
	sigset_t set;

	GT_ENTER(SPIN);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	for (;;)
		sink++;
}

__attribute__((noinline)) static void
middle(int i)
{
	GT_ENTER(MIDDLE);
	sink += (unsigned long)i;
	spin();
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
	volatile int jumps = 0, i = 0;
	sigset_t set;
	int depth;

	GT_ENTER(MAIN);
	nest(8);
	gts_install(handler);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	depth = GT_DEPTH;
	if (sigsetjmp(env, 1) != 0) {
		GT_DEPTH = depth;
		jumps++;
	}
	if (jumps == 0)
		gts_timer(10000, 10000);
	while (jumps < SIGNALS)
		outer(i++);
	gts_timer(0, 0);
	GT_LEAVE();
	gt_print();
	return 0;
}
