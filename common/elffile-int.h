/* SPDX-License-Identifier: MIT */
/*
 * The ELF file handle's state (struct mt_elf), shared by the two halves
 * of the module: elffile.c (opening, headers, segments, build-id,
 * sections) and elfsyms.c (the function-symbol table).  Private to
 * those two files: everyone else uses elffile.h.
 */
#ifndef MT_ELFFILE_INT_H
#define MT_ELFFILE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "elffile.h"

#define ERRMSG_MAX 256


/* An executable allocated section, for addr2line's same-section rule. */
struct xsec {
	uint64_t addr;		/* sh_addr */
	uint64_t size;		/* sh_size, bytes */
	uint32_t idx;		/* section index */
};

struct mt_elf {
	int fd;			/* open file, -1 for memory images */
	void *mem;		/* owned copy of a memory image, or NULL */
	Elf *elf;		/* libelf handle */
	enum mt_elf_ftype type;
	struct mt_elf_seg *segs;	/* PT_LOAD segments; owned */
	size_t nsegs;
	uint8_t build_id[MT_ELF_BUILD_ID_MAX];
	size_t build_id_len;	/* 0: none */
	char *debuglink;	/* .gnu_debuglink file name; owned, or NULL */
	uint32_t debuglink_crc;
	int has_dwarf;
	int has_symtab;
	struct xsec *xsecs;	/* executable sections sorted by addr; owned */
	size_t nxsecs;
	int syms_loaded;	/* 1 once syms is built */
	struct mt_elf_sym *syms;	/* sorted by start; owned */
	size_t nsyms;
	char *plt_names;	/* storage for "name@plt" strings; owned */
	char **abs_names;	/* "*ABS*+0x..." strings; owned */
	size_t nabs_names;
	char errmsg[ERRMSG_MAX];	/* last error on this object */
	uint64_t size;		/* bytes in the file or image */
	char *trunc;		/* how the file is cut short; owned, or NULL */
	int phdrs_cut;		/* the program header table is cut short */
};

/* Formats into @buf (ERRMSG_MAX bytes), as vsnprintf. */
void mt_elf_set_err(char *buf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets @e's message to @what and libelf's; returns -MT_E_ELF. */
int mt_elf_fail(struct mt_elf *e, const char *what);

#endif /* MT_ELFFILE_INT_H */
