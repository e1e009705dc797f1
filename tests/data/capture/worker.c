/* SPDX-License-Identifier: MIT */
/*
 * Test target for trigger tests: the function mt_test_hit() runs only in
 * a worker thread, never in the main thread.  With an argument, the
 * worker first sleeps that many milliseconds.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int hits;

__attribute__((noinline)) void
mt_test_hit(void)
{
	hits++;			/* the FILE:LINE trigger test names this line */
}

static void *
worker(void *arg)
{
	int ms = *(int *)arg;

	if (ms > 0)
		usleep((useconds_t)ms * 1000);
	mt_test_hit();
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t t;
	int ms = argc > 1 ? atoi(argv[1]) : 0;

	if (pthread_create(&t, NULL, worker, &ms) != 0)
		return 1;
	pthread_join(t, NULL);
	printf("hits %d\n", hits);
	return 0;
}
