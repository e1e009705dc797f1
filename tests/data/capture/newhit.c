/* SPDX-License-Identifier: MIT */
/*
 * Test target for triggers in new threads and child processes: "thread"
 * starts a thread whose first call is hit(), "fork" forks a child whose
 * first call is hit(); the main thread never calls hit().  Both then
 * wait 300 ms (for the capture to read the hit) and exit.  "forkmany
 * FIFO" forks a child that calls hit() 100 times and exits, prints
 * "done" once it is reaped, and exits when a byte arrives on FIFO.
 * "forkdl FIFO" forks a child that loads libm.so.6 (which the parent
 * never maps), waits 300 ms (for the capture to follow it), calls
 * hit(), prints "child PID", and exits when a byte arrives on FIFO; the
 * parent waits for it.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int
hit(int i)
{
	__asm__ volatile("" ::: "memory");
	return i * 5 + 1;
}

static void *
thread_main(void *arg)
{
	return (void *)(intptr_t)hit((int)(intptr_t)arg);
}

int
main(int argc, char **argv)
{
	pthread_t th;
	pid_t pid;
	int st, i, fd;
	char b;

	if (argc > 1 && strcmp(argv[1], "thread") == 0) {
		if (pthread_create(&th, NULL, thread_main, (void *)1) != 0)
			return 1;
		pthread_join(th, NULL);
	} else if (argc > 1 && strcmp(argv[1], "fork") == 0) {
		if ((pid = fork()) < 0)
			return 1;
		if (pid == 0)
			_exit(hit(2) == 11 ? 0 : 1);
		waitpid(pid, &st, 0);
	} else if (argc > 2 && strcmp(argv[1], "forkmany") == 0) {
		if ((pid = fork()) < 0)
			return 1;
		if (pid == 0) {
			for (i = 0, st = 0; i < 100; i++)
				st += hit(i);
			_exit(st == 24850 ? 0 : 1);
		}
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			return 1;
		printf("done\n");
		fflush(stdout);
		if ((fd = open(argv[2], O_RDONLY)) < 0 || read(fd, &b, 1) != 1)
			return 1;
		return 0;
	} else if (argc > 2 && strcmp(argv[1], "forkdl") == 0) {
		if ((pid = fork()) < 0)
			return 1;
		if (pid == 0) {
			if (dlopen("libm.so.6", RTLD_NOW) == NULL)
				_exit(1);
			usleep(300000);
			st = hit(3);
			printf("child %d\n", (int)getpid());
			fflush(stdout);
			if ((fd = open(argv[2], O_RDONLY)) < 0 ||
			    read(fd, &b, 1) != 1)
				_exit(1);
			_exit(st == 16 ? 0 : 1);
		}
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			return 1;
		return 0;
	} else {
		return 2;
	}
	usleep(300000);
	return 0;
}
