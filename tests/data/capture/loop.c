/* SPDX-License-Identifier: MIT */
/*
 * Test target for mt-capture lifecycle tests: prints its pid, then loops
 * forever calling work(), sleeping a little so that it is cheap to run
 * under the emulate backend.
 */
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) int
work(int i)
{
	return i * 7 + 3;
}

int
main(void)
{
	volatile long s = 0;
	long i;

	printf("%d\n", (int)getpid());
	fflush(stdout);
	for (i = 0;; i++) {
		s += work((int)i);
		if (i % 100 == 0)
			usleep(2000);
	}
}
