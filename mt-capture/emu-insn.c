/* SPDX-License-Identifier: MIT */
/*
 * Instruction classification with capstone and the per-process cache of
 * classified instructions (see emu-insn.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <capstone/capstone.h>

#include "emu-insn.h"
#include "err.h"

#define CACHE_BITS	16		/* 64 Ki entries, direct mapped */
#define CACHE_SIZE	(1u << CACHE_BITS)
#define MAX_INSN	15		/* longest x86 instruction */

struct slot {
	uint64_t ip;			/* 0: empty */
	struct mt_emu_insn insn;
};

struct mt_emu_code {
	pid_t pid;			/* the process */
	csh cs;				/* capstone handle, detail on */
	cs_insn *ci;			/* capstone's scratch instruction */
	mt_emu_fix_fn fix;		/* probe byte fix-up, or NULL */
	void *fix_ctx;
	struct slot *slots;		/* CACHE_SIZE entries */
};

static const char *const cls_names[] = {
	[MT_EMU_I_OTHER] = "other",
	[MT_EMU_I_JCC] = "jcc",
	[MT_EMU_I_JMP] = "jmp",
	[MT_EMU_I_JMP_IND] = "ijmp",
	[MT_EMU_I_CALL] = "call",
	[MT_EMU_I_CALL_IND] = "icall",
	[MT_EMU_I_RET] = "ret",
	[MT_EMU_I_SYSCALL] = "syscall",
	[MT_EMU_I_FAR] = "far",
	[MT_EMU_I_INT] = "int",
	[MT_EMU_I_BAD] = "bad",
};

const char *
mt_emu_cls_name(int cls)
{
	if (cls < 0 || (size_t)cls >= sizeof(cls_names) / sizeof(cls_names[0]))
		return "unknown";
	return cls_names[cls];
}

static int
open_cs(csh *cs, cs_insn **ci)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, cs) != CS_ERR_OK)
		return -MT_E_NOMEM;
	cs_option(*cs, CS_OPT_DETAIL, CS_OPT_ON);
	*ci = cs_malloc(*cs);
	if (*ci == NULL) {
		cs_close(cs);
		return -MT_E_NOMEM;
	}
	return 0;
}

/* Is the single operand of @ci an immediate (a direct branch)? */
static int
direct_target(const cs_insn *ci, uint64_t *target)
{
	const cs_x86 *x = &ci->detail->x86;

	if (x->op_count >= 1 && x->operands[0].type == X86_OP_IMM) {
		*target = (uint64_t)x->operands[0].imm;
		return 1;
	}
	return 0;
}

/*
 * Capstone 4 does not know the CET shadow-stack instructions (rdssp,
 * incssp, saveprevssp, setssbsy: 0f 1e, 0f ae, 0f 01 with a register
 * ModRM), which libgcc's unwinder executes; on a CPU without CET they are
 * NOPs.  Returns their length, or 0 for anything else.
 */
static int
cet_len(const uint8_t *code, size_t n)
{
	size_t i = 0;

	while (i < n && i < MAX_INSN && (code[i] == 0x66 || code[i] == 0xf2 ||
	    code[i] == 0xf3 || code[i] == 0x2e || code[i] == 0x36 ||
	    code[i] == 0x3e || code[i] == 0x26 || code[i] == 0x64 ||
	    code[i] == 0x65))
		i++;
	if (i < n && (code[i] & 0xf0) == 0x40)
		i++;
	if (i + 3 > n || code[i] != 0x0f)
		return 0;
	if (code[i + 1] != 0x1e && code[i + 1] != 0xae && code[i + 1] != 0x01)
		return 0;
	if ((code[i + 2] & 0xc0) != 0xc0)
		return 0;
	return (int)(i + 3);
}

/* Bytes of a ModRM operand starting at @p (@n bytes left), or 0. */
static size_t
modrm_len(const uint8_t *p, size_t n)
{
	unsigned mod, rm;
	size_t len = 1;

	if (n < 1)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (n < 2)
			return 0;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4;	/* RIP-relative */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len <= n ? len : 0;
}

/*
 * Length of a VEX (c4, c5) or EVEX (62) encoded instruction, which
 * capstone 4 fails on for many AVX-512 and mask-register forms that
 * glibc's string functions use.  None of them transfers control, so only
 * the length matters.  Returns 0 when @code is not such an instruction.
 */
static size_t
vex_len(const uint8_t *code, size_t n)
{
	size_t i = 0, m;
	unsigned map, op;
	int imm;

	while (i < n && (code[i] == 0x67 || code[i] == 0x2e ||
	    code[i] == 0x36 || code[i] == 0x3e || code[i] == 0x26 ||
	    code[i] == 0x64 || code[i] == 0x65))
		i++;
	if (i + 3 > n)
		return 0;
	switch (code[i]) {
	case 0xc5:
		map = 1;
		i += 2;
		break;
	case 0xc4:
		map = code[i + 1] & 0x1f;
		i += 3;
		break;
	case 0x62:
		map = code[i + 1] & 0x3;
		i += 4;
		break;
	default:
		return 0;
	}
	if (i + 1 > n || map < 1 || map > 3)
		return 0;
	op = code[i++];
	m = modrm_len(code + i, n - i);
	if (m == 0)
		return 0;
	i += m;
	imm = map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) ||
	    op == 0xc2 || op == 0xc4 || op == 0xc5 || op == 0xc6));
	i += imm ? 1 : 0;
	return i <= n && i <= MAX_INSN ? i : 0;
}

static int
classify_with(csh cs, cs_insn *ci, const uint8_t *code, size_t n,
    uint64_t ip, struct mt_emu_insn *out)
{
	const uint8_t *p = code;
	uint64_t addr = ip, t = 0;
	int direct;

	memset(out, 0, sizeof(*out));
	out->ip = ip;
	if (!cs_disasm_iter(cs, &p, &n, &addr, ci)) {
		int len = cet_len(code, n);

		if (len == 0)
			len = (int)vex_len(code, n);

		out->cls = len > 0 ? MT_EMU_I_OTHER : MT_EMU_I_BAD;
		out->len = len > 0 ? (uint8_t)len : 1;
		return len > 0 ? 0 : -MT_E_CORRUPT;
	}
	out->len = (uint8_t)ci->size;
	direct = direct_target(ci, &t);
	switch (ci->id) {
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JRCXZ:
	case X86_INS_JE: case X86_INS_JGE: case X86_INS_JG: case X86_INS_JLE:
	case X86_INS_JL: case X86_INS_JNE: case X86_INS_JNO: case X86_INS_JNP:
	case X86_INS_JNS: case X86_INS_JO: case X86_INS_JP: case X86_INS_JS:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		out->cls = MT_EMU_I_JCC;
		out->target = t;
		break;
	case X86_INS_JMP:
		out->cls = direct ? MT_EMU_I_JMP : MT_EMU_I_JMP_IND;
		out->target = direct ? t : 0;
		break;
	case X86_INS_CALL:
		out->cls = direct ? MT_EMU_I_CALL : MT_EMU_I_CALL_IND;
		out->target = direct ? t : 0;
		/* PIC "call next; pop": hardware does not push it on the
		 * return-compression stack (perf's
		 * tools/perf/util/intel-pt-decoder/intel-pt-decoder.c,
		 * "Zero-length calls are excluded"). */
		out->disp0 = direct && t == ip + ci->size;
		break;
	case X86_INS_RET:
		out->cls = MT_EMU_I_RET;
		break;
	case X86_INS_SYSCALL: case X86_INS_SYSENTER:
		out->cls = MT_EMU_I_SYSCALL;
		break;
	case X86_INS_INT:
		/* int 0x80 is the legacy system call gate. */
		out->cls = (ci->size == 2 && code[1] == 0x80) ?
		    MT_EMU_I_SYSCALL : MT_EMU_I_INT;
		break;
	case X86_INS_INT1: case X86_INS_INT3: case X86_INS_INTO:
		out->cls = MT_EMU_I_INT;
		break;
	case X86_INS_LJMP: case X86_INS_LCALL: case X86_INS_RETF:
	case X86_INS_RETFQ: case X86_INS_IRET: case X86_INS_IRETD:
	case X86_INS_IRETQ: case X86_INS_SYSEXIT: case X86_INS_SYSRET:
		out->cls = MT_EMU_I_FAR;
		break;
	default:
		out->cls = MT_EMU_I_OTHER;
		out->rep = ci->detail->x86.prefix[0] == X86_PREFIX_REP ||
		    ci->detail->x86.prefix[0] == X86_PREFIX_REPNE;
		break;
	}
	return 0;
}

int
mt_emu_classify(const uint8_t *code, size_t n, uint64_t ip,
    struct mt_emu_insn *out)
{
	cs_insn *ci;
	csh cs;
	int rc;

	if ((rc = open_cs(&cs, &ci)) < 0)
		return rc;
	rc = classify_with(cs, ci, code, n, ip, out);
	cs_free(ci, 1);
	cs_close(&cs);
	return rc;
}

int
mt_emu_code_classify(struct mt_emu_code *c, const uint8_t *code, size_t n,
    uint64_t ip, struct mt_emu_insn *out)
{
	return classify_with(c->cs, c->ci, code, n, ip, out);
}

struct mt_emu_code *
mt_emu_code_new(pid_t pid, mt_emu_fix_fn fix, void *ctx)
{
	struct mt_emu_code *c;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->slots = calloc(CACHE_SIZE, sizeof(*c->slots));
	if (c->slots == NULL || open_cs(&c->cs, &c->ci) < 0) {
		free(c->slots);
		free(c);
		return NULL;
	}
	c->pid = pid;
	c->fix = fix;
	c->fix_ctx = ctx;
	return c;
}

void
mt_emu_code_free(struct mt_emu_code *c)
{
	if (c == NULL)
		return;
	cs_free(c->ci, 1);
	cs_close(&c->cs);
	free(c->slots);
	free(c);
}

void
mt_emu_code_flush(struct mt_emu_code *c)
{
	memset(c->slots, 0, CACHE_SIZE * sizeof(*c->slots));
}

/* Read up to MAX_INSN bytes at @ip, stopping at an unreadable page. */
static ssize_t
read_code(pid_t tid, uint64_t ip, uint8_t *buf)
{
	struct iovec local, remote;
	uint64_t page_end = (ip | 0xfff) + 1;
	size_t first = page_end - ip < MAX_INSN ? page_end - ip : MAX_INSN;
	ssize_t n, m;

	local.iov_base = buf;
	local.iov_len = first;
	remote.iov_base = (void *)(uintptr_t)ip;
	remote.iov_len = first;
	n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n <= 0 || (size_t)n < first || first == MAX_INSN)
		return n;
	/* The instruction may continue on the next page. */
	local.iov_base = buf + first;
	local.iov_len = MAX_INSN - first;
	remote.iov_base = (void *)(uintptr_t)page_end;
	remote.iov_len = MAX_INSN - first;
	m = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	return m > 0 ? n + m : n;
}

int
mt_emu_code_read(struct mt_emu_code *c, pid_t tid, uint64_t ip,
    struct mt_emu_insn *out, uint8_t *bytes)
{
	struct slot *s;
	uint8_t buf[MAX_INSN], mem0;
	ssize_t n;
	int rc;

	s = &c->slots[(ip ^ (ip >> CACHE_BITS)) & (CACHE_SIZE - 1)];
	n = read_code(tid, ip, buf);
	if (n <= 0)
		return -MT_E_IO;
	mem0 = buf[0];
	if (c->fix != NULL)
		c->fix(c->fix_ctx, c->pid, ip, buf, (size_t)n);
	rc = classify_with(c->cs, c->ci, buf, (size_t)n, ip, out);
	if (rc < 0)
		return rc;
	out->probed = mem0 == 0xcc && buf[0] != 0xcc;
	s->ip = ip;
	s->insn = *out;
	if (bytes != NULL)
		memcpy(bytes, buf, out->len < n ? out->len : (size_t)n);
	return 0;
}

int
mt_emu_code_get(struct mt_emu_code *c, pid_t tid, uint64_t ip,
    struct mt_emu_insn *out)
{
	struct slot *s;

	s = &c->slots[(ip ^ (ip >> CACHE_BITS)) & (CACHE_SIZE - 1)];
	if (s->ip == ip && ip != 0) {
		*out = s->insn;
		return 0;
	}
	return mt_emu_code_read(c, tid, ip, out, NULL);
}
