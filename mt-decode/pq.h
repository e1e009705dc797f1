/* SPDX-License-Identifier: MIT */
/*
 * mt's own query layer over PT packets, for the cached decoder (cfg.h):
 * the calls of libipt's query decoder that cfg.c makes (sync, conditional
 * and indirect branch, event, offsets), with the same results, status
 * bits and offsets as libipt 2.0.5's pt_query_decoder.c, for the packets
 * of user-space traces without timing packets.  The TNT bits are kept in
 * a word that the cached decoder reads many at a time (pq_tnt_*), where
 * libipt answers one query per bit.
 *
 * Packets are read from the buffer by hand where the format is a byte or
 * two (PAD, TNT, TIP, FUP, TIP.PGE, TIP.PGD) and through libipt's packet
 * decoder (pt_pkt_*) for the rest.  What it does not model it refuses
 * with PQ_ABORT, and the caller decodes the buffer with libipt's query
 * decoder instead: timing packets (TSC, MTC, CYC, TMA: the events' times
 * would need libipt's timing model), STOP, MNT, EXSTOP, MWAIT, PWRE,
 * PWRX, PTWRITE, VMCS outside PSB+, unknown opcodes, a packet cut off by
 * the end of the buffer, any decode error but the end of the trace, and
 * configurations with errata workarounds.
 */
#ifndef MT_DECODE_PQ_H
#define MT_DECODE_PQ_H

#include <stdint.h>

#include <intel-pt.h>

/* The layer cannot answer: use libipt's query decoder. */
#define PQ_ABORT	(-100001)

enum pq_evb { PQ_EVB_PSBEND, PQ_EVB_TIP, PQ_EVB_FUP, PQ_EVB_MAX };
#define PQ_EVQ_MAX	8	/* libipt's evq_max */

struct pq {
	const uint8_t *begin, *end;	/* the buffer */
	const uint8_t *pos;		/* next packet (libipt's pos) */
	const uint8_t *sync;		/* the PSB synced to */
	int next;			/* kind of the packet at pos (pq.c),
					 * 0: none fetched (libipt's NULL) */
	uint64_t tnt;			/* TNT cache: bits, */
	uint64_t index;			/* the next one's mask (0: empty) */
	uint64_t ip;			/* last IP, */
	int have_ip, suppressed;	/* as struct pt_last_ip */
	int enabled;
	int consume_packet;
	struct pt_event *event;		/* the event the last decode made */
	struct pt_event standalone;
	struct pt_event queue[PQ_EVB_MAX][PQ_EVQ_MAX];
	uint8_t qb[PQ_EVB_MAX], qe[PQ_EVB_MAX];
	struct pt_packet_decoder *pkt;	/* libipt's, for the rare packets */
};

/* Set up @q for the buffer of @cfg; 0, -pte_nomem, or PQ_ABORT when
 * @cfg asks for errata workarounds. */
int pq_init(struct pq *q, const struct pt_config *cfg);
void pq_fini(struct pq *q);

/* As pt_qry_sync_forward (only from the buffer's start), pt_qry_sync_set,
 * pt_qry_cond_branch, pt_qry_indirect_branch, pt_qry_event,
 * pt_qry_get_offset and pt_qry_get_sync_offset, or PQ_ABORT. */
int pq_sync_forward(struct pq *q, uint64_t *ip);
int pq_sync_set(struct pq *q, uint64_t *ip, uint64_t off);
int pq_cond_branch(struct pq *q, int *taken);
int pq_indirect_branch(struct pq *q, uint64_t *ip);
int pq_event(struct pq *q, struct pt_event *ev);
int pq_get_offset(const struct pq *q, uint64_t *off);
int pq_get_sync_offset(const struct pq *q, uint64_t *off);

/* The status bits libipt would return after a query now (pt_qry's
 * status flags). */
int pq_status(struct pq *q);

/*
 * Take the next TNT bit without a query when that is all a query would
 * do: bits are cached and more remain after this one (the last bit's
 * query reads ahead and computes status).  1 taken, 0 not, -1: ask
 * pq_cond_branch.
 */
static inline int
pq_tnt_fast(struct pq *q)
{
	int taken;

	if (q->index <= 1)
		return -1;
	taken = (q->tnt & q->index) != 0;
	q->index >>= 1;
	return taken;
}

#endif /* MT_DECODE_PQ_H */
