/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the event stream reader and writer (common/events.c), the
 * parser that mt-symbolize and mt-fxt run on their input.
 *
 * The input is read with mt_evr_next() from a memfd until the end or the
 * first error; every record read is written back with mt_evw_write().
 * Invariant: what the writer wrote must read back without error, and a
 * second read-write pass must reproduce the same text (the writer's
 * output is a fixed point of read-then-write).
 */
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "events.h"
#include "fuzz.h"

/*
 * Read everything from @p and write it out again; returns the text
 * written and sets *@nout.  *@rc_out gets the reader's last status.
 */
static uint8_t *
pass(const uint8_t *p, size_t n, size_t *nout, int *rc_out)
{
	struct mt_evr *r;
	struct mt_evw *w;
	struct mt_ev ev;
	int in = fuzz_memfd(p, n), out = fuzz_memfd("", 0), rc;
	uint8_t *text;

	FUZZ_CHECK(mt_evr_new(&r, in, "fuzz") == 0);
	FUZZ_CHECK(mt_evw_new(&w, out) == 0);
	while ((rc = mt_evr_next(r, &ev)) == 0) {
		FUZZ_CHECK(ev.kind > MT_EV_NONE && ev.kind < MT_EV_NKINDS);
		FUZZ_CHECK(ev.nframes <= MT_EV_MAX_FRAMES);
		if (ev.kind == MT_EV_LOC && ev.nframes == 0)
			continue;	/* the writer refuses it (-MT_E_INVAL) */
		FUZZ_CHECK(mt_evw_write(w, &ev) == 0);
	}
	if (rc < 0) {
		const char *m = mt_evr_errmsg(r);

		FUZZ_CHECK(m != NULL && strncmp(m, "line ", 5) == 0);
	} else {
		FUZZ_CHECK(rc == MT_EOS);
	}
	FUZZ_CHECK(mt_evr_offset(r) <= n);
	FUZZ_CHECK(mt_evw_free(w) == 0);
	mt_evr_free(r);
	text = fuzz_slurp(out, nout);
	close(in);
	close(out);
	*rc_out = rc;
	return text;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *t1, *t2;
	size_t n1, n2;
	int rc1, rc2;

	t1 = pass(data, size, &n1, &rc1);
	t2 = pass(t1, n1, &n2, &rc2);
	if (rc2 != MT_EOS)
		fprintf(stderr, "re-read of written text failed (%d)\n", rc2);
	FUZZ_CHECK(rc2 == MT_EOS);
	FUZZ_CHECK(n1 == n2 && memcmp(t1, t2, n1) == 0);
	free(t1);
	free(t2);
	return 0;
}
