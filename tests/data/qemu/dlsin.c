/* SPDX-License-Identifier: MIT */
/*
 * Test target of tests/mt-capture-qemu.bats: loads libm with dlopen(),
 * calls sin through the pointer dlsym gives and unloads it, N times
 * (default 2).  Not cos: other mt-capture runs on the same machine put
 * system-wide uprobes on libm's cos, which a QEMU guest would execute.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* A call, not a tail jump: the trace shows "call" into sin. */
__attribute__((noinline)) static double
call_it(double (*f)(double), double x)
{
	return f(x) * 2.0;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2, i;

	for (i = 0; i < n; i++) {
		void *h = dlopen("libm.so.6", RTLD_NOW);
		double (*f)(double);

		if (h == NULL) {
			fprintf(stderr, "dlsin: %s\n", dlerror());
			return 1;
		}
		*(void **)&f = dlsym(h, "sin");
		printf("%f\n", call_it(f, 0.5));
		dlclose(h);
	}
	return 0;
}
