/* SPDX-License-Identifier: MIT */
/*
 * Counters compiled into the ground-truth programs of
 * tests/pipeline-groundtruth.bats: the truth the trace is compared with
 * comes from the program itself, not from mt.
 *
 * A program defines GT_NFN and gt_names[] (one name per counted
 * function), starts each counted function with GT_ENTER(index) and leaves
 * it through GT_LEAVE(); where a non-local exit (longjmp, a caught
 * exception) lands, it puts back the depth it saved with GT_DEPTH.
 * gt_print() writes, in the format tests/helpers/gt-stacks writes:
 *
 *   calls NAME N     for each counted function
 *   depth N          the deepest nesting of counted functions
 *
 * Counters are atomic and the depth is per thread, so threads may share
 * them.
 */
#ifndef GT_H
#define GT_H

#include <stdio.h>

static unsigned long gt_calls[GT_NFN];
static int gt_max;
static __thread int gt_depth;

#define GT_DEPTH gt_depth

static inline __attribute__((always_inline)) void
gt_enter(int f)
{
	int d = ++gt_depth, m;

	__atomic_fetch_add(&gt_calls[f], 1, __ATOMIC_RELAXED);
	m = __atomic_load_n(&gt_max, __ATOMIC_RELAXED);
	while (d > m && !__atomic_compare_exchange_n(&gt_max, &m, d, 0,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

#define GT_ENTER(f) gt_enter(f)
#define GT_LEAVE() (gt_depth--)

static void
gt_print(void)
{
	int i;

	for (i = 0; i < GT_NFN; i++)
		printf("calls %s %lu\n", gt_names[i], gt_calls[i]);
	printf("depth %d\n", gt_max);
}

#endif /* GT_H */
