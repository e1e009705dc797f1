/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the FDE reader (common/fde.c) over one section's bytes,
 * what mt-decode and mt-symbolize read from the .eh_frame and
 * .debug_frame of every binary they open.  The first input byte picks
 * the section kind (bit 0: .debug_frame), the rest is the section, at
 * vaddr 0x1000.  Seeds (tests/fuzz/seeds/fde/) are sections of real
 * programs with that byte in front, made by
 *
 *   objcopy -O binary --only-section=.eh_frame PROG sec
 *   { printf '\0'; cat sec; } > tests/fuzz/seeds/fde/NAME
 *
 * Invariants: whatever the return, the table after mt_fde_sort() is
 * sorted, disjoint and has no empty range, an error names an offset
 * inside the input, and mt_fde_find() returns the range holding the
 * address it was asked for.
 */
#include "err.h"
#include "fde.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_fde_tab t;
	const struct mt_fde *f;
	uint64_t off;
	size_t i;
	int rc;

	if (size < 1)
		return 0;
	mt_fde_tab_init(&t);
	rc = mt_fde_parse(&t, data + 1, size - 1, 0x1000,
	    (data[0] & 1) ? MT_FDE_DEBUG_FRAME : MT_FDE_EH_FRAME, &off);
	FUZZ_CHECK(rc <= 0);
	if (rc < 0)
		FUZZ_CHECK(off < size - 1);
	mt_fde_sort(&t);
	for (i = 0; i < t.n; i++) {
		FUZZ_CHECK(t.v[i].start < t.v[i].end);
		if (i > 0)
			FUZZ_CHECK(t.v[i - 1].end <= t.v[i].start);
		if (i < 64) {
			f = mt_fde_find(&t, t.v[i].start);
			FUZZ_CHECK(f == &t.v[i]);
			f = mt_fde_find(&t, t.v[i].end - 1);
			FUZZ_CHECK(f == &t.v[i]);
		}
	}
	mt_fde_tab_release(&t);
	return 0;
}
