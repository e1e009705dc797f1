/* SPDX-License-Identifier: MIT */
/*
 * bench/capture-speed's CPU-bound C workload: a sieve and a hash mix in
 * loops, few calls.  `cap-cpu N`: N rounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIEVE 65536

static unsigned char comp[SIEVE];

static unsigned
sieve(void)
{
	unsigned i, j, n = 0;

	memset(comp, 0, sizeof(comp));
	for (i = 2; i < SIEVE; i++) {
		if (comp[i])
			continue;
		n++;
		for (j = i * 2; j < SIEVE; j += i)
			comp[j] = 1;
	}
	return n;
}

static unsigned long
mix(unsigned long h, unsigned rounds)
{
	unsigned i;

	for (i = 0; i < rounds; i++) {
		h ^= h >> 13;
		h *= 0x5bd1e995u;
		if (h & 1)
			h += i;
		else
			h ^= i;
	}
	return h;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100, r;
	unsigned long h = 1;
	unsigned p = 0;

	for (r = 0; r < n; r++) {
		p += sieve();
		h = mix(h, 200000);
	}
	printf("%u %lx\n", p, h);
	return 0;
}
