/* SPDX-License-Identifier: MIT */
/*
 * Test target for mt-capture: forks a child that writes its pid to the
 * file argv[1] and exits; the parent waits for it and prints both pids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	pid_t p;
	int st;

	if (argc != 2)
		return 2;
	p = fork();
	if (p == 0) {
		FILE *f = fopen(argv[1], "w");

		if (f == NULL)
			_exit(1);
		fprintf(f, "%d\n", (int)getpid());
		_exit(fclose(f) != 0);
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		return 1;
	printf("%d %d\n", (int)getpid(), (int)p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
