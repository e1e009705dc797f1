/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: mt-decode's cached decoder against libipt's block decoder
 * (--no-cache) on the same snapshot, -j 1: the same return code and the
 * same event stream, byte for byte (docs/decode.md: the stream is
 * libipt's, also with perf time, where the time a call gets depends on
 * where libipt's blocks end).  The seeds (tests/fuzz/seeds/timed/) are
 * small traces with TSC, MTC and CYC made by tests/helpers/ptretime.c;
 * the mutations damage their packets, code and mappings alike.
 *
 * Only snapshots with perf time (a time conversion and PTCFG's TSC bit)
 * are compared: with relative time two buffers of the same code given
 * back to libipt can still end a never-ending loop at other instruction
 * counts (an open bug of the cached decoder on untimed traces, found by
 * this target; fuzz-decode covers those inputs for crashes).
 *
 * The input is a snapshot whose checksums are made right first
 * (fuzz_snap_fix_checksums).  Recorded paths are looked for under a root
 * that does not exist and then as recorded, never in a build-id cache.
 */
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "err.h"
#include "events.h"
#include "snap.h"
#include "fuzz.h"

/* Decode @s into a new memfd; its return code in *@rc. */
static int
decode(const struct mt_snap *s, int no_cache, int *rc)
{
	struct decode_opts o;
	struct decode_stats st;
	struct decode_diag d = { 0, NULL };
	struct mt_evw *w;
	int fd = fuzz_memfd("", 0);

	memset(&o, 0, sizeof(o));
	memset(&st, 0, sizeof(st));
	o.source = "fuzz.snap";
	o.img.root = "/nonexistent-mt-fuzz-root";
	o.no_cache = no_cache;
	o.jobs = 1;
	o.out_fd = fd;
	FUZZ_CHECK(mt_evw_new(&w, fd) == 0);
	*rc = decode_run(&o, s, w, &st, &d);
	if (*rc >= 0)
		*rc = mt_evw_free(w);
	else
		mt_evw_free(w);
	return fd;
}

static void
one(const uint8_t *p, size_t n)
{
	struct mt_snap s;
	struct mt_snap_diag d;
	uint8_t *a, *b;
	size_t na, nb;
	int fa, fb, ra, rb;

	mt_snap_init(&s);
	memset(&d, 0, sizeof(d));
	if (mt_snap_read_mem(&s, p, n, &d) == 0 && s.has_timeconv &&
	    s.timeconv.cap_user_time_zero && s.has_ptcfg &&
	    (s.ptcfg.config & MT_PT_CFG_TSC)) {
		fa = decode(&s, 1, &ra);
		fb = decode(&s, 0, &rb);
		a = fuzz_slurp(fa, &na);
		b = fuzz_slurp(fb, &nb);
		if (ra != rb)
			fprintf(stderr, "return codes differ: %d (--no-cache) "
			    "vs %d (cached)\n", ra, rb);
		FUZZ_CHECK(ra == rb);
		if (ra >= 0 && (na != nb || memcmp(a, b, na) != 0))
			fprintf(stderr, "streams differ: %zu bytes "
			    "(--no-cache) vs %zu (cached)\n", na, nb);
		FUZZ_CHECK(ra < 0 || (na == nb && memcmp(a, b, na) == 0));
		free(a);
		free(b);
		close(fa);
		close(fb);
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
