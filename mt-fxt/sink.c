/* SPDX-License-Identifier: MIT */
/*
 * Output sink (see sink.h).  Bytes gather in a 256 KiB buffer; full
 * buffers are written out or deflated (gzip wrapper, zlib) into a second
 * buffer that is written out.
 */
#include <errno.h>
#include <fcntl.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "err.h"
#include "sink.h"

#define SINK_BUF (256 * 1024)

struct sink {
	int fd;			/* output descriptor */
	int own_fd;		/* fd opened on a device: close, no rename */
	char *path;		/* final name, NULL for stdout */
	char *tmp;		/* temporary name, NULL for stdout */
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
		ssize_t w = write(s->fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return fail(s, -MT_E_IO, "cannot write '%s': %s",
			    s->path ? s->path : "-", strerror(errno));
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
	struct stat sb;

	*sp = NULL;
	if (s == NULL || (s->buf = malloc(SINK_BUF)) == NULL ||
	    (level > 0 && (s->zbuf = malloc(SINK_BUF)) == NULL)) {
		snprintf(msg, n, "out of memory");
		if (s)
			free(s->buf);
		free(s);
		return -MT_E_NOMEM;
	}
	s->fd = 1;
	if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 &&
	    !S_ISREG(sb.st_mode)) {
		/* A device or FIFO (/dev/null): write to it, never replace it. */
		s->fd = open(path, O_WRONLY);
		s->path = strdup(path);	/* for messages */
		if (s->fd < 0) {
			snprintf(msg, n, "cannot open '%s': %s", path,
			    strerror(errno));
			goto bad;
		}
		s->own_fd = 1;
	} else if (strcmp(path, "-") != 0) {
		size_t len = strlen(path);

		s->path = strdup(path);
		s->tmp = malloc(len + 16);
		if (s->path == NULL || s->tmp == NULL) {
			snprintf(msg, n, "out of memory");
			goto bad;
		}
		snprintf(s->tmp, len + 16, "%s.tmp.XXXXXX", path);
		if ((s->fd = mkstemp(s->tmp)) < 0) {
			snprintf(msg, n, "cannot create '%s': %s", s->tmp,
			    strerror(errno));
			free(s->tmp);
			s->tmp = NULL;
			goto bad;
		}
		/* mkstemp makes 0600; give the file the usual mode. */
		{
			mode_t um = umask(0);

			umask(um);
			fchmod(s->fd, 0666 & ~um);
		}
	}
	if (level > 0) {
		if (deflateInit2(&s->z, level, Z_DEFLATED, 15 + 16, 8,
		    Z_DEFAULT_STRATEGY) != Z_OK) {
			snprintf(msg, n, "zlib: cannot start deflate");
			goto bad;
		}
		s->gz = 1;
	}
	*sp = s;
	return 0;
bad:
	if (s->own_fd && s->fd >= 0)
		close(s->fd);
	if (s->tmp) {
		close(s->fd);
		unlink(s->tmp);
	}
	free(s->tmp);
	free(s->path);
	free(s->buf);
	free(s->zbuf);
	free(s);
	return -MT_E_IO;
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
	return s->tmp != NULL;
}

int
sink_set_path(struct sink *s, const char *path)
{
	char *np;

	if (s->tmp == NULL)
		return -MT_E_INVAL;
	np = strdup(path);
	if (np == NULL)
		return -MT_E_NOMEM;
	free(s->path);
	s->path = np;
	return 0;
}

int
sink_close(struct sink *s, int commit, char *msg, size_t n)
{
	int rc;

	if (s == NULL)
		return 0;
	if (commit)
		drain(s, Z_FINISH);
	if (s->gz)
		deflateEnd(&s->z);
	if (s->own_fd && close(s->fd) < 0 && commit)
		fail(s, -MT_E_IO, "close: %s", strerror(errno));
	if (s->tmp) {
		if (close(s->fd) < 0 && commit)
			fail(s, -MT_E_IO, "close: %s", strerror(errno));
		if (commit && !s->err && rename(s->tmp, s->path) < 0)
			fail(s, -MT_E_IO, "cannot rename '%s' to '%s': %s",
			    s->tmp, s->path, strerror(errno));
		if (!commit || s->err)
			unlink(s->tmp);
	}
	rc = s->err;
	if (rc && msg)
		snprintf(msg, n, "%s", s->msg);
	free(s->tmp);
	free(s->path);
	free(s->buf);
	free(s->zbuf);
	free(s);
	return rc;
}
