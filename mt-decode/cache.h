/* SPDX-License-Identifier: MIT */
/*
 * Copy the ELF files a snapshot bundles into mt's build-id cache
 * (common/bidcache.h), where mt-symbolize finds them on a host that never
 * had the target's files.
 */
#ifndef MT_DECODE_CACHE_H
#define MT_DECODE_CACHE_H

struct mt_snap;

/*
 * Store every bundled ELF file of @s that has a build-id and is not in the
 * cache yet.  Returns the number stored, or -MT_E_IO (errno set) for the
 * first file that could not be written (the others are still tried),
 * or -MT_E_NOTFOUND when there is no cache directory.
 */
int decode_cache_bundled(const struct mt_snap *s);

#endif /* MT_DECODE_CACHE_H */
