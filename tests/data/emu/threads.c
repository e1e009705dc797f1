/* SPDX-License-Identifier: MIT */
/* Two threads calling a few functions each. */
#include <pthread.h>

__attribute__((noinline)) static long
leaf(long i)
{
	return i * 3 + 1;
}

__attribute__((noinline)) static long
work(long n)
{
	long s = 0, i;

	for (i = 0; i < n; i++)
		s += leaf(i);
	return s;
}

static void *
worker(void *arg)
{
	return (void *)work((long)arg);
}

int
main(void)
{
	pthread_t t;
	void *r;
	long s;

	pthread_create(&t, NULL, worker, (void *)20L);
	s = work(10);
	pthread_join(t, &r);
	return (s + (long)r) == 0;
}
