/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-decode/ild.c, the instruction length decoder: known
 * encodings with their lengths, classes and branch targets, and a
 * comparison with capstone's lengths over every byte offset of the code
 * pages of the real traces (when $MT_SHARED has them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "tap.h"
#include "../../mt-decode/ild.h"

struct icase {
	const char *bytes;	/* hex */
	int bits;
	unsigned len;
	int cls;
	uint64_t target;	/* for rel branches, at ip 0x1000 */
};

static const struct icase cases[] = {
	{ "90", 64, 1, ILD_OTHER, 0 },
	{ "e8fb0f0000", 64, 5, ILD_CALL, 0x2000 },
	{ "66e8fb0f0000", 64, 6, ILD_CALL, 0x2001 },
	{ "ffd3", 64, 2, ILD_CALL, 0 },
	{ "ff142500104000", 64, 7, ILD_CALL, 0 },
	{ "ff2500000000", 64, 6, ILD_JMP, 0 },
	{ "ebfe", 64, 2, ILD_JMP, 0x1000 },
	{ "e9f6ffffff", 64, 5, ILD_JMP, 0x0ffb },
	{ "7405", 64, 2, ILD_JCC, 0x1007 },
	{ "0f8400010000", 64, 6, ILD_JCC, 0x1106 },
	{ "e3fe", 64, 2, ILD_JCC, 0x1000 },
	{ "e2fe", 64, 2, ILD_JCC, 0x1000 },
	{ "c3", 64, 1, ILD_RET, 0 },
	{ "c20800", 64, 3, ILD_RET, 0 },
	{ "f3c3", 64, 2, ILD_RET, 0 },
	{ "0f05", 64, 2, ILD_SYSCALL, 0 },
	{ "0f34", 64, 2, ILD_SYSCALL, 0 },
	{ "480f07", 64, 3, ILD_SYSRET, 0 },
	{ "cd80", 32, 2, ILD_INT, 0 },
	{ "cc", 64, 1, ILD_INT, 0 },
	{ "48cf", 64, 2, ILD_IRET, 0 },
	{ "0f01c1", 64, 3, ILD_FAR, 0 },
	{ "0f0b", 64, 2, ILD_OTHER, 0 },	/* UD2: no branch to libipt */
	{ "0f01d9", 64, 3, ILD_OTHER, 0 },	/* VMMCALL: likewise */
	/* lengths libipt 2.0.5 takes otherwise (ild.c): refused */
	{ "0fff0511223344", 64, 0, ILD_OTHER, 0 },	/* UD0 */
	{ "0fb90511223344", 64, 0, ILD_OTHER, 0 },	/* UD1 */
	{ "0f2400", 64, 0, ILD_OTHER, 0 },		/* mov %tr */
	{ "0f200511223344", 64, 3, ILD_OTHER, 0 },	/* mov %cr0: mod 3 */
	{ "c5ffffffac", 64, 0, ILD_OTHER, 0 },		/* VEX UD0 */
	{ "c5f8800511223344", 64, 0, ILD_OTHER, 0 },	/* VEX 0F 80 */
	{ "c5f8a40511223344", 64, 0, ILD_OTHER, 0 },	/* VEX 0F A4 */
	{ "c4e07877", 64, 0, ILD_OTHER, 0 },		/* VEX map 0 */
	{ "62100184ce06c3", 64, 0, ILD_OTHER, 0 },	/* EVEX map 0 */
	{ "48b88877665544332211", 64, 10, ILD_OTHER, 0 },
	{ "b878563412", 64, 5, ILD_OTHER, 0 },
	{ "66b83412", 64, 4, ILD_OTHER, 0 },
	{ "a1efcdab8967452301", 64, 9, ILD_OTHER, 0 },
	{ "67a178563412", 64, 6, ILD_OTHER, 0 },
	{ "a178563412", 32, 5, ILD_OTHER, 0 },
	{ "488b0425785634120", 64, 8, ILD_OTHER, 0 },
	{ "8b8488785634127856341", 64, 7, ILD_OTHER, 0 },
	{ "c7442408785634120", 64, 8, ILD_OTHER, 0 },
	{ "66c74424083412", 64, 7, ILD_OTHER, 0 },
	{ "f6c101", 64, 3, ILD_OTHER, 0 },
	{ "f7c178563412", 64, 6, ILD_OTHER, 0 },
	{ "f7d1", 64, 2, ILD_OTHER, 0 },
	{ "c8100001", 64, 4, ILD_OTHER, 0 },
	{ "8b04", 64, 0, ILD_OTHER, 0 },	/* SIB missing: incomplete */
	{ "8b0530000000", 64, 6, ILD_OTHER, 0 },
	{ "8b4610", 16, 3, ILD_OTHER, 0 },
	{ "8b063412", 16, 4, ILD_OTHER, 0 },
	{ "c5f877", 64, 3, ILD_OTHER, 0 },	/* vzeroupper: no ModRM */
	{ "c5fd6f0424", 64, 5, ILD_OTHER, 0 },
	{ "c4e3790fc108", 64, 6, ILD_OTHER, 0 },	/* vpalignr imm8 */
	{ "c4e27918c0", 64, 5, ILD_OTHER, 0 },
	{ "62f17c486f4c2401", 64, 8, ILD_OTHER, 0 },	/* disp8 */
	{ "660f3a0fc108", 64, 6, ILD_OTHER, 0 },
	{ "660f3800c1", 64, 5, ILD_OTHER, 0 },
	{ "0f1f440000", 64, 5, ILD_OTHER, 0 },
	{ "660f1f840000000000", 64, 9, ILD_OTHER, 0 },
	{ "0fbae305", 64, 4, ILD_OTHER, 0 },
	{ "0fa2", 64, 2, ILD_OTHER, 0 },
	{ "c40424", 32, 3, ILD_OTHER, 0 },	/* les in 32-bit mode */
	{ "4540c3", 64, 3, ILD_RET, 0 },	/* two REX prefixes */
	/* ild_decode's fast path (REX or nothing before a one-byte
	 * opcode), and what it leaves to the general one */
	{ "4881c478563412", 64, 7, ILD_OTHER, 0 },	/* REX.W imm32 */
	{ "4883ec08", 64, 4, ILD_OTHER, 0 },
	{ "41c6450001", 64, 5, ILD_OTHER, 0 },	/* disp8, imm8 */
	{ "6a01", 64, 2, ILD_OTHER, 0 },
	{ "6878563412", 64, 5, ILD_OTHER, 0 },
	{ "c744240878563412", 32, 8, ILD_OTHER, 0 },	/* SIB, disp8 */
	{ "4155", 64, 2, ILD_OTHER, 0 },
	{ "41", 64, 0, ILD_OTHER, 0 },	/* a REX alone: incomplete */
	{ "4881c4785634", 64, 0, ILD_OTHER, 0 },	/* imm32 cut */
	{ "40", 32, 1, ILD_OTHER, 0 },	/* inc eax, not a REX */
	{ "49bb8877665544332211", 64, 10, ILD_OTHER, 0 },	/* imm64 */
	{ "41ffd3", 64, 3, ILD_CALL, 0 },
	{ "4c8b1c2566666666", 64, 8, ILD_OTHER, 0 },
	{ "81c134120000", 16, 4, ILD_OTHER, 0 },	/* 16-bit: imm16 */
};

static size_t
unhex(const char *h, uint8_t *b)
{
	size_t n = 0;

	for (; h[0] && h[1]; h += 2) {
		unsigned v;

		sscanf(h, "%2x", &v);
		b[n++] = (uint8_t)v;
	}
	return n;
}

static void
ild_known_encodings(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t b[32];
		size_t n = unhex(cases[i].bytes, b);
		struct ild_insn in;
		int rc = ild_decode(b, n, 0x1000, cases[i].bits, &in);

		if (cases[i].len == 0) {
			CHECK(rc < 0);
			continue;
		}
		if (rc < 0 || in.len != cases[i].len ||
		    in.cls != cases[i].cls ||
		    (in.rel && in.target != cases[i].target))
			printf("# case %zu (%s): rc %d len %u cls %u target "
			    "0x%llx\n", i, cases[i].bytes, rc, in.len, in.cls,
			    (unsigned long long)in.target);
		CHECK(rc == 0);
		CHECK_EQ_U64(in.len, cases[i].len);
		CHECK_EQ_U64(in.cls, cases[i].cls);
		CHECK_EQ_U64(in.rel ? in.target : 0, cases[i].target);
	}
}

static void
ild_truncated_input_fails(void)
{
	static const uint8_t b[] = { 0xe8, 0x00, 0x00, 0x00, 0x00 };
	struct ild_insn in;
	size_t n;

	for (n = 0; n < sizeof(b); n++)
		CHECK(ild_decode(b, n, 0, 64, &in) < 0);
	CHECK(ild_decode(b, sizeof(b), 0, 64, &in) == 0);
	/* 15 prefixes and an opcode exceed the architectural limit. */
	{
		uint8_t p[17];

		memset(p, 0x66, 16);
		p[16] = 0x90;
		CHECK(ild_decode(p, sizeof(p), 0, 64, &in) < 0);
	}
}

/*
 * libipt's decoder refuses a three-byte VEX (C4) whose map field is 5 or
 * more (pt_ild.c, PTI_MAP_INVALID) and so must this one: the cached
 * decoder (cfg.c) would otherwise walk on where libipt reports a bad
 * instruction (found by mutating the mruby trace: control flow into the
 * middle of an instruction, C4 08 48 89 E8).
 */
static void
ild_vex3_invalid_map_fails(void)
{
	static const uint8_t bad[] = { 0xc4, 0x08, 0x48, 0x89, 0xe8, 0x90 };
	static const uint8_t good[] = { 0xc4, 0xe2, 0x79, 0x18, 0xc0, 0x90 };
	struct ild_insn in;
	uint8_t b[6];
	unsigned m;

	CHECK(ild_decode(bad, sizeof(bad), 0, 64, &in) < 0);
	/* vbroadcastss xmm0, xmm0: map 2 */
	CHECK(ild_decode(good, sizeof(good), 0, 64, &in) == 0);
	CHECK_EQ_U64(in.len, 5);
	for (m = 0; m < 32; m++) {
		memcpy(b, good, sizeof(b));
		b[1] = (uint8_t)((b[1] & 0xe0) | m);
		/* maps 0 and 4 up: libipt 2.0.5's lengths differ (ild.c) */
		CHECK((ild_decode(b, sizeof(b), 0, 64, &in) < 0) ==
		    (m == 0 || m >= 4));
	}
}

/* Every offset of @path's pages: lengths equal capstone's. */
static void
compare_dump(const char *path, uint64_t *tried, uint64_t *bad)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	size_t n, i;
	csh h;
	cs_insn *ci;

	if (f == NULL)
		return;
	buf = malloc(1 << 20);
	n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		free(buf);
		return;
	}
	ci = cs_malloc(h);
	for (i = 0; i + 16 <= n; i++) {
		const uint8_t *code = buf + i;
		size_t size = 16;
		uint64_t addr = 0x400000 + i;
		struct ild_insn in;

		if (!cs_disasm_iter(h, &code, &size, &addr, ci))
			continue;
		/*
		 * Capstone 4 differs from the SDM on a few never-executed
		 * forms: UD0 (0F FF) and UD1 (0F B9) take a ModRM byte, and
		 * Intel CPUs ignore 66 on near branches in 64-bit mode
		 * (rel32 stays), where capstone decodes AMD's rel16.
		 */
		if (ci->bytes[0] == 0x0f && ci->size == 2 &&
		    (ci->bytes[1] == 0xff || ci->bytes[1] == 0xb9))
			continue;
		if (ci->bytes[0] == 0x66 && ci->size > 1 &&
		    (ci->bytes[1] == 0xe8 || ci->bytes[1] == 0xe9 ||
		    ci->bytes[1] == 0x0f))
			if (ci->bytes[1] != 0x0f || (ci->size > 2 &&
			    (ci->bytes[2] & 0xf0) == 0x80))
				continue;
		(*tried)++;
		if (ild_decode(buf + i, 16, 0x400000 + i, 64, &in) < 0 ||
		    in.len != ci->size) {
			if (*bad < 10) {
				size_t k;

				printf("# offset %zu: capstone %u ild %u:", i,
				    ci->size, in.len);
				for (k = 0; k < ci->size; k++)
					printf(" %02x", ci->bytes[k]);
				printf(" (%s %s)\n", ci->mnemonic, ci->op_str);
			}
			(*bad)++;
		}
	}
	cs_free(ci, 1);
	cs_close(&h);
	free(buf);
}

static void
ild_lengths_match_capstone_on_real_code(void)
{
	const char *sh = getenv("MT_SHARED");
	char p[4096];
	uint64_t tried = 0, bad = 0;

	if (sh == NULL)
		return;
	snprintf(p, sizeof(p), "%s/testdata/real-pt/mruby/dump", sh);
	compare_dump(p, &tried, &bad);
	snprintf(p, sizeof(p), "%s/testdata/real-pt/unzip/dump", sh);
	compare_dump(p, &tried, &bad);
	printf("# %llu offsets compared, %llu differ\n",
	    (unsigned long long)tried, (unsigned long long)bad);
	CHECK_EQ_U64(bad, 0);
}

int
main(void)
{
	TEST(ild_known_encodings);
	TEST(ild_truncated_input_fails);
	TEST(ild_vex3_invalid_map_fails);
	TEST(ild_lengths_match_capstone_on_real_code);
	return tap_done();
}
