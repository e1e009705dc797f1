/* SPDX-License-Identifier: MIT */
/*
 * The AUX ring model shared by every capture backend, and THE snapshot
 * extraction both backends use.
 *
 * A ring is what the kernel gives a PT event in overwrite (snapshot) mode
 * (docs/capture.md): a byte array whose size is a power of two, zero
 * filled when created, written front to back and wrapping at the end, with
 * `head` the offset inside the ring one past the newest byte (the kernel
 * masks aux_head with size - 1 for PT snapshot buffers, so a head says
 * nothing about how often the ring wrapped).
 *
 * The live PT backend points a ring at its read-only AUX mapping (not owned)
 * and sets `head` from aux_head after PERF_EVENT_IOC_DISABLE.  The software
 * backend owns its rings and appends packets with mt_ring_write(), which
 * keeps the same layout and the same overwrite semantics.
 *
 * Extraction (mt_ring_extract) decides whether the ring wrapped and copies
 * the valid bytes oldest first into a struct mt_snap_aux:
 *   - not wrapped: offsets [0, head);
 *   - wrapped: offsets [head, size) then [0, head): the whole ring.
 * Wrap detection relies on the zero fill, as perf's does, but is exact for
 * bytes rather than perf's 4 KiB window (intel_pt_first_wrap, which reports
 * any ring whose last 4 KiB hold data as wrapped):
 *   1. once a ring was seen wrapped it stays wrapped (a sticky flag in
 *      struct mt_ring_wrap, as perf keeps ptr->wrapped);
 *   2. a head below the head seen at the previous extraction means the
 *      writer went past the end;
 *   3. any non-zero byte in [head, size) was written by a previous lap;
 *   4. head == 0 with any non-zero byte in the ring: exactly full (a lap
 *      ended at the end of the ring).
 * Otherwise the ring is taken as not wrapped.  What this cannot see: a lap
 * that ended exactly where the previous extraction's head was and left only
 * zero bytes (PT PAD packets are 0x00) after head; perf has the same blind
 * spot.  A reference copy of the ring's end, which perf keeps for large
 * rings, exists in perf only to find the bytes new since the previous
 * snapshot; mt copies every valid byte so that each snapshot decodes on its
 * own (consecutive snapshots overlap), and so does not need it.
 */
#ifndef MT_CAPTURE_RING_H
#define MT_CAPTURE_RING_H

#include <stddef.h>
#include <stdint.h>

struct mt_snap_aux;

struct mt_ring {
	uint8_t *base;		/* ring bytes; owned iff owned != 0 */
	uint64_t size;		/* bytes, a power of two >= 1 */
	uint64_t head;		/* offset in [0, size) one past the newest byte */
	uint64_t written;	/* bytes ever written by mt_ring_write (a
				 * statistic; 0 for live rings) */
	int owned;		/* base was allocated by mt_ring_init */
};

/* Wrap-detection state kept per ring across extractions. */
struct mt_ring_wrap {
	int wrapped;		/* sticky: the ring was seen wrapped */
	int seen;		/* prev_head is valid */
	uint64_t prev_head;	/* head at the previous extraction */
};

/*
 * Allocate a zero-filled ring of @size bytes (a power of two).
 * Returns 0, -MT_E_INVAL if @size is not a power of two or 0, or
 * -MT_E_NOMEM.
 */
int mt_ring_init(struct mt_ring *r, uint64_t size);
/* Point @r at @size bytes the caller owns (a live AUX mapping). */
int mt_ring_init_mapped(struct mt_ring *r, const void *base, uint64_t size);
/* Free an owned ring; a mapped ring is only forgotten. */
void mt_ring_release(struct mt_ring *r);
/*
 * Append @n bytes at head, wrapping; only the last size bytes of a longer
 * write remain, as in the hardware ring.  Never fails.
 */
void mt_ring_write(struct mt_ring *r, const void *p, size_t n);

/* Smallest power of two >= @n (and >= @min); 0 if it would overflow. */
uint64_t mt_ring_round_size(uint64_t n, uint64_t min);

void mt_ring_wrap_init(struct mt_ring_wrap *w);
/*
 * Decide whether the ring of @size bytes at @base with @head wrapped
 * (updating @w) and copy its valid bytes oldest first into @out:
 * out->data (malloc'd, owned by @out; NULL when len is 0), out->len,
 * out->ring_size, out->head, and MT_SNAP_AUX_WRAPPED in out->flags.
 * The caller sets out->tid, cpu and index.  @base is only read.
 * Returns 0, -MT_E_INVAL (size not a power of two, head >= size) or
 * -MT_E_NOMEM.
 */
int mt_ring_extract(const uint8_t *base, uint64_t size, uint64_t head,
    struct mt_ring_wrap *w, struct mt_snap_aux *out);

/*
 * The smallest TSC packet value in the PSB+ headers of the @size bytes at
 * @base (a live ring: read while the hardware writes, so an estimate),
 * which dates the oldest data still in the ring to within one PSB period.
 * Returns 1 with *@tsc set, or 0 when no PSB+ holds a TSC.
 */
int mt_ring_oldest_tsc(const uint8_t *base, uint64_t size, uint64_t *tsc);

#endif /* MT_CAPTURE_RING_H */
