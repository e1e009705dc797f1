/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the snapshot reader (common/snap.c, mt_snap_read_mem).
 *
 * Every chunk of a snapshot carries an XXH3 checksum, so almost every
 * mutation would stop at the first checksum check.  The target therefore
 * reads each input twice: as given (which exercises the framing and the
 * checksum checks), and with the header and chunk checksums and the END
 * chunk's count recomputed, so mutations reach the chunk parsers.
 *
 * When a read succeeds, the snapshot must survive a round trip: written
 * with mt_snap_write_fd() it must read back, and writing that again must
 * give the same bytes.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "snap.h"
#include "fuzz.h"

static void
one(const uint8_t *p, size_t n)
{
	struct mt_snap s;
	struct mt_snap_diag d;
	char at[40];
	int rc;

	mt_snap_init(&s);
	memset(&d, 0, sizeof(d));
	rc = mt_snap_read_mem(&s, p, n, &d);
	FUZZ_CHECK(rc == 0 || rc < 0);
	if (rc < 0) {
		/* The diagnosis must be a string within the input. */
		FUZZ_CHECK(memchr(d.msg, '\0', sizeof(d.msg)) != NULL);
		FUZZ_CHECK(d.off <= n);
		FUZZ_CHECK(mt_strerror(rc) != NULL);
		/* It names that offset, once: programs print it as it is. */
		snprintf(at, sizeof(at), " at offset %llu",
		    (unsigned long long)d.off);
		FUZZ_CHECK(strstr(d.msg, at) != NULL);
		FUZZ_CHECK(strstr(strstr(d.msg, at) + 1, " at offset ") ==
		    NULL);
	} else {
		fuzz_snap_round_trip(&s);
	}
	mt_snap_release(&s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	one(data, size);
	copy = malloc(size ? size : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	fuzz_snap_fix_checksums(copy, size);
	if (memcmp(copy, data, size) != 0)
		one(copy, size);
	free(copy);
	return 0;
}
