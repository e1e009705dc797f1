/* SPDX-License-Identifier: MIT */
/* setjmp/longjmp out of nested calls: returns that do not match calls. */
#include <setjmp.h>

static jmp_buf env;
static volatile int depth_seen;

__attribute__((noinline)) static void
deep(int n)
{
	depth_seen = n;
	if (n == 0)
		longjmp(env, 1);
	deep(n - 1);
	depth_seen++;
}

int
main(void)
{
	volatile int rounds = 0;

	if (setjmp(env) == 0 || ++rounds < 3)
		deep(5);
	return depth_seen;
}
