/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the qemu backend's reader of its plugin's code log
 * (mt-capture/qemu-code.c): records of {addr, len, pad, since} and len
 * bytes of JIT code, turned into JIT BLOBs.  The log is written by mt's
 * own plugin, but the addresses and lengths are the guest's, and a log
 * of a killed guest ends anywhere.
 *
 * Invariants: it succeeds; each BLOB is a non-empty "[jit]" BLOB of the
 * process that does not run past the end of memory; the BLOBs of one time
 * are sorted, apart and not touching; they hold no more bytes than the
 * records; the last whole record's bytes are in the BLOB of its time at
 * its address (the last logged wins); and the snapshot survives a
 * write-read-write round trip.
 */
#include <string.h>

#include "err.h"
#include "qemu-code.h"
#include "snap.h"
#include "fuzz.h"

#define PID 42
#define HDR 24		/* sizeof(struct mtq_code) on x86-64 */

static uint64_t
le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

/* The last whole record with bytes that fit in memory: 1, or 0 none. */
static int
last_rec(const uint8_t *p, size_t n, uint64_t *addr, uint32_t *len,
    uint64_t *since, const uint8_t **bytes, uint64_t *total)
{
	size_t off = 0;
	int found = 0;

	*total = 0;
	while (n - off >= HDR) {
		uint64_t a = le(p + off, 8), s = le(p + off + 16, 8);
		uint32_t l = (uint32_t)le(p + off + 8, 4);

		if (l > n - off - HDR)
			break;
		if (l > 0 && a <= UINT64_MAX - l) {
			*addr = a;
			*len = l;
			*since = s;
			*bytes = p + off + HDR;
			*total += l;
			found = 1;
		}
		off += HDR + l;
	}
	return found;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct mt_snap_blob *b, *prev = NULL;
	struct mt_snap s;
	uint64_t addr = 0, since = 0, total, sum = 0;
	const uint8_t *bytes = NULL;
	uint32_t len = 0;
	size_t i;
	int last, seen = 0;

	mt_snap_init(&s);
	FUZZ_CHECK(mt_qemu_code_blobs(&s, PID, data, size) == 0);
	last = last_rec(data, size, &addr, &len, &since, &bytes, &total);
	for (i = 0; i < s.nblobs; i++) {
		b = &s.blobs[i];
		FUZZ_CHECK(b->kind == MT_SNAP_BLOB_JIT && b->pid == PID);
		FUZZ_CHECK(b->name != NULL && strcmp(b->name, "[jit]") == 0);
		FUZZ_CHECK(b->len > 0 && b->addr <= UINT64_MAX - b->len);
		if (prev != NULL && prev->time == b->time)
			FUZZ_CHECK(b->addr > prev->addr + prev->len);
		if (prev != NULL)
			FUZZ_CHECK(b->time >= prev->time);
		sum += b->len;
		if (last && b->time == since && b->addr <= addr &&
		    addr + len <= b->addr + b->len) {
			FUZZ_CHECK(memcmp(b->data + (addr - b->addr), bytes,
			    len) == 0);
			seen = 1;
		}
		prev = b;
	}
	FUZZ_CHECK(sum <= total);
	FUZZ_CHECK(seen == last);
	fuzz_snap_round_trip(&s);
	mt_snap_release(&s);
	return 0;
}
