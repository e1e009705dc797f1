/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-capture/ring.c: the AUX ring writer and snapshot
 * extraction on synthetic rings (not wrapped, wrapped, exactly full, head
 * at 0, head at the end, multi-snapshot), compared byte for byte with the
 * bytes written.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "err.h"
#include "snap.h"
#include "../../mt-capture/ring.h"

/* Deterministic non-zero pattern: byte i of a stream. */
static uint8_t
pat(uint64_t i)
{
	return (uint8_t)(1 + (i * 37 + (i >> 8)) % 255);
}

/* Write stream bytes [from, to) into @r in chunks of @step. */
static void
feed(struct mt_ring *r, uint64_t from, uint64_t to, size_t step)
{
	uint8_t tmp[4096];

	while (from < to) {
		size_t k = (size_t)(to - from);
		size_t i;

		if (k > step)
			k = step;
		if (k > sizeof(tmp))
			k = sizeof(tmp);
		for (i = 0; i < k; i++)
			tmp[i] = pat(from + i);
		mt_ring_write(r, tmp, k);
		from += k;
	}
}

/* Does @a hold exactly stream bytes [from, from + a->len)? */
static int
holds(const struct mt_snap_aux *a, uint64_t from)
{
	uint64_t i;

	for (i = 0; i < a->len; i++)
		if (a->data[i] != pat(from + i))
			return 0;
	return 1;
}

static void
extract_empty(void)
{
	struct mt_ring r;
	struct mt_ring_wrap w;
	struct mt_snap_aux a = { 0 };

	CHECK(mt_ring_init(&r, 4096) == 0);
	mt_ring_wrap_init(&w);
	CHECK(mt_ring_extract(r.base, r.size, r.head, &w, &a) == 0);
	CHECK_EQ_U64(a.len, 0);
	CHECK(a.data == NULL);
	CHECK_EQ_U64(a.flags & MT_SNAP_AUX_WRAPPED, 0);
	CHECK_EQ_U64(a.ring_size, 4096);
	mt_ring_release(&r);
}

static void
extract_not_wrapped(void)
{
	struct mt_ring r;
	struct mt_ring_wrap w;
	struct mt_snap_aux a = { 0 };

	CHECK(mt_ring_init(&r, 8192) == 0);
	mt_ring_wrap_init(&w);
	feed(&r, 0, 5000, 7);
	CHECK_EQ_U64(r.head, 5000);
	CHECK(mt_ring_extract(r.base, r.size, r.head, &w, &a) == 0);
	CHECK_EQ_U64(a.len, 5000);
	CHECK_EQ_U64(a.head, 5000);
	CHECK_EQ_U64(a.flags & MT_SNAP_AUX_WRAPPED, 0);
	CHECK(holds(&a, 0));
	free(a.data);
	mt_ring_release(&r);
}

static void
extract_wrapped(void)
{
	struct mt_ring r;
	struct mt_ring_wrap w;
	struct mt_snap_aux a = { 0 };

	CHECK(mt_ring_init(&r, 4096) == 0);
	mt_ring_wrap_init(&w);
	feed(&r, 0, 4096 * 3 + 100, 1000);
	CHECK_EQ_U64(r.head, 100);
	CHECK(mt_ring_extract(r.base, r.size, r.head, &w, &a) == 0);
	CHECK_EQ_U64(a.len, 4096);
	CHECK(a.flags & MT_SNAP_AUX_WRAPPED);
	/* Oldest byte first: the last 4096 bytes of the stream. */
	CHECK(holds(&a, 4096 * 3 + 100 - 4096));
	free(a.data);
	mt_ring_release(&r);
}

static void
extract_exactly_full_head_at_0(void)
{
	struct mt_ring r;
	struct mt_ring_wrap w;
	struct mt_snap_aux a = { 0 };

	CHECK(mt_ring_init(&r, 4096) == 0);
	mt_ring_wrap_init(&w);
	feed(&r, 0, 4096, 4096);
	CHECK_EQ_U64(r.head, 0);
	CHECK(mt_ring_extract(r.base, r.size, r.head, &w, &a) == 0);
	CHECK_EQ_U64(a.len, 4096);
	CHECK(a.flags & MT_SNAP_AUX_WRAPPED);
	CHECK(holds(&a, 0));
	free(a.data);
	mt_ring_release(&r);
}

static void
extract_head_at_end(void)
{
	struct mt_ring r;
	struct mt_ring_wrap w;
	struct mt_snap_aux a = { 0 };

	/* One byte short of full: the last ring byte is still zero. */
	CHECK(mt_ring_init(&r, 4096) == 0);
	mt_ring_wrap_init(&w);
	feed(&r, 0, 4095, 100);
	CHECK_EQ_U64(r.head, 4095);
	CHECK(mt_ring_extract(r.base, r.size, r.head, &w, &a) == 0);
	CHECK_EQ_U64(a.len, 4095);
	CHECK_EQ_U64(a.flags & MT_SNAP_AUX_WRAPPED, 0);
	CHECK(holds(&a, 0));
	free(a.data);
	/* perf's 4 KiB window would call this wrapped; one more lap
	 * and head at the very last byte is wrapped. */
	feed(&r, 4095, 4096 * 2 + 4095, 100);
	CHECK_EQ_U64(r.head, 4095);
	memset(&a, 0, sizeof(a));
	CHECK(mt_ring_extract(r.base, r.size, r.head, &w, &a) == 0);
	CHECK_EQ_U64(a.len, 4096);
	CHECK(a.flags & MT_SNAP_AUX_WRAPPED);
	CHECK(holds(&a, 4096 * 2 + 4095 - 4096));
	free(a.data);
	mt_ring_release(&r);
}

static void
extract_head_moved_back_is_wrapped(void)
{
	struct mt_ring_wrap w;
	struct mt_snap_aux a = { 0 };
	uint8_t ring[64];

	/* A lap that left only PAD (0x00) bytes after head: the head going
	 * backwards since the previous extraction still tells. */
	memset(ring, 0, sizeof(ring));
	memset(ring, 0x42, 40);
	mt_ring_wrap_init(&w);
	CHECK(mt_ring_extract(ring, 64, 40, &w, &a) == 0);
	CHECK_EQ_U64(a.len, 40);
	free(a.data);
	memset(&a, 0, sizeof(a));
	ring[0] = 0x43;
	CHECK(mt_ring_extract(ring, 64, 1, &w, &a) == 0);
	CHECK_EQ_U64(a.len, 64);
	CHECK(a.flags & MT_SNAP_AUX_WRAPPED);
	CHECK_EQ_U64(a.data[63], 0x43);
	CHECK_EQ_U64(a.data[0], 0x42);
	free(a.data);
	/* Sticky: a later head ahead of the previous one is still wrapped. */
	memset(&a, 0, sizeof(a));
	CHECK(mt_ring_extract(ring, 64, 2, &w, &a) == 0);
	CHECK(a.flags & MT_SNAP_AUX_WRAPPED);
	free(a.data);
}

static void
extract_multi_snapshot_is_self_contained(void)
{
	struct mt_ring r;
	struct mt_ring_wrap w;
	struct mt_snap_aux a = { 0 };

	CHECK(mt_ring_init(&r, 8192) == 0);
	mt_ring_wrap_init(&w);
	feed(&r, 0, 1000, 50);
	CHECK(mt_ring_extract(r.base, r.size, r.head, &w, &a) == 0);
	CHECK_EQ_U64(a.len, 1000);
	free(a.data);
	/* The second snapshot holds everything since the start, not only
	 * what is new: it decodes without the first. */
	feed(&r, 1000, 3000, 50);
	memset(&a, 0, sizeof(a));
	CHECK(mt_ring_extract(r.base, r.size, r.head, &w, &a) == 0);
	CHECK_EQ_U64(a.len, 3000);
	CHECK(holds(&a, 0));
	free(a.data);
	mt_ring_release(&r);
}

static void
write_longer_than_ring(void)
{
	struct mt_ring r;
	struct mt_ring_wrap w;
	struct mt_snap_aux a = { 0 };

	CHECK(mt_ring_init(&r, 256) == 0);
	mt_ring_wrap_init(&w);
	feed(&r, 0, 10, 10);
	feed(&r, 10, 10 + 1000, 4096);	/* one write of 1000 bytes */
	CHECK_EQ_U64(r.head, 1010 % 256);
	CHECK_EQ_U64(r.written, 1010);
	CHECK(mt_ring_extract(r.base, r.size, r.head, &w, &a) == 0);
	CHECK_EQ_U64(a.len, 256);
	CHECK(holds(&a, 1010 - 256));
	free(a.data);
	mt_ring_release(&r);
}

static void
bad_arguments(void)
{
	struct mt_ring r;
	struct mt_ring_wrap w;
	struct mt_snap_aux a = { 0 };
	uint8_t ring[64] = { 0 };

	CHECK(mt_ring_init(&r, 3000) == -MT_E_INVAL);
	CHECK(mt_ring_init(&r, 0) == -MT_E_INVAL);
	mt_ring_wrap_init(&w);
	CHECK(mt_ring_extract(ring, 64, 64, &w, &a) == -MT_E_INVAL);
	CHECK(mt_ring_extract(ring, 48, 0, &w, &a) == -MT_E_INVAL);
	CHECK_EQ_U64(mt_ring_round_size(5000, 4096), 8192);
	CHECK_EQ_U64(mt_ring_round_size(1, 4096), 4096);
	CHECK_EQ_U64(mt_ring_round_size(8192, 4096), 8192);
}

/* PSB, TSC @tsc, PSBEND at @off of @ring. */
static size_t
put_psb_tsc(uint8_t *ring, size_t off, uint64_t tsc)
{
	size_t i;

	for (i = 0; i < 8; i++) {
		ring[off++] = 0x02;
		ring[off++] = 0x82;
	}
	ring[off++] = 0x19;
	for (i = 0; i < 7; i++)
		ring[off++] = (uint8_t)(tsc >> (8 * i));
	ring[off++] = 0x02;
	ring[off++] = 0x23;
	return off;
}

static void
oldest_tsc_of_a_ring(void)
{
	uint8_t ring[4096];
	uint64_t tsc = 0;

	memset(ring, 0, sizeof(ring));
	CHECK(mt_ring_oldest_tsc(ring, sizeof(ring), &tsc) == 0);
	/* a wrapped ring: newer data first, the oldest after it */
	(void)put_psb_tsc(ring, 100, 0x123456789aull);
	(void)put_psb_tsc(ring, 2000, 0x1234000000ull);
	(void)put_psb_tsc(ring, 3000, 0x1234500000ull);
	CHECK(mt_ring_oldest_tsc(ring, sizeof(ring), &tsc) == 1);
	CHECK_EQ_U64(tsc, 0x1234000000ull);
}

int
main(void)
{
	TEST(extract_empty);
	TEST(extract_not_wrapped);
	TEST(extract_wrapped);
	TEST(extract_exactly_full_head_at_0);
	TEST(extract_head_at_end);
	TEST(extract_head_moved_back_is_wrapped);
	TEST(extract_multi_snapshot_is_self_contained);
	TEST(write_longer_than_ring);
	TEST(bad_arguments);
	TEST(oldest_tsc_of_a_ring);
	return tap_done();
}
