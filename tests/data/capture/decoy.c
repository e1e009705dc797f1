/* SPDX-License-Identifier: MIT */
/*
 * Test target standing in for "the same-named file of another mount
 * namespace": it has a work() at another offset than loop.c's, and never
 * calls it.  The container test puts it where the traced program's path
 * points in mt-capture's own namespace.
 */
#include <unistd.h>

__attribute__((noinline)) int
pad(int i)
{
	return i * 3 + 1;
}

__attribute__((noinline)) int
work(int i)
{
	return pad(i) * 5 - 7;
}

int
main(void)
{
	for (;;)
		pause();
}
