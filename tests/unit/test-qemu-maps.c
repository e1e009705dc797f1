/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-capture/qemu-maps.c: the qemu plugin's maps log
 * ("TICK /proc/PID/maps line" per line) into maps text and timed MMAP2
 * records; a tick that is not a plain decimal number drops its line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "err.h"
#include "sideband.h"
#include "snap.h"
#include "../../mt-capture/qemu-maps.h"

#define LINE "00400000-00401000 r-xp 00000000 08:01 1234 /bin/x\n"

/* The times of the MMAP2 records @log turns into, in @t; their count. */
static size_t
mmap_times(const char *log, uint64_t *t, size_t max)
{
	struct mt_snap s;
	struct mt_sb_reader r;
	struct mt_sb_rec rec;
	size_t n = 0;

	mt_snap_init(&s);
	s.has_timeconv = 1;
	s.timeconv.time_mult = 1;	/* ns = tick */
	s.timeconv.cap_user_time_zero = 1;
	CHECK(mt_qemu_maps_sideband(&s, 42, log, strlen(log)) == 0);
	if (s.nsideband == 1) {
		mt_sb_reader_init(&r, s.sideband[0].data, s.sideband[0].len,
		    s.sideband[0].sample_type, 1, 0);
		while (mt_sb_next(&r, &rec) == 0 && n < max)
			t[n++] = rec.id.time;
	}
	mt_snap_release(&s);
	return n;
}

static void
decimal_tick_is_the_time(void)
{
	uint64_t t[4];

	CHECK(mmap_times("5 " LINE, t, 4) == 1);
	CHECK_EQ_U64(t[0], 5);
	CHECK(mmap_times("18446744073709551615 " LINE, t, 4) == 1);
	CHECK_EQ_U64(t[0], UINT64_MAX);
}

static void
bad_tick_drops_the_line(void)
{
	static const char *const bad[] = {
		"-5 " LINE,			/* a sign */
		"+5 " LINE,
		" 5 " LINE,			/* blanks before it */
		"\t5 " LINE,
		"18446744073709551616 " LINE,	/* 2^64 */
		"99999999999999999999999 " LINE,
		"0x5 " LINE,			/* not decimal */
		"5x " LINE,
	};
	uint64_t t[4];
	char *text;
	size_t i, n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(mmap_times(bad[i], t, 4) == 0);
		CHECK(mt_qemu_maps_text(bad[i], strlen(bad[i]), &text, &n) ==
		    0);
		CHECK(n == 0);
		free(text);
	}
	/* Only the bad line goes. */
	CHECK(mmap_times("-5 " LINE "7 " LINE, t, 4) == 1);
	CHECK_EQ_U64(t[0], 7);
}

int
main(void)
{
	TEST(decimal_tick_is_the_time);
	TEST(bad_tick_drops_the_line);
	return tap_done();
}
