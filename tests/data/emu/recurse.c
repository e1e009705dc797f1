/* SPDX-License-Identifier: MIT */
/* Deep recursion: 200 frames, deeper than the 64-entry return stack. */
#include <stdlib.h>

static volatile long depth_sink;

__attribute__((noinline)) static long
down(long n)
{
	long r;

	if (n == 0)
		return 0;
	r = down(n - 1);
	depth_sink = r;		/* work after the call: no tail recursion */
	return r + 1;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200;

	return down(n) != n;
}
