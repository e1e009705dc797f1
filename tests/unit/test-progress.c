/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for common/progress.c: the line's exact text with and
 * without a known total, clamping, truncation to the buffer, throttling
 * (never due before the interval, due after it) and the erase sequence
 * only after a line was shown.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "progress.h"

static void
line_with_total(void)
{
	struct mt_progress p;
	char buf[128];
	size_t n;

	mt_progress_init(&p, "mt-decode", 64u << 20, 250);
	n = mt_progress_format(&p, buf, sizeof(buf), 27u << 20, 1234567,
			       "events");
	CHECK_STR(buf, "\rmt-decode: 42% of 64.0 MiB, 1234567 events\033[K");
	CHECK_EQ_U64(n, strlen(buf));
	mt_progress_format(&p, buf, sizeof(buf), 65u << 20, 1, "events");
	CHECK_STR(buf, "\rmt-decode: 100% of 64.0 MiB, 1 events\033[K");
}

static void
line_without_total(void)
{
	struct mt_progress p;
	char buf[128];

	mt_progress_init(&p, "mt-fxt", 0, 250);
	mt_progress_format(&p, buf, sizeof(buf), 99, 42, "events");
	CHECK_STR(buf, "\rmt-fxt: 42 events\033[K");
}

static void
truncated_to_buffer(void)
{
	struct mt_progress p;
	char buf[8];
	size_t n;

	mt_progress_init(&p, "mt-decode", 0, 250);
	n = mt_progress_format(&p, buf, sizeof(buf), 0, 123456789, "events");
	CHECK_EQ_U64(n, 7);
	CHECK_EQ_U64(strlen(buf), 7);
}

static void
throttled(void)
{
	struct mt_progress p;
	struct timespec ts = { 0, 30 * 1000000 };
	int due = 0;
	int i;

	mt_progress_init(&p, "x", 0, 20);
	for (i = 0; i < 4095; i++)
		due |= mt_progress_due(&p);
	CHECK(!due);
	nanosleep(&ts, NULL);
	CHECK(mt_progress_due(&p));
	for (i = 0; i < 4096; i++)
		due |= mt_progress_due(&p);
	CHECK(!due);
}

static void
clear_only_when_shown(void)
{
	struct mt_progress p;
	char buf[16];

	mt_progress_init(&p, "x", 0, 250);
	CHECK_EQ_U64(mt_progress_clear(&p, buf, sizeof(buf)), 0);
	mt_progress_format(&p, buf, sizeof(buf), 0, 0, "events");
	CHECK_EQ_U64(mt_progress_clear(&p, buf, sizeof(buf)), 4);
	CHECK_STR(buf, "\r\033[K");
	CHECK_EQ_U64(mt_progress_clear(&p, buf, sizeof(buf)), 0);
}

static void
interval_from_environment(void)
{
	static const struct {
		const char *v;		/* MT_PROGRESS_INTERVAL_MS, or NULL */
		unsigned int ms;	/* the interval it gives */
	} c[] = {
		{ NULL, 250 }, { "", 250 }, { "0", 0 }, { "40", 40 },
		{ "60000", 60000 }, { "60001", 250 }, { "abc", 250 },
		{ "12x", 250 }, { "-1", 250 }, { " 5", 250 }, { "+5", 250 },
		{ "99999999999999999999999", 250 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		if (c[i].v == NULL)
			unsetenv("MT_PROGRESS_INTERVAL_MS");
		else
			setenv("MT_PROGRESS_INTERVAL_MS", c[i].v, 1);
		CHECK(mt_progress_interval_ms() == c[i].ms);
	}
	unsetenv("MT_PROGRESS_INTERVAL_MS");
}

int
main(void)
{
	TEST(line_with_total);
	TEST(line_without_total);
	TEST(truncated_to_buffer);
	TEST(throttled);
	TEST(clear_only_when_shown);
	TEST(interval_from_environment);
	return tap_done();
}
