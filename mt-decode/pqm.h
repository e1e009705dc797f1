/* SPDX-License-Identifier: MIT */
/*
 * The query layer's packet machine (pq.c), shared with its queries
 * (pqquery.c): packet kinds and their rules, naming the packet at the
 * cursor, applying it (the one transition function), skipping to the
 * next packet that answers a query, and the status after it.
 */
#ifndef MT_DECODE_PQM_H
#define MT_DECODE_PQM_H

#include <stdint.h>

#include "pq.h"

/* Packet kinds; PK_NONE: no packet could be named at the cursor. */
enum {
	PK_NONE = 0,
	PK_PAD, PK_PSB, PK_PSBEND, PK_OVF, PK_TNT8, PK_TNT64,
	PK_TIP, PK_PGE, PK_PGD, PK_FUP, PK_MODE, PK_PIP, PK_VMCS, PK_CBR,
	PK_NKINDS
};

/* What a packet answers. */
enum { ANS_NONE, ANS_TNT, ANS_TIP };

/* What a packet is inside PSB+. */
enum { IN_PSB_BAD, IN_PSB_PAD, IN_PSB_IP, IN_PSB_EVENT, IN_PSB_END };

/* Per packet kind (pq.c). */
struct pq_rule {
	uint8_t answers;	/* ANS_*: the branch query it answers */
	int8_t completes;	/* PQ_AT_*: events waiting there, or -1 */
	uint8_t event;		/* always an event packet */
	uint8_t in_psb;		/* IN_PSB_* */
};
extern const struct pq_rule pq_rules[PK_NKINDS];

/* The state a PSB or an OVF starts from: nothing known, nothing held. */
void pq_clear(struct pq *q);
/* Name the packet at the cursor (q->next); -pte_eos at the end,
 * -pte_bad_opc for an opcode PT does not have, PQ_ABORT for packets not
 * modelled. */
int pq_lex(struct pq *q);
/* The status once no TNT bits are held, kept for pq_tnt_take(); returns
 * the status now. */
int pq_settle(struct pq *q);
/* The packet at the cursor through libipt's packet decoder: its size. */
int pq_read(struct pq *q, struct pt_packet *pk);
/* The IP packet at the cursor: the last IP updated, its size returned,
 * *@ipc its compression. */
int pq_ip_packet(struct pq *q, int *ipc);
/* The TNT packet of @size bytes at the cursor: its bits held. */
int pq_apply_tnt(struct pq *q, int size);
/* A PSB and its header up to PSBEND or OVF (not applied). */
int pq_apply_psb(struct pq *q);
/* The transition: apply the packet at the cursor (q->next). */
int pq_apply(struct pq *q);
/* Apply packets until one that answers a query (left at the cursor). */
int pq_skip(struct pq *q);

/* Does the packet at the cursor make an event when applied now? */
static inline int
pq_makes_event(const struct pq *q)
{
	const struct pq_rule *r = &pq_rules[q->next];

	return r->event || (r->completes >= 0 && q->nwait_at[r->completes]);
}

/* Does it answer a query (the read-ahead stops there)? */
static inline int
pq_answers(const struct pq *q)
{
	return pq_rules[q->next].answers != ANS_NONE || pq_makes_event(q);
}

/* The last IP; -pte_noip or -pte_ip_suppressed when there is none. */
static inline int
pq_ip(const struct pq *q, uint64_t *ip)
{
	if (q->ip_state == PQ_IP_VALID) {
		*ip = q->ip;
		return 0;
	}
	*ip = 0;
	return q->ip_state == PQ_IP_NONE ? -pte_noip : -pte_ip_suppressed;
}

/* pq_skip, a TNT-8 or a TIP (which answer whatever waits) seen first. */
static inline int
pq_skip_fast(struct pq *q)
{
	const uint8_t *p = q->pos;
	uint8_t b;

	while (p < q->end && p[0] == 0x00)
		p++;
	q->pos = p;
	if (p < q->end) {
		b = p[0];
		if ((b & 0x01) == 0x00 && b != 0x02) {
			q->next = PK_TNT8;
			return 0;
		}
		if ((b & 0x1f) == 0x0d) {
			q->next = PK_TIP;
			return 0;
		}
	}
	return pq_skip(q);
}

#endif /* MT_DECODE_PQM_H */
