/* SPDX-License-Identifier: MIT */
/*
 * ptretime: rewrite a snapshot's Intel PT for the timed-decoder
 * comparison (tests/helpers/timed-diff): give an untimed trace perf time,
 * or damage a trace.  The control flow of the trace is left as it was:
 * every packet is copied byte for byte; only timing packets (and PADs,
 * OVFs) are put between them.
 *
 *   ptretime time [-S seed] [-m MODES] [-d N] IN OUT
 *       strip the trace's timing packets (TSC, TMA, MTC, CYC, CBR) and put
 *       new ones in, from a virtual clock that advances by a random
 *       number of cycles per packet; the snapshot gets a time conversion
 *       (TIMECONV with cap_user_time_zero), a HOST with a TSC/CTC ratio
 *       and PTCFG's TSC bit (MTC, CYC by MODES), so mt-decode reports
 *       perf time.  MODES, letters (default: random per seed):
 *         T  TSC (and CBR) in each PSB+        t  TSC between packets too
 *         M  MTC (and TMA in PSB+), the 8-bit  C  CYC after packets
 *            CTC wrapping                      B  CBR changes between packets
 *         P  PAD runs between packets          O  OVF before some PSBs
 *         X  TSC after 40% of the packets (times that change between
 *            almost every two queries, with TSC only)
 *         E  every MODE.Exec says 32-bit (ptgen's program decodes to the
 *            same control flow in 32-bit mode)
 *         e  a MODE.Exec that switches between 32- and 64-bit before a
 *            fifth of the TIPs (a mode switch at an indirect branch)
 *       -d N: each buffer N times (thread ids tid, tid+1000, ...: the
 *       same code decoded again, warm in libipt's shared block cache
 *       when the timing has no MTC or CYC), each copy timed anew.
 *   ptretime mutate [-S seed] IN OUT
 *       one to four byte flips, deletions, duplications, insertions or a
 *       truncation in one buffer (chosen by the seed).
 *
 * Bytes before the first PSB (a wrapped ring) and from a packet libipt
 * cannot decode to the next PSB are copied as they are.  The same seed
 * gives the same bytes.  Links common/snap.c (libmtcommon.a).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <intel-pt.h>

#include "snap.h"

static uint64_t rng;

static uint64_t
rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* 1 with a chance of @pct percent. */
static int
chance(unsigned pct)
{
	return rnd() % 100 < pct;
}

struct out {
	uint8_t *p;
	size_t n, cap;
};

static int
out_put(struct out *o, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (o->n + n > o->cap) {
		size_t cap = (o->n + n) * 2 + 4096;
		uint8_t *q = realloc(o->p, cap);

		if (q == NULL)
			return -1;
		o->p = q;
		o->cap = cap;
	}
	memcpy(o->p + o->n, p, n);
	o->n += n;
	return 0;
}

static int
out_pkt(struct out *o, const struct pt_packet *pk)
{
	uint8_t b[32];
	struct pt_config c;
	struct pt_encoder *e;
	int n;

	pt_config_init(&c);
	c.begin = b;
	c.end = b + sizeof(b);
	e = pt_alloc_encoder(&c);
	if (e == NULL)
		return -1;
	n = pt_enc_next(e, pk);
	pt_free_encoder(e);
	return n < 0 ? -1 : out_put(o, b, (size_t)n);
}

struct clock {
	unsigned modes;		/* MODE_* */
	uint64_t tsc;		/* the TSC */
	uint64_t cyc;		/* cycles not yet told by a CYC */
	uint32_t cbr;		/* core:bus ratio */
	uint8_t ctc;		/* last MTC's CTC byte */
};

#define MODE_T	0x01u
#define MODE_t	0x02u
#define MODE_M	0x04u
#define MODE_C	0x08u
#define MODE_B	0x10u
#define MODE_P	0x20u
#define MODE_O	0x40u
#define MODE_X	0x80u
#define MODE_E	0x100u
#define MODE_e	0x200u
#define MTC_FREQ	3	/* an MTC every 2^3 CTC ticks */
#define CTC_SHIFT	5	/* CTC = TSC >> 5 (CPUID.15H 1/32) */

static const char mode_letters[] = "TtMCBPOXEe";

static int
put_type(struct out *o, enum pt_packet_type t)
{
	struct pt_packet pk;

	memset(&pk, 0, sizeof(pk));
	pk.type = t;
	return out_pkt(o, &pk);
}

static int
put_tsc(struct out *o, struct clock *k)
{
	struct pt_packet pk;

	memset(&pk, 0, sizeof(pk));
	pk.type = ppt_tsc;
	pk.payload.tsc.tsc = k->tsc & ((1ull << 56) - 1);
	k->cyc = 0;
	return out_pkt(o, &pk);
}

static int
put_tma(struct out *o, struct clock *k)
{
	struct pt_packet pk;

	memset(&pk, 0, sizeof(pk));
	pk.type = ppt_tma;
	pk.payload.tma.ctc = (uint16_t)(k->tsc >> CTC_SHIFT);
	pk.payload.tma.fc = (uint16_t)(k->tsc & ((1u << CTC_SHIFT) - 1));
	k->ctc = (uint8_t)(k->tsc >> CTC_SHIFT >> MTC_FREQ);
	return out_pkt(o, &pk);
}

static int
put_cbr(struct out *o, struct clock *k)
{
	struct pt_packet pk;

	memset(&pk, 0, sizeof(pk));
	pk.type = ppt_cbr;
	pk.payload.cbr.ratio = (uint8_t)k->cbr;
	return out_pkt(o, &pk);
}

/* Time passes: @cyc cycles; MTCs and CYCs as the modes say. */
static int
tick(struct out *o, struct clock *k, uint64_t cyc)
{
	struct pt_packet pk;
	uint8_t ctc;

	k->tsc += cyc * 24 / (k->cbr ? k->cbr : 24) + 1;
	k->cyc += cyc;
	ctc = (uint8_t)(k->tsc >> CTC_SHIFT >> MTC_FREQ);
	if ((k->modes & MODE_M) && ctc != k->ctc) {
		memset(&pk, 0, sizeof(pk));
		pk.type = ppt_mtc;
		pk.payload.mtc.ctc = ctc;
		k->ctc = ctc;
		k->cyc = 0;
		if (out_pkt(o, &pk) < 0)
			return -1;
	}
	if ((k->modes & MODE_C) && k->cyc != 0 && chance(70)) {
		memset(&pk, 0, sizeof(pk));
		pk.type = ppt_cyc;
		pk.payload.cyc.value = k->cyc;
		k->cyc = 0;
		if (out_pkt(o, &pk) < 0)
			return -1;
	}
	if ((k->modes & MODE_t) && chance(2) && put_tsc(o, k) < 0)
		return -1;
	if ((k->modes & MODE_X) && chance(40) && put_tsc(o, k) < 0)
		return -1;
	if ((k->modes & MODE_B) && chance(2)) {
		k->cbr = 8 + (uint32_t)(rnd() % 32);
		if (put_cbr(o, k) < 0)
			return -1;
	}
	if ((k->modes & MODE_P) && chance(3)) {
		uint8_t pad[8] = { 0 };

		if (out_put(o, pad, 1 + rnd() % 8) < 0)
			return -1;
	}
	return 0;
}

static int
is_timing(enum pt_packet_type t)
{
	return t == ppt_tsc || t == ppt_tma || t == ppt_mtc ||
	    t == ppt_cyc || t == ppt_cbr;
}

/* The timed copy of @len bytes at @buf into @o. */
static int
retime(struct out *o, const uint8_t *buf, uint64_t len, unsigned modes)
{
	struct pt_config c;
	struct pt_packet_decoder *d;
	struct pt_packet pk;
	struct clock k;
	uint64_t off, at = 0, next;
	int rc = 0, in_psb = 0, bits32 = 0;

	memset(&k, 0, sizeof(k));
	k.modes = modes;
	k.tsc = 0x10000000ull + (rnd() % 0x1000000) * 64;
	k.cbr = 24;
	k.ctc = (uint8_t)(k.tsc >> CTC_SHIFT >> MTC_FREQ);
	if (len == 0)
		return 0;
	pt_config_init(&c);
	c.begin = (uint8_t *)buf;
	c.end = (uint8_t *)buf + len;
	d = pt_pkt_alloc_decoder(&c);
	if (d == NULL)
		return -1;
	for (;;) {
		if (pt_pkt_sync_forward(d) < 0 || pt_pkt_get_offset(d, &off) < 0)
			off = len;
		if (out_put(o, buf + at, off - at) < 0)
			goto fail;
		at = off;
		if (off == len)
			break;
		for (;;) {
			rc = pt_pkt_next(d, &pk, sizeof(pk));
			if (rc < 0)
				break;
			next = at + (uint64_t)rc;
			if (pk.type == ppt_psb && (modes & MODE_O) &&
			    chance(5) && put_type(o, ppt_ovf) < 0)
				goto fail;
			if (pk.type == ppt_tip && !in_psb && (modes & MODE_e) &&
			    chance(20)) {
				struct pt_packet me;

				memset(&me, 0, sizeof(me));
				me.type = ppt_mode;
				me.payload.mode.leaf = pt_mol_exec;
				bits32 = !bits32;
				me.payload.mode.bits.exec = pt_set_exec_mode(
				    bits32 ? ptem_32bit : ptem_64bit);
				if (out_pkt(o, &me) < 0)
					goto fail;
			}
			if (pk.type == ppt_mode && (modes & (MODE_E | MODE_e)) &&
			    pk.payload.mode.leaf == pt_mol_exec) {
				if (modes & MODE_E)
					bits32 = 1;
				pk.payload.mode.bits.exec = pt_set_exec_mode(
				    bits32 ? ptem_32bit : ptem_64bit);
				if (out_pkt(o, &pk) < 0)
					goto fail;
			} else if (!(is_timing(pk.type) && modes != 0) &&
			    out_put(o, buf + at, (size_t)rc) < 0)
				goto fail;
			at = next;
			if (pk.type == ppt_psb) {
				in_psb = 1;
				if ((modes & MODE_T) && put_tsc(o, &k) < 0)
					goto fail;
				if ((modes & MODE_M) && put_tma(o, &k) < 0)
					goto fail;
				if ((modes & (MODE_T | MODE_B)) &&
				    put_cbr(o, &k) < 0)
					goto fail;
				continue;
			}
			if (pk.type == ppt_psbend) {
				in_psb = 0;
				continue;
			}
			if (!in_psb && tick(o, &k, 1 + rnd() % (chance(5) ?
			    100000 : 300)) < 0)
				goto fail;
		}
		if (rc != -pte_eos) {
			/* undecodable: copied as it is up to the next PSB */
			in_psb = 0;
			continue;
		}
		if (out_put(o, buf + at, len - at) < 0)
			goto fail;
		break;
	}
	pt_pkt_free_decoder(d);
	return 0;
fail:
	pt_pkt_free_decoder(d);
	return -1;
}

static int
do_time(struct mt_snap *s, unsigned modes, int dup, uint64_t cut)
{
	size_t n0 = s->naux, i;
	int k;

	for (i = 0; i < n0 && cut != 0; i++)
		if (s->aux[i].len > cut)
			s->aux[i].len = cut;
	for (k = 1; k < dup; k++) {
		for (i = 0; i < n0; i++) {
			struct mt_snap_aux a = s->aux[i];
			size_t t;

			if (a.tid != MT_SNAP_NONE)
				a.tid += 1000u * (uint32_t)k;
			if (mt_snap_add_aux(s, &a) < 0)
				return -1;
			for (t = 0; t < s->nthreads; t++) {
				struct mt_snap_thread th = s->threads[t];

				if (th.tid != s->aux[i].tid)
					continue;
				th.tid = a.tid;
				if (mt_snap_add_thread(s, &th) < 0)
					return -1;
				break;
			}
		}
	}
	for (i = 0; i < s->naux; i++) {
		struct out o = { 0 };

		if (retime(&o, s->aux[i].data, s->aux[i].len, modes) < 0)
			return -1;
		if (s->map == NULL)
			free(s->aux[i].data);
		s->aux[i].data = o.p;
		s->aux[i].len = o.n;
		s->aux[i].ring_size = o.n > s->aux[i].ring_size ? o.n :
		    s->aux[i].ring_size;
		s->aux[i].head = o.n % s->aux[i].ring_size;
	}
	if (!s->has_host) {
		memset(&s->host, 0, sizeof(s->host));
		memcpy(s->host.vendor, "GenuineIntel", 12);
		s->host.family = 6;
		s->host.model = 85;
		s->host.stepping = 4;
		s->host.nr_cpus = 2;
		s->has_host = 1;
	}
	s->host.max_nonturbo_ratio = 24;
	s->host.cpuid_15[0] = 1;		/* CTC:TSC 1:32 */
	s->host.cpuid_15[1] = 1u << CTC_SHIFT;
	s->host.cpuid_15[2] = 0;
	if (!s->has_ptcfg) {
		memset(&s->ptcfg, 0, sizeof(s->ptcfg));
		s->ptcfg.backend = MT_SNAP_BK_RAW;
		s->ptcfg.config = MT_PT_CFG_BRANCH;
		s->ptcfg.user = 1;
		s->has_ptcfg = 1;
	}
	s->ptcfg.config &= ~(MT_PT_CFG_CYC | MT_PT_CFG_MTC | (0xfull << 14));
	s->ptcfg.config |= MT_PT_CFG_TSC;
	if (modes & MODE_M)
		s->ptcfg.config |= MT_PT_CFG_MTC | ((uint64_t)MTC_FREQ << 14);
	if (modes & MODE_C)
		s->ptcfg.config |= MT_PT_CFG_CYC;
	memset(&s->timeconv, 0, sizeof(s->timeconv));
	s->timeconv.time_zero = 1000000000ull + rnd() % 1000;
	s->timeconv.time_mult = 1u << 9;
	s->timeconv.time_shift = 10;
	s->timeconv.cap_user_time_zero = 1;
	s->timeconv.time_mask = ~0ull;
	s->has_timeconv = 1;
	return 0;
}

static int
do_mutate(struct mt_snap *s)
{
	struct mt_snap_aux *a;
	struct out o = { 0 };
	size_t i, n, p, l;

	if (s->naux == 0)
		return 0;
	a = &s->aux[rnd() % s->naux];
	if (out_put(&o, a->data, a->len) < 0)
		return -1;
	n = 1 + rnd() % 4;
	for (i = 0; i < n && o.n > 0; i++) {
		p = rnd() % o.n;
		l = 1 + rnd() % 40;
		if (l > o.n - p)
			l = o.n - p;
		switch (rnd() % 6) {
		case 0:
		case 1:
			o.p[p] ^= (uint8_t)(1u << rnd() % 8);
			break;
		case 2:
			o.p[p] = (uint8_t)rnd();
			break;
		case 3:
			memmove(o.p + p, o.p + p + l, o.n - p - l);
			o.n -= l;
			break;
		case 4: {
			uint8_t tmp[40];

			memcpy(tmp, o.p + p, l);
			if (out_put(&o, tmp, l) < 0)
				return -1;
			memmove(o.p + p + l, o.p + p, o.n - l - p);
			memcpy(o.p + p, tmp, l);
			break;
		}
		default:
			if (i == n - 1 && chance(30))
				o.n = p;
			else
				o.p[p] = (uint8_t)rnd();
			break;
		}
	}
	if (s->map == NULL)
		free(a->data);
	a->data = o.p;
	a->len = o.n;
	if (a->ring_size < o.n)
		a->ring_size = o.n;
	a->head = a->ring_size ? o.n % a->ring_size : 0;
	return 0;
}

static unsigned
parse_modes(const char *m)
{
	unsigned v = 0;
	const char *p;

	for (; *m; m++) {
		p = strchr(mode_letters, *m);
		if (p == NULL)
			return 0;
		v |= 1u << (p - mode_letters);
	}
	return v;
}

static void
usage(void)
{
	fprintf(stderr, "usage: ptretime time [-S seed] [-m TtMCBPOXEe] "
	    "[-d N] [-c BYTES] IN OUT\n       ptretime mutate [-S seed] IN OUT\n");
}

int
main(int argc, char **argv)
{
	struct mt_snap s;
	struct mt_snap_diag dg;
	const char *modes = NULL;
	char tmp[4200];
	unsigned mv = 0;
	uint64_t seed = 1, cut = 0;
	int c, dup = 1, fd, rc;

	if (argc < 2) {
		usage();
		return 2;
	}
	optind = 2;
	while ((c = getopt(argc, argv, "S:m:d:c:")) != -1) {
		switch (c) {
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'm': modes = optarg; break;
		case 'd': dup = atoi(optarg); break;
		case 'c': cut = strtoull(optarg, NULL, 0); break;
		default: usage(); return 2;
		}
	}
	if (argc - optind != 2 || dup < 1 || dup > 16) {
		usage();
		return 2;
	}
	rng = seed * 0x2545f4914f6cdd1dull + 1;
	if (modes != NULL && (mv = parse_modes(modes)) == 0) {
		usage();
		return 2;
	}
	if (modes == NULL)
		while ((mv & (MODE_T | MODE_M | MODE_C)) == 0)
			mv = (unsigned)rnd() & 0x3ff;
	mt_snap_init(&s);
	fd = open(argv[optind], O_RDONLY);
	if (fd < 0 || mt_snap_read_fd(&s, fd, &dg) < 0) {
		fprintf(stderr, "ptretime: cannot read '%s'\n", argv[optind]);
		return 1;
	}
	close(fd);
	if (strcmp(argv[1], "time") == 0)
		rc = do_time(&s, mv, dup, cut);
	else if (strcmp(argv[1], "mutate") == 0)
		rc = do_mutate(&s);
	else {
		usage();
		return 2;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[optind + 1]);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (rc < 0 || fd < 0 || mt_snap_write_fd(&s, fd) < 0 ||
	    close(fd) < 0 || rename(tmp, argv[optind + 1]) < 0) {
		fprintf(stderr, "ptretime: cannot write '%s': %s\n",
		    argv[optind + 1], strerror(errno));
		unlink(tmp);
		mt_snap_release(&s);
		return 1;
	}
	mt_snap_release(&s);
	if (strcmp(argv[1], "time") == 0) {
		for (c = 0; mode_letters[c]; c++)
			if (mv & (1u << c))
				putchar(mode_letters[c]);
		putchar('\n');
	}
	return 0;
}
