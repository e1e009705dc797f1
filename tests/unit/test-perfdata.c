/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for common/perfdata.c and perfdata-write.c: writer/reader
 * round trips in file and pipe mode, truncation at every offset, hostile
 * sizes, and perf's own Intel PT decoder (perf script) on a synthetic
 * trace written with libipt's encoder, when perf is installed.
 *
 * `test-perfdata --write-synth DIR` writes the synthetic program (code.bin)
 * and a per-thread file-mode perf.data (synth.data) into DIR, for the bats
 * tests and by hand: perf script -i DIR/synth.data --itrace=b.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <intel-pt.h>

#include "tap.h"
#include "buf.h"
#include "err.h"
#include "perfdata.h"
#include "sideband.h"

#define CODE_ADDR	0x400000ull
#define PT_TYPE		8
#define PID		4242
#define ST_ALL	(MT_SB_ST_IP | MT_SB_ST_TID | MT_SB_ST_TIME | MT_SB_ST_CPU | \
    MT_SB_ST_IDENTIFIER)

/*
 * The synthetic program at CODE_ADDR:
 *   400000: mov ecx, N          b9 N
 *   400005: call 400010         e8 06 00 00 00
 *   40000a: dec ecx             ff c9
 *   40000c: jnz 400005          75 f7
 *   40000e: jmp *%rax           ff e0      (TIP.PGD ends a slice)
 *   400010: test cl, 1          f6 c1 01
 *   400013: jz 400016           74 01
 *   400015: nop                 90
 *   400016: ret                 c3
 * Each iteration: call, jz (taken when ecx is even), ret (compressed: a
 * taken TNT bit), jnz (taken but the last time).
 */
static void
synth_code(uint8_t code[24], uint32_t n)
{
	static const uint8_t tmpl[24] = {
		0xb9, 0, 0, 0, 0, 0xe8, 0x06, 0, 0, 0, 0xff, 0xc9,
		0x75, 0xf7, 0xff, 0xe0, 0xf6, 0xc1, 0x01, 0x74, 0x01, 0x90,
		0xc3, 0x90,
	};

	memcpy(code, tmpl, 24);
	mt_put_le32(code + 1, n);
}

static void
enc_pkt(struct pt_encoder *enc, enum pt_packet_type type, uint64_t v)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	switch (type) {
	case ppt_mode:
		pkt.payload.mode.leaf = pt_mol_exec;
		pkt.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
		break;
	case ppt_fup:
	case ppt_tip_pge:
		pkt.payload.ip.ipc = pt_ipc_sext_48;
		pkt.payload.ip.ip = v;
		break;
	case ppt_tip_pgd:
		pkt.payload.ip.ipc = pt_ipc_suppressed;
		break;
	case ppt_tsc:
		pkt.payload.tsc.tsc = v;
		break;
	default:
		break;
	}
	pt_enc_next(enc, &pkt);
}

/* TNT bits of @n iterations of the program. */
static int
enc_loop(struct pt_encoder *enc, uint32_t n)
{
	struct pt_packet pkt;
	uint64_t bits = 0;
	int nbits = 0;
	uint32_t ecx;

	for (ecx = n; ecx > 0; ecx--) {
		int b[3] = { (ecx & 1) == 0, 1, ecx != 1 };

		for (int i = 0; i < 3; i++) {
			bits = bits << 1 | (uint64_t)b[i];
			nbits++;
			if (nbits == 47 || (ecx == 1 && i == 2)) {
				memset(&pkt, 0, sizeof(pkt));
				pkt.type = ppt_tnt_64;
				pkt.payload.tnt.bit_size = (uint8_t)nbits;
				pkt.payload.tnt.payload = bits;
				if (pt_enc_next(enc, &pkt) < 0)
					return -1;
				bits = 0;
				nbits = 0;
			}
		}
	}
	return 0;
}

/*
 * One slice of PT: the program at @base runs @n iterations.  The first
 * slice of a buffer starts with PSB+ (TSC when @tsc, FUP @base); later
 * ones with TSC, MODE.exec and TIP.PGE @base.  @pgd ends it at the
 * jmp *%rax with TIP.PGD (the thread leaves the CPU).
 */
static int
enc_slice(struct pt_encoder *enc, int first, uint64_t base, uint32_t n,
    uint64_t tsc, int pgd)
{
	if (first) {
		enc_pkt(enc, ppt_psb, 0);
		if (tsc)
			enc_pkt(enc, ppt_tsc, tsc);
		enc_pkt(enc, ppt_mode, 0);
		enc_pkt(enc, ppt_fup, base);
		enc_pkt(enc, ppt_psbend, 0);
	} else {
		if (tsc)
			enc_pkt(enc, ppt_tsc, tsc);
		enc_pkt(enc, ppt_mode, 0);
		enc_pkt(enc, ppt_tip_pge, base);
	}
	if (enc_loop(enc, n) < 0)
		return -1;
	if (pgd)
		enc_pkt(enc, ppt_tip_pgd, 0);
	return 0;
}

static struct pt_encoder *
enc_new(uint8_t *buf, size_t cap)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + cap;
	return pt_alloc_encoder(&cfg);
}

static size_t
enc_done(struct pt_encoder *enc)
{
	uint64_t off = 0;

	pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	return (size_t)off;
}

/* PT for @n iterations: PSB+ at 400000, then TNT-64 packets. */
static size_t
synth_pt(uint8_t *buf, size_t cap, uint32_t n)
{
	struct pt_encoder *enc = enc_new(buf, cap);

	if (enc == NULL || enc_slice(enc, 1, CODE_ADDR, n, 0, 0) < 0) {
		pt_free_encoder(enc);
		return 0;
	}
	return enc_done(enc);
}

static void
pt_attrs(struct mt_pd_attr a[2], uint64_t ids[2])
{
	memset(a, 0, 2 * sizeof(*a));
	ids[0] = 1;
	ids[1] = 2;
	a[0].type = PT_TYPE;
	a[0].config = 0x2001;
	a[0].sample_period = 1;
	a[0].sample_type = ST_ALL;
	a[0].flags = MT_PD_ATTR_SAMPLE_ID_ALL | MT_PD_ATTR_EXCLUDE_KERNEL |
	    MT_PD_ATTR_EXCLUDE_HV;
	a[0].ids = &ids[0];
	a[0].nids = 1;
	a[1].type = 1;
	a[1].config = 9;
	a[1].sample_period = 1;
	a[1].sample_type = ST_ALL;
	a[1].flags = MT_PD_ATTR_SAMPLE_ID_ALL | MT_PD_ATTR_MMAP |
	    MT_PD_ATTR_COMM | MT_PD_ATTR_TASK | MT_PD_ATTR_MMAP2 |
	    MT_PD_ATTR_COMM_EXEC | MT_PD_ATTR_EXCLUDE_KERNEL;
	a[1].ids = &ids[1];
	a[1].nids = 1;
}

/* Sideband for the synthetic process: COMM, MMAP2 of @path, ITRACE_START. */
static int
put_sideband(struct mt_pd_writer *w, const char *path, uint64_t len)
{
	struct mt_wbuf b;
	struct mt_sb_rec r;
	int rc;

	mt_wbuf_init(&b);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_COMM;
	r.misc = MT_SB_MISC_COMM_EXEC;
	r.id = (struct mt_sb_id){ .pid = PID, .tid = PID, .time = 1,
	    .id = 2 };
	r.u.comm.pid = PID;
	r.u.comm.tid = PID;
	r.u.comm.comm = "synth";
	mt_sb_write(&b, &r, ST_ALL);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_MMAP2;
	r.misc = MT_SB_MISC_USER;
	r.id = (struct mt_sb_id){ .pid = PID, .tid = PID, .time = 2,
	    .id = 2 };
	r.u.mmap.pid = PID;
	r.u.mmap.tid = PID;
	r.u.mmap.addr = CODE_ADDR;
	r.u.mmap.len = len;
	r.u.mmap.prot = 5;
	r.u.mmap.flags = 2;
	r.u.mmap.filename = path;
	mt_sb_write(&b, &r, ST_ALL);
	memset(&r, 0, sizeof(r));
	r.type = MT_SB_ITRACE_START;
	r.id = (struct mt_sb_id){ .pid = PID, .tid = PID, .time = 3,
	    .id = 1 };
	r.u.task.pid = PID;
	r.u.task.tid = PID;
	mt_sb_write(&b, &r, ST_ALL);
	rc = b.err;
	for (size_t off = 0; rc == 0 && off < b.len;
	    off += mt_le16(b.p + off + 6))
		rc = mt_pd_writer_record(w, b.p + off, mt_le16(b.p + off + 6));
	mt_wbuf_release(&b);
	return rc;
}

/* A whole synthetic perf.data in @out. */
static int
synth_perf(struct mt_wbuf *out, int pipe, const char *code_path,
    uint32_t iters)
{
	static uint8_t pt[1 << 16];
	uint64_t priv[18] = { PT_TYPE, 0, 0, 0, 0, 0x400, 0x800, 0, 0, 0,
	    0x200, 0x3c000, 0, 0, 0x2, 0, 0, 0 };
	struct mt_pd_attr a[2];
	uint64_t ids[2];
	struct mt_pd_writer *w;
	struct mt_pd_auxtrace ax;
	struct mt_pd_build_id bid;
	char tmpl[] = "/tmp/mt-pd-XXXXXX";
	int fd, rc;
	struct stat st;

	pt_attrs(a, ids);
	memset(&ax, 0, sizeof(ax));
	ax.size = synth_pt(pt, sizeof(pt), iters);
	ax.data = pt;
	ax.tid = PID;
	ax.cpu = MT_PD_NONE;
	if (ax.size == 0 || mt_pd_writer_new(&w, pipe) < 0)
		return -1;
	rc = mt_pd_writer_attr(w, &a[0]);
	if (rc == 0)
		rc = mt_pd_writer_attr(w, &a[1]);
	if (rc == 0)
		rc = mt_pd_writer_time_conv(w, &(struct mt_pd_time_conv){
		    .time_shift = 10, .time_mult = 500 });
	if (rc == 0)
		rc = mt_pd_writer_auxtrace_info(w, MT_PD_AUXTRACE_INTEL_PT,
		    priv, 18);
	if (rc == 0)
		rc = put_sideband(w, code_path, 0x1000);
	if (rc == 0)
		rc = mt_pd_writer_auxtrace(w, &ax);
	if (rc == 0)
		rc = mt_pd_writer_finished_round(w);
	memset(&bid, 0, sizeof(bid));
	bid.pid = PID;
	bid.misc = MT_SB_MISC_USER;
	bid.len = 20;
	memset(bid.id, 0x5a, 20);
	bid.filename = (char *)(uintptr_t)"/nonexistent/synth";
	if (rc == 0)
		rc = mt_pd_writer_build_id(w, &bid);
	if (rc == 0)
		rc = mt_pd_writer_cpuid(w, "GenuineIntel,6,85,4");
	if (rc == 0)
		rc = mt_pd_writer_nr_cpus(w, 2, 2);
	fd = mkstemp(tmpl);
	if (fd < 0)
		rc = -1;
	if (rc == 0)
		rc = mt_pd_writer_finish(w, fd);
	mt_pd_writer_free(w);
	if (fd < 0)
		return -1;
	unlink(tmpl);
	mt_wbuf_init(out);
	if (rc == 0 && fstat(fd, &st) == 0) {
		uint8_t *p = malloc((size_t)st.st_size + 1);

		if (p != NULL && pread(fd, p, (size_t)st.st_size, 0) ==
		    st.st_size)
			mt_wbuf_put(out, p, (size_t)st.st_size);
		else
			rc = -1;
		free(p);
	}
	close(fd);
	return rc == 0 && out->err == 0 ? 0 : -1;
}

static void
check_synth(const struct mt_pd *pd, int pipe)
{
	const struct mt_pd_attr *pa;
	struct mt_sb_reader rd;
	struct mt_sb_rec r;

	CHECK_EQ_U64(pd->pipe, pipe);
	CHECK_EQ_U64(pd->nattrs, 2);
	CHECK_EQ_U64(pd->attrs[0].type, PT_TYPE);
	CHECK_EQ_U64(pd->attrs[0].config, 0x2001);
	CHECK_EQ_U64(pd->attrs[0].sample_type, ST_ALL);
	CHECK_EQ_U64(pd->attrs[1].nids, 1);
	CHECK_EQ_U64(pd->attrs[1].ids[0], 2);
	CHECK_EQ_U64(pd->attrs[1].flags & MT_PD_ATTR_MMAP2, MT_PD_ATTR_MMAP2);
	pa = mt_pd_pt_attr(pd);
	CHECK(pa == &pd->attrs[0]);
	CHECK_EQ_U64(pd->npriv, 18);
	CHECK_EQ_U64(mt_pd_priv(pd, MT_PD_IPT_MTC_FREQ_BITS, 0), 0x3c000);
	CHECK_EQ_U64(mt_pd_priv(pd, 40, 77), 77);
	CHECK(pd->has_time_conv);
	CHECK_EQ_U64(pd->time_conv.time_mult, 500);
	CHECK(pd->time_conv.extended);
	CHECK_EQ_U64(pd->naux, 1);
	CHECK_EQ_U64(pd->aux[0].tid, PID);
	CHECK_EQ_U64(pd->aux[0].cpu, MT_PD_NONE);
	CHECK(pd->aux[0].size % 8 == 0);
	CHECK_EQ_U64(pd->aux[0].data[0], 0x02);	/* PSB */
	CHECK_EQ_U64(pd->aux[0].data[1], 0x82);
	CHECK_EQ_U64(pd->nevents, 3);
	CHECK_EQ_U64(pd->events[2].attr, 0);	/* ITRACE_START: id 1 */
	CHECK_EQ_U64(pd->events[1].attr, 1);
	mt_sb_reader_init(&rd, pd->events[1].p, pd->events[1].size,
	    pd->attrs[1].sample_type, 1, pd->events[1].off);
	CHECK(mt_sb_next(&rd, &r) == 0);
	CHECK_EQ_U64(r.type, MT_SB_MMAP2);
	CHECK_EQ_U64(r.u.mmap.addr, CODE_ADDR);
	CHECK_EQ_U64(r.id.time, 2);
	CHECK_EQ_U64(pd->nbuild_ids, 1);
	CHECK_EQ_U64(pd->build_ids[0].len, 20);
	CHECK_EQ_U64(pd->build_ids[0].pid, PID);
	CHECK_EQ_U64(pd->build_ids[0].id[19], 0x5a);
	CHECK_STR(pd->build_ids[0].filename, "/nonexistent/synth");
	CHECK_STR(pd->cpuid, "GenuineIntel,6,85,4");
	CHECK_EQ_U64(pd->nr_cpus_online, 2);
}

static void
round_trip_file_mode(void)
{
	struct mt_wbuf f;
	struct mt_pd pd;
	struct mt_pd_diag d;

	CHECK(synth_perf(&f, 0, "/tmp/x", 100) == 0);
	CHECK_EQ_U64(mt_le64(f.p), MT_PD_MAGIC);
	CHECK_EQ_U64(mt_le64(f.p + 8), MT_PD_FILE_HDR_SIZE);
	mt_pd_init(&pd);
	CHECK(mt_pd_read_mem(&pd, f.p, f.len, &d) == 0);
	check_synth(&pd, 0);
	mt_pd_release(&pd);
	mt_wbuf_release(&f);
}

static void
round_trip_pipe_mode(void)
{
	struct mt_wbuf f;
	struct mt_pd pd;
	struct mt_pd_diag d;

	CHECK(synth_perf(&f, 1, "/tmp/x", 100) == 0);
	CHECK_EQ_U64(mt_le64(f.p + 8), MT_PD_PIPE_HDR_SIZE);
	mt_pd_init(&pd);
	CHECK(mt_pd_read_mem(&pd, f.p, f.len, &d) == 0);
	check_synth(&pd, 1);
	mt_pd_release(&pd);
	mt_wbuf_release(&f);
}

/*
 * Cut the file at every length: the reader fails with a message and an
 * offset inside the input, or (pipe mode, cut at a record boundary)
 * succeeds; never crashes (run under ASan).
 */
static void
truncation_at_every_offset(void)
{
	for (int pipe = 0; pipe <= 1; pipe++) {
		struct mt_wbuf f;
		size_t cut, nok = 0;

		CHECK(synth_perf(&f, pipe, "/tmp/x", 20) == 0);
		for (cut = 0; cut < f.len; cut++) {
			struct mt_pd pd;
			struct mt_pd_diag d;
			uint8_t *copy = malloc(cut ? cut : 1);
			int rc;

			memcpy(copy, f.p, cut);
			mt_pd_init(&pd);
			rc = mt_pd_read_mem(&pd, copy, cut, &d);
			if (rc == 0) {
				nok++;
				CHECK(pipe == 1);
			} else {
				CHECK(rc == -MT_E_TRUNC || rc == -MT_E_MAGIC ||
				    rc == -MT_E_CORRUPT);
				CHECK(d.off <= cut);
				CHECK(d.msg[0] != 0);
			}
			mt_pd_release(&pd);
			free(copy);
		}
		/* pipe: cuts between records are valid streams */
		CHECK(pipe == 0 || nok > 0);
		mt_wbuf_release(&f);
	}
}

static int
read_patched(const struct mt_wbuf *f, size_t at, uint64_t v, int width,
    struct mt_pd_diag *d)
{
	struct mt_pd pd;
	uint8_t *copy = malloc(f->len);
	int rc;

	memcpy(copy, f->p, f->len);
	if (width == 8)
		mt_put_le64(copy + at, v);
	else if (width == 4)
		mt_put_le32(copy + at, (uint32_t)v);
	else
		mt_put_le16(copy + at, (uint16_t)v);
	mt_pd_init(&pd);
	rc = mt_pd_read_mem(&pd, copy, f->len, d);
	mt_pd_release(&pd);
	free(copy);
	return rc;
}

static void
hostile_fields_fail_with_offset(void)
{
	struct mt_wbuf f;
	struct mt_pd_diag d;
	uint64_t doff;

	CHECK(synth_perf(&f, 0, "/tmp/x", 20) == 0);
	doff = mt_le64(f.p + 40);
	CHECK(read_patched(&f, 0, 0x1122334455667788ull, 8, &d) ==
	    -MT_E_MAGIC);
	CHECK(read_patched(&f, 0, __builtin_bswap64(MT_PD_MAGIC), 8, &d) ==
	    -MT_E_UNSUPP);
	CHECK(read_patched(&f, 16, 3, 8, &d) == -MT_E_CORRUPT);
	CHECK_EQ_U64(d.off, 16);
	CHECK(read_patched(&f, 24, ~0ull - 4, 8, &d) == -MT_E_TRUNC);
	CHECK_EQ_U64(d.off, 24);
	CHECK(read_patched(&f, 32, 1ull << 62, 8, &d) == -MT_E_TRUNC);
	CHECK(read_patched(&f, 48, ~0ull, 8, &d) == -MT_E_TRUNC);
	CHECK_EQ_U64(d.off, 40);
	/* ids of attr 0: offset past the end */
	CHECK(read_patched(&f, 104 + 128, 1ull << 40, 8, &d) == -MT_E_TRUNC);
	/* first record: size 0, then size past the data */
	CHECK(read_patched(&f, doff + 6, 0, 2, &d) == -MT_E_CORRUPT);
	CHECK_EQ_U64(d.off, doff);
	/* feature bitmap: a bit whose table entry does not exist */
	CHECK(read_patched(&f, 72 + 24, 1ull << 63, 8, &d) == -MT_E_TRUNC);
	/* AUXTRACE data size far too big */
	{
		struct mt_pd pd;

		mt_pd_init(&pd);
		CHECK(mt_pd_read_mem(&pd, f.p, f.len, &d) == 0);
		CHECK(pd.naux == 1);
		if (pd.naux == 1) {
			size_t at = (size_t)pd.aux[0].off + 8;

			mt_pd_release(&pd);
			CHECK(read_patched(&f, at, 1ull << 60, 8, &d) ==
			    -MT_E_TRUNC);
			CHECK_EQ_U64(d.off, at - 8);
		} else {
			mt_pd_release(&pd);
		}
	}
	mt_wbuf_release(&f);
	/* Tiny and empty inputs. */
	{
		struct mt_pd pd;

		mt_pd_init(&pd);
		CHECK(mt_pd_read_mem(&pd, "PERF", 4, &d) == -MT_E_TRUNC);
		CHECK(mt_pd_read_mem(&pd, "", 0, &d) == -MT_E_TRUNC);
		CHECK(mt_pd_read_mem(&pd, "MTSNAP\r\n", 8, &d) == -MT_E_MAGIC);
		CHECK(mt_pd_read_mem(&pd, "PERFFILE", 8, &d) == -MT_E_UNSUPP);
		mt_pd_release(&pd);
	}
}

static void
compressed_records_are_refused(void)
{
	uint8_t b[32];
	struct mt_pd pd;
	struct mt_pd_diag d;

	memset(b, 0, sizeof(b));
	mt_put_le64(b, MT_PD_MAGIC);
	mt_put_le64(b + 8, 16);
	mt_put_le32(b + 16, MT_PD_COMPRESSED);
	mt_put_le16(b + 22, 16);
	mt_pd_init(&pd);
	CHECK(mt_pd_read_mem(&pd, b, sizeof(b), &d) == -MT_E_UNSUPP);
	CHECK_EQ_U64(d.off, 16);
	mt_pd_release(&pd);
}

/* mt_pd_read_fd over a regular file and over a pipe gives what the
 * in-memory reader gives. */
static void
read_fd_file_and_pipe(void)
{
	char tmpl[] = "/tmp/mt-pd-fd-XXXXXX";
	struct mt_wbuf f;
	struct mt_pd pd;
	struct mt_pd_diag d;
	int fd, p[2];

	CHECK(synth_perf(&f, 1, "/tmp/x", 100) == 0);
	fd = mkstemp(tmpl);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(tmpl);
	CHECK(write(fd, f.p, f.len) == (ssize_t)f.len);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	mt_pd_init(&pd);
	CHECK(mt_pd_read_fd(&pd, fd, 0, &d) == 0);
	check_synth(&pd, 1);
	mt_pd_release(&pd);
	/* A limit below the size is refused. */
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	mt_pd_init(&pd);
	CHECK(mt_pd_read_fd(&pd, fd, 100, &d) == -MT_E_LIMIT);
	mt_pd_release(&pd);
	close(fd);
	/* Through a pipe (the writer end fits in the pipe buffer). */
	CHECK(f.len < 65536 && pipe(p) == 0);
	CHECK(write(p[1], f.p, f.len) == (ssize_t)f.len);
	close(p[1]);
	mt_pd_init(&pd);
	CHECK(mt_pd_read_fd(&pd, p[0], 0, &d) == 0);
	check_synth(&pd, 1);
	mt_pd_release(&pd);
	close(p[0]);
	/* A pipe longer than the limit: refused, saying the limit. */
	CHECK(pipe(p) == 0);
	CHECK(write(p[1], f.p, f.len) == (ssize_t)f.len);
	close(p[1]);
	mt_pd_init(&pd);
	CHECK(mt_pd_read_fd(&pd, p[0], 100, &d) == -MT_E_LIMIT);
	CHECK_STR(d.msg, "input larger than 100 bytes");
	mt_pd_release(&pd);
	close(p[0]);
	mt_wbuf_release(&f);
}

static int
write_file(const char *path, const void *p, size_t n)
{
	FILE *fp = fopen(path, "wb");
	int ok;

	if (fp == NULL)
		return -1;
	ok = fwrite(p, 1, n, fp) == n;
	ok = fclose(fp) == 0 && ok;
	return ok ? 0 : -1;
}

/* Code file and perf.data for @iters iterations into @dir. */
static int
write_synth(const char *dir, int pipe, uint32_t iters, const char *name)
{
	char code_path[4096], data_path[4096];
	uint8_t code[0x1000];
	struct mt_wbuf f;
	int rc;

	memset(code, 0xcc, sizeof(code));
	synth_code(code, iters);
	snprintf(code_path, sizeof(code_path), "%s/code.bin", dir);
	snprintf(data_path, sizeof(data_path), "%s/%s", dir, name);
	if (write_file(code_path, code, sizeof(code)) < 0)
		return -1;
	if (synth_perf(&f, pipe, code_path, iters) < 0)
		return -1;
	rc = write_file(data_path, f.p, f.len);
	mt_wbuf_release(&f);
	return rc;
}

/* Encode @r with ST_ALL and append it to @w. */
static int
put_rec(struct mt_pd_writer *w, const struct mt_sb_rec *r)
{
	struct mt_wbuf b;
	int rc;

	mt_wbuf_init(&b);
	rc = mt_sb_write(&b, r, ST_ALL);
	if (rc > 0)
		rc = mt_pd_writer_record(w, b.p, b.len);
	mt_wbuf_release(&b);
	return rc;
}

static int
put_comm(struct mt_pd_writer *w, uint32_t pid, uint32_t tid,
    const char *comm)
{
	struct mt_sb_rec r;

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_COMM;
	r.id = (struct mt_sb_id){ .pid = pid, .tid = tid, .time = 1,
	    .id = 2 };
	r.u.comm.pid = pid;
	r.u.comm.tid = tid;
	r.u.comm.comm = comm;
	return put_rec(w, &r);
}

static int
put_mmap2(struct mt_pd_writer *w, uint32_t pid, uint64_t addr,
    const char *path)
{
	struct mt_sb_rec r;

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_MMAP2;
	r.misc = MT_SB_MISC_USER;
	r.id = (struct mt_sb_id){ .pid = pid, .tid = pid, .time = 2,
	    .id = 2 };
	r.u.mmap.pid = pid;
	r.u.mmap.tid = pid;
	r.u.mmap.addr = addr;
	r.u.mmap.len = 0x1000;
	r.u.mmap.prot = 5;
	r.u.mmap.flags = 2;
	r.u.mmap.filename = path;
	return put_rec(w, &r);
}

/* A SWITCH record on @cpu at @time: @tid comes in, or goes out. */
static int
put_switch(struct mt_pd_writer *w, uint32_t cpu, uint64_t time,
    uint32_t pid, uint32_t tid, int out)
{
	struct mt_sb_rec r;

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_SWITCH;
	r.misc = out ? MT_SB_MISC_SWITCH_OUT : 0;
	r.id = (struct mt_sb_id){ .pid = pid, .tid = tid, .time = time,
	    .id = 2, .cpu = cpu };
	return put_rec(w, &r);
}

static int
write_code(const char *dir, const char *name, uint32_t iters, char *path,
    size_t n)
{
	uint8_t code[0x1000];

	memset(code, 0xcc, sizeof(code));
	synth_code(code, iters);
	snprintf(path, n, "%s/%s", dir, name);
	return write_file(path, code, sizeof(code));
}

/*
 * The other recordings the importer must handle, for the bats tests:
 *   snapshots  per-thread snapshot mode: two AUXTRACE records of one
 *              buffer (10 and 20 iterations of code20.bin)
 *   split      per-thread full-trace mode: 1000 iterations cut into
 *              three contiguous AUXTRACE records
 *   cpu        per-CPU with TSC and time conversion: threads 101 (code
 *              A at 0x400000: 3 iterations, then 2 more) and 102 (code
 *              B at 0x500000: 5, then 4 more) of process 100 swap CPUs:
 *              CPU 0 runs 101 then 102, CPU 1 runs 102 then 101; SWITCH
 *              records say when (perf time = TSC: shift 10, mult 1024);
 *              each AUXTRACE's reference is a TSC after its data, as
 *              perf record's rdtsc at copy-out (perf needs it)
 *   elf        like snapshots, plus a BUILD_ID feature entry naming
 *              elf_path with build-id elf_bid, mapped at 0x600000
 */
/* For the "elf" kind: the file and build-id (hex) the BUILD_ID feature
 * names. */
static const char *elf_path, *elf_bid;

static int
write_kind(const char *dir, const char *kind, int pipe, const char *name)
{
	static uint8_t pt[2][1 << 16];
	uint64_t priv[18] = { PT_TYPE, 0, 0, 0, 0, 0x400, 0x800, 0, 0, 0,
	    0x200, 0x3c000, 0, 0, 0x2, 0, 0, 0 };
	char pa[4096], pb[4096], out[4096];
	struct mt_pd_attr a[2];
	uint64_t ids[2];
	struct mt_pd_writer *w = NULL;
	struct mt_pd_auxtrace ax;
	struct mt_pd_time_conv tc = { .time_shift = 10, .time_mult = 1024,
	    .cap_user_time_zero = 1, .extended = 1 };
	struct pt_encoder *enc;
	size_t n[2] = { 0, 0 };
	int rc = 0, fd;

	pt_attrs(a, ids);
	snprintf(out, sizeof(out), "%s/%s", dir, name);
	if (strcmp(kind, "cpu") == 0) {
		a[0].config |= 0x400;
		a[1].flags |= MT_PD_ATTR_CONTEXT_SWITCH;
		priv[MT_PD_IPT_TIME_SHIFT] = 10;
		priv[MT_PD_IPT_TIME_MULT] = 1024;
		priv[MT_PD_IPT_CAP_USER_TIME_ZERO] = 1;
		priv[MT_PD_IPT_HAVE_SCHED_SWITCH] = 2;
		priv[MT_PD_IPT_PER_CPU_MMAPS] = 1;
		if (write_code(dir, "codeA.bin", 3, pa, sizeof(pa)) < 0 ||
		    write_code(dir, "codeB.bin", 5, pb, sizeof(pb)) < 0)
			return -1;
		/*
		 * CPU 0: 101 at TSC 1000, 102 at 3000 (resumed at its call,
		 * 4 more iterations).  CPU 1: 102 at TSC 2000, 101 at 4000
		 * (resumed at its call, 2 more iterations).
		 */
		enc = enc_new(pt[0], sizeof(pt[0]));
		if (enc == NULL || enc_slice(enc, 1, 0x400000, 3, 1000, 1) ||
		    enc_slice(enc, 0, 0x500005, 4, 3000, 1))
			rc = -1;
		n[0] = enc ? enc_done(enc) : 0;
		enc = enc_new(pt[1], sizeof(pt[1]));
		if (enc == NULL || enc_slice(enc, 1, 0x500000, 5, 2000, 1) ||
		    enc_slice(enc, 0, 0x400005, 2, 4000, 1))
			rc = -1;
		n[1] = enc ? enc_done(enc) : 0;
	} else {
		tc.cap_user_time_zero = 0;
		if (strcmp(kind, "split") == 0 ?
		    write_code(dir, "code.bin", 1000, pa, sizeof(pa)) < 0 :
		    write_code(dir, "code20.bin", 20, pa, sizeof(pa)) < 0)
			return -1;
		if (strcmp(kind, "snapshots") == 0 ||
		    strcmp(kind, "elf") == 0) {
			priv[MT_PD_IPT_SNAPSHOT_MODE] = 1;
			n[0] = synth_pt(pt[0], sizeof(pt[0]), 10);
			n[1] = synth_pt(pt[1], sizeof(pt[1]), 20);
		} else if (strcmp(kind, "split") == 0) {
			n[0] = synth_pt(pt[0], sizeof(pt[0]), 1000);
		} else {
			return -1;
		}
	}
	if (rc == 0)
		rc = mt_pd_writer_new(&w, pipe);
	if (rc == 0)
		rc = mt_pd_writer_attr(w, &a[0]);
	if (rc == 0)
		rc = mt_pd_writer_attr(w, &a[1]);
	if (rc == 0)
		rc = mt_pd_writer_time_conv(w, &tc);
	if (rc == 0)
		rc = mt_pd_writer_auxtrace_info(w, MT_PD_AUXTRACE_INTEL_PT,
		    priv, 18);
	memset(&ax, 0, sizeof(ax));
	if (strcmp(kind, "cpu") == 0) {
		if (rc == 0)
			rc = put_comm(w, 100, 101, "alpha");
		if (rc == 0)
			rc = put_comm(w, 100, 102, "beta");
		if (rc == 0)
			rc = put_mmap2(w, 100, 0x400000, pa);
		if (rc == 0)
			rc = put_mmap2(w, 100, 0x500000, pb);
		for (int c = 0; rc == 0 && c < 2; c++) {
			struct mt_sb_rec r;

			memset(&r, 0, sizeof(r));
			r.type = MT_SB_ITRACE_START;
			r.id = (struct mt_sb_id){ .pid = 100, .tid = 101u + c,
			    .time = 800, .id = 1, .cpu = (uint32_t)c };
			r.u.task.pid = 100;
			r.u.task.tid = 101u + (uint32_t)c;
			rc = put_rec(w, &r);
		}
		if (rc == 0)
			rc = put_switch(w, 0, 900, 100, 101, 0) |
			    put_switch(w, 1, 1900, 100, 102, 0) |
			    put_switch(w, 0, 1950, 100, 101, 1) |
			    put_switch(w, 1, 2950, 100, 102, 1) |
			    put_switch(w, 0, 2960, 100, 102, 0) |
			    put_switch(w, 1, 3900, 100, 101, 0) |
			    put_switch(w, 0, 3950, 100, 102, 1) |
			    put_switch(w, 1, 4950, 100, 101, 1);
		for (int c = 0; rc == 0 && c < 2; c++) {
			ax.size = n[c];
			ax.data = pt[c];
			ax.idx = (uint32_t)c;
			ax.tid = MT_PD_NONE;
			ax.cpu = (uint32_t)c;
			ax.reference = 5000;	/* TSC when copied out */
			rc = mt_pd_writer_auxtrace(w, &ax);
		}
	} else {
		if (rc == 0)
			rc = put_comm(w, PID, PID, "synth");
		if (rc == 0)
			rc = put_mmap2(w, PID, CODE_ADDR, pa);
		ax.tid = PID;
		ax.cpu = MT_PD_NONE;
		if (rc == 0 && strcmp(kind, "elf") == 0) {
			struct mt_pd_build_id b;
			size_t len = strlen(elf_bid) / 2;

			memset(&b, 0, sizeof(b));
			b.pid = PID;
			b.misc = MT_SB_MISC_USER;
			b.len = (uint8_t)(len > 20 ? 20 : len);
			for (size_t i = 0; i < b.len; i++)
				sscanf(elf_bid + 2 * i, "%2hhx", &b.id[i]);
			b.filename = (char *)(uintptr_t)elf_path;
			rc = put_mmap2(w, PID, 0x600000, elf_path);
			if (rc == 0)
				rc = mt_pd_writer_build_id(w, &b);
		}
		if (strcmp(kind, "snapshots") == 0 ||
		    strcmp(kind, "elf") == 0) {
			for (int i = 0; rc == 0 && i < 2; i++) {
				ax.size = n[i];
				ax.data = pt[i];
				rc = mt_pd_writer_auxtrace(w, &ax);
				ax.offset += (n[i] + 7) & ~(size_t)7;
			}
		} else {
			size_t cut[4] = { 0, 64, 200, n[0] };

			for (int i = 0; rc == 0 && i < 3; i++) {
				ax.size = cut[i + 1] - cut[i];
				ax.data = pt[0] + cut[i];
				ax.offset = cut[i];
				rc = mt_pd_writer_auxtrace(w, &ax);
			}
		}
	}
	if (rc == 0)
		rc = mt_pd_writer_finished_round(w);
	fd = rc == 0 ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
	if (fd < 0)
		rc = -1;
	if (rc == 0)
		rc = mt_pd_writer_finish(w, fd);
	if (fd >= 0 && close(fd) < 0)
		rc = -1;
	mt_pd_writer_free(w);
	return rc;
}

/* Count lines of a command's output; -1 if it failed. */
static long
count_lines(const char *cmd, const char *match)
{
	char line[512];
	long n = 0;
	FILE *fp = popen(cmd, "r");

	if (fp == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (match == NULL || strstr(line, match) != NULL)
			n++;
	if (pclose(fp) != 0)
		return -1;
	return n;
}

/*
 * perf's decoder (independent of libipt) on the synthetic file: 1000
 * iterations give 1000 calls, 1000 returns, 500 taken jz, 999 taken jnz.
 */
static void
perf_script_decodes_synthetic(void)
{
	char dir[] = "/tmp/mt-pd-perf-XXXXXX", cmd[8192];
	long calls, rets, all, errs;

	if (system("perf version >/dev/null 2>&1") != 0) {
		printf("# perf not installed: skipped\n");
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	for (int pipe = 0; pipe <= 1; pipe++) {
		CHECK(write_synth(dir, pipe, 1000, "p.data") == 0);
		/* Pipe-mode data goes through stdin (the regular-file
		 * quirk). */
		snprintf(cmd, sizeof(cmd), "%s perf script -i %s "
		    "--itrace=cr -F ip,addr,flags 2>/dev/null",
		    pipe ? "cat p.data |" : "", pipe ? "-" : "p.data");
		snprintf(cmd, sizeof(cmd), "cd %s && %s perf script -i %s "
		    "--itrace=cr -F flags,ip,addr 2>/dev/null", dir,
		    pipe ? "cat p.data |" : "", pipe ? "-" : "p.data");
		calls = count_lines(cmd, "call ");
		rets = count_lines(cmd, "return ");
		snprintf(cmd, sizeof(cmd), "cd %s && %s perf script -i %s "
		    "--itrace=b -F ip,addr 2>/dev/null", dir,
		    pipe ? "cat p.data |" : "", pipe ? "-" : "p.data");
		all = count_lines(cmd, NULL);
		snprintf(cmd, sizeof(cmd), "cd %s && %s perf script -i %s "
		    "--itrace=e 2>&1", dir, pipe ? "cat p.data |" : "",
		    pipe ? "-" : "p.data");
		errs = count_lines(cmd, "error");
		CHECK_EQ_U64(calls, 1000);
		CHECK_EQ_U64(rets, 1000);
		CHECK_EQ_U64(all, 1000 + 1000 + 500 + 999);
		CHECK_EQ_U64(errs, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

int
main(int argc, char **argv)
{
	/*
	 * test-perfdata --write-synth DIR [thread|snapshots|split|cpu]
	 * [--pipe]: DIR/KIND.data (pipe mode: KIND.pipe.data);
	 * test-perfdata --write-synth DIR elf FILE BUILD-ID-HEX
	 */
	if (argc >= 3 && strcmp(argv[1], "--write-synth") == 0) {
		const char *kind = argc >= 4 ? argv[3] : "thread";
		int pipe = argc >= 5 && strcmp(argv[4], "--pipe") == 0;

		if (strcmp(kind, "elf") == 0) {
			if (argc != 6)
				return 2;
			elf_path = argv[4];
			elf_bid = argv[5];
		}
		char name[64];

		snprintf(name, sizeof(name), "%s%s.data", kind,
		    pipe ? ".pipe" : "");
		if ((strcmp(kind, "thread") == 0 ?
		    write_synth(argv[2], pipe, 1000, name) :
		    write_kind(argv[2], kind, pipe, name)) < 0) {
			fprintf(stderr, "test-perfdata: cannot write %s/%s\n",
			    argv[2], name);
			return 1;
		}
		return 0;
	}
	TEST(round_trip_file_mode);
	TEST(round_trip_pipe_mode);
	TEST(truncation_at_every_offset);
	TEST(hostile_fields_fail_with_offset);
	TEST(compressed_records_are_refused);
	TEST(read_fd_file_and_pipe);
	TEST(perf_script_decodes_synthetic);
	return tap_done();
}
