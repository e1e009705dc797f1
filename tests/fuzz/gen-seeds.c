/* SPDX-License-Identifier: MIT */
/*
 * Writes the generated part of the fuzzers' seed corpora: for each target
 * a few valid inputs built with the modules' own writers, so every record
 * and chunk type is in the corpus from the start.
 *
 *   gen-seeds DIR	writes DIR/snap/, DIR/events/, DIR/sideband/,
 *			DIR/perfdata/, DIR/qjit/
 *
 * tests/helpers/fuzz adds the inputs the test suite has (tests/data/ files,
 * the committed seeds in tests/fuzz/seeds/, small ELF files) next to them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "events.h"
#include "perfdata.h"
#include "sideband.h"
#include "snap.h"

static const char *outdir;

static int
create(const char *sub, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", outdir, sub);
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, sub, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

static void
put_file(const char *sub, const char *name, const void *p, size_t n)
{
	int fd = create(sub, name);

	if (write(fd, p, n) != (ssize_t)n) {
		perror(name);
		exit(1);
	}
	close(fd);
}

/* A snapshot with one chunk of every type. */
static void
snap_full(struct mt_snap *s)
{
	static char cmd[] = "demo\0-x", comm[] = "demo", exe[] = "/bin/demo",
	    worker[] = "worker", what[] = "libm.so.6:cos", vdso[] = "[vdso]",
	    kern[] = "6.1.0", host[] = "h", kall[] = "ffffffff81000000 T _text\n";
	static uint8_t pt[] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
	    0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x23,
	    0x99, 0x01, 0x4d, 0x36, 0x12, 0x40, 0x00, 0x02, 0x03 };
	static uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0xe8, 0, 0, 0, 0,
	    0x5d, 0xc3 };
	static uint8_t elf[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0 };
	struct mt_snap_host h = { .vendor = "GenuineIntel", .family = 6,
	    .model = 0x8c, .stepping = 1, .cpuid_15 = { 2, 188, 0 },
	    .max_nonturbo_ratio = 28, .nr_cpus = 2, .kernel = kern,
	    .hostname = host };
	struct mt_snap_process p = { .pid = 42, .ppid = 1, .comm = comm,
	    .exe = exe, .cmdline = cmd, .cmdline_len = sizeof(cmd) };
	struct mt_snap_thread t = { .pid = 42, .tid = 43, .comm = worker };
	struct mt_snap_mmap m = { .pid = 42, .start = 0x400000,
	    .end = 0x401000, .prot = 5, .flags = 2, .build_id_len = 4,
	    .build_id = { 1, 2, 3, 4 }, .path = exe };
	struct mt_snap_aux a = { .tid = 43, .cpu = MT_SNAP_NONE,
	    .flags = MT_SNAP_AUX_WRAPPED, .ring_size = 4096, .head = 27,
	    .len = sizeof(pt), .data = pt };
	struct mt_sb_rec r = { .type = MT_SB_COMM };
	struct mt_snap_sideband sb = { .cpu = MT_SNAP_NONE, .tid = 43,
	    .sample_type = MT_SB_ST_TID | MT_SB_ST_TIME | MT_SB_ST_CPU };
	struct mt_snap_trigger tr = { .time = 1000, .pid = 42, .tid = 43,
	    .ip = 0x400010, .what = what };
	struct mt_snap_blob b = { .pid = 42, .kind = MT_SNAP_BLOB_VDSO,
	    .addr = 0x7fff0000, .name = vdso, .len = sizeof(code),
	    .data = code };
	struct mt_snap_elf e = { .build_id_len = 4, .build_id = { 1, 2, 3, 4 },
	    .path = exe, .len = sizeof(elf), .data = elf };
	struct mt_snap_text tx = { .kind = MT_SNAP_TEXT_KALLSYMS,
	    .len = sizeof(kall) - 1, .data = kall };
	struct mt_snap_probe pr = { .pid = 42, .origin = MT_SNAP_PROBE_OTHER,
	    .addr = 0x400010, .offset = 0x10, .path = exe, .what = what };
	struct mt_wbuf w;

	mt_snap_add_meta(s, "reason", "trigger");
	mt_snap_set_host(s, &h);
	s->has_ptcfg = 1;
	s->ptcfg.config = MT_PT_CFG_BRANCH | MT_PT_CFG_TSC | MT_PT_CFG_MTC;
	s->ptcfg.user = 1;
	s->ptcfg.nfilters = 1;
	s->ptcfg.filters[0].a = 0x400000;
	s->ptcfg.filters[0].b = 0x400fff;
	s->ptcfg.filters[0].cfg = 1;
	s->has_timeconv = 1;
	s->timeconv.time_mult = 123;
	s->timeconv.time_shift = 10;
	s->timeconv.cap_user_time_zero = 1;
	mt_snap_add_process(s, &p);
	mt_snap_add_thread(s, &t);
	mt_snap_add_mmap(s, &m);
	mt_snap_add_aux(s, &a);
	mt_wbuf_init(&w);
	r.u.comm.pid = 42;
	r.u.comm.tid = 43;
	r.u.comm.comm = "demo";
	r.id.pid = 42;
	r.id.tid = 43;
	r.id.time = 5;
	mt_sb_write(&w, &r, sb.sample_type);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_SWITCH;
	r.misc = MT_SB_MISC_SWITCH_OUT;
	r.id.time = 6;
	mt_sb_write(&w, &r, sb.sample_type);
	sb.data = w.p;
	sb.len = w.len;
	mt_snap_add_sideband(s, &sb);
	mt_wbuf_release(&w);
	mt_snap_add_trigger(s, &tr);
	mt_snap_add_blob(s, &b);
	mt_snap_add_elf(s, &e);
	mt_snap_add_text(s, &tx);
	mt_snap_add_probe(s, &pr);
}

static void
gen_snap(void)
{
	struct mt_snap s;
	int fd;

	mt_snap_init(&s);
	fd = create("snap", "empty.snap");
	if (mt_snap_write_fd(&s, fd) < 0)
		exit(1);
	close(fd);
	snap_full(&s);
	fd = create("snap", "full.snap");
	if (mt_snap_write_fd(&s, fd) < 0)
		exit(1);
	close(fd);
	mt_snap_release(&s);
}

static void
gen_events(void)
{
	struct mt_evw *w;
	struct mt_ev ev;
	int fd = create("events", "all-kinds.ev"), k;

	if (mt_evw_new(&w, fd) < 0)
		exit(1);
	mt_evw_comment(w, "every record kind once");
	for (k = MT_EV_INFO; k < MT_EV_NKINDS; k++) {
		memset(&ev, 0, sizeof(ev));
		ev.kind = (enum mt_ev_kind)k;
		ev.time = 1000 + (uint64_t)k;
		ev.pid = 42;
		ev.tid = 43;
		ev.id = (uint32_t)k;
		ev.addr[0] = 0x401136;
		ev.addr[1] = 0x7f0000001000;
		ev.num = 4096;
		ev.str[0] = k == MT_EV_MOD ? "0badc0de" : "a b%c";
		ev.str[1] = "/usr/lib/libm.so.6";
		if (k == MT_EV_LOC) {
			ev.nframes = 2;
			ev.frames[0].fn = 1;
			ev.frames[0].file = 2;
			ev.frames[0].line = 10;
			ev.frames[1].fn = 3;
		}
		if (MT_EV_IS_EVENT(k) && mt_ev_naddr(ev.kind) > 0)
			ev.loc[0] = 7;
		if (mt_evw_write(w, &ev) < 0)
			exit(1);
	}
	if (mt_evw_free(w) < 0)
		exit(1);
	close(fd);
}

/* Prefix of fuzz-sideband inputs: sample_type, flags. */
static void
sb_prefix(struct mt_wbuf *w, uint64_t st)
{
	mt_wbuf_u64le(w, st);
	mt_wbuf_u8(w, 1);
}

static void
gen_sideband(void)
{
	static const uint64_t sts[] = {
		MT_SB_ST_TID | MT_SB_ST_TIME | MT_SB_ST_CPU |
		    MT_SB_ST_IDENTIFIER,
		MT_SB_ST_TID | MT_SB_ST_TIME | MT_SB_ST_ID |
		    MT_SB_ST_STREAM_ID | MT_SB_ST_CPU,
	};
	static const uint32_t types[] = { MT_SB_MMAP, MT_SB_LOST, MT_SB_COMM,
	    MT_SB_EXIT, MT_SB_FORK, MT_SB_MMAP2, MT_SB_MMAP2, MT_SB_AUX,
	    MT_SB_ITRACE_START, MT_SB_LOST_SAMPLES, MT_SB_SWITCH,
	    MT_SB_SWITCH_CPU_WIDE, MT_SB_NAMESPACES, MT_SB_KSYMBOL };
	size_t i, j;

	for (j = 0; j < sizeof(sts) / sizeof(sts[0]); j++) {
		struct mt_wbuf w;
		char name[32];

		mt_wbuf_init(&w);
		sb_prefix(&w, sts[j]);
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
			struct mt_sb_rec r;

			memset(&r, 0, sizeof(r));
			r.type = types[i];
			r.id.pid = 42;
			r.id.tid = 43;
			r.id.time = 100 + i;
			r.id.cpu = 1;
			r.u.mmap.pid = 42;
			r.u.mmap.addr = 0x400000;
			r.u.mmap.len = 0x1000;
			r.u.mmap.filename = "/usr/bin/demo";
			if (r.type == MT_SB_COMM)
				r.u.comm.comm = "demo";
			if (r.type == MT_SB_MMAP2 && i == 6) {
				r.misc = MT_SB_MISC_MMAP_BUILD_ID;
				r.u.mmap.build_id_len = 20;
				r.u.mmap.build_id[19] = 0xab;
			}
			if (r.type == MT_SB_SWITCH)
				r.misc = MT_SB_MISC_SWITCH_OUT;
			if (r.type >= MT_SB_NAMESPACES) {
				r.body = (const uint8_t *)"12345678";
				r.body_len = 8;
			}
			if (mt_sb_write(&w, &r, sts[j]) < 0)
				exit(1);
		}
		snprintf(name, sizeof(name), "all-types-%zu.sb", j);
		put_file("sideband", name, w.p, w.len);
		mt_wbuf_release(&w);
	}
}

/* A small intel_pt perf.data, file mode or pipe mode. */
static void
gen_perfdata(int pipe)
{
	static const uint8_t pt[] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
	    0x23, 0x99, 0x01 };
	uint64_t priv[17] = { 8, 10, 500, 0, 1, 0x400, 0x800, 1, 0, 0, 0x200,
	    0x3c000, 0, 0, 0x2, 0, 0 };
	uint64_t ids[2] = { 11, 12 };
	const uint64_t st = MT_SB_ST_TID | MT_SB_ST_TIME | MT_SB_ST_ID |
	    MT_SB_ST_CPU | MT_SB_ST_IDENTIFIER;
	struct mt_pd_attr a[2];
	struct mt_pd_auxtrace ax = { .size = sizeof(pt), .data = pt,
	    .tid = 43, .cpu = MT_PD_NONE };
	struct mt_pd_build_id bid = { .pid = 42, .misc = MT_SB_MISC_USER,
	    .len = 20, .id = { 0x5a, 1, 2 } };
	struct mt_pd_time_conv tc = { .time_shift = 10, .time_mult = 500 };
	struct mt_pd_writer *w;
	struct mt_sb_rec r;
	struct mt_wbuf b;
	char exe[] = "/bin/demo";
	int fd;

	memset(a, 0, sizeof(a));
	a[0].type = 8;
	a[0].config = MT_PT_CFG_TSC | MT_PT_CFG_BRANCH;
	a[0].sample_type = st;
	a[0].flags = MT_PD_ATTR_SAMPLE_ID_ALL | MT_PD_ATTR_DISABLED;
	a[0].ids = &ids[0];
	a[0].nids = 1;
	a[1].type = 1;	/* software: the dummy sideband event */
	a[1].config = 9;
	a[1].sample_type = st;
	a[1].flags = MT_PD_ATTR_SAMPLE_ID_ALL | MT_PD_ATTR_MMAP2 |
	    MT_PD_ATTR_COMM | MT_PD_ATTR_TASK | MT_PD_ATTR_CONTEXT_SWITCH;
	a[1].ids = &ids[1];
	a[1].nids = 1;
	bid.filename = exe;
	if (mt_pd_writer_new(&w, pipe) < 0 ||
	    mt_pd_writer_attr(w, &a[0]) < 0 ||
	    mt_pd_writer_attr(w, &a[1]) < 0 ||
	    mt_pd_writer_time_conv(w, &tc) < 0 ||
	    mt_pd_writer_auxtrace_info(w, MT_PD_AUXTRACE_INTEL_PT, priv,
	    17) < 0)
		exit(1);
	mt_wbuf_init(&b);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_MMAP2;
	r.id.pid = 42;
	r.id.tid = 43;
	r.id.id = 12;
	r.u.mmap.pid = 42;
	r.u.mmap.tid = 43;
	r.u.mmap.addr = 0x400000;
	r.u.mmap.len = 0x1000;
	r.u.mmap.prot = 5;
	r.u.mmap.filename = exe;
	if (mt_sb_write(&b, &r, st) < 0 ||
	    mt_pd_writer_record(w, b.p, b.len) < 0 ||
	    mt_pd_writer_auxtrace(w, &ax) < 0 ||
	    mt_pd_writer_finished_round(w) < 0 ||
	    mt_pd_writer_build_id(w, &bid) < 0 ||
	    mt_pd_writer_cpuid(w, "GenuineIntel,6,85,4") < 0 ||
	    mt_pd_writer_nr_cpus(w, 2, 2) < 0)
		exit(1);
	mt_wbuf_release(&b);
	fd = create("perfdata", pipe ? "pipe.data" : "file.data");
	if (mt_pd_writer_finish(w, fd) < 0)
		exit(1);
	mt_pd_writer_free(w);
	close(fd);
}

/* One record of the qemu plugin's code log (struct mtq_code, x86-64). */
static void
qjit_rec(struct mt_wbuf *w, uint64_t addr, uint32_t len, uint64_t since,
    uint8_t fill)
{
	uint32_t i;

	mt_wbuf_u64le(w, addr);
	mt_wbuf_u32le(w, len);
	mt_wbuf_u32le(w, 0);
	mt_wbuf_u64le(w, since);
	for (i = 0; i < len; i++)
		mt_wbuf_u8(w, (uint8_t)(fill + i));
}

/*
 * Code logs of the qemu backend: blocks that overlap, touch and stand
 * apart, of two times, and a last record cut short (being written).
 */
static void
gen_qjit(void)
{
	struct mt_wbuf w;

	mt_wbuf_init(&w);
	qjit_rec(&w, 0x7f0000001000, 16, 0, 0x10);
	qjit_rec(&w, 0x7f0000001008, 16, 0, 0x20);	/* overlaps */
	qjit_rec(&w, 0x7f0000001018, 8, 0, 0x30);	/* touches */
	qjit_rec(&w, 0x7f0000002000, 4, 0, 0x40);	/* apart */
	qjit_rec(&w, 0x7f0000001000, 16, 500, 0x50);	/* a new version */
	put_file("qjit", "versions.log", w.p, w.len);
	qjit_rec(&w, 0x7f0000003000, 32, 900, 0x60);
	put_file("qjit", "cut.log", w.p, w.len - 20);
	mt_wbuf_release(&w);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen-seeds dir\n");
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) < 0 && errno != EEXIST) {
		perror(outdir);
		return 1;
	}
	gen_snap();
	gen_events();
	gen_sideband();
	gen_perfdata(0);
	gen_perfdata(1);
	gen_qjit();
	return 0;
}
