/* SPDX-License-Identifier: MIT */
/*
 * rusage: run a command and record what it cost, for bench/run (GNU time
 * is not part of the base system; this is the part of it we need).
 *
 *   rusage -o FILE command [args...]
 *   rusage -o FILE -p command [args...] '|' command [args...] ...
 *
 * Runs the command with stdin, stdout and stderr inherited, waits for it
 * with wait4() and writes one line to FILE:
 *   WALL_S USER_S SYS_S MAXRSS_KB
 * (wall-clock seconds from fork to exit, CPU seconds in user and kernel
 * mode, peak resident set size in KiB, all from the kernel's rusage of
 * that one process).  Exits with the command's status (128 + signal when
 * killed), 127 when it cannot be run, 2 on usage errors.
 *
 * With -p the arguments are a pipeline, its commands separated by '|'
 * arguments, started as a shell starts one (each command forked here,
 * the first reading this stdin, the last writing this stdout); FILE
 * gets one line for the whole (wall from the first fork to the last
 * exit, CPU summed, the largest RSS), then one line per command, in
 * order.  The status is the last command's.  No shell runs: its own
 * start-up is not the pipeline's.
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

struct stage {
	pid_t pid;
	struct rusage ru;
	struct timespec end;
	int st;
};

static double
since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	    (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/*
 * Starts the commands of argv (NULL-terminated; with @split, "|" arguments
 * between them, else one command) as a shell starts a pipeline, waits for
 * them all and writes the line for the whole to @out, then with @split a
 * line per command.  Returns the last command's status.
 */
static int
run(const char *out, char **argv, int split)
{
	struct stage st[16];
	struct timespec t0, t1;
	int n = 0, i, in = -1, rc;
	double u = 0, sy = 0;
	long r = 0;
	FILE *fp;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (argv[0] != NULL) {
		char **end = argv;
		int fd[2] = { -1, -1 };

		while (*end != NULL && !(split && strcmp(*end, "|") == 0))
			end++;
		if (end == argv || n == 16) {
			fprintf(stderr, "rusage: empty command or too many\n");
			return 2;
		}
		if (*end != NULL && pipe(fd) < 0) {
			fprintf(stderr, "rusage: pipe: %s\n", strerror(errno));
			return 127;
		}
		st[n].pid = fork();
		if (st[n].pid < 0) {
			fprintf(stderr, "rusage: fork: %s\n", strerror(errno));
			return 127;
		}
		if (st[n].pid == 0) {
			if (in >= 0) {
				dup2(in, 0);
				close(in);
			}
			if (fd[1] >= 0) {
				dup2(fd[1], 1);
				close(fd[1]);
				close(fd[0]);
			}
			*end = NULL;
			execvp(argv[0], argv);
			fprintf(stderr, "rusage: cannot run '%s': %s\n",
			    argv[0], strerror(errno));
			_exit(127);
		}
		if (in >= 0)
			close(in);
		if (fd[1] >= 0)
			close(fd[1]);
		in = fd[0];
		n++;
		argv = *end != NULL ? end + 1 : end;
	}
	for (i = 0; i < n; ) {
		struct rusage ru;
		int s, k;
		pid_t p = wait4(-1, &s, 0, &ru);

		if (p < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "rusage: wait4: %s\n", strerror(errno));
			return 127;
		}
		for (k = 0; k < n && st[k].pid != p; k++)
			;
		if (k == n)
			continue;
		st[k].ru = ru;
		st[k].st = s;
		clock_gettime(CLOCK_MONOTONIC, &st[k].end);
		i++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fp = fopen(out, "w");
	if (fp == NULL) {
		fprintf(stderr, "rusage: cannot write '%s': %s\n", out,
		    strerror(errno));
		return 127;
	}
	for (i = 0; i < n; i++) {
		u += tv(&st[i].ru.ru_utime);
		sy += tv(&st[i].ru.ru_stime);
		if (st[i].ru.ru_maxrss > r)
			r = st[i].ru.ru_maxrss;
	}
	fprintf(fp, "%.6f %.6f %.6f %ld\n", since(&t0, &t1), u, sy, r);
	for (i = 0; split && i < n; i++)
		fprintf(fp, "%.6f %.6f %.6f %ld\n", since(&t0, &st[i].end),
		    tv(&st[i].ru.ru_utime), tv(&st[i].ru.ru_stime),
		    st[i].ru.ru_maxrss);
	fclose(fp);
	rc = st[n - 1].st;
	if (WIFSIGNALED(rc))
		return 128 + WTERMSIG(rc);
	return WEXITSTATUS(rc);
}

int
main(int argc, char **argv)
{
	int split;

	if (argc < 4 || strcmp(argv[1], "-o") != 0) {
		fprintf(stderr, "usage: rusage -o file [-p] command [args...]"
		    " ['|' command [args...]]...\n");
		return 2;
	}
	split = strcmp(argv[3], "-p") == 0;
	if (split && argc < 5) {
		fprintf(stderr, "rusage: -p needs a command\n");
		return 2;
	}
	return run(argv[2], argv + 3 + split, split);
}
