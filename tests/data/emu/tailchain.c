/*
 * A tail-call chain for the stripped-code tests: built -O2
 * -foptimize-sibling-calls and stripped, c1 and c2 end in `jmp` to the
 * next function (noipa keeps gcc from inlining or cloning them), so only
 * FDE ranges tell that each jump leaves its function.  printf is the
 * first call through its PLT entry: with -z lazy it goes through ld.so's
 * resolver before reaching libc.
 */
#include <stdio.h>

volatile int sink;

__attribute__((noipa)) int
c3(int x)
{
	sink += x;
	return x * 7 + sink;
}

__attribute__((noipa)) int
c2(int x)
{
	return c3(x + 2);
}

__attribute__((noipa)) int
c1(int x)
{
	return c2(x * 3);
}

int
main(int argc, char **argv)
{
	int i, s = 0;

	(void)argv;
	for (i = 0; i < 3; i++)
		s += c1(argc + i);
	printf("%d\n", s);
	return 0;
}
