/* SPDX-License-Identifier: MIT */
/*
 * Code without symbols: the test strips this program.  main calls mid,
 * mid calls leaf and then twice, through a tail call (a jmp with -O2),
 * reaches leaf again from hop.  Besides the counters it prints
 * "addr NAME 0xADDR", where each counted function starts in this run, so
 * the test can find them in the trace.
 */
#define GT_NFN 4
static const char *const gt_names[GT_NFN] = { "main", "mid", "hop", "leaf" };
enum { MAIN, MID, HOP, LEAF };
#include "gt.h"

#define ROUNDS 20

static volatile unsigned long sink;

__attribute__((noinline)) static int
leaf(int x)
{
	GT_ENTER(LEAF);
	sink += (unsigned long)x;
	GT_LEAVE();
	return x + 1;
}

/* Ends in a tail call of leaf: its frame is replaced, not nested. */
__attribute__((noinline)) static int
hop(int x)
{
	GT_ENTER(HOP);
	sink++;
	GT_LEAVE();
	return leaf(x * 2);
}

__attribute__((noinline)) static int
mid(int x)
{
	int r;

	GT_ENTER(MID);
	r = leaf(x);
	r += hop(r);
	sink += (unsigned long)r;
	GT_LEAVE();
	return r;
}

int
main(void)
{
	int i;

	GT_ENTER(MAIN);
	for (i = 0; i < ROUNDS; i++)
		mid(i);
	GT_LEAVE();
	gt_print();
	printf("addr main %p\naddr mid %p\naddr hop %p\naddr leaf %p\n",
	    (void *)main, (void *)mid, (void *)hop, (void *)leaf);
	return 0;
}
