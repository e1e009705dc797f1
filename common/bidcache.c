/* SPDX-License-Identifier: MIT */
/* The shared build-id cache (see bidcache.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bidcache.h"
#include "err.h"
#include "outfile.h"

int
mt_bidcache_dir(char *buf, size_t n)
{
	const char *e;
	int k;

	if ((e = getenv("MT_CACHE_DIR")) != NULL && *e)
		k = snprintf(buf, n, "%s", e);
	else if ((e = getenv("XDG_CACHE_HOME")) != NULL && *e == '/')
		k = snprintf(buf, n, "%s/mt", e);
	else if ((e = getenv("HOME")) != NULL && *e)
		k = snprintf(buf, n, "%s/.cache/mt", e);
	else
		return -MT_E_NOTFOUND;
	return k < 0 || (size_t)k >= n ? -MT_E_LIMIT : 0;
}

int
mt_bidcache_path(const char *dir, const uint8_t *id, size_t len,
    char *buf, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, k;
	int m;

	if (len == 0)
		return -MT_E_INVAL;
	m = snprintf(buf, n, "%s/.build-id/%c%c/", dir, hex[id[0] >> 4],
	    hex[id[0] & 0xf]);
	if (m < 0 || (size_t)m >= n)
		return -MT_E_LIMIT;
	k = (size_t)m;
	if (2 * (len - 1) >= n - k)
		return -MT_E_LIMIT;
	for (i = 1; i < len; i++) {
		buf[k++] = hex[id[i] >> 4];
		buf[k++] = hex[id[i] & 0xf];
	}
	buf[k] = '\0';
	return 0;
}

int
mt_bidcache_mkparents(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = '/';
			return -MT_E_IO;
		}
		*p = '/';
	}
	return 0;
}

int
mt_bidcache_store(const char *dir, const uint8_t *id, size_t len,
    const void *data, size_t size)
{
	char path[4096];
	struct mt_outfile o;
	const char *p = data;
	int rc;

	rc = mt_bidcache_path(dir, id, len, path, sizeof(path));
	if (rc < 0)
		return rc;
	if (access(path, F_OK) == 0)
		return 0;
	if (mt_bidcache_mkparents(path) < 0)
		return -MT_E_IO;
	rc = mt_outfile_open(&o, path, 0644, MT_OUTFILE_SYNC);
	if (rc < 0)
		return rc;
	while (size > 0) {
		ssize_t w = write(o.fd, p, size);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			mt_outfile_abort(&o);
			return -MT_E_IO;
		}
		p += w;
		size -= (size_t)w;
	}
	rc = mt_outfile_commit(&o);
	return rc < 0 ? rc : 1;
}
