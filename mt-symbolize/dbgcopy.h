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

struct stat;

/*
 * If the ELF file open on @fd (64-bit little-endian) has a zlib-compressed
 * DWARF section, makes the copy and sets *@memfd to a new descriptor of
 * it (the caller closes both) and returns 1.  Returns 0 (*@memfd -1)
 * when there is nothing to inflate or the copy cannot be made (not an
 * error: libdw then reads @fd as before).
 */
int sym_dbgcopy_make(int fd, int *memfd);

/*
 * The copies are kept across runs in cache files: the copy's bytes, then
 * a 48-byte trailer (the magic "mt-dbgcopy 2\0\0\0\0", the original
 * file's size and modification time in nanoseconds, the copy's length,
 * XXH3-64 of the copy's ELF header and section header table), all
 * little-endian.  Inflating is most of the cost of a debug file (libc's
 * 10 MB), and its result is the same every time.
 *
 * What is checked, and why that is enough: a cache file is written under
 * a temporary name, fsync'ed, then renamed, so a crash leaves it whole or
 * absent; a file cut short fails the length, a damaged or foreign header
 * the hash and the section bounds (every section inside the copy); an
 * original replaced under the same build-id fails its size or time.
 * Bytes changed later inside the DWARF (a bad disk, an edit by hand) are
 * not detected, as they are not in the debug files of /usr/lib/debug,
 * which libdw reads unchecked too: libdw reports bad DWARF as such
 * (names and lines lost, no crash: tests/fuzz's DWARF target).  Hashing
 * the whole copy caught them, at 14% of mt-symbolize's CPU on demo-emu
 * and every page of the copy resident (bench/RESULTS.md, session 9).
 *
 * sym_dbgcopy_cached() opens the cache file @path when it holds a whole
 * copy made from an original with @orig's size and modification time:
 * *@copyfd set, 1, and the file's modification time set to now (it is
 * then the last to be trimmed).  Returns 0 (*@copyfd -1) otherwise.
 */
int sym_dbgcopy_cached(const char *path, const struct stat *orig,
    int *copyfd);

/*
 * Stores the copy open on @copyfd (from sym_dbgcopy_make(), of the
 * original @orig) as the cache file @path under the cache directory @dir
 * (@path is @dir/.build-id/xx/rest.debug.mt-inflated), replacing it
 * atomically (common/outfile; its directories are made).  The cache
 * files under @dir/.build-id together stay within @max bytes: the ones
 * least recently stored or used are removed first to make room, and a
 * copy that cannot fit even alone is not stored (nothing removed).
 * Returns 0, or -1 when it was not stored (nothing is left behind).
 */
int sym_dbgcopy_store(int copyfd, const char *path, const struct stat *orig,
    const char *dir, uint64_t max);

#endif
