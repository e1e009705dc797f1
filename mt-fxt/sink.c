/* SPDX-License-Identifier: MIT */
/*
 * Output sink (see sink.h).  Plain output gathers in a 64 KiB buffer
 * that is written out when full.  Compressed output gathers in a buffer
 * of SINK_MEMBER bytes; each full buffer, and the rest at the end, is
 * compressed by libdeflate into one complete gzip member (RFC 1952: a
 * gzip file is a series of members, its data their data concatenated)
 * and written out.  Memory stays constant whatever the output's size;
 * each member starts with an empty window, which costs little at this
 * size.  The file itself (temporary name, rename, devices and standard
 * output written in place) is common/outfile.h's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libdeflate.h>

#include "err.h"
#include "outfile.h"
#include "sink.h"

#define SINK_BUF (64 * 1024)		/* plain output's buffer */
#define SINK_MEMBER (128 * 1024)	/* uncompressed bytes per gzip member */

struct sink {
	struct mt_outfile of;	/* the file, its temporary name */
	struct libdeflate_compressor *z;	/* NULL: plain output */
	uint8_t *buf;		/* pending uncompressed bytes */
	size_t len, cap;	/* in buf; its size */
	uint8_t *zbuf;		/* one compressed member */
	size_t zcap;
	uint64_t members;	/* gzip members written */
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

/* Write the pending bytes out, as one gzip member when compressing. */
static int
drain(struct sink *s)
{
	size_t n;
	int rc;

	if (s->err)
		return s->err;
	if (s->z == NULL) {
		rc = write_all(s, s->buf, s->len);
		s->len = 0;
		return rc;
	}
	n = libdeflate_gzip_compress(s->z, s->buf, s->len, s->zbuf, s->zcap);
	s->len = 0;
	if (n == 0)	/* cannot happen: zcap is libdeflate's bound */
		return fail(s, -MT_E_IO, "libdeflate: member over its bound");
	s->members++;
	return write_all(s, s->zbuf, n);
}

int
sink_open(struct sink **sp, const char *path, int level, char *msg, size_t n)
{
	struct sink *s = calloc(1, sizeof(*s));
	int rc;

	*sp = NULL;
	if (s == NULL) {
		snprintf(msg, n, "out of memory");
		return -MT_E_NOMEM;
	}
	s->cap = SINK_BUF;
	if (level > 0) {
		s->z = libdeflate_alloc_compressor(level);
		s->cap = SINK_MEMBER;
		if (s->z != NULL)
			s->zcap = libdeflate_gzip_compress_bound(s->z, s->cap);
		if (s->z == NULL || (s->zbuf = malloc(s->zcap)) == NULL) {
			snprintf(msg, n, "out of memory");
			rc = -MT_E_NOMEM;
			goto bad;
		}
	}
	if ((s->buf = malloc(s->cap)) == NULL) {
		snprintf(msg, n, "out of memory");
		rc = -MT_E_NOMEM;
		goto bad;
	}
	rc = mt_outfile_open(&s->of, path, 0666, 0);
	if (rc == -MT_E_NOMEM) {
		snprintf(msg, n, "out of memory");
		goto bad_file;
	}
	if (rc < 0) {
		/* A device or FIFO (/dev/null) is opened, never replaced. */
		snprintf(msg, n, "cannot %s '%s': %s", s->of.in_place ?
		    "open" : "create", path, strerror(errno));
		goto bad_file;
	}
	*sp = s;
	return 0;
bad_file:
	mt_outfile_abort(&s->of);
bad:
	libdeflate_free_compressor(s->z);
	free(s->buf);
	free(s->zbuf);
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
	while (n > 0) {
		size_t k = s->cap - s->len;

		if (k > n)
			k = n;
		memcpy(s->buf + s->len, b, k);
		s->len += k;
		b += k;
		n -= k;
		if (s->len == s->cap && drain(s) < 0)
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
	/* A gzip file has at least one member, an empty output too. */
	if (commit && (s->len > 0 || (s->z != NULL && s->members == 0)))
		drain(s);
	libdeflate_free_compressor(s->z);
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
	free(s);
	return rc;
}
