/* SPDX-License-Identifier: MIT */
/*
 * The demo from magic-trace's README: a loop that loads libm, calls cos
 * twice and unloads it.  `demo [N]` runs N iterations (default 1; 0 loops
 * until killed, with a pause between iterations, for attach demos).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	long i;

	for (i = 0; n == 0 || i < n; i++) {
		void *h = dlopen("libm.so.6", RTLD_NOW);
		double (*cosp)(double);

		if (h == NULL) {
			fprintf(stderr, "demo: %s\n", dlerror());
			return 1;
		}
		*(void **)&cosp = dlsym(h, "cos");
		printf("%f %f\n", cosp(0.5), cosp(1.0));
		dlclose(h);
		if (n == 0)
			usleep(100000);
	}
	return 0;
}
