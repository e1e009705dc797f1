/* SPDX-License-Identifier: MIT */
/*
 * Target of tests/helpers/timed-diff: the same code at two addresses.
 * The program maps the pages of its own executable that hold sum() and
 * step() (code that touches no data, so a copy runs anywhere) a second
 * time, at another address, and calls them through both mappings; then
 * it unmaps the copy and maps the same pages again at a third address.
 * A decoder whose caches are per file section (libipt's block cache)
 * meets code it has seen, at an IP it has not.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) int
step(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int
sum(int n)
{
	int s = 0, i;

	for (i = 0; i < n; i++)
		s += i & 1 ? step(i) : i;
	return s;
}

#define SPAN	(64 * 1024)

/* The file offset of @fn in the executable, from /proc/self/maps. */
static long
file_off(void *fn)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi, off, a = (unsigned long)fn;
	char line[512];
	long r = -1;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 &&
		    a >= lo && a < hi) {
			r = (long)(a - lo + off);
			break;
		}
	if (f != NULL)
		fclose(f);
	return r;
}

typedef int (*fn)(int);

int
main(void)
{
	long off = file_off((void *)sum), soff = file_off((void *)step);
	long base, lo;
	int fd = open("/proc/self/exe", O_RDONLY), s = 0, r, i;
	unsigned char *m;

	if (off < 0 || soff < 0 || fd < 0)
		return 1;
	lo = off < soff ? off : soff;
	base = lo & ~4095L;
	if ((off > soff ? off : soff) - base >= SPAN)
		return 1;
	for (r = 0; r < 3; r++) {
		s += sum(5 + r);
		m = mmap(NULL, SPAN, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
		    base);
		if (m == MAP_FAILED)
			return 1;
		for (i = 0; i < 3; i++)
			s += ((fn)(m + (off - base)))(4 + i);
		s += sum(3);
		munmap(m, SPAN);
	}
	printf("%d\n", s);
	return 0;
}
