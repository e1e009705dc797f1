/* SPDX-License-Identifier: MIT */
/*
 * The query layer's calls (pq.h) over its packet machine (pqm.h, pq.c):
 * sync, the three queries served by one loop (pq_ask(), with what each
 * refuses in one condition), the fast paths for a TNT-8 or a TIP at the
 * cursor, and the offsets.  The behaviour they hold to is stated in
 * pq.c's header.
 */
#include <stdint.h>
#include <string.h>

#include "pq.h"
#include "pqm.h"

int
pq_status(struct pq *q)
{
	return pq_settle(q);
}

/* At a PSB at @pos: its header, the skip, the status and *@ip. */
static int
pq_start(struct pq *q, const uint8_t *pos, uint64_t *ip)
{
	int rc, st, have;

	pq_clear(q);
	q->sync = q->pos = pos;
	rc = pq_lex(q);
	if (rc < 0)
		return rc;
	if (q->next != PK_PSB)
		return -pte_nosync;
	rc = pq_apply_psb(q);
	if (rc < 0)
		return rc;
	/* the IP of the PSB+, before the skip could pass another one */
	have = pq_ip(q, ip) == 0;
	rc = pq_skip(q);
	if (rc < 0)
		return rc;
	st = pq_settle(q);
	if (!have && pq_ip(q, ip) < 0)
		st |= pts_ip_suppressed;
	return st;
}

int
pq_sync_forward(struct pq *q, uint64_t *ip)
{
	uint64_t off;
	int rc;

	if (q->pos != NULL)
		return PQ_ABORT;	/* only the first sync is modelled */
	rc = pt_pkt_sync_forward(q->pkt);
	if (rc < 0)
		return rc == -pte_eos ? rc : PQ_ABORT;	/* no PSB */
	if (pt_pkt_get_sync_offset(q->pkt, &off) < 0)
		return PQ_ABORT;
	return pq_start(q, q->begin + off, ip);
}

int
pq_sync_set(struct pq *q, uint64_t *ip, uint64_t off)
{
	struct pt_packet pk;

	if (off >= (uint64_t)(q->end - q->begin))
		return -pte_eos;
	q->pos = q->begin + off;
	if (pq_read(q, &pk) < 0 || pk.type != ppt_psb)
		return -pte_nosync;
	return pq_start(q, q->begin + off, ip);
}

/* What a query wants. */
enum { Q_TNT, Q_TIP, Q_EVENT };

/*
 * Serve query @want: apply packets from the cursor until the one that
 * answers it, then skip to the next.  A packet that answers another
 * query is -pte_bad_query; an event made on the way of a branch query
 * is -pte_event_ignored.  Returns 0 or an error, the status computed by
 * the caller.
 */
static int
pq_ask(struct pq *q, int want, struct pt_event *ev, int *ipst, uint64_t *ip)
{
	int rc, ans, evt;

	for (;;) {
		if (q->next == PK_NONE) {
			/* the same error again (the end: -pte_eos) */
			rc = pq_lex(q);
			return rc < 0 ? rc : PQ_ABORT;
		}
		ans = pq_rules[q->next].answers;
		evt = pq_makes_event(q);
		if (want == Q_EVENT ? ans != ANS_NONE && !evt :
		    evt || (want == Q_TNT && ans == ANS_TIP) ||
		    (want == Q_TIP && ans == ANS_TNT && q->index != 0))
			return -pte_bad_query;
		q->made = 0;
		rc = pq_apply(q);
		if (rc < 0)
			return rc;
		if (q->made) {
			if (want != Q_EVENT)
				return -pte_event_ignored;
			*ev = q->out;
			break;
		}
		if (want == Q_TNT && ans == ANS_TNT)
			break;
		if (want == Q_TIP && ans == ANS_TIP) {
			*ipst = pq_ip(q, ip);	/* before the skip moves on */
			break;
		}
		rc = pq_skip(q);
		if (rc < 0)
			return rc;
	}
	rc = pq_skip_fast(q);
	return rc == -pte_eos ? 0 : rc;
}

/*
 * pq_cond_branch's common case: a TNT-8 with bits at the cursor, and
 * after it (past PADs) another TNT-8 or a TIP.  Applies it and settles as
 * pq_apply_tnt, pq_skip_fast and pq_settle would; 0 when it did, -1 when
 * the packets are not of that kind (nothing changed).
 */
static inline int
pq_tnt8_fast(struct pq *q)
{
	const uint8_t *p = q->pos;
	uint64_t v = p[0] >> 1;
	int n;
	uint8_t b;

	if (v <= 1)
		return -1;
	for (p++; p < q->end && p[0] == 0x00; p++)
		;
	if (p == q->end)
		return -1;
	b = p[0];
	if ((b & 0x01) == 0x00 && b != 0x02) {
		q->next = PK_TNT8;	/* neither an event nor the end */
		q->st_end = 0;
	} else if ((b & 0x1f) == 0x0d) {
		q->next = PK_TIP;
		q->st_end = q->nwait_at[PQ_AT_TIP] ? pts_event_pending : 0;
	} else {
		return -1;
	}
	n = 63 - __builtin_clzll(v);
	q->tnt = v & ~(1ull << n);
	q->index = 1ull << (n - 1);
	q->pos = p;
	return 0;
}

int
pq_cond_branch(struct pq *q, int *taken)
{
	int rc;

	if (q->index == 0 && q->next == PK_TNT8 && pq_tnt8_fast(q) == 0)
		return pq_tnt_take(q, taken);
	/* a return not compressed (its TIP next): pq_ask's answer */
	if (q->index == 0 && q->next == PK_TIP)
		return -pte_bad_query;
	if (q->index == 0) {
		if (q->next == PK_TNT8) {
			/* the common case: a TNT-8 at the cursor */
			rc = pq_apply_tnt(q, 1);
			if (rc == 0)
				rc = pq_skip_fast(q);
			if (rc == -pte_eos)
				rc = 0;
		} else {
			rc = pq_ask(q, Q_TNT, NULL, NULL, NULL);
		}
		if (rc < 0)
			return rc;
	}
	pq_settle(q);
	rc = pq_tnt_take(q, taken);
	return rc < 0 ? PQ_ABORT : rc;
}

int
pq_indirect_branch(struct pq *q, uint64_t *ip)
{
	int rc, ipc, ipst = 0;

	if (q->next == PK_TIP && q->nwait_at[PQ_AT_TIP] == 0) {
		/* the common case: a TIP no event waits for */
		rc = pq_ip_packet(q, &ipc);
		if (rc < 0)
			return rc;
		q->pos += rc;
		ipst = pq_ip(q, ip);
		rc = pq_skip_fast(q);
		if (rc < 0 && rc != -pte_eos)
			return rc;
	} else {
		rc = pq_ask(q, Q_TIP, NULL, &ipst, ip);
		if (rc < 0)
			return rc;
	}
	return (ipst < 0 ? pts_ip_suppressed : 0) | pq_settle(q);
}

/*
 * pq_event's common case: a TIP.PGD, or a TIP.PGE no MODE.Exec waits
 * for, at the cursor (a branch out of the filter's ranges and back):
 * the event made in @ev as pq_ask and pq_apply_ip would make it in
 * q->out and copy it.  0 when it did, 1 when the packet is not of that
 * kind (nothing changed), or pq_ip_packet's error.
 */
static int
pq_gate_fast(struct pq *q, struct pt_event *ev)
{
	int ipc, size, rc;

	if ((q->next != PK_PGD && q->next != PK_PGE) ||
	    q->nwait_at[PQ_AT_TIP] != 0 || q->taken)
		return 1;
	size = pq_ip_packet(q, &ipc);
	if (size < 0)
		return size;
	memset(ev, 0, sizeof(*ev));
	if (q->next == PK_PGD) {
		ev->type = ptev_disabled;
		if (pq_ip(q, &ev->variant.disabled.ip) < 0)
			ev->ip_suppressed = 1;
		q->enabled = 0;
	} else {
		ev->type = ptev_enabled;
		if (pq_ip(q, &ev->variant.enabled.ip) < 0)
			return -pte_bad_packet;
		q->tnt = q->index = 0;
		q->enabled = 1;
	}
	q->pos += size;
	rc = pq_skip_fast(q);
	return rc == -pte_eos ? 0 : rc;
}

int
pq_event(struct pq *q, struct pt_event *ev)
{
	int rc;

	if (q->index != 0)
		return -pte_bad_query;
	rc = pq_gate_fast(q, ev);
	if (rc == 1)
		rc = pq_ask(q, Q_EVENT, ev, NULL, NULL);
	return rc < 0 ? rc : pq_settle(q);
}

int
pq_get_offset(const struct pq *q, uint64_t *off)
{
	if (q->pos == NULL)
		return -pte_nosync;
	*off = (uint64_t)(q->pos - q->begin);
	return 0;
}

int
pq_get_sync_offset(const struct pq *q, uint64_t *off)
{
	if (q->sync == NULL)
		return -pte_nosync;
	*off = (uint64_t)(q->sync - q->begin);
	return 0;
}
