/* SPDX-License-Identifier: MIT */
/*
 * One ELF file, read through libelf: its type, build-id, PT_LOAD segments
 * and a sorted table of function symbols (from .symtab and .dynsym, plus
 * synthetic "name@plt" symbols for PLT stubs).  mt-decode uses it for
 * build-ids and function boundaries, mt-symbolize for names.
 *
 * Addresses are file-relative virtual addresses (the p_vaddr / st_value
 * space of the file), not load addresses.
 *
 * Does not read DWARF, does not follow .gnu_debuglink (it only reports it),
 * and does not apply relocations.  Never prints.  (The module is named
 * elffile, not elf, so that -Icommon does not shadow the system <elf.h>
 * that libelf.h includes.)
 */
#ifndef MT_ELFFILE_H
#define MT_ELFFILE_H

#include <stddef.h>
#include <stdint.h>

struct mt_elf;

#define MT_ELF_BUILD_ID_MAX 64	/* bytes of build-id kept (longer is cut) */

/* File types of mt_elf_type(). */
enum mt_elf_ftype {
	MT_ELF_OTHER = 0,	/* ET_REL, ET_CORE, ... */
	MT_ELF_EXEC,		/* ET_EXEC: loaded at its p_vaddr */
	MT_ELF_DYN,		/* ET_DYN: shared object or PIE */
};

/* One PT_LOAD program header. */
struct mt_elf_seg {
	uint64_t vaddr;		/* p_vaddr */
	uint64_t memsz;		/* p_memsz, bytes */
	uint64_t offset;	/* p_offset, bytes into the file */
	uint64_t filesz;	/* p_filesz, bytes */
	uint32_t flags;		/* p_flags: PF_X 1, PF_W 2, PF_R 4 */
};

/* Kinds of struct mt_elf_sym. */
enum mt_elf_sym_kind {
	MT_ELF_SYM_FUNC = 0,	/* STT_FUNC or STT_GNU_IFUNC */
	MT_ELF_SYM_NOTYPE,	/* STT_NOTYPE in an executable section */
	MT_ELF_SYM_PLT,		/* synthetic: a PLT stub, name "func@plt" */
};

/*
 * One function symbol.  The table holds one entry per distinct start
 * address: among aliases the largest size wins, then the first seen
 * (.symtab before .dynsym, table order), as binutils addr2line chooses.
 */
struct mt_elf_sym {
	uint64_t start;		/* first byte, file vaddr */
	uint64_t size;		/* st_size in bytes; 0 when the symbol has none */
	uint64_t end;		/* one past the last byte covered: start+size,
				 * or the next symbol's start when size is 0 */
	const char *name;	/* raw (mangled) name; owned by the mt_elf */
	const char *alias;	/* the alias at the same start a person
				 * expects (global before weak before local,
				 * fewer leading '_', shorter: "cos" rather
				 * than "cosf64"); may equal name */
	const char *file;	/* the STT_FILE symbol before it in .symtab,
				 * by binutils' rule (local symbols, or
				 * before any file follows a symbol); NULL */
	uint32_t shndx;		/* section index (symbols of one section) */
	uint8_t kind;		/* enum mt_elf_sym_kind */
	uint8_t ifunc;		/* 1: an STT_GNU_IFUNC symbol starts here:
				 * this is its resolver */
};

/*
 * Open the ELF file at @path (read-only) and read its headers, segments
 * and build-id.  Symbols are read on first use.  On success *@ep owns the
 * file; on failure *@ep is NULL and mt_elf_errmsg(NULL) says why.
 * Returns 0.
 * Returns -MT_E_SYS if the file cannot be opened (errno set).
 * Returns -MT_E_MAGIC if it is not a regular file or not a 64-bit
 * little-endian ELF file.
 * Returns -MT_E_TRUNC if the file ends inside the ELF header (a file cut
 * later opens: see mt_elf_truncated()).
 * Returns -MT_E_ELF or -MT_E_CORRUPT on a libelf failure / bad headers.
 * Returns -MT_E_NOMEM.
 */
int mt_elf_open(struct mt_elf **ep, const char *path);

/* As mt_elf_open() over the @len bytes at @p, which are copied. */
int mt_elf_open_mem(struct mt_elf **ep, const void *p, size_t len);

/*
 * As mt_elf_open_mem() without the copy: the @len bytes at @p are read in
 * place and must stay valid and unchanged until mt_elf_free().
 */
int mt_elf_open_ref(struct mt_elf **ep, const void *p, size_t len);

/*
 * How the file is cut short, or NULL when its header tables, segments
 * and sections all lie within it: "truncated: section headers end at
 * byte N, file has M" (owned by @e).  A truncated file still opens, with
 * whatever libelf could read of it (often no sections, so no symbols):
 * callers warn.
 */
const char *mt_elf_truncated(const struct mt_elf *e);

/* Frees @e and everything it handed out.  @e may be NULL. */
void mt_elf_free(struct mt_elf *e);

/*
 * Text of the last error on @e (libelf's message where libelf failed), or
 * with @e NULL of the last failed mt_elf_open*() in this thread.  Never
 * NULL; "" when there was none.
 */
const char *mt_elf_errmsg(const struct mt_elf *e);

enum mt_elf_ftype mt_elf_type(const struct mt_elf *e);

/* Points *@id at the NT_GNU_BUILD_ID bytes; returns their count, 0 none. */
size_t mt_elf_build_id(const struct mt_elf *e, const uint8_t **id);

/*
 * Writes the build-id as lowercase hex plus NUL into @buf (at least
 * 2 * MT_ELF_BUILD_ID_MAX + 1 bytes); "" when there is none.
 */
void mt_elf_build_id_hex(const struct mt_elf *e, char *buf);

/* Points *@segs at the PT_LOAD segments in file order; returns the count. */
size_t mt_elf_segs(const struct mt_elf *e, const struct mt_elf_seg **segs);

/*
 * Converts file offset @off to a file vaddr through the PT_LOAD segment
 * whose file bytes hold it.  Returns 0, or -MT_E_NOTFOUND.
 */
int mt_elf_off_to_vaddr(const struct mt_elf *e, uint64_t off,
    uint64_t *vaddr);

/*
 * Name of the .gnu_debuglink file (owned by @e) and its CRC32 in *@crc
 * (may be NULL), or NULL when the file has no such section.
 */
const char *mt_elf_debuglink(const struct mt_elf *e, uint32_t *crc);

/* The bytes of one section (mt_elf_section()). */
struct mt_elf_secdata {
	const uint8_t *p;	/* section contents; owned by the mt_elf */
	size_t len;		/* bytes at p */
	uint64_t addr;		/* sh_addr: file vaddr of p[0], 0 when the
				 * section is not allocated */
};

/*
 * Points @d at the contents of the first section named @name, valid
 * until mt_elf_free().  Returns 0.
 * Returns -MT_E_NOTFOUND if there is no such section, or it has no bytes
 * in the file (SHT_NOBITS, size 0).
 * Returns -MT_E_UNSUPP if the section is compressed (SHF_COMPRESSED).
 * Returns -MT_E_ELF on a libelf failure (message on @e).
 */
int mt_elf_section(struct mt_elf *e, const char *name,
    struct mt_elf_secdata *d);

/* A mapping of file bytes made for one reading (mt_elf_map_once()). */
struct mt_elf_once {
	void *base;		/* the mapping; NULL: none was made */
	size_t len;		/* its bytes */
};

/*
 * Points @d (bytes of @e from mt_elf_section(), mt_elf_segment() or
 * mt_elf_vaddr_bytes()) at the same file bytes in a private read-only
 * mapping of their own, for a caller that reads them once and is then
 * done with them (the .eh_frame an FDE table is made from):
 * mt_elf_once_unmap() gives its pages back, where libelf's mapping of
 * the whole file keeps every page read, and the 64 KiB the kernel maps
 * around each (fault-around), until mt_elf_free().  A memory image
 * (mt_elf_open_mem()), bytes libelf copied, or a mapping that cannot be
 * made leave @d as it was and map nothing.  Never fails.
 */
void mt_elf_map_once(struct mt_elf *e, struct mt_elf_secdata *d,
    struct mt_elf_once *o);

/* Unmaps what mt_elf_map_once() mapped into @o (none: nothing). */
void mt_elf_once_unmap(struct mt_elf_once *o);

/*
 * Points @d at the file bytes of the first program header of type @type
 * (PT_GNU_EH_FRAME: .eh_frame_hdr, found without section headers), cut
 * at the file's end; d->addr is its p_vaddr.  Returns 0.
 * Returns -MT_E_NOTFOUND if there is none, it has no file bytes, or the
 * program header table is cut short.
 * Returns -MT_E_ELF on a libelf failure (message on @e).
 */
int mt_elf_segment(struct mt_elf *e, uint32_t type, struct mt_elf_secdata *d);

/*
 * Points @d at the file bytes from file vaddr @vaddr to the end of the
 * PT_LOAD segment's file bytes that hold it, cut at the file's end.
 * Returns 0, -MT_E_NOTFOUND (no segment's file bytes hold it) or
 * -MT_E_ELF.
 */
int mt_elf_vaddr_bytes(struct mt_elf *e, uint64_t vaddr,
    struct mt_elf_secdata *d);

/* 1 if the file has a .debug_info section with content, else 0. */
int mt_elf_has_dwarf(const struct mt_elf *e);

/* 1 if the file has a .symtab section, else 0. */
int mt_elf_has_symtab(const struct mt_elf *e);

/*
 * Points *@syms at the symbol table sorted by start (owned by @e, valid
 * until mt_elf_free) and sets *@n.  Loads it on first call.
 * Returns 0, or -MT_E_ELF / -MT_E_NOMEM (message on @e).
 */
int mt_elf_syms(struct mt_elf *e, const struct mt_elf_sym **syms,
    size_t *n);

/*
 * The symbol whose [start, end) contains @vaddr, in O(log n).
 * Returns 0 with *@sym set, -MT_E_NOTFOUND, or an error of mt_elf_syms().
 */
int mt_elf_sym_find(struct mt_elf *e, uint64_t vaddr,
    const struct mt_elf_sym **sym);

/*
 * addr2line's rule: the symbol with the highest start <= @vaddr among the
 * symbols of the allocated section that contains @vaddr, whatever its
 * size.  Returns as mt_elf_sym_find().
 */
int mt_elf_sym_nearest(struct mt_elf *e, uint64_t vaddr,
    const struct mt_elf_sym **sym);

#endif /* MT_ELFFILE_H */
