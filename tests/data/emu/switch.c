/* SPDX-License-Identifier: MIT */
/* A dense switch, compiled to a jump table (indirect jump). */
__attribute__((noinline)) static int
op(int k, int x)
{
	switch (k) {
	case 0: return x + 3;
	case 1: return x * 5;
	case 2: return x - 7;
	case 3: return x ^ 0x55;
	case 4: return x << 2;
	case 5: return x >> 1;
	case 6: return x | 9;
	case 7: return x & 0xfff;
	default: return x;
	}
}

int
main(void)
{
	volatile int n = 40;
	int i, x = 1;

	for (i = 0; i < n; i++)
		x = op(i % 9, x);
	return x == 12345;
}
