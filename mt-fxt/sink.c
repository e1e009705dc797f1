/* SPDX-License-Identifier: MIT */
/*
 * Output sink (see sink.h).  Plain output gathers in a 64 KiB buffer
 * that is written out when full.  Compressed output is always one gzip
 * member, made one of three ways:
 *
 * - At SINK_FAST_LEVEL (2, the default), every full buffer goes into one
 *   ISA-L igzip stream at its level 1: on mt's FXT four to five times
 *   zlib's level 1 speed and twice libdeflate's, 15-20% larger than
 *   zlib's level 2 output, in constant memory (bench/RESULTS.md,
 *   "Session 9 ... mt-fxt").  An output of at most SINK_SMALL bytes is
 *   held and compressed by libdeflate at its level 1 instead: ISA-L
 *   picks its code for the CPU on the first call of each function, with
 *   two CPUID instructions each, which on a VM leave to the hypervisor
 *   (7-15 us each here), more than libdeflate takes for such an output;
 *   and libdeflate's level 2 clears a match finder twice the size of its
 *   level 1's, about 50 more page faults in a fresh process, 0.04 ms of
 *   unzip's row, for an output 3.4% smaller (bench/RESULTS.md, "Session
 *   10 ... mt-fxt").  For the same reason ISA-L is loaded (dlopen) only
 *   when an output needs it: linked, its mapping and relocation cost
 *   every run about 0.05 ms.  Where it cannot be loaded (a host without
 *   Debian's libisal2, or a libisal.so.2 without isal_deflate), a larger
 *   output goes the way of the other levels below, at zlib's (or
 *   libdeflate's) level 2.
 * - At the other levels, an output of at most SINK_WHOLE bytes (256 KiB)
 *   is held whole and compressed at the end by libdeflate in one call:
 *   about twice zlib's speed at the same level, and no zlib state to set
 *   up (bench/RESULTS.md, "Session 8").
 * - Past SINK_WHOLE the held bytes go into a zlib stream, and so does
 *   every full buffer after them: constant memory whatever the size.
 *
 * Why one member and not libdeflate's members of a fixed size (tried in
 * session 8): Perfetto's trace processor inflates into 32 MiB buffers and
 * hands a buffer to the FXT tokenizer when it is full or when a gzip
 * member ends, and the tokenizer's events keep slices of their buffer
 * until the trace is sorted at its end; so each member costs Perfetto a
 * 32 MiB allocation however little it holds (docs/formats/fxt.md).
 *
 * The file itself (temporary name, rename, devices and standard output
 * written in place) is common/outfile.h's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zlib.h>

#include "err.h"
#include "outfile.h"
#include "sink.h"

#define SINK_BUF (64 * 1024)		/* plain output; zlib's output */
#define SINK_WHOLE (256 * 1024)		/* compressed in one call up to */
#define SINK_SMALL (32 * 1024)		/* the same at SINK_FAST_LEVEL */
/*
 * ISA-L's level-1 buffer (its hash table and the tokens of a block):
 * the small size (84 KiB) takes mt-fxt on mruby's row 1% more CPU than
 * the medium one (148 KiB) and 0.3 MiB less peak RSS (2.9 against 3.2
 * MiB, item 6's limit there), for 0.3% smaller output.
 */
#define SINK_ISAL_LVL1 ISAL_DEF_LVL1_SMALL

struct sink {
	struct mt_outfile of;	/* the file, its temporary name */
	int level;		/* gzip level, 0: plain */
	int zon;		/* the zlib stream is started */
	z_stream z;		/* its state */
	struct isal_zstream *iz;	/* SINK_FAST_LEVEL's stream, once
					 * started (owned) */
	uint8_t *ilevel;	/* its level buffer, SINK_ISAL_LVL1 bytes */
	void *ilib;		/* ISA-L's handle (dlopen) */
	void (*iinit)(struct isal_zstream *);	/* its isal_deflate_init */
	int (*ideflate)(struct isal_zstream *);	/* its isal_deflate */
	int noisal;		/* 1: ISA-L could not be loaded */
	uint8_t *buf;		/* pending uncompressed bytes */
	size_t len, cap;	/* in buf; its size */
	uint8_t *zbuf;		/* compressed output */
	uint64_t bytes;		/* uncompressed bytes accepted */
	int err;		/* sticky -MT_E_* */
	char msg[256];		/* reason for err */
};

static int
fail(struct sink *s, int rc, const char *fmt, ...)
{
	va_list ap;

	if (s->err)
		return s->err;
	va_start(ap, fmt);
	vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	s->err = rc;
	return rc;
}

static int
write_all(struct sink *s, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(s->of.fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return fail(s, -MT_E_IO, "cannot write '%s': %s",
			    s->of.path, strerror(errno));
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
deflate_out(struct sink *s, const uint8_t *p, size_t n, int flush)
{
	int zr;

	s->z.next_in = (Bytef *)(uintptr_t)p;
	s->z.avail_in = (uInt)n;
	do {
		s->z.next_out = s->zbuf;
		s->z.avail_out = SINK_BUF;
		zr = deflate(&s->z, flush);
		if (zr == Z_STREAM_ERROR)
			return fail(s, -MT_E_IO, "zlib: %s",
			    s->z.msg ? s->z.msg : "deflate failed");
		if (write_all(s, s->zbuf, SINK_BUF - s->z.avail_out) < 0)
			return s->err;
	} while (s->z.avail_out == 0 || (flush == Z_FINISH &&
	    zr != Z_STREAM_END));
	return 0;
}

/* Start the zlib stream (the output outgrew SINK_WHOLE). */
static int
zlib_start(struct sink *s)
{
	if ((s->zbuf = malloc(SINK_BUF)) == NULL)
		return fail(s, -MT_E_NOMEM, "out of memory");
	if (deflateInit2(&s->z, s->level, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		return fail(s, -MT_E_NOMEM, "zlib: cannot start deflate");
	s->zon = 1;
	return 0;
}

/*
 * Load ISA-L (once): 0, or -1 when it cannot be loaded (not installed
 * where mt-fxt runs, or without isal_deflate): the default level then
 * goes through zlib at level 2, as the other levels do.
 */
static int
isal_load(struct sink *s)
{
	if (s->ideflate != NULL)
		return 0;
	if (s->noisal)
		return -1;
	s->ilib = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
	if (s->ilib != NULL) {
		*(void **)&s->iinit = dlsym(s->ilib, "isal_deflate_init");
		*(void **)&s->ideflate = dlsym(s->ilib, "isal_deflate");
	}
	if (s->ilib == NULL || s->iinit == NULL || s->ideflate == NULL) {
		if (s->ilib != NULL)
			dlclose(s->ilib);
		s->ilib = NULL;
		s->ideflate = NULL;
		s->noisal = 1;
		return -1;
	}
	return 0;
}

/* Start ISA-L's stream (s->iz); it is loaded. */
static int
isal_start(struct sink *s)
{
	struct isal_zstream *z;

	if ((z = s->iz = malloc(sizeof(*z))) == NULL ||
	    (s->ilevel = malloc(SINK_ISAL_LVL1)) == NULL ||
	    (s->zbuf = malloc(SINK_BUF)) == NULL)
		return fail(s, -MT_E_NOMEM, "out of memory");
	s->iinit(z);
	z->gzip_flag = IGZIP_GZIP;	/* RFC 1952: OS 255, XFL 0 */
	z->level = 1;
	z->level_buf = s->ilevel;
	z->level_buf_size = SINK_ISAL_LVL1;
	return 0;
}

/*
 * SINK_FAST_LEVEL: @n bytes at @p (the pending ones, or a caller's, see
 * sink_write()) into the ISA-L stream (started on the first call), the
 * last ones with @fin.
 */
static int
isal_out(struct sink *s, const uint8_t *p, size_t n, int fin)
{
	struct isal_zstream *z;
	int rc;

	if (s->iz == NULL && isal_start(s) < 0)
		return s->err;
	z = s->iz;
	z->next_in = (uint8_t *)(uintptr_t)p;
	z->avail_in = (uint32_t)n;
	z->end_of_stream = fin;
	do {
		z->next_out = s->zbuf;
		z->avail_out = SINK_BUF;
		if ((rc = s->ideflate(z)) != COMP_OK)
			return fail(s, -MT_E_IO, "isa-l: deflate failed (%d)",
			    rc);
		if (write_all(s, s->zbuf, SINK_BUF - z->avail_out) < 0)
			return s->err;
	} while (z->avail_out == 0 || (fin &&
	    z->internal_state.state != ZSTATE_END));
	return 0;
}

/*
 * The whole output, at most SINK_WHOLE bytes, as one gzip member: the
 * deflate stream from libdeflate at the sink's level (a small output at
 * SINK_FAST_LEVEL: libdeflate's level 1), the header and trailer as
 * libdeflate_gzip_compress() writes them (no mtime, XFL 4 below level 2
 * and 2 from level 8, OS 255), the CRC-32 from zlib.  libdeflate's own
 * CRC-32 picks its code with CPUID on its first call, and a CPUID leaves
 * to the hypervisor on a VM: about 0.03 ms of every small output's run
 * (bench/RESULTS.md, "Session 10 ... mt-fxt"); zlib's table-driven CRC
 * has no such start-up.
 */
static int
whole(struct sink *s)
{
	struct libdeflate_compressor *c;
	uint8_t *out = NULL, *t;
	size_t cap, n = 0;
	uint32_t crc;
	int lvl = s->level == SINK_FAST_LEVEL && s->len <= SINK_SMALL ? 1 :
	    s->level;

	c = libdeflate_alloc_compressor(lvl);
	if (c != NULL) {
		cap = libdeflate_deflate_compress_bound(c, s->len) + 18;
		out = malloc(cap);
		if (out != NULL)
			n = libdeflate_deflate_compress(c, s->buf, s->len,
			    out + 10, cap - 18);
	}
	if (out == NULL)
		fail(s, -MT_E_NOMEM, "out of memory");
	else if (n == 0)	/* cannot be: cap is libdeflate's bound */
		fail(s, -MT_E_IO, "libdeflate: output over its bound");
	if (s->err)
		goto out;
	memcpy(out, "\x1f\x8b\x08\0\0\0\0\0\0\xff", 10);
	out[8] = lvl < 2 ? 4 : lvl >= 8 ? 2 : 0;
	crc = (uint32_t)crc32(0, s->buf, (uInt)s->len);
	t = out + 10 + n;
	t[0] = (uint8_t)crc;
	t[1] = (uint8_t)(crc >> 8);
	t[2] = (uint8_t)(crc >> 16);
	t[3] = (uint8_t)(crc >> 24);
	t[4] = (uint8_t)s->len;
	t[5] = (uint8_t)(s->len >> 8);
	t[6] = (uint8_t)(s->len >> 16);
	t[7] = (uint8_t)(s->len >> 24);
	write_all(s, out, n + 18);
out:
	free(out);
	libdeflate_free_compressor(c);
	return s->err;
}

/*
 * Write the pending bytes out: plain, into the ISA-L stream (unless the
 * whole output is small), into the zlib stream (started when the output
 * outgrows the buffer), or at the end of an output that never did, as
 * one libdeflate member.
 */
static int
drain(struct sink *s, int flush)
{
	int rc;

	if (s->err)
		return s->err;
	if (s->level == 0)
		rc = write_all(s, s->buf, s->len);
	else if (s->level == SINK_FAST_LEVEL && (s->iz != NULL ||
	    flush != Z_FINISH || s->len > SINK_SMALL) && isal_load(s) == 0)
		rc = isal_out(s, s->buf, s->len, flush == Z_FINISH);
	else if (!s->zon && flush == Z_FINISH)
		rc = whole(s);
	else if (!s->zon && zlib_start(s) < 0)
		rc = s->err;
	else
		rc = deflate_out(s, s->buf, s->len, flush);
	s->len = 0;
	if (rc == 0 && s->zon && s->cap > SINK_BUF) {
		/* zlib goes on with a smaller buffer: give the pages back */
		free(s->buf);
		s->cap = SINK_BUF;
		if ((s->buf = malloc(s->cap)) == NULL)
			rc = fail(s, -MT_E_NOMEM, "out of memory");
	}
	return rc;
}

int
sink_open(struct sink **sp, const char *path, int level, char *msg, size_t n)
{
	struct sink *s = calloc(1, sizeof(*s));
	int hold = level > 0 && level != SINK_FAST_LEVEL, rc;

	*sp = NULL;
	if (s == NULL || (s->buf = malloc(hold ? SINK_WHOLE :
	    SINK_BUF)) == NULL) {
		snprintf(msg, n, "out of memory");
		free(s);
		return -MT_E_NOMEM;
	}
	s->level = level;
	s->cap = hold ? SINK_WHOLE : SINK_BUF;
	rc = mt_outfile_open(&s->of, path, 0666, 0);
	if (rc == -MT_E_NOMEM) {
		snprintf(msg, n, "out of memory");
		goto bad;
	}
	if (rc < 0) {
		/* A device or FIFO (/dev/null) is opened, never replaced. */
		snprintf(msg, n, "cannot %s '%s': %s", s->of.in_place ?
		    "open" : "create", path, strerror(errno));
		goto bad;
	}
	*sp = s;
	return 0;
bad:
	mt_outfile_abort(&s->of);
	free(s->buf);
	free(s);
	return rc;
}

int
sink_write(struct sink *s, const void *p, size_t n)
{
	const uint8_t *b = p;

	if (s->err)
		return s->err;
	s->bytes += n;
	/*
	 * A large write with nothing pending (the FXT writer's 64 KiB
	 * chunks) goes out from the caller's bytes, not copied first, where
	 * nothing holds the output: plain, and once the ISA-L stream runs.
	 */
	if (s->len == 0 && n >= SINK_BUF / 2 && (s->level == 0 ||
	    (s->level == SINK_FAST_LEVEL && s->iz != NULL)))
		return s->level == 0 ? write_all(s, b, n) :
		    isal_out(s, b, n, 0);
	while (n > 0) {
		size_t k = s->cap - s->len;

		if (k > n)
			k = n;
		memcpy(s->buf + s->len, b, k);
		s->len += k;
		b += k;
		n -= k;
		if (s->len == s->cap && drain(s, Z_NO_FLUSH) < 0)
			return s->err;
	}
	return 0;
}

int
sink_puts(struct sink *s, const char *str)
{
	return sink_write(s, str, strlen(str));
}

int
sink_printf(struct sink *s, const char *fmt, ...)
{
	char small[512], *big = NULL;
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return fail(s, -MT_E_INVAL, "bad format");
	if ((size_t)n < sizeof(small))
		return sink_write(s, small, (size_t)n);
	big = malloc((size_t)n + 1);
	if (big == NULL)
		return fail(s, -MT_E_NOMEM, "out of memory");
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	rc = sink_write(s, big, (size_t)n);
	free(big);
	return rc;
}

uint64_t
sink_bytes(const struct sink *s)
{
	return s->bytes;
}

int
sink_fxt(void *ctx, const void *p, size_t n)
{
	return sink_write(ctx, p, n);
}

int
sink_renamable(const struct sink *s)
{
	return !s->of.in_place;
}

int
sink_set_path(struct sink *s, const char *path)
{
	char *np;

	if (s->of.in_place)
		return -MT_E_INVAL;
	np = strdup(path);
	if (np == NULL)
		return -MT_E_NOMEM;
	free(s->of.path);
	s->of.path = np;
	return 0;
}

int
sink_close(struct sink *s, int commit, char *msg, size_t n)
{
	char *name;
	int rc;

	if (s == NULL)
		return 0;
	if (commit)
		drain(s, Z_FINISH);
	if (s->zon)
		deflateEnd(&s->z);
	if (commit && !s->err) {
		name = strdup(s->of.path);	/* the commit frees it */
		if (mt_outfile_commit(&s->of) < 0)
			fail(s, -MT_E_IO, "cannot write '%s': %s",
			    name ? name : "output", strerror(errno));
		free(name);
	} else {
		mt_outfile_abort(&s->of);
	}
	rc = s->err;
	if (rc && msg)
		snprintf(msg, n, "%s", s->msg);
	free(s->buf);
	free(s->zbuf);
	free(s->iz);
	free(s->ilevel);
	if (s->ilib != NULL)
		dlclose(s->ilib);
	free(s);
	return rc;
}
