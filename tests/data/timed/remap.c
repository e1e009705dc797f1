/* SPDX-License-Identifier: MIT */
/*
 * Target of tests/helpers/timed-diff: code of one file mapped twice at
 * two addresses and called through both, then one mapping replaced by
 * another file's code at the same address (an other epoch there), and
 * the first file mapped again elsewhere.  The files (remap-a.bin,
 * remap-b.bin) are written in the current directory and kept, so the
 * decoder finds them.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* f(x): loop x & 7 times adding 3, call back through %rsi, return */
static const unsigned char code_a[] = {
	0x89, 0xf8,			/* mov %edi,%eax */
	0x89, 0xf9,			/* mov %edi,%ecx */
	0x83, 0xe1, 0x07,		/* and $7,%ecx */
	0x85, 0xc9,			/* 1: test %ecx,%ecx */
	0x74, 0x07,			/* je 2f */
	0x83, 0xc0, 0x03,		/* add $3,%eax */
	0xff, 0xc9,			/* dec %ecx */
	0xeb, 0xf5,			/* jmp 1b */
	0x50,				/* 2: push %rax */
	0x89, 0xc7,			/* mov %eax,%edi */
	0xff, 0xd6,			/* call *%rsi */
	0x59,				/* pop %rcx */
	0x01, 0xc8,			/* add %ecx,%eax */
	0xc3,				/* ret */
};
/* g(x): other instruction boundaries: x * 5 + callback(x), no loop */
static const unsigned char code_b[] = {
	0x90, 0x90, 0x90,		/* nops */
	0x8d, 0x04, 0xbf,		/* lea (%rdi,%rdi,4),%eax */
	0x50,				/* push %rax */
	0xff, 0xd6,			/* call *%rsi */
	0x59,				/* pop %rcx */
	0x01, 0xc8,			/* add %ecx,%eax */
	0xc3,				/* ret */
};

__attribute__((noinline)) int
cb(int x)
{
	return x + 1;
}

typedef int (*fn)(int, int (*)(int));

static void *
map(const char *path, void *at)
{
	int fd = open(path, O_RDONLY);
	void *p = mmap(at, 4096, PROT_READ | PROT_EXEC,
	    MAP_PRIVATE | (at ? MAP_FIXED : 0), fd, 0);

	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static int
put(const char *path, const unsigned char *c, size_t n)
{
	unsigned char page[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	memset(page, 0xcc, sizeof(page));
	memcpy(page, c, n);
	if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page))
		return -1;
	return close(fd);
}

int
main(void)
{
	void *a1, *a2, *a3;
	int s = 0, i;

	if (put("remap-a.bin", code_a, sizeof(code_a)) < 0 ||
	    put("remap-b.bin", code_b, sizeof(code_b)) < 0)
		return 1;
	a1 = map("remap-a.bin", NULL);
	a2 = map("remap-a.bin", NULL);
	if (a1 == NULL || a2 == NULL)
		return 1;
	for (i = 0; i < 5; i++) {
		s += ((fn)a1)(i, cb);
		s += ((fn)a2)(i + 3, cb);
	}
	if (map("remap-b.bin", a1) == NULL)
		return 1;
	for (i = 0; i < 5; i++)
		s += ((fn)a1)(i, cb) + ((fn)a2)(i, cb);
	munmap(a2, 4096);
	a3 = map("remap-a.bin", NULL);
	if (a3 == NULL)
		return 1;
	for (i = 0; i < 3; i++)
		s += ((fn)a3)(i, cb) + ((fn)a1)(i, cb);
	printf("%d\n", s);
	return 0;
}
