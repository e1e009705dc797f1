/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for what mt-decode holds in memory while it decodes a
 * snapshot file mapped by mt_snap_map_fd (bench/RESULTS.md, session 10):
 * the trace's pages behind the decoder are unmapped as it goes, with
 * libipt's block decoder and with the cached one, and the stream is the
 * one decoded from a copy in memory.  Which pages are mapped comes from
 * /proc/self/pagemap (bit 63: present).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <intel-pt.h>

#include "tap.h"
#include "err.h"
#include "events.h"
#include "snap.h"
#include "../../mt-decode/decode.h"

#define CODE	0x400000ull
#define PT_LEN	(8u << 20)	/* past any page-cache folio (<= 2 MiB) */

/* jmp *%rbx: one block per TIP packet */
static const uint8_t code[2] = { 0xff, 0xe3 };

static void
put(struct pt_encoder *enc, enum pt_packet_type t, uint64_t ip)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = t;
	if (t == ppt_fup || t == ppt_tip) {
		p.payload.ip.ipc = pt_ipc_sext_48;
		p.payload.ip.ip = ip;
	} else if (t == ppt_mode) {
		p.payload.mode.leaf = pt_mol_exec;
		p.payload.mode.bits.exec.csl = 1;
	}
	if (pt_enc_next(enc, &p) < 0)
		abort();
}

/* PSB+ at the jump */
static void
psb(struct pt_encoder *enc)
{
	put(enc, ppt_psb, 0);
	put(enc, ppt_mode, 0);
	put(enc, ppt_fup, CODE);
	put(enc, ppt_psbend, 0);
}

/*
 * PT_LEN bytes at most: the jump to itself, PSB+ every 4 KiB as the
 * hardware's (psb_period) and the software backends' traces have it.
 */
static size_t
make_pt(uint8_t *pt)
{
	struct pt_encoder *enc;
	struct pt_config cfg;
	uint64_t off = 0, next = 0;

	pt_config_init(&cfg);
	cfg.begin = pt;
	cfg.end = pt + PT_LEN;
	enc = pt_alloc_encoder(&cfg);
	if (enc == NULL)
		abort();
	while (off + 64 < PT_LEN) {
		if (off >= next) {
			psb(enc);
			next += 4096;
		}
		put(enc, ppt_tip, CODE);
		pt_enc_get_offset(enc, &off);
	}
	pt_free_encoder(enc);
	return (size_t)off;
}

/* Write a snapshot of the jump and its trace; its path, or NULL. */
static char *
write_snap(void)
{
	static char path[] = "/tmp/mt-test-decode-mem.XXXXXX";
	struct mt_snap_blob b = { .pid = 0, .kind = MT_SNAP_BLOB_MEMORY,
	    .addr = CODE, .name = (char *)(uintptr_t)"code",
	    .len = sizeof(code), .data = (uint8_t *)(uintptr_t)code };
	struct mt_snap_aux a = { .tid = 42, .cpu = MT_SNAP_NONE };
	struct mt_snap_thread t = { .pid = 40, .tid = 42,
	    .comm = (char *)(uintptr_t)"jmp" };
	struct mt_snap s;
	uint8_t *pt = malloc(PT_LEN);
	int fd = mkstemp(path), rc = -1;

	if (pt != NULL && fd >= 0) {
		a.len = a.head = a.ring_size = make_pt(pt);
		a.data = pt;
		mt_snap_init(&s);
		s.has_ptcfg = 1;
		s.ptcfg.backend = MT_SNAP_BK_INTEL_PT;
		s.ptcfg.user = 1;
		mt_snap_add_blob(&s, &b);
		mt_snap_add_thread(&s, &t);
		mt_snap_add_aux(&s, &a);
		rc = mt_snap_write_fd(&s, fd);
		mt_snap_release(&s);
	}
	free(pt);
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		unlink(path);
		return NULL;
	}
	return path;
}

/* Pages of [@p, @p + @len) mapped in this process, or -1. */
static long
present_pages(const void *p, size_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p / pg, b = ((uintptr_t)p + len + pg - 1) / pg;
	uint64_t e;
	long n = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return -1;
	for (; a < b; a++) {
		if (pread(fd, &e, sizeof(e), (off_t)(a * sizeof(e))) !=
		    (ssize_t)sizeof(e)) {
			n = -1;
			break;
		}
		n += (e >> 63) & 1;
	}
	close(fd);
	return n;
}

/* Decode @s (-j 1, the cached decoder unless @no_cache) into a string. */
static char *
decode(const struct mt_snap *s, int no_cache)
{
	struct decode_opts o = { .source = "t.snap", .jobs = 1,
	    .no_cache = no_cache, .out_fd = -1 };
	struct decode_diag d = { 0, NULL };
	struct decode_stats st;
	struct mt_evw *w = NULL;
	FILE *f = tmpfile();
	char *buf = NULL;
	long n;
	int rc;

	memset(&st, 0, sizeof(st));
	rc = f != NULL ? mt_evw_new(&w, fileno(f)) : -1;
	if (rc == 0)
		rc = decode_run(&o, s, w, &st, &d);
	if (mt_evw_free(w) == 0 && rc == 0 && (n = ftell(f)) > 0) {
		rewind(f);
		buf = calloc(1, (size_t)n + 1);
		if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
	}
	if (f != NULL)
		fclose(f);
	return buf;
}

/*
 * 8 MiB of trace decoded from the mapped file: its first half is no
 * longer mapped at the end (all of it was, before the decoder dropped
 * the pages behind it), by either decoder, and the stream is the one
 * decoded from the file read into memory.
 */
static void
trace_behind_the_decoder_is_unmapped(void)
{
	char *path = write_snap(), *mapped, *read;
	struct mt_snap m, r;
	struct mt_snap_diag d;
	int fd, no_cache;

	CHECK(path != NULL);
	if (path == NULL)
		return;
	for (no_cache = 0; no_cache < 2; no_cache++) {
		fd = open(path, O_RDONLY);
		mt_snap_init(&m);
		mt_snap_init(&r);
		CHECK(mt_snap_map_fd(&m, fd, &d) == 0);
		CHECK(lseek(fd, 0, SEEK_SET) == 0);
		CHECK(mt_snap_read_fd(&r, fd, &d) == 0);
		close(fd);
		CHECK(m.map != NULL && m.naux == 1);
		CHECK(m.aux[0].len > PT_LEN - 4096);
		mapped = decode(&m, no_cache);
		read = decode(&r, no_cache);
		CHECK(mapped != NULL && read != NULL);
		CHECK(mapped != NULL && read != NULL &&
		    strcmp(mapped, read) == 0);
		CHECK(strstr(read, "\nend ") != NULL);
		CHECK(present_pages(m.aux[0].data, m.aux[0].len / 2) == 0);
		/* (the test sees mapped pages: a byte read maps its page) */
		CHECK(*(volatile const uint8_t *)m.aux[0].data == 0x02);
		CHECK(present_pages(m.aux[0].data, m.aux[0].len / 2) > 0);
		free(mapped);
		free(read);
		mt_snap_release(&m);
		mt_snap_release(&r);
	}
	unlink(path);
}

int
main(void)
{
	TEST(trace_behind_the_decoder_is_unmapped);
	return tap_done();
}
