/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the fuzz targets (see fuzz.h): in-memory file descriptors
 * for the readers that take an fd, reading back what a writer wrote, a
 * snapshot's checksums made right again after a mutation, and a
 * snapshot's write-read-write round trip.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xxhash.h>

#include "buf.h"
#include "snap.h"
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

void
fuzz_snap_fix_checksums(uint8_t *p, size_t n)
{
	uint64_t off, nchunks = 0;
	uint32_t hsize;

	if (n < MT_SNAP_HDR_SIZE)
		return;
	hsize = mt_le32(p + 12);
	if (hsize < MT_SNAP_HDR_SIZE || hsize > n ||
	    hsize > MT_SNAP_HDR_SIZE + 256)
		return;
	{
		XXH3_state_t *st = XXH3_createState();

		if (st == NULL)
			abort();
		XXH3_64bits_reset(st);
		XXH3_64bits_update(st, p, 24);
		XXH3_64bits_update(st, p + MT_SNAP_HDR_SIZE,
		    hsize - MT_SNAP_HDR_SIZE);
		mt_put_le64(p + 24, XXH3_64bits_digest(st));
		XXH3_freeState(st);
	}
	for (off = hsize; n - off >= 16; nchunks++) {
		uint64_t len = mt_le64(p + off + 8);

		if (len > n - off - 16 || n - off - 16 - len < 8)
			return;
		if (mt_le32(p + off) == MT_SNAP_END && len >= 8)
			mt_put_le64(p + off + 16, nchunks);
		mt_put_le64(p + off + 16 + len,
		    XXH3_64bits(p + off, 16 + (size_t)len));
		off += 16 + len + 8;
	}
}

/* Write @s to a memfd and return the bytes. */
static uint8_t *
snap_bytes(const struct mt_snap *s, size_t *n)
{
	int fd = fuzz_memfd("", 0);
	uint8_t *p;

	FUZZ_CHECK(mt_snap_write_fd(s, fd) == 0);
	p = fuzz_slurp(fd, n);
	close(fd);
	return p;
}

void
fuzz_snap_round_trip(const struct mt_snap *s)
{
	struct mt_snap s2;
	struct mt_snap_diag d;
	uint8_t *a, *b;
	size_t na, nb;

	a = snap_bytes(s, &na);
	mt_snap_init(&s2);
	if (mt_snap_read_mem(&s2, a, na, &d) != 0) {
		fprintf(stderr, "re-read failed: %s\n", d.msg);
		abort();
	}
	b = snap_bytes(&s2, &nb);
	FUZZ_CHECK(na == nb && memcmp(a, b, na) == 0);
	mt_snap_release(&s2);
	free(a);
	free(b);
}
