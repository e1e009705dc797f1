/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for common/snap.c: a round trip of every chunk type, a clean
 * error for truncation at every offset and for every flipped bit, and the
 * version and unknown-chunk rules of docs/formats/snapshot.md.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xxhash.h>

#include "tap.h"
#include "buf.h"
#include "err.h"
#include "snap.h"

/* A modifiable copy of a string literal (the structs own char *). */
#define S(lit) ((char[]){ lit })

static void
fill(struct mt_snap *s)
{
	struct mt_snap_host h = { .vendor = "GenuineIntel", .family = 6,
	    .model = 0x8c, .stepping = 1, .cpuid_15 = { 2, 188, 0 },
	    .max_nonturbo_ratio = 28, .nr_cpus = 8, .kernel = S("6.1.0"),
	    .hostname = S("box") };
	static char cmdline[] = "demo\0-x";
	struct mt_snap_process p = { .pid = 42, .ppid = 1, .comm = S("demo"),
	    .exe = S("/usr/bin/demo"), .cmdline = cmdline,
	    .cmdline_len = 8 };
	struct mt_snap_thread t = { .pid = 42, .tid = 43, .comm = S("worker") };
	struct mt_snap_mmap m = { .pid = 42, .start = 0x400000,
	    .end = 0x401000, .pgoff = 0, .prot = 5, .flags = 2,
	    .build_id_len = 3, .build_id = { 0xab, 0xcd, 0xef },
	    .path = S("/usr/bin/demo") };
	static uint8_t pt[] = { 0x02, 0x82, 0x02, 0x82, 0x99, 0x01 };
	struct mt_snap_aux a = { .tid = 43, .cpu = MT_SNAP_NONE, .index = 2,
	    .flags = MT_SNAP_AUX_WRAPPED, .ring_size = 4096, .head = 6,
	    .len = sizeof(pt), .data = pt };
	static uint8_t sb[] = { 3, 0, 0, 0, 0, 0, 8, 0 };
	struct mt_snap_sideband b = { .cpu = MT_SNAP_NONE, .tid = 43,
	    .sample_type = 0x10087, .len = sizeof(sb),
	    .data = sb };
	struct mt_snap_trigger tr = { .time = 123456789, .pid = 42,
	    .tid = 43, .ip = 0x401136, .index = 2, .what = S("libm.so.6:cos") };
	static uint8_t code[] = { 0xc3 };
	struct mt_snap_blob bl = { .pid = 42, .kind = MT_SNAP_BLOB_VDSO,
	    .addr = 0x7fff0000, .name = S("[vdso]"), .len = 1,
	    .data = code, .time = 123456789 };
	static uint8_t elf[] = { 0x7f, 'E', 'L', 'F' };
	struct mt_snap_elf e = { .build_id_len = 2, .build_id = { 1, 2 },
	    .path = S("/lib/x.so"), .len = 4, .data = elf };
	static char perfmap[] = "1000 10 jit";
	struct mt_snap_text tx = { .kind = MT_SNAP_TEXT_PERFMAP, .pid = 42,
	    .len = 11, .data = perfmap };
	struct mt_snap_probe pr = { .pid = 42, .origin = MT_SNAP_PROBE_OTHER,
	    .addr = 0x401130, .offset = 0x1130, .path = S("/usr/bin/demo"),
	    .what = S("p_demo_0x1130") };

	CHECK(mt_snap_add_meta(s, "reason", "trigger") == 0);
	CHECK(mt_snap_set_host(s, &h) == 0);
	s->has_ptcfg = 1;
	s->ptcfg.backend = MT_SNAP_BK_EMULATE;
	s->ptcfg.config = MT_PT_CFG_TSC | MT_PT_CFG_CYC;
	s->ptcfg.user = 1;
	s->ptcfg.nfilters = 1;
	s->ptcfg.filters[0].a = 0x400000;
	s->ptcfg.filters[0].b = 0x426fff;
	s->ptcfg.filters[0].cfg = 1;
	s->has_timeconv = 1;
	s->timeconv.time_zero = 77;
	s->timeconv.time_mult = 600;
	s->timeconv.time_shift = 10;
	s->timeconv.cap_user_time_zero = 1;
	CHECK(mt_snap_add_process(s, &p) == 0);
	CHECK(mt_snap_add_thread(s, &t) == 0);
	CHECK(mt_snap_add_mmap(s, &m) == 0);
	CHECK(mt_snap_add_aux(s, &a) == 0);
	CHECK(mt_snap_add_sideband(s, &b) == 0);
	CHECK(mt_snap_add_trigger(s, &tr) == 0);
	CHECK(mt_snap_add_blob(s, &bl) == 0);
	CHECK(mt_snap_add_elf(s, &e) == 0);
	CHECK(mt_snap_add_text(s, &tx) == 0);
	CHECK(mt_snap_add_probe(s, &pr) == 0);
}

/* Write @s into a malloc'd buffer through a temporary file. */
static uint8_t *
to_bytes(const struct mt_snap *s, size_t *len)
{
	char path[] = "/tmp/mt-test-snap-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *p;
	off_t n;

	if (fd < 0)
		return NULL;
	unlink(path);
	if (mt_snap_write_fd(s, fd) < 0)
		return close(fd), NULL;
	n = lseek(fd, 0, SEEK_CUR);
	p = malloc((size_t)n);
	if (p == NULL || pread(fd, p, (size_t)n, 0) != n) {
		free(p);
		close(fd);
		return NULL;
	}
	close(fd);
	*len = (size_t)n;
	return p;
}

static void
roundtrip_every_chunk(void)
{
	struct mt_snap s, r;
	struct mt_snap_diag d;
	uint8_t *p;
	size_t len;

	mt_snap_init(&s);
	fill(&s);
	p = to_bytes(&s, &len);
	CHECK(p != NULL);
	mt_snap_init(&r);
	CHECK(mt_snap_read_mem(&r, p, len, &d) == 0);
	CHECK_EQ_U64(r.nchunks, 15);
	CHECK(r.major == 1 && r.minor == 2);
	CHECK_STR(mt_snap_meta_get(&r, "reason"), "trigger");
	CHECK(r.has_host && r.host.model == 0x8c && r.host.family == 6);
	CHECK_STR(r.host.vendor, "GenuineIntel");
	CHECK_STR(r.host.kernel, "6.1.0");
	CHECK_EQ_U64(r.host.cpuid_15[1], 188);
	CHECK(r.has_ptcfg && r.ptcfg.config == (MT_PT_CFG_TSC | MT_PT_CFG_CYC));
	CHECK_EQ_U64(r.ptcfg.filters[0].b, 0x426fff);
	CHECK(r.has_timeconv && r.timeconv.time_mult == 600);
	CHECK(r.nprocs == 1 && r.procs[0].cmdline_len == 8);
	CHECK(r.nprocs == 1 && memcmp(r.procs[0].cmdline, "demo\0-x\0", 8) == 0);
	CHECK(r.nthreads == 1 && r.threads[0].tid == 43);
	CHECK_STR(r.nthreads ? r.threads[0].comm : NULL, "worker");
	CHECK(r.nmmaps == 1 && r.mmaps[0].build_id_len == 3 &&
	    r.mmaps[0].build_id[2] == 0xef);
	CHECK(r.naux == 1 && r.aux[0].len == 6 && r.aux[0].data[4] == 0x99 &&
	    r.aux[0].flags == MT_SNAP_AUX_WRAPPED && r.aux[0].index == 2);
	CHECK(r.nsideband == 1 && r.sideband[0].sample_type == 0x10087);
	CHECK(r.ntriggers == 1 && r.triggers[0].ip == 0x401136);
	CHECK_STR(r.ntriggers ? r.triggers[0].what : NULL, "libm.so.6:cos");
	CHECK(r.nblobs == 1 && r.blobs[0].data[0] == 0xc3 &&
	    r.blobs[0].time == 123456789);
	CHECK(r.nelfs == 1 && r.elfs[0].len == 4);
	CHECK(r.ntexts == 1 && r.texts[0].len == 11);
	CHECK_STR(r.ntexts ? r.texts[0].data : NULL, "1000 10 jit");
	CHECK(r.nprobes == 1 && r.probes[0].pid == 42 &&
	    r.probes[0].origin == MT_SNAP_PROBE_OTHER &&
	    r.probes[0].addr == 0x401130 && r.probes[0].offset == 0x1130);
	CHECK_STR(r.nprobes ? r.probes[0].path : NULL, "/usr/bin/demo");
	CHECK_STR(r.nprobes ? r.probes[0].what : NULL, "p_demo_0x1130");
	mt_snap_release(&r);
	mt_snap_release(&s);
	free(p);
}

/*
 * Does @d's message name its offset once, as "at offset N", so that a
 * program can print it after the file's name as it is?
 */
static int
names_offset_once(const struct mt_snap_diag *d)
{
	char want[40];
	const char *at = strstr(d->msg, " at offset ");

	snprintf(want, sizeof(want), " at offset %llu",
	    (unsigned long long)d->off);
	return at != NULL && strncmp(at, want, strlen(want)) == 0 &&
	    (at[strlen(want)] < '0' || at[strlen(want)] > '9') &&
	    strstr(at + 1, " at offset ") == NULL;
}

static void
truncation_at_every_offset(void)
{
	struct mt_snap s, r;
	struct mt_snap_diag d;
	uint8_t *p;
	size_t len, i;
	int bad = 0;

	mt_snap_init(&s);
	fill(&s);
	p = to_bytes(&s, &len);
	CHECK(p != NULL);
	for (i = 0; p && i < len; i++) {
		int rc;

		mt_snap_init(&r);
		memset(&d, 0, sizeof(d));
		rc = mt_snap_read_mem(&r, p, i, &d);
		if (i < 8 ? rc != -MT_E_MAGIC : rc != -MT_E_TRUNC)
			bad++;
		if (i >= 8 && d.off > i)
			bad++;
		if (!names_offset_once(&d)) {
			printf("# cut at %zu: '%s' (offset %llu)\n", i, d.msg,
			    (unsigned long long)d.off);
			bad++;
		}
		mt_snap_release(&r);
	}
	CHECK_EQ_U64(bad, 0);
	mt_snap_release(&s);
	free(p);
}

static void
every_flipped_bit_is_caught(void)
{
	struct mt_snap s, r;
	struct mt_snap_diag d;
	uint8_t *p;
	size_t len, i;
	int bit, missed = 0;

	mt_snap_init(&s);
	fill(&s);
	p = to_bytes(&s, &len);
	CHECK(p != NULL);
	for (i = 0; p && i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			p[i] ^= (uint8_t)(1u << bit);
			mt_snap_init(&r);
			if (mt_snap_read_mem(&r, p, len, &d) == 0 ||
			    !names_offset_once(&d))
				missed++;
			mt_snap_release(&r);
			p[i] ^= (uint8_t)(1u << bit);
		}
	}
	CHECK_EQ_U64(missed, 0);
	mt_snap_release(&s);
	free(p);
}

/* Append a chunk of @type/@flags with an empty payload to @w. */
static void
raw_chunk(struct mt_wbuf *w, uint32_t type, uint32_t flags,
    const void *pay, size_t n)
{
	uint8_t hdr[16];
	XXH3_state_t *st = XXH3_createState();

	mt_put_le32(hdr, type);
	mt_put_le32(hdr + 4, flags);
	mt_put_le64(hdr + 8, n);
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, hdr, 16);
	XXH3_64bits_update(st, pay, n);
	mt_wbuf_put(w, hdr, 16);
	mt_wbuf_put(w, pay, n);
	mt_wbuf_u64le(w, XXH3_64bits_digest(st));
	XXH3_freeState(st);
}

static void
header(struct mt_wbuf *w, uint16_t major)
{
	uint8_t h[32];

	memcpy(h, MT_SNAP_MAGIC, 8);
	mt_put_le16(h + 8, major);
	mt_put_le16(h + 10, 7);
	mt_put_le32(h + 12, 32);
	mt_put_le64(h + 16, 0);
	mt_put_le64(h + 24, XXH3_64bits(h, 24));
	mt_wbuf_put(w, h, 32);
}

static void
unknown_optional_chunk_skipped_required_refused(void)
{
	struct mt_wbuf w;
	struct mt_snap r;
	struct mt_snap_diag d;
	uint8_t cnt[8];

	mt_wbuf_init(&w);
	header(&w, 1);
	raw_chunk(&w, 77, 0, "xyz", 3);
	mt_put_le64(cnt, 1);
	raw_chunk(&w, MT_SNAP_END, 0, cnt, 8);
	mt_snap_init(&r);
	CHECK(mt_snap_read_mem(&r, w.p, w.len, &d) == 0);
	CHECK_EQ_U64(r.skipped, 1);
	CHECK_EQ_U64(r.minor, 7);
	mt_snap_release(&r);
	mt_wbuf_release(&w);

	mt_wbuf_init(&w);
	header(&w, 1);
	raw_chunk(&w, 77, MT_SNAP_CF_REQUIRED, "xyz", 3);
	raw_chunk(&w, MT_SNAP_END, 0, cnt, 8);
	mt_snap_init(&r);
	CHECK(mt_snap_read_mem(&r, w.p, w.len, &d) == -MT_E_UNSUPP);
	CHECK_EQ_U64(d.off, 32);
	CHECK_STR(d.msg, "unknown required chunk type 77 at offset 32");
	mt_snap_release(&r);
	mt_wbuf_release(&w);
}

static void
newer_major_refused(void)
{
	struct mt_wbuf w;
	struct mt_snap r;
	struct mt_snap_diag d;

	mt_wbuf_init(&w);
	header(&w, 2);
	mt_snap_init(&r);
	CHECK(mt_snap_read_mem(&r, w.p, w.len, &d) == -MT_E_VERSION);
	CHECK_EQ_U64(d.off, 8);
	CHECK_STR(d.msg, "snapshot format version 2.7 at offset 8 is not "
	    "supported (this reader: 1.x)");
	mt_snap_release(&r);
	mt_wbuf_release(&w);
}

static void
checksum_error_names_chunk(void)
{
	struct mt_snap s, r;
	struct mt_snap_diag d;
	uint8_t *p;
	size_t len;

	mt_snap_init(&s);
	fill(&s);
	p = to_bytes(&s, &len);
	CHECK(p != NULL);
	/* The AUX chunk is the one before END; its payload ends 8 + 24
	 * (END chunk) + 8 (its checksum) bytes from the end. */
	p[len - 8 - 24 - 8 - 1] ^= 0x40;
	mt_snap_init(&r);
	CHECK(mt_snap_read_mem(&r, p, len, &d) == -MT_E_CHECKSUM);
	CHECK_EQ_U64(d.type, MT_SNAP_AUX);
	CHECK(strstr(d.msg, "checksum mismatch in AUX chunk at offset ") ==
	    d.msg && names_offset_once(&d));
	mt_snap_release(&r);
	mt_snap_release(&s);
	free(p);
}

static void
short_payload_is_corrupt(void)
{
	struct mt_wbuf w;
	struct mt_snap r;
	struct mt_snap_diag d;
	uint8_t cnt[8], pay[4] = { 1, 0, 0, 0 };

	mt_wbuf_init(&w);
	header(&w, 1);
	raw_chunk(&w, MT_SNAP_THREAD, 0, pay, sizeof(pay));
	mt_put_le64(cnt, 1);
	raw_chunk(&w, MT_SNAP_END, 0, cnt, 8);
	mt_snap_init(&r);
	CHECK(mt_snap_read_mem(&r, w.p, w.len, &d) == -MT_E_CORRUPT);
	CHECK_STR(d.msg, "corrupt THREAD chunk at offset 32");
	mt_snap_release(&r);
	mt_wbuf_release(&w);
}

/*
 * The read end of a pipe into which a child writes @s (mt_snap_write_fd;
 * it exits 0 if that worked), its pid in *@pid; -1 when the pipe or the
 * fork fails.  The caller closes the fd and reaps the child.
 */
static int
pipe_from_writer(const struct mt_snap *s, pid_t *pid)
{
	int fds[2];

	if (pipe(fds) < 0)
		return -1;
	*pid = fork();
	if (*pid == 0) {
		close(fds[0]);
		_exit(mt_snap_write_fd(s, fds[1]) == 0 ? 0 : 1);
	}
	close(fds[1]);
	if (*pid < 0) {
		close(fds[0]);
		return -1;
	}
	return fds[0];
}

/* The child writer of pipe_from_writer() exited 0. */
static int
writer_ok(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0;
}

static void
reads_from_a_pipe(void)
{
	struct mt_snap s, r;
	struct mt_snap_diag d;
	pid_t pid;
	int fd;

	mt_snap_init(&s);
	fill(&s);
	fd = pipe_from_writer(&s, &pid);
	CHECK(fd >= 0);
	mt_snap_init(&r);
	CHECK(fd >= 0 && mt_snap_read_fd(&r, fd, &d) == 0);
	CHECK(r.naux == 1 && r.aux[0].len == 6);
	CHECK(r.nprobes == 1 && r.probes[0].addr == 0x401130);
	if (fd >= 0) {
		close(fd);
		CHECK(writer_ok(pid));
	}
	mt_snap_release(&r);
	mt_snap_release(&s);
}

/*
 * A temporary file holding @len bytes of @p, its fd (unlinked) standing
 * at its start, or -1.
 */
static int
tmp_file(const uint8_t *p, size_t len)
{
	char path[] = "/tmp/mt-test-snap-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	unlink(path);
	if (write(fd, p, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * mt_snap_map_fd(): a file is mapped and AUX, BLOB and ELF data point
 * into the mapping (not copies), every field as mt_snap_read_fd() reads
 * it; a truncated or damaged file fails as from memory, at the same
 * offset; a pipe is read (no mapping).  Freeing is checked by the
 * sanitizer build (a data pointer into the mapping passed to free()).
 */
static void
map_fd_uses_the_file_in_place(void)
{
	struct mt_snap s, r, m;
	struct mt_snap_diag d, dm;
	uint8_t *p;
	size_t len, i;
	int fd, bad = 0, ok;
	pid_t pid;

	mt_snap_init(&s);
	fill(&s);
	p = to_bytes(&s, &len);
	CHECK(p != NULL);
	fd = p ? tmp_file(p, len) : -1;
	CHECK(fd >= 0);
	mt_snap_init(&r);
	mt_snap_init(&m);
	CHECK(mt_snap_read_mem(&r, p, len, &d) == 0);
	CHECK(mt_snap_map_fd(&m, fd, &dm) == 0);
	CHECK(m.map != NULL && m.maplen == len);
	ok = m.map != NULL && m.naux == 1 && m.nblobs == 1 && m.nelfs == 1 &&
	    m.nsideband == 1 && m.ntexts == 1 && r.naux == 1 &&
	    r.nblobs == 1 && r.nelfs == 1 && r.nsideband == 1;
	CHECK(ok);
	if (!ok)
		goto done;
	CHECK(m.naux == 1 && m.aux[0].data >= m.map &&
	    m.aux[0].data + m.aux[0].len <= m.map + len);
	CHECK(m.nblobs == 1 && m.blobs[0].data >= m.map &&
	    m.blobs[0].data + m.blobs[0].len <= m.map + len);
	CHECK(m.nelfs == 1 && m.elfs[0].data >= m.map &&
	    m.elfs[0].data + m.elfs[0].len <= m.map + len);
	/* the other chunk types are copies, as from a pipe */
	CHECK(m.nsideband == 1 && (m.sideband[0].data < m.map ||
	    m.sideband[0].data >= m.map + len));
	CHECK(m.naux == r.naux && m.aux[0].len == r.aux[0].len &&
	    memcmp(m.aux[0].data, r.aux[0].data, r.aux[0].len) == 0 &&
	    m.aux[0].flags == r.aux[0].flags && m.aux[0].head == r.aux[0].head);
	CHECK(m.blobs[0].len == r.blobs[0].len && memcmp(m.blobs[0].data,
	    r.blobs[0].data, r.blobs[0].len) == 0 &&
	    m.blobs[0].time == r.blobs[0].time &&
	    m.blobs[0].addr == r.blobs[0].addr);
	CHECK(m.elfs[0].len == r.elfs[0].len &&
	    memcmp(m.elfs[0].data, r.elfs[0].data, r.elfs[0].len) == 0);
	CHECK(m.nsideband == r.nsideband && m.sideband[0].len ==
	    r.sideband[0].len && memcmp(m.sideband[0].data,
	    r.sideband[0].data, r.sideband[0].len) == 0);
	CHECK(m.ntexts == 1 && m.ntexts == r.ntexts);
	CHECK_STR(m.ntexts ? m.texts[0].data : NULL, "1000 10 jit");
	CHECK_EQ_U64(m.nchunks, r.nchunks);
done:
	mt_snap_release(&m);
	mt_snap_release(&r);
	CHECK(m.map == NULL);
	if (fd >= 0)
		close(fd);
	/* cut short at every offset, and one byte changed in each chunk */
	for (i = 1; p && i < len; i++) {
		int rc, rcm;

		fd = tmp_file(p, i);
		if (fd < 0) {
			bad++;
			break;
		}
		mt_snap_init(&r);
		mt_snap_init(&m);
		memset(&d, 0, sizeof(d));
		memset(&dm, 0, sizeof(dm));
		rc = mt_snap_read_mem(&r, p, i, &d);
		rcm = mt_snap_map_fd(&m, fd, &dm);
		if (rc != rcm || rcm == 0 || d.off != dm.off ||
		    strcmp(d.msg, dm.msg) != 0)
			bad++;
		mt_snap_release(&m);
		mt_snap_release(&r);
		/* read(2) rather than mapped: the same error */
		mt_snap_init(&r);
		memset(&dm, 0, sizeof(dm));
		if (lseek(fd, 0, SEEK_SET) != 0 ||
		    mt_snap_read_fd(&r, fd, &dm) != rc || d.off != dm.off ||
		    strcmp(d.msg, dm.msg) != 0) {
			printf("# cut at %zu: '%s' read, '%s' in memory\n", i,
			    dm.msg, d.msg);
			bad++;
		}
		mt_snap_release(&r);
		close(fd);
	}
	CHECK_EQ_U64(bad, 0);
	for (i = 0; p && i < len; i += 7) {
		int rc, rcm;

		p[i] ^= 0x40;
		fd = tmp_file(p, len);
		mt_snap_init(&r);
		mt_snap_init(&m);
		rc = mt_snap_read_mem(&r, p, len, &d);
		rcm = fd >= 0 ? mt_snap_map_fd(&m, fd, &dm) : 1;
		if (rc != rcm || rcm == 0 || d.off != dm.off)
			bad++;
		mt_snap_release(&m);
		mt_snap_release(&r);
		if (fd >= 0)
			close(fd);
		p[i] ^= 0x40;
	}
	CHECK_EQ_U64(bad, 0);
	/* a descriptor past the file's start: read from there, not mapped */
	fd = p ? tmp_file((const uint8_t *)"junk!", 5) : -1;
	CHECK(fd >= 0 && lseek(fd, 0, SEEK_END) == 5 &&
	    write(fd, p, len) == (ssize_t)len && lseek(fd, 5, SEEK_SET) == 5);
	mt_snap_init(&m);
	CHECK(mt_snap_map_fd(&m, fd, &dm) == 0);
	CHECK(m.map == NULL && m.naux == 1 && m.aux[0].len == 6);
	mt_snap_release(&m);
	if (fd >= 0)
		close(fd);
	/* a pipe: read, nothing mapped */
	fd = pipe_from_writer(&s, &pid);
	CHECK(fd >= 0);
	mt_snap_init(&m);
	CHECK(fd >= 0 && mt_snap_map_fd(&m, fd, &dm) == 0);
	CHECK(m.map == NULL && m.naux == 1 && m.aux[0].len == 6);
	if (fd >= 0) {
		close(fd);
		CHECK(writer_ok(pid));
	}
	mt_snap_release(&m);
	mt_snap_release(&s);
	free(p);
}

/*
 * Large blobs (AUX, ELF, TEXT) take over the chunk's payload buffer instead
 * of being copied: the bytes, the NUL after them and the chunks around them
 * must come out as written, from memory and from a pipe.
 */
static void
large_blobs_roundtrip(void)
{
	struct mt_snap s, r;
	struct mt_snap_aux a = { .tid = 7, .cpu = MT_SNAP_NONE,
	    .ring_size = 1u << 20 };
	char path[] = "/bin/big";
	struct mt_snap_elf e = { .path = path };
	struct mt_snap_text t = { .kind = 1, .pid = 7 };
	struct mt_snap_diag d;
	size_t n = (1u << 20) + 13, i, len;
	uint8_t *big = malloc(n), *p;
	char *txt = malloc(n + 1);
	int k;
	pid_t pid;

	CHECK(big != NULL && txt != NULL);
	if (big == NULL || txt == NULL)
		return;
	for (i = 0; i < n; i++) {
		big[i] = (uint8_t)(i * 131 + (i >> 9));
		txt[i] = (char)('a' + i % 26);
	}
	txt[n] = '\0';
	mt_snap_init(&s);
	a.data = big;
	a.len = n;
	CHECK(mt_snap_add_aux(&s, &a) == 0);
	a.len = 1000;		/* a small one after it: copied */
	a.tid = 8;
	CHECK(mt_snap_add_aux(&s, &a) == 0);
	e.data = big;
	e.len = n - 5;
	CHECK(mt_snap_add_elf(&s, &e) == 0);
	t.data = txt;
	t.len = n;
	CHECK(mt_snap_add_text(&s, &t) == 0);
	p = to_bytes(&s, &len);
	CHECK(p != NULL);
	for (k = 0; p != NULL && k < 2; k++) {
		mt_snap_init(&r);
		if (k == 0) {
			CHECK(mt_snap_read_mem(&r, p, len, &d) == 0);
		} else {
			int fd = pipe_from_writer(&s, &pid);

			CHECK(fd >= 0 && mt_snap_read_fd(&r, fd, &d) == 0);
			if (fd >= 0) {
				close(fd);
				CHECK(writer_ok(pid));
			}
		}
		CHECK(r.naux == 2 && r.nelfs == 1 && r.ntexts == 1);
		if (r.naux == 2 && r.nelfs == 1 && r.ntexts == 1) {
			CHECK(r.aux[0].len == n && r.aux[0].tid == 7 &&
			    memcmp(r.aux[0].data, big, n) == 0 &&
			    r.aux[0].data[n] == 0);
			CHECK(r.aux[1].len == 1000 && r.aux[1].tid == 8 &&
			    memcmp(r.aux[1].data, big, 1000) == 0);
			CHECK(r.elfs[0].len == n - 5 &&
			    memcmp(r.elfs[0].data, big, n - 5) == 0);
			CHECK_STR(r.elfs[0].path, "/bin/big");
			CHECK(r.texts[0].len == n &&
			    strlen(r.texts[0].data) == n &&
			    memcmp(r.texts[0].data, txt, n) == 0);
		}
		mt_snap_release(&r);
	}
	mt_snap_release(&s);
	free(p);
	free(big);
	free(txt);
}

static void
huge_length_from_a_pipe_is_truncation_not_allocation(void)
{
	struct mt_wbuf w;
	struct mt_snap r;
	struct mt_snap_diag d;
	uint8_t hdr[16];
	int fds[2];

	mt_wbuf_init(&w);
	header(&w, 1);
	mt_put_le32(hdr, MT_SNAP_AUX);
	mt_put_le32(hdr + 4, 0);
	mt_put_le64(hdr + 8, 8ull << 30);	/* 8 GiB announced */
	mt_wbuf_put(&w, hdr, 16);
	mt_wbuf_put(&w, "only a few bytes", 16);
	CHECK(pipe(fds) == 0);
	CHECK(write(fds[1], w.p, w.len) == (ssize_t)w.len);
	close(fds[1]);
#ifndef __SANITIZE_ADDRESS__
	{
		/* 1 GiB of address space: allocating the announced length
		 * would fail with -MT_E_NOMEM instead of reading on. */
		struct rlimit rl = { 1ull << 30, 1ull << 30 };
		struct rlimit old;

		getrlimit(RLIMIT_AS, &old);
		rl.rlim_max = old.rlim_max;
		if (old.rlim_max != RLIM_INFINITY && old.rlim_max < rl.rlim_cur)
			rl.rlim_cur = old.rlim_max;
		setrlimit(RLIMIT_AS, &rl);
		mt_snap_init(&r);
		CHECK(mt_snap_read_fd(&r, fds[0], &d) == -MT_E_TRUNC);
		setrlimit(RLIMIT_AS, &old);
	}
#else
	mt_snap_init(&r);
	CHECK(mt_snap_read_fd(&r, fds[0], &d) == -MT_E_TRUNC);
#endif
	CHECK_STR(d.msg, "truncated in AUX chunk at offset 32: length "
	    "8589934592 exceeds the input");
	close(fds[0]);
	mt_snap_release(&r);
	mt_wbuf_release(&w);
}

/*
 * A BLOB of format 1.0 (nothing after the data) reads with time 0; one
 * of 1.1 with its time, also when the data is large enough to be taken
 * over from the payload, and when a later minor appends more after it.
 */
static void
blob_time_absent_present_and_extended(void)
{
	static uint8_t pay[28 + 70000 + 16];
	size_t big, ext, n;
	struct mt_snap_diag d;
	struct mt_snap r;
	struct mt_wbuf w;
	uint8_t cnt[8];

	for (big = 0; big < 2; big++)
		for (ext = 0; ext < 3; ext++) {
			uint64_t len = big ? 70000 : 3;

			memset(pay, 0, sizeof(pay));
			mt_put_le32(pay, 7);			/* pid */
			mt_put_le32(pay + 4, MT_SNAP_BLOB_JIT);	/* kind */
			mt_put_le64(pay + 8, 0x1000);		/* addr */
			mt_put_le32(pay + 16, 0);		/* name "" */
			mt_put_le64(pay + 20, len);
			pay[28] = 0xc3;
			pay[28 + len - 1] = 0x90;
			n = 28 + (size_t)len;
			if (ext > 0) {				/* 1.1 */
				mt_put_le64(pay + n, 555);
				n += 8;
			}
			if (ext > 1) {				/* later */
				mt_put_le64(pay + n, 0xdeadbeef);
				n += 8;
			}
			mt_wbuf_init(&w);
			header(&w, 1);
			raw_chunk(&w, MT_SNAP_BLOB, 0, pay, n);
			mt_put_le64(cnt, 1);
			raw_chunk(&w, MT_SNAP_END, 0, cnt, 8);
			mt_snap_init(&r);
			CHECK(mt_snap_read_mem(&r, w.p, w.len, &d) == 0);
			CHECK(r.nblobs == 1 && r.blobs[0].len == len &&
			    r.blobs[0].data[0] == 0xc3 &&
			    r.blobs[0].data[len - 1] == 0x90);
			CHECK_EQ_U64(r.nblobs ? r.blobs[0].time : 1,
			    ext ? 555 : 0);
			mt_snap_release(&r);
			mt_wbuf_release(&w);
		}
}

/* Rss of the mapping of this process that starts at @base, in KiB. */
static long
mapping_rss_kib(const void *base)
{
	char line[512], want[32];
	FILE *f = fopen("/proc/self/smaps", "r");
	long rss = -1;
	int in = 0;

	if (f == NULL)
		return -1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)base);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, want, strlen(want)) == 0)
			in = 1;
		else if (in && strncmp(line, "Rss:", 4) == 0) {
			rss = atol(line + 4);
			break;
		}
	}
	fclose(f);
	return rss;
}

/*
 * mt_snap_drop: the pages of data in the mapping leave the process (the
 * mapping's Rss in /proc/self/smaps falls by exactly their count), the
 * data read back the same; data outside the mapping are left alone.
 */
static void
drop_unmaps_the_pages_of_mapped_data(void)
{
	static char path[] = "/x";
	struct mt_snap_elf e = { .build_id_len = 4, .build_id = { 1, 2, 3, 4 },
	    .path = path };
	struct mt_snap s, m;
	struct mt_snap_diag d;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a, b;
	unsigned sum = 0;
	long before, after;
	uint8_t *p;
	size_t len, i;
	int fd;

	mt_snap_init(&s);
	mt_snap_init(&m);
	e.len = 16 * pg + 100;
	e.data = malloc(e.len);
	CHECK(e.data != NULL);
	if (e.data == NULL)
		return;
	for (i = 0; i < e.len; i++)
		e.data[i] = (uint8_t)(i * 7 + 1);
	CHECK(mt_snap_add_elf(&s, &e) == 0);
	p = to_bytes(&s, &len);
	fd = p ? tmp_file(p, len) : -1;
	CHECK(fd >= 0 && mt_snap_map_fd(&m, fd, &d) == 0);
	CHECK(m.map != NULL && m.nelfs == 1 && m.elfs[0].len == e.len);
	if (m.map != NULL && m.nelfs == 1 && m.elfs[0].len == e.len) {
		for (i = 0; i < e.len; i++)	/* every page mapped */
			sum += m.elfs[0].data[i];
		before = mapping_rss_kib(m.map);
		mt_snap_drop(&m, m.elfs[0].data, m.elfs[0].len);
		after = mapping_rss_kib(m.map);
		a = (uintptr_t)m.elfs[0].data & ~(pg - 1);
		b = ((uintptr_t)m.elfs[0].data + e.len + pg - 1) & ~(pg - 1);
		CHECK(before > 0 && after >= 0);
		CHECK_EQ_U64(before - after, (b - a) / 1024);
		CHECK(memcmp(m.elfs[0].data, e.data, e.len) == 0);
		/* not in the mapping: nothing to drop */
		mt_snap_drop(&m, e.data, e.len);
		CHECK(e.data[5] == (uint8_t)(5 * 7 + 1));
	}
	CHECK(sum > 0);
	if (fd >= 0)
		close(fd);
	free(p);
	free(e.data);
	mt_snap_release(&m);
	mt_snap_release(&s);
}

/* VmHWM of this process in KiB, or -1. */
static long
peak_rss_kib(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	long kib = -1;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmHWM:", 6) == 0)
			kib = atol(line + 6);
	if (f != NULL)
		fclose(f);
	return kib;
}

/*
 * mt_snap_map_fd checks a large chunk a window at a time, each window's
 * pages unmapped once hashed: reading a snapshot with 16 MiB of ELF
 * raises the peak RSS by far less than the chunk (all of it when the
 * file was mapped populated, before session 10), and the data read
 * back the same.  The peak is reset first (/proc/self/clear_refs 5).
 */
static void
map_fd_checks_a_chunk_a_window_at_a_time(void)
{
	static char path[] = "/x";
	struct mt_snap_elf e = { .build_id_len = 4, .build_id = { 1, 2, 3, 4 },
	    .path = path };
	struct mt_snap s, m;
	struct mt_snap_diag d;
	long before, after;
	uint8_t *p;
	size_t len, i;
	FILE *cr;
	int fd;

	mt_snap_init(&s);
	mt_snap_init(&m);
	e.len = 16u << 20;
	e.data = malloc(e.len);
	CHECK(e.data != NULL);
	if (e.data == NULL)
		return;
	for (i = 0; i < e.len; i++)
		e.data[i] = (uint8_t)(i * 7 + 1);
	CHECK(mt_snap_add_elf(&s, &e) == 0);
	p = to_bytes(&s, &len);
	fd = p ? tmp_file(p, len) : -1;
	cr = fopen("/proc/self/clear_refs", "w");
	CHECK(cr != NULL && fputs("5", cr) >= 0 && fclose(cr) == 0);
	before = peak_rss_kib();
	CHECK(fd >= 0 && mt_snap_map_fd(&m, fd, &d) == 0);
	after = peak_rss_kib();
	CHECK(before > 0 && after >= before);
	CHECK(after - before < 8 * 1024);
	CHECK(m.map != NULL && m.nelfs == 1 && m.elfs[0].len == e.len);
	CHECK(m.nelfs == 1 && memcmp(m.elfs[0].data, e.data, e.len) == 0);
	if (fd >= 0)
		close(fd);
	free(p);
	free(e.data);
	mt_snap_release(&m);
	mt_snap_release(&s);
}

int
main(void)
{
	TEST(roundtrip_every_chunk);
	TEST(truncation_at_every_offset);
	TEST(every_flipped_bit_is_caught);
	TEST(unknown_optional_chunk_skipped_required_refused);
	TEST(newer_major_refused);
	TEST(checksum_error_names_chunk);
	TEST(short_payload_is_corrupt);
	TEST(reads_from_a_pipe);
	TEST(huge_length_from_a_pipe_is_truncation_not_allocation);
	TEST(large_blobs_roundtrip);
	TEST(map_fd_uses_the_file_in_place);
	TEST(drop_unmaps_the_pages_of_mapped_data);
	TEST(map_fd_checks_a_chunk_a_window_at_a_time);
	TEST(blob_time_absent_present_and_extended);
	return tap_done();
}
