/* SPDX-License-Identifier: MIT */
/*
 * Library B of tests/mt-decode-epochs.bats: the same symbols as liba.c,
 * other code at the same addresses (mid() calls step() only when x & 7).
 */
int count;

static __attribute__((noinline)) int
step(int x)
{
	int i;

	count++;
	for (i = 0; i < 3; i++)
		x ^= x << 1;
	return x;
}

static __attribute__((noinline)) int
mid(int x)
{
	count++;
	return x & 7 ? step(x) : x;
}

int
work(int n)
{
	int s = 0, i;

	count++;
	for (i = 0; i < n; i++)
		s += mid(i) * 5;
	return s;
}
