/* SPDX-License-Identifier: MIT */
/*
 * Target of tests/helpers/timed-diff: self-modifying, JIT-like code.  An
 * anonymous RWX page gets function A (a loop calling back), which runs
 * a few times; then B is written over it (other instruction boundaries,
 * another length), runs, then A again, and one instruction of A is
 * patched in place (its immediate and a branch's target) between calls.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

__attribute__((noinline)) int
cb(int x)
{
	return x + 1;
}

/* A: ecx = x & 3; loop { eax += 9 } ; call *%rsi; ret */
static const unsigned char fa[] = {
	0x89, 0xf8, 0x89, 0xf9, 0x83, 0xe1, 0x03,
	0x85, 0xc9, 0x74, 0x07,
	0x83, 0xc0, 0x09, 0xff, 0xc9, 0xeb, 0xf5,
	0x50, 0x89, 0xc7, 0xff, 0xd6, 0x59, 0x01, 0xc8, 0xc3,
};
/* B: nop; lea (%rdi,%rdi,2),%eax; jmp +1; int3; call *%rsi; ret */
static const unsigned char fb[] = {
	0x90, 0x8d, 0x04, 0x7f, 0xeb, 0x01, 0xcc, 0x50, 0x89, 0xc7,
	0xff, 0xd6, 0x59, 0x01, 0xc8, 0xc3,
};

typedef int (*fn)(int, int (*)(int));

int
main(void)
{
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int s = 0, i, r;

	if (p == MAP_FAILED)
		return 1;
	for (r = 0; r < 4; r++) {
		memset(p, 0xcc, 64);
		if (r & 1)
			memcpy(p, fb, sizeof(fb));
		else
			memcpy(p, fa, sizeof(fa));
		__builtin___clear_cache((char *)p, (char *)p + 64);
		for (i = 0; i < 4; i++)
			s += ((fn)p)(i + r, cb);
		if (!(r & 1)) {
			p[13] = (unsigned char)(5 + r);	/* add $imm */
			p[10] = 0x05;	/* je to the ret's neighbour: */
			p[10] = 0x07;	/* back as it was */
			s += ((fn)p)(r + 1, cb);
		}
	}
	printf("%d\n", s);
	return 0;
}
