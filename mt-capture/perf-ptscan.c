/* SPDX-License-Identifier: MIT */
/*
 * What mt-capture export-perf reads in a snapshot's PT bytes before it
 * writes them into perf.data (perf-export.c): PIP packets with NR set
 * (guest code, for --guest-as-host) and the largest TSC (the AUXTRACE
 * record's reference).  libipt's packet decoder, no instruction decode.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "perf.h"

/*
 * Call @visit with every packet in @len PT bytes and its offset, from
 * the first PSB on; after a bad packet, from the next PSB.
 */
static void
scan(const uint8_t *data, uint64_t len,
    void (*visit)(const struct pt_packet *, uint64_t, void *), void *ctx)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	uint64_t off;
	int rc;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)data;
	cfg.end = cfg.begin + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (dec == NULL)
		return;
	rc = pt_pkt_sync_forward(dec);
	while (rc >= 0) {
		if (pt_pkt_get_offset(dec, &off) < 0)
			break;
		rc = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (rc < 0) {
			if (rc == -pte_eos)
				break;
			rc = pt_pkt_sync_forward(dec);
			continue;
		}
		visit(&pkt, off, ctx);
	}
	pt_pkt_free_decoder(dec);
}

struct pip_scan {
	uint64_t len;		/* of the PT bytes */
	uint8_t *copy;		/* NR bits cleared here, or NULL */
	uint64_t n;		/* PIP packets with NR set */
};

static void
pip_visit(const struct pt_packet *pkt, uint64_t off, void *ctx)
{
	struct pip_scan *p = ctx;

	/* PIP: 02 43, then a 6-byte payload whose bit 0 is NR. */
	if (pkt->type == ppt_pip && pkt->payload.pip.nr && off + 2 < p->len) {
		p->n++;
		if (p->copy != NULL)
			p->copy[off + 2] &= (uint8_t)~1u;
	}
}

/*
 * Visit the PIP packets with NR set in @len PT bytes: with @copy, clear
 * their NR bit there (same offsets); return how many there are.
 */
uint64_t
perf_pip_nr_scan(const uint8_t *data, uint64_t len, uint8_t *copy)
{
	struct pip_scan p = { len, copy, 0 };

	scan(data, len, pip_visit, &p);
	return p.n;
}

/*
 * A copy of @len PT bytes with the NR bit of every PIP packet cleared.
 * perf decodes code seen with PIP.NR = 1 (VMX non-root) in a guest
 * machine, which a snapshot of a guest (kAFL, the real-pt test traces)
 * does not have; cleared, the same code is looked up in the host maps.
 * Bytes before the first PSB and after a bad packet up to the next PSB
 * are copied unchanged.  Returns NULL when out of memory.
 */
uint8_t *
perf_pip_as_host(const uint8_t *data, uint64_t len)
{
	uint8_t *copy = malloc(len ? (size_t)len : 1);

	if (copy == NULL)
		return NULL;
	memcpy(copy, data, (size_t)len);
	(void)perf_pip_nr_scan(data, len, copy);
	return copy;
}

static void
tsc_visit(const struct pt_packet *pkt, uint64_t off, void *ctx)
{
	uint64_t *max = ctx;

	(void)off;
	if (pkt->type == ppt_tsc && pkt->payload.tsc.tsc > *max)
		*max = pkt->payload.tsc.tsc;
}

/*
 * The largest TSC packet value in @len PT bytes, or 0.  perf uses the
 * AUXTRACE record's reference (perf record: rdtsc when the buffer was
 * copied out) to place the 7-byte TSC packets; with reference 0 its
 * decoder ignores every TSC packet and finds no timestamp at all.
 */
uint64_t
perf_max_tsc(const uint8_t *data, uint64_t len)
{
	uint64_t max = 0;

	scan(data, len, tsc_visit, &max);
	return max;
}
