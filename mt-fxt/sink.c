/* SPDX-License-Identifier: MIT */
/*
 * Output sink (see sink.h).  Bytes gather in a 64 KiB buffer; full
 * buffers are written out or deflated (gzip wrapper, zlib) into a second
 * buffer that is written out.  The file itself (temporary name, rename,
 * devices and standard output written in place) is common/outfile.h's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "err.h"
#include "outfile.h"
#include "sink.h"

#define SINK_BUF (64 * 1024)

struct sink {
	struct mt_outfile of;	/* the file, its temporary name */
	int gz;			/* compressing */
	z_stream z;		/* deflate state when gz */
	uint8_t *buf;		/* pending uncompressed bytes */
	size_t len;
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

static int
drain(struct sink *s, int flush)
{
	int rc;

	if (s->err)
		return s->err;
	if (s->gz)
		rc = deflate_out(s, s->buf, s->len, flush);
	else
		rc = write_all(s, s->buf, s->len);
	s->len = 0;
	return rc;
}

int
sink_open(struct sink **sp, const char *path, int level, char *msg, size_t n)
{
	struct sink *s = calloc(1, sizeof(*s));
	int rc;

	*sp = NULL;
	if (s == NULL || (s->buf = malloc(SINK_BUF)) == NULL ||
	    (level > 0 && (s->zbuf = malloc(SINK_BUF)) == NULL)) {
		snprintf(msg, n, "out of memory");
		if (s)
			free(s->buf);
		free(s);
		return -MT_E_NOMEM;
	}
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
	if (level > 0) {
		if (deflateInit2(&s->z, level, Z_DEFLATED, 15 + 16, 8,
		    Z_DEFAULT_STRATEGY) != Z_OK) {
			snprintf(msg, n, "zlib: cannot start deflate");
			rc = -MT_E_NOMEM;
			goto bad;
		}
		s->gz = 1;
	}
	*sp = s;
	return 0;
bad:
	mt_outfile_abort(&s->of);
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
		size_t k = SINK_BUF - s->len;

		if (k > n)
			k = n;
		memcpy(s->buf + s->len, b, k);
		s->len += k;
		b += k;
		n -= k;
		if (s->len == SINK_BUF && drain(s, Z_NO_FLUSH) < 0)
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
	if (s->gz)
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
	free(s);
	return rc;
}
