/* SPDX-License-Identifier: MIT */
/*
 * What the timer-signal programs of tests/pipeline-groundtruth.bats
 * (signal.c, sigjmp.c, sigbranch.c) share, included after gt.h: their
 * gt_names[] list "nest", "handler" and "work" (indices NEST, HANDLER and
 * WORK), their handler calls work() first (GTS_HANDLER_ENTER), main
 * recurses through nest() before the timer starts, so that the deepest
 * nesting does not depend on where the signals land, and the handler is
 * installed for SIGALRM (gts_install) and the timer set (gts_timer).
 */
#ifndef GTSIG_H
#define GTSIG_H

#include <signal.h>
#include <string.h>
#include <sys/time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void
work(void)
{
	GT_ENTER(WORK);
	sink += 3;
	GT_LEAVE();
}

/* A handler's first steps: counted, then work(). */
#define GTS_HANDLER_ENTER(sig) do {	\
	GT_ENTER(HANDLER);		\
	(void)(sig);			\
	work();				\
} while (0)

__attribute__((noinline)) static void
nest(int n)
{
	GT_ENTER(NEST);
	if (n > 1)
		nest(n - 1);
	sink++;
	GT_LEAVE();
}

/* SIGALRM runs @handler. */
static void
gts_install(void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGALRM, &sa, NULL);
}

/* The real-time timer fires in @first us, then every @every us (0: once;
 * both 0: stopped). */
static void
gts_timer(long first, long every)
{
	struct itimerval it = { { 0, every }, { 0, first } };

	setitimer(ITIMER_REAL, &it, NULL);
}

#endif /* GTSIG_H */
