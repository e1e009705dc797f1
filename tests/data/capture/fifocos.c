/* SPDX-License-Identifier: MIT */
/*
 * Test target for a trigger that must stay in its own process: maps
 * libm, then blocks until a byte arrives on the fifo argv[1], then calls
 * cos through the pointer dlsym gives, from call_it().
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) double
call_it(double (*f)(double), double x)
{
	return f(x) + 1.0;
}

int
main(int argc, char **argv)
{
	void *h = dlopen("libm.so.6", RTLD_NOW);
	double (*f)(double);
	char b;
	int fd;

	if (h == NULL || argc != 2)
		return 1;
	*(void **)&f = dlsym(h, "cos");
	if (f == NULL || (fd = open(argv[1], O_RDONLY)) < 0 ||
	    read(fd, &b, 1) != 1)
		return 1;
	close(fd);
	printf("%.3f\n", call_it(f, 0.5));
	dlclose(h);
	return 0;
}
