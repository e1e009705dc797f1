/* SPDX-License-Identifier: MIT */
/* Bundled ELF files into the shared build-id cache (see cache.h). */
#include <errno.h>
#include <stddef.h>

#include "bidcache.h"
#include "cache.h"
#include "err.h"
#include "snap.h"

int
decode_cache_bundled(const struct mt_snap *s)
{
	char dir[4096];
	size_t i;
	int rc, n = 0, bad = 0, e = 0;

	if (s->nelfs == 0)
		return 0;
	rc = mt_bidcache_dir(dir, sizeof(dir));
	if (rc < 0)
		return rc;
	for (i = 0; i < s->nelfs; i++) {
		const struct mt_snap_elf *f = &s->elfs[i];

		if (f->build_id_len == 0)
			continue;
		rc = mt_bidcache_store(dir, f->build_id, f->build_id_len,
		    f->data, (size_t)f->len);
		if (rc > 0)
			n++;
		else if (rc < 0 && !bad) {
			bad = rc;
			e = errno;
		}
	}
	errno = e;
	return bad ? bad : n;
}
