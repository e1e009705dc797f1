/* SPDX-License-Identifier: MIT */
/*
 * Test target of tests/mt-capture-qemu.bats: generates code at run time
 * into an anonymous mapping (a function that calls back into the program
 * through a pointer), calls it, then rewrites it in place (another
 * constant) and calls it again.  No file holds that code: the snapshot
 * must carry its bytes.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

__attribute__((noinline)) int
callback(int x)
{
	return x + 1;
}

/* mov $imm32, %edi; movabs $callback, %rax; call *%rax; ret */
static void
emit(unsigned char *p, int imm)
{
	unsigned long long cb = (unsigned long long)(unsigned long)&callback;

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
main(void)
{
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE |
	    PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int (*fn)(void), s = 0, i;

	if (code == MAP_FAILED)
		return 1;
	*(void **)&fn = code;
	emit(code, 41);
	for (i = 0; i < 3; i++)
		s += fn();
	emit(code, 99);
	for (i = 0; i < 3; i++)
		s += fn();
	printf("%d\n", s);
	return 0;
}
