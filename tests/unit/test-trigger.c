/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-capture/trigger.c's ring parser on synthetic perf
 * rings: samples (IP|TID|TIME) of target processes become hits, others
 * are dropped, a record wrapping the ring's end is read whole, and the
 * tail never passes a sample there was no room for.
 */
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include "tap.h"
#include "../../mt-capture/trigger.h"

#define RING 256

static uint8_t ring[RING];

/* Write a 32-byte PERF_RECORD_SAMPLE at ring offset @at (wrapping). */
static void
put_sample(uint64_t at, uint64_t ip, uint32_t pid, uint32_t tid,
    uint64_t time)
{
	uint8_t r[32];
	uint32_t type = PERF_RECORD_SAMPLE;
	uint16_t misc = 0, size = 32;
	size_t i;

	memcpy(r, &type, 4);
	memcpy(r + 4, &misc, 2);
	memcpy(r + 6, &size, 2);
	memcpy(r + 8, &ip, 8);
	memcpy(r + 16, &pid, 4);
	memcpy(r + 20, &tid, 4);
	memcpy(r + 24, &time, 8);
	for (i = 0; i < 32; i++)
		ring[(at + i) % RING] = r[i];
}

static void
tail_stops_at_the_first_hit_not_kept(void)
{
	struct mt_trig_hit h[8];
	pid_t pids[1] = { 100 };
	uint64_t tail = 192, head, i;
	size_t n;

	/* 6 samples from offset 192: the third wraps around the end;
	 * the fourth is of another process */
	for (i = 0; i < 6; i++)
		put_sample(192 + 32 * i, 0x1000 + i, i == 3 ? 200 : 100,
		    101, 50 + i);
	head = 192 + 6 * 32;
	n = mt_trig_parse(ring, RING, head, &tail, 7, pids, 1, NULL, NULL, h,
	    2);
	CHECK(n == 2);
	CHECK(tail == 192 + 2 * 32);
	CHECK(h[0].ip == 0x1000 && h[1].ip == 0x1001);
	CHECK(h[0].pid == 100 && h[0].tid == 101 && h[0].time == 50);
	CHECK(h[0].trigger == 7);
	/* the rest on the next call, the other process's hit dropped */
	n = mt_trig_parse(ring, RING, head, &tail, 7, pids, 1, NULL, NULL, h,
	    8);
	CHECK(n == 3);
	CHECK(tail == head);
	CHECK(h[0].ip == 0x1002 && h[0].time == 52);	/* wrapped record */
	CHECK(h[1].ip == 0x1004 && h[2].ip == 0x1005);
	/* nothing left */
	CHECK(mt_trig_parse(ring, RING, head, &tail, 7, pids, 1, NULL, NULL, h,
	    8) == 0);
}

static void
partial_record_waits(void)
{
	struct mt_trig_hit h[4];
	pid_t pids[1] = { 100 };
	uint64_t tail = 0;

	put_sample(0, 0x2000, 100, 100, 1);
	/* the kernel has published only 16 of its 32 bytes */
	CHECK(mt_trig_parse(ring, RING, 16, &tail, 0, pids, 1, NULL, NULL, h,
	    4) == 0);
	CHECK(tail == 0);
	CHECK(mt_trig_parse(ring, RING, 32, &tail, 0, pids, 1, NULL, NULL, h,
	    4) == 1);
	CHECK(tail == 32);
}

static int
child_200(void *arg, pid_t pid)
{
	(*(int *)arg)++;
	return pid == 200;
}

static void
other_processes_asked(void)
{
	struct mt_trig_hit h[4];
	pid_t pids[1] = { 100 };
	uint64_t tail = 0;
	int asked = 0;

	put_sample(0, 0x3000, 200, 201, 1);
	put_sample(32, 0x3001, 300, 301, 2);
	put_sample(64, 0x3002, 100, 100, 3);
	CHECK(mt_trig_parse(ring, RING, 96, &tail, 0, pids, 1, child_200,
	    &asked, h, 4) == 2);
	CHECK(asked == 2);	/* 200 and 300, not the target 100 */
	CHECK(h[0].pid == 200 && h[1].pid == 100);
}

int
main(void)
{
	TEST(tail_stops_at_the_first_hit_not_kept);
	TEST(partial_record_waits);
	TEST(other_processes_asked);
	return tap_done();
}
