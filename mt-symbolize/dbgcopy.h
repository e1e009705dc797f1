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

#include <stdint.h>

/*
 * If the ELF file open on @fd (64-bit little-endian) has a zlib-compressed
 * DWARF section, makes the copy and sets *@memfd to a new descriptor of
 * it (the caller closes both) and returns 1.  Returns 0 (*@memfd -1)
 * when there is nothing to inflate or the copy cannot be made (not an
 * error: libdw then reads @fd as before).
 */
int sym_dbgcopy_make(int fd, int *memfd);

/*
 * The copies are kept across runs in a cache file: the copy's bytes, then
 * a 40-byte trailer (the magic "mt-dbgcopy 1\0\0\0\0", the original
 * file's size, the copy's length, XXH3-64 of the copy), all little-endian.
 * Inflating is most of the cost of a debug file (libc's 10 MB), and its
 * result is the same every time; the hash makes a file cut or damaged
 * after a crash (the cache is not fsync'ed: it can be made again) or by
 * hand count as absent.
 *
 * sym_dbgcopy_cached() opens the cache file @path when it holds a whole,
 * undamaged copy of an original of @orig_size bytes: *@copyfd set, 1.
 * Returns 0 (*@copyfd -1) otherwise.
 */
int sym_dbgcopy_cached(const char *path, uint64_t orig_size, int *copyfd);

/*
 * Stores the copy open on @copyfd (from sym_dbgcopy_make(), of an
 * original of @orig_size bytes) as the cache file @path, replacing it
 * atomically (common/outfile; its directories are made).  Returns 0, or
 * -1 when it could not be written (nothing is left behind).
 */
int sym_dbgcopy_store(int copyfd, const char *path, uint64_t orig_size);

#endif
