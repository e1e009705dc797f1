/* SPDX-License-Identifier: MIT */
/*
 * x86 instruction lengths (ild.h).  Tables are bit sets over opcode
 * bytes, written from the opcode maps of the Intel SDM Vol. 2, appendix A.
 */
#include <string.h>

#include "ild.h"

/* 256-bit set helpers: one bit per opcode byte. */
#define BIT(t, b) (((t)[(b) >> 5] >> ((b) & 31)) & 1u)

/*
 * One-byte map: opcodes with a ModRM byte.
 * 00-03 08-0B 10-13 18-1B 20-23 28-2B 30-33 38-3B, 62 63, 69 6B,
 * 80-8F, C0 C1 C4-C7, D0-D3, D8-DF, F6 F7, FE FF.
 */
static const uint32_t map1_modrm[8] = {
	0x0f0f0f0f, 0x0f0f0f0f, 0x00000000, 0x00000a0c,
	0x0000ffff, 0x00000000, 0xff0f00f3, 0xc0c00000,
};

/*
 * Two-byte map (0F xx): opcodes WITHOUT a ModRM byte; all others have one.
 * 04-0C (and 0E), 30-37, 39 3B-3F (invalid), 77, 80-8F (Jcc rel),
 * A0-A2, A8-AA, C8-CF.
 */
static const uint32_t map2_no_modrm[8] = {
	0x00005ff0, 0xfaff0000, 0x00000000, 0x00800000,
	0x0000ffff, 0x00000707, 0x0000ff00, 0x00000000,
};

/* Two-byte map opcodes with an imm8: 0F 0F (3DNow!), 70-73, A4, AC, BA,
 * C2, C4-C6. */
static const uint32_t map2_imm8[8] = {
	0x00008000, 0x00000000, 0x00000000, 0x000f0000,
	0x00000000, 0x04001010, 0x00000074, 0x00000000,
};

/*
 * ild_decode's fast path: per one-byte opcode after no prefix (or only a
 * REX in 64-bit mode), its ModRM (M) and immediate (B: 8 bits, Z: the
 * operand size's 16 or 32), or N for neither; S where the general path
 * decides: prefixes, REX, VEX and EVEX, the 0F map, branches and
 * far transfers, and opcodes whose length or class depends on more than
 * the opcode (A0-A3 and B8-BF on the address size and REX.W, F6 F7 FF on
 * ModRM's reg, C8).
 */
enum { F_S = 0, F_N = 1, F_M = 2, F_B = 4, F_Z = 8 };
#define S	F_S
#define N	F_N
#define M	F_M
#define B	F_B
#define Z	F_Z
#define MB	(F_M | F_B)
#define MZ	(F_M | F_Z)
static const uint8_t map1_fast[256] = {
	/* 00 */ M, M, M, M, B, Z, N, N, M, M, M, M, B, Z, N, S,
	/* 10 */ M, M, M, M, B, Z, N, N, M, M, M, M, B, Z, N, N,
	/* 20 */ M, M, M, M, B, Z, S, N, M, M, M, M, B, Z, S, N,
	/* 30 */ M, M, M, M, B, Z, S, N, M, M, M, M, B, Z, S, N,
	/* 40 */ S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,
	/* 50 */ N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	/* 60 */ N, N, S, M, S, S, S, S, Z, MZ, B, MB, N, N, N, N,
	/* 70 */ S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,
	/* 80 */ MB, MZ, MB, MB, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 90 */ N, N, N, N, N, N, N, N, N, N, S, N, N, N, N, N,
	/* a0 */ S, S, S, S, N, N, N, N, B, Z, N, N, N, N, N, N,
	/* b0 */ B, B, B, B, B, B, B, B, S, S, S, S, S, S, S, S,
	/* c0 */ MB, MB, S, S, S, S, MB, MZ, S, N, S, S, S, S, S, S,
	/* d0 */ M, M, M, M, B, B, N, N, M, M, M, M, M, M, M, M,
	/* e0 */ S, S, S, S, B, B, B, B, S, S, S, S, N, N, N, N,
	/* f0 */ S, S, S, S, N, N, S, S, N, N, N, N, N, N, M, S,
};
#undef S
#undef N
#undef M
#undef B
#undef Z
#undef MB
#undef MZ

struct ild_state {
	const uint8_t *p;
	size_t n, i;
	int bits;		/* 16, 32, 64 */
	int opsz16;		/* operand size is 16 bits */
	int adsz;		/* address size in bits */
	int rexw;		/* REX.W */
};

static int
need(const struct ild_state *s, size_t k)
{
	return s->i + k <= s->n && s->i + k <= 15;
}

/* Skip ModRM, SIB and displacement.  Returns the ModRM byte or -1. */
static int
ild_modrm(struct ild_state *s)
{
	unsigned m, mod, rm;
	size_t disp = 0;

	if (!need(s, 1))
		return -1;
	m = s->p[s->i++];
	mod = m >> 6;
	rm = m & 7;
	if (mod == 3)
		return (int)m;
	if (s->adsz == 16) {
		if (mod == 1)
			disp = 1;
		else if (mod == 2 || rm == 6)
			disp = 2;
	} else {
		if (rm == 4) {
			if (!need(s, 1))
				return -1;
			if ((s->p[s->i++] & 7) == 5 && mod == 0)
				disp = 4;
		}
		if (mod == 1)
			disp = 1;
		else if (mod == 2 || (mod == 0 && rm == 5))
			disp = 4;
	}
	if (!need(s, disp))
		return -1;
	s->i += disp;
	return (int)m;
}

static int
ild_imm(struct ild_state *s, size_t k)
{
	if (!need(s, k))
		return -1;
	s->i += k;
	return 0;
}

/* Relative displacement of @k bytes at the current position. */
static int
ild_rel(struct ild_state *s, size_t k, uint64_t ip, struct ild_insn *o)
{
	const uint8_t *d = s->p + s->i;
	int64_t v;

	if (ild_imm(s, k) < 0)
		return -1;
	if (k == 1)
		v = (int8_t)d[0];
	else if (k == 2)
		v = (int16_t)(d[0] | d[1] << 8);
	else
		v = (int32_t)((uint32_t)d[0] | (uint32_t)d[1] << 8 |
		    (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24);
	o->rel = 1;
	o->target = ip + s->i + (uint64_t)v;
	if (s->bits == 32 || (s->bits == 16 && k == 4))
		o->target &= 0xffffffffull;
	else if (s->bits == 16 || k == 2)
		o->target &= 0xffffull;
	return 0;
}

/* Size of an immediate of operand size z (2 or 4 bytes). */
static size_t
zsize(const struct ild_state *s)
{
	return s->opsz16 ? 2 : 4;
}

/*
 * Two-byte map opcodes whose length libipt 2.0.5's decoder takes
 * otherwise than the SDM's usual form (measured: pt_insn_next over
 * every opcode of the map): 0F 24-27 (no ModRM), 39, 3B-3F (a ModRM),
 * 78 (with 66/F2: an imm), A6, A7, B9, FF (no ModRM).  No valid user
 * code holds them; ild_decode refuses them, so the cached decoder gives
 * such code to libipt instead of walking other instructions than
 * libipt's.  (0F 20-23, MOV to and from control and debug registers,
 * ignore ModRM's mod, as in the SDM: ild_map2.)
 */
static const uint32_t map2_not_libipt[8] = {
	0x00000000, 0xfa0000f0, 0x00000000, 0x01000000,
	0x00000000, 0x020000c0, 0x00000000, 0x80000000,
};

/* VEX (C4/C5) and EVEX (62): prefix bytes, opcode, ModRM, imm8. */
static int
ild_vex(struct ild_state *s, unsigned esc, struct ild_insn *o)
{
	unsigned map, op;
	size_t plen = esc == 0xc5 ? 1 : esc == 0xc4 ? 2 : 3;

	if (!need(s, plen + 1))
		return -1;
	if (esc == 0xc5)
		map = 1;
	else
		map = s->p[s->i] & (esc == 0x62 ? 7 : 0x1f);
	/*
	 * libipt's decoder refuses a three-byte VEX whose map field is 5 or
	 * more (pt_ild.c: PTI_MAP_INVALID): so does this one, so a walk
	 * ends where libipt's block decoder reports a bad instruction.
	 */
	if (esc == 0xc4 && map >= 5)
		return -1;
	/* maps 0 and 4 (C4 and 62), EVEX's 5-7: reserved (#UD) in the
	 * SDM, and libipt's lengths differ */
	if (map == 0 || map >= 4)
		return -1;
	/*
	 * libipt takes VEX and EVEX map 0F opcodes' ModRM, immediate and
	 * displacement from its legacy two-byte map, this decoder from the
	 * AVX forms: they agree where an AVX instruction has that opcode.
	 * Where they do not (an opcode without ModRM or with an imm8 in
	 * the legacy map, other than VZEROUPPER and the AVX imm8 forms, or
	 * one of map2_not_libipt's or 20-23, or 38 and 3A, its three-byte
	 * escapes), refuse (map2_not_libipt's comment).
	 */
	s->i += plen;
	op = s->p[s->i++];
	if (map == 1 && (BIT(map2_not_libipt, op) ||
	    (op >= 0x20 && op <= 0x23) || op == 0x38 || op == 0x3a ||
	    (BIT(map2_no_modrm, op) && !(esc != 0x62 && op == 0x77)) ||
	    (BIT(map2_imm8, op) && !((op >= 0x70 && op <= 0x73) ||
	    op == 0xc2 || (op >= 0xc4 && op <= 0xc6)))))
		return -1;
	if (!(esc == 0xc5 || esc == 0xc4) || map != 1 || op != 0x77) {
		if (ild_modrm(s) < 0)
			return -1;
	}
	if (map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) ||
	    op == 0xc2 || (op >= 0xc4 && op <= 0xc6))))
		if (ild_imm(s, 1) < 0)
			return -1;
	o->len = (uint8_t)s->i;
	return 0;
}

static int
ild_map2(struct ild_state *s, uint64_t ip, struct ild_insn *o)
{
	unsigned op;

	if (!need(s, 1))
		return -1;
	op = s->p[s->i++];
	if (BIT(map2_not_libipt, op))
		return -1;	/* libipt's length differs */
	switch (op) {
	case 0x05: o->cls = ILD_SYSCALL; break;
	case 0x07: o->cls = ILD_SYSRET; break;
	case 0x34: o->cls = ILD_SYSCALL; break;
	case 0x35: o->cls = ILD_SYSRET; break;
	case 0x20: case 0x21: case 0x22: case 0x23:
		/* MOV CRn/DRn: ModRM's mod is taken as 3 (no SIB, no
		 * displacement), SDM Vol. 2 MOV--Move to/from Control
		 * Registers */
		return ild_imm(s, 1);
	/* UD2 (0B) is no branch to libipt 2.0.5: decoding goes on past
	 * it (a #UD comes as an asynchronous branch) */
	case 0x38:	/* three-byte map 0F 38: ModRM, no immediate */
		if (!need(s, 1))
			return -1;
		s->i++;
		return ild_modrm(s) < 0 ? -1 : 0;
	case 0x3a:	/* three-byte map 0F 3A: ModRM and imm8 */
		if (!need(s, 1))
			return -1;
		s->i++;
		if (ild_modrm(s) < 0)
			return -1;
		return ild_imm(s, 1);
	default:
		break;
	}
	if (op >= 0x80 && op <= 0x8f) {
		o->cls = ILD_JCC;
		return ild_rel(s, s->bits == 64 ? 4 : zsize(s), ip, o);
	}
	if (!BIT(map2_no_modrm, op)) {
		int m = ild_modrm(s);

		if (m < 0)
			return -1;
		/* VMCALL, VMLAUNCH, VMRESUME: 0F 01 C1-C3 (libipt 2.0.5
		 * takes VMMCALL, D9, for no branch) */
		if (op == 0x01 && (m == 0xc1 || m == 0xc2 || m == 0xc3))
			o->cls = ILD_FAR;
	}
	if (BIT(map2_imm8, op))
		return ild_imm(s, 1);
	return 0;
}

/*
 * ild_decode's common case in 32- and 64-bit mode, @n > 0: no prefix
 * but a REX, then one of map1_fast's opcodes, its ModRM, SIB and
 * displacement as ild_modrm reads them (the address size is the mode's)
 * and its immediate.  Returns the length, -1 when @n bytes (or 15) do
 * not hold it, 0 when the general path decides.
 */
static inline int
ild_fast(const uint8_t *p, size_t n, int bits)
{
	size_t i = 0;
	unsigned op = p[0], f, m, mod, rm;

	if (bits == 64 && (op & 0xf0) == 0x40 && n > 1)
		op = p[++i];
	f = map1_fast[op];
	if (f == F_S)
		return 0;
	i++;
	if (f & F_M) {
		if (i >= n)
			return -1;
		m = p[i++];
		mod = m >> 6;
		rm = m & 7;
		if (mod != 3) {
			if (rm == 4) {
				if (i >= n)
					return -1;
				if ((p[i++] & 7) == 5 && mod == 0)
					i += 4;
			}
			if (mod == 1)
				i += 1;
			else if (mod == 2 || (mod == 0 && rm == 5))
				i += 4;
		}
	}
	i += (f & F_B) ? 1 : (f & F_Z) ? 4 : 0;
	return i <= n && i <= 15 ? (int)i : -1;
}

int
ild_decode(const uint8_t *p, size_t n, uint64_t ip, int bits,
    struct ild_insn *o)
{
	struct ild_state s;
	unsigned op;
	int m, rc = 0;

	memset(o, 0, sizeof(*o));
	if (bits != 16 && n > 0) {
		rc = ild_fast(p, n, bits);
		if (rc != 0) {
			o->len = (uint8_t)(rc > 0 ? rc : 0);
			return rc > 0 ? 0 : -1;
		}
	}
	s = (struct ild_state){ .p = p, .n = n, .bits = bits };
	s.opsz16 = bits == 16;
	s.adsz = bits;
	for (;;) {		/* legacy prefixes and REX */
		if (!need(&s, 1))
			return -1;
		op = p[s.i];
		if (bits == 64 && (op & 0xf0) == 0x40) {
			/* Only a REX right before the opcode counts. */
			s.rexw = (op >> 3) & 1;
			s.i++;
			continue;
		}
		if (op == 0x66)
			s.opsz16 = bits != 16;
		else if (op == 0x67)
			s.adsz = bits == 64 ? 32 : bits == 32 ? 16 : 32;
		else if (op != 0xf0 && op != 0xf2 && op != 0xf3 &&
		    op != 0x2e && op != 0x36 && op != 0x3e && op != 0x26 &&
		    op != 0x64 && op != 0x65)
			break;
		s.rexw = 0;
		s.i++;
	}
	if (s.rexw)
		s.opsz16 = 0;
	s.i++;
	if ((op == 0xc4 || op == 0xc5 || op == 0x62) &&
	    (bits == 64 || (need(&s, 1) && (p[s.i] & 0xc0) == 0xc0)))
		return ild_vex(&s, op, o);
	if (op == 0x0f) {
		rc = ild_map2(&s, ip, o);
		goto out;
	}
	if (op >= 0x70 && op <= 0x7f) {
		o->cls = ILD_JCC;
		rc = ild_rel(&s, 1, ip, o);
		goto out;
	}
	switch (op) {
	case 0xe0: case 0xe1: case 0xe2: case 0xe3:
		o->cls = ILD_JCC;
		rc = ild_rel(&s, 1, ip, o);
		goto out;
	case 0xe8:
		o->cls = ILD_CALL;
		rc = ild_rel(&s, bits == 64 ? 4 : zsize(&s), ip, o);
		goto out;
	case 0xe9:
		o->cls = ILD_JMP;
		rc = ild_rel(&s, bits == 64 ? 4 : zsize(&s), ip, o);
		goto out;
	case 0xeb:
		o->cls = ILD_JMP;
		rc = ild_rel(&s, 1, ip, o);
		goto out;
	case 0xc3: o->cls = ILD_RET; goto out;
	case 0xc2: o->cls = ILD_RET; rc = ild_imm(&s, 2); goto out;
	case 0xcb: o->cls = ILD_FAR; goto out;
	case 0xca: o->cls = ILD_FAR; rc = ild_imm(&s, 2); goto out;
	case 0xcc: case 0xce: case 0xf1: o->cls = ILD_INT; goto out;
	case 0xcd: o->cls = ILD_INT; rc = ild_imm(&s, 1); goto out;
	case 0xcf: o->cls = ILD_IRET; goto out;
	case 0x9a: case 0xea:	/* far pointer: offset z + selector */
		o->cls = ILD_FAR;
		rc = ild_imm(&s, zsize(&s) + 2);
		goto out;
	default:
		break;
	}
	if (BIT(map1_modrm, op)) {
		m = ild_modrm(&s);
		if (m < 0)
			return -1;
		if (op == 0xff) {
			unsigned reg = ((unsigned)m >> 3) & 7;

			if (reg == 2)
				o->cls = ILD_CALL;
			else if (reg == 4)
				o->cls = ILD_JMP;
			else if (reg == 3 || reg == 5)
				o->cls = ILD_FAR;
		}
		switch (op) {
		case 0x80: case 0x82: case 0x83: case 0x6b: case 0xc0:
		case 0xc1: case 0xc6:
			rc = ild_imm(&s, 1);
			break;
		case 0x81: case 0x69: case 0xc7:
			rc = ild_imm(&s, zsize(&s));
			break;
		case 0xf6:
			if ((((unsigned)m >> 3) & 7) < 2)
				rc = ild_imm(&s, 1);
			break;
		case 0xf7:
			if ((((unsigned)m >> 3) & 7) < 2)
				rc = ild_imm(&s, zsize(&s));
			break;
		default:
			break;
		}
		goto out;
	}
	switch (op) {
	case 0x04: case 0x0c: case 0x14: case 0x1c: case 0x24: case 0x2c:
	case 0x34: case 0x3c: case 0x6a: case 0xa8: case 0xcd: case 0xd4:
	case 0xd5: case 0xe4: case 0xe5: case 0xe6: case 0xe7:
		rc = ild_imm(&s, 1);
		break;
	case 0x05: case 0x0d: case 0x15: case 0x1d: case 0x25: case 0x2d:
	case 0x35: case 0x3d: case 0x68: case 0xa9:
		rc = ild_imm(&s, zsize(&s));
		break;
	case 0xa0: case 0xa1: case 0xa2: case 0xa3:
		rc = ild_imm(&s, (size_t)s.adsz / 8);
		break;
	case 0xc8:
		rc = ild_imm(&s, 3);
		break;
	default:
		if (op >= 0xb0 && op <= 0xb7)
			rc = ild_imm(&s, 1);
		else if (op >= 0xb8 && op <= 0xbf)
			rc = ild_imm(&s, s.rexw ? 8 : zsize(&s));
		break;
	}
out:
	if (rc < 0)
		return -1;
	o->len = (uint8_t)s.i;
	return 0;
}
