/* SPDX-License-Identifier: MIT */
/*
 * Copy the ELF files a snapshot bundles, and its vDSO images, into mt's
 * build-id cache (common/bidcache.h), where mt-symbolize finds them on a
 * host that never had the target's files.
 */
#ifndef MT_DECODE_CACHE_H
#define MT_DECODE_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct mt_snap;
struct mt_snap_blob;

/*
 * Store every bundled ELF file of @s that has a build-id and is whole
 * (not cut short, its own build-id the one of its chunk), and every vDSO
 * blob that is a whole ELF image with one, unless it is in the cache
 * already.  Returns the number stored, or -MT_E_IO (errno set) for the
 * first file that could not be written (the others are still tried),
 * or -MT_E_NOTFOUND when there is no cache directory.
 */
int decode_cache_bundled(const struct mt_snap *s);

/*
 * The build-id of vDSO blob @b (the kernel's vDSO is a whole ELF image
 * with a GNU build-id note) into @id (at least 64 bytes).  Returns its
 * length, 0 when @b is no vDSO or has no readable build-id.
 */
size_t decode_vdso_build_id(const struct mt_snap_blob *b, uint8_t *id);

#endif /* MT_DECODE_CACHE_H */
