/* SPDX-License-Identifier: MIT */
/*
 * A small x86 instruction length decoder: the length of one instruction
 * and, for control transfers, what kind it is and where a relative branch
 * goes.  It is all the walk cache (walk.h) needs, at a fraction of a full
 * disassembler's cost.  It follows the Intel SDM Vol. 2 encoding: legacy
 * prefixes, REX, VEX (C4/C5), EVEX (62), the one-, two- and three-byte
 * opcode maps, ModRM/SIB/displacement and immediate sizes.
 *
 * Does not know AMD XOP or 3DNow! beyond their lengths, does not check
 * that an opcode is valid in the mode (undefined opcodes get the length of
 * their map's usual form), and reports no operands other than branch
 * targets.
 */
#ifndef MT_DECODE_ILD_H
#define MT_DECODE_ILD_H

#include <stddef.h>
#include <stdint.h>

/* Control-transfer classes of struct ild_insn. */
enum ild_class {
	ILD_OTHER = 0,	/* not a branch */
	ILD_CALL,	/* near call: rel (target set) or indirect */
	ILD_JMP,	/* near jump: rel (target set) or indirect */
	ILD_JCC,	/* conditional: Jcc, JrCXZ, LOOPcc (target set) */
	ILD_RET,	/* near return */
	ILD_SYSCALL,	/* SYSCALL, SYSENTER */
	ILD_SYSRET,	/* SYSRET, SYSEXIT */
	ILD_INT,	/* INT n, INT3, INTO, INT1 */
	ILD_IRET,	/* IRET */
	ILD_FAR,	/* far call, jump, return; VMCALL & co. */
};

struct ild_insn {
	uint8_t len;		/* bytes, 1..15 */
	uint8_t cls;		/* enum ild_class */
	uint8_t rel;		/* 1 if target is a relative branch target */
	uint64_t target;	/* ip + len + displacement when rel */
};

/*
 * Decode the instruction at @ip from @p[0..@n) in mode @bits (16, 32 or
 * 64).  Returns 0, or -1 when @n bytes do not hold a whole instruction
 * (or it would exceed 15 bytes).
 */
int ild_decode(const uint8_t *p, size_t n, uint64_t ip, int bits,
    struct ild_insn *out);

#endif /* MT_DECODE_ILD_H */
