/* SPDX-License-Identifier: MIT */
/* Calls into the vDSO: clock_gettime and gettimeofday, a few times each. */
#include <sys/time.h>
#include <time.h>

int
main(void)
{
	struct timespec ts;
	struct timeval tv;
	long s = 0;
	int i;

	for (i = 0; i < 3; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		gettimeofday(&tv, NULL);
		s += ts.tv_nsec + tv.tv_usec;
	}
	return s == 0;
}
