/* SPDX-License-Identifier: MIT */
/*
 * A longjmp out of assembler that no symbol and no FDE covers, as
 * glibc's __longjmp is to a decoder that has only libc's .dynsym and no
 * FDE for it: a setjmp/longjmp pair of its own, written without .cfi
 * directives, hidden from .dynsym and stripped with the program, so the
 * indirect jump that ends nl_longjmp lands in the middle of main from
 * code of no known function.  Prints the number of rounds (ROUNDS).
 */
#include <stdio.h>

#define ROUNDS 4

/* rbx, rbp, r12-r15, the stack pointer after the return, its address. */
__attribute__((returns_twice)) int nl_setjmp(long buf[8]);
__attribute__((noreturn)) void nl_longjmp(long buf[8], int v);

__asm__(
	".text\n"
	".globl nl_setjmp\n"
	".hidden nl_setjmp\n"
	"nl_setjmp:\n"
	"	mov %rbx, 0(%rdi)\n"
	"	mov %rbp, 8(%rdi)\n"
	"	mov %r12, 16(%rdi)\n"
	"	mov %r13, 24(%rdi)\n"
	"	mov %r14, 32(%rdi)\n"
	"	mov %r15, 40(%rdi)\n"
	"	lea 8(%rsp), %rdx\n"
	"	mov %rdx, 48(%rdi)\n"
	"	mov (%rsp), %rdx\n"
	"	mov %rdx, 56(%rdi)\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	".globl nl_longjmp\n"
	".hidden nl_longjmp\n"
	"nl_longjmp:\n"
	"	mov 0(%rdi), %rbx\n"
	"	mov 8(%rdi), %rbp\n"
	"	mov 16(%rdi), %r12\n"
	"	mov 24(%rdi), %r13\n"
	"	mov 32(%rdi), %r14\n"
	"	mov 40(%rdi), %r15\n"
	"	mov 48(%rdi), %rsp\n"
	"	mov %esi, %eax\n"
	"	jmp *56(%rdi)\n");

static long env[8];
static volatile int sink;

__attribute__((noinline)) static void
dive(int n)
{
	sink += n;
	if (n == 0)
		nl_longjmp(env, 1);
	dive(n - 1);
	sink++;
}

int
main(void)
{
	volatile int rounds = 0;

	if (nl_setjmp(env) != 0)
		rounds++;
	if (rounds < ROUNDS)
		dive(2 + rounds);
	printf("%d\n", rounds);
	return 0;
}
