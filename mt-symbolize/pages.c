/* SPDX-License-Identifier: MIT */
/* Zeroed memory straight from the kernel (pages.h). */
#include <sys/mman.h>

#include "pages.h"

void *
sym_pages_new(size_t size)
{
	void *p;

	if (size == 0)
		return NULL;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void
sym_pages_free(void *p, size_t size)
{
	if (p != NULL)
		munmap(p, size);
}
