/* SPDX-License-Identifier: MIT */
/*
 * Reads its own code: maps libm (LD_LIBRARY_PATH picks which copy), and
 * prints the file offset of the function argv[1] (dlsym's address,
 * placed in libm's file by /proc/self/maps), the byte it finds there in
 * its own memory, in hex, and the file mapped: "OFFSET BYTE PATH".  A
 * breakpoint someone else's uprobe put there shows as cc.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
	void *h = dlopen("libm.so.6", RTLD_NOW);
	uintptr_t a, lo, hi;
	unsigned long long pgoff;
	char line[4608], perm[8], path[4096];
	int n;
	FILE *f;

	if (h == NULL || argc != 2 || (a = (uintptr_t)dlsym(h, argv[1])) == 0)
		return 1;
	if ((f = fopen("/proc/self/maps", "r")) == NULL)
		return 1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %llx %*s %*s "
		    "%n", &lo, &hi, perm, &pgoff, &n) == 4 && a >= lo &&
		    a < hi && strstr(line, "libm.so.6") != NULL &&
		    sscanf(line + n, "%4095s", path) == 1) {
			printf("%llx %02x %s\n", (unsigned long long)(a - lo +
			    pgoff), *(volatile unsigned char *)a, path);
			return 0;
		}
	return 1;
}
