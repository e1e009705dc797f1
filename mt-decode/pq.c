/* SPDX-License-Identifier: MIT */
/*
 * The query layer (pq.h): PT packets to TNT bits, branch targets and
 * events, as a state machine driven by one table of packet rules.
 *
 * What it must reproduce is what libipt 2.0.5's query decoder shows its
 * caller (its results, status bits and offsets, which mt-decode writes
 * and compares under -j); how it is built is mt's:
 *
 * - pq_lex() names the packet at the cursor from its first bytes;
 * - pq_rules[] says per packet kind which query it answers (a TNT or a TIP),
 *   where waiting events are completed (at a TIP, FUP or PSBEND), whether
 *   it always makes an event, and what it is inside PSB+;
 * - events that wait for a later packet sit on one list, each with the
 *   binder it waits for; at that packet pq_complete() takes the oldest
 *   waiting there and fills in its IP through a table of IP fields;
 * - pq_apply() is the one transition function (a packet's effect on
 *   the state), pq_skip() applies packets until one that answers a
 *   query (this file, its interface pqm.h), and pq_ask() serves all
 *   three queries from one loop, with what each refuses in a table
 *   (pqquery.c).
 *
 * The behaviour it holds to, observed from libipt's query API (and
 * checked against it on every test trace: tests/mt-decode-cache.bats):
 *
 * - After every call the cursor stands at the next packet that answers
 *   a query: a TNT, a TIP, a packet that always makes an event (TIP.PGE,
 *   TIP.PGD, MODE, PIP, VMCS, CBR, OVF) or a TIP, FUP or PSBEND that
 *   events wait for; the packets before it (PAD, PSB+, a FUP that starts
 *   an asynchronous branch) are decoded on the way.  That offset is the
 *   one reported.
 * - One TNT packet's bits are held at a time; while any are, no event
 *   or end is signalled.  The end is signalled when the cursor is at the
 *   end of the buffer (or at a lone 0x02 byte there).
 * - MODE.Exec waits for the next TIP, TIP.PGE or TIP.PGD; a FUP outside
 *   PSB+ waits for the TIP (an asynchronous branch) or TIP.PGD (an
 *   asynchronous disable); MODE.TSX waits for its FUP while tracing is
 *   enabled, else it is an event at once; PIP waits for the TIP when an
 *   asynchronous branch waits there, else it is an event at once; CBR is
 *   an event at once.  Packets of PSB+ (MODE, PIP, VMCS, CBR) wait for
 *   PSBEND and are status updates; a FUP there sets the IP.  At most six
 *   events wait for each binder.
 * - At a completing packet one waiting event is delivered per event
 *   query, oldest first, the packet's IP put in it (a TIP.PGD gives no
 *   IP to MODE, PIP or VMCS events, and turns an asynchronous branch into
 *   an asynchronous disable); a TIP.PGE without events waiting is itself
 *   the enable event, ahead of those.  The packet is passed once the
 *   last waiting event went, if one of those (an asynchronous branch, an
 *   overflow, a TSX event that did not abort, the enable) took the packet;
 *   otherwise the packet stays to answer the branch query after it.  A
 *   TIP.PGD without an asynchronous branch waiting disables tracing
 *   unless another event took it.
 * - OVF delivers PSB+ events still waiting, then clears everything and
 *   looks ahead for the FUP where tracing resumes: the overflow waits
 *   for that FUP, or is an event at once (no IP) when tracing resumes
 *   disabled or the trace ends.
 * - A PSB+ that fails to decode leaves the cursor at its PSB and drops
 *   its events; a status packet cut off by the end puts the cursor at
 *   the end.
 *
 * Events carry no time: timing packets are refused (PQ_ABORT), as are
 * the other packets not modelled (pq.h).
 */
#include <endian.h>
#include <stddef.h>
#include <string.h>

#include "pq.h"
#include "pqm.h"

const struct pq_rule pq_rules[PK_NKINDS] = {
	[PK_NONE] =	{ ANS_NONE, -1, 0, IN_PSB_BAD },
	[PK_PAD] =	{ ANS_NONE, -1, 0, IN_PSB_PAD },
	[PK_PSB] =	{ ANS_NONE, -1, 0, IN_PSB_BAD },
	[PK_PSBEND] =	{ ANS_NONE, PQ_AT_PSBEND, 0, IN_PSB_END },
	[PK_OVF] =	{ ANS_NONE, -1, 1, IN_PSB_END },
	[PK_TNT8] =	{ ANS_TNT, -1, 0, IN_PSB_BAD },
	[PK_TNT64] =	{ ANS_TNT, -1, 0, IN_PSB_BAD },
	[PK_TIP] =	{ ANS_TIP, PQ_AT_TIP, 0, IN_PSB_BAD },
	[PK_PGE] =	{ ANS_NONE, PQ_AT_TIP, 1, IN_PSB_BAD },
	[PK_PGD] =	{ ANS_NONE, PQ_AT_TIP, 1, IN_PSB_BAD },
	[PK_FUP] =	{ ANS_NONE, PQ_AT_FUP, 0, IN_PSB_IP },
	[PK_MODE] =	{ ANS_NONE, -1, 1, IN_PSB_EVENT },
	[PK_PIP] =	{ ANS_NONE, -1, 1, IN_PSB_EVENT },
	[PK_VMCS] =	{ ANS_NONE, -1, 1, IN_PSB_EVENT },
	[PK_CBR] =	{ ANS_NONE, -1, 1, IN_PSB_EVENT },
};

/*
 * Where a completing packet's IP goes, per event type (0: the type takes
 * no IP there), and which types may wait at each binder.
 */
#define IPF(m)	(uint16_t)offsetof(struct pt_event, variant.m)
#define PQ_NTYPES	32	/* event types, as bits of may_wait too */
_Static_assert(ptev_mnt < PQ_NTYPES, "pt_event types fit the tables");
static const uint16_t ip_field[PQ_NTYPES] = {
	[ptev_async_branch] = IPF(async_branch.to),
	[ptev_async_paging] = IPF(async_paging.ip),
	[ptev_async_vmcs] = IPF(async_vmcs.ip),
	[ptev_exec_mode] = IPF(exec_mode.ip),
	[ptev_tsx] = IPF(tsx.ip),
	[ptev_overflow] = IPF(overflow.ip),
};
#undef IPF
#define BIT(t)	(1u << (t))
static const uint32_t may_wait[PQ_AT_N] = {
	[PQ_AT_PSBEND] = BIT(ptev_async_paging) | BIT(ptev_exec_mode) |
	    BIT(ptev_tsx) | BIT(ptev_async_vmcs) | BIT(ptev_cbr),
	[PQ_AT_TIP] = BIT(ptev_async_branch) | BIT(ptev_async_paging) |
	    BIT(ptev_async_vmcs) | BIT(ptev_exec_mode),
	[PQ_AT_FUP] = BIT(ptev_overflow) | BIT(ptev_tsx),
};
/* Events that, taken at their packet, pass it (the rest leave it). */
static const uint32_t takes_packet = BIT(ptev_async_branch) |
    BIT(ptev_overflow);
#undef BIT

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

/* The state a PSB or an OVF starts from: nothing known, nothing held. */
void
pq_clear(struct pq *q)
{
	q->enabled = 0;
	q->taken = 0;
	q->made = 0;
	q->ip_state = PQ_IP_NONE;
	q->ip = 0;
	q->tnt = q->index = 0;
	q->nwait = 0;
	memset(q->nwait_at, 0, sizeof(q->nwait_at));
}

/*
 * Name the packet at the cursor (q->next); -pte_eos at the end,
 * -pte_bad_opc for an opcode PT does not have, PQ_ABORT for packets
 * not modelled.
 */
int
pq_lex(struct pq *q)
{
	/* The second byte of 0x02 packets (0: not modelled, see below). */
	static const uint8_t ext[256] = {
		[0x82] = PK_PSB, [0x23] = PK_PSBEND, [0xa3] = PK_TNT64,
		[0x43] = PK_PIP, [0xc8] = PK_VMCS, [0x03] = PK_CBR,
		[0xf3] = PK_OVF,
	};
	/* IP packets by their low five bits. */
	static const uint8_t ipk[32] = {
		[0x0d] = PK_TIP, [0x1d] = PK_FUP, [0x11] = PK_PGE,
		[0x01] = PK_PGD,
	};
	const uint8_t *p = q->pos;
	size_t left = (size_t)(q->end - p);
	uint8_t b;

	q->next = PK_NONE;
	if (left == 0)
		return -pte_eos;
	b = p[0];
	if (b == 0x00) {
		q->next = PK_PAD;
	} else if (b == 0x02) {
		if (left < 2)
			return -pte_eos;
		q->next = ext[p[1]];
		if (q->next == PK_NONE) {
			/* TMA, STOP, power, MNT and PTWRITE are PT's: refused;
			 * any other is no packet at all */
			switch (p[1]) {
			case 0x73: case 0x83: case 0x62: case 0xe2: case 0xc2:
			case 0x22: case 0xa2: case 0xc3:
				return PQ_ABORT;
			}
			return (p[1] & 0x1f) == 0x12 ? PQ_ABORT : -pte_bad_opc;
		}
	} else if (b == 0x99) {
		q->next = PK_MODE;
	} else if ((b & 0x01) == 0x00) {
		q->next = PK_TNT8;
	} else if (ipk[b & 0x1f] != PK_NONE) {
		q->next = ipk[b & 0x1f];
	} else {
		/* CYC, TSC and MTC: timing, refused; else no packet */
		return (b & 0x03) == 0x03 || b == 0x19 || b == 0x59 ?
		    PQ_ABORT : -pte_bad_opc;
	}
	return 0;
}

/*
 * The status once no TNT bits are held, kept for pq_tnt_take(): nothing
 * it looks at changes until the next query.  Returns the status now.
 */
int
pq_settle(struct pq *q)
{
	int flags = 0;

	if (pq_makes_event(q))
		flags |= pts_event_pending;
	if (q->next == PK_NONE && (q->pos == q->end ||
	    (q->end - q->pos == 1 && q->pos[0] == 0x02)))
		flags |= pts_eos;
	q->st_end = flags;
	return q->index != 0 ? 0 : flags;	/* bits held: nothing said */
}

/* The packet at the cursor through libipt's packet decoder: its size. */
int
pq_read(struct pq *q, struct pt_packet *pk)
{
	int n;

	if (pt_pkt_sync_set(q->pkt, (uint64_t)(q->pos - q->begin)) < 0)
		return PQ_ABORT;
	n = pt_pkt_next(q->pkt, pk, sizeof(*pk));
	return n == 0 ? -pte_internal : n;
}

/*
 * The IP packet at the cursor: the last IP updated by its compression
 * (SDM "IP Compression"); returns the packet's size.  *@ipc its
 * compression.
 */
int
pq_ip_packet(struct pq *q, int *ipc)
{
	static const int8_t bytes[8] = { 0, 2, 4, 6, 6, -1, 8, -1 };
	static const uint64_t keep[8] = {
		0, ~0xffffull, ~0xffffffffull, 0, ~0xffffffffffffull, 0, 0, 0,
	};
	const uint8_t *p = q->pos;
	int c = p[0] >> 5, n = bytes[c], i;
	uint64_t v = 0;

	if (n < 0)
		return -pte_bad_packet;
	if (q->end - p < n + 1)
		return -pte_eos;
	if (q->end - p >= 9) {
		memcpy(&v, p + 1, 8);	/* one load, then masked */
		v = n == 8 ? le64toh(v) : le64toh(v) & ((1ull << (8 * n)) - 1);
	} else {
		for (i = n; i > 0; i--)
			v = (v << 8) | p[i];
	}
	*ipc = c;
	if (c == pt_ipc_suppressed) {
		/* an IP known before is hidden; none known stays none */
		if (q->ip_state != PQ_IP_NONE)
			q->ip_state = PQ_IP_SUPPRESSED;
		return 1;
	}
	if (c == pt_ipc_sext_48 && (v & (1ull << 47)))
		v |= 0xffff000000000000ull;
	q->ip = (q->ip & keep[c]) | v;
	q->ip_state = PQ_IP_VALID;
	return n + 1;
}

/* A new event at once (delivered by the query that applied the packet). */
static struct pt_event *
pq_now(struct pq *q, enum pt_event_type t)
{
	memset(&q->out, 0, sizeof(q->out));
	q->out.type = t;
	q->made = 1;
	return &q->out;
}

/* A new event that waits at binder @at (NULL: six wait there already). */
static struct pt_event *
pq_wait(struct pq *q, int at, enum pt_event_type t)
{
	struct pq_waiting *w;

	if (q->nwait_at[at] >= PQ_WAIT_EACH)
		return NULL;
	w = &q->wait[q->nwait++];
	memset(&w->ev, 0, sizeof(w->ev));
	w->ev.type = t;
	w->at = (uint8_t)at;
	q->nwait_at[at]++;
	return &w->ev;
}

/* The oldest event waiting at @at, taken off the list into q->out. */
static struct pt_event *
pq_take(struct pq *q, int at)
{
	unsigned i;

	for (i = 0; q->wait[i].at != at; i++)
		;
	q->out = q->wait[i].ev;
	memmove(&q->wait[i], &q->wait[i + 1],
	    (q->nwait - i - 1) * sizeof(q->wait[0]));
	q->nwait--;
	q->nwait_at[at]--;
	q->made = 1;
	return &q->out;
}

/* The first event of type @t waiting at @at, or NULL. */
static const struct pt_event *
pq_find(const struct pq *q, int at, enum pt_event_type t)
{
	unsigned i;

	for (i = 0; i < q->nwait; i++)
		if (q->wait[i].at == at && q->wait[i].ev.type == t)
			return &q->wait[i].ev;
	return NULL;
}

/* Put the last IP into @ev's IP field, or mark it suppressed. */
static void
pq_fill_ip(const struct pq *q, struct pt_event *ev)
{
	uint64_t ip;

	if (pq_ip(q, &ip) < 0)
		ev->ip_suppressed = 1;
	memcpy((char *)ev + ip_field[ev->type], &ip, sizeof(ip));
}

/*
 * Deliver the oldest event waiting at the completing packet of binder
 * @at (@size bytes, its IP already read), and pass the packet once the
 * last went and one of them took it.  PQ_ABORT or -pte_bad_context for
 * a type that cannot wait there.
 */
static int
pq_complete(struct pq *q, int at, int size)
{
	struct pt_event *ev = pq_take(q, at);
	uint64_t from, ip;

	if (!(may_wait[at] & (1u << ev->type)))
		return at == PQ_AT_FUP ? PQ_ABORT : -pte_bad_context;
	if (q->next == PK_PGD) {
		/* no IP for what waited but an asynchronous branch, which
		 * becomes the disable; then tracing is off */
		if (ev->type == ptev_async_branch) {
			from = ev->variant.async_branch.from;
			ev->type = ptev_async_disabled;
			ev->variant.async_disabled.at = from;
			if (pq_ip(q, &ip) < 0)
				ev->ip_suppressed = 1;
			ev->variant.async_disabled.ip = ip;
		} else {
			ev->ip_suppressed = 1;
		}
		if (q->nwait_at[at] == 0) {
			q->enabled = 0;
			q->pos += size;
		}
		return 0;
	}
	if (q->next == PK_PGE && ev->type != ptev_exec_mode)
		return -pte_bad_context;
	if (ev->type == ptev_overflow) {
		if (pq_ip(q, &ev->variant.overflow.ip) < 0)
			return -pte_noip;
	} else if (ip_field[ev->type] != 0) {
		pq_fill_ip(q, ev);
	}
	if (at == PQ_AT_PSBEND) {
		/* PSBEND (or OVF) is passed by a later apply */
		ev->status_update = 1;
		return 0;
	}
	if ((1u << ev->type) & takes_packet ||
	    (ev->type == ptev_tsx && !ev->variant.tsx.aborted))
		q->taken = 1;
	if (q->nwait_at[at] > 0 || !q->taken)
		return 0;	/* more wait, or it answers the branch query */
	q->taken = 0;
	q->pos += size;
	return 0;
}

/* An IP packet (TIP, TIP.PGE, TIP.PGD, FUP) at the cursor. */
static int
pq_apply_ip(struct pq *q)
{
	struct pt_event *ev;
	uint64_t ip;
	int ipc, size = pq_ip_packet(q, &ipc);
	int at = pq_rules[q->next].completes;

	if (size < 0)
		return size;
	if (q->next == PK_PGE && !q->taken) {
		/* the enable, ahead of any MODE.Exec waiting */
		ev = pq_now(q, ptev_enabled);
		if (pq_ip(q, &ev->variant.enabled.ip) < 0)
			return -pte_bad_packet;
		q->tnt = q->index = 0;
		q->taken = 1;
		q->enabled = 1;
		if (q->nwait_at[at] == 0) {
			q->taken = 0;
			q->pos += size;
		}
		return 0;
	}
	if (q->nwait_at[at] > 0)
		return pq_complete(q, at, size);
	switch (q->next) {
	case PK_PGD:
		ev = pq_now(q, ptev_disabled);
		if (pq_ip(q, &ev->variant.disabled.ip) < 0)
			ev->ip_suppressed = 1;
		q->enabled = 0;
		break;
	case PK_FUP:
		/* the source of an asynchronous branch: waits for the TIP */
		if (pq_ip(q, &ip) < 0)
			return -pte_noip;
		ev = pq_wait(q, PQ_AT_TIP, ptev_async_branch);
		if (ev == NULL)
			return -pte_nomem;
		ev->variant.async_branch.from = ip;
		break;
	case PK_PGE:
		/* the enable taken, no MODE.Exec waiting (any more) */
		return -pte_bad_context;
	default:
		break;		/* a TIP: the branch query's */
	}
	q->pos += size;
	return 0;
}

/* The TNT packet at the cursor: its bits held, the first bit highest. */
int
pq_apply_tnt(struct pq *q, int size)
{
	uint64_t v = 0;
	int i, n;

	if (q->end - q->pos < size)
		return -pte_eos;
	if (size == 1) {
		v = q->pos[0] >> 1;
	} else {
		for (i = 7; i >= 2; i--)
			v = (v << 8) | q->pos[i];
	}
	if (v <= 1)
		return -pte_bad_packet;	/* no stop bit */
	if (q->index != 0)
		return -pte_bad_context;
	n = 63 - __builtin_clzll(v);
	q->tnt = v & ~(1ull << n);
	q->index = 1ull << (n - 1);
	q->pos += size;
	return 0;
}

/*
 * The event a MODE, PIP, VMCS or CBR packet makes (its payload from
 * @pk), waiting at @at, or now (@at < 0).  -pte_nomem when six wait.
 */
static int
pq_packet_event(struct pq *q, const struct pt_packet *pk, int at)
{
	struct pt_event *ev;
	enum pt_event_type t;

	switch (pk->type) {
	case ppt_mode:
		t = pk->payload.mode.leaf == pt_mol_exec ? ptev_exec_mode :
		    ptev_tsx;
		break;
	case ppt_pip:
		t = at == PQ_AT_PSBEND || at == PQ_AT_TIP ?
		    ptev_async_paging : ptev_paging;
		break;
	case ppt_vmcs:
		t = ptev_async_vmcs;
		break;
	default:
		t = ptev_cbr;
		break;
	}
	ev = at < 0 ? pq_now(q, t) : pq_wait(q, at, t);
	if (ev == NULL)
		return -pte_nomem;
	switch (t) {
	case ptev_exec_mode:
		ev->variant.exec_mode.mode =
		    pt_get_exec_mode(&pk->payload.mode.bits.exec);
		break;
	case ptev_tsx:
		ev->variant.tsx.speculative = pk->payload.mode.bits.tsx.intx;
		ev->variant.tsx.aborted = pk->payload.mode.bits.tsx.abrt;
		if (at < 0)
			ev->ip_suppressed = 1;
		break;
	case ptev_paging:
		ev->variant.paging.cr3 = pk->payload.pip.cr3;
		ev->variant.paging.non_root = pk->payload.pip.nr;
		break;
	case ptev_async_paging:
		ev->variant.async_paging.cr3 = pk->payload.pip.cr3;
		ev->variant.async_paging.non_root = pk->payload.pip.nr;
		break;
	case ptev_async_vmcs:
		ev->variant.async_vmcs.base = pk->payload.vmcs.base;
		break;
	default:
		ev->variant.cbr.ratio = pk->payload.cbr.ratio;
		break;
	}
	return 0;
}

/* MODE, PIP, CBR (and VMCS, refused) outside PSB+. */
static int
pq_apply_status(struct pq *q)
{
	struct pt_packet pk;
	int at = -1, n;

	if (q->next == PK_VMCS)
		return PQ_ABORT;
	n = pq_read(q, &pk);
	if (n < 0)
		return n;
	if (q->next == PK_MODE && pk.payload.mode.leaf == pt_mol_exec)
		at = PQ_AT_TIP;
	else if (q->next == PK_MODE && q->enabled)
		at = PQ_AT_FUP;
	else if (q->next == PK_PIP &&
	    pq_find(q, PQ_AT_TIP, ptev_async_branch) != NULL)
		at = PQ_AT_TIP;
	n = pq_packet_event(q, &pk, at) < 0 ? -pte_nomem : n;
	if (n < 0)
		return n;
	q->pos += n;
	return 0;
}

/*
 * A PSB and its header up to PSBEND or OVF (not applied).  A header that
 * does not decode leaves the cursor at the PSB, its events dropped.
 */
int
pq_apply_psb(struct pq *q)
{
	struct pt_packet pk;
	const uint8_t *psb = q->pos;
	unsigned i, j;
	int rc, ipc;

	rc = pq_read(q, &pk);
	if (rc < 0)
		return rc;
	q->pos += rc;
	q->ip_state = PQ_IP_NONE;
	q->ip = 0;
	for (;;) {
		rc = pq_lex(q);
		if (rc < 0)
			break;
		switch (pq_rules[q->next].in_psb) {
		case IN_PSB_END:
			return 0;
		case IN_PSB_PAD:
			q->pos++;
			continue;
		case IN_PSB_IP:
			rc = pq_ip_packet(q, &ipc);
			if (rc < 0)
				break;
			if (ipc != pt_ipc_suppressed)
				q->enabled = 1;
			q->pos += rc;
			continue;
		case IN_PSB_EVENT:
			rc = pq_read(q, &pk);
			if (rc < 0)
				break;
			if (pq_packet_event(q, &pk, PQ_AT_PSBEND) < 0) {
				rc = -pte_nomem;
				break;
			}
			q->pos += rc;
			continue;
		default:
			rc = -pte_bad_context;
			break;
		}
		break;
	}
	/* back to the PSB, without the events of its header */
	for (i = j = 0; i < q->nwait; i++)
		if (q->wait[i].at != PQ_AT_PSBEND)
			q->wait[j++] = q->wait[i];
	q->nwait = j;
	q->nwait_at[PQ_AT_PSBEND] = 0;
	q->pos = psb;
	q->next = PK_PSB;
	return rc;
}

/*
 * Where tracing resumes after an OVF at the cursor (already passed):
 * 1 at a FUP, 0 disabled (a PSB, TIP.PGE, MODE, PIP or VMCS comes
 * first), or an error (-pte_eos at the end).
 */
static int
pq_ovf_resumes(struct pq *q)
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

/* An OVF at the cursor, PSB+ events delivered first. */
static int
pq_apply_ovf(struct pq *q)
{
	struct pt_event *ev;
	int rc;

	if (q->nwait_at[PQ_AT_PSBEND] > 0)
		return pq_complete(q, PQ_AT_PSBEND, 0);
	pq_clear(q);
	q->pos += 2;
	rc = pq_ovf_resumes(q);
	if (rc < 0 && rc != -pte_eos)
		return rc;
	if (rc == 1) {
		if (pq_wait(q, PQ_AT_FUP, ptev_overflow) == NULL)
			return -pte_nomem;
		q->enabled = 1;
		return 0;
	}
	ev = pq_now(q, ptev_overflow);
	ev->ip_suppressed = 1;
	return 0;
}

/* The transition: apply the packet at the cursor (q->next). */
int
pq_apply(struct pq *q)
{
	switch (q->next) {
	case PK_PAD:
		q->pos++;
		return 0;
	case PK_PSB:
		return pq_apply_psb(q);
	case PK_PSBEND:
		if (q->nwait_at[PQ_AT_PSBEND] > 0)
			return pq_complete(q, PQ_AT_PSBEND, 2);
		q->pos += 2;
		return 0;
	case PK_OVF:
		return pq_apply_ovf(q);
	case PK_TNT8:
		return pq_apply_tnt(q, 1);
	case PK_TNT64:
		return pq_apply_tnt(q, 8);
	case PK_TIP:
	case PK_PGE:
	case PK_PGD:
	case PK_FUP:
		return pq_apply_ip(q);
	case PK_MODE:
	case PK_PIP:
	case PK_VMCS:
	case PK_CBR:
		return pq_apply_status(q);
	default:
		return -pte_internal;
	}
}

/*
 * Apply packets until one that answers a query (left at the cursor).  A
 * status packet cut off by the end puts the cursor at the end.
 */
int
pq_skip(struct pq *q)
{
	int rc;

	for (;;) {
		while (q->pos < q->end && q->pos[0] == 0x00)
			q->pos++;	/* PADs */
		rc = pq_lex(q);
		if (rc < 0)
			return rc;
		if (pq_answers(q))
			return 0;
		rc = pq_apply(q);
		if (rc == -pte_eos) {
			q->pos = q->end;
			q->next = PK_NONE;
		}
		if (rc < 0)
			return rc;
	}
}
