/* SPDX-License-Identifier: MIT */
/*
 * Packet generation for the software PT backend (see emu-pt.h).  libipt's
 * encoder writes each packet's bytes; everything the encoder leaves to its
 * caller is tracked here: the last IP for IP compression, pending TNT bits,
 * the return-compression stack, the PSB byte counter and the timing state.
 */
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "emu-pt.h"
#include "err.h"

#define RETSTACK_SIZE	64	/* libipt's pt_retstack_size */
#define TNT_MAX		47	/* bits in one TNT-64 packet */
#define TNT8_MAX	6	/* bits in one TNT-8 packet */
#define SCRATCH		128	/* one PSB+ group fits */

struct mt_emu_pt {
	struct pt_encoder *enc;		/* writes into scratch */
	uint8_t scratch[SCRATCH];	/* packets not yet given to sink */
	size_t nscratch;		/* bytes in scratch */
	mt_emu_pt_sink_fn sink;		/* receives bytes; not owned */
	void *ctx;			/* sink's argument */
	/* Configuration. */
	int tsc_on, mtc_on, cyc_on, retcomp;
	unsigned mtc_freq;		/* MTC every 2^mtc_freq CTC ticks */
	uint64_t psb_period;		/* bytes between PSBs */
	/* State. */
	int started;			/* a PSB+ was written */
	int psb_due;			/* the next enable writes PSB+ */
	int enabled;			/* PacketEn */
	uint64_t last_ip;		/* IP compression reference */
	uint64_t tnt;			/* pending TNT bits, newest lowest */
	unsigned ntnt;			/* number of pending bits */
	uint64_t ret[RETSTACK_SIZE + 1];	/* return addresses (ring) */
	unsigned top, bottom;		/* ring indices as libipt's */
	uint64_t bytes;			/* bytes written in all */
	uint64_t psb_bytes;		/* value of bytes at the last PSB */
	uint64_t mtc_last;		/* CTC >> mtc_freq at the last MTC */
	uint64_t cyc_last;		/* tsc at the last CYC */
	uint64_t tsc_last;		/* tsc of the last event */
};

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

static int
drain(struct mt_emu_pt *pt)
{
	int rc;

	if (pt->nscratch == 0)
		return 0;
	rc = pt->sink(pt->ctx, pt->scratch, pt->nscratch);
	pt->bytes += pt->nscratch;
	pt->nscratch = 0;
	return rc;
}

static int
put_simple(struct mt_emu_pt *pt, enum pt_packet_type type)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	return put(pt, &pkt);
}

static uint64_t
ctc_of(uint64_t tsc)
{
	return tsc * MT_EMU_CPUID15_EAX / MT_EMU_CPUID15_EBX;
}

/* MTC for the period @period (CTC >> mtc_freq). */
static int
put_mtc_pkt(struct mt_emu_pt *pt, uint64_t period)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mtc;
	pkt.payload.mtc.ctc = (uint8_t)period;
	pt->mtc_last = period;
	return put(pt, &pkt);
}

static int
put_cyc_value(struct mt_emu_pt *pt, uint64_t cycles)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_cyc;
	pkt.payload.cyc.value = cycles;
	pt->cyc_last += cycles;
	return put(pt, &pkt);
}

/*
 * A CYC with the cycles since the last one (one cycle per TSC tick).  An
 * MTC period that began since the last CYC gets its MTC in between, with
 * the cycles up to the period's first tick before it: libipt calibrates
 * its cycles-to-TSC ratio on the cycles between two MTCs against their
 * CTC difference, and any other count makes its clock run fast (the
 * time it gives a packet then runs ahead of the packet's) or slow.
 */
static int
put_cyc(struct mt_emu_pt *pt, uint64_t tsc)
{
	uint64_t period, first;
	int rc;

	if (!pt->cyc_on || tsc <= pt->cyc_last)
		return 0;
	period = ctc_of(tsc) >> pt->mtc_freq;
	if (pt->mtc_on && pt->started && period != pt->mtc_last) {
		first = (period << pt->mtc_freq) * MT_EMU_CPUID15_EBX /
		    MT_EMU_CPUID15_EAX;
		if (first > pt->cyc_last &&
		    (rc = put_cyc_value(pt, first - pt->cyc_last)) < 0)
			return rc;
		if ((rc = put_mtc_pkt(pt, period)) < 0)
			return rc;
	}
	return tsc > pt->cyc_last ? put_cyc_value(pt, tsc - pt->cyc_last) : 0;
}

/*
 * IP compression as hardware chooses it: the fewest bytes that rebuild
 * @ip from the last IP, else sign-extended 48 bits, else the full IP.
 */
static int
put_ip(struct mt_emu_pt *pt, enum pt_packet_type type, uint64_t ip,
    int suppress)
{
	struct pt_packet pkt;
	uint64_t top17;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	pkt.payload.ip.ip = ip;
	if (suppress) {
		pkt.payload.ip.ipc = pt_ipc_suppressed;
		pkt.payload.ip.ip = 0;
		return put(pt, &pkt);
	}
	top17 = ip >> 47;
	if ((ip >> 16) == (pt->last_ip >> 16))
		pkt.payload.ip.ipc = pt_ipc_update_16;
	else if ((ip >> 32) == (pt->last_ip >> 32))
		pkt.payload.ip.ipc = pt_ipc_update_32;
	else if (top17 == 0 || top17 == 0x1ffff)
		pkt.payload.ip.ipc = pt_ipc_sext_48;
	else
		pkt.payload.ip.ipc = pt_ipc_full;
	pt->last_ip = ip;
	return put(pt, &pkt);
}

static int
flush_tnt(struct mt_emu_pt *pt)
{
	struct pt_packet pkt;
	int rc;

	if (pt->ntnt == 0)
		return 0;
	rc = put_cyc(pt, pt->tsc_last);
	if (rc < 0)
		return rc;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = pt->ntnt <= TNT8_MAX ? ppt_tnt_8 : ppt_tnt_64;
	pkt.payload.tnt.bit_size = (uint8_t)pt->ntnt;
	/* The oldest branch is the most significant bit (Intel SDM
	 * Vol. 3C, "Taken/Not-taken (TNT) Packet": the oldest bit sits just
	 * below the stop bit; libipt src/pt_tnt_cache.c reads them so). */
	pkt.payload.tnt.payload = pt->tnt;
	pt->tnt = 0;
	pt->ntnt = 0;
	rc = put(pt, &pkt);
	if (rc < 0)
		return rc;
	return drain(pt);
}

static int
add_tnt(struct mt_emu_pt *pt, int taken)
{
	pt->tnt = pt->tnt << 1 | (taken ? 1u : 0u);
	pt->ntnt++;
	if (pt->ntnt == TNT_MAX)
		return flush_tnt(pt);
	return 0;
}

static void
retstack_clear(struct mt_emu_pt *pt)
{
	pt->top = pt->bottom = 0;
}

static void
retstack_push(struct mt_emu_pt *pt, uint64_t ip)
{
	pt->ret[pt->top] = ip;
	pt->top = pt->top == RETSTACK_SIZE ? 0 : pt->top + 1;
	if (pt->top == pt->bottom)
		pt->bottom = pt->bottom == RETSTACK_SIZE ? 0 : pt->bottom + 1;
}

/* Pops and returns 1 when the top entry is @ip, else leaves it: 0. */
static int
retstack_pop_if(struct mt_emu_pt *pt, uint64_t ip)
{
	unsigned t;

	if (pt->top == pt->bottom)
		return 0;
	t = pt->top == 0 ? RETSTACK_SIZE : pt->top - 1;
	if (pt->ret[t] != ip)
		return 0;
	pt->top = t;
	return 1;
}

/*
 * PSB+: PSB, TSC, TMA (with MTC), CBR, MODE.Exec, FUP(@ip) while packets
 * are enabled, PSBEND.  The last IP and the return stack start afresh.
 */
static int
put_psb(struct mt_emu_pt *pt, uint64_t ip, uint64_t tsc)
{
	struct pt_packet pkt;
	uint64_t ctc;
	int rc;

	rc = flush_tnt(pt);
	if (rc < 0)
		return rc;
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
			pt->mtc_last = ctc >> pt->mtc_freq;
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
	if (pt->enabled && (rc = put_ip(pt, ppt_fup, ip, 0)) < 0)
		return rc;
	if ((rc = put_simple(pt, ppt_psbend)) < 0)
		return rc;
	pt->cyc_last = tsc;
	pt->started = 1;
	pt->psb_due = 0;
	pt->psb_bytes = pt->bytes;
	return drain(pt);
}

/* MTC when the clock crossed into a new MTC period (with CYC, the CYC
 * before it writes it). */
static int
put_mtc(struct mt_emu_pt *pt, uint64_t tsc)
{
	uint64_t period;
	int rc;

	if (!pt->mtc_on)
		return 0;
	period = ctc_of(tsc) >> pt->mtc_freq;
	if (period == pt->mtc_last)
		return 0;
	if ((rc = flush_tnt(pt)) < 0)
		return rc;
	if ((rc = put_cyc(pt, tsc)) < 0)
		return rc;
	if (period != pt->mtc_last && (rc = put_mtc_pkt(pt, period)) < 0)
		return rc;
	return drain(pt);
}

struct mt_emu_pt *
mt_emu_pt_new(uint64_t config, mt_emu_pt_sink_fn sink, void *ctx)
{
	struct mt_emu_pt *pt;
	struct pt_config cfg;

	pt = calloc(1, sizeof(*pt));
	if (pt == NULL)
		return NULL;
	pt_config_init(&cfg);
	cfg.begin = pt->scratch;
	cfg.end = pt->scratch + sizeof(pt->scratch);
	pt->enc = pt_alloc_encoder(&cfg);
	if (pt->enc == NULL) {
		free(pt);
		return NULL;
	}
	pt->sink = sink;
	pt->ctx = ctx;
	pt->tsc_on = (config >> 10) & 1;
	pt->mtc_on = pt->tsc_on && ((config >> 9) & 1);
	pt->cyc_on = (config >> 1) & 1;
	pt->retcomp = !((config >> 11) & 1);
	pt->mtc_freq = (config >> 14) & 0xf;
	pt->psb_period = 1ull << (((config >> 24) & 0xf) + 11);
	return pt;
}

void
mt_emu_pt_free(struct mt_emu_pt *pt)
{
	if (pt == NULL)
		return;
	pt_free_encoder(pt->enc);
	free(pt);
}

static void
clock_to(struct mt_emu_pt *pt, uint64_t tsc)
{
	if (tsc > pt->tsc_last)
		pt->tsc_last = tsc;
}

int
mt_emu_pt_enable(struct mt_emu_pt *pt, uint64_t ip, uint64_t tsc)
{
	uint64_t gap;
	int rc;

	clock_to(pt, tsc);
	tsc = pt->tsc_last;
	/*
	 * MTC carries 8 bits of the period counter: after a long untraced
	 * stretch a fresh PSB+ (TSC, TMA) keeps the decoder's clock right.
	 */
	gap = pt->mtc_on ? (ctc_of(tsc) >> pt->mtc_freq) - pt->mtc_last : 0;
	if (!pt->started || pt->psb_due || gap >= 128 ||
	    pt->bytes - pt->psb_bytes >= pt->psb_period) {
		/* After mt_emu_pt_sync: as there, the cycles first. */
		if (pt->psb_due && (rc = put_cyc(pt, tsc)) < 0)
			return rc;
		pt->enabled = 0;
		if ((rc = put_psb(pt, ip, tsc)) < 0)
			return rc;
	} else if ((rc = put_mtc(pt, tsc)) < 0) {
		return rc;
	}
	if ((rc = put_cyc(pt, tsc)) < 0)
		return rc;
	if ((rc = put_ip(pt, ppt_tip_pge, ip, 0)) < 0)
		return rc;
	pt->enabled = 1;
	return drain(pt);
}

int
mt_emu_pt_disable(struct mt_emu_pt *pt, uint64_t tsc)
{
	int rc;

	if (!pt->enabled)
		return 0;
	clock_to(pt, tsc);
	if ((rc = flush_tnt(pt)) < 0)
		return rc;
	if ((rc = put_cyc(pt, pt->tsc_last)) < 0)
		return rc;
	if ((rc = put_ip(pt, ppt_tip_pgd, 0, 1)) < 0)
		return rc;
	pt->enabled = 0;
	return drain(pt);
}

int
mt_emu_pt_async_disable(struct mt_emu_pt *pt, uint64_t ip, uint64_t tsc)
{
	int rc;

	if (!pt->enabled)
		return 0;
	clock_to(pt, tsc);
	if ((rc = flush_tnt(pt)) < 0)
		return rc;
	if ((rc = put_cyc(pt, pt->tsc_last)) < 0)
		return rc;
	if ((rc = put_ip(pt, ppt_fup, ip, 0)) < 0)
		return rc;
	if ((rc = put_ip(pt, ppt_tip_pgd, 0, 1)) < 0)
		return rc;
	pt->enabled = 0;
	return drain(pt);
}

static int
put_tip(struct mt_emu_pt *pt, uint64_t to)
{
	int rc;

	if ((rc = flush_tnt(pt)) < 0)
		return rc;
	if ((rc = put_cyc(pt, pt->tsc_last)) < 0)
		return rc;
	if ((rc = put_ip(pt, ppt_tip, to, 0)) < 0)
		return rc;
	return drain(pt);
}

int
mt_emu_pt_branch(struct mt_emu_pt *pt, enum mt_emu_pt_ev ev, uint64_t from,
    unsigned len, uint64_t to, int push, uint64_t tsc)
{
	if (!pt->enabled)
		return 0;
	clock_to(pt, tsc);
	switch (ev) {
	case MT_EMU_PT_COND:
		return add_tnt(pt, to != from + len);
	case MT_EMU_PT_JMP:
		return 0;
	case MT_EMU_PT_JMP_IND:
		return put_tip(pt, to);
	case MT_EMU_PT_CALL:
		if (push)
			retstack_push(pt, from + len);
		return 0;
	case MT_EMU_PT_CALL_IND:
		retstack_push(pt, from + len);
		return put_tip(pt, to);
	case MT_EMU_PT_RET:
		if (pt->retcomp && retstack_pop_if(pt, to))
			return add_tnt(pt, 1);
		return put_tip(pt, to);
	}
	return -MT_E_INVAL;
}

int
mt_emu_pt_tick(struct mt_emu_pt *pt, uint64_t ip, uint64_t tsc)
{
	int rc;

	if (!pt->enabled)
		return 0;
	clock_to(pt, tsc);
	/* A clock that jumped (host time) past what MTC's 8 bits can say:
	 * a PSB+ carries the full TSC. */
	if (pt->mtc_on && (ctc_of(pt->tsc_last) >> pt->mtc_freq) -
	    pt->mtc_last >= 128)
		return put_psb(pt, ip, pt->tsc_last);
	if ((rc = put_mtc(pt, pt->tsc_last)) < 0)
		return rc;
	if (pt->bytes + pt->nscratch - pt->psb_bytes >= pt->psb_period)
		return put_psb(pt, ip, pt->tsc_last);
	return 0;
}

int
mt_emu_pt_flush(struct mt_emu_pt *pt)
{
	return flush_tnt(pt);
}

int
mt_emu_pt_sync(struct mt_emu_pt *pt, uint64_t ip, uint64_t tsc)
{
	int rc;

	/* The pending bits keep the time they had. */
	if ((rc = flush_tnt(pt)) < 0)
		return rc;
	clock_to(pt, tsc);
	if (!pt->enabled) {
		pt->psb_due = 1;
		return 0;
	}
	/*
	 * The clock may have jumped (the caller moved it up to another
	 * thread's): a CYC says those cycles passed, or libipt's CYC
	 * calibration (cycles counted between two MTCs against their CTC
	 * difference) would take a cycle for more than one tick and date
	 * the packets after it too late.
	 */
	if ((rc = put_cyc(pt, pt->tsc_last)) < 0)
		return rc;
	return put_psb(pt, ip, pt->tsc_last);
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
