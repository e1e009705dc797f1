/* SPDX-License-Identifier: MIT */
/*
 * Tables that grow by doubling (the resolver's address cache, the
 * stream's direct-mapped cache) take their memory from mmap, not malloc:
 * a table given back returns to the kernel at once, where a freed heap
 * chunk stays resident (on the mruby stream the address cache's three
 * earlier tables, 168 KiB, stayed in the heap and counted in the peak
 * RSS), and a new table's pages are zero without being touched.
 */
#ifndef MT_SYM_PAGES_H
#define MT_SYM_PAGES_H

#include <stddef.h>

/* @size bytes of zeroed memory (freed with sym_pages_free), or NULL. */
void *sym_pages_new(size_t size);

/* Gives back @p of @size bytes from sym_pages_new(); NULL does nothing. */
void sym_pages_free(void *p, size_t size);

#endif
