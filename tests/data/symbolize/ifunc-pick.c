/* SPDX-License-Identifier: MIT */
/*
 * ifunc-pick: the offset in libm.so.6 of the function the loader picks
 * for the IFUNC cos on this CPU (what dlsym returns), as "pick 0xOFF"
 * (tests/mt-symbolize-ifunc.bats: the truth mt-symbolize must find).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

int
main(void)
{
	void *h = dlopen("libm.so.6", RTLD_NOW), *f;
	Dl_info info;

	if (h == NULL || (f = dlsym(h, "cos")) == NULL ||
	    dladdr(f, &info) == 0)
		return 1;
	printf("pick 0x%llx\n", (unsigned long long)((uintptr_t)f -
	    (uintptr_t)info.dli_fbase));
	return 0;
}
