/* SPDX-License-Identifier: MIT */
/*
 * A timer signal (SIGALRM from setitimer every 10 ms) whose handler calls
 * work(), taken while main loops through outer > middle > leaf.  The
 * deepest nesting is the recursion of nest() before the timer starts, so
 * it does not depend on where the signals land.
 */
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#define GT_NFN 7
static const char *const gt_names[GT_NFN] = {
	"main", "nest", "outer", "middle", "leaf", "handler", "work",
};
enum { MAIN, NEST, OUTER, MIDDLE, LEAF, HANDLER, WORK };
#include "gt.h"

#define SIGNALS 30

static volatile int handled;
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
	handled++;
	GT_LEAVE();
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

__attribute__((noinline)) static void
leaf(int i)
{
	GT_ENTER(LEAF);
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
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	struct sigaction sa;
	int i = 0;

	GT_ENTER(MAIN);
	nest(8);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while (handled < SIGNALS)
		outer(i++);
	it.it_value.tv_usec = 0;
	it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	GT_LEAVE();
	gt_print();
	return 0;
}
