/* SPDX-License-Identifier: MIT */
/*
 * mt's own query layer over PT packets, for the cached decoder (cfg.h):
 * the calls of libipt's query decoder that cfg.c makes (sync, conditional
 * and indirect branch, event, offsets), with the same results, status
 * bits and offsets as libipt 2.0.5's query decoder (pt_qry_*) returns,
 * for the packets of user-space traces without timing packets.  The TNT bits are kept in
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

/* Where an event waits: the packet that completes it. */
enum { PQ_AT_PSBEND, PQ_AT_TIP, PQ_AT_FUP, PQ_AT_N };
/* Events waiting per binder, at most (a seventh is libipt's -pte_nomem). */
#define PQ_WAIT_EACH	6
/* What is known of the last IP. */
enum { PQ_IP_NONE, PQ_IP_SUPPRESSED, PQ_IP_VALID };

struct pq_waiting {
	struct pt_event ev;		/* its IP filled in at the packet */
	uint8_t at;			/* PQ_AT_*: the packet it waits for */
};

struct pq {
	const uint8_t *begin, *end;	/* the buffer */
	const uint8_t *pos;		/* the cursor: the next packet */
	const uint8_t *sync;		/* the PSB synced to */
	int next;			/* kind of the packet at pos (pq.c),
					 * 0: none named */
	uint64_t tnt;			/* TNT bits held, */
	uint64_t index;			/* the next one's mask (0: none) */
	uint64_t ip;			/* last IP (valid: ip_state) */
	int ip_state;			/* PQ_IP_* */
	int enabled;			/* tracing enabled */
	int taken;			/* the completing packet at pos was
					 * taken by an event delivered there */
	int made;			/* the last apply made out */
	int st_end;			/* the status once no bits are held */
	struct pt_event out;		/* the event made */
	struct pq_waiting wait[PQ_AT_N * PQ_WAIT_EACH];	/* waiting events, oldest first */
	uint8_t nwait;			/* entries of wait */
	uint8_t nwait_at[PQ_AT_N];	/* of those, per binder */
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
 * Take the next TNT bit without a query (@taken 1 or 0) while bits are
 * held, and return the status a query would (pts_*: once the last is
 * taken, what comes after it); -1 when none are held: ask
 * pq_cond_branch.
 */
static inline int
pq_tnt_take(struct pq *q, int *taken)
{
	if (q->index == 0)
		return -1;
	*taken = (q->tnt & q->index) != 0;
	q->index >>= 1;
	return q->index != 0 ? 0 : q->st_end;
}

/*
 * The TNT bits held (at most @max < 64 of them), returned, and in *@bits
 * the first of them in the highest bit, for pq_tnt_skip().
 */
static inline int
pq_tnt_peek(const struct pq *q, int max, uint64_t *bits)
{
	int p, m;

	if (q->index == 0)
		return 0;
	p = __builtin_ctzll(q->index);
	m = p + 1 < max ? p + 1 : max;
	*bits = (q->tnt >> (p + 1 - m)) & ((1ull << m) - 1);
	return m;
}

/* Take @n bits without looking at them (n <= what pq_tnt_peek gave):
 * the status pq_tnt_take would return after the last of them. */
static inline int
pq_tnt_skip(struct pq *q, int n)
{
	q->index >>= n;
	return q->index != 0 ? 0 : q->st_end;
}

#endif /* MT_DECODE_PQ_H */
