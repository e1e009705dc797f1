/* SPDX-License-Identifier: MIT */
/* Calls through function pointers (indirect calls, TIP targets). */
__attribute__((noinline)) static int add1(int x) { return x + 1; }
__attribute__((noinline)) static int dbl(int x) { return x * 2; }
__attribute__((noinline)) static int neg(int x) { return -x; }

static int (*volatile table[])(int) = { add1, dbl, neg };

__attribute__((noinline)) static int
apply(int (*f)(int), int x)
{
	return f(x) + 1;
}

int
main(void)
{
	int i, x = 1;

	for (i = 0; i < 12; i++)
		x = apply(table[i % 3], x) & 0xffff;
	return x == 0x7fff;
}
