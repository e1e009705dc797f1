/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: mt-decode on a snapshot, everything after the snapshot
 * reader (fuzz-snap.c): the image set built from the MMAP chunks, the
 * sideband records, the bundled ELF files and the code blobs (a vDSO
 * blob is read as an ELF image), the walk cache and the cached decoder
 * (cfg.c), libipt on the PT bytes, the per-CPU runs and the parallel
 * segments (-j 2), and mt-decode --info (info.c).
 *
 * The input is a snapshot; its checksums are made right first (see
 * fuzz_snap_fix_checksums), so mutations reach the chunks.  The low three
 * bits of its size choose --no-cache, -j 2 and an output written in place
 * and cut back on a fallback (as -o FILE).  Recorded paths are looked
 * for under a root that does not exist and then as recorded (as
 * mt-decode does without -r), never in a build-id cache.
 * Invariants: decode_run returns 0 or an -MT_E_* code, and the event
 * stream it wrote reads back to its end.
 */
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "err.h"
#include "events.h"
#include "info.h"
#include "snap.h"
#include "fuzz.h"

/* The stream on @fd must read back to its end without an error. */
static void
check_stream(int fd)
{
	struct mt_evr *r;
	struct mt_ev ev;
	int rc;

	FUZZ_CHECK(lseek(fd, 0, SEEK_SET) == 0);
	FUZZ_CHECK(mt_evr_new(&r, fd, "decoded") == 0);
	while ((rc = mt_evr_next(r, &ev)) == 0)
		;
	if (rc != MT_EOS)
		fprintf(stderr, "stream does not read back: %s\n",
		    mt_evr_errmsg(r));
	FUZZ_CHECK(rc == MT_EOS);
	mt_evr_free(r);
}

static void
decode(const struct mt_snap *s, size_t size)
{
	struct decode_opts o;
	struct decode_stats st;
	struct decode_diag d = { 0, NULL };
	struct mt_evw *w;
	int fd = fuzz_memfd("", 0), rc;

	memset(&o, 0, sizeof(o));
	memset(&st, 0, sizeof(st));
	o.source = "fuzz.snap";
	o.img.root = "/nonexistent-mt-fuzz-root";
	o.no_cache = (size & 1) != 0;
	o.jobs = (size & 2) != 0 ? 2 : 1;
	o.out_fd = fd;
	o.out_private = (size & 4) != 0;
	FUZZ_CHECK(mt_evw_new(&w, fd) == 0);
	rc = decode_run(&o, s, w, &st, &d);
	if (rc >= 0)
		rc = mt_evw_free(w);
	else
		mt_evw_free(w);
	FUZZ_CHECK(rc >= 0 || mt_strerror(rc) != NULL);
	if (rc >= 0)
		check_stream(fd);
	close(fd);
}

static void
one(const uint8_t *p, size_t n)
{
	struct mt_snap s;
	struct mt_snap_diag d;
	FILE *null;

	mt_snap_init(&s);
	memset(&d, 0, sizeof(d));
	if (mt_snap_read_mem(&s, p, n, &d) == 0) {
		null = fopen("/dev/null", "w");
		FUZZ_CHECK(null != NULL);
		(void)info_print(null, &s, "fuzz.snap");
		fclose(null);
		decode(&s, n);
	}
	mt_snap_release(&s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);

	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	fuzz_snap_fix_checksums(copy, size);
	one(copy, size);
	free(copy);
	return 0;
}
