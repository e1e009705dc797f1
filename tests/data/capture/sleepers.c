/* SPDX-License-Identifier: MIT */
/*
 * Test target with many threads: argv[1] threads (default 30) that sleep,
 * created argv[3] milliseconds apart (default 0), while the main thread
 * then sleeps argv[2] seconds (default 30).  For the descriptor tests
 * (attaching costs one sideband event per thread and CPU) and the tests
 * of rings that fill.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static void *
sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 30, i;
	int gap = argc > 3 ? atoi(argv[3]) : 0;
	pthread_t t;

	for (i = 0; i < n; i++) {
		if (pthread_create(&t, NULL, sleeper, NULL) != 0)
			return 1;
		if (gap > 0)
			usleep((useconds_t)gap * 1000);
	}
	sleep(argc > 2 ? (unsigned)atoi(argv[2]) : 30);
	return 0;
}
