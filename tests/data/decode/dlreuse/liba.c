/* SPDX-License-Identifier: MIT */
/*
 * Library A of tests/mt-decode-epochs.bats: work() calls mid() n times,
 * mid() calls step() twice; count counts every call.  libb.c has the same
 * size and layout, so the loader maps it where A was after A's dlclose.
 */
int count;

static __attribute__((noinline)) int
step(int x)
{
	count++;
	return x * 3 + 1;
}

static __attribute__((noinline)) int
mid(int x)
{
	count++;
	return step(x) + step(x + 1);
}

int
work(int n)
{
	int s = 0, i;

	count++;
	for (i = 0; i < n; i++)
		s += mid(i);
	return s;
}
