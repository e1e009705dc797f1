/* SPDX-License-Identifier: MIT */
/*
 * Instruction classification of the software PT backend (emu-insn.c):
 * each kind of control transfer, the displacement-0 call, rep prefixes,
 * CET instructions capstone 4 does not know, and undecodable bytes.
 */
#include <stdint.h>
#include <string.h>

#include "err.h"
#include "tap.h"
#include "../../mt-capture/emu-insn.h"

struct tcase {
	const char *name;
	uint8_t code[15];
	size_t n;
	int cls;
	unsigned len;
	uint64_t target;	/* at ip 0x1000 */
};

static const struct tcase cases[] = {
	{ "nop", { 0x90 }, 1, MT_EMU_I_OTHER, 1, 0 },
	{ "je +0x10", { 0x74, 0x10 }, 2, MT_EMU_I_JCC, 2, 0x1012 },
	{ "jne rel32", { 0x0f, 0x85, 0, 1, 0, 0 }, 6, MT_EMU_I_JCC, 6, 0x1106 },
	{ "jrcxz", { 0xe3, 0x05 }, 2, MT_EMU_I_JCC, 2, 0x1007 },
	{ "loop", { 0xe2, 0xfe }, 2, MT_EMU_I_JCC, 2, 0x1000 },
	{ "jmp rel8", { 0xeb, 0x02 }, 2, MT_EMU_I_JMP, 2, 0x1004 },
	{ "jmp *%rax", { 0xff, 0xe0 }, 2, MT_EMU_I_JMP_IND, 2, 0 },
	{ "notrack jmp *(%rax,%rdx,8)", { 0x3e, 0xff, 0x24, 0xd0 }, 4,
	    MT_EMU_I_JMP_IND, 4, 0 },
	{ "call rel32", { 0xe8, 0x10, 0, 0, 0 }, 5, MT_EMU_I_CALL, 5, 0x1015 },
	{ "call *%rdx", { 0xff, 0xd2 }, 2, MT_EMU_I_CALL_IND, 2, 0 },
	{ "call *0x8(%rax)", { 0xff, 0x50, 0x08 }, 3, MT_EMU_I_CALL_IND, 3,
	    0 },
	{ "ret", { 0xc3 }, 1, MT_EMU_I_RET, 1, 0 },
	{ "ret $8", { 0xc2, 8, 0 }, 3, MT_EMU_I_RET, 3, 0 },
	{ "repz ret", { 0xf3, 0xc3 }, 2, MT_EMU_I_RET, 2, 0 },
	{ "bnd jmp", { 0xf2, 0xe9, 0, 0, 0, 0 }, 6, MT_EMU_I_JMP, 6, 0x1006 },
	{ "syscall", { 0x0f, 0x05 }, 2, MT_EMU_I_SYSCALL, 2, 0 },
	{ "int $0x80", { 0xcd, 0x80 }, 2, MT_EMU_I_SYSCALL, 2, 0 },
	{ "int3", { 0xcc }, 1, MT_EMU_I_INT, 1, 0 },
	{ "iretq", { 0x48, 0xcf }, 2, MT_EMU_I_FAR, 2, 0 },
	{ "lret", { 0xcb }, 1, MT_EMU_I_FAR, 1, 0 },
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, MT_EMU_I_OTHER, 4, 0 },
	{ "rdsspq %rax", { 0xf3, 0x48, 0x0f, 0x1e, 0xc8 }, 5, MT_EMU_I_OTHER,
	    5, 0 },
	{ "vpcmpb $0,(%rdi),%ymm0,%k0 (EVEX)", { 0x62, 0xf3, 0x7d, 0x20, 0x3f,
	    0x07, 0x00 }, 7, MT_EMU_I_OTHER, 7, 0 },
	{ "kmovd %k0,%eax (VEX)", { 0xc5, 0xfb, 0x93, 0xc0 }, 4,
	    MT_EMU_I_OTHER, 4, 0 },
	{ "vpcmpb $0,0x20(%rsi),%ymm1,%k1 (EVEX disp8)", { 0x62, 0xf3, 0x75,
	    0x20, 0x3f, 0x4e, 0x01, 0x00 }, 8, MT_EMU_I_OTHER, 8, 0 },
	{ "incsspq %rcx", { 0xf3, 0x48, 0x0f, 0xae, 0xe9 }, 5,
	    MT_EMU_I_OTHER, 5, 0 },
};

static void
classify_table(void)
{
	struct mt_emu_insn in;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *c = &cases[i];

		CHECK(mt_emu_classify(c->code, c->n, 0x1000, &in) == 0);
		if (in.cls != c->cls || in.len != c->len ||
		    in.target != c->target) {
			printf("# %s: cls %s len %u target 0x%llx\n", c->name,
			    mt_emu_cls_name(in.cls), in.len,
			    (unsigned long long)in.target);
			CHECK(0);
		}
	}
}

static void
classify_call_next_is_disp0(void)
{
	const uint8_t call0[] = { 0xe8, 0, 0, 0, 0 };
	const uint8_t call1[] = { 0xe8, 1, 0, 0, 0 };
	struct mt_emu_insn in;

	CHECK(mt_emu_classify(call0, sizeof(call0), 0x1000, &in) == 0);
	CHECK(in.disp0 == 1);
	CHECK(mt_emu_classify(call1, sizeof(call1), 0x1000, &in) == 0);
	CHECK(in.disp0 == 0);
}

static void
classify_rep_string(void)
{
	const uint8_t movsb[] = { 0xf3, 0xa4 };
	const uint8_t mov[] = { 0x48, 0x89, 0xc2 };
	struct mt_emu_insn in;

	CHECK(mt_emu_classify(movsb, sizeof(movsb), 0x1000, &in) == 0);
	CHECK(in.cls == MT_EMU_I_OTHER && in.rep == 1 && in.len == 2);
	CHECK(mt_emu_classify(mov, sizeof(mov), 0x1000, &in) == 0);
	CHECK(in.rep == 0);
}

static void
classify_truncated_is_bad(void)
{
	const uint8_t half[] = { 0xe8, 0x10 };
	struct mt_emu_insn in;

	CHECK(mt_emu_classify(half, sizeof(half), 0x1000, &in) ==
	    -MT_E_CORRUPT);
	CHECK(in.cls == MT_EMU_I_BAD);
	CHECK_STR(mt_emu_cls_name(MT_EMU_I_CALL_IND), "icall");
	CHECK_STR(mt_emu_cls_name(99), "unknown");
}

int
main(void)
{
	TEST(classify_table);
	TEST(classify_call_next_is_disp0);
	TEST(classify_rep_string);
	TEST(classify_truncated_is_bad);
	return tap_done();
}
