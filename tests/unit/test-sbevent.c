/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-capture/sbevent.c against the real kernel: the dummy
 * sideband event opened on a child before it execs records the exec's
 * COMM and the MMAP2 of the program with its build-id, and gives a time
 * conversion.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "buf.h"
#include "err.h"
#include "sideband.h"
#include "snap.h"
#include "../../mt-capture/sbevent.h"

static void
records_of_a_real_exec(void)
{
	struct mt_sbev *sb = NULL;
	struct mt_snap_timeconv tc;
	char msg[512];
	int gate[2], st, comm = 0, mmap2 = 0;
	size_t r;
	pid_t pid;

	if (pipe(gate) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		char b;

		close(gate[1]);
		if (read(gate[0], &b, 1) != 1)
			_exit(127);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	close(gate[0]);
	CHECK(mt_sbev_open(&sb, &pid, 1, 16, 0, 1, 0, msg, sizeof(msg)) == 0);
	(void)!write(gate[1], "g", 1);
	close(gate[1]);
	waitpid(pid, &st, 0);
	if (sb == NULL)
		return;
	CHECK(mt_sbev_drain(sb) == 0);
	CHECK(mt_sbev_nrings(sb) >= 1);
	for (r = 0; r < mt_sbev_nrings(sb); r++) {
		const struct mt_wbuf *w = mt_sbev_data(sb, r, NULL);
		struct mt_sb_reader rd;
		struct mt_sb_rec rec;

		mt_sb_reader_init(&rd, w->p, w->len, mt_sbev_sample_type(sb),
		    1, 0);
		while (mt_sb_next(&rd, &rec) == 0) {
			if (rec.type == MT_SB_COMM &&
			    (rec.misc & MT_SB_MISC_COMM_EXEC) &&
			    rec.u.comm.pid == (uint32_t)pid &&
			    strcmp(rec.u.comm.comm, "true") == 0)
				comm = 1;
			if (rec.type == MT_SB_MMAP2 &&
			    rec.u.mmap.pid == (uint32_t)pid &&
			    strstr(rec.u.mmap.filename, "true") != NULL &&
			    (rec.misc & MT_SB_MISC_MMAP_BUILD_ID) &&
			    rec.u.mmap.build_id_len == 20 &&
			    rec.has_id && rec.id.time != 0)
				mmap2 = 1;
		}
	}
	CHECK(comm);
	CHECK(mmap2);
	CHECK(mt_sbev_timeconv(sb, &tc) == 0);
	/* x86 with a stable TSC: the conversion is there. */
	CHECK(!tc.cap_user_time_zero || tc.time_mult != 0);
	mt_sbev_free(sb);
}

static void
gone_thread_is_an_error(void)
{
	struct mt_sbev *sb = NULL;
	pid_t nobody = 1073741822;
	char msg[512];

	CHECK(mt_sbev_open(&sb, &nobody, 1, 16, 0, 1, 0, msg, sizeof(msg)) < 0);
	CHECK(sb == NULL);
	CHECK(strstr(msg, "the target is gone") != NULL);
}

#define ST (MT_SB_ST_TID | MT_SB_ST_TIME | MT_SB_ST_CPU | \
	MT_SB_ST_IDENTIFIER)

static void
put(struct mt_wbuf *w, uint32_t type, uint32_t tid, uint64_t time)
{
	struct mt_sb_rec r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.id.pid = 7;
	r.id.tid = tid;
	r.id.time = time;
	if (type == MT_SB_COMM) {
		r.u.comm.pid = 7;
		r.u.comm.tid = tid;
		r.u.comm.comm = "x";
	}
	CHECK(mt_sb_write(w, &r, ST) > 0);
}

static void
trim_keeps_state_and_recent_switches(void)
{
	struct mt_wbuf w;
	struct mt_sb_reader rd;
	struct mt_sb_rec rec;
	char got[256] = "";
	size_t n;

	mt_wbuf_init(&w);
	put(&w, MT_SB_COMM, 10, 1);
	put(&w, MT_SB_SWITCH, 10, 2);
	put(&w, MT_SB_SWITCH, 11, 3);
	put(&w, MT_SB_SWITCH, 10, 4);
	put(&w, MT_SB_COMM, 11, 5);
	put(&w, MT_SB_SWITCH, 11, 6);
	put(&w, MT_SB_AUX, 10, 7);
	put(&w, MT_SB_AUX, 10, 8);
	put(&w, MT_SB_SWITCH, 10, 20);
	put(&w, MT_SB_SWITCH, 11, 30);
	n = mt_sbev_trim_buf(w.p, w.len, ST, 10);
	CHECK(n < w.len);
	mt_sb_reader_init(&rd, w.p, n, ST, 1, 0);
	while (mt_sb_next(&rd, &rec) == 0) {
		char one[32];

		snprintf(one, sizeof(one), "%s%s/%u@%llu", got[0] ? " " : "",
		    rec.type == MT_SB_COMM ? "comm" : rec.type == MT_SB_AUX ?
		    "aux" : "sw", rec.id.tid, (unsigned long long)rec.id.time);
		strcat(got, one);
	}
	/* every COMM; per thread the last switch or AUX before 10, then
	 * all */
	CHECK_STR(got, "comm/10@1 comm/11@5 sw/11@6 aux/10@8 sw/10@20 "
	    "sw/11@30");
	/* again: nothing more to drop */
	CHECK(mt_sbev_trim_buf(w.p, n, ST, 10) == n);
	mt_wbuf_release(&w);
}

int
main(void)
{
	TEST(records_of_a_real_exec);
	TEST(gone_thread_is_an_error);
	TEST(trim_keeps_state_and_recent_switches);
	return tap_done();
}
