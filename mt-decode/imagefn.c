/* SPDX-License-Identifier: MIT */
/*
 * The image set's ELF files (imageset.h): each file opened once, found
 * by build-id or path, and the function ranges (symbols, FDEs) of every
 * mapping of one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <intel-pt.h>

#include "buf.h"
#include "elffile.h"
#include "epochs.h"
#include "err.h"
#include "fde.h"
#include "ild.h"
#include "image.h"
#include "snap.h"
#include "imageset.h"

/*
 * Read the FDE ranges of efdes[@i] unless they are held.  Returns 0 or
 * -MT_E_NOMEM.
 */
static int
image_efde_read(struct image_set *is, size_t i)
{
	struct image_efde *f = &is->efdes[i];

	if (f->held)
		return 0;
	mt_fde_tab_init(&f->t);
	f->rc = mt_fde_read_elf(&f->t, f->e, &f->d);
	if (f->rc == -MT_E_NOMEM) {
		mt_fde_tab_release(&f->t);
		return -MT_E_NOMEM;
	}
	f->held = 1;
	return 0;
}

/*
 * The FDE ranges of @e (common/fde.h: the bounds of code that no symbol
 * covers, in stripped programs and ld.so), read on its first mapping
 * and held until the tables are made (image_fns_make): *@i gets their
 * index in efdes.  A corrupt .eh_frame is a warning naming @path, once
 * per mapping as each reads it.  Returns 0 or -MT_E_NOMEM.
 */
static int
image_efde_of(struct image_set *is, struct mt_elf *e, const char *path,
    size_t *i)
{
	struct image_efde *f;
	int rc;

	for (*i = 0; *i < is->nefdes; (*i)++)
		if (is->efdes[*i].e == e)
			break;
	if (*i == is->nefdes) {
		f = grow(is->efdes, is->nefdes, sizeof(*f));
		if (f == NULL)
			return -MT_E_NOMEM;
		is->efdes = f;
		memset(&f[is->nefdes], 0, sizeof(*f));
		f[is->nefdes].e = e;
		is->nefdes++;
	}
	if ((rc = image_efde_read(is, *i)) < 0)
		return rc;
	f = &is->efdes[*i];
	if (f->rc < 0)
		return image_warn(is, "'%s': %s at byte %llu of %s; no "
		    "function bounds from its later records", path,
		    mt_strerror(f->rc), (unsigned long long)f->d.off,
		    f->d.section);
	return 0;
}

/*
 * Note the function ranges of @e mapped at [start, end) from @pgoff: its
 * FDEs are read now (their warnings belong to loading), its symbols when
 * a function is first looked up (image_fns_make).
 */
int
image_add_fns(struct image_set *is, struct mt_elf *e, const char *path,
    uint64_t start, uint64_t end, uint64_t pgoff)
{
	struct image_fnmap *m;
	uint64_t fv;
	size_t fi;
	int rc;

	if (mt_elf_off_to_vaddr(e, pgoff, &fv) < 0)
		return 0;
	rc = image_efde_of(is, e, path, &fi);
	if (rc < 0)
		return rc;
	m = grow(is->fnmaps, is->nfnmaps, sizeof(*m));
	if (m == NULL)
		return -MT_E_NOMEM;
	is->fnmaps = m;
	m = &is->fnmaps[is->nfnmaps++];
	m->e = e;
	m->efde = fi;
	m->start = start;
	m->end = end;
	m->bias = start - fv;
	is->fns_sorted = 0;
	return 0;
}

/* Append the symbols of @m that start in it to fns. */
static int
image_fns_of(struct image_set *is, const struct image_fnmap *m)
{
	const struct mt_elf_sym *syms;
	size_t n, i;

	if (mt_elf_syms(m->e, &syms, &n) < 0)
		return 0;
	for (i = 0; i < n; i++) {
		uint64_t lo = syms[i].start + m->bias;
		uint64_t hi = syms[i].end + m->bias;

		if (syms[i].end <= syms[i].start || lo < m->start ||
		    lo >= m->end)
			continue;
		if (is->nfns == is->capfns) {
			size_t c = is->capfns ? 2 * is->capfns : 1024;
			struct image_fn *f = realloc(is->fns, c * sizeof(*f));

			if (f == NULL)
				return -MT_E_NOMEM;
			is->fns = f;
			is->capfns = c;
		}
		is->fns[is->nfns].lo = lo;
		is->fns[is->nfns].hi = hi;
		is->nfns++;
	}
	return 0;
}

/* Append the FDE ranges of @m that start in it to fdes. */
static int
image_fdes_of(struct image_set *is, const struct image_fnmap *m)
{
	const struct mt_fde_tab *t = &is->efdes[m->efde].t;
	size_t i;
	int rc;

	if ((rc = image_efde_read(is, m->efde)) < 0)
		return rc;
	for (i = 0; i < t->n; i++) {
		uint64_t lo = t->v[i].start + m->bias;
		uint64_t hi = t->v[i].end + m->bias;

		if (lo >= m->start && lo < m->end && hi > lo &&
		    (rc = mt_fde_tab_add(&is->fdes, lo, hi)) < 0)
			return rc;
	}
	return 0;
}

static int
fn_cmp(const void *a, const void *b)
{
	const struct image_fn *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Make fns and fdes from the mappings, sorted by address.  Taken in the
 * order of their starts, mappings that do not overlap give sorted
 * tables at once; otherwise fns are made in the order the mappings were
 * added and sorted stably (equal starts: the last added wins the
 * lookup), as they always were.  Returns 0 or -MT_E_NOMEM.
 */
static int
image_fns_make(struct image_set *is)
{
	size_t *ord, i, j, n = is->nfnmaps;
	int rc = 0;

	ord = malloc((n ? n : 1) * sizeof(*ord));
	if (ord == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < n; i++) {	/* by start, stable; a few mappings */
		for (j = i; j > 0 && is->fnmaps[ord[j - 1]].start >
		    is->fnmaps[i].start; j--)
			ord[j] = ord[j - 1];
		ord[j] = i;
	}
	is->nfns = 0;
	is->fdes.n = 0;
	for (i = 0; rc == 0 && i < n; i++)
		if ((rc = image_fns_of(is, &is->fnmaps[ord[i]])) == 0)
			rc = image_fdes_of(is, &is->fnmaps[ord[i]]);
	for (i = 1; rc == 0 && i < is->nfns; i++)
		if (is->fns[i - 1].lo >= is->fns[i].lo)
			break;
	if (rc == 0 && i < is->nfns) {
		is->nfns = 0;
		for (i = 0; rc == 0 && i < n; i++)
			rc = image_fns_of(is, &is->fnmaps[i]);
		if (rc == 0)
			qsort(is->fns, is->nfns, sizeof(*is->fns), fn_cmp);
	}
	free(ord);
	if (rc == 0)
		mt_fde_sort(&is->fdes);	/* sorted already: one pass */
	/* The files' own tables are in fdes now (read again if needed). */
	for (i = 0; i < is->nefdes; i++) {
		mt_fde_tab_release(&is->efdes[i].t);
		is->efdes[i].held = 0;
	}
	/*
	 * The pages of the bundled files that the symbols and FDEs were
	 * read from: only code is read from them now, by libipt through its
	 * own mapping of the file, or in place (image_set_code), which
	 * brings back what it reads.
	 */
	for (i = 0; i < is->snap->nelfs; i++)
		mt_snap_drop(is->snap, is->snap->elfs[i].data,
		    is->snap->elfs[i].len);
	return rc;
}

int
image_set_fn_lookup(void *arg, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	struct image_set *is = arg;
	const struct mt_fde *f;
	size_t l = 0, h;

	if (!is->fns_sorted) {
		is->fns_nomem = image_fns_make(is) < 0;
		is->fns_sorted = 1;
	}
	if (is->fns_nomem)
		return 0;
	h = is->nfns;
	while (l < h) {		/* first entry with lo > addr */
		size_t m = l + (h - l) / 2;

		if (is->fns[m].lo <= addr)
			l = m + 1;
		else
			h = m;
	}
	if (l > 0 && addr < is->fns[l - 1].hi) {
		*lo = is->fns[l - 1].lo;
		*hi = is->fns[l - 1].hi;
		return 1;
	}
	/* No symbol covers it: the FDE holding it, if any. */
	f = mt_fde_find(&is->fdes, addr);
	if (f == NULL)
		return 0;
	*lo = f->start;
	*hi = f->end;
	return 1;
}

int
image_set_fns_failed(const struct image_set *is)
{
	return is->fns_nomem;
}

static int
bid_equal(struct mt_elf *e, const uint8_t *id, size_t n)
{
	const uint8_t *eid;
	size_t en = mt_elf_build_id(e, &eid);

	return en == n && memcmp(eid, id, n) == 0;
}

/* Keep @e (freed with the set) and return @rc, or -MT_E_NOMEM. */
int
image_keep_elf(struct image_set *is, struct mt_elf *e, int rc)
{
	struct mt_elf **el = grow(is->elfs, is->nelfs, sizeof(*el));

	if (el == NULL) {
		mt_elf_free(e);
		return -MT_E_NOMEM;
	}
	is->elfs = el;
	is->elfs[is->nelfs++] = e;
	return rc;
}

/*
 * The ELF file at @path, opened once for every mapping of it (held by the
 * set): 1 and *@ep, 0 when it cannot be opened, or -MT_E_NOMEM.
 */
static int
image_open_file(struct image_set *is, const char *path, struct mt_elf **ep)
{
	struct image_file *f;
	struct mt_elf *e;
	size_t i;
	int rc;

	for (i = 0; i < is->nfiles; i++)
		if (strcmp(is->files[i].path, path) == 0) {
			*ep = is->files[i].e;
			return 1;
		}
	rc = mt_elf_open(&e, path);
	if (rc == -MT_E_NOMEM)
		return rc;
	if (rc < 0)
		return 0;
	/* Its code is read where it is still there; the rest is a gap. */
	if (mt_elf_truncated(e) != NULL &&
	    (rc = image_warn(is, "'%s': %s", path, mt_elf_truncated(e))) < 0) {
		mt_elf_free(e);
		return rc;
	}
	rc = image_keep_elf(is, e, 0);
	if (rc < 0)
		return rc;
	f = grow(is->files, is->nfiles, sizeof(*f));
	if (f == NULL)
		return -MT_E_NOMEM;
	is->files = f;
	f = &is->files[is->nfiles];
	f->e = e;
	f->path = image_keep(is, path);
	if (f->path == NULL)
		return -MT_E_NOMEM;
	is->nfiles++;
	*ep = e;
	return 1;
}

/*
 * Add the function ranges of @e mapped at [@start, @end) from file offset
 * @pgoff, unless that mapping was added before (the same file reached
 * through the snapshot's mappings and the sideband, or in two processes).
 */
int
image_add_fns_once(struct image_set *is, struct mt_elf *e,
    const char *path, uint64_t start, uint64_t end, uint64_t pgoff)
{
	struct image_range *r;
	size_t i;

	for (i = 0; i < is->nranges; i++) {
		r = &is->ranges[i];
		if (r->e == e && r->start == start && r->end == end &&
		    r->pgoff == pgoff)
			return 0;
	}
	r = grow(is->ranges, is->nranges, sizeof(*r));
	if (r == NULL)
		return -MT_E_NOMEM;
	is->ranges = r;
	r = &is->ranges[is->nranges++];
	r->e = e;
	r->start = start;
	r->end = end;
	r->pgoff = pgoff;
	return image_add_fns(is, e, path, start, end, pgoff);
}

/*
 * Find the file of a mapping.  On success *@ep is the opened ELF (kept by
 * the set) and *@file the path libipt opens (pointer into @buf or the
 * memfd's path), *@base the file offset of the ELF in that file.
 * Returns 1 found, 0 not found (a warning was recorded), or < 0.
 */
int
image_find(struct image_set *is, const uint8_t *bid, size_t bidlen,
    const char *path, struct mt_elf **ep, const char **file, uint64_t *base,
    char *buf, size_t bufsize)
{
	const struct mt_snap *s = is->snap;
	char bhex[2 * 64 + 1];
	struct mt_elf *e;
	size_t i;
	int rc;

	*ep = NULL;
	hex(bhex, bid, bidlen);
	if (bidlen > 0) {
		for (i = 0; i < s->nelfs; i++) {
			const struct mt_snap_elf *f = &s->elfs[i];

			if (f->build_id_len != bidlen ||
			    memcmp(f->build_id, bid, bidlen) != 0)
				continue;
			/* The snapshot outlives the set: no copy, and one
			 * open however many mappings it has. */
			if (is->bundled[i] == NULL) {
				rc = mt_elf_open_ref(&e, f->data, f->len);
				if (rc < 0)
					break;
				rc = image_keep_elf(is, e, 0);
				if (rc < 0)
					return rc;
				is->bundled[i] = e;
			}
			*base = is->elf_off[i];
			*ep = is->bundled[i];
			*file = is->codepath;
			return 1;
		}
		if (is->o.debug_dir != NULL && bidlen > 1) {
			snprintf(buf, bufsize, "%s/.build-id/%.2s/%s",
			    is->o.debug_dir, bhex, bhex + 2);
			rc = image_open_file(is, buf, &e);
			if (rc < 0)
				return rc;
			if (rc > 0 && bid_equal(e, bid, bidlen)) {
				*ep = e;
				*file = buf;
				*base = 0;
				return 1;
			}
		}
	}
	if (path == NULL || path[0] != '/')
		goto missing;
	/* ROOT/path, then the recorded path itself. */
	for (i = is->o.root != NULL ? 0 : 1; i < 2; i++) {
		if (i == 0)
			snprintf(buf, bufsize, "%s%s", is->o.root, path);
		else
			snprintf(buf, bufsize, "%s", path);
		rc = image_open_file(is, buf, &e);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		if (bidlen > 0 && !bid_equal(e, bid, bidlen)) {
			char fhex[2 * MT_ELF_BUILD_ID_MAX + 1];

			mt_elf_build_id_hex(e, fhex);
			rc = image_warn(is, "'%s' has build-id %s, the trace "
			    "needs %s: not decoded against it", buf,
			    fhex[0] ? fhex : "(none)", bhex);
			return rc < 0 ? rc : 0;
		}
		*ep = e;
		*file = buf;
		*base = 0;
		return 1;
	}
missing:
	rc = image_warn(is, "no file for '%s'%s%s: its code is not decoded",
	    path ? path : "?", bidlen ? " with build-id " : "",
	    bidlen ? bhex : "");
	return rc < 0 ? rc : 0;
}

/*
 * A special mapping (the vDSO) takes the build-id of the blob holding its
 * bytes, so mt-symbolize finds the image in the build-id cache.
 */
void
image_blob_buildid(struct image_set *is, struct image_mod *m)
{
	size_t i;

	for (i = 0; i + 1 < is->nmods; i++) {
		const struct image_mod *b = &is->mods[i];

		if (b->loaded && b->pid == m->pid && b->start <= m->start &&
		    m->start < b->end && b->buildid[0] != '\0') {
			memcpy(m->buildid, b->buildid, sizeof(m->buildid));
			return;
		}
	}
}

