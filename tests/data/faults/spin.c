/* SPDX-License-Identifier: MIT */
/*
 * A target for mt-capture's fault-injection tests: calls a small function
 * in a loop for ever (or N times with an argument), so a recording always
 * has calls and returns in it, and it can be killed at any moment.
 */
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void
work(unsigned long i)
{
	sink += i * 3;
}

int
main(int argc, char **argv)
{
	unsigned long i, n = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;

	for (i = 0; n == 0 || i < n; i++)
		work(i);
	return 0;
}
