/* SPDX-License-Identifier: MIT */
/*
 * dlreuse LIBA LIBB: load LIBA, call its work(20), unload it, load LIBB
 * (mapped where LIBA was) and call its work(20).  Prints the calls each
 * library counted, the load address of each and whether they are the
 * same (tests/mt-decode-epochs.bats).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *
load(const char *path, int **count, int (**work)(int), void **base)
{
	void *h = dlopen(path, RTLD_NOW);
	Dl_info info;

	if (h == NULL) {
		fprintf(stderr, "dlreuse: %s\n", dlerror());
		exit(2);
	}
	*count = dlsym(h, "count");
	*(void **)work = dlsym(h, "work");
	if (*count == NULL || *work == NULL ||
	    dladdr((void *)*work, &info) == 0) {
		fprintf(stderr, "dlreuse: %s: no count or work\n", path);
		exit(2);
	}
	*base = info.dli_fbase;
	return h;
}

int
main(int argc, char **argv)
{
	int *count, (*work)(int), na;
	void *h, *base_a, *base_b;

	if (argc != 3)
		return 2;
	h = load(argv[1], &count, &work, &base_a);
	work(20);
	na = *count;
	dlclose(h);
	h = load(argv[2], &count, &work, &base_b);
	work(20);
	printf("calls-a %d\ncalls-b %d\nbase-a %p\nbase-b %p\nreused %d\n",
	    na, *count, base_a, base_b, base_a == base_b);
	dlclose(h);
	return 0;
}
