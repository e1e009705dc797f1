/* SPDX-License-Identifier: MIT */
/*
 * Test target for a trigger in a library not loaded yet: blocks until a
 * byte arrives on the fifo argv[1], then dlopen()s the library argv[2]
 * (found as the loader finds it: LD_LIBRARY_PATH, ...), calls its
 * function argv[3] (int f(int)) with 6 and prints the result.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	int (*f)(int);
	void *h;
	char b;
	int fd;

	if (argc != 4 || (fd = open(argv[1], O_RDONLY)) < 0 ||
	    read(fd, &b, 1) != 1)
		return 1;
	close(fd);
	if ((h = dlopen(argv[2], RTLD_NOW)) == NULL)
		return 1;
	*(void **)&f = dlsym(h, argv[3]);
	if (f == NULL)
		return 1;
	printf("%d\n", f(6));
	return 0;
}
