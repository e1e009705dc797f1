/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the qemu backend's reader of its plugin's maps log
 * (mt-capture/qemu-maps.c): a "TICK /proc/PID/maps line" per line, read
 * into maps text and into timed MMAP2 sideband records.  The log is
 * written by mt's own plugin, but its paths are whatever files the guest
 * maps (a name may hold any byte but NUL and '/').
 *
 * The input up to its first NUL is the log (the plugin writes it with
 * snprintf: it holds no NUL), NUL-terminated as mt-capture reads it.
 * Invariants: the maps text is a NUL-terminated run of whole lines no
 * longer than the log; a snapshot holding the records written from it
 * writes, reads back and writes again to the same bytes, and its
 * sideband records parse.
 */
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "qemu-maps.h"
#include "sideband.h"
#include "snap.h"
#include "fuzz.h"

/* Every sideband record of @s is an MMAP2 record that parses. */
static void
check_records(const struct mt_snap *s)
{
	size_t i;

	for (i = 0; i < s->nsideband; i++) {
		struct mt_sb_reader r;
		struct mt_sb_rec rec;
		int rc;

		mt_sb_reader_init(&r, s->sideband[i].data, s->sideband[i].len,
		    s->sideband[i].sample_type, 1, 0);
		while ((rc = mt_sb_next(&r, &rec)) == 0)
			FUZZ_CHECK(rec.type == MT_SB_MMAP2);
		FUZZ_CHECK(rc == MT_EOS);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_snap s;
	char *log = malloc(size + 1), *text;
	size_t n;

	if (log == NULL)
		return 0;
	size = strnlen((const char *)data, size);
	memcpy(log, data, size);
	log[size] = '\0';
	FUZZ_CHECK(mt_qemu_maps_text(log, size, &text, &n) == 0);
	FUZZ_CHECK(text != NULL && strlen(text) == n && n <= size);
	FUZZ_CHECK(n == 0 || text[n - 1] == '\n');
	free(text);

	mt_snap_init(&s);
	s.has_timeconv = 1;
	s.timeconv.time_mult = 1;
	s.timeconv.cap_user_time_zero = 1;
	FUZZ_CHECK(mt_qemu_maps_sideband(&s, 42, log, size) == 0);
	check_records(&s);
	fuzz_snap_round_trip(&s);
	mt_snap_release(&s);
	free(log);
	return 0;
}
