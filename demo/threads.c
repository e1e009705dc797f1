/* SPDX-License-Identifier: MIT */
/*
 * A multi-threaded demo: N worker threads (default 2) each sum a range of
 * square roots through a few levels of calls, then the main thread joins
 * them.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 16

__attribute__((noinline)) static double
leaf(long i)
{
	return sqrt((double)i);
}

__attribute__((noinline)) static double
work(long from, long to)
{
	double s = 0;
	long i;

	for (i = from; i < to; i++)
		s += leaf(i);
	return s;
}

static void *
worker(void *arg)
{
	long id = (long)arg;
	double *r = malloc(sizeof(*r));

	if (r != NULL)
		*r = work(id * 100, id * 100 + 50);
	return r;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2, i;
	pthread_t t[MAXT];
	double total = 0;

	if (n < 1 || n > MAXT)
		n = 2;
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (i = 0; i < n; i++) {
		void *r;

		pthread_join(t[i], &r);
		if (r != NULL)
			total += *(double *)r;
		free(r);
	}
	printf("%.3f\n", total);
	return 0;
}
