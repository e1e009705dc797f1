/* SPDX-License-Identifier: MIT */
/*
 * The build-id cache mt shares between its programs: mt-decode stores the
 * ELF files bundled in a snapshot there, mt-symbolize looks there for them,
 * so a snapshot symbolizes on a host that never had the target's files.
 * Layout as perf's and debuginfod's: DIR/.build-id/xx/rest (xx: the first
 * two hex digits of the build-id, rest: the others).
 *
 * DIR is $MT_CACHE_DIR if set, else $XDG_CACHE_HOME/mt, else ~/.cache/mt.
 */
#ifndef MT_BIDCACHE_H
#define MT_BIDCACHE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Write the cache directory into @buf (@n bytes).
 * Returns 0, or -MT_E_NOTFOUND when no home directory is known,
 * -MT_E_LIMIT when @buf is too small.
 */
int mt_bidcache_dir(char *buf, size_t n);

/*
 * Path of build-id @id (@len bytes) under @dir into @buf.
 * Returns 0, -MT_E_INVAL for an empty build-id, -MT_E_LIMIT if too long.
 */
int mt_bidcache_path(const char *dir, const uint8_t *id, size_t len,
    char *buf, size_t n);

/*
 * Store @data (@size bytes) as build-id @id under @dir unless a file is
 * already there; creates directories as needed and writes atomically.
 * Returns 1 if stored, 0 if it was present, or -MT_E_IO (errno set).
 */
int mt_bidcache_store(const char *dir, const uint8_t *id, size_t len,
    const void *data, size_t size);

/*
 * mkdir -p of the directory part of @path (mode 0755; @path is changed
 * while it runs and restored).  Returns 0 or -MT_E_IO (errno set).
 */
int mt_bidcache_mkparents(char *path);

#endif /* MT_BIDCACHE_H */
