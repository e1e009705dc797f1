/* SPDX-License-Identifier: MIT */
/*
 * One binary (shared object, executable, vDSO copy) as mt-symbolize sees
 * it: its symbols (common/elffile.h), its FDE ranges (common/fde.h) and
 * its DWARF (libdw/libdwfl, found
 * next to the file, by build-id under /usr/lib/debug and the --debug-dir
 * directories, by .gnu_debuglink, or through debuginfod when
 * DEBUGINFOD_URLS is set).  This module and its DIE walk (dwwalk.h) are
 * the only ones that include the libdw headers.
 *
 * Addresses are file-relative virtual addresses.  Names are raw (mangled);
 * demangling is the caller's business.
 */
#ifndef MT_SYM_DSO_H
#define MT_SYM_DSO_H

#include <stddef.h>
#include <stdint.h>

struct sym_dso;

#define SYM_MAX_FRAMES 64	/* frames one lookup returns at most */

/* Where to look for binaries and debug files. */
struct sym_dso_opts {
	const char *const *debug_dirs;	/* --debug-dir DIRs; not owned */
	size_t ndebug_dirs;		/* entries in debug_dirs */
	const char *root;		/* --root DIR: a copy of the target's
					 * file tree, tried before the recorded
					 * path; NULL: none; not owned */
	const char *copy_cache;		/* directory of the cache of inflated
					 * debug files (dbgcopy.h), laid out
					 * as DIR/.build-id/xx/rest.debug.mt-inflated;
					 * NULL: none; not owned */
	uint64_t copy_cache_max;	/* bytes the cache's inflated copies
					 * may take together (the oldest are
					 * removed to make room) */
	int no_lines;			/* 1: frames without file:line
					 * (--no-lines) */
	int no_inline;			/* 1: no inlined frames, the one frame
					 * with the address's own line
					 * (--no-inline); with no_lines too,
					 * the DWARF is not read at all: only
					 * symbol tables (the binary's, its
					 * debug file's) and FDEs */
};

/* Which naming rules a lookup follows. */
enum sym_rules {
	SYM_RULES_TRACE = 0,	/* outermost frame named by its ELF symbol;
				 * code without one gets the start of its
				 * FDE (common/fde.h), name NULL */
	SYM_RULES_A2L,		/* binutils addr2line: DWARF names first,
				 * nearest preceding symbol as fallback */
	SYM_RULES_ELFUTILS,	/* eu-addr2line: DWARF names, libdw's file
				 * names, containing symbol as fallback */
};

/*
 * One frame of an address.  Strings are owned by the dso (libelf/libdw
 * data) and stay valid until sym_dso_free().
 */
struct sym_frame {
	const char *name;	/* raw function name; NULL unknown */
	uint64_t start;		/* file vaddr of the function's entry (with
				 * a NULL name: of its FDE, 0 none);
				 * 0 for an inlined frame */
	const char *file;	/* source path; NULL unknown */
	uint32_t line;		/* source line; 0 unknown */
	uint32_t disc;		/* line-table discriminator, 0 none */
};

/*
 * Opens the binary for a mapping of @path with build-id @build_id (lower
 * case hex, "" or NULL unknown).  The file is taken from the first of:
 * DIR/.build-id/xx/rest in a debug dir, @path when its build-id matches
 * (or none is known), DIR/.build-id/xx/rest.debug and
 * /usr/lib/debug/.build-id/xx/rest.debug.  Never fails for a missing or
 * broken file: *@dp is then a dso that resolves nothing and
 * sym_dso_warning() says why.  Returns 0, or -MT_E_NOMEM.
 */
int sym_dso_open(struct sym_dso **dp, const char *path,
    const char *build_id, const struct sym_dso_opts *o);

/* Opens exactly the file @path (addr2line -e); as sym_dso_open(). */
int sym_dso_open_file(struct sym_dso **dp, const char *path,
    const struct sym_dso_opts *o);

void sym_dso_free(struct sym_dso *d);

/* Why the dso is unusable or has no debug info, or NULL. */
const char *sym_dso_warning(const struct sym_dso *d);

/*
 * The name of the IFUNC (e.g. "cos") whose resolver may pick the function
 * starting at file vaddr @vaddr (e.g. __cos_fma's), or NULL.  Found by
 * reading the resolvers' code (dso.c, ifunc_scan); the string lives as
 * long as @d.
 */
const char *sym_dso_ifunc(struct sym_dso *d, uint64_t vaddr);

/* 1 if the binary was found and read, else 0. */
int sym_dso_ok(const struct sym_dso *d);

/*
 * Converts a file offset (mapping start + pgoff arithmetic) to a file
 * vaddr.  Returns 0, or -MT_E_NOTFOUND when no segment holds @off.
 */
int sym_dso_off_to_vaddr(const struct sym_dso *d, uint64_t off,
    uint64_t *vaddr);

/*
 * What the binary knows of @vaddr: frames outermost first into @fr (room
 * for @max).  Returns the count; 0 when nothing is known.  A frame with a
 * NULL name can occur (line info without a function).  Each frame's line
 * is the call site of the next one; the last frame's is @vaddr's own.
 */
int sym_dso_lookup(struct sym_dso *d, uint64_t vaddr, enum sym_rules rules,
    struct sym_frame *fr, int max);

#endif /* MT_SYM_DSO_H */
