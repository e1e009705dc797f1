/* SPDX-License-Identifier: MIT */
/*
 * A recursive demo: fib(N) by plain recursion, so the trace shows a call
 * tree as deep as N.  `recursive [N]` (default 12).
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long
fib(long n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 12;

	printf("fib(%ld) = %ld\n", n, fib(n));
	return 0;
}
