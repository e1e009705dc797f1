/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-decode/decode.c on snapshots built in memory: perf
 * clock times from TSC packets and the time conversion, CYC estimates
 * between them, trigger records, process and thread definitions, and
 * per-CPU buffers split into threads with SWITCH sideband.  The code is
 * tests/helpers/ptgen.c's program (main, f, g at 0x400000, as a BLOB).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <intel-pt.h>

#include "tap.h"
#include "buf.h"
#include "err.h"
#include "events.h"
#include "sideband.h"
#include "snap.h"
#include "../../mt-decode/decode.h"

#define CODE 0x400000ull

static const uint8_t code[0x40] = {
	[0x00] = 0xe8, 0x1b, 0x00, 0x00, 0x00, 0xff, 0xd3, 0xeb, 0xf7,
	[0x20] = 0x85, 0xc0, 0x74, 0x01, 0x90, 0xc3,
	[0x30] = 0xeb, 0x02, 0x90, 0x90, 0xc3,
};

static uint8_t pt[4096];
static struct pt_encoder *enc;

static void
put(enum pt_packet_type t, uint64_t a, uint64_t b)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = t;
	switch (t) {
	case ppt_fup: case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd:
		p.payload.ip.ipc = pt_ipc_sext_48;
		p.payload.ip.ip = a;
		break;
	case ppt_tnt_8:
		p.payload.tnt.bit_size = (uint8_t)a;
		p.payload.tnt.payload = b;
		break;
	case ppt_mode:
		p.payload.mode.leaf = pt_mol_exec;
		p.payload.mode.bits.exec.csl = 1;
		break;
	case ppt_tsc:
		p.payload.tsc.tsc = a;
		break;
	case ppt_cbr:
		p.payload.cbr.ratio = (uint8_t)a;
		break;
	case ppt_cyc:
		p.payload.cyc.value = a;
		break;
	default:
		break;
	}
	if (pt_enc_next(enc, &p) < 0)
		abort();
}

/* PSB+ with TSC @tsc (and CBR @cbr if not 0) at @ip. */
static void
psb(uint64_t tsc, unsigned cbr, uint64_t ip)
{
	put(ppt_psb, 0, 0);
	put(ppt_tsc, tsc, 0);
	if (cbr)
		put(ppt_cbr, cbr, 0);
	put(ppt_mode, 0, 0);
	put(ppt_fup, ip, 0);
	put(ppt_psbend, 0, 0);
}

/* One round of main: f's je taken and compressed ret, call *%rbx to g,
 * g returns to 0x400007; @cyc CYC packets before each TIP if not 0. */
static void
round_(unsigned cyc)
{
	put(ppt_tnt_8, 2, 3);
	if (cyc)
		put(ppt_cyc, cyc, 0);
	put(ppt_tip, CODE + 0x30, 0);
	if (cyc)
		put(ppt_cyc, cyc, 0);
	put(ppt_tip, CODE + 0x07, 0);
}

static size_t
pt_begin(void)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = pt;
	cfg.end = pt + sizeof(pt);
	enc = pt_alloc_encoder(&cfg);
	return 0;
}

static size_t
pt_end(void)
{
	uint64_t off;

	pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	return (size_t)off;
}

/* A snapshot with the code, a process 40 with threads 42 and 43, perf
 * time = 1000 + TSC, and PT config @config. */
static void
snap_base(struct mt_snap *s, uint64_t config)
{
	struct mt_snap_blob b = { .pid = 0, .kind = MT_SNAP_BLOB_MEMORY,
	    .addr = CODE, .name = (char *)(uintptr_t)"code", .len = sizeof(code),
	    .data = (uint8_t *)(uintptr_t)code };
	struct mt_snap_process p = { .pid = 40, .ppid = 1,
	    .comm = (char *)(uintptr_t)"demo", .exe = (char *)(uintptr_t)"/bin/demo",
	    .cmdline = (char *)(uintptr_t)"demo\0--fast", .cmdline_len = 12 };
	struct mt_snap_thread t1 = { .pid = 40, .tid = 42,
	    .comm = (char *)(uintptr_t)"demo" };
	struct mt_snap_thread t2 = { .pid = 40, .tid = 43,
	    .comm = (char *)(uintptr_t)"worker" };
	struct mt_snap_host h;

	mt_snap_init(s);
	mt_snap_add_blob(s, &b);
	mt_snap_add_process(s, &p);
	mt_snap_add_thread(s, &t1);
	mt_snap_add_thread(s, &t2);
	memset(&h, 0, sizeof(h));
	strcpy(h.vendor, "GenuineIntel");
	h.family = 6;
	h.model = 85;
	h.stepping = 4;
	h.max_nonturbo_ratio = 20;
	h.cpuid_15[0] = 2;
	h.cpuid_15[1] = 100;
	mt_snap_set_host(s, &h);
	s->has_host = 1;
	s->has_ptcfg = 1;
	s->ptcfg.backend = MT_SNAP_BK_INTEL_PT;
	s->ptcfg.config = config;
	s->ptcfg.user = 1;
	s->has_timeconv = 1;
	s->timeconv.time_zero = 1000;
	s->timeconv.time_mult = 1;
	s->timeconv.time_shift = 0;
	s->timeconv.cap_user_time_zero = 1;
}

static void
add_aux(struct mt_snap *s, uint32_t tid, uint32_t cpu, size_t len)
{
	struct mt_snap_aux a = { .tid = tid, .cpu = cpu, .ring_size = len,
	    .head = len, .len = len, .data = pt };

	mt_snap_add_aux(s, &a);
}

/* Decode @s with options @o; the stream, as one string. */
static char *
decode_opts_run(const struct mt_snap *s, struct decode_stats *st,
    const struct decode_opts *o)
{
	struct decode_diag d = { 0, NULL };
	struct decode_opts oo = *o;
	struct mt_evw *w = NULL;
	FILE *f = tmpfile();
	char *buf;
	long n;
	int rc;

	/*
	 * The stream goes to the tmpfile through @w only: an out_fd left at
	 * 0 would name standard input, which under make check is the null
	 * device, and mt-decode writes straight to such an fd.
	 */
	oo.out_fd = -1;
	memset(st, 0, sizeof(*st));
	rc = mt_evw_new(&w, fileno(f));
	if (rc == 0)
		rc = decode_run(&oo, s, w, st, &d);
	if (mt_evw_free(w) < 0 || rc < 0) {
		fclose(f);
		return NULL;
	}
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Decode @s with @jobs threads; the stream, as one string. */
static char *
decode_j(const struct mt_snap *s, struct decode_stats *st, int jobs)
{
	struct decode_opts o = { .source = "t.snap", .jobs = jobs };

	return decode_opts_run(s, st, &o);
}

static char *
decode(const struct mt_snap *s, struct decode_stats *st)
{
	return decode_j(s, st, 1);
}

/*
 * Does decoding @s again with @jobs threads write @out?  Then with
 * libipt's own block decoder too (no_cache), when @block is set.
 */
static int
same_again(const struct mt_snap *s, const char *out, int jobs, int block)
{
	struct decode_opts o = { .source = "t.snap", .jobs = jobs,
	    .no_cache = block };
	struct decode_stats st;
	char *again = decode_opts_run(s, &st, &o);
	int same = again != NULL && strcmp(out, again) == 0;

	free(again);
	return same;
}

static void
perf_clock_from_tsc(void)
{
	struct mt_snap s;
	struct decode_stats st;
	struct mt_snap_trigger tr = { .time = 1000 + 5500, .pid = 40,
	    .tid = 42, .ip = CODE + 0x20, .index = 0, .what = (char *)(uintptr_t)"f" };
	char *out;
	size_t len;

	pt_begin();
	psb(5000, 0, CODE);
	round_(0);
	put(ppt_tsc, 6000, 0);
	round_(0);
	len = pt_end();
	snap_base(&s, MT_PT_CFG_TSC | MT_PT_CFG_BRANCH);
	mt_snap_add_trigger(&s, &tr);
	add_aux(&s, 42, MT_SNAP_NONE, len);
	out = decode(&s, &st);
	CHECK(out != NULL);
	if (out == NULL)
		goto done;
	CHECK_STR(out,
	    "mt-events 1.2\n"
	    "info source t.snap\n"
	    "info clock perf\n"
	    "info time-base 6000\n"
	    "info backend intel_pt\n"
	    "info branches calls\n"
	    "proc 40 demo demo%20--fast\n"
	    "mod 0 0x400000 0x400040 0 - code\n"
	    "thread 40 42 demo\n"
	    "call 6000 42 0x400000 0x400020\n"
	    "ret 6000 42 0x400025 0x400005\n"
	    "call 6000 42 0x400005 0x400030\n"
	    "ret 6000 42 0x400034 0x400007\n"
	    "trigger 6500 42 0x400020 f\n"
	    "call 7000 42 0x400000 0x400020\n"
	    "ret 7000 42 0x400025 0x400005\n"
	    "call 7000 42 0x400005 0x400030\n"
	    "ret 7000 42 0x400034 0x400007\n"
	    "call 7000 42 0x400000 0x400020\n"
	    "end 7000 42\n");
	CHECK_EQ_U64(st.errors, 0);
	free(out);
done:
	mt_snap_release(&s);
}

static void
cyc_estimates_between_tsc(void)
{
	struct mt_snap s;
	struct decode_stats st;
	char *out, *line;
	uint64_t last = 0, t, first = 0;
	int nev = 0, increases = 0;
	size_t len;

	pt_begin();
	psb(5000, 20, CODE);
	round_(100);
	round_(100);
	put(ppt_tsc, 9000, 0);
	round_(100);
	len = pt_end();
	snap_base(&s, MT_PT_CFG_TSC | MT_PT_CFG_CYC | MT_PT_CFG_BRANCH);
	add_aux(&s, 42, MT_SNAP_NONE, len);
	out = decode(&s, &st);
	CHECK(out != NULL);
	if (out == NULL)
		goto done;
	CHECK_EQ_U64(st.errors, 0);
	/* Times never go back and CYC makes them advance between TSCs. */
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char kw[16];

		if (sscanf(line, "%15s %lu", kw, &t) != 2 ||
		    (strcmp(kw, "call") != 0 && strcmp(kw, "ret") != 0))
			continue;
		if (nev++ == 0)
			first = t;
		CHECK(t >= last);
		if (t > last && nev > 1 && t < 10000)
			increases++;
		last = t;
	}
	CHECK(first >= 6000);
	CHECK(increases >= 2);
	CHECK(last <= 1000 + 9000 + 1000);
	free(out);
done:
	mt_snap_release(&s);
}

static void
per_cpu_buffer_split_by_switches(void)
{
	struct mt_snap s;
	struct mt_snap_sideband sb;
	struct decode_stats st;
	struct mt_wbuf w;
	struct mt_sb_rec r;
	uint64_t stype = MT_SB_ST_TID | MT_SB_ST_TIME;
	char *out;
	size_t len;

	pt_begin();
	psb(5000, 0, CODE);
	round_(0);
	put(ppt_tsc, 6000, 0);
	round_(0);
	len = pt_end();
	snap_base(&s, MT_PT_CFG_TSC | MT_PT_CFG_BRANCH);
	s.ptcfg.per_cpu = 1;
	mt_wbuf_init(&w);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_SWITCH;
	r.id.pid = 40;
	r.id.tid = 42;
	r.id.time = 1000 + 4000;
	mt_sb_write(&w, &r, stype);
	r.misc = MT_SB_MISC_SWITCH_OUT;
	r.id.time = 1000 + 5900;
	mt_sb_write(&w, &r, stype);
	r.misc = 0;
	r.id.tid = 43;
	r.id.time = 1000 + 5950;
	mt_sb_write(&w, &r, stype);
	CHECK(w.err == 0);
	memset(&sb, 0, sizeof(sb));
	sb.cpu = 0;
	sb.tid = MT_SNAP_NONE;
	sb.sample_type = stype;
	sb.len = w.len;
	sb.data = w.p;
	mt_snap_add_sideband(&s, &sb);
	mt_wbuf_release(&w);
	add_aux(&s, MT_SNAP_NONE, 0, len);
	out = decode(&s, &st);
	CHECK(out != NULL);
	if (out == NULL)
		goto done;
	/* 42's run ends at its last record: every thread gets an end. */
	CHECK(strstr(out,
	    "thread 40 42 demo\n"
	    "call 6000 42 0x400000 0x400020\n"
	    "ret 6000 42 0x400025 0x400005\n"
	    "call 6000 42 0x400005 0x400030\n"
	    "ret 6000 42 0x400034 0x400007\n"
	    "end 6000 42\n"
	    "thread 40 43 worker\n"
	    "call 7000 43 0x400000 0x400020\n"
	    "ret 7000 43 0x400025 0x400005\n"
	    "call 7000 43 0x400005 0x400030\n"
	    "ret 7000 43 0x400034 0x400007\n"
	    "call 7000 43 0x400000 0x400020\n"
	    "end 7000 43\n") != NULL);
	free(out);
done:
	mt_snap_release(&s);
}

/*
 * Two CPUs, two threads (42 and 43) that swap CPUs twice: CPU 0 runs 42
 * from TSC 100, 43 from 300, 42 from 500; CPU 1 the other one each time.
 * User-only tracing: each stretch is TSC, TIP.PGE, its branches and an
 * asynchronous disable (FUP + TIP.PGD, preempted) inside f.  A
 * thread's first stretch enters main and calls f; the later ones resume
 * in f at its ret, return to main, call and leave g, and call f again.
 */
static uint8_t pt_cpu[2][1024];

static void
put_ip(enum pt_packet_type t, uint64_t ip, enum pt_ip_compression ipc)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = t;
	p.payload.ip.ipc = ipc;
	p.payload.ip.ip = ip;
	if (pt_enc_next(enc, &p) < 0)
		abort();
}

static void
stretch(uint64_t tsc, int first)
{
	put(ppt_tsc, tsc, 0);
	put_ip(ppt_tip_pge, first ? CODE : CODE + 0x25, pt_ipc_sext_48);
	if (!first) {
		put(ppt_tip, CODE + 0x05, 0);	/* f returns */
		put(ppt_tip, CODE + 0x30, 0);	/* call *%rbx to g */
		put(ppt_tip, CODE + 0x07, 0);	/* g returns */
	}
	put(ppt_tnt_8, 1, 1);			/* f's je taken */
	put(ppt_fup, CODE + 0x25, 0);
	put_ip(ppt_tip_pgd, 0, pt_ipc_suppressed);
}

static size_t
cpu_buffer(int cpu)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = pt_cpu[cpu];
	cfg.end = pt_cpu[cpu] + sizeof(pt_cpu[cpu]);
	enc = pt_alloc_encoder(&cfg);
	put(ppt_psb, 0, 0);
	put(ppt_tsc, 50, 0);
	put(ppt_mode, 0, 0);
	put(ppt_psbend, 0, 0);
	stretch(100, 1);
	stretch(300, 0);
	stretch(500, 0);
	return pt_end();
}

/* SWITCH records of @cpu: 42 and 43 alternate, @a first. */
static void
cpu_switches(struct mt_snap *s, uint32_t cpu, uint32_t a, uint32_t b)
{
	uint64_t stype = MT_SB_ST_TID | MT_SB_ST_TIME;
	struct mt_snap_sideband sb;
	struct mt_sb_rec r;
	struct mt_wbuf w;
	uint32_t k;

	mt_wbuf_init(&w);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_SWITCH;
	r.id.pid = 40;
	for (k = 0; k < 3; k++) {
		r.id.tid = k == 1 ? b : a;
		r.misc = 0;
		r.id.time = 1000 + 90 + 200 * k;
		mt_sb_write(&w, &r, stype);
		r.misc = MT_SB_MISC_SWITCH_OUT;
		r.id.time = 1000 + 210 + 200 * k;
		mt_sb_write(&w, &r, stype);
	}
	memset(&sb, 0, sizeof(sb));
	sb.cpu = cpu;
	sb.tid = MT_SNAP_NONE;
	sb.sample_type = stype;
	sb.len = w.len;
	sb.data = w.p;
	mt_snap_add_sideband(s, &sb);
	mt_wbuf_release(&w);
}

/* The snapshot: CPU 1's buffer first, then CPU 0's. */
static void
percpu_snap(struct mt_snap *s)
{
	struct mt_snap_aux a = { .tid = MT_SNAP_NONE };
	int cpu;

	snap_base(s, MT_PT_CFG_TSC | MT_PT_CFG_BRANCH);
	s->ptcfg.per_cpu = 1;
	cpu_switches(s, 0, 42, 43);
	cpu_switches(s, 1, 43, 42);
	for (cpu = 1; cpu >= 0; cpu--) {
		a.cpu = (uint32_t)cpu;
		a.len = a.ring_size = a.head = cpu_buffer(cpu);
		a.data = pt_cpu[cpu];
		mt_snap_add_aux(s, &a);
	}
}

/* The times of each thread's events never go back. */
static int
times_in_order(const char *out)
{
	char *copy = strdup(out), *line, *save = NULL;
	uint64_t last[2] = { 0, 0 }, t;
	unsigned tid;
	int ok = 1;

	for (line = strtok_r(copy, "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save)) {
		char kw[16];

		if (sscanf(line, "%15s %lu %u", kw, &t, &tid) != 3 ||
		    strcmp(kw, "thread") == 0 || (tid != 42 && tid != 43))
			continue;
		if (t < last[tid - 42])
			ok = 0;
		last[tid - 42] = t;
	}
	free(copy);
	return ok;
}

static void
per_cpu_threads_in_time_order(void)
{
	struct mt_snap s;
	struct decode_stats st;
	char *out;

	percpu_snap(&s);
	out = decode(&s, &st);
	CHECK(out != NULL);
	if (out == NULL)
		goto done;
	CHECK(times_in_order(out));
	CHECK_EQ_U64(st.errors, 0);
	/*
	 * CPU 0 and 1 both start at 1090: CPU 0's run first.  Each
	 * thread's record comes before its first run, its end after its
	 * last; every enable belongs to the thread switched in.
	 */
	CHECK_STR(out,
	    "mt-events 1.2\n"
	    "info source t.snap\n"
	    "info clock perf\n"
	    "info time-base 1050\n"
	    "info backend intel_pt\n"
	    "info branches calls\n"
	    "proc 40 demo demo%20--fast\n"
	    "mod 0 0x400000 0x400040 0 - code\n"
	    "thread 40 42 demo\n"
	    "enable 1100 42 0x400000\n"
	    "call 1100 42 0x400000 0x400020\n"
	    "disable 1100 42 0x400025 async\n"
	    "thread 40 43 worker\n"
	    "enable 1100 43 0x400000\n"
	    "call 1100 43 0x400000 0x400020\n"
	    "disable 1100 43 0x400025 async\n"
	    "enable 1300 43 0x400025\n"
	    "ret 1300 43 0x400025 0x400005\n"
	    "call 1300 43 0x400005 0x400030\n"
	    "ret 1300 43 0x400034 0x400007\n"
	    "call 1300 43 0x400000 0x400020\n"
	    "disable 1300 43 0x400025 async\n"
	    "enable 1300 42 0x400025\n"
	    "ret 1300 42 0x400025 0x400005\n"
	    "call 1300 42 0x400005 0x400030\n"
	    "ret 1300 42 0x400034 0x400007\n"
	    "call 1300 42 0x400000 0x400020\n"
	    "disable 1300 42 0x400025 async\n"
	    "enable 1500 42 0x400025\n"
	    "ret 1500 42 0x400025 0x400005\n"
	    "call 1500 42 0x400005 0x400030\n"
	    "ret 1500 42 0x400034 0x400007\n"
	    "call 1500 42 0x400000 0x400020\n"
	    "disable 1500 42 0x400025 async\n"
	    "end 1500 42\n"
	    "enable 1500 43 0x400025\n"
	    "ret 1500 43 0x400025 0x400005\n"
	    "call 1500 43 0x400005 0x400030\n"
	    "ret 1500 43 0x400034 0x400007\n"
	    "call 1500 43 0x400000 0x400020\n"
	    "disable 1500 43 0x400025 async\n"
	    "end 1500 43\n");
	CHECK(same_again(&s, out, 2, 0));
	CHECK(same_again(&s, out, 8, 0));
	/* CYC on: -j 2 decodes the buffers one after the other, the same */
	s.ptcfg.config |= MT_PT_CFG_CYC;
	CHECK(same_again(&s, out, 2, 0));
	free(out);
done:
	mt_snap_release(&s);
}

/*
 * Trigger hits on the per-CPU snapshot: 43's at 1150 (on CPU 1 until
 * 1290), 42's at 1350 (on CPU 1 from 1290 to 1490, its only events at
 * 1300) and at 1600 (after the trace: CPU 0, its last switch-in).  Each
 * is written once, in the run of the thread on the CPU it ran on then,
 * before the switch that ends the run; the times stay in order.
 */
static void
per_cpu_triggers_in_their_run(void)
{
	static const uint64_t when[3] = { 1150, 1350, 1600 };
	static const uint32_t who[3] = { 43, 42, 42 };
	struct mt_snap s;
	struct decode_stats st;
	char *out;
	int k;

	percpu_snap(&s);
	for (k = 0; k < 3; k++) {
		struct mt_snap_trigger tr = { .time = when[k], .pid = 40,
		    .tid = who[k], .ip = CODE + 0x20, .index = (uint32_t)k,
		    .what = (char *)(uintptr_t)"f" };

		mt_snap_add_trigger(&s, &tr);
	}
	out = decode(&s, &st);
	CHECK(out != NULL);
	if (out == NULL)
		goto done;
	CHECK(times_in_order(out));
	CHECK(strstr(out,
	    "disable 1100 43 0x400025 async\n"
	    "trigger 1150 43 0x400020 f\n"
	    "enable 1300 43 0x400025\n") != NULL);
	CHECK(strstr(out,
	    "disable 1300 42 0x400025 async\n"
	    "trigger 1350 42 0x400020 f\n"
	    "enable 1500 42 0x400025\n") != NULL);
	CHECK(strstr(out,
	    "disable 1500 42 0x400025 async\n"
	    "trigger 1600 42 0x400020 f\n"
	    "end 1600 42\n") != NULL);
	CHECK(strstr(strstr(out, "trigger 1600") + 1, "trigger") == NULL);
	CHECK(same_again(&s, out, 2, 0));
	free(out);
done:
	mt_snap_release(&s);
}

/* Thread 42's sideband: the one record @r (TID and TIME sampled). */
static void
add_sb_rec(struct mt_snap *s, const struct mt_sb_rec *r)
{
	uint64_t stype = MT_SB_ST_TID | MT_SB_ST_TIME;
	struct mt_snap_sideband sb;
	struct mt_wbuf w;

	mt_wbuf_init(&w);
	mt_sb_write(&w, r, stype);
	memset(&sb, 0, sizeof(sb));
	sb.cpu = MT_SNAP_NONE;
	sb.tid = 42;
	sb.sample_type = stype;
	sb.len = w.len;
	sb.data = w.p;
	mt_snap_add_sideband(s, &sb);
	mt_wbuf_release(&w);
}

/*
 * A uprobe at f's first instruction, PT not paused at it (issue 19 item
 * 14): the int3 traps (FUP at f + TIP.PGD, user-only), the kernel
 * single-steps the copied `test %eax,%eax` in slot 1 of the [uprobes]
 * page (TIP.PGE there, FUP after its 2 bytes + TIP.PGD for the step's
 * trap), and resumes after it (TIP.PGE at f + 2); f then returns, main
 * calls g and calls f again.  The page is known from a MMAP2 sideband
 * record as the kernel writes it (perf_event_mmap from
 * __install_special_mapping: name "[uprobes]", PROT_EXEC only, no file);
 * its bytes never are.  With @map 0 the sideband lacks it.
 */
#define XOL 0x7ffff7ff0000ull

/*
 * The rest of a uprobe snapshot of @len bytes of trace: the code, hit
 * @tr, the [uprobes] page's MMAP2 record as the kernel writes it
 * (perf_event_mmap from __install_special_mapping: name "[uprobes]",
 * PROT_EXEC only, no file; "[anon]" instead without @map) and the AUX.
 */
static void
xol_snap_end(struct mt_snap *s, const struct mt_snap_trigger *tr, int map,
    size_t len)
{
	struct mt_sb_rec r;

	snap_base(s, MT_PT_CFG_TSC | MT_PT_CFG_BRANCH);
	mt_snap_add_trigger(s, tr);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_MMAP2;
	r.misc = MT_SB_MISC_USER;
	r.id.pid = 40;
	r.id.tid = 42;
	r.id.time = 1000 + 4000;
	r.u.mmap.pid = 40;
	r.u.mmap.tid = 42;
	r.u.mmap.addr = XOL;
	r.u.mmap.len = 0x1000;
	r.u.mmap.prot = 4;			/* PROT_EXEC */
	r.u.mmap.flags = 2;
	r.u.mmap.filename = map ? "[uprobes]" : "[anon]";
	add_sb_rec(s, &r);
	add_aux(s, 42, MT_SNAP_NONE, len);
}

static struct mt_snap *
xol_snap(struct mt_snap *s, int map)
{
	struct mt_snap_trigger tr = { .time = 1000 + 5000, .pid = 40,
	    .tid = 42, .ip = CODE + 0x20, .index = 0,
	    .what = (char *)(uintptr_t)"f" };
	size_t len;

	pt_begin();
	psb(5000, 0, CODE);
	put(ppt_fup, CODE + 0x20, 0);
	put_ip(ppt_tip_pgd, 0, pt_ipc_suppressed);
	put(ppt_tip_pge, XOL + 0x80, 0);
	put(ppt_fup, XOL + 0x82, 0);
	put_ip(ppt_tip_pgd, 0, pt_ipc_suppressed);
	put(ppt_tip_pge, CODE + 0x22, 0);
	put(ppt_tnt_8, 1, 1);			/* je taken */
	put(ppt_tip, CODE + 0x05, 0);		/* f returns */
	put(ppt_tip, CODE + 0x30, 0);		/* call *%rbx to g */
	put(ppt_tip, CODE + 0x07, 0);		/* g returns */
	len = pt_end();
	xol_snap_end(s, &tr, map, len);
	return s;
}

/* What the xol snapshots decode to once f has returned, up to the end */
#define F_RETURNS_G_RUNS \
	"ret 6000 42 0x400025 0x400005\n" \
	"call 6000 42 0x400005 0x400030\n" \
	"ret 6000 42 0x400034 0x400007\n" \
	"call 6000 42 0x400000 0x400020\n" \
	"end 6000 42\n"

static void
uprobe_slot_is_a_gap(void)
{
	struct mt_snap s;
	struct decode_stats st;
	char *out;

	out = decode(xol_snap(&s, 1), &st);
	CHECK(out != NULL);
	if (out == NULL)
		goto done;
	CHECK_EQ_U64(st.errors, 0);
	CHECK(strstr(out,
	    "thread 40 42 demo\n"
	    "call 6000 42 0x400000 0x400020\n"
	    "trigger 6000 42 0x400020 f\n"
	    "disable 6000 42 0x400020 async\n"
	    "enable 6000 42 0x400020\n"
	    "disable 6000 42 0x400020 uprobe\n"
	    "enable 6000 42 0x400022\n"
	    F_RETURNS_G_RUNS) != NULL);
	/* (the mod record names the page; no event does) */
	CHECK(strstr(strstr(out, "thread "), "0x7ffff7ff") == NULL);
	/* libipt's own block decoder and -j 2 write the same */
	CHECK(same_again(&s, out, 2, 0));
	CHECK(same_again(&s, out, 1, 1));
	free(out);
done:
	mt_snap_release(&s);
	/* Without the mapping the slot's code is missing: an error. */
	out = decode(xol_snap(&s, 0), &st);
	CHECK(out != NULL && strstr(out, " uprobe\n") == NULL);
	CHECK_EQ_U64(st.errors, 1);
	free(out);
	mt_snap_release(&s);
}

/*
 * A uprobe on a branch instruction, PT not paused at it (issue 19): the
 * kernel emulates a direct call, jmp or jcc (branch_emulate_op in
 * arch/x86/kernel/uprobes.c: no [uprobes] slot), so after the trap
 * (FUP at the branch + TIP.PGD) tracing resumes at the branch's target
 * (TIP.PGE there); a ret or indirect branch runs in a slot (TIP.PGE in
 * the page, its TIP, the single step's trap: FUP at the target +
 * TIP.PGD) and resumes at the target.  Either way the probed branch
 * happened and must be written.  @what: 0 the `call f` at 0x400000
 * emulated, 1 f's `ret` at 0x400025 in slot 1, 2 f's `je` (taken) at
 * 0x400022 emulated.
 */
static struct mt_snap *
xol_branch_snap(struct mt_snap *s, int what)
{
	static const uint64_t at[3] = { CODE, CODE + 0x25, CODE + 0x22 };
	struct mt_snap_trigger tr = { .time = 1000 + 5000, .pid = 40,
	    .tid = 42, .ip = at[what], .index = 0,
	    .what = (char *)(uintptr_t)"probe" };
	size_t len;

	pt_begin();
	psb(5000, 0, CODE);
	if (what == 0) {
		put(ppt_fup, CODE, 0);		/* the int3 at the call */
		put_ip(ppt_tip_pgd, 0, pt_ipc_suppressed);
		put(ppt_tip_pge, CODE + 0x20, 0);	/* emulated: in f */
		put(ppt_tnt_8, 1, 1);			/* je taken */
		put(ppt_tip, CODE + 0x05, 0);		/* f returns */
	} else if (what == 1) {
		put(ppt_tnt_8, 1, 1);			/* je taken */
		put(ppt_fup, CODE + 0x25, 0);		/* the int3 at ret */
		put_ip(ppt_tip_pgd, 0, pt_ipc_suppressed);
		put(ppt_tip_pge, XOL + 0x80, 0);	/* ret in slot 1 */
		put(ppt_tip, CODE + 0x05, 0);
		put(ppt_fup, CODE + 0x05, 0);		/* the step's trap */
		put_ip(ppt_tip_pgd, 0, pt_ipc_suppressed);
		put(ppt_tip_pge, CODE + 0x05, 0);
	} else {
		put(ppt_fup, CODE + 0x22, 0);		/* the int3 at je */
		put_ip(ppt_tip_pgd, 0, pt_ipc_suppressed);
		put(ppt_tip_pge, CODE + 0x25, 0);	/* emulated, taken */
		put(ppt_tip, CODE + 0x05, 0);		/* f returns */
	}
	put(ppt_tip, CODE + 0x30, 0);		/* call *%rbx to g */
	put(ppt_tip, CODE + 0x07, 0);		/* g returns */
	len = pt_end();
	xol_snap_end(s, &tr, 1, len);
	return s;
}

static void
uprobe_on_a_branch_decodes_its_effect(void)
{
	static const char *const want[3] = {
		/* the emulated call: from the call to f, at once */
		"thread 40 42 demo\n"
		"trigger 6000 42 0x400000 probe\n"
		"disable 6000 42 0x400000 async\n"
		"enable 6000 42 0x400000\n"
		"call 6000 42 0x400000 0x400020\n"
		F_RETURNS_G_RUNS,
		/* the ret stepped in the slot: f returns */
		"thread 40 42 demo\n"
		"call 6000 42 0x400000 0x400020\n"
		"trigger 6000 42 0x400025 probe\n"
		"disable 6000 42 0x400025 async\n"
		"enable 6000 42 0x400025\n"
		F_RETURNS_G_RUNS,
		/* the emulated je, taken inside f: no record of its own */
		"thread 40 42 demo\n"
		"call 6000 42 0x400000 0x400020\n"
		"trigger 6000 42 0x400022 probe\n"
		"disable 6000 42 0x400022 async\n"
		"enable 6000 42 0x400022\n"
		F_RETURNS_G_RUNS,
	};
	struct mt_snap s;
	struct decode_stats st;
	char *out;
	int what;

	for (what = 0; what < 3; what++) {
		out = decode(xol_branch_snap(&s, what), &st);
		CHECK(out != NULL);
		if (out != NULL) {
			CHECK_EQ_U64(st.errors, 0);
			if (strstr(out, want[what]) == NULL)
				fprintf(stderr, "# case %d:\n%s", what, out);
			CHECK(strstr(out, want[what]) != NULL);
			/* libipt's own block decoder and -j 2 alike */
			CHECK(same_again(&s, out, 2, 0));
			CHECK(same_again(&s, out, 1, 1));
		}
		free(out);
		mt_snap_release(&s);
	}
}

/* @s written to a file and read back: what mt-decode reads. */
static int
round_trip(struct mt_snap *s)
{
	struct mt_snap_diag d;
	struct mt_snap back;
	FILE *f = tmpfile();
	int rc = -1;

	mt_snap_init(&back);
	if (f != NULL && mt_snap_write_fd(s, fileno(f)) == 0 &&
	    lseek(fileno(f), 0, SEEK_SET) == 0 &&
	    mt_snap_read_fd(&back, fileno(f), &d) == 0) {
		mt_snap_release(s);
		*s = back;
		rc = 0;
	} else {
		mt_snap_release(&back);
	}
	if (f != NULL)
		fclose(f);
	return rc;
}

/*
 * The emulated `call f` of xol_branch_snap (case 0) at a uprobe that no
 * TRIGGER chunk names (another tool's, or an mt trigger whose hit was
 * dropped while a snapshot was written), listed by a PROBE chunk
 * (snapshot 1.2) that went through a file: decoded as the call the
 * program made (main calls f at 0x400000), by mt-decode's decoder,
 * libipt's own block decoder and -j 2 alike, with no error.  Without
 * the PROBE chunk the call is lost in a gap (the trace resumes in f).
 */
static void
uprobe_site_listed_decodes_without_a_hit(void)
{
	static const char want[] =
	    "thread 40 42 demo\n"
	    "disable 6000 42 0x400000 async\n"
	    "enable 6000 42 0x400000\n"
	    "call 6000 42 0x400000 0x400020\n"
	    F_RETURNS_G_RUNS;
	static const char gap[] =
	    "thread 40 42 demo\n"
	    "disable 6000 42 0x400000 async\n"
	    "enable 6000 42 0x400020\n";
	struct mt_snap_probe p = { .pid = 40,
	    .origin = MT_SNAP_PROBE_OTHER, .addr = CODE, .offset = 0,
	    .path = (char *)(uintptr_t)"code",
	    .what = (char *)(uintptr_t)"p_code_0x0" };
	struct mt_snap s;
	struct decode_stats st;
	char *out;
	int listed;

	for (listed = 0; listed < 2; listed++) {
		xol_branch_snap(&s, 0);
		free(s.triggers[0].what);
		s.ntriggers = 0;
		if (listed)
			CHECK(mt_snap_add_probe(&s, &p) == 0);
		CHECK(round_trip(&s) == 0);
		CHECK_EQ_U64(s.nprobes, (uint64_t)listed);
		out = decode(&s, &st);
		CHECK(out != NULL);
		if (out != NULL && listed) {
			CHECK_EQ_U64(st.errors, 0);
			if (strstr(out, want) == NULL)
				fprintf(stderr, "%s", out);
			CHECK(strstr(out, want) != NULL);
			CHECK(same_again(&s, out, 2, 0));
			CHECK(same_again(&s, out, 1, 1));
		} else if (out != NULL) {
			/* (main calls f again at the end) */
			CHECK(strstr(out, gap) != NULL);
			CHECK(strstr(out, "enable 6000 42 0x400000\n") == NULL);
		}
		free(out);
		mt_snap_release(&s);
	}
}

/*
 * A probed instruction stepped in slot @slot: the int3's trap at @at
 * (FUP + TIP.PGD), TIP.PGE in the slot, the branch's TIP to @to if @to,
 * the single step's trap (FUP at @to, or after the @len bytes in the
 * slot, + TIP.PGD), and tracing resuming there (TIP.PGE).
 */
static void
put_step(uint64_t at, unsigned slot, uint64_t to, uint64_t len)
{
	uint64_t next = to ? to : at + len;

	put(ppt_fup, at, 0);
	put_ip(ppt_tip_pgd, 0, pt_ipc_suppressed);
	put(ppt_tip_pge, XOL + 0x80 * slot, 0);
	if (to)
		put(ppt_tip, to, 0);
	put(ppt_fup, to ? to : XOL + 0x80 * slot + len, 0);
	put_ip(ppt_tip_pgd, 0, pt_ipc_suppressed);
	put(ppt_tip_pge, next, 0);
}

/*
 * Uprobes at several instructions, PT not paused (issue 19 item 14):
 * mt's two triggers, on f's `test` (0x400020, no branch) and f's `ret`
 * (0x400025), and another tool's on main's `call *%rbx` (0x400005) and
 * g's `ret` (0x400034), which no TRIGGER chunk names.  The kernel copies
 * each into a free slot before its step (older kernels free the slot
 * after it, so slot 1 serves one probe after another): two rounds of
 * main, the second with f's ret in slot 2.  Every branch must come out
 * as the program makes it, with no decode error.
 */
static struct mt_snap *
xol_many_snap(struct mt_snap *s)
{
	struct mt_snap_trigger tr = { .time = 1000 + 5000, .pid = 40,
	    .tid = 42, .ip = CODE + 0x20, .index = 0,
	    .what = (char *)(uintptr_t)"f" };
	size_t len, k;

	pt_begin();
	psb(5000, 0, CODE);
	for (k = 0; k < 2; k++) {
		put_step(CODE + 0x20, 1, 0, 2);		/* test %eax,%eax */
		put(ppt_tnt_8, 1, 1);			/* je taken */
		put_step(CODE + 0x25, 1 + (unsigned)k, CODE + 0x05, 1);
		put_step(CODE + 0x05, 1, CODE + 0x30, 2);	/* call *%rbx */
		put_step(CODE + 0x34, 1, CODE + 0x07, 1);	/* g's ret */
	}
	len = pt_end();
	xol_snap_end(s, &tr, 1, len);
	tr.ip = CODE + 0x25;
	tr.what = (char *)(uintptr_t)"ret";
	mt_snap_add_trigger(s, &tr);
	return s;
}

static void
uprobes_at_several_instructions_step_in_their_slots(void)
{
	static const char round[] =
	    "disable 6000 42 0x400020 async\n"
	    "enable 6000 42 0x400020\n"
	    "disable 6000 42 0x400020 uprobe\n"
	    "enable 6000 42 0x400022\n"
	    "disable 6000 42 0x400025 async\n"
	    "enable 6000 42 0x400025\n"
	    "ret 6000 42 0x400025 0x400005\n"
	    "disable 6000 42 0x400005 async\n"
	    "enable 6000 42 0x400005\n"
	    "call 6000 42 0x400005 0x400030\n"
	    "disable 6000 42 0x400034 async\n"
	    "enable 6000 42 0x400034\n"
	    "ret 6000 42 0x400034 0x400007\n"
	    "call 6000 42 0x400000 0x400020\n";
	struct mt_snap s;
	struct decode_stats st;
	struct decode_opts o = { .source = "t.snap", .jobs = 1,
	    .no_cache = 1 };
	char *out, *out2, *p;

	out = decode(xol_many_snap(&s), &st);
	CHECK(out != NULL);
	if (out == NULL)
		goto done;
	CHECK_EQ_U64(st.errors, 0);
	/* both rounds, then the trace ends in f */
	p = strstr(out, "thread 40 42 demo\ncall 6000 42 0x400000 0x400020\n");
	CHECK(p != NULL);
	if (p != NULL)
		p = strstr(p, round);
	CHECK(p != NULL);
	if (p != NULL)
		p = strstr(p + 1, round);
	CHECK(p != NULL);
	if (p == NULL)
		fprintf(stderr, "%s", out);
	/* no record names a slot */
	CHECK(strstr(strstr(out, "thread "), "0x7ffff7ff") == NULL);
	out2 = decode_j(&s, &st, 2);
	CHECK(out2 != NULL && strcmp(out, out2) == 0);
	free(out2);
	out2 = decode_opts_run(&s, &st, &o);
	CHECK(out2 != NULL && strcmp(out, out2) == 0);
	free(out2);
	free(out);
done:
	mt_snap_release(&s);
}

static char warned[512];

static void
warn_keep(void *arg, const char *msg)
{
	(void)arg;
	snprintf(warned, sizeof(warned), "%s", msg);
}

static void
sideband_mmap2_is_looked_up_and_listed(void)
{
	struct mt_snap s;
	struct decode_stats st;
	struct decode_opts o = { .source = "t.snap", .warn = warn_keep,
	    .out_fd = -1 };
	struct decode_diag d = { 0, NULL };
	struct mt_evw *w = NULL;
	struct mt_sb_rec r;
	FILE *f = tmpfile();
	char out[4096];
	size_t len, n;

	pt_begin();
	psb(5000, 0, CODE + 0x1000);
	len = pt_end();
	mt_snap_init(&s);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_MMAP2;
	r.misc = MT_SB_MISC_USER | MT_SB_MISC_MMAP_BUILD_ID;
	r.id.pid = 40;
	r.id.tid = 42;
	r.u.mmap.pid = 40;
	r.u.mmap.tid = 42;
	r.u.mmap.addr = CODE + 0x1000;
	r.u.mmap.len = 0x1000;
	r.u.mmap.pgoff = 0x2000;
	r.u.mmap.build_id_len = 20;
	memset(r.u.mmap.build_id, 0xab, 20);
	r.u.mmap.prot = 5;
	r.u.mmap.flags = 2;
	r.u.mmap.filename = "/nonexistent/prog";
	add_sb_rec(&s, &r);
	add_aux(&s, 42, MT_SNAP_NONE, len);
	memset(&st, 0, sizeof(st));
	warned[0] = '\0';
	CHECK(mt_evw_new(&w, fileno(f)) == 0);
	CHECK(decode_run(&o, &s, w, &st, &d) == 0);
	CHECK(mt_evw_free(w) == 0);
	rewind(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	CHECK(strstr(out, "mod 40 0x401000 0x402000 8192 "
	    "abababababababababababababababababababab /nonexistent/prog\n")
	    != NULL);
	CHECK_STR(warned, "no file for '/nonexistent/prog' with build-id "
	    "abababababababababababababababababababab: its code is not "
	    "decoded");
	CHECK_EQ_U64(st.no_image, 1);
	mt_snap_release(&s);
}

int
main(int argc, char **argv)
{
	/*
	 * tests/mt-decode-percpu.bats: the per-CPU snapshot as a file
	 * OUT; with ELF and PGOFF, the code is that file's (mapped at
	 * CODE from PGOFF, with symbols) instead of a blob.
	 */
	if ((argc == 3 || argc == 5) &&
	    strcmp(argv[1], "--write-percpu") == 0) {
		struct mt_snap s;
		FILE *f = fopen(argv[2], "wb");
		int rc;

		percpu_snap(&s);
		if (argc == 5) {
			struct mt_snap_mmap m = { .pid = 40, .start = CODE,
			    .end = CODE + 0x1000, .prot = 5, .flags = 2,
			    .path = argv[3] };

			m.pgoff = strtoull(argv[4], NULL, 0);
			mt_snap_add_mmap(&s, &m);
			free(s.blobs[0].name);	/* no blob: the ELF's code */
			free(s.blobs[0].data);
			s.nblobs = 0;
		}
		rc = f != NULL ? mt_snap_write_fd(&s, fileno(f)) : -1;
		if (f != NULL && fclose(f) != 0)
			rc = -1;
		mt_snap_release(&s);
		return rc < 0;
	}
	TEST(perf_clock_from_tsc);
	TEST(cyc_estimates_between_tsc);
	TEST(per_cpu_buffer_split_by_switches);
	TEST(per_cpu_threads_in_time_order);
	TEST(per_cpu_triggers_in_their_run);
	TEST(sideband_mmap2_is_looked_up_and_listed);
	TEST(uprobe_slot_is_a_gap);
	TEST(uprobe_on_a_branch_decodes_its_effect);
	TEST(uprobe_site_listed_decodes_without_a_hit);
	TEST(uprobes_at_several_instructions_step_in_their_slots);
	return tap_done();
}
