/* SPDX-License-Identifier: MIT */
/*
 * A program whose functions another tool probes (tests/data/emu/
 * uprobe-hold.c): each counts its own calls, and main prints the counts,
 * the truth the decoded trace is compared with.  The probed instructions
 * are of three kinds the kernel handles differently: a push (executed out
 * of line or emulated), a rip-relative load (out of line, with the
 * address fixed up) and a direct call (emulated).
 */
#include <stdio.h>

volatile int sink;
int n_push, n_riprel, n_call;	/* calls counted by the functions */

/* The probed instructions are written in assembly so they are exact. */

/* First instruction: push %rbx. */
__attribute__((noinline, naked)) int
probe_push(int x)
{
	asm volatile("push %rbx\n\t"
	    "mov %edi, %ebx\n\t"
	    "addl $1, n_push(%rip)\n\t"
	    "mov %ebx, %eax\n\t"
	    "add sink(%rip), %eax\n\t"
	    "pop %rbx\n\t"
	    "ret");
}

/* First instruction: a rip-relative load. */
__attribute__((noinline, naked)) int
probe_riprel(int x)
{
	asm volatile("mov sink(%rip), %eax\n\t"
	    "addl $1, n_riprel(%rip)\n\t"
	    "add %edi, %eax\n\t"
	    "ret");
}

__attribute__((noinline)) int
leaf(int x)
{
	return x * 3 + sink;
}

/* First instruction: a direct call. */
__attribute__((noinline, naked)) int
probe_call(int x)
{
	asm volatile("call leaf\n\t"
	    "addl $1, n_call(%rip)\n\t"
	    "ret");
}

int
main(void)
{
	int i, s = 0;

	for (i = 0; i < 5; i++)
		s += probe_push(i) + probe_riprel(i) + probe_call(i);
	printf("push %d riprel %d call %d sum %d\n", n_push, n_riprel,
	    n_call, s);
	return s == 0;
}
