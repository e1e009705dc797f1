/* SPDX-License-Identifier: MIT */
/*
 * Test target of tests/mt-capture-qemu.bats: makes QEMU translate the
 * same code again and again.  Each round makes the page of its own
 * function hit() writable and executable again (QEMU 7.2 user mode
 * drops the blocks translated from a page that becomes writable), then
 * calls it; and does the same with a page of generated code (unchanged
 * bytes, a call back into the program).  Usage: reprot [N]: N rounds
 * (default 1000); prints the sum.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Alone at the start of its page. */
__attribute__((noinline, aligned(4096))) int
hit(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int
callback(int x)
{
	return x + 1;
}

/* mov $imm32, %edi; movabs $callback, %rax; call *%rax; ret */
static void
emit(unsigned char *p, int imm)
{
	unsigned long long cb = (unsigned long long)(uintptr_t)&callback;

	p[0] = 0xbf;
	memcpy(p + 1, &imm, 4);
	p[5] = 0x48;
	p[6] = 0xb8;
	memcpy(p + 7, &cb, 8);
	p[15] = 0xff;
	p[16] = 0xd0;
	p[17] = 0xc3;
}

int
main(int argc, char **argv)
{
	void *page = (void *)((uintptr_t)&hit & ~(uintptr_t)4095);
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int n = argc > 1 ? atoi(argv[1]) : 1000, i;
	int (*fn)(void);
	long s = 0;

	if (code == MAP_FAILED)
		return 1;
	emit(code, 7);
	fn = (int (*)(void))(uintptr_t)code;
	for (i = 0; i < n; i++) {
		/* Writable again: QEMU forgets what it translated there. */
		if (mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) ||
		    mprotect(page, 4096, PROT_READ | PROT_EXEC) ||
		    mprotect(code, 4096, PROT_READ | PROT_WRITE) ||
		    mprotect(code, 4096, PROT_READ | PROT_EXEC))
			return 1;
		s += hit(i);
		s += fn();
	}
	printf("%ld\n", s);
	return 0;
}
