/* SPDX-License-Identifier: MIT */
/*
 * Test target for child processes: the parent forks a child that, after
 * 200 ms, calls work() argv[1] times (default 3) and exits, or with more
 * arguments execs argv[2] with the rest; the parent never calls work()
 * and waits for the child.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int
work(int i)
{
	return i * 7 + 3;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3, i, st;
	volatile int s = 0;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (pid == 0) {
		usleep(200000);
		if (argc > 2) {
			execv(argv[2], argv + 2);
			_exit(127);
		}
		for (i = 0; i < n; i++)
			s += work(i);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return 0;
}
