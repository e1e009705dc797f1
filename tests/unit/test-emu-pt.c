/* SPDX-License-Identifier: MIT */
/*
 * The software PT backend's packet generator (emu-pt.c) on synthetic
 * control flow, read back with libipt's packet decoder: PSB+ contents,
 * TNT bit order, IP compression against the last IP, return compression
 * and its 64-entry stack, TIP.PGD/PGE, FUP + TIP.PGD, the PSB period and
 * MTC; and every packet's bytes against libipt's own encoder (emu-pt.c
 * writes the frequent packets by hand).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "err.h"
#include "tap.h"
#include "../../mt-capture/emu-pt.h"

#define CFG_NO_TIMING	((1ull << 13) | (3ull << 24))

struct out {
	uint8_t buf[1 << 16];
	size_t len;
};

static int
sink(void *ctx, const uint8_t *p, size_t n)
{
	struct out *o = ctx;

	if (n > sizeof(o->buf) - o->len)
		return -MT_E_LIMIT;
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return 0;
}

/* All packets of @o, decoded from its start. */
static size_t
packets(const struct out *o, struct pt_packet *pk, size_t max)
{
	struct pt_packet_decoder *d;
	struct pt_config c;
	size_t n = 0;

	pt_config_init(&c);
	c.begin = (uint8_t *)(uintptr_t)o->buf;
	c.end = c.begin + o->len;
	d = pt_pkt_alloc_decoder(&c);
	if (d == NULL || pt_pkt_sync_set(d, 0) < 0)
		return 0;
	while (n < max && pt_pkt_next(d, &pk[n], sizeof(pk[n])) > 0)
		n++;
	pt_pkt_free_decoder(d);
	return n;
}

static void
enable_writes_psb_plus_then_pge(void)
{
	struct out o = { .len = 0 };
	struct mt_emu_pt *pt = mt_emu_pt_new(MT_EMU_DEFAULT_CONFIG, sink, &o);
	struct pt_packet pk[16];
	size_t n;

	CHECK(pt != NULL);
	CHECK(mt_emu_pt_enabled(pt) == 0);
	CHECK(mt_emu_pt_enable(pt, 0x401000, 12345) == 0);
	CHECK(mt_emu_pt_enabled(pt) == 1);
	n = packets(&o, pk, 16);
	CHECK_EQ_U64(n, 7);
	CHECK(pk[0].type == ppt_psb);
	CHECK(pk[1].type == ppt_tsc && pk[1].payload.tsc.tsc == 12345);
	/* TMA: CTC = TSC / 100, FastCounter = TSC mod 100. */
	CHECK(pk[2].type == ppt_tma && pk[2].payload.tma.ctc == 123 &&
	    pk[2].payload.tma.fc == 45);
	CHECK(pk[3].type == ppt_cbr &&
	    pk[3].payload.cbr.ratio == MT_EMU_NOM_FREQ);
	CHECK(pk[4].type == ppt_mode);
	/* No FUP: packets were not enabled when the PSB+ went out. */
	CHECK(pk[5].type == ppt_psbend);
	CHECK(pk[6].type == ppt_tip_pge && pk[6].payload.ip.ip == 0x401000);
	CHECK_EQ_U64(mt_emu_pt_bytes(pt), o.len);
	mt_emu_pt_free(pt);
}

static void
tnt_oldest_branch_is_msb(void)
{
	struct out o = { .len = 0 };
	struct mt_emu_pt *pt = mt_emu_pt_new(CFG_NO_TIMING, sink, &o);
	struct pt_packet pk[16];
	size_t n, base;

	mt_emu_pt_enable(pt, 0x401000, 0);
	base = packets(&o, pk, 16);
	/* taken, not taken, not taken */
	mt_emu_pt_branch(pt, MT_EMU_PT_COND, 0x401000, 2, 0x401100, 0, 1);
	mt_emu_pt_branch(pt, MT_EMU_PT_COND, 0x401100, 2, 0x401102, 0, 2);
	mt_emu_pt_branch(pt, MT_EMU_PT_COND, 0x401102, 2, 0x401104, 0, 3);
	CHECK_EQ_U64(packets(&o, pk, 16), base);	/* still pending */
	CHECK(mt_emu_pt_flush(pt) == 0);
	n = packets(&o, pk, 16);
	CHECK_EQ_U64(n, base + 1);
	CHECK(pk[base].type == ppt_tnt_8);
	CHECK_EQ_U64(pk[base].payload.tnt.bit_size, 3);
	CHECK_EQ_U64(pk[base].payload.tnt.payload, 0x4);	/* 100b */
	mt_emu_pt_free(pt);
}

static void
tnt_long_and_split_at_47_bits(void)
{
	struct out o = { .len = 0 };
	struct mt_emu_pt *pt = mt_emu_pt_new(CFG_NO_TIMING, sink, &o);
	struct pt_packet pk[16];
	size_t n, base;
	int i;

	mt_emu_pt_enable(pt, 0x401000, 0);
	base = packets(&o, pk, 16);
	for (i = 0; i < 50; i++)
		mt_emu_pt_branch(pt, MT_EMU_PT_COND, 0x401000, 2,
		    (i & 1) ? 0x401000 : 0x401002, 0, 0);
	mt_emu_pt_flush(pt);
	n = packets(&o, pk, 16);
	CHECK_EQ_U64(n, base + 2);
	CHECK(pk[base].type == ppt_tnt_64);
	CHECK_EQ_U64(pk[base].payload.tnt.bit_size, 47);
	/* 0, 1, 0, 1, ... with the first (not taken) as the MSB. */
	CHECK_EQ_U64(pk[base].payload.tnt.payload, 0x2aaaaaaaaaaaull);
	CHECK(pk[base + 1].type == ppt_tnt_8);
	CHECK_EQ_U64(pk[base + 1].payload.tnt.bit_size, 3);
	CHECK_EQ_U64(pk[base + 1].payload.tnt.payload, 0x5);	/* 1, 0, 1 */
	mt_emu_pt_free(pt);
}

static void
tip_ip_compression_follows_last_ip(void)
{
	struct out o = { .len = 0 };
	struct mt_emu_pt *pt = mt_emu_pt_new(CFG_NO_TIMING, sink, &o);
	struct pt_packet pk[16];
	size_t n, base;

	mt_emu_pt_enable(pt, 0x7f0000401000ull, 0);
	base = packets(&o, pk, 16);
	/* PGE after PSB (last IP 0): upper 32 bits differ -> sext 48. */
	CHECK(pk[base - 1].payload.ip.ipc == pt_ipc_sext_48);
	mt_emu_pt_branch(pt, MT_EMU_PT_JMP_IND, 0x7f0000401000ull, 2,
	    0x7f000040abcdull, 0, 1);	/* upper 48 equal: 16 bits */
	mt_emu_pt_branch(pt, MT_EMU_PT_JMP_IND, 0x7f000040abcdull, 2,
	    0x7f0012345678ull, 0, 2);	/* upper 32 equal: 32 bits */
	mt_emu_pt_branch(pt, MT_EMU_PT_JMP_IND, 0x7f0012345678ull, 2,
	    0x55550000aa00ull, 0, 3);	/* else sext 48 */
	mt_emu_pt_flush(pt);
	n = packets(&o, pk, 16);
	CHECK_EQ_U64(n, base + 3);
	CHECK(pk[base].type == ppt_tip &&
	    pk[base].payload.ip.ipc == pt_ipc_update_16 &&
	    pk[base].payload.ip.ip == 0xabcd);
	CHECK(pk[base + 1].payload.ip.ipc == pt_ipc_update_32 &&
	    pk[base + 1].payload.ip.ip == 0x12345678);
	CHECK(pk[base + 2].payload.ip.ipc == pt_ipc_sext_48 &&
	    pk[base + 2].payload.ip.ip == 0x55550000aa00ull);
	mt_emu_pt_free(pt);
}

static void
ret_compression_and_its_64_entry_stack(void)
{
	struct out o = { .len = 0 };
	struct mt_emu_pt *pt = mt_emu_pt_new(CFG_NO_TIMING, sink, &o);
	struct pt_packet pk[64];
	size_t n, base, tnt_bits = 0, tips = 0, i;

	mt_emu_pt_enable(pt, 0x401000, 0);
	base = packets(&o, pk, 64);
	/* 70 nested calls, then 70 returns to the matching sites: the 64
	 * newest are compressed, the 6 oldest fell off the stack. */
	for (i = 0; i < 70; i++)
		mt_emu_pt_branch(pt, MT_EMU_PT_CALL, 0x401000 + i * 8, 5,
		    0x402000, 1, i);
	for (i = 70; i-- > 0;)
		mt_emu_pt_branch(pt, MT_EMU_PT_RET, 0x402010, 1,
		    0x401000 + i * 8 + 5, 0, 100);
	mt_emu_pt_flush(pt);
	n = packets(&o, pk, 64);
	for (i = base; i < n; i++) {
		if (pk[i].type == ppt_tnt_8 || pk[i].type == ppt_tnt_64)
			tnt_bits += pk[i].payload.tnt.bit_size;
		if (pk[i].type == ppt_tip)
			tips++;
	}
	CHECK_EQ_U64(tnt_bits, 64);
	CHECK_EQ_U64(tips, 6);
	mt_emu_pt_free(pt);
}

static void
call_to_next_insn_and_noretcomp(void)
{
	struct out o = { .len = 0 };
	struct mt_emu_pt *pt = mt_emu_pt_new(CFG_NO_TIMING, sink, &o);
	struct pt_packet pk[16];
	size_t n, base;

	/* A call that does not push: its return is not compressed. */
	mt_emu_pt_enable(pt, 0x401000, 0);
	base = packets(&o, pk, 16);
	mt_emu_pt_branch(pt, MT_EMU_PT_CALL, 0x401000, 5, 0x401005, 0, 1);
	mt_emu_pt_branch(pt, MT_EMU_PT_RET, 0x401010, 1, 0x401005, 0, 2);
	mt_emu_pt_flush(pt);
	n = packets(&o, pk, 16);
	CHECK_EQ_U64(n, base + 1);
	CHECK(pk[base].type == ppt_tip);
	mt_emu_pt_free(pt);

	/* noretcomp: every return is a TIP. */
	o.len = 0;
	pt = mt_emu_pt_new(CFG_NO_TIMING | (1ull << 11), sink, &o);
	mt_emu_pt_enable(pt, 0x401000, 0);
	base = packets(&o, pk, 16);
	mt_emu_pt_branch(pt, MT_EMU_PT_CALL, 0x401000, 5, 0x402000, 1, 1);
	mt_emu_pt_branch(pt, MT_EMU_PT_RET, 0x402010, 1, 0x401005, 0, 2);
	mt_emu_pt_flush(pt);
	n = packets(&o, pk, 16);
	CHECK_EQ_U64(n, base + 1);
	CHECK(pk[base].type == ppt_tip);
	mt_emu_pt_free(pt);
}

static void
disable_async_and_reenable(void)
{
	struct out o = { .len = 0 };
	struct mt_emu_pt *pt = mt_emu_pt_new(CFG_NO_TIMING, sink, &o);
	struct pt_packet pk[16];
	size_t n, base;

	mt_emu_pt_enable(pt, 0x401000, 0);
	base = packets(&o, pk, 16);
	mt_emu_pt_branch(pt, MT_EMU_PT_COND, 0x401000, 2, 0x401100, 0, 1);
	CHECK(mt_emu_pt_disable(pt, 2) == 0);	/* syscall */
	CHECK(mt_emu_pt_enabled(pt) == 0);
	/* Nothing is written while disabled. */
	mt_emu_pt_branch(pt, MT_EMU_PT_JMP_IND, 0x401000, 2, 0x401234, 0, 3);
	CHECK(mt_emu_pt_enable(pt, 0x401102, 4) == 0);
	CHECK(mt_emu_pt_async_disable(pt, 0x401104, 5) == 0);	/* signal */
	n = packets(&o, pk, 16);
	CHECK_EQ_U64(n, base + 5);
	CHECK(pk[base].type == ppt_tnt_8);	/* flushed first */
	CHECK(pk[base + 1].type == ppt_tip_pgd &&
	    pk[base + 1].payload.ip.ipc == pt_ipc_suppressed);
	CHECK(pk[base + 2].type == ppt_tip_pge &&
	    pk[base + 2].payload.ip.ip == 0x1102);
	CHECK(pk[base + 3].type == ppt_fup &&
	    pk[base + 3].payload.ip.ip == 0x1104);
	CHECK(pk[base + 4].type == ppt_tip_pgd);
	mt_emu_pt_free(pt);
}

static void
psb_period_and_mtc(void)
{
	struct out o = { .len = 0 };
	/* psb_period 0: a PSB+ every 2 KiB; mtc_period 0: MTC every CTC
	 * tick, i.e. every 100 TSC ticks. */
	struct mt_emu_pt *pt = mt_emu_pt_new((1ull << 13) | (1ull << 10) |
	    (1ull << 9), sink, &o);
	static struct pt_packet pk[4096];
	size_t n, i, psbs = 0, fups = 0, mtcs = 0;
	uint64_t tsc = 1000, ip = 0x401000;

	mt_emu_pt_enable(pt, ip, tsc);
	for (i = 0; i < 3000; i++) {
		tsc += 10;
		ip = 0x401000 + (i % 7) * 0x10000;
		mt_emu_pt_branch(pt, MT_EMU_PT_JMP_IND, ip, 2, ip + 0x1000, 0,
		    tsc);
		mt_emu_pt_tick(pt, ip + 0x1000, tsc);
	}
	mt_emu_pt_flush(pt);
	n = packets(&o, pk, 4096);
	for (i = 0; i < n; i++) {
		if (pk[i].type == ppt_psb)
			psbs++;
		if (pk[i].type == ppt_fup)
			fups++;
		if (pk[i].type == ppt_mtc)
			mtcs++;
	}
	CHECK(o.len > 4 * 2048);
	/* The first PSB+, then one every 2 KiB, each with FUP(current). */
	CHECK_EQ_U64(psbs, 1 + (o.len - 1) / 2048);
	CHECK_EQ_U64(fups, psbs - 1);
	/* 30 000 TSC ticks: 300 CTC ticks, one MTC each. */
	CHECK_EQ_U64(mtcs, 300);
	mt_emu_pt_free(pt);
}

/*
 * New code at an address (JIT code rewritten): the pending TNT bits go
 * out with the CYC of their own time, then PSB+ with the new time's full
 * TSC and FUP at the new code; while disabled, the next enable writes
 * the PSB+ instead of only TIP.PGE.
 */
static void
sync_dates_old_bits_then_psb_at_new_code(void)
{
	struct out o = { .len = 0 };
	uint64_t cfg = MT_EMU_DEFAULT_CONFIG | 2;	/* with CYC */
	struct mt_emu_pt *pt = mt_emu_pt_new(cfg, sink, &o);
	struct pt_packet pk[32];
	size_t n, i, psb = 0, tnt = 0;

	CHECK(pt != NULL);
	CHECK(mt_emu_pt_enable(pt, 0x401000, 1000) == 0);
	CHECK(mt_emu_pt_branch(pt, MT_EMU_PT_COND, 0x401000, 2, 0x401010, 0,
	    1005) == 0);
	CHECK(mt_emu_pt_sync(pt, 0x7f0000000000, 1020) == 0);
	n = packets(&o, pk, 32);
	for (i = 1; i < n; i++)
		if (pk[i].type == ppt_psb)
			psb = i;
		else if (pk[i].type == ppt_tnt_8)
			tnt = i;
	CHECK(tnt > 0 && psb > tnt);
	/* 5 cycles after the enable's CYC-less PSB+ at 1000: 1005 */
	CHECK(tnt > 0 && pk[tnt - 1].type == ppt_cyc &&
	    pk[tnt - 1].payload.cyc.value == 5);
	CHECK(psb > 0 && psb + 5 < n && pk[psb + 1].type == ppt_tsc &&
	    pk[psb + 1].payload.tsc.tsc == 1020);
	/* the cycles of the clock's jump, for libipt's CYC calibration */
	CHECK(psb > 0 && pk[psb - 1].type == ppt_cyc &&
	    pk[psb - 1].payload.cyc.value == 15);
	for (i = psb; i < n && pk[i].type != ppt_fup; i++)
		;
	CHECK(i < n && pk[i].payload.ip.ip == 0x7f0000000000);
	/* disabled: the PSB+ comes with the next enable */
	o.len = 0;
	CHECK(mt_emu_pt_disable(pt, 1030) == 0);
	CHECK(mt_emu_pt_sync(pt, 0x7f0000000000, 1040) == 0);
	CHECK_EQ_U64(packets(&o, pk, 32), 2);	/* CYC, TIP.PGD */
	o.len = 0;
	CHECK(mt_emu_pt_enable(pt, 0x7f0000000000, 1050) == 0);
	n = packets(&o, pk, 32);
	CHECK(n > 3 && pk[0].type == ppt_cyc && pk[0].payload.cyc.value == 20 &&
	    pk[1].type == ppt_psb && pk[2].type == ppt_tsc &&
	    pk[2].payload.tsc.tsc == 1050 && pk[n - 1].type == ppt_tip_pge);
	mt_emu_pt_free(pt);
}

/*
 * libipt calibrates CYC on the cycles between two MTCs against their CTC
 * difference, also across a PSB+ (pt_tcal keeps the last MTC): with CYC
 * on, the cycles between any two MTCs are exactly 100 TSC ticks per CTC
 * tick, however the clock moved (steps of a few ticks, of many periods,
 * branches between, system calls the clock jumps over by up to 200
 * periods, which makes the enable after them write PSB+ from 128 on).
 */
static void
cycles_between_mtcs_match_their_ctc(void)
{
	struct out o = { .len = 0 };
	struct mt_emu_pt *pt = mt_emu_pt_new((1ull << 13) | (1ull << 10) |
	    (1ull << 9) | 2, sink, &o);
	static const uint64_t step[] = { 7, 13, 250, 1, 99, 100, 3, 1234 };
	static struct pt_packet pk[8192];
	uint64_t tsc = 1050, cyc = 0, last = 0;
	size_t n, i, mtcs = 0, psbs = 0;
	int have = 0, good = 1;

	mt_emu_pt_enable(pt, 0x401000, tsc);
	for (i = 0; i < 2000; i++) {
		tsc += step[i % 8];
		if (i % 50 == 49) {
			mt_emu_pt_disable(pt, tsc);
			tsc += i * 7919 % 20000;
			mt_emu_pt_enable(pt, 0x401000, tsc);
		}
		if (i % 3 == 0)
			mt_emu_pt_branch(pt, MT_EMU_PT_COND, 0x401000, 2,
			    0x401010, 0, tsc);
		else
			mt_emu_pt_branch(pt, MT_EMU_PT_JMP_IND, 0x401000, 2,
			    0x402000, 0, tsc);
		mt_emu_pt_tick(pt, 0x402000, tsc);
	}
	mt_emu_pt_flush(pt);
	n = packets(&o, pk, 8192);
	for (i = 0; i < n; i++) {
		if (pk[i].type == ppt_psb) {
			psbs++;
		} else if (pk[i].type == ppt_cyc) {
			cyc += pk[i].payload.cyc.value;
		} else if (pk[i].type == ppt_mtc) {
			uint64_t d = (pk[i].payload.mtc.ctc - last) & 0xff;

			if (have && cyc != d * 100) {
				printf("# MTC %zu: %llu cycles for %llu CTC\n",
				    i, (unsigned long long)cyc,
				    (unsigned long long)d);
				good = 0;
			}
			have = 1;
			mtcs++;
			last = pk[i].payload.mtc.ctc;
			cyc = 0;
		}
	}
	CHECK(good);
	CHECK(mtcs > 100);
	CHECK(psbs > 10);
	mt_emu_pt_free(pt);
}

/* A pseudo-random number (xorshift), the same sequence every run. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * The time libipt gives each TNT and TIP packet (pt_qry_time, which
 * mt-decode's choice of a JIT version rests on) is never later than the
 * clock at which it was written, with CYC and MTC every 100 ticks or
 * every 800: over a stream with PSB+ every 2 KiB, system calls the clock
 * jumps over by one tick to 10^8 ticks (an enable after 128 MTC periods
 * or more writes PSB+) and new JIT versions (mt_emu_pt_sync) up to 500
 * periods ahead.  Without the CYC before each PSB+ libipt dated packets
 * after such a jump up to 500,000 ticks late (ahead of the clock).  Any
 * lag is less than one MTC period.
 */
static void
libipt_time_never_runs_ahead_of_the_clock(void)
{
	static struct out o;
	static uint64_t at[8192];	/* each packet's clock */
	static uint8_t tip[8192];	/* 1: TIP, 0: TNT */
	struct pt_query_decoder *q;
	struct pt_config c;
	struct mt_emu_pt *pt;
	uint64_t s = 0x2545f4914f6cdd1dull, tsc, ip, t, r, period;
	size_t n, k, ahead, late;
	uint32_t lm, lc;
	int st = 0, taken, mtc;

	for (mtc = 0; mtc <= 3; mtc += 3) {
		pt = mt_emu_pt_new((1ull << 13) | (1ull << 10) | (1ull << 9) |
		    2 | (uint64_t)mtc << 14, sink, &o);
		period = 100ull << mtc;
		o.len = 0;
		n = ahead = late = 0;
		tsc = 1000 + rnd(&s) % 100000;
		CHECK(pt != NULL && mt_emu_pt_enable(pt, 0x401000, tsc) == 0);
		while (n < 8192 && o.len < sizeof(o.buf) - 4096) {
			r = rnd(&s) % 1000;
			tsc++;
			if (r < 10) {
				mt_emu_pt_disable(pt, tsc);
				r = rnd(&s) % 4;
				tsc += r == 0 ? 1 : rnd(&s) % (r == 1 ? 3000 :
				    r == 2 ? 60000 : 100000000);
				mt_emu_pt_enable(pt, 0x401000, tsc);
			} else if (r < 15) {
				tsc += 100 + (rnd(&s) % 2 ? rnd(&s) % 50000 : 0);
				mt_emu_pt_sync(pt, 0x401000, tsc);
			} else if (r < 500) {
				mt_emu_pt_branch(pt, MT_EMU_PT_COND, 0x401000,
				    2, 0x401000, 0, tsc);
				mt_emu_pt_flush(pt);	/* dated now */
				tip[n] = 0;
				at[n++] = tsc;
			} else if (r < 600) {
				mt_emu_pt_branch(pt, MT_EMU_PT_JMP_IND,
				    0x401000, 2, 0x401000, 0, tsc);
				tip[n] = 1;
				at[n++] = tsc;
			}
			mt_emu_pt_tick(pt, 0x401000, tsc);
		}
		mt_emu_pt_flush(pt);
		mt_emu_pt_free(pt);
		pt_config_init(&c);
		c.begin = o.buf;
		c.end = o.buf + o.len;
		c.cpuid_0x15_eax = MT_EMU_CPUID15_EAX;
		c.cpuid_0x15_ebx = MT_EMU_CPUID15_EBX;
		c.nom_freq = MT_EMU_NOM_FREQ;
		c.mtc_freq = (uint8_t)mtc;
		q = pt_qry_alloc_decoder(&c);
		CHECK(q != NULL && (st = pt_qry_sync_forward(q, &ip)) >= 0);
		for (k = 0; q != NULL && st >= 0 && k < n; k++) {
			struct pt_event ev;

			while (st >= 0 && (st & pts_event_pending))
				st = pt_qry_event(q, &ev, sizeof(ev));
			if (st >= 0)
				st = tip[k] ? pt_qry_indirect_branch(q, &ip) :
				    pt_qry_cond_branch(q, &taken);
			if (st < 0 || pt_qry_time(q, &t, &lm, &lc) < 0)
				break;
			ahead += t > at[k];
			late += t + period <= at[k];
		}
		printf("# mtc_period %d: %zu of %zu packets decoded, %zu dated "
		    "ahead of the clock, %zu a period late\n", mtc, k, n,
		    ahead, late);
		CHECK(k == n && n > 3000);
		CHECK_EQ_U64(ahead, 0);
		CHECK_EQ_U64(late, 0);
		pt_qry_free_decoder(q);
	}
}

/*
 * Every kind of event, at addresses near and far (all four IP
 * compressions) and clock steps small and large (CYC of one to several
 * bytes, MTC), with CYC on: each packet decoded from the stream, encoded
 * again by pt_enc_next, gives the same bytes.
 */
static void
packets_are_libipt_encodings(void)
{
	static struct out o;
	/* cyc, mtc (period 0), tsc, branch, psb_period 0 */
	struct mt_emu_pt *pt = mt_emu_pt_new((1ull << 1) | (1ull << 9) |
	    (1ull << 10) | (1ull << 13), sink, &o);
	static const uint64_t bases[] = { 0x401000, 0x7f1234560000ull,
	    0x55aa00001000ull, 0xffffffffff600000ull };
	struct pt_packet_decoder *d;
	struct pt_encoder *enc;
	struct pt_config c;
	struct pt_packet pk;
	uint64_t seed = 0x9e3779b97f4a7c15ull, tsc = 1000, ip = 0x401000;
	uint64_t off = 0;
	uint8_t again[64];
	size_t n = 0, kinds[32] = { 0 };
	int i, rc;

	o.len = 0;
	CHECK(pt != NULL);
	mt_emu_pt_enable(pt, ip, tsc);
	for (i = 0; i < 20000 && o.len < sizeof(o.buf) - 1024; i++) {
		uint64_t r = rnd(&seed), to;

		tsc += (r >> 60) == 0 ? (r >> 32) % 100000 : (r >> 40) % 40;
		to = bases[(r >> 8) % 4] + ((r >> 16) % 0x10000);
		switch (r % 9) {
		case 0: case 1: case 2:
			mt_emu_pt_branch(pt, MT_EMU_PT_COND, ip, 2,
			    (r & 8) ? ip + 2 : to, 0, tsc);
			break;
		case 3:
			mt_emu_pt_branch(pt, MT_EMU_PT_CALL, ip, 5, to, 1, tsc);
			break;
		case 4:
			mt_emu_pt_branch(pt, MT_EMU_PT_RET, ip, 1,
			    (r & 16) ? to : ip + 5, 0, tsc);
			break;
		case 5:
			mt_emu_pt_branch(pt, MT_EMU_PT_JMP_IND, ip, 2, to, 0,
			    tsc);
			break;
		case 6:
			mt_emu_pt_branch(pt, MT_EMU_PT_CALL_IND, ip, 2, to, 1,
			    tsc);
			break;
		case 7:
			if (r & 32)
				mt_emu_pt_async_disable(pt, ip, tsc);
			else
				mt_emu_pt_disable(pt, tsc);
			mt_emu_pt_enable(pt, to, ++tsc);
			break;
		default:
			break;
		}
		ip = to;
		mt_emu_pt_tick(pt, ip, tsc);
	}
	mt_emu_pt_flush(pt);
	mt_emu_pt_free(pt);

	pt_config_init(&c);
	c.begin = o.buf;
	c.end = o.buf + o.len;
	d = pt_pkt_alloc_decoder(&c);
	c.begin = again;
	c.end = again + sizeof(again);
	enc = pt_alloc_encoder(&c);
	CHECK(d != NULL && enc != NULL && pt_pkt_sync_set(d, 0) == 0);
	for (;;) {
		if (pt_pkt_get_offset(d, &off) < 0)
			break;
		rc = pt_pkt_next(d, &pk, sizeof(pk));
		if (rc == -pte_eos)
			break;
		CHECK(rc > 0);
		if (rc <= 0)
			break;
		CHECK(pt_enc_sync_set(enc, 0) == 0);
		CHECK_EQ_U64(pt_enc_next(enc, &pk), (uint64_t)rc);
		CHECK(memcmp(again, o.buf + off, (size_t)rc) == 0);
		kinds[pk.type % 32]++;
		n++;
	}
	/* Every byte was in a packet. */
	CHECK_EQ_U64(off, o.len);
	CHECK(n > 1000);
	/* What the stream held: the frequent packets, each more than once. */
	CHECK(kinds[ppt_tnt_8] > 1 && kinds[ppt_tnt_64] > 1 &&
	    kinds[ppt_tip] > 1 && kinds[ppt_tip_pge] > 1 &&
	    kinds[ppt_tip_pgd] > 1 && kinds[ppt_fup] > 1 &&
	    kinds[ppt_cyc] > 1 && kinds[ppt_mtc] > 1 && kinds[ppt_psb] > 1);
	pt_pkt_free_decoder(d);
	pt_free_encoder(enc);
}

int
main(void)
{
	TEST(enable_writes_psb_plus_then_pge);
	TEST(tnt_oldest_branch_is_msb);
	TEST(tnt_long_and_split_at_47_bits);
	TEST(tip_ip_compression_follows_last_ip);
	TEST(ret_compression_and_its_64_entry_stack);
	TEST(call_to_next_insn_and_noretcomp);
	TEST(disable_async_and_reenable);
	TEST(psb_period_and_mtc);
	TEST(sync_dates_old_bits_then_psb_at_new_code);
	TEST(cycles_between_mtcs_match_their_ctc);
	TEST(libipt_time_never_runs_ahead_of_the_clock);
	TEST(packets_are_libipt_encodings);
	return tap_done();
}
