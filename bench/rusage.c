/* SPDX-License-Identifier: MIT */
/*
 * rusage: run a command and record what it cost, for bench/run (GNU time
 * is not part of the base system; this is the part of it we need).
 *
 *   rusage -o FILE command [args...]
 *
 * Runs the command with stdin, stdout and stderr inherited, waits for it
 * with wait4() and writes one line to FILE:
 *   WALL_S USER_S SYS_S MAXRSS_KB
 * (wall-clock seconds from fork to exit, CPU seconds in user and kernel
 * mode, peak resident set size in KiB, all from the kernel's rusage of
 * that one process).  Exits with the command's status (128 + signal when
 * killed), 127 when it cannot be run, 2 on usage errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
tv(const struct timeval *t)
{
	return (double)t->tv_sec + (double)t->tv_usec / 1e6;
}

int
main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	const char *out;
	FILE *fp;
	pid_t pid;
	int st;

	if (argc < 4 || strcmp(argv[1], "-o") != 0) {
		fprintf(stderr, "usage: rusage -o file command [args...]\n");
		return 2;
	}
	out = argv[2];
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "rusage: fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, "rusage: cannot run '%s': %s\n", argv[3],
		    strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &st, 0, &ru) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "rusage: wait4: %s\n", strerror(errno));
			return 127;
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fp = fopen(out, "w");
	if (fp == NULL) {
		fprintf(stderr, "rusage: cannot write '%s': %s\n", out,
		    strerror(errno));
		return 127;
	}
	fprintf(fp, "%.3f %.3f %.3f %ld\n",
	    (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	    tv(&ru.ru_utime), tv(&ru.ru_stime), ru.ru_maxrss);
	fclose(fp);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
