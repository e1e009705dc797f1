/* SPDX-License-Identifier: MIT */
/*
 * Symbols from text files for code without an ELF file: perf-PID.map
 * files written by JIT compilers ("START SIZE NAME", hex) and the
 * kernel's /proc/kallsyms ("ADDR TYPE NAME [MODULE]").
 */
#ifndef MT_SYM_TEXTSYMS_H
#define MT_SYM_TEXTSYMS_H

#include <stddef.h>
#include <stdint.h>

struct sym_textsyms;

/* One symbol of a text table. */
struct sym_textsym {
	uint64_t start;		/* first address */
	uint64_t end;		/* one past the last address */
	const char *name;	/* owned by the table */
};

/*
 * Reads @path as a perf map (@kallsyms 0) or kallsyms text (@kallsyms 1)
 * into a new table.  kallsyms keeps text symbols (types t, T, w, W) with a
 * non-zero address; each ends where the next one starts (the last
 * after 4096 bytes).
 * Returns 0.
 * Returns -MT_E_SYS (errno set) if @path cannot be read.
 * Returns -MT_E_SYNTAX for a malformed line, with "line N: why" in @msg.
 * Returns -MT_E_IO if reading fails, with "read error at offset N: why"
 * in @msg.
 * Returns -MT_E_NOMEM.
 */
int sym_textsyms_load(struct sym_textsyms **tp, const char *path,
    int kallsyms, char *msg, size_t msglen);
void sym_textsyms_free(struct sym_textsyms *t);

/* The symbol containing @addr, or NULL. */
const struct sym_textsym *sym_textsyms_find(const struct sym_textsyms *t,
    uint64_t addr);

#endif /* MT_SYM_TEXTSYMS_H */
