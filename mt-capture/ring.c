/* SPDX-License-Identifier: MIT */
/*
 * AUX ring model and snapshot extraction (see ring.h for the semantics and
 * how they relate to perf's intel_pt_find_snapshot).
 */
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "err.h"
#include "snap.h"
#include "ring.h"

static int
is_pow2(uint64_t n)
{
	return n != 0 && (n & (n - 1)) == 0;
}

int
mt_ring_init(struct mt_ring *r, uint64_t size)
{
	memset(r, 0, sizeof(*r));
	if (!is_pow2(size) || size > SIZE_MAX)
		return -MT_E_INVAL;
	r->base = calloc(1, (size_t)size);
	if (r->base == NULL)
		return -MT_E_NOMEM;
	r->size = size;
	r->owned = 1;
	return 0;
}

int
mt_ring_init_mapped(struct mt_ring *r, const void *base, uint64_t size)
{
	memset(r, 0, sizeof(*r));
	if (!is_pow2(size) || base == NULL)
		return -MT_E_INVAL;
	/* Only read through this pointer: the mapping is PROT_READ. */
	r->base = (uint8_t *)(uintptr_t)base;
	r->size = size;
	return 0;
}

void
mt_ring_release(struct mt_ring *r)
{
	if (r->owned)
		free(r->base);
	memset(r, 0, sizeof(*r));
}

void
mt_ring_write(struct mt_ring *r, const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t mask = r->size - 1;

	if (r->base == NULL || n == 0)
		return;
	r->written += n;
	/* Only the last size bytes of a long write survive. */
	if (n > r->size) {
		uint64_t skip = n - r->size;

		r->head = (r->head + skip) & mask;
		s += skip;
		n = (size_t)r->size;
	}
	while (n > 0) {
		size_t room = (size_t)(r->size - r->head);
		size_t k = n < room ? n : room;

		memcpy(r->base + r->head, s, k);
		r->head = (r->head + k) & mask;
		s += k;
		n -= k;
	}
}

uint64_t
mt_ring_round_size(uint64_t n, uint64_t min)
{
	uint64_t v = 1;

	if (n < min)
		n = min;
	while (v < n) {
		if (v > UINT64_MAX / 2)
			return 0;
		v <<= 1;
	}
	return v;
}

void
mt_ring_wrap_init(struct mt_ring_wrap *w)
{
	memset(w, 0, sizeof(*w));
}

static int
any_nonzero(const uint8_t *p, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return 1;
	return 0;
}

int
mt_ring_extract(const uint8_t *base, uint64_t size, uint64_t head,
    struct mt_ring_wrap *w, struct mt_snap_aux *out)
{
	int wrapped;
	uint64_t len;

	if (!is_pow2(size) || head >= size || base == NULL)
		return -MT_E_INVAL;
	wrapped = w->wrapped;
	if (!wrapped && w->seen && head < w->prev_head)
		wrapped = 1;
	if (!wrapped && head > 0 && any_nonzero(base + head, size - head))
		wrapped = 1;
	if (!wrapped && head == 0 && any_nonzero(base, size))
		wrapped = 1;

	len = wrapped ? size : head;
	out->data = NULL;
	if (len > 0) {
		if (len > SIZE_MAX)
			return -MT_E_NOMEM;
		out->data = malloc((size_t)len);
		if (out->data == NULL)
			return -MT_E_NOMEM;
		if (wrapped) {
			memcpy(out->data, base + head, (size_t)(size - head));
			memcpy(out->data + (size - head), base, (size_t)head);
		} else {
			memcpy(out->data, base, (size_t)head);
		}
	}
	out->len = len;
	out->ring_size = size;
	out->head = head;
	if (wrapped)
		out->flags |= MT_SNAP_AUX_WRAPPED;
	else
		out->flags &= ~MT_SNAP_AUX_WRAPPED;
	w->wrapped = wrapped;
	w->seen = 1;
	w->prev_head = head;
	return 0;
}

int
mt_ring_oldest_tsc(const uint8_t *base, uint64_t size, uint64_t *tsc)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	int found = 0, rc;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)base;
	cfg.end = cfg.begin + size;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (dec == NULL)
		return 0;
	/* Each PSB+: the packets up to PSBEND; TSC is among them. */
	while (pt_pkt_sync_forward(dec) >= 0) {
		while ((rc = pt_pkt_next(dec, &pkt, sizeof(pkt))) >= 0 &&
		    pkt.type != ppt_psbend) {
			if (pkt.type == ppt_tsc && (!found ||
			    pkt.payload.tsc.tsc < *tsc)) {
				*tsc = pkt.payload.tsc.tsc;
				found = 1;
			}
		}
		if (rc == -pte_eos)
			break;
	}
	pt_pkt_free_decoder(dec);
	return found;
}
