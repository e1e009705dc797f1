/* SPDX-License-Identifier: MIT */
/* Bundled ELF files and vDSOs into the shared build-id cache (cache.h). */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

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

/*
 * Is bundled file @f whole, with the build-id its chunk gives?  A copy
 * cut short (or not the file the build-id names) must not enter the
 * cache: the first copy stored is kept, and every later trace with that
 * build-id would be symbolized against it.  Asked only of a file not in
 * the cache yet (its headers are read in place).
 */
static int
whole_elf(const char *dir, const struct mt_snap_elf *f)
{
	struct mt_elf *e;
	const uint8_t *id;
	char path[4096];
	int ok;

	if (mt_bidcache_path(dir, f->build_id, f->build_id_len, path,
	    sizeof(path)) < 0 || access(path, F_OK) == 0)
		return 1;	/* (store finds it there, or fails) */
	if (mt_elf_open_ref(&e, f->data, (size_t)f->len) < 0)
		return 0;
	ok = mt_elf_truncated(e) == NULL &&
	    mt_elf_build_id(e, &id) == f->build_id_len &&
	    memcmp(id, f->build_id, f->build_id_len) == 0;
	mt_elf_free(e);
	return ok;
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

		if (f->build_id_len > 0 && whole_elf(dir, f))
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
