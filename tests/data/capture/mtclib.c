/* SPDX-License-Identifier: MIT */
/*
 * A small shared library for the container tests: mtc_fn(6) is 47.
 * Built with -DDECOY it is the same-named file of another mount
 * namespace: mtc_fn at another offset (after a pad function), returning
 * another value.
 */
#ifdef DECOY
__attribute__((noinline)) int
mtc_pad(int i)
{
	return i * 3 + 1;
}

int
mtc_fn(int i)
{
	return mtc_pad(i) - 100;
}
#else
int
mtc_fn(int i)
{
	return i * 7 + 5;
}
#endif
