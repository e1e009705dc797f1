/* SPDX-License-Identifier: MIT */
/*
 * Function ranges from call-frame information.  Every FDE (Frame
 * Description Entry) of .eh_frame and .debug_frame covers one contiguous
 * piece of code, [initial_location, initial_location + address_range),
 * which the compiler emits per function (and per cold part).  strip keeps
 * .eh_frame, because the unwinder needs it at run time, so a stripped
 * binary still tells where its functions begin and end.  mt-symbolize
 * names code without symbols after its FDE, mt-decode takes the ranges as
 * function bounds where symbols are missing.
 *
 * The records are read by hand (DWARF 5 section 6.4.1, and the Linux
 * Standard Base Core specification's .eh_frame section) through a bounded
 * cursor: libdw's dwarf_next_cfi() walks the records but leaves the
 * pointer encodings to the caller, and dwarf_cfi_addrframe() answers for
 * one address at a time, so neither lists the ranges.
 *
 * Read: 32- and 64-bit record lengths, CIE versions 1, 3 and 4, the
 * augmentations "z", "R", "P", "L", "S", "B", "G" and GCC's old "eh", FDE
 * pointers absolute or pc-relative in any data format.  Not read: text-,
 * data- and function-relative or indirect FDE pointers (-MT_E_UNSUPP:
 * x86-64 toolchains do not emit them), compressed sections, the
 * .eh_frame_hdr search table (the ranges come from .eh_frame itself; a
 * file without section headers finds it through .eh_frame_hdr's
 * eh_frame_ptr), relocations (ET_REL files).
 * Never prints.
 */
#ifndef MT_FDE_H
#define MT_FDE_H

#include <stddef.h>
#include <stdint.h>

struct mt_elf;

/* One function range. */
struct mt_fde {
	uint64_t start;		/* first byte, file vaddr */
	uint64_t end;		/* one past the last byte */
};

/* Ranges; the caller owns the struct, the table owns v. */
struct mt_fde_tab {
	struct mt_fde *v;	/* after mt_fde_sort(): sorted by start,
				 * disjoint; owned */
	size_t n;		/* ranges in v */
	size_t cap;		/* room in v */
};

/* Which section mt_fde_parse() reads: the two differ in CIE ids, CIE
 * pointers and pointer encodings. */
enum mt_fde_kind {
	MT_FDE_EH_FRAME = 0,	/* .eh_frame */
	MT_FDE_DEBUG_FRAME,	/* .debug_frame */
};

/* Where reading failed. */
struct mt_fde_diag {
	const char *section;	/* ".eh_frame" or ".debug_frame"; static */
	uint64_t off;		/* byte offset of the bad record (the CIE's
				 * when the CIE is not supported) in that
				 * section */
};

void mt_fde_tab_init(struct mt_fde_tab *t);
void mt_fde_tab_release(struct mt_fde_tab *t);
/* Appends [@start, @end) to @t (unsorted).  Returns 0 or -MT_E_NOMEM. */
int mt_fde_tab_add(struct mt_fde_tab *t, uint64_t start, uint64_t end);

/*
 * Append to @t the range of every FDE in the @len bytes at @p, a section
 * of kind @kind whose first byte is at file vaddr @addr (pc-relative
 * pointers count from there).  FDEs with an empty range or a start of 0
 * (code the linker discarded) are left out.  Reading stops at the end of
 * the bytes or, in .eh_frame, at a zero length (the terminator).  On an
 * error the ranges read before the bad record stay in @t and *@off is
 * that record's offset (the CIE's for an unsupported CIE).  Leaves @t unsorted.
 * Returns 0.
 * Returns -MT_E_TRUNC if a record runs past the end of the bytes.
 * Returns -MT_E_CORRUPT if a field is impossible (a CIE pointer that does
 * not lead to a CIE, a range that wraps past 2^64, a LEB128 over 64 bits).
 * Returns -MT_E_UNSUPP for a CIE version, augmentation or pointer
 * encoding that is not read (see above).
 * Returns -MT_E_NOMEM.
 */
int mt_fde_parse(struct mt_fde_tab *t, const uint8_t *p, size_t len,
    uint64_t addr, enum mt_fde_kind kind, uint64_t *off);

/*
 * Sort @t by start, drop duplicate starts (keeping the longest range) and
 * cut each range at the next one's start, so that ranges are disjoint.
 */
void mt_fde_sort(struct mt_fde_tab *t);

/*
 * The FDE ranges of @e: .eh_frame, then .debug_frame when the file has
 * one, sorted (mt_fde_sort).  A missing section is no error, nor is a
 * compressed one (SHF_COMPRESSED: it gives no ranges).  On an error
 * @t keeps what was read (from both sections) and @d says where.
 * Returns 0, or an error of mt_fde_parse(), or -MT_E_ELF (libelf failed,
 * message in mt_elf_errmsg(@e)).
 */
int mt_fde_read_elf(struct mt_fde_tab *t, struct mt_elf *e,
    struct mt_fde_diag *d);

/*
 * The FDE ranges of the .eh_frame that @e's PT_GNU_EH_FRAME segment
 * (.eh_frame_hdr) points at, sorted: for a file without section headers
 * (a memory image, a file cut before them), where mt_fde_read_elf() finds
 * no .eh_frame.  The .eh_frame is read from that address to its zero
 * terminator or the end of its PT_LOAD segment's file bytes; the
 * header's search table is not read.  No such segment is no error.  On an
 * error @t keeps what was read and @d says where (".eh_frame_hdr" for
 * the header, ".eh_frame" with the offset from that address).
 * Returns 0, or an error of mt_fde_parse(), or -MT_E_TRUNC / -MT_E_UNSUPP
 * for a header cut short / of another version or pointer encoding,
 * -MT_E_CORRUPT if eh_frame_ptr is outside every PT_LOAD segment's file
 * bytes, -MT_E_ELF.
 */
int mt_fde_read_eh_frame_hdr(struct mt_fde_tab *t, struct mt_elf *e,
    struct mt_fde_diag *d);

/* The range of sorted @t that holds @addr, or NULL; O(log n). */
const struct mt_fde *mt_fde_find(const struct mt_fde_tab *t, uint64_t addr);

#endif /* MT_FDE_H */
