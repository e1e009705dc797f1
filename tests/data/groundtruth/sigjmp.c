/* SPDX-License-Identifier: MIT */
/*
 * A timer signal (SIGALRM every 10 ms) whose handler calls work() and
 * then leaves by siglongjmp() to main, out of outer > middle > spin.
 * SIGALRM is blocked but in spin's endless loop, so the signal never
 * lands between a call and the counter of the function it entered.  The
 * deepest nesting is nest()'s, before the timer.
 */
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#define GT_NFN 7
static const char *const gt_names[GT_NFN] = {
	"main", "nest", "outer", "middle", "spin", "handler", "work",
};
enum { MAIN, NEST, OUTER, MIDDLE, SPIN, HANDLER, WORK };
#include "gt.h"

#define SIGNALS 20

static sigjmp_buf env;
static volatile unsigned long sink;

__attribute__((noinline)) static void
work(void)
{
	GT_ENTER(WORK);
	sink += 3;
	GT_LEAVE();
}

static void
handler(int sig)
{
	GT_ENTER(HANDLER);
	(void)sig;
	work();
	siglongjmp(env, 1);
}

__attribute__((noinline)) static void
nest(int n)
{
	GT_ENTER(NEST);
	if (n > 1)
		nest(n - 1);
	sink++;
	GT_LEAVE();
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
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	struct sigaction sa;
	volatile int jumps = 0, i = 0;
	sigset_t set;
	int depth;

	GT_ENTER(MAIN);
	nest(8);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	depth = GT_DEPTH;
	if (sigsetjmp(env, 1) != 0) {
		GT_DEPTH = depth;
		jumps++;
	}
	if (jumps == 0)
		setitimer(ITIMER_REAL, &it, NULL);
	while (jumps < SIGNALS)
		outer(i++);
	it.it_value.tv_usec = 0;
	it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	GT_LEAVE();
	gt_print();
	return 0;
}
