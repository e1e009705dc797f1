/* SPDX-License-Identifier: MIT */
/*
 * Instruction classification for the software PT backend: what kind of
 * control-flow transfer an x86-64 instruction is, decided by capstone, and
 * a per-process cache of classified instructions read from the target's
 * memory (process_vm_readv).  Only this module includes capstone.
 *
 * Code bytes are read from memory, not files, so the vDSO and JIT code
 * work; a fix-up callback restores bytes that uprobes replaced by int3
 * (mt's own and other tools', see emu-step.c), and marks them probed.
 * The cache must be flushed when mappings change (mmap, munmap, mprotect,
 * execve): the stepper does it after those system calls.
 */
#ifndef MT_EMU_INSN_H
#define MT_EMU_INSN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What an instruction does to the flow of control. */
enum mt_emu_cls {
	MT_EMU_I_OTHER = 0,	/* falls through to the next instruction */
	MT_EMU_I_JCC,		/* conditional: Jcc, JrCXZ, LOOPcc */
	MT_EMU_I_JMP,		/* direct near jump */
	MT_EMU_I_JMP_IND,	/* indirect near jump */
	MT_EMU_I_CALL,		/* direct near call */
	MT_EMU_I_CALL_IND,	/* indirect near call */
	MT_EMU_I_RET,		/* near return */
	MT_EMU_I_SYSCALL,	/* syscall, sysenter, int 0x80 */
	MT_EMU_I_FAR,		/* far jump/call/return, iret, sysret */
	MT_EMU_I_INT,		/* int n, int3, into, int1 */
	MT_EMU_I_BAD,		/* not decodable */
};

struct mt_emu_insn {
	uint64_t ip;		/* address */
	uint64_t target;	/* direct branches: the target, else 0 */
	uint8_t len;		/* bytes */
	uint8_t cls;		/* enum mt_emu_cls */
	uint8_t rep;		/* has a rep prefix: may retire in steps */
	uint8_t disp0;		/* a call to the next instruction */
	uint8_t probed;		/* memory held an int3 over its first
				 * byte, which the fix-up undid (a uprobe:
				 * the kernel runs the instruction) */
};

/*
 * Classify the instruction in @code (@n bytes, at address @ip).
 * Returns 0, or -MT_E_CORRUPT when capstone cannot decode it (then
 * out->cls is MT_EMU_I_BAD and out->len 1), -MT_E_NOMEM.
 */
int mt_emu_classify(const uint8_t *code, size_t n, uint64_t ip,
    struct mt_emu_insn *out);
/* Name of a class for ground truth and messages, e.g. "call". */
const char *mt_emu_cls_name(int cls);

/* Called on bytes read from @pid at @addr to undo probe int3 bytes. */
typedef void (*mt_emu_fix_fn)(void *ctx, pid_t pid, uint64_t addr,
    uint8_t *buf, size_t len);

struct mt_emu_code;

/* A cache for process @pid; @fix (may be NULL) with @ctx. */
struct mt_emu_code *mt_emu_code_new(pid_t pid, mt_emu_fix_fn fix, void *ctx);
void mt_emu_code_free(struct mt_emu_code *c);
/*
 * The instruction at @ip, read through thread @tid (any thread of the
 * process).  Returns 0, -MT_E_IO when the memory cannot be read, or
 * -MT_E_CORRUPT (undecodable bytes; out->cls MT_EMU_I_BAD).
 */
int mt_emu_code_get(struct mt_emu_code *c, pid_t tid, uint64_t ip,
    struct mt_emu_insn *out);
/*
 * mt_emu_code_get past the cache: the bytes are read now (memory that
 * may have been rewritten since, JIT code) and cached; the instruction's
 * out->len bytes, as classified (probe bytes undone), go to @bytes (room
 * for 15; may be NULL).
 */
int mt_emu_code_read(struct mt_emu_code *c, pid_t tid, uint64_t ip,
    struct mt_emu_insn *out, uint8_t *bytes);
/* mt_emu_classify with the capstone handle of @c (no memory read, no
 * cache): for callers that hold the code bytes themselves. */
int mt_emu_code_classify(struct mt_emu_code *c, const uint8_t *code,
    size_t n, uint64_t ip, struct mt_emu_insn *out);
/* Forget every cached instruction (mappings changed). */
void mt_emu_code_flush(struct mt_emu_code *c);

#endif /* MT_EMU_INSN_H */
