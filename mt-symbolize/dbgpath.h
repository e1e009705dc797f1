/* SPDX-License-Identifier: MIT */
/*
 * The paths libdw's standard debug-file search (dwfl_standard_find_debuginfo)
 * would open for a module, checked before it runs.  That search opens each
 * candidate with a plain open(2) and reads it whole for the CRC check, so
 * a FIFO there blocks mt-symbolize for good, and a device never ends.
 * Without libdw (symbols only: dso.c), the same places are where a
 * stripped binary's debug file, and its symbol table, are looked for.
 */
#ifndef MT_SYM_DBGPATH_H
#define MT_SYM_DBGPATH_H

#include <stddef.h>

struct stat;

/*
 * Calls @visit for every path the standard search could try for the
 * debug file of @file_name (the module's main file) that exists, with
 * its stat(2): build-id paths under the absolute entries of @dipath
 * (libdw's debuginfo_path, ':'-separated) for @hex (lower-case build-id,
 * "" unknown), then @debuglink (its .gnu_debuglink or .gnu_debugaltlink
 * name; NULL: the file's base name + ".debug") in the file's directory,
 * its subdirectories named by relative entries and under the absolute
 * ones, also for the file's real path.  This is a superset of what
 * elfutils 0.188 tries (libdwfl/find-debuginfo.c), in its order of
 * places.  @visit returns 1 to stop.
 * Returns 1 when @visit stopped the walk, 0 when it never did, -1 when
 * out of memory.
 */
int sym_dbgpath_each(const char *dipath, const char *file_name,
    const char *debuglink, const char *hex,
    int (*visit)(void *ctx, const char *path, const struct stat *st),
    void *ctx);

/*
 * Looks at the paths of sym_dbgpath_each() for one that is neither a
 * regular file nor a directory.
 * Returns 1 and the first offending path in @bad (@badlen bytes) if one
 * exists, else 0; -1 when out of memory.
 */
int sym_dbgpath_unsafe(const char *dipath, const char *file_name,
    const char *debuglink, const char *hex, char *bad, size_t badlen);

#endif /* MT_SYM_DBGPATH_H */
