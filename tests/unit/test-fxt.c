/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for common/fxt.c: header words worked out by hand from the
 * record layouts of the Fuchsia trace format specification (fuchsia.dev,
 * reference/tracing/trace-format), string and thread slot reuse when the
 * tables are full, truncation of long strings, and sink errors.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "buf.h"
#include "err.h"
#include "fxt.h"

struct mem {
	uint8_t *p;
	size_t len;
	int fail;		/* return this from the sink */
};

static int
mem_sink(void *ctx, const void *p, size_t n)
{
	struct mem *m = ctx;

	if (m->fail)
		return m->fail;
	m->p = realloc(m->p, m->len + n);
	memcpy(m->p + m->len, p, n);
	m->len += n;
	return 0;
}

static uint64_t
word(const struct mem *m, size_t i)
{
	return i * 8 + 8 <= m->len ? mt_le64(m->p + i * 8) : 0xdeadull;
}

/* Words of the preamble: magic, provider info (+1 name word), section,
 * initialization (2). */
#define PREAMBLE 6

static void
preamble_values(void)
{
	struct mem m = { 0 };
	struct mt_fxt *w;

	CHECK(mt_fxt_new(&w, mem_sink, &m, NULL, "mt-fxt") == 0);
	CHECK(mt_fxt_free(w) == 0);
	CHECK_EQ_U64(m.len, PREAMBLE * 8);
	CHECK_EQ_U64(word(&m, 0), 0x0016547846040010ull);
	CHECK(memcmp(m.p, "\x10\x00\x04\x46\x78\x54\x16\x00", 8) == 0);
	/* provider info: size 2, metadata type 1, id 0, name length 6 */
	CHECK_EQ_U64(word(&m, 1), 0x0000000000010020ull | 6ull << 52);
	CHECK(memcmp(m.p + 16, "mt-fxt\0\0", 8) == 0);
	CHECK_EQ_U64(word(&m, 3), 0x0000000000020010ull);
	CHECK_EQ_U64(word(&m, 4), 0x0000000000000021ull);
	CHECK_EQ_U64(word(&m, 5), 1000000000ull);
	free(m.p);
}

static void
begin_end_values(void)
{
	struct mem m = { 0 };
	struct mt_fxt *w;
	uint32_t th, name;

	CHECK(mt_fxt_new(&w, mem_sink, &m, NULL, "") == 0);
	th = mt_fxt_thread(w, 1, 2);
	name = mt_fxt_cstr(w, "main");
	mt_fxt_begin(w, th, 0, name, 100, NULL, 0);
	mt_fxt_end(w, th, 0, name, 200, NULL, 0);
	CHECK(mt_fxt_free(w) == 0);
	/* preamble with an empty provider name has 5 words */
	/* thread record: slot 1 */
	CHECK_EQ_U64(word(&m, 5), 0x0000000000010033ull);
	CHECK_EQ_U64(word(&m, 6), 1);
	CHECK_EQ_U64(word(&m, 7), 2);
	/* string record: slot 1, "main" */
	CHECK_EQ_U64(word(&m, 8), 0x0000000400010022ull);
	CHECK(memcmp(m.p + 72, "main\0\0\0\0", 8) == 0);
	/* begin: thread 1, category 0, name 1 */
	CHECK_EQ_U64(word(&m, 10), 0x0001000001020024ull);
	CHECK_EQ_U64(word(&m, 11), 100);
	CHECK_EQ_U64(word(&m, 12), 0x0001000001030024ull);
	CHECK_EQ_U64(word(&m, 13), 200);
	CHECK_EQ_U64(m.len, 14 * 8);
	free(m.p);
}

static void
kobj_thread_has_process_koid(void)
{
	struct mem m = { 0 };
	struct mt_fxt *w;
	uint64_t h;

	CHECK(mt_fxt_new(&w, mem_sink, &m, NULL, "") == 0);
	mt_fxt_kobj(w, MT_FXT_KOBJ_THREAD, 7, 3, "t", 1, NULL, 0);
	CHECK(mt_fxt_free(w) == 0);
	/* string "process" at slot 1 first (2 words), then the kobj */
	CHECK_EQ_U64(word(&m, 5), 0x0000000700010022ull);
	h = word(&m, 7);
	CHECK_EQ_U64(h & 0xf, 7);		/* kernel object */
	CHECK_EQ_U64((h >> 4) & 0xfff, 5);	/* hdr koid name arg(2) */
	CHECK_EQ_U64((h >> 16) & 0xff, 2);	/* thread */
	CHECK_EQ_U64((h >> 24) & 0xffff, 0x8001);	/* inline, 1 byte */
	CHECK_EQ_U64((h >> 40) & 0xf, 1);	/* one arg */
	CHECK_EQ_U64(word(&m, 8), 7);
	CHECK_EQ_U64(word(&m, 10), 8 | 2 << 4 | 1 << 16);	/* koid arg */
	CHECK_EQ_U64(word(&m, 11), 3);
	free(m.p);
}

/* Count string records and check every event's name ref was defined. */
static void
string_slots_reused(void)
{
	struct mt_fxt_limits lim = { .max_strings = MT_FXT_MIN_STRINGS };
	struct mem m = { 0 };
	struct mt_fxt *w;
	uint32_t th, h[100];
	char name[16];
	char *slot[MT_FXT_MIN_STRINGS + 1] = { 0 };
	size_t off;
	int i, bad = 0, strings = 0, events = 0;

	CHECK(mt_fxt_new(&w, mem_sink, &m, &lim, "") == 0);
	th = mt_fxt_thread(w, 1, 2);
	for (i = 0; i < 100; i++) {
		int n = snprintf(name, sizeof(name), "f%d", i);

		h[i] = mt_fxt_str(w, name, (size_t)n);
	}
	for (i = 0; i < 300; i++)
		mt_fxt_begin(w, th, 0, h[(i * 7) % 100], (uint64_t)i, NULL, 0);
	CHECK(mt_fxt_free(w) == 0);
	for (off = 0; off + 8 <= m.len;) {
		uint64_t hd = mt_le64(m.p + off);
		unsigned type = hd & 0xf, size = (hd >> 4) & 0xfff;

		if (type == 2) {
			unsigned idx = (hd >> 16) & 0x7fff;
			unsigned len = (hd >> 32) & 0x7fff;

			CHECK(idx >= 1 && idx <= MT_FXT_MIN_STRINGS);
			free(slot[idx]);
			slot[idx] = strndup((char *)m.p + off + 8, len);
			strings++;
		} else if (type == 4) {
			unsigned nref = (hd >> 48) & 0xffff;
			uint64_t ts = mt_le64(m.p + off + 8);

			snprintf(name, sizeof(name), "f%d",
			    (int)((ts * 7) % 100));
			if (nref == 0 || nref > MT_FXT_MIN_STRINGS ||
			    slot[nref] == NULL || strcmp(slot[nref], name))
				bad++;
			events++;
		}
		CHECK(size > 0);
		off += size * 8;
	}
	CHECK_EQ_U64(events, 300);
	CHECK_EQ_U64(bad, 0);
	CHECK(strings > 100);	/* some were registered again */
	for (i = 0; i <= MT_FXT_MIN_STRINGS; i++)
		free(slot[i]);
	free(m.p);
}

static void
thread_slots_reused(void)
{
	struct mt_fxt_limits lim = { .max_threads = 3 };
	struct mem m = { 0 };
	struct mt_fxt *w;
	uint32_t th[10];
	uint64_t slotp[4] = { 0 };
	size_t off;
	int i, bad = 0, threads = 0;

	CHECK(mt_fxt_new(&w, mem_sink, &m, &lim, "") == 0);
	for (i = 0; i < 10; i++)
		th[i] = mt_fxt_thread(w, 1, 100 + (uint64_t)i);
	for (i = 0; i < 50; i++)
		mt_fxt_begin(w, th[(i * 3) % 10], 0, 0, (uint64_t)i, NULL, 0);
	CHECK(mt_fxt_free(w) == 0);
	for (off = 0; off + 8 <= m.len;) {
		uint64_t hd = mt_le64(m.p + off);
		unsigned type = hd & 0xf, size = (hd >> 4) & 0xfff;

		if (type == 3) {
			unsigned idx = (hd >> 16) & 0xff;

			CHECK(idx >= 1 && idx <= 3);
			slotp[idx & 3] = mt_le64(m.p + off + 16);
			threads++;
		} else if (type == 4) {
			unsigned tref = (hd >> 24) & 0xff;
			uint64_t ts = mt_le64(m.p + off + 8);

			if (tref == 0 || tref > 3 ||
			    slotp[tref] != 100 + (ts * 3) % 10)
				bad++;
		}
		off += size * 8;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK(threads > 10);
	free(m.p);
}

static void
long_string_truncated(void)
{
	struct mem m = { 0 };
	struct mt_fxt *w;
	char *big = malloc(40000);
	uint32_t h;

	memset(big, 'x', 40000);
	big[31999] = (char)0xc3;	/* a 2-byte character across the cut */
	big[32000] = (char)0xa9;
	CHECK(mt_fxt_new(&w, mem_sink, &m, NULL, "") == 0);
	h = mt_fxt_str(w, big, 40000);
	mt_fxt_begin(w, mt_fxt_thread(w, 1, 1), 0, h, 0, NULL, 0);
	mt_fxt_kobj(w, MT_FXT_KOBJ_PROCESS, 1, 0, big, 40000, NULL, 0);
	CHECK(mt_fxt_free(w) == 0);
	/* string record after preamble (5) and thread record (3) */
	CHECK_EQ_U64((word(&m, 8) >> 32) & 0x7fff, 31999);
	CHECK_EQ_U64((word(&m, 8) >> 4) & 0xfff, 1 + (31999 + 7) / 8);
	free(big);
	free(m.p);
}

static void
sink_error_is_sticky(void)
{
	struct mem m = { .fail = -MT_E_IO };
	struct mt_fxt *w;

	CHECK(mt_fxt_new(&w, mem_sink, &m, NULL, "") == 0);
	mt_fxt_begin(w, mt_fxt_thread(w, 1, 1), 0, 0, 0, NULL, 0);
	CHECK(mt_fxt_flush(w) == -MT_E_IO);
	CHECK(mt_fxt_free(w) == -MT_E_IO);
}

static void
bad_koid_and_limits_rejected(void)
{
	struct mem m = { 0 };
	struct mt_fxt_limits lim = { .max_strings = 5 };
	struct mt_fxt *w;

	CHECK(mt_fxt_new(&w, mem_sink, &m, &lim, "") == -MT_E_INVAL);
	CHECK(mt_fxt_new(&w, mem_sink, &m, NULL, "") == 0);
	CHECK(mt_fxt_thread(w, 1ull << 32, 1) == 0);
	CHECK(mt_fxt_error(w) == -MT_E_INVAL);
	mt_fxt_free(w);
	free(m.p);
}

int
main(void)
{
	TEST(preamble_values);
	TEST(begin_end_values);
	TEST(kobj_thread_has_process_koid);
	TEST(string_slots_reused);
	TEST(thread_slots_reused);
	TEST(long_string_truncated);
	TEST(sink_error_is_sticky);
	TEST(bad_koid_and_limits_rejected);
	return tap_done();
}
