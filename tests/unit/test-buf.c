/* SPDX-License-Identifier: MIT */
/* Unit tests for common/buf.c. */
#include <stdint.h>

#include "tap.h"
#include "buf.h"
#include "err.h"

static void
get_le_values(void)
{
	static const uint8_t b[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
	    13, 14, 15 };
	struct mt_buf c;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	mt_buf_init(&c, b, sizeof(b));
	CHECK(mt_buf_get_u8(&c, &u8) == 0 && u8 == 1);
	CHECK(mt_buf_get_u16le(&c, &u16) == 0 && u16 == 0x0302);
	CHECK(mt_buf_get_u32le(&c, &u32) == 0 && u32 == 0x07060504);
	CHECK(mt_buf_get_u64le(&c, &u64) == 0 &&
	    u64 == 0x0f0e0d0c0b0a0908ull);
	CHECK_EQ_U64(c.off, 15);
	CHECK_EQ_U64(c.len, 0);
}

static void
get_short_input_fails_unchanged(void)
{
	static const uint8_t b[] = { 1, 2, 3 };
	struct mt_buf c;
	uint32_t u32;
	const uint8_t *p;

	mt_buf_init(&c, b, sizeof(b));
	CHECK(mt_buf_get_u32le(&c, &u32) == -MT_E_TRUNC);
	CHECK_EQ_U64(c.len, 3);
	CHECK_EQ_U64(c.off, 0);
	CHECK(mt_buf_get_bytes(&c, 4, &p) == -MT_E_TRUNC);
	CHECK(mt_buf_get_bytes(&c, 3, &p) == 0 && p == b);
}

static void
wbuf_roundtrip(void)
{
	struct mt_wbuf w;
	struct mt_buf c;
	uint64_t v;
	int i;

	mt_wbuf_init(&w);
	for (i = 0; i < 1000; i++)
		mt_wbuf_u64le(&w, (uint64_t)i * 0x0101010101ull);
	CHECK(w.err == 0);
	CHECK_EQ_U64(w.len, 8000);
	mt_buf_init(&c, w.p, w.len);
	for (i = 0; i < 1000; i++) {
		CHECK(mt_buf_get_u64le(&c, &v) == 0);
		CHECK_EQ_U64(v, (uint64_t)i * 0x0101010101ull);
	}
	mt_wbuf_release(&w);
}

static void
leb128_values(void)
{
	/* DWARF 5 section 7.6, figures 3 and 4, plus the 64-bit limits. */
	static const uint8_t b[] = { 2, 0x7f, 0x80, 1, 0xb9, 0x64,
	    0x7e, 0x80, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0xff, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	    0x7f };
	struct mt_buf c;
	uint64_t u;
	int64_t s;

	mt_buf_init(&c, b, sizeof(b));
	CHECK(mt_buf_get_uleb128(&c, &u) == 0 && u == 2);
	CHECK(mt_buf_get_uleb128(&c, &u) == 0 && u == 127);
	CHECK(mt_buf_get_uleb128(&c, &u) == 0 && u == 128);
	CHECK(mt_buf_get_uleb128(&c, &u) == 0 && u == 12857);
	CHECK(mt_buf_get_sleb128(&c, &s) == 0 && s == -2);
	CHECK(mt_buf_get_sleb128(&c, &s) == 0 && s == -128);
	CHECK(mt_buf_get_uleb128(&c, &u) == 0 && u == UINT64_MAX);
	CHECK(mt_buf_get_sleb128(&c, &s) == 0 && s == INT64_MIN);
	CHECK_EQ_U64(c.len, 0);
}

static void
leb128_bad_input_fails_unchanged(void)
{
	static const uint8_t cut[] = { 0x80, 0x80 };
	static const uint8_t big[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0xff, 0xff, 0xff, 0x03 };
	struct mt_buf c;
	uint64_t u;
	int64_t s;

	mt_buf_init(&c, cut, sizeof(cut));
	CHECK(mt_buf_get_uleb128(&c, &u) == -MT_E_TRUNC);
	CHECK(mt_buf_get_sleb128(&c, &s) == -MT_E_TRUNC);
	CHECK_EQ_U64(c.len, 2);
	mt_buf_init(&c, big, sizeof(big));
	CHECK(mt_buf_get_uleb128(&c, &u) == -MT_E_CORRUPT);
	CHECK_EQ_U64(c.len, sizeof(big));
}

static void
strerror_texts(void)
{
	CHECK_STR(mt_strerror(-MT_E_TRUNC), "truncated input");
	CHECK_STR(mt_strerror(MT_EOS), "end of stream");
	CHECK_STR(mt_strerror(-9999), "unknown error");
}

int
main(void)
{
	TEST(get_le_values);
	TEST(get_short_input_fails_unchanged);
	TEST(wbuf_roundtrip);
	TEST(leb128_values);
	TEST(leb128_bad_input_fails_unchanged);
	TEST(strerror_texts);
	return tap_done();
}
