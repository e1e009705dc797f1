/* SPDX-License-Identifier: MIT */
/* Bundled ELF files and vDSOs into the shared build-id cache (cache.h). */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "bidcache.h"
#include "cache.h"
#include "elffile.h"
#include "err.h"
#include "snap.h"

size_t
decode_vdso_build_id(const struct mt_snap_blob *b, uint8_t *id)
{
	struct mt_elf *e = NULL;
	const uint8_t *p;
	size_t n = 0;

	if (b->kind != MT_SNAP_BLOB_VDSO || b->data == NULL || b->len == 0 ||
	    mt_elf_open_mem(&e, b->data, (size_t)b->len) < 0)
		return 0;
	n = mt_elf_build_id(e, &p);
	if (n > 64)
		n = 0;
	memcpy(id, p, n);
	mt_elf_free(e);
	return n;
}

/* Store @data as build-id @id; counts into *@n, the first error in *@bad. */
static void
store(const char *dir, const uint8_t *id, size_t len, const void *data,
    size_t size, int *n, int *bad, int *e)
{
	int rc = mt_bidcache_store(dir, id, len, data, size);

	if (rc > 0)
		(*n)++;
	else if (rc < 0 && !*bad) {
		*bad = rc;
		*e = errno;
	}
}

int
decode_cache_bundled(const struct mt_snap *s)
{
	uint8_t id[64];
	char dir[4096];
	size_t i, len;
	int rc, n = 0, bad = 0, e = 0;

	if (s->nelfs == 0 && s->nblobs == 0)
		return 0;
	rc = mt_bidcache_dir(dir, sizeof(dir));
	if (rc < 0)
		return rc;
	for (i = 0; i < s->nelfs; i++) {
		const struct mt_snap_elf *f = &s->elfs[i];

		if (f->build_id_len > 0)
			store(dir, f->build_id, f->build_id_len, f->data,
			    (size_t)f->len, &n, &bad, &e);
	}
	for (i = 0; i < s->nblobs; i++) {
		len = decode_vdso_build_id(&s->blobs[i], id);
		if (len > 0)
			store(dir, id, len, s->blobs[i].data,
			    (size_t)s->blobs[i].len, &n, &bad, &e);
	}
	errno = e;
	return bad ? bad : n;
}
