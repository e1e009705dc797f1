/* SPDX-License-Identifier: MIT */
/* Unit tests for common/sideband.c: round trips, trailers, bad input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "buf.h"
#include "err.h"
#include "sideband.h"

#define ST_PT (MT_SB_ST_IP | MT_SB_ST_TID | MT_SB_ST_TIME | MT_SB_ST_CPU | \
    MT_SB_ST_IDENTIFIER)

static struct mt_sb_id
some_id(uint64_t t)
{
	struct mt_sb_id id = { .pid = 100, .tid = 101, .time = t,
	    .id = 2, .cpu = 3 };
	return id;
}

/* Six records of different types, written with sample_type ST_PT. */
static void
write_sample_set(struct mt_wbuf *w)
{
	struct mt_sb_rec r;

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_COMM;
	r.misc = MT_SB_MISC_COMM_EXEC;
	r.id = some_id(10);
	r.u.comm.pid = 100;
	r.u.comm.tid = 101;
	r.u.comm.comm = "prog";
	mt_sb_write(w, &r, ST_PT);

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_MMAP2;
	r.misc = MT_SB_MISC_USER | MT_SB_MISC_MMAP_BUILD_ID;
	r.id = some_id(11);
	r.u.mmap.pid = 100;
	r.u.mmap.tid = 101;
	r.u.mmap.addr = 0x400000;
	r.u.mmap.len = 0x1000;
	r.u.mmap.pgoff = 0x2000;
	r.u.mmap.build_id_len = 20;
	memset(r.u.mmap.build_id, 0xab, 20);
	r.u.mmap.prot = 5;
	r.u.mmap.flags = 2;
	r.u.mmap.filename = "/usr/bin/prog";
	mt_sb_write(w, &r, ST_PT);

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_SWITCH;
	r.misc = MT_SB_MISC_SWITCH_OUT | MT_SB_MISC_SWITCH_OUT_PREEMPT;
	r.id = some_id(12);
	mt_sb_write(w, &r, ST_PT);

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_FORK;
	r.id = some_id(13);
	r.u.task.pid = 100;
	r.u.task.ppid = 99;
	r.u.task.tid = 102;
	r.u.task.ptid = 101;
	r.u.task.time = 13;
	mt_sb_write(w, &r, ST_PT);

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_AUX;
	r.id = some_id(14);
	r.u.aux.aux_offset = 4096;
	r.u.aux.aux_size = 8192;
	r.u.aux.flags = MT_SB_AUX_OVERWRITE;
	mt_sb_write(w, &r, ST_PT);

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_NAMESPACES;	/* unknown body: raw bytes */
	r.id = some_id(15);
	r.body = (const uint8_t *)"12345678";
	r.body_len = 8;
	mt_sb_write(w, &r, ST_PT);
}

static void
round_trip_all_types(void)
{
	struct mt_wbuf w;
	struct mt_sb_reader rd;
	struct mt_sb_rec r;

	mt_wbuf_init(&w);
	write_sample_set(&w);
	CHECK(w.err == 0);
	CHECK(w.len % 8 == 0);
	mt_sb_reader_init(&rd, w.p, w.len, ST_PT, 1, 1000);

	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK_EQ_U64(r.type, MT_SB_COMM);
	CHECK_EQ_U64(r.off, 1000);
	CHECK_STR(r.u.comm.comm, "prog");
	CHECK_EQ_U64(r.misc, MT_SB_MISC_COMM_EXEC);
	CHECK_EQ_U64(r.id.time, 10);
	CHECK_EQ_U64(r.id.tid, 101);
	CHECK_EQ_U64(r.id.cpu, 3);
	CHECK_EQ_U64(r.id.id, 2);
	CHECK_EQ_U64(r.size, 8 + 16 + 32);

	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK_EQ_U64(r.type, MT_SB_MMAP2);
	CHECK_STR(r.u.mmap.filename, "/usr/bin/prog");
	CHECK_EQ_U64(r.u.mmap.addr, 0x400000);
	CHECK_EQ_U64(r.u.mmap.len, 0x1000);
	CHECK_EQ_U64(r.u.mmap.pgoff, 0x2000);
	CHECK_EQ_U64(r.u.mmap.build_id_len, 20);
	CHECK_EQ_U64(r.u.mmap.build_id[19], 0xab);
	CHECK_EQ_U64(r.u.mmap.prot, 5);
	CHECK_EQ_U64(r.u.mmap.flags, 2);

	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK_EQ_U64(r.type, MT_SB_SWITCH);
	CHECK_EQ_U64(r.size, 8 + 32);
	CHECK_EQ_U64(r.id.time, 12);

	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK_EQ_U64(r.type, MT_SB_FORK);
	CHECK_EQ_U64(r.u.task.ptid, 101);
	CHECK_EQ_U64(r.u.task.tid, 102);

	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK_EQ_U64(r.type, MT_SB_AUX);
	CHECK_EQ_U64(r.u.aux.aux_size, 8192);
	CHECK_EQ_U64(r.u.aux.flags, MT_SB_AUX_OVERWRITE);

	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK_EQ_U64(r.type, MT_SB_NAMESPACES);
	CHECK_EQ_U64(r.body_len, 8);
	CHECK(memcmp(r.body, "12345678", 8) == 0);
	CHECK_EQ_U64(r.id.time, 15);

	CHECK(mt_sb_next(&rd, &r) == MT_EOS);
	mt_wbuf_release(&w);
}

static void
trailer_layout_follows_sample_type(void)
{
	struct mt_wbuf w;
	struct mt_sb_reader rd;
	struct mt_sb_rec r;
	uint64_t st = MT_SB_ST_TID | MT_SB_ST_TIME | MT_SB_ST_ID |
	    MT_SB_ST_STREAM_ID | MT_SB_ST_CPU;

	CHECK_EQ_U64(mt_sb_id_size(st), 40);
	CHECK_EQ_U64(mt_sb_id_size(ST_PT), 32);
	CHECK_EQ_U64(mt_sb_id_size(MT_SB_ST_IP), 0);
	mt_wbuf_init(&w);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_ITRACE_START;
	r.u.task.pid = 7;
	r.u.task.tid = 8;
	r.id.pid = 7;
	r.id.tid = 8;
	r.id.time = 0x1122334455667788ull;
	r.id.id = 9;
	r.id.stream_id = 10;
	r.id.cpu = 11;
	CHECK(mt_sb_write(&w, &r, st) == 8 + 8 + 40);
	/* Byte layout: header, body, pid, tid, time, id, stream_id, cpu. */
	CHECK_EQ_U64(mt_le32(w.p), 12);
	CHECK_EQ_U64(mt_le16(w.p + 6), 56);
	CHECK_EQ_U64(mt_le64(w.p + 24), 0x1122334455667788ull);
	CHECK_EQ_U64(mt_le64(w.p + 32), 9);
	CHECK_EQ_U64(mt_le64(w.p + 40), 10);
	CHECK_EQ_U64(mt_le32(w.p + 48), 11);
	mt_sb_reader_init(&rd, w.p, w.len, st, 1, 0);
	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK_EQ_U64(r.u.task.tid, 8);
	CHECK_EQ_U64(r.id.stream_id, 10);
	CHECK_EQ_U64(r.id.cpu, 11);
	/* Without sample_id_all the trailer is body. */
	mt_sb_reader_init(&rd, w.p, w.len, st, 0, 0);
	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK(!r.has_id);
	CHECK_EQ_U64(r.body_len, 48);
	mt_wbuf_release(&w);
}

static void
mmap_without_build_id(void)
{
	struct mt_wbuf w;
	struct mt_sb_reader rd;
	struct mt_sb_rec r;

	mt_wbuf_init(&w);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_MMAP2;
	r.u.mmap.maj = 8;
	r.u.mmap.min = 1;
	r.u.mmap.ino = 12345;
	r.u.mmap.ino_generation = 6;
	r.u.mmap.filename = "12345678";	/* 9 bytes with NUL: pads to 16 */
	CHECK(mt_sb_write(&w, &r, ST_PT) == 8 + 64 + 16 + 32);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_MMAP;
	r.u.mmap.addr = 1;
	r.u.mmap.filename = "";
	CHECK(mt_sb_write(&w, &r, ST_PT) == 8 + 32 + 8 + 32);
	mt_sb_reader_init(&rd, w.p, w.len, ST_PT, 1, 0);
	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK_EQ_U64(r.u.mmap.ino, 12345);
	CHECK_EQ_U64(r.u.mmap.min, 1);
	CHECK_EQ_U64(r.u.mmap.build_id_len, 0);
	CHECK_STR(r.u.mmap.filename, "12345678");
	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK_STR(r.u.mmap.filename, "");
	CHECK_EQ_U64(r.u.mmap.addr, 1);
	mt_wbuf_release(&w);
}

static void
write_rejects_bad_records(void)
{
	struct mt_wbuf w;
	struct mt_sb_rec r;
	char *big;

	mt_wbuf_init(&w);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_SAMPLE;
	CHECK(mt_sb_write(&w, &r, ST_PT) == -MT_E_INVAL);
	r.type = MT_SB_COMM;
	CHECK(mt_sb_write(&w, &r, ST_PT) == -MT_E_INVAL);
	big = malloc(70000);
	CHECK(big != NULL);
	if (big != NULL) {
		memset(big, 'x', 69999);
		big[69999] = 0;
		r.u.comm.comm = big;
		CHECK(mt_sb_write(&w, &r, ST_PT) == -MT_E_LIMIT);
		free(big);
	}
	CHECK_EQ_U64(w.len, 0);
	mt_wbuf_release(&w);
}

/* Cut a valid stream at every length: an error naming the cut record or
 * a clean end at a record boundary, never a crash. */
static void
truncation_at_every_offset(void)
{
	struct mt_wbuf w;
	struct mt_sb_reader rd;
	struct mt_sb_rec r;
	size_t cut, nrec, bounds[16], nb = 0, i;
	int rc;
	uint8_t *copy;

	mt_wbuf_init(&w);
	write_sample_set(&w);
	mt_sb_reader_init(&rd, w.p, w.len, ST_PT, 1, 0);
	bounds[nb++] = 0;
	while (mt_sb_next(&rd, &r) == 0)
		bounds[nb++] = rd.pos;
	for (cut = 0; cut < w.len; cut++) {
		int boundary = 0;

		/* A private copy, so ASan sees reads past the cut. */
		copy = malloc(cut ? cut : 1);
		memcpy(copy, w.p, cut);
		for (i = 0; i < nb; i++)
			if (bounds[i] == cut)
				boundary = 1;
		mt_sb_reader_init(&rd, copy, cut, ST_PT, 1, 0);
		nrec = 0;
		while ((rc = mt_sb_next(&rd, &r)) == 0)
			nrec++;
		if (boundary) {
			CHECK(rc == MT_EOS);
		} else {
			CHECK(rc == -MT_E_TRUNC);
			CHECK_EQ_U64(rd.err_off, bounds[nrec]);
			CHECK(rd.err_msg != NULL);
		}
		free(copy);
	}
	mt_wbuf_release(&w);
}

static void
corrupt_records_fail_with_offset(void)
{
	uint8_t b[64];
	struct mt_sb_reader rd;
	struct mt_sb_rec r;

	/* size 4 < 8 */
	memset(b, 0, sizeof(b));
	mt_put_le32(b, MT_SB_COMM);
	mt_put_le16(b + 6, 4);
	mt_sb_reader_init(&rd, b, sizeof(b), ST_PT, 1, 77);
	CHECK(mt_sb_next(&rd, &r) == -MT_E_CORRUPT);
	CHECK_EQ_U64(rd.err_off, 77);
	/* trailer bigger than the record */
	mt_put_le16(b + 6, 16);
	mt_sb_reader_init(&rd, b, sizeof(b), ST_PT, 1, 0);
	CHECK(mt_sb_next(&rd, &r) == -MT_E_CORRUPT);
	/* COMM without NUL */
	mt_put_le16(b + 6, 8 + 16 + 32);
	memset(b + 8, 'a', 16);
	mt_sb_reader_init(&rd, b, sizeof(b), ST_PT, 1, 0);
	CHECK(mt_sb_next(&rd, &r) == -MT_E_CORRUPT);
	/* MMAP2 body shorter than its fixed part */
	mt_put_le32(b, MT_SB_MMAP2);
	mt_put_le16(b + 6, 8 + 16 + 32);
	mt_sb_reader_init(&rd, b, sizeof(b), ST_PT, 1, 0);
	CHECK(mt_sb_next(&rd, &r) == -MT_E_CORRUPT);
	/* Unknown type with a small size is fine without trailer. */
	mt_put_le32(b, 200);
	mt_put_le16(b + 6, 8);
	mt_sb_reader_init(&rd, b, 8, ST_PT, 1, 0);
	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK(mt_sb_next(&rd, &r) == MT_EOS);
	CHECK_STR(mt_sb_type_name(MT_SB_SWITCH_CPU_WIDE), "SWITCH_CPU_WIDE");
	CHECK_STR(mt_sb_type_name(999), "unknown");
}

static uint64_t
plus_1000(void *arg, uint64_t t)
{
	(*(int *)arg)++;
	return t + 1000;
}

static void
retime_changes_only_times(void)
{
	struct mt_wbuf w;
	struct mt_sb_reader rd;
	struct mt_sb_rec r;
	uint64_t want = 10;
	int calls = 0;

	mt_wbuf_init(&w);
	write_sample_set(&w);
	CHECK_EQ_U64(mt_sb_retime(w.p, w.len, ST_PT, plus_1000, &calls), 6);
	CHECK_EQ_U64(calls, 6);
	mt_sb_reader_init(&rd, w.p, w.len, ST_PT, 1, 0);
	while (mt_sb_next(&rd, &r) == 0) {
		CHECK_EQ_U64(r.id.time, 1000 + want++);
		CHECK_EQ_U64(r.id.tid, 101);
		CHECK_EQ_U64(r.id.cpu, 3);
		if (r.type == MT_SB_MMAP2)
			CHECK_STR(r.u.mmap.filename, "/usr/bin/prog");
		if (r.type == MT_SB_FORK)	/* the body's time stays */
			CHECK_EQ_U64(r.u.task.time, 13);
	}
	CHECK_EQ_U64(want, 16);
	/* Without TIME in the layout there is nothing to change. */
	CHECK_EQ_U64(mt_sb_retime(w.p, w.len, ST_PT & ~MT_SB_ST_TIME,
	    plus_1000, &calls), 0);
	/* A bad record stops it with the reader's error. */
	CHECK(mt_sb_retime(w.p, w.len - 4, ST_PT, plus_1000, &calls) ==
	    -MT_E_TRUNC);
	mt_wbuf_release(&w);
}

int
main(void)
{
	TEST(round_trip_all_types);
	TEST(trailer_layout_follows_sample_type);
	TEST(mmap_without_build_id);
	TEST(write_rejects_bad_records);
	TEST(truncation_at_every_offset);
	TEST(corrupt_records_fail_with_offset);
	TEST(retime_changes_only_times);
	return tap_done();
}
