/* SPDX-License-Identifier: MIT */
/*
 * A program whose functions another tool probes (tests/data/emu/
 * uprobe-hold.c): each counts its own calls, and main prints the counts,
 * the truth the decoded trace is compared with.  The probed instructions
 * are of three kinds the kernel handles differently: a push (executed out
 * of line or emulated), a rip-relative load (out of line, with the
 * address fixed up) and a direct call (emulated).
 *
 * With an argument "int3", main first writes an int3 over the nop that
 * starts self_bp, as a debugger would, and calls it: the SIGTRAP is the
 * program's own and its handler counts it ("traps 1").
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

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

/* First instruction: a nop, which main may overwrite with an int3. */
__attribute__((noinline, naked)) void
self_bp(void)
{
	asm volatile("nop\n\t"
	    "ret");
}

static volatile int traps;

static void
on_trap(int sig)
{
	(void)sig;
	traps++;
}

/* Write an int3 over self_bp's nop, then run it. */
static int
own_int3(void)
{
	uintptr_t pg = (uintptr_t)self_bp & ~(uintptr_t)4095;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_trap;
	if (sigaction(SIGTRAP, &sa, NULL) != 0 || mprotect((void *)pg, 8192,
	    PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
		return -1;
	*(volatile unsigned char *)(uintptr_t)self_bp = 0xcc;
	self_bp();	/* the handler returns after the int3: to the ret */
	return traps;
}

int
main(int argc, char **argv)
{
	int i, s = 0;

	if (argc > 1 && strcmp(argv[1], "int3") == 0)
		printf("traps %d\n", own_int3());
	for (i = 0; i < 5; i++)
		s += probe_push(i) + probe_riprel(i) + probe_call(i);
	printf("push %d riprel %d call %d sum %d\n", n_push, n_riprel,
	    n_call, s);
	return s == 0;
}
