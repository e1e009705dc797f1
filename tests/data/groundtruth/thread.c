/* SPDX-License-Identifier: MIT */
/*
 * A thread started mid-run: main works through step() for a while, then
 * starts a worker that does the same, and joins it.
 */
#include <pthread.h>

#define GT_NFN 4
static const char *const gt_names[GT_NFN] = {
	"main", "worker", "step", "leaf",
};
enum { MAIN, WORKER, STEP, LEAF };
#include "gt.h"

static volatile unsigned long sink;

__attribute__((noinline)) static void
leaf(int i)
{
	GT_ENTER(LEAF);
	sink += (unsigned long)i;
	GT_LEAVE();
}

__attribute__((noinline)) static void
step(int i)
{
	GT_ENTER(STEP);
	leaf(i);
	leaf(i + 1);
	GT_LEAVE();
}

static void *
worker(void *arg)
{
	int i;

	GT_ENTER(WORKER);
	for (i = 0; i < 40; i++)
		step(i);
	GT_LEAVE();
	return arg;
}

int
main(void)
{
	pthread_t t;
	int i;

	GT_ENTER(MAIN);
	for (i = 0; i < 40; i++)
		step(i);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	GT_LEAVE();
	gt_print();
	return 0;
}
