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
#include "../../mt-capture/proc.h"
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

/* A KSYMBOL record at perf time @t into @w (TID|TIME sample_id). */
static void
ksym(struct mt_wbuf *w, uint64_t t, uint64_t addr, uint32_t len,
    int unreg, const char *name)
{
	uint8_t body[16 + 32];
	struct mt_sb_rec r;

	memset(body, 0, sizeof(body));
	mt_put_le64(body, addr);
	mt_put_le32(body + 8, len);
	mt_put_le16(body + 12, 1);		/* PERF_RECORD_KSYMBOL_TYPE_BPF */
	mt_put_le16(body + 14, unreg ? 1 : 0);	/* _FLAGS_UNREGISTER */
	strncpy((char *)body + 16, name, 31);
	memset(&r, 0, sizeof(r));
	r.type = 17;				/* PERF_RECORD_KSYMBOL */
	r.id.pid = r.id.tid = 0;
	r.id.time = t;
	r.body = body;
	r.body_len = sizeof(body);
	mt_sb_write(w, &r, MT_SB_ST_TID | MT_SB_ST_TIME);
}

/*
 * Two CPUs' records, applied in time order across them: X registered
 * (CPU 1, t 10), Y (CPU 0, t 20) and Z (CPU 0, t 25); Y unregistered
 * (CPU 1, t 30) and X (CPU 0, t 40); X registered again (CPU 1, t 50)
 * with another length.  Left: Z, then X as it is now.
 */
static void
ksyms_registered_in_time_order(void)
{
	struct mt_wbuf w[2];
	struct mt_proc_krange k[8];
	size_t n;

	mt_wbuf_init(&w[0]);
	mt_wbuf_init(&w[1]);
	ksym(&w[0], 20, 0xffffffffc0002000ull, 0x80, 0, "bpf_prog_y");
	ksym(&w[0], 25, 0xffffffffc0003000ull, 0x10, 0, "bpf_prog_z");
	ksym(&w[0], 40, 0xffffffffc0001000ull, 0x40, 1, "bpf_prog_x");
	ksym(&w[1], 10, 0xffffffffc0001000ull, 0x40, 0, "bpf_prog_x");
	ksym(&w[1], 30, 0xffffffffc0002000ull, 0x80, 1, "bpf_prog_y");
	ksym(&w[1], 50, 0xffffffffc0001000ull, 0x48, 0, "bpf_prog_x2");
	n = mt_sbev_ksyms_of(w, 2, MT_SB_ST_TID | MT_SB_ST_TIME, k, 8);
	CHECK_EQ_U64(n, 2);
	if (n == 2) {
		CHECK_EQ_U64(k[0].addr, 0xffffffffc0003000ull);
		CHECK_EQ_U64(k[0].len, 0x10);
		CHECK_STR(k[0].name, "bpf_prog_z");
		CHECK_EQ_U64(k[1].addr, 0xffffffffc0001000ull);
		CHECK_EQ_U64(k[1].len, 0x48);
		CHECK_STR(k[1].name, "bpf_prog_x2");
		CHECK_EQ_U64(k[1].type, 1);
	}
	/* at most @max */
	CHECK_EQ_U64(mt_sbev_ksyms_of(w, 2, MT_SB_ST_TID | MT_SB_ST_TIME, k,
	    1), 1);
	mt_wbuf_release(&w[0]);
	mt_wbuf_release(&w[1]);
}

int
main(void)
{
	TEST(records_of_a_real_exec);
	TEST(gone_thread_is_an_error);
	TEST(trim_keeps_state_and_recent_switches);
	TEST(ksyms_registered_in_time_order);
	return tap_done();
}
