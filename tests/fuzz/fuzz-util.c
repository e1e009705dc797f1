/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the fuzz targets (see fuzz.h): in-memory file descriptors
 * for the readers that take an fd, and reading back what a writer wrote.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

int
fuzz_memfd(const void *p, size_t n)
{
	const uint8_t *b = p;
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	while (n > 0) {
		ssize_t w = write(fd, b, n);

		if (w <= 0) {
			perror("write memfd");
			abort();
		}
		b += w;
		n -= (size_t)w;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	return fd;
}

uint8_t *
fuzz_slurp(int fd, size_t *n)
{
	off_t len = lseek(fd, 0, SEEK_END);
	uint8_t *buf;

	if (len < 0)
		abort();
	buf = malloc((size_t)len + 1);
	if (buf == NULL || pread(fd, buf, (size_t)len, 0) != len)
		abort();
	buf[len] = '\0';
	*n = (size_t)len;
	return buf;
}
