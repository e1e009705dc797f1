/* SPDX-License-Identifier: MIT */
/*
 * The chain of functions, inlined ones included, that holds an address
 * in one CU's DIE tree, with the children of each DIE walked kept for
 * the next lookup: which of them can hold code (subprogram, inlined
 * subroutine, lexical, try and catch blocks, namespaces and modules),
 * in order, and their address ranges.  A lookup in a large CU (libc's)
 * otherwise steps over every type, variable and declaration at its top
 * level again, DIE by DIE.  Used by dso.c, with the libdw headers.
 */
#ifndef MT_SYM_DWWALK_H
#define MT_SYM_DWWALK_H

#include <elfutils/libdw.h>

struct sym_dwwalk;

/* An empty cache for the DIEs of one Dwarf.  0 or -MT_E_NOMEM. */
int sym_dwwalk_new(struct sym_dwwalk **wp);
void sym_dwwalk_free(struct sym_dwwalk *w);

/*
 * Fills @chain with the subprogram / inlined_subroutine DIEs under @cu
 * that contain @pc, outermost first (at most @max); returns how many.
 * The walk goes down the DIEs holding @pc (lexical blocks, and at the
 * top into namespaces, where C++ puts definitions).  Among siblings that
 * all contain @pc (assembler output lists every alias of a function as
 * its own subprogram), @last picks the last one as binutils does, else
 * the first.  Out of memory, it walks without the cache.
 */
int sym_dwwalk_chain(struct sym_dwwalk *w, Dwarf_Die *cu, Dwarf_Addr pc,
    Dwarf_Die *chain, int max, int last);

#endif
