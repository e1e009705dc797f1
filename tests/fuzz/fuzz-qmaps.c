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

static void
round_trip(const struct mt_snap *s)
{
	struct mt_snap s2;
	struct mt_snap_diag d;
	uint8_t *a, *b;
	size_t na, nb, i;
	int fd = fuzz_memfd("", 0);

	FUZZ_CHECK(mt_snap_write_fd(s, fd) == 0);
	a = fuzz_slurp(fd, &na);
	close(fd);
	mt_snap_init(&s2);
	FUZZ_CHECK(mt_snap_read_mem(&s2, a, na, &d) == 0);
	for (i = 0; i < s2.nsideband; i++) {
		struct mt_sb_reader r;
		struct mt_sb_rec rec;
		int rc;

		mt_sb_reader_init(&r, s2.sideband[i].data, s2.sideband[i].len,
		    s2.sideband[i].sample_type, 1, 0);
		while ((rc = mt_sb_next(&r, &rec)) == 0)
			FUZZ_CHECK(rec.type == MT_SB_MMAP2);
		FUZZ_CHECK(rc == MT_EOS);
	}
	fd = fuzz_memfd("", 0);
	FUZZ_CHECK(mt_snap_write_fd(&s2, fd) == 0);
	b = fuzz_slurp(fd, &nb);
	close(fd);
	FUZZ_CHECK(na == nb && memcmp(a, b, na) == 0);
	mt_snap_release(&s2);
	free(a);
	free(b);
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
	round_trip(&s);
	mt_snap_release(&s);
	free(log);
	return 0;
}
