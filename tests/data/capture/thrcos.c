/* SPDX-License-Identifier: MIT */
/*
 * Test target for a trigger in a thread created while recording: maps
 * libm, starts a thread that prints "PID TID" (flushed), blocks until a
 * byte arrives on the fifo argv[1], then calls cos through the pointer
 * dlsym gives, from call_it(), and prints the result.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static const char *fifo;
static double (*f)(double);
static double result;

__attribute__((noinline)) double
call_it(double (*g)(double), double x)
{
	return g(x) + 1.0;
}

static void *
thread(void *arg)
{
	char b;
	int fd;

	(void)arg;
	printf("%d %d\n", (int)getpid(), (int)gettid());
	fflush(stdout);
	if ((fd = open(fifo, O_RDONLY)) < 0 || read(fd, &b, 1) != 1)
		return NULL;
	close(fd);
	result = call_it(f, 0.5);
	return NULL;
}

int
main(int argc, char **argv)
{
	void *h = dlopen("libm.so.6", RTLD_NOW);
	pthread_t t;

	if (h == NULL || argc != 2)
		return 1;
	fifo = argv[1];
	*(void **)&f = dlsym(h, "cos");
	if (f == NULL || pthread_create(&t, NULL, thread, NULL) != 0 ||
	    pthread_join(t, NULL) != 0)
		return 1;
	printf("%.3f\n", result);
	return 0;
}
