/* SPDX-License-Identifier: MIT */
/*
 * Packet generation for the software PT backend (see emu-pt.h).  The
 * packets of every block (TNT, TIP, FUP, TIP.PGE/PGD, CYC, MTC) are written
 * here byte by byte, in the encoding libipt's encoder gives them
 * (tests/unit/test-emu-pt.c re-encodes every packet with pt_enc_next and
 * compares); the rare PSB+ group goes through libipt's encoder.  Also
 * tracked here: the last IP for IP compression, pending TNT bits, the
 * return-compression stack, the PSB byte counter and the timing state.
 *
 * The hot path runs once per executed block under QEMU (emu-pt.h's inline
 * functions): a TNT bit is a shift into a word with a stop bit, and the
 * per-block tick one comparison with a precomputed deadline (deadline()).
 */
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "emu-pt.h"
#include "err.h"

#define TNT8_MAX	6	/* bits in one TNT-8 packet */

static int
put(struct mt_emu_pt *pt, const struct pt_packet *pkt)
{
	int n;

	n = pt_enc_sync_set(pt->enc, pt->nscratch);
	if (n < 0)
		return -MT_E_IPT;
	n = pt_enc_next(pt->enc, pkt);
	if (n < 0)
		return -MT_E_IPT;
	pt->nscratch += (size_t)n;
	return 0;
}

/*
 * The clock at which mt_emu_pt_tick() has work: the next MTC period, 0
 * once a PSB+ is due, and 0 while packets are off (so that a caller's
 * fast path that tests only this falls to the slow one, where nothing
 * happens).  Every function that writes packets or changes what this
 * depends on ends through spill() or drain(), which set it.
 */
static void
deadline(struct mt_emu_pt *pt)
{
	if (!pt->enabled)
		pt->tick_at = 0;
	else if (pt->bytes + pt->nscratch >= pt->psb_due)
		pt->tick_at = 0;
	else
		pt->tick_at = pt->mtc_next;
}

/* Give the sink every byte of scratch. */
static int
drain(struct mt_emu_pt *pt)
{
	int rc = 0;

	if (pt->nscratch > 0) {
		rc = pt->sink(pt->ctx, pt->scratch, pt->nscratch);
		pt->bytes += pt->nscratch;
		pt->nscratch = 0;
	}
	deadline(pt);
	return rc;
}

/*
 * Drain once scratch is half full: packets reach the sink in batches, not
 * one call each.  Every function that writes packets calls this at its end
 * and adds less than half of scratch before it, so scratch never fills.
 * The calls that end or stop the stream (flush, enable, disable) drain
 * all.
 */
static int
spill(struct mt_emu_pt *pt)
{
	if (pt->nscratch >= MT_EMU_PT_SCRATCH / 2)
		return drain(pt);
	deadline(pt);
	return 0;
}

static int
put_simple(struct mt_emu_pt *pt, enum pt_packet_type type)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	return put(pt, &pkt);
}

/* Room for one packet in scratch: the caller drains before it fills. */
static uint8_t *
room(struct mt_emu_pt *pt)
{
	return pt->scratch + pt->nscratch;
}

/* @n bytes of @v, least significant first. */
static uint8_t *
put_le(uint8_t *p, uint64_t v, unsigned n)
{
	while (n-- > 0) {
		*p++ = (uint8_t)v;
		v >>= 8;
	}
	return p;
}

/* Packet opcodes (low 5 bits of an IP packet's first byte). */
#define OPC_TIP		0x0d
#define OPC_TIP_PGE	0x11
#define OPC_TIP_PGD	0x01
#define OPC_FUP		0x1d
#define OPC_MTC		0x59

static uint64_t
ctc_of(uint64_t tsc)
{
	return tsc * MT_EMU_CPUID15_EAX / MT_EMU_CPUID15_EBX;
}

/* The MTC period is now @period: the next one starts at the first TSC
 * whose CTC reaches (@period + 1) << mtc_freq. */
static void
mtc_set(struct mt_emu_pt *pt, uint64_t period)
{
	uint64_t ctc = (period + 1) << pt->mtc_freq;

	pt->mtc_last = period;
	pt->mtc_next = (ctc * MT_EMU_CPUID15_EBX + MT_EMU_CPUID15_EAX - 1) /
	    MT_EMU_CPUID15_EAX;
}

/*
 * A CYC of @cycles: the low 5 bits of the count in the first byte, 7 more
 * in each next byte, bit 2 of the first and bit 0 of the others saying
 * another follows.
 */
static void
put_cyc_value(struct mt_emu_pt *pt, uint64_t cycles)
{
	uint8_t *p = room(pt), *q = p;
	uint64_t v = cycles;

	pt->cyc_last += cycles;
	*q = (uint8_t)(0x03 | (v & 0x1f) << 3);
	v >>= 5;
	if (v != 0)
		*q |= 0x04;
	q++;
	while (v != 0) {
		*q = (uint8_t)((v & 0x7f) << 1);
		v >>= 7;
		if (v != 0)
			*q |= 1;
		q++;
	}
	pt->nscratch += (size_t)(q - p);
}

/* MTC for the period @period (CTC >> mtc_freq): 59, then its low byte. */
static void
put_mtc_pkt(struct mt_emu_pt *pt, uint64_t period)
{
	uint8_t *p = room(pt);

	p[0] = OPC_MTC;
	p[1] = (uint8_t)period;
	pt->nscratch += 2;
	mtc_set(pt, period);
}

/*
 * A CYC with the cycles since the last one (one cycle per TSC tick).  An
 * MTC period that began since the last CYC gets its MTC in between, with
 * the cycles up to the period's first tick before it: libipt calibrates
 * its cycles-to-TSC ratio on the cycles between two MTCs against their
 * CTC difference, and any other count makes its clock run fast (the
 * time it gives a packet then runs ahead of the packet's) or slow.
 */
static void
put_cyc(struct mt_emu_pt *pt, uint64_t tsc)
{
	uint64_t period, first;

	if (!pt->cyc_on || tsc <= pt->cyc_last)
		return;
	period = ctc_of(tsc) >> pt->mtc_freq;
	if (pt->mtc_on && pt->started && period != pt->mtc_last) {
		first = (period << pt->mtc_freq) * MT_EMU_CPUID15_EBX /
		    MT_EMU_CPUID15_EAX;
		if (first > pt->cyc_last)
			put_cyc_value(pt, first - pt->cyc_last);
		put_mtc_pkt(pt, period);
	}
	if (tsc > pt->cyc_last)
		put_cyc_value(pt, tsc - pt->cyc_last);
}

/*
 * An IP packet, @opc, with the compression hardware chooses: the fewest
 * bytes that rebuild @ip from the last IP, else sign-extended 48 bits,
 * else the full IP (IPBytes in bits 7:5: 1 = 16, 2 = 32, 3 = sext 48,
 * 6 = 64 bits of IP follow).  @suppress: IPBytes 0, no IP.
 */
static void
put_ip(struct mt_emu_pt *pt, uint8_t opc, uint64_t ip, int suppress)
{
	uint8_t *p = room(pt), *q;
	uint64_t top17 = ip >> 47;
	unsigned ipc, n;

	if (suppress) {
		*p = opc;
		pt->nscratch++;
		return;
	}
	if ((ip >> 16) == (pt->last_ip >> 16))
		ipc = 1, n = 2;
	else if ((ip >> 32) == (pt->last_ip >> 32))
		ipc = 2, n = 4;
	else if (top17 == 0 || top17 == 0x1ffff)
		ipc = 3, n = 6;
	else
		ipc = 6, n = 8;
	pt->last_ip = ip;
	*p = (uint8_t)(ipc << 5 | opc);
	q = put_le(p + 1, ip, n);
	pt->nscratch += (size_t)(q - p);
}

/*
 * Pending TNT bits as one packet (CYC first).  pt->tnt holds them below a
 * stop bit, the oldest branch the most significant (Intel SDM Vol. 3C,
 * "Taken/Not-taken (TNT) Packet": the oldest bit sits just below the stop
 * bit; libipt src/pt_tnt_cache.c reads them so), which is the payload of
 * both forms: TNT-8 is that word shifted left by one (up to 6 bits),
 * TNT-64 is 02 A3 and the word in 6 bytes (up to 47).
 */
static int
flush_tnt(struct mt_emu_pt *pt)
{
	unsigned n;
	uint8_t *p;

	if (pt->tnt == 1)
		return 0;
	n = 63 - (unsigned)__builtin_clzll(pt->tnt);
	put_cyc(pt, pt->tsc_last);
	p = room(pt);
	if (n <= TNT8_MAX) {
		*p = (uint8_t)(pt->tnt << 1);
		pt->nscratch++;
	} else {
		p[0] = 0x02;
		p[1] = 0xa3;
		put_le(p + 2, pt->tnt, 6);
		pt->nscratch += 8;
	}
	pt->tnt = 1;
	return spill(pt);
}

static void
retstack_clear(struct mt_emu_pt *pt)
{
	pt->top = 0;
	pt->nret = 0;
}

/*
 * PSB+: PSB, TSC, TMA (with MTC), CBR, MODE.Exec, FUP(@ip) while packets
 * are enabled, PSBEND.  The last IP and the return stack start afresh.
 *
 * After the first, a CYC with every cycle since the last CYC comes
 * before it (and the MTC of a period begun since): libipt's calibration
 * does not start afresh at a PSB+ (pt_tcal keeps the last MTC and the
 * cycles counted since), so the first MTC after this one is compared
 * with the last before it, and cycles left out here (a clock that jumped
 * over a system call, other threads' instructions, the time of a new
 * JIT version) would make libipt take a cycle for more than one tick:
 * in the next MTC period it dated packets thousands of ticks after
 * their time, and mt-decode decoded the old JIT code a thread was still
 * running against a version written after it (docs/emulate.md).
 */
static int
put_psb(struct mt_emu_pt *pt, uint64_t ip, uint64_t tsc)
{
	struct pt_packet pkt;
	uint64_t ctc, at;
	int rc;

	rc = flush_tnt(pt);
	if (rc < 0)
		return rc;
	if (pt->started)
		put_cyc(pt, tsc);
	at = pt->bytes + pt->nscratch;
	rc = put_simple(pt, ppt_psb);
	if (rc < 0)
		return rc;
	pt->last_ip = 0;
	retstack_clear(pt);
	if (pt->tsc_on) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_tsc;
		pkt.payload.tsc.tsc = tsc & ((1ull << 56) - 1);
		if ((rc = put(pt, &pkt)) < 0)
			return rc;
		if (pt->mtc_on) {
			/* TMA: the CTC at the TSC and the TSC ticks since
			 * that CTC tick (libipt pt_time_update_tma). */
			ctc = ctc_of(tsc);
			memset(&pkt, 0, sizeof(pkt));
			pkt.type = ppt_tma;
			pkt.payload.tma.ctc = (uint16_t)ctc;
			pkt.payload.tma.fc = (uint16_t)(tsc - ctc *
			    MT_EMU_CPUID15_EBX / MT_EMU_CPUID15_EAX);
			if ((rc = put(pt, &pkt)) < 0)
				return rc;
			mtc_set(pt, ctc >> pt->mtc_freq);
		}
	}
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_cbr;
	pkt.payload.cbr.ratio = MT_EMU_NOM_FREQ;
	if ((rc = put(pt, &pkt)) < 0)
		return rc;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	if ((rc = put(pt, &pkt)) < 0)
		return rc;
	if (pt->enabled)
		put_ip(pt, OPC_FUP, ip, 0);
	if ((rc = put_simple(pt, ppt_psbend)) < 0)
		return rc;
	pt->cyc_last = tsc;
	pt->started = 1;
	pt->psb_next = 0;
	pt->psb_due = at + pt->psb_period;
	return spill(pt);
}

/* MTC when the clock crossed into a new MTC period (with CYC, the CYC
 * before it writes it). */
static int
put_mtc(struct mt_emu_pt *pt, uint64_t tsc)
{
	uint64_t period;
	int rc;

	if (tsc < pt->mtc_next)
		return 0;
	period = ctc_of(tsc) >> pt->mtc_freq;
	if ((rc = flush_tnt(pt)) < 0)
		return rc;
	put_cyc(pt, tsc);	/* with CYC, it writes the MTC */
	if (period != pt->mtc_last)
		put_mtc_pkt(pt, period);
	return spill(pt);
}

int
mt_emu_pt_init(struct mt_emu_pt *pt, uint64_t config, mt_emu_pt_sink_fn sink,
    void *ctx)
{
	struct pt_config cfg;

	memset(pt, 0, sizeof(*pt));
	pt_config_init(&cfg);
	cfg.begin = pt->scratch;
	cfg.end = pt->scratch + sizeof(pt->scratch);
	pt->enc = pt_alloc_encoder(&cfg);
	if (pt->enc == NULL)
		return -MT_E_NOMEM;
	pt->sink = sink;
	pt->ctx = ctx;
	pt->tsc_on = (config >> 10) & 1;
	pt->mtc_on = pt->tsc_on && ((config >> 9) & 1);
	pt->cyc_on = (config >> 1) & 1;
	pt->retcomp = !((config >> 11) & 1);
	pt->mtc_freq = (config >> 14) & 0xf;
	pt->mtc_next = UINT64_MAX;
	pt->tick_at = 0;
	pt->tnt = 1;
	pt->psb_period = 1ull << (((config >> 24) & 0xf) + 11);
	return 0;
}

void
mt_emu_pt_release(struct mt_emu_pt *pt)
{
	pt_free_encoder(pt->enc);
	pt->enc = NULL;
}

struct mt_emu_pt *
mt_emu_pt_new(uint64_t config, mt_emu_pt_sink_fn sink, void *ctx)
{
	struct mt_emu_pt *pt = malloc(sizeof(*pt));

	if (pt == NULL)
		return NULL;
	if (mt_emu_pt_init(pt, config, sink, ctx) < 0) {
		free(pt);
		return NULL;
	}
	return pt;
}

void
mt_emu_pt_free(struct mt_emu_pt *pt)
{
	if (pt == NULL)
		return;
	mt_emu_pt_release(pt);
	free(pt);
}

int
mt_emu_pt_enable(struct mt_emu_pt *pt, uint64_t ip, uint64_t tsc)
{
	uint64_t gap;
	int rc;

	mt_emu_pt_clock(pt, tsc);
	tsc = pt->tsc_last;
	/*
	 * MTC carries 8 bits of the period counter: after a long untraced
	 * stretch a fresh PSB+ (TSC, TMA) keeps the decoder's clock right.
	 */
	gap = pt->mtc_on ? (ctc_of(tsc) >> pt->mtc_freq) - pt->mtc_last : 0;
	if (!pt->started || pt->psb_next || gap >= 128 ||
	    pt->bytes + pt->nscratch >= pt->psb_due) {
		pt->enabled = 0;
		if ((rc = put_psb(pt, ip, tsc)) < 0)
			return rc;
	} else if ((rc = put_mtc(pt, tsc)) < 0) {
		return rc;
	}
	put_cyc(pt, tsc);
	put_ip(pt, OPC_TIP_PGE, ip, 0);
	pt->enabled = 1;
	return drain(pt);
}

int
mt_emu_pt_disable(struct mt_emu_pt *pt, uint64_t tsc)
{
	int rc;

	if (!pt->enabled)
		return 0;
	mt_emu_pt_clock(pt, tsc);
	if ((rc = flush_tnt(pt)) < 0)
		return rc;
	put_cyc(pt, pt->tsc_last);
	put_ip(pt, OPC_TIP_PGD, 0, 1);
	pt->enabled = 0;
	return drain(pt);
}

int
mt_emu_pt_async_disable(struct mt_emu_pt *pt, uint64_t ip, uint64_t tsc)
{
	int rc;

	if (!pt->enabled)
		return 0;
	mt_emu_pt_clock(pt, tsc);
	if ((rc = flush_tnt(pt)) < 0)
		return rc;
	put_cyc(pt, pt->tsc_last);
	put_ip(pt, OPC_FUP, ip, 0);
	put_ip(pt, OPC_TIP_PGD, 0, 1);
	pt->enabled = 0;
	return drain(pt);
}

static int
put_tip(struct mt_emu_pt *pt, uint64_t to)
{
	int rc;

	if ((rc = flush_tnt(pt)) < 0)
		return rc;
	put_cyc(pt, pt->tsc_last);
	put_ip(pt, OPC_TIP, to, 0);
	return spill(pt);
}

int
mt_emu_pt_branch(struct mt_emu_pt *pt, enum mt_emu_pt_ev ev, uint64_t from,
    unsigned len, uint64_t to, int push, uint64_t tsc)
{
	if (!pt->enabled)
		return 0;
	switch (ev) {
	case MT_EMU_PT_COND:
		return mt_emu_pt_cond(pt, to != from + len, tsc);
	case MT_EMU_PT_JMP:
		mt_emu_pt_clock(pt, tsc);
		return 0;
	case MT_EMU_PT_JMP_IND:
		mt_emu_pt_clock(pt, tsc);
		return put_tip(pt, to);
	case MT_EMU_PT_CALL:
		mt_emu_pt_call(pt, from + len, push, tsc);
		return 0;
	case MT_EMU_PT_CALL_IND:
		mt_emu_pt_call(pt, from + len, 1, tsc);
		return put_tip(pt, to);
	case MT_EMU_PT_RET:
		return mt_emu_pt_ret(pt, to, tsc);
	}
	return -MT_E_INVAL;
}

int
mt_emu_pt_tick_slow(struct mt_emu_pt *pt, uint64_t ip, uint64_t tsc)
{
	int rc;

	if (!pt->enabled)
		return 0;
	mt_emu_pt_clock(pt, tsc);
	if (pt->tsc_last >= pt->mtc_next) {
		/* A clock that jumped (host time) past what MTC's 8 bits
		 * can say: a PSB+ carries the full TSC. */
		if ((ctc_of(pt->tsc_last) >> pt->mtc_freq) - pt->mtc_last >=
		    128)
			return put_psb(pt, ip, pt->tsc_last);
		if ((rc = put_mtc(pt, pt->tsc_last)) < 0)
			return rc;
	}
	if (pt->bytes + pt->nscratch >= pt->psb_due)
		return put_psb(pt, ip, pt->tsc_last);
	deadline(pt);
	return 0;
}

int
mt_emu_pt_tnt_full(struct mt_emu_pt *pt, uint64_t tsc)
{
	mt_emu_pt_clock(pt, tsc);
	return flush_tnt(pt);
}

int
mt_emu_pt_flush(struct mt_emu_pt *pt)
{
	int rc = flush_tnt(pt);

	return rc < 0 ? rc : drain(pt);
}

int
mt_emu_pt_sync(struct mt_emu_pt *pt, uint64_t ip, uint64_t tsc)
{
	int rc;

	/* The pending bits keep the time they had. */
	if ((rc = flush_tnt(pt)) < 0)
		return rc;
	mt_emu_pt_clock(pt, tsc);
	if (!pt->enabled) {
		pt->psb_next = 1;
		return drain(pt);
	}
	/* The clock may have jumped (the caller moved it up to another
	 * thread's): put_psb's CYC says those cycles passed. */
	if ((rc = put_psb(pt, ip, pt->tsc_last)) < 0)
		return rc;
	return drain(pt);
}

int
mt_emu_pt_enabled(const struct mt_emu_pt *pt)
{
	return pt->enabled;
}

uint64_t
mt_emu_pt_bytes(const struct mt_emu_pt *pt)
{
	return pt->bytes;
}

uint64_t
mt_emu_pt_time(const struct mt_emu_pt *pt)
{
	return pt->tsc_last;
}
