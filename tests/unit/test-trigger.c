/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-capture/trigger.c's ring parser on synthetic perf
 * rings: samples (IP|TID|TIME) of target processes become hits, others
 * are dropped, a record wrapping the ring's end is read whole, and the
 * tail never passes a sample there was no room for; the event id of
 * 40-byte samples (PERF_SAMPLE_ID) is read, and one hit counted by two
 * events of a thread is kept once.  And the lines of tracefs
 * uprobe_events, as the kernel prints them (probes_seq_show in
 * kernel/trace/trace_uprobe.c: "%c:%s/%s %s:0x%0*lx", then "(0x%lx)"
 * with a reference counter, then the arguments), give each probe's
 * name, file and offset.
 */
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include "tap.h"
#include "../../mt-capture/trigev.h"
#include "../../mt-capture/tracefs.h"
#include "err.h"

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

/* A 40-byte sample: IP|TID|TIME|ID. */
static void
put_sample_id(uint64_t at, uint64_t ip, uint32_t pid, uint32_t tid,
    uint64_t time, uint64_t id)
{
	uint16_t size = 40;
	size_t i;

	put_sample(at, ip, pid, tid, time);
	for (i = 0; i < 2; i++)
		ring[(at + 6 + i) % RING] = ((uint8_t *)&size)[i];
	for (i = 0; i < 8; i++)
		ring[(at + 32 + i) % RING] = ((uint8_t *)&id)[i];
}

static void
one_hit_of_two_events_is_kept_once(void)
{
	struct mt_trig_hit h[8], last;
	pid_t pids[1] = { 100 };
	uint64_t tail = 0;
	int kept = 0;
	size_t n;

	memset(&last, 0, sizeof(last));
	/* thread 101 has an inherited event (id 5) and its own (id 9):
	 * each hit twice, at nearly the same time */
	put_sample_id(0, 0x4000, 100, 101, 10, 5);
	put_sample_id(40, 0x4000, 100, 101, 11, 9);
	/* hit again, the own event first this time */
	put_sample_id(80, 0x4000, 100, 101, 20, 9);
	put_sample_id(120, 0x4000, 100, 101, 21, 5);
	/* a kernel sharing one sample's data between the events: the same
	 * time and id */
	put_sample_id(160, 0x4000, 100, 101, 30, 5);
	put_sample_id(200, 0x4000, 100, 101, 30, 5);
	n = mt_trig_parse(ring, RING, 240, &tail, 0, pids, 1, NULL, NULL, h,
	    8);
	CHECK(n == 6);
	CHECK(h[0].id == 5 && h[1].id == 9);
	n = mt_trig_drop_doubles(&last, &kept, h, n);
	CHECK(n == 3);
	CHECK(h[0].time == 10 && h[1].time == 20 && h[2].time == 30);
	/* a thread with one event hitting in a tight loop: every hit */
	memset(&last, 0, sizeof(last));
	kept = 0;
	tail = 0;
	put_sample_id(0, 0x4000, 100, 102, 40, 5);
	put_sample_id(40, 0x4000, 100, 102, 41, 5);
	put_sample_id(80, 0x4000, 100, 102, 42, 5);
	n = mt_trig_parse(ring, RING, 120, &tail, 0, pids, 1, NULL, NULL, h,
	    8);
	CHECK(mt_trig_drop_doubles(&last, &kept, h, n) == 3);
	/* the pair split across two reads */
	memset(&last, 0, sizeof(last));
	kept = 0;
	tail = 0;
	put_sample_id(0, 0x4000, 100, 101, 50, 5);
	put_sample_id(40, 0x4000, 100, 101, 51, 9);
	CHECK(mt_trig_parse(ring, RING, 80, &tail, 0, pids, 1, NULL, NULL, h,
	    1) == 1);
	CHECK(mt_trig_drop_doubles(&last, &kept, h, 1) == 1);
	CHECK(mt_trig_parse(ring, RING, 80, &tail, 0, pids, 1, NULL, NULL, h,
	    1) == 1);
	CHECK(mt_trig_drop_doubles(&last, &kept, h, 1) == 0);
}

static void
uprobe_events_lines(void)
{
	char name[128], path[256];
	uint64_t off = 0;

	CHECK(mt_tracefs_uprobe_parse("p:uprobes/p_bash_0x4245c0 "
	    "/bin/bash:0x00000000004245c0\n", name, sizeof(name), path,
	    sizeof(path), &off) == 0);
	CHECK_STR(name, "uprobes/p_bash_0x4245c0");
	CHECK_STR(path, "/bin/bash");
	CHECK_EQ_U64(off, 0x4245c0);
	CHECK(mt_tracefs_uprobe_parse("r:probe_libc/malloc "
	    "/usr/lib/x86_64-linux-gnu/libc.so.6:0x00000000000a0e90(0x1f0) "
	    "arg1=%ax:u64\n", name, sizeof(name), path, sizeof(path),
	    &off) == 0);
	CHECK_STR(name, "probe_libc/malloc");
	CHECK_STR(path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	CHECK_EQ_U64(off, 0xa0e90);
	/* a colon in the path: the offset follows the last one */
	CHECK(mt_tracefs_uprobe_parse("p:g/e /opt/a:b/x:0x10", name,
	    sizeof(name), path, sizeof(path), &off) == 0);
	CHECK_STR(path, "/opt/a:b/x");
	CHECK_EQ_U64(off, 0x10);
	CHECK(mt_tracefs_uprobe_parse("", name, sizeof(name), path,
	    sizeof(path), &off) == -MT_E_SYNTAX);
	CHECK(mt_tracefs_uprobe_parse("p:noslash /bin/x:0x10", name,
	    sizeof(name), path, sizeof(path), &off) == -MT_E_SYNTAX);
	CHECK(mt_tracefs_uprobe_parse("p:g/e /bin/x", name, sizeof(name),
	    path, sizeof(path), &off) == -MT_E_SYNTAX);
	CHECK(mt_tracefs_uprobe_parse("p:g/e /bin/x:0xzz", name,
	    sizeof(name), path, sizeof(path), &off) == -MT_E_SYNTAX);
	CHECK(mt_tracefs_uprobe_parse("p:g/e :0x10", name, sizeof(name),
	    path, sizeof(path), &off) == -MT_E_SYNTAX);
	CHECK(mt_tracefs_uprobe_parse("p:g/e /bin/x:0x10", name, 3, path,
	    sizeof(path), &off) == -MT_E_SYNTAX);
}

int
main(void)
{
	TEST(tail_stops_at_the_first_hit_not_kept);
	TEST(partial_record_waits);
	TEST(other_processes_asked);
	TEST(one_hit_of_two_events_is_kept_once);
	TEST(uprobe_events_lines);
	return tap_done();
}
