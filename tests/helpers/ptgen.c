/* SPDX-License-Identifier: MIT */
/*
 * ptgen: synthetic Intel PT traces for mt-decode's tests, written with
 * libipt's packet encoder (pt_enc_next) over a small hand-assembled
 * program whose control flow is known exactly.
 *
 * usage: ptgen code FILE          write the code bytes (load at 0x400000)
 *        ptgen SCENARIO FILE      write the PT packets of SCENARIO
 *
 * The program (64-bit, at CODE = 0x400000):
 *
 *   main  0x400000  e8 1b 00 00 00   call f
 *         0x400005  ff d3            call *%rbx        (to g)
 *         0x400007  eb f7            jmp main
 *   f     0x400020  85 c0            test %eax, %eax
 *         0x400022  74 01            je 0x400025       (TNT)
 *         0x400024  90               nop
 *         0x400025  c3               ret               (TNT or TIP)
 *   g     0x400030  eb 02            jmp 0x400034
 *         0x400032  90 90
 *         0x400034  c3               ret               (TIP)
 *   s     0x400040  0f 05            syscall
 *         0x400042  c3               ret
 *   k     0x400050  48 0f 07         sysretq           (the "kernel")
 *   h     0x400060  48 cf            iretq             (an interrupt handler)
 *
 * One "round" of main is: call f (no packet), je taken and the return
 * compressed (one TNT-8 with two taken bits), call *%rbx (TIP g), g's
 * return (TIP 0x400007), jmp main (no packet).  When the packets run out,
 * libipt decodes on through main until f's je needs trace: every stream
 * ends with that tail (one more call f).
 *
 * Scenarios (the tests' expected event streams are in
 * tests/data/decode/<scenario>.expected):
 *   calls      PSB+ at main, two rounds
 *   ipcomp     five rounds whose TIPs use update-16, update-32, sext-48,
 *              update-48 and full IP compression
 *   psb        a round, a PSB+ in the middle (FUP at main), a round
 *   ovf        a round, OVF + FUP(main), a round
 *   nomap      a round whose call *%rbx goes to 0x500000 (no code there),
 *              PSB+, a round (lost: read ahead), PSB+, a round
 *   corrupt    a round, a packet with an unknown opcode, PSB+, a round
 *   midpacket  5 bytes of a cut TIP packet, then the "calls" stream
 *   syscall    user-only: syscall then TIP.PGD, TIP.PGE after it, ret
 *   kernel     kernel traced: syscall to k, sysretq back, ret
 *   irq        an interrupt at f's je (FUP + TIP to h), iretq back, the
 *              rest of the round
 *   filter     call *%rbx leaves the traced range (TIP.PGD with the
 *              target), TIP.PGE where it returns, then a round
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#define CODE	0x400000ull

static const uint8_t code[0x70] = {
	[0x00] = 0xe8, 0x1b, 0x00, 0x00, 0x00, 0xff, 0xd3, 0xeb, 0xf7,
	[0x20] = 0x85, 0xc0, 0x74, 0x01, 0x90, 0xc3,
	[0x30] = 0xeb, 0x02, 0x90, 0x90, 0xc3,
	[0x40] = 0x0f, 0x05, 0xc3,
	[0x50] = 0x48, 0x0f, 0x07,
	[0x60] = 0x48, 0xcf,
};

static struct pt_encoder *enc;

static void
put(const struct pt_packet *p)
{
	int rc = pt_enc_next(enc, p);

	if (rc < 0) {
		fprintf(stderr, "ptgen: %s\n", pt_errstr(pt_errcode(rc)));
		exit(1);
	}
}

static void
pkt(enum pt_packet_type t)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = t;
	put(&p);
}

static void
ip(enum pt_packet_type t, enum pt_ip_compression ipc, uint64_t addr)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = t;
	p.payload.ip.ipc = ipc;
	p.payload.ip.ip = addr;
	put(&p);
}

/* TNT-8 of @n bits, @bits given oldest first as the low bits of a string. */
static void
tnt(const char *bits)
{
	struct pt_packet p;
	size_t i;

	memset(&p, 0, sizeof(p));
	p.type = ppt_tnt_8;
	p.payload.tnt.bit_size = (uint8_t)strlen(bits);
	for (i = 0; bits[i]; i++)	/* oldest branch is the MSB */
		p.payload.tnt.payload = p.payload.tnt.payload << 1 |
		    (uint64_t)(bits[i] == '1');
	put(&p);
}

static void
psb_plus(uint64_t fup)
{
	struct pt_packet p;

	pkt(ppt_psb);
	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	put(&p);
	if (fup)
		ip(ppt_fup, pt_ipc_sext_48, fup);
	pkt(ppt_psbend);
}

static void
round_ipc(enum pt_ip_compression c)
{
	tnt("11");
	ip(ppt_tip, c, CODE + 0x30);
	ip(ppt_tip, c, CODE + 0x07);
}

static void
round_std(void)
{
	round_ipc(pt_ipc_sext_48);
}

static int
scenario(const char *s)
{
	if (strcmp(s, "calls") == 0) {
		psb_plus(CODE);
		round_std();
		round_std();
	} else if (strcmp(s, "ipcomp") == 0) {
		psb_plus(CODE);
		round_ipc(pt_ipc_update_16);
		round_ipc(pt_ipc_update_32);
		round_ipc(pt_ipc_sext_48);
		round_ipc(pt_ipc_update_48);
		round_ipc(pt_ipc_full);
	} else if (strcmp(s, "psb") == 0) {
		psb_plus(CODE);
		round_std();
		psb_plus(CODE);
		round_std();
	} else if (strcmp(s, "ovf") == 0) {
		psb_plus(CODE);
		round_std();
		pkt(ppt_ovf);
		ip(ppt_fup, pt_ipc_sext_48, CODE);
		round_std();
	} else if (strcmp(s, "nomap") == 0) {
		psb_plus(CODE);
		tnt("11");
		ip(ppt_tip, pt_ipc_sext_48, 0x500000);
		/*
		 * libipt has read this PSB+ by the time it fails to fetch
		 * code at 0x500000, so the resync lands on the next one.
		 */
		psb_plus(CODE);
		round_std();
		psb_plus(CODE);
		round_std();
	} else if (strcmp(s, "corrupt") == 0) {
		static const uint8_t bad[] = { 0x02, 0xff, 0x02, 0xff };
		uint64_t off;

		psb_plus(CODE);
		round_std();
		pt_enc_get_offset(enc, &off);
		pkt(ppt_pad);
		/* Overwrite the pad and beyond with an unknown opcode. */
		memcpy((uint8_t *)pt_enc_get_config(enc)->begin + off, bad,
		    sizeof(bad));
		pt_enc_sync_set(enc, off + sizeof(bad));
		psb_plus(CODE);
		round_std();
	} else if (strcmp(s, "midpacket") == 0) {
		uint64_t off;

		ip(ppt_tip, pt_ipc_sext_48, CODE + 0x30);
		pt_enc_get_offset(enc, &off);
		/* Keep only the last 5 bytes of that TIP: a cut packet. */
		memmove((uint8_t *)pt_enc_get_config(enc)->begin,
		    (uint8_t *)pt_enc_get_config(enc)->begin + off - 5, 5);
		pt_enc_sync_set(enc, 5);
		psb_plus(CODE);
		round_std();
		round_std();
	} else if (strcmp(s, "syscall") == 0) {
		psb_plus(CODE + 0x40);
		ip(ppt_tip_pgd, pt_ipc_suppressed, 0);
		ip(ppt_tip_pge, pt_ipc_sext_48, CODE + 0x42);
		ip(ppt_tip, pt_ipc_sext_48, CODE + 0x07);
	} else if (strcmp(s, "kernel") == 0) {
		psb_plus(CODE + 0x40);
		ip(ppt_tip, pt_ipc_sext_48, CODE + 0x50);
		ip(ppt_tip, pt_ipc_sext_48, CODE + 0x42);
		ip(ppt_tip, pt_ipc_sext_48, CODE + 0x07);
	} else if (strcmp(s, "irq") == 0) {
		psb_plus(CODE);
		ip(ppt_fup, pt_ipc_sext_48, CODE + 0x22);
		ip(ppt_tip, pt_ipc_sext_48, CODE + 0x60);
		ip(ppt_tip, pt_ipc_sext_48, CODE + 0x22);
		round_std();
	} else if (strcmp(s, "filter") == 0) {
		psb_plus(CODE);
		tnt("11");
		ip(ppt_tip_pgd, pt_ipc_sext_48, 0x7f0000001000ull);
		ip(ppt_tip_pge, pt_ipc_sext_48, CODE + 0x07);
		round_std();
	} else {
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static uint8_t buf[4096];
	struct pt_config cfg;
	uint64_t len;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: ptgen code|SCENARIO FILE\n");
		return 2;
	}
	f = fopen(argv[2], "wb");
	if (f == NULL) {
		perror(argv[2]);
		return 1;
	}
	if (strcmp(argv[1], "code") == 0) {
		if (fwrite(code, 1, sizeof(code), f) != sizeof(code))
			return 1;
		return fclose(f) != 0;
	}
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	enc = pt_alloc_encoder(&cfg);
	if (enc == NULL || scenario(argv[1]) < 0) {
		fprintf(stderr, "ptgen: unknown scenario '%s'\n", argv[1]);
		return 2;
	}
	pt_enc_get_offset(enc, &len);
	pt_free_encoder(enc);
	if (fwrite(buf, 1, (size_t)len, f) != len)
		return 1;
	return fclose(f) != 0;
}
