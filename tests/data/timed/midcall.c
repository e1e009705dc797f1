/* SPDX-License-Identifier: MIT */
/*
 * Target of tests/helpers/timed-diff: calls into the middle of code
 * already decoded (a block libipt's cache holds, entered past its
 * start), direct and indirect calls, a recursion whose returns are
 * compressed or not (deeper than the 64-entry return stack), a switch
 * through a jump table, and a tail call.
 */
#include <stdio.h>

int body(int);
int body_in(int);
__asm__(
	".text\n"
	".globl body\n.type body,@function\nbody:\n"
	"	mov %edi, %eax\n"
	"	add $1, %eax\n"
	"	add $2, %eax\n"
	"	call step\n"
	".globl body_in\n.type body_in,@function\nbody_in:\n"
	"	add $3, %eax\n"
	"	add $4, %eax\n"
	"	call step\n"
	"	add $5, %eax\n"
	"	ret\n"
	".size body, .-body\n"
	".type step,@function\nstep:\n"
	"	add $7, %eax\n"
	"	ret\n"
	".size step, .-step\n");

__attribute__((noinline)) int
deep(int n)
{
	if (n == 0)
		return 0;
	return 1 + deep(n - 1);
}

__attribute__((noinline)) int
pick(int k, int x)
{
	switch (k) {
	case 0: return x + 1;
	case 1: return x * 3;
	case 2: return x - 7;
	case 3: return x ^ 5;
	case 4: return x << 2;
	default: return x;
	}
}

__attribute__((noinline)) int
tail(int x)
{
	return pick(x & 7, x);
}

int
main(void)
{
	int (*volatile f)(int) = body_in;
	int (*volatile g)(int) = body;
	int s = 0, i;

	for (i = 0; i < 6; i++) {
		s += i & 1 ? f(i) : g(i);
		s += body(i);
		s += body_in(i);
		s += tail(i);
	}
	s += deep(100);
	s += deep(10);
	printf("%d\n", s);
	return 0;
}
