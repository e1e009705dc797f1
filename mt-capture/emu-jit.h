/* SPDX-License-Identifier: MIT */
/*
 * JIT code for the ptrace backend: the bytes of executable memory that
 * is no file's (anonymous, [heap], [stack]; not the vDSO, which the
 * framework copies) as the traced threads run them, each copy with the
 * time from which it is the code at its address (JIT code written over
 * other code).  The versions are kept by qemu/qcode.c, as for the qemu
 * backend; this module finds such memory in /proc/PID/maps, reads whole
 * pages when an instruction's bytes are new or changed, and keeps a copy
 * of every page version for the snapshot's BLOB chunks (docs/emulate.md).
 */
#ifndef MT_EMU_JIT_H
#define MT_EMU_JIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One page (or part of one, within a mapping) as recorded. */
struct mt_emu_jit_copy {
	uint64_t addr;		/* first byte */
	uint64_t time;		/* virtual TSC from which these bytes are
				 * the code there; 0: always */
	size_t len;
	uint8_t *data;		/* owned by the module */
};

struct mt_emu_jit;

/* For process @pid; NULL when out of memory. */
struct mt_emu_jit *mt_emu_jit_new(pid_t pid);
void mt_emu_jit_free(struct mt_emu_jit *j);
/* The process's mappings may have changed: reread them when needed. */
void mt_emu_jit_stale(struct mt_emu_jit *j);
/* 1 when @ip is in executable memory that is no file's, else 0. */
int mt_emu_jit_is(struct mt_emu_jit *j, uint64_t ip);
/*
 * The instruction at @ip, whose @len bytes @code were just read through
 * thread @tid, is about to run.  When they are not all recorded as they
 * are, the pages holding them are read and recorded (qc_block: a byte
 * differing from the recorded one makes a new version, whose time
 * @version(@ctx) gives).  *@time gets the time of the instruction's
 * version.  Returns 0, -MT_E_IO (memory unreadable) or -MT_E_NOMEM.
 */
int mt_emu_jit_insn(struct mt_emu_jit *j, pid_t tid, uint64_t ip,
    const uint8_t *code, size_t len, uint64_t (*version)(void *),
    void *ctx, uint64_t *time);
/* The copies recorded so far, in the order recorded. */
size_t mt_emu_jit_copies(const struct mt_emu_jit *j,
    const struct mt_emu_jit_copy **out);

#endif /* MT_EMU_JIT_H */
