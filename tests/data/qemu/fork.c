/* SPDX-License-Identifier: MIT */
/*
 * Test target of tests/mt-capture-qemu.bats: fork(2); the child calls
 * child_work 1000 times and exits, the parent calls parent_work 100 times
 * and waits.  The child's QEMU is a copy of the parent's, plugin and all:
 * it must not write the parent's rings.
 */
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>

__attribute__((noinline)) static int
child_work(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int
parent_work(int x)
{
	return x * 5 + 2;
}

int
main(void)
{
	volatile int s = 0;
	pid_t p = fork();
	int i;

	if (p == 0) {
		for (i = 0; i < 1000; i++)
			s += child_work(i);
		_exit(0);
	}
	for (i = 0; i < 100; i++)
		s += parent_work(i);
	waitpid(p, NULL, 0);
	printf("done\n");
	return 0;
}
