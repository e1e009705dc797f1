/* SPDX-License-Identifier: MIT */
/*
 * Target of tests/helpers/timed-diff: straight-line code longer than
 * libipt's block-cache fill (1024 instructions in a row) and than a
 * block's 16-bit instruction count, entered at its start and in its
 * middle, with direct calls and conditional branches between the runs,
 * each run visited cold and then again warm.
 */
#include <stdio.h>

#define NOP16	"nop; nop; nop; nop; nop; nop; nop; nop; " \
		"nop; nop; nop; nop; nop; nop; nop; nop\n"

int run_a(int);
int run_b(int);
int run_b_mid(int);
__asm__(
	".text\n"
	".globl run_a\n.type run_a,@function\nrun_a:\n"
	"	mov %edi, %eax\n"
	"	.rept 70\n" NOP16 "	.endr\n"	/* 1120 */
	"	add $1, %eax\n"
	"	ret\n"
	".size run_a, .-run_a\n"
	".globl run_b\n.type run_b,@function\nrun_b:\n"
	"	mov %edi, %eax\n"
	"	.rept 64\n" NOP16 "	.endr\n"	/* 1024 */
	"	call leaf\n"
	".globl run_b_mid\n.type run_b_mid,@function\nrun_b_mid:\n"
	"	add $2, %eax\n"
	"	.rept 8\n" NOP16 "	.endr\n"
	"	test $1, %eax\n"
	"	jz 1f\n"
	"	.rept 66\n" NOP16 "	.endr\n"	/* 1056 */
	"1:	add $3, %eax\n"
	"	ret\n"
	".size run_b, .-run_b\n"
	".type leaf,@function\nleaf:\n"
	"	add $5, %eax\n"
	"	ret\n"
	".size leaf, .-leaf\n");

int
main(void)
{
	int (*volatile ind)(int) = run_b_mid;
	int s = 0, i;

	s += run_b_mid(1);	/* the middle first, cold */
	for (i = 0; i < 4; i++) {
		s += run_a(i);
		s += run_b(i);	/* through the middle, now warm */
		s += ind(i);
	}
	printf("%d\n", s);
	return 0;
}
