/* SPDX-License-Identifier: MIT */
/* Deep recursion: 200 frames, deeper than the 64-entry return stack. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long
down(long n)
{
	if (n == 0)
		return 0;
	return 1 + down(n - 1) + (n & 1);
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200;

	return down(n) == 0;
}
