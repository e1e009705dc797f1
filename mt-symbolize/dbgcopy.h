/* SPDX-License-Identifier: MIT */
/*
 * A debug file with its compressed DWARF sections inflated, for libdw.
 *
 * libdw (elfutils 0.188, dwarf_begin_elf.c) inflates every compressed
 * .debug_* section of a file when it opens it, with zlib, whether or not
 * anything reads it: for libc6-dbg's libc that is 10 MB of zlib output
 * before the first address is looked up.  sym_dbgcopy_make() writes, into
 * an anonymous memory file, the original file byte for byte followed by
 * its compressed DWARF sections inflated with libdeflate (about three
 * times zlib's speed here) and a new section header table that points at
 * them; the sections mt never reads (location lists, macros, call frame
 * tables, name indexes) become SHT_NOBITS, which libdw skips.  Every
 * other byte (program headers, notes, symbol tables) stays where it was,
 * so libdwfl sees the same file.  A section that does not inflate to
 * exactly its recorded size (as libelf requires) is left compressed, for
 * libdw to reject as before.
 */
#ifndef MT_SYM_DBGCOPY_H
#define MT_SYM_DBGCOPY_H

/*
 * If the ELF file open on @fd (64-bit little-endian) has a zlib-compressed
 * DWARF section, makes the copy and sets *@memfd to a new descriptor of
 * it (the caller closes both) and returns 1.  Returns 0 (*@memfd -1)
 * when there is nothing to inflate or the copy cannot be made (not an
 * error: libdw then reads @fd as before).
 */
int sym_dbgcopy_make(int fd, int *memfd);

#endif
