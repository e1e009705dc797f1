/* SPDX-License-Identifier: MIT */
/*
 * The query layer (pq.h).  Function by function it follows libipt
 * 2.0.5's pt_query_decoder.c (named in the comments) for the packets it
 * models: the same read-ahead (decode status packets up to the next TNT,
 * TIP or event packet), the same event queues (bound to PSBEND, TIP or
 * FUP, eight deep, and a standalone slot), the same position after each
 * call, so the offsets mt-decode reports and compares under -j are
 * libipt's.  Events carry no time: the layer refuses timing packets.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "pq.h"

/* Packet kinds (libipt's decoder functions); 0 is "none fetched". */
enum {
	PK_NONE = 0,
	PK_PAD, PK_PSB, PK_PSBEND, PK_TIP, PK_TNT8, PK_TNT64, PK_PGE, PK_PGD,
	PK_FUP, PK_MODE, PK_PIP, PK_VMCS, PK_CBR, PK_OVF,
};

/* Decoder function flags (pt_decoder_function.c's pdff_*). */
#define F_TIP		1
#define F_TNT		2
#define F_EVENT		4
#define F_PSBEND	8
#define F_FUP		16

static const uint8_t pq_flags[] = {
	[PK_TIP] = F_TIP, [PK_TNT8] = F_TNT, [PK_TNT64] = F_TNT,
	[PK_PGE] = F_EVENT, [PK_PGD] = F_EVENT, [PK_FUP] = F_FUP,
	[PK_MODE] = F_EVENT, [PK_PIP] = F_EVENT, [PK_VMCS] = F_EVENT,
	[PK_CBR] = F_EVENT, [PK_OVF] = F_EVENT | F_PSBEND,
	[PK_PSBEND] = F_PSBEND,
};

int
pq_init(struct pq *q, const struct pt_config *cfg)
{
	static const struct pt_errata none;

	memset(q, 0, sizeof(*q));
	if (memcmp(&cfg->errata, &none, sizeof(none)) != 0)
		return PQ_ABORT;
	q->begin = cfg->begin;
	q->end = cfg->end;
	q->pkt = pt_pkt_alloc_decoder(cfg);
	return q->pkt == NULL ? -pte_nomem : 0;
}

void
pq_fini(struct pq *q)
{
	pt_pkt_free_decoder(q->pkt);
	q->pkt = NULL;
}

/* pt_event_init on a queue slot or the standalone one. */
static struct pt_event *
pq_ev_init(struct pt_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	return ev;
}

static inline uint8_t
pq_inc(uint8_t i)
{
	return (uint8_t)((i + 1) % PQ_EVQ_MAX);
}

/* pt_evq_enqueue */
static struct pt_event *
pq_enqueue(struct pq *q, int evb)
{
	uint8_t idx = q->qe[evb], end = pq_inc(idx);

	if (q->qb[evb] == pq_inc(end))
		return NULL;
	q->qe[evb] = end;
	return pq_ev_init(&q->queue[evb][idx]);
}

/* pt_evq_dequeue */
static struct pt_event *
pq_dequeue(struct pq *q, int evb)
{
	uint8_t b = q->qb[evb];

	if (b == q->qe[evb])
		return NULL;
	q->qb[evb] = pq_inc(b);
	return &q->queue[evb][b];
}

static inline int
pq_pending(const struct pq *q, int evb)
{
	return q->qb[evb] != q->qe[evb];
}

/* pt_evq_find */
static struct pt_event *
pq_find(struct pq *q, int evb, enum pt_event_type t)
{
	uint8_t i;

	for (i = q->qb[evb]; i != q->qe[evb]; i = pq_inc(i))
		if (q->queue[evb][i].type == t)
			return &q->queue[evb][i];
	return NULL;
}

/* pt_qry_reset, but for the positions */
static void
pq_reset(struct pq *q)
{
	q->enabled = 0;
	q->consume_packet = 0;
	q->event = NULL;
	q->have_ip = q->suppressed = 0;
	q->ip = 0;
	q->tnt = q->index = 0;
	memset(q->qb, 0, sizeof(q->qb));
	memset(q->qe, 0, sizeof(q->qe));
}

/*
 * pt_df_fetch: the kind of the packet at q->pos into q->next; -pte_eos
 * at the end, -pte_bad_opc for an unknown opcode, PQ_ABORT for packets
 * not modelled.
 */
static int
pq_fetch(struct pq *q)
{
	const uint8_t *p = q->pos;
	size_t left = (size_t)(q->end - p);
	uint8_t opc;

	q->next = PK_NONE;
	if (left == 0)
		return -pte_eos;
	opc = p[0];
	if (opc == 0x00) {
		q->next = PK_PAD;
		return 0;
	}
	if (opc == 0x02) {
		if (left < 2)
			return -pte_eos;
		switch (p[1]) {
		case 0x82: q->next = PK_PSB; break;
		case 0x23: q->next = PK_PSBEND; break;
		case 0xa3: q->next = PK_TNT64; break;
		case 0x43: q->next = PK_PIP; break;
		case 0xc8: q->next = PK_VMCS; break;
		case 0x03: q->next = PK_CBR; break;
		case 0xf3: q->next = PK_OVF; break;
		case 0x73: case 0x83: case 0x62: case 0xe2: case 0xc2:
		case 0x22: case 0xa2: case 0xc3:
			return PQ_ABORT;	/* TMA, STOP, power, MNT */
		default:
			/* PTWRITE, else libipt's "unknown" (an error) */
			return (p[1] & 0x1f) == 0x12 ? PQ_ABORT : -pte_bad_opc;
		}
		return 0;
	}
	if (opc == 0x99) {
		q->next = PK_MODE;
		return 0;
	}
	if ((opc & 0x01) == 0x00) {
		q->next = PK_TNT8;
		return 0;
	}
	switch (opc & 0x1f) {
	case 0x0d: q->next = PK_TIP; return 0;
	case 0x1d: q->next = PK_FUP; return 0;
	case 0x11: q->next = PK_PGE; return 0;
	case 0x01: q->next = PK_PGD; return 0;
	}
	if ((opc & 0x03) == 0x03 || opc == 0x19 || opc == 0x59)
		return PQ_ABORT;	/* CYC, TSC, MTC */
	return -pte_bad_opc;
}

/* pt_qry_will_event */
static inline int
pq_will_event(const struct pq *q)
{
	uint8_t f = q->next < (int)sizeof(pq_flags) ? pq_flags[q->next] : 0;

	if (f & F_EVENT)
		return 1;
	if (f & F_PSBEND)
		return pq_pending(q, PQ_EVB_PSBEND);
	if (f & F_TIP)
		return pq_pending(q, PQ_EVB_TIP);
	if (f & F_FUP)
		return pq_pending(q, PQ_EVB_FUP);
	return 0;
}

int
pq_status(struct pq *q)
{
	int flags = 0;

	if (q->index == 0) {
		if (pq_will_event(q))
			flags |= pts_event_pending;
		/* pt_qry_will_eos: nothing fetched, and the end is next */
		if (q->next == PK_NONE && (q->pos == q->end ||
		    (q->end - q->pos == 1 && q->pos[0] == 0x02)))
			flags |= pts_eos;
	}
	return flags;
}

/*
 * A packet libipt decodes for us (the rare kinds) at q->pos: its size,
 * or libipt's error (-pte_eos: cut off by the end of the buffer).
 */
static int
pq_read(struct pq *q, struct pt_packet *pk)
{
	int n;

	if (pt_pkt_sync_set(q->pkt, (uint64_t)(q->pos - q->begin)) < 0)
		return PQ_ABORT;
	n = pt_pkt_next(q->pkt, pk, sizeof(*pk));
	return n == 0 ? -pte_internal : n;
}

/* pt_pkt_read_ip + pt_last_ip_update_ip: the size of the IP packet. */
static int
pq_decode_ip(struct pq *q, int *ipc_out)
{
	static const int8_t sz[8] = { 0, 2, 4, 6, 6, -1, 8, -1 };
	const uint8_t *p = q->pos;
	int ipc = (p[0] >> 5) & 7, n = sz[ipc], i;
	uint64_t v = 0;

	if (n < 0)
		return -pte_bad_packet;
	if (q->end - p < n + 1)
		return -pte_eos;
	if (q->end - p >= 9) {
		/* the payload in one little-endian load, masked */
		memcpy(&v, p + 1, 8);
		v = n == 8 ? le64toh(v) : le64toh(v) & ((1ull << (8 * n)) - 1);
	} else {
		for (i = n; i > 0; i--)
			v = (v << 8) | p[i];
	}
	*ipc_out = ipc;
	switch (ipc) {
	case pt_ipc_suppressed:
		q->suppressed = 1;
		return 1;
	case pt_ipc_update_16:
		q->ip = (q->ip & ~0xffffull) | v;
		break;
	case pt_ipc_update_32:
		q->ip = (q->ip & ~0xffffffffull) | v;
		break;
	case pt_ipc_update_48:
		q->ip = (q->ip & ~0xffffffffffffull) | v;
		break;
	case pt_ipc_sext_48:
		q->ip = (v & (1ull << 47)) ? v | 0xffff000000000000ull : v;
		break;
	default:
		q->ip = v;
		break;
	}
	q->have_ip = 1;
	q->suppressed = 0;
	return n + 1;
}

/* pt_last_ip_query */
static int
pq_last_ip(const struct pq *q, uint64_t *ip)
{
	if (!q->have_ip || q->suppressed) {
		*ip = 0;
		return q->have_ip ? -pte_ip_suppressed : -pte_noip;
	}
	*ip = q->ip;
	return 0;
}

/* pt_qry_event_ip */
static void
pq_event_ip(const struct pq *q, uint64_t *ip, struct pt_event *ev)
{
	if (pq_last_ip(q, ip) < 0)
		ev->ip_suppressed = 1;
}

/* The TNT packet at pos into the cache (pt_qry_decode_tnt_*). */
static int
pq_decode_tnt(struct pq *q, int size)
{
	uint64_t v = 0;
	int i, bits;

	if (q->end - q->pos < size)
		return -pte_eos;
	if (size == 1) {
		v = q->pos[0] >> 1;
	} else {
		for (i = 7; i >= 2; i--)
			v = (v << 8) | q->pos[i];
	}
	if (v <= 1)
		return -pte_bad_packet;
	if (q->index != 0)
		return -pte_bad_context;
	bits = 63 - __builtin_clzll(v);
	q->tnt = v & ~(1ull << bits);
	q->index = 1ull << (bits - 1);
	q->pos += size;
	return 0;
}

/* pt_qry_decode_tip and its event bindings (pt_qry_event_tip). */
static int
pq_decode_tip(struct pq *q)
{
	struct pt_event *ev;
	int ipc, size = pq_decode_ip(q, &ipc);

	if (size < 0)
		return size;
	ev = pq_dequeue(q, PQ_EVB_TIP);
	if (ev != NULL) {
		switch (ev->type) {
		case ptev_async_branch:
			q->consume_packet = 1;
			pq_event_ip(q, &ev->variant.async_branch.to, ev);
			break;
		case ptev_async_paging:
			pq_event_ip(q, &ev->variant.async_paging.ip, ev);
			break;
		case ptev_async_vmcs:
			pq_event_ip(q, &ev->variant.async_vmcs.ip, ev);
			break;
		case ptev_exec_mode:
			pq_event_ip(q, &ev->variant.exec_mode.ip, ev);
			break;
		default:
			return -pte_bad_context;
		}
		q->event = ev;
		if (pq_pending(q, PQ_EVB_TIP) || !q->consume_packet)
			return 0;
		q->consume_packet = 0;
	}
	q->pos += size;
	return 0;
}

/* pt_qry_decode_tip_pge */
static int
pq_decode_pge(struct pq *q)
{
	struct pt_event *ev;
	int ipc, size = pq_decode_ip(q, &ipc);

	if (size < 0)
		return size;
	if (!q->consume_packet) {
		ev = pq_ev_init(&q->standalone);
		ev->type = ptev_enabled;
		if (pq_last_ip(q, &ev->variant.enabled.ip) < 0)
			return -pte_bad_packet;
		q->tnt = q->index = 0;
		q->consume_packet = 1;
		q->enabled = 1;
	} else {
		ev = pq_dequeue(q, PQ_EVB_TIP);
		if (ev == NULL || ev->type != ptev_exec_mode)
			return -pte_bad_context;
		pq_event_ip(q, &ev->variant.exec_mode.ip, ev);
	}
	q->event = ev;
	if (pq_pending(q, PQ_EVB_TIP))
		return 0;
	q->consume_packet = 0;
	q->pos += size;
	return 0;
}

/* pt_qry_decode_tip_pgd */
static int
pq_decode_pgd(struct pq *q)
{
	struct pt_event *ev;
	uint64_t at;
	int ipc, size = pq_decode_ip(q, &ipc);

	if (size < 0)
		return size;
	ev = pq_dequeue(q, PQ_EVB_TIP);
	if (ev != NULL) {
		switch (ev->type) {
		case ptev_async_branch:
			at = ev->variant.async_branch.from;
			ev->type = ptev_async_disabled;
			ev->variant.async_disabled.at = at;
			pq_event_ip(q, &ev->variant.async_disabled.ip, ev);
			break;
		case ptev_async_paging:
		case ptev_async_vmcs:
		case ptev_exec_mode:
			ev->ip_suppressed = 1;
			break;
		default:
			return -pte_bad_context;
		}
	} else {
		ev = pq_ev_init(&q->standalone);
		ev->type = ptev_disabled;
		pq_event_ip(q, &ev->variant.disabled.ip, ev);
	}
	q->event = ev;
	if (pq_pending(q, PQ_EVB_TIP))
		return 0;
	q->enabled = 0;
	q->pos += size;
	return 0;
}

/* pt_qry_decode_fup and pt_qry_event_fup */
static int
pq_decode_fup(struct pq *q)
{
	struct pt_event *ev;
	uint64_t ip;
	int ipc, size = pq_decode_ip(q, &ipc);

	if (size < 0)
		return size;
	ev = pq_dequeue(q, PQ_EVB_FUP);
	if (ev != NULL) {
		switch (ev->type) {
		case ptev_overflow:
			q->consume_packet = 1;
			if (pq_last_ip(q, &ev->variant.overflow.ip) < 0)
				return -pte_noip;
			break;
		case ptev_tsx:
			if (!ev->variant.tsx.aborted)
				q->consume_packet = 1;
			pq_event_ip(q, &ev->variant.tsx.ip, ev);
			break;
		default:
			return PQ_ABORT;
		}
		q->event = ev;
		if (pq_pending(q, PQ_EVB_FUP) || !q->consume_packet)
			return 0;
		q->consume_packet = 0;
	} else {
		if (pq_last_ip(q, &ip) < 0)
			return -pte_noip;
		ev = pq_enqueue(q, PQ_EVB_TIP);
		if (ev == NULL)
			return -pte_nomem;
		ev->type = ptev_async_branch;
		ev->variant.async_branch.from = ip;
	}
	q->pos += size;
	return 0;
}

/* pt_qry_decode_mode (exec: binds to TIP; tsx: to FUP, or standalone) */
static int
pq_decode_mode(struct pq *q)
{
	struct pt_packet pk;
	struct pt_event *ev;
	int n = pq_read(q, &pk);

	if (n < 0)
		return n;
	if (pk.payload.mode.leaf == pt_mol_exec) {
		ev = pq_enqueue(q, PQ_EVB_TIP);
		if (ev == NULL)
			return -pte_nomem;
		ev->type = ptev_exec_mode;
		ev->variant.exec_mode.mode =
		    pt_get_exec_mode(&pk.payload.mode.bits.exec);
	} else {
		if (!q->enabled) {
			ev = pq_ev_init(&q->standalone);
			ev->ip_suppressed = 1;
			q->event = ev;
		} else if ((ev = pq_enqueue(q, PQ_EVB_FUP)) == NULL) {
			return -pte_nomem;
		}
		ev->type = ptev_tsx;
		ev->variant.tsx.speculative = pk.payload.mode.bits.tsx.intx;
		ev->variant.tsx.aborted = pk.payload.mode.bits.tsx.abrt;
	}
	q->pos += n;
	return 0;
}

/* pt_qry_decode_pip (standalone, or bound to an async branch's TIP) */
static int
pq_decode_pip(struct pq *q)
{
	struct pt_packet pk;
	struct pt_event *ev;
	int n = pq_read(q, &pk);

	if (n < 0)
		return n;
	if (pq_find(q, PQ_EVB_TIP, ptev_async_branch) == NULL) {
		ev = pq_ev_init(&q->standalone);
		ev->type = ptev_paging;
		ev->variant.paging.cr3 = pk.payload.pip.cr3;
		ev->variant.paging.non_root = pk.payload.pip.nr;
		q->event = ev;
	} else {
		ev = pq_enqueue(q, PQ_EVB_TIP);
		if (ev == NULL)
			return -pte_nomem;
		ev->type = ptev_async_paging;
		ev->variant.async_paging.cr3 = pk.payload.pip.cr3;
		ev->variant.async_paging.non_root = pk.payload.pip.nr;
	}
	q->pos += n;
	return 0;
}

/* pt_qry_decode_cbr: a standalone event */
static int
pq_decode_cbr(struct pq *q)
{
	struct pt_packet pk;
	struct pt_event *ev;
	int n = pq_read(q, &pk);

	if (n < 0)
		return n;
	ev = pq_ev_init(&q->standalone);
	ev->type = ptev_cbr;
	ev->variant.cbr.ratio = pk.payload.cbr.ratio;
	q->event = ev;
	q->pos += n;
	return 0;
}

/* pt_qry_process_pending_psb_events with pt_qry_event_psbend */
static int
pq_psb_events(struct pq *q)
{
	struct pt_event *ev = pq_dequeue(q, PQ_EVB_PSBEND);

	if (ev == NULL)
		return 0;
	ev->status_update = 1;
	switch (ev->type) {
	case ptev_async_paging:
		pq_event_ip(q, &ev->variant.async_paging.ip, ev);
		break;
	case ptev_exec_mode:
		pq_event_ip(q, &ev->variant.exec_mode.ip, ev);
		break;
	case ptev_tsx:
		pq_event_ip(q, &ev->variant.tsx.ip, ev);
		break;
	case ptev_async_vmcs:
		pq_event_ip(q, &ev->variant.async_vmcs.ip, ev);
		break;
	case ptev_cbr:
		break;
	default:
		return PQ_ABORT;
	}
	q->event = ev;
	return 1;
}

/*
 * pt_pkt_find_ovf_fup through libipt's packet decoder: 1 with the FUP
 * that OVF binds to, 0 when tracing resumes disabled, else an error.
 */
static int
pq_find_ovf_fup(struct pq *q)
{
	struct pt_packet pk;
	int n;

	if (pt_pkt_sync_set(q->pkt, (uint64_t)(q->pos - q->begin)) < 0)
		return PQ_ABORT;
	for (;;) {
		n = pt_pkt_next(q->pkt, &pk, sizeof(pk));
		if (n < 0)
			return n;
		switch (pk.type) {
		case ppt_fup:
			return 1;
		case ppt_pad:
		case ppt_cbr:
			continue;
		case ppt_psb:
		case ppt_tip_pge:
		case ppt_mode:
		case ppt_pip:
		case ppt_vmcs:
			return 0;
		case ppt_psbend:
		case ppt_tip:
		case ppt_tip_pgd:
		case ppt_tnt_8:
		case ppt_tnt_64:
			return -pte_bad_context;
		default:
			return PQ_ABORT;	/* not modelled here */
		}
	}
}

/* pt_qry_decode_ovf (no errata) */
static int
pq_decode_ovf(struct pq *q)
{
	struct pt_event *ev;
	int rc = pq_psb_events(q);

	if (rc != 0)
		return rc < 0 ? rc : 0;
	pq_reset(q);
	q->pos += 2;
	rc = pq_find_ovf_fup(q);
	if (rc <= 0) {
		if (rc < 0 && rc != -pte_eos)
			return rc;
		ev = pq_ev_init(&q->standalone);
		ev->type = ptev_overflow;
		ev->ip_suppressed = 1;
		q->enabled = 0;
		q->event = ev;
		return 0;
	}
	ev = pq_enqueue(q, PQ_EVB_FUP);
	if (ev == NULL)
		return -pte_nomem;
	ev->type = ptev_overflow;
	q->enabled = 1;
	return 0;
}

/* pt_qry_decode_psbend */
static int
pq_decode_psbend(struct pq *q)
{
	int rc = pq_psb_events(q);

	if (rc != 0)
		return rc < 0 ? rc : 0;
	q->pos += 2;
	return 0;
}

/* The header form of a packet inside PSB+ (pt_qry_header_*). */
static int
pq_header(struct pq *q)
{
	struct pt_packet pk;
	struct pt_event *ev;
	int n, ipc;

	if (q->next == PK_PAD) {
		q->pos++;
		return 0;
	}
	if (q->next == PK_FUP) {
		n = pq_decode_ip(q, &ipc);
		if (n < 0)
			return n;
		if (ipc != pt_ipc_suppressed)
			q->enabled = 1;
		q->pos += n;
		return 0;
	}
	if (q->next != PK_MODE && q->next != PK_PIP && q->next != PK_VMCS &&
	    q->next != PK_CBR)
		return -pte_bad_context;	/* not a header packet */
	n = pq_read(q, &pk);
	if (n < 0)
		return n;
	ev = pq_enqueue(q, PQ_EVB_PSBEND);
	if (ev == NULL)
		return -pte_nomem;
	switch (pk.type) {
	case ppt_mode:
		if (pk.payload.mode.leaf == pt_mol_exec) {
			ev->type = ptev_exec_mode;
			ev->variant.exec_mode.mode =
			    pt_get_exec_mode(&pk.payload.mode.bits.exec);
		} else {
			ev->type = ptev_tsx;
			ev->variant.tsx.speculative =
			    pk.payload.mode.bits.tsx.intx;
			ev->variant.tsx.aborted = pk.payload.mode.bits.tsx.abrt;
		}
		break;
	case ppt_pip:
		ev->type = ptev_async_paging;
		ev->variant.async_paging.cr3 = pk.payload.pip.cr3;
		ev->variant.async_paging.non_root = pk.payload.pip.nr;
		break;
	case ppt_vmcs:
		ev->type = ptev_async_vmcs;
		ev->variant.async_vmcs.base = pk.payload.vmcs.base;
		break;
	default:
		ev->type = ptev_cbr;
		ev->variant.cbr.ratio = pk.payload.cbr.ratio;
		break;
	}
	q->pos += n;
	return 0;
}

/* pt_qry_decode_psb with pt_qry_read_psb_header: stops at PSBEND. */
static int
pq_decode_psb(struct pq *q)
{
	struct pt_packet pk;
	const uint8_t *psb = q->pos;
	int rc = pq_read(q, &pk);

	if (rc < 0)
		return rc;
	q->pos += rc;
	q->have_ip = q->suppressed = 0;
	q->ip = 0;
	for (;;) {
		while (q->pos < q->end && q->pos[0] == 0x00)
			q->pos++;	/* PADs */
		rc = pq_fetch(q);
		if (rc == 0 && (q->next == PK_PSBEND || q->next == PK_OVF))
			return 0;
		if (rc == 0)
			rc = pq_header(q);
		if (rc < 0) {
			/* back to the PSB, without its events */
			q->pos = psb;
			q->qb[PQ_EVB_PSBEND] = q->qe[PQ_EVB_PSBEND] = 0;
			q->next = PK_PSB;
			return rc;
		}
	}
}

/* The packet at pos in its decode form (dfun->decode). */
static int
pq_decode(struct pq *q)
{
	switch (q->next) {
	case PK_PAD:
		q->pos++;
		return 0;
	case PK_PSB: return pq_decode_psb(q);
	case PK_PSBEND: return pq_decode_psbend(q);
	case PK_TIP: return pq_decode_tip(q);
	case PK_TNT8: return pq_decode_tnt(q, 1);
	case PK_TNT64: return pq_decode_tnt(q, 8);
	case PK_PGE: return pq_decode_pge(q);
	case PK_PGD: return pq_decode_pgd(q);
	case PK_FUP: return pq_decode_fup(q);
	case PK_MODE: return pq_decode_mode(q);
	case PK_PIP: return pq_decode_pip(q);
	case PK_CBR: return pq_decode_cbr(q);
	case PK_OVF: return pq_decode_ovf(q);
	default: return PQ_ABORT;	/* VMCS outside PSB+ */
	}
}

/* pt_qry_read_ahead (a cut-off status packet is refused, not skipped) */
static int
pq_read_ahead(struct pq *q)
{
	int rc;

	for (;;) {
		/* PADs are decoded here one by one, to the same end */
		while (q->pos < q->end && q->pos[0] == 0x00)
			q->pos++;
		rc = pq_fetch(q);
		if (rc < 0)
			return rc;
		if (pq_flags[q->next] & (F_TIP | F_TNT))
			return 0;
		if (pq_will_event(q))
			return 0;
		rc = pq_decode(q);
		if (rc < 0) {
			if (rc == -pte_eos) {
				/* a status packet cut off at the end */
				q->pos = q->end;
				q->next = PK_NONE;
			}
			return rc;
		}
	}
}

/*
 * pt_qry_read_ahead, the common case first: PADs, then a TNT-8 or a TIP
 * (where the read-ahead stops whatever the events queued).
 */
static inline int
pq_ahead(struct pq *q)
{
	const uint8_t *p = q->pos;
	uint8_t opc;

	while (p < q->end && p[0] == 0x00)
		p++;
	q->pos = p;
	if (p < q->end) {
		opc = p[0];
		if ((opc & 0x01) == 0x00 && opc != 0x02) {
			q->next = PK_TNT8;
			return 0;
		}
		if ((opc & 0x1f) == 0x0d) {
			q->next = PK_TIP;
			return 0;
		}
	}
	return pq_read_ahead(q);
}

/* pt_qry_start on the PSB at @pos */
static int
pq_start(struct pq *q, const uint8_t *pos, uint64_t *ip)
{
	int rc, st, have;

	pq_reset(q);
	q->sync = q->pos = pos;
	rc = pq_fetch(q);
	if (rc < 0)
		return rc;
	if (q->next != PK_PSB)
		return -pte_nosync;
	rc = pq_decode_psb(q);
	if (rc < 0)
		return rc;
	have = pq_last_ip(q, ip) == 0;
	rc = pq_read_ahead(q);
	if (rc < 0)
		return rc;
	st = pq_status(q);
	if (!have && pq_last_ip(q, ip) < 0)
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

/* After a query: read ahead (the end is no error), then the status. */
static int
pq_done(struct pq *q, int flags)
{
	int rc = pq_ahead(q);

	if (rc < 0 && rc != -pte_eos)
		return rc;
	return flags | pq_status(q);
}

/* pt_qry_provoke_fetch_error */
static int
pq_fetch_error(struct pq *q)
{
	int rc = pq_fetch(q);

	return rc < 0 ? rc : PQ_ABORT;
}

/* pt_qry_cache_tnt */
static int
pq_cache_tnt(struct pq *q)
{
	int rc, f;

	for (;;) {
		if (q->next == PK_NONE)
			return pq_fetch_error(q);
		if (pq_will_event(q))
			return -pte_bad_query;
		f = pq_flags[q->next];
		if (f & F_TIP)
			return -pte_bad_query;
		q->event = NULL;
		rc = pq_decode(q);
		if (rc < 0)
			return rc;
		if (q->event != NULL)
			return -pte_event_ignored;
		if (f & F_TNT)
			break;
		rc = pq_read_ahead(q);
		if (rc < 0)
			return rc;
	}
	rc = pq_ahead(q);
	return rc < 0 && rc != -pte_eos ? rc : 0;
}

int
pq_cond_branch(struct pq *q, int *taken)
{
	int rc;

	if (q->index == 0) {
		/* pt_qry_cache_tnt at a TNT-8: decode it, read ahead */
		if (q->next == PK_TNT8) {
			rc = pq_decode_tnt(q, 1);
			if (rc == 0)
				rc = pq_ahead(q);
			if (rc == -pte_eos)
				rc = 0;
		} else {
			rc = pq_cache_tnt(q);
		}
		if (rc < 0)
			return rc;
	}
	if (q->index == 0)
		return PQ_ABORT;
	*taken = (q->tnt & q->index) != 0;
	q->index >>= 1;
	return pq_status(q);
}

int
pq_indirect_branch(struct pq *q, uint64_t *ip)
{
	int rc, f, flags = 0;

	/* The common case: a TIP of no event. */
	if (q->next == PK_TIP && !pq_pending(q, PQ_EVB_TIP)) {
		rc = pq_decode_ip(q, &f);
		if (rc < 0)
			return rc;
		q->pos += rc;
		if (pq_last_ip(q, ip) < 0)
			flags |= pts_ip_suppressed;
		return pq_done(q, flags);
	}
	for (;;) {
		if (q->next == PK_NONE)
			return pq_fetch_error(q);
		if (pq_will_event(q))
			return -pte_bad_query;
		f = pq_flags[q->next];
		if ((f & F_TNT) && q->index != 0)
			return -pte_bad_query;
		q->event = NULL;
		rc = pq_decode(q);
		if (rc < 0)
			return rc;
		if (q->event != NULL)
			return -pte_event_ignored;
		if (f & F_TIP) {
			if (pq_last_ip(q, ip) < 0)
				flags |= pts_ip_suppressed;
			break;
		}
		rc = pq_read_ahead(q);
		if (rc < 0)
			return rc;
	}
	return pq_done(q, flags);
}

int
pq_event(struct pq *q, struct pt_event *ev)
{
	int rc, f;

	if (q->index != 0)
		return -pte_bad_query;
	for (;;) {
		if (q->next == PK_NONE)
			return pq_fetch_error(q);
		f = pq_flags[q->next];
		if ((f & (F_TIP | F_TNT)) && !pq_will_event(q))
			return -pte_bad_query;
		q->event = NULL;
		rc = pq_decode(q);
		if (rc < 0)
			return rc;
		if (q->event != NULL) {
			*ev = *q->event;
			break;
		}
		rc = pq_read_ahead(q);
		if (rc < 0)
			return rc;
	}
	return pq_done(q, 0);
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
