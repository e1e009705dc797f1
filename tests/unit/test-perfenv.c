/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-capture/perfenv.c: sysfs CPU lists, the online CPUs
 * of a fake tree, and the messages for perf errors naming what to change
 * (the stage decides: EPERM at open is paranoid, at mmap locked memory).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "err.h"
#include "../../mt-capture/perfenv.h"

static void
cpu_lists(void)
{
	int c[16];

	CHECK(mt_perfenv_parse_cpus("0-3,5,8-9\n", c, 16) == 7);
	CHECK(c[0] == 0 && c[3] == 3 && c[4] == 5 && c[5] == 8 && c[6] == 9);
	CHECK(mt_perfenv_parse_cpus("7", c, 16) == 1 && c[0] == 7);
	/* more CPUs than room: the count, the first ones stored */
	CHECK(mt_perfenv_parse_cpus("0-63", c, 16) == 64 && c[15] == 15);
	CHECK(mt_perfenv_parse_cpus("3-1", c, 16) == -1);
	CHECK(mt_perfenv_parse_cpus("0-x", c, 16) == -1);
	CHECK(mt_perfenv_parse_cpus("0;1", c, 16) == -1);
}

static void
online_cpus_of_a_fake_tree(void)
{
	int c[64];

	/* tests/data/sysfs/offline: 0-1,4-5 online of 8 */
	CHECK(mt_perfenv_online_cpus("tests/data/sysfs/offline", c, 64) == 4);
	CHECK(c[0] == 0 && c[1] == 1 && c[2] == 4 && c[3] == 5);
	CHECK(mt_perfenv_online_cpus("tests/data/sysfs/offline", c, 0) == 4);
}

static void
hints_name_the_knob(void)
{
	char msg[1024];

	mt_perfenv_hint(EACCES, MT_PERFENV_OPEN, "the intel_pt event", 0, msg,
	    sizeof(msg));
	CHECK(strstr(msg, "cannot open the intel_pt event") != NULL);
	CHECK(strstr(msg, "kernel.perf_event_paranoid <= 2 (it is ") != NULL);
	CHECK(strstr(msg, "CAP_PERFMON (kernel 5.8+)") != NULL);
	mt_perfenv_hint(EPERM, MT_PERFENV_OPEN, "the intel_pt event", 1, msg,
	    sizeof(msg));
	CHECK(strstr(msg, "kernel.perf_event_paranoid <= 1") != NULL);
	/* EPERM at mmap is locked memory, not paranoid */
	mt_perfenv_hint(EPERM, MT_PERFENV_MAP_AUX, "the AUX ring", 0, msg,
	    sizeof(msg));
	CHECK(strstr(msg, "cannot map the AUX ring") != NULL);
	CHECK(strstr(msg, "perf_event_mlock_kb") != NULL);
	CHECK(strstr(msg, "ulimit -l") != NULL);
	CHECK(strstr(msg, "CAP_IPC_LOCK") != NULL);
	CHECK(strstr(msg, "paranoid") == NULL);
	mt_perfenv_hint(ENOMEM, MT_PERFENV_MAP_AUX, "the AUX ring", 0, msg,
	    sizeof(msg));
	CHECK(strstr(msg, "use a smaller --snapshot-size") != NULL);
	mt_perfenv_hint(EBUSY, MT_PERFENV_OPEN, "the intel_pt event", 0, msg,
	    sizeof(msg));
	CHECK(strstr(msg, "another user of Intel PT holds it") != NULL);
	mt_perfenv_hint(EMFILE, MT_PERFENV_OPEN, "the intel_pt event", 0, msg,
	    sizeof(msg));
	CHECK(strstr(msg, "ulimit -n") != NULL);
}

static struct mt_perf_plan
plan_of(size_t pt_bufs)
{
	struct mt_perf_plan p = {
		.page = 4096, .sb_rings = 2, .sb_pages = 32, .pt_bufs = pt_bufs,
		.pt_pages = 2, .aux_bytes = 4u << 20,
	};
	return p;
}

static void
budget_arithmetic(void)
{
	/* 516 KiB x 2 CPUs = 258 pages, + ulimit -l 64 KiB = 16 pages */
	struct mt_perfenv e = { .paranoid = 2, .mlock_kb = 516,
	    .memlock = 64u << 10, .ncpus = 2 };
	struct mt_perf_plan p = plan_of(1);
	char msg[1024];

	/* shrunk: sideband 32 -> 8 pages, PT data 2 -> 1, AUX 4 MiB ->
	 * 512 KiB: 2 x (8 + 1) + (1 + 1 + 128) = 148 <= 274 (1 MiB would
	 * need 276) */
	CHECK(mt_perfenv_plan(&e, &p, msg, sizeof(msg)) == 0);
	CHECK_EQ_U64(p.allow, 274);
	CHECK_EQ_U64(p.sb_pages, 8);
	CHECK_EQ_U64(p.pt_pages, 1);
	CHECK_EQ_U64(p.aux_bytes, 512u << 10);
	CHECK_EQ_U64(p.need, 148);
	CHECK(p.shrunk);
	CHECK(strstr(msg, "shrank the rings to fit 1096 KiB") != NULL);
	/* a uprobe trigger ring per CPU costs 2 pages each */
	p = plan_of(1);
	p.trig_rings = 2;
	CHECK(mt_perfenv_plan(&e, &p, msg, sizeof(msg)) == 0);
	CHECK_EQ_U64(p.need, 152);
	/* fits as asked: nothing changes, nothing said */
	e.memlock = 8u << 20;
	p = plan_of(1);
	CHECK(mt_perfenv_plan(&e, &p, msg, sizeof(msg)) == 0);
	CHECK(!p.shrunk && msg[0] == '\0');
	CHECK_EQ_U64(p.need, 2 * 33 + 3 + 1024);
	CHECK_EQ_U64(p.aux_bytes, 4u << 20);
	/* CAP_IPC_LOCK (or paranoid -1): no limit */
	e.memlock = 0;
	e.cap_ipc_lock = 1;
	p = plan_of(40);
	CHECK(mt_perfenv_plan(&e, &p, msg, sizeof(msg)) == 0);
	CHECK(p.allow == UINT64_MAX && !p.shrunk);
	e.cap_ipc_lock = 0;
	e.paranoid = -1;
	CHECK(mt_perfenv_plan(&e, &p, msg, sizeof(msg)) == 0);
	/* too many buffers even at the minimums: refused, with numbers */
	e.paranoid = 2;
	p = plan_of(20);
	CHECK(mt_perfenv_plan(&e, &p, msg, sizeof(msg)) == -MT_E_LIMIT);
	CHECK(strstr(msg, "need 1512 KiB") != NULL);
	CHECK(strstr(msg, "may lock 1032 KiB") != NULL);
	CHECK(strstr(msg, "ulimit -l") != NULL);
	CHECK(strstr(msg, "CAP_IPC_LOCK") != NULL);
}

int
main(void)
{
	TEST(cpu_lists);
	TEST(online_cpus_of_a_fake_tree);
	TEST(hints_name_the_knob);
	TEST(budget_arithmetic);
	return tap_done();
}
