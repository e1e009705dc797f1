/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the libFuzzer targets in tests/fuzz/.  Each target
 * defines LLVMFuzzerTestOneInput(); tests/helpers/fuzz links it with
 * libFuzzer (clang -fsanitize=fuzzer), and standalone.c gives it a main()
 * that replays files, so the regression tests run with any compiler.
 *
 * A target calls FUZZ_CHECK() for invariants that must hold for every
 * input (a round trip that changes the data, say): a failed check aborts,
 * which both libFuzzer and the regression tests count as a crash.
 */
#ifndef MT_FUZZ_H
#define MT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, \
	    __LINE__, #cond); \
	abort(); } } while (0)

/*
 * A file descriptor whose content is @p[0..@n), positioned at 0 (a memfd,
 * so nothing touches the disk).  Aborts if the kernel refuses: that is a
 * broken harness, not a finding.
 */
int fuzz_memfd(const void *p, size_t n);

/* Everything written to @fd so far (from offset 0), malloc'd; *@n bytes. */
uint8_t *fuzz_slurp(int fd, size_t *n);

/*
 * Recompute the header and chunk checksums and the END chunk's count of
 * the snapshot @p[0..@n) in place (a private copy), so that a mutation
 * reaches the chunk parsers instead of stopping at the first checksum.
 */
void fuzz_snap_fix_checksums(uint8_t *p, size_t n);

struct mt_snap;

/*
 * Write @s, read it back, write that again: the read must succeed and
 * the two writes must be the same bytes, or it aborts.
 */
void fuzz_snap_round_trip(const struct mt_snap *s);

#endif /* MT_FUZZ_H */
