/* SPDX-License-Identifier: MIT */
/*
 * Test target for a trigger in a library loaded later: dlopen()s libm,
 * then calls cos through the pointer dlsym gives, from call_it().
 */
#include <dlfcn.h>
#include <stdio.h>

__attribute__((noinline)) double
call_it(double (*f)(double), double x)
{
	return f(x) + 1.0;
}

int
main(void)
{
	void *h = dlopen("libm.so.6", RTLD_NOW);
	double (*f)(double);

	if (h == NULL)
		return 1;
	*(void **)&f = dlsym(h, "cos");
	if (f == NULL)
		return 1;
	printf("%.3f\n", call_it(f, 0.5));
	dlclose(h);
	return 0;
}
