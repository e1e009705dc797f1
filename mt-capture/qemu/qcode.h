/* SPDX-License-Identifier: MIT */
/*
 * The versions of the guest's JIT code (code translated outside file
 * mappings), for the plugin's DIR/code records (qemu-ipc.h).
 *
 * A JIT writes code into memory, runs it, and may write other code at the
 * same addresses later.  A decoder that takes one for the other decodes
 * other instructions, so each byte recorded here carries the time from
 * which it is the code at its address:
 *
 * - a block whose bytes all agree with those recorded before at its
 *   addresses (or were never recorded) is no new version: its time is
 *   the latest of the times of the bytes it overlaps (0 when none has
 *   one, the code there never changed);
 * - a block with a byte that differs from the one recorded at its
 *   address is a new version: it takes a new time, later than every
 *   time before, which the plugin picks so that no thread ran the old
 *   code at or after it and every thread runs the new code only after
 *   its clock has reached it (plugin.c, jit_version).
 *
 * A decoder then takes, at time t, for each address the bytes of the
 * newest version whose time is at most t (docs/emulate.md).  Calls on one
 * table are serialized by the caller (qmaps.c's lock).  The ptrace
 * backend keeps a table per traced process likewise (emu-jit.c).
 */
#ifndef MT_QEMU_QCODE_H
#define MT_QEMU_QCODE_H

#include <stddef.h>
#include <stdint.h>

/* The recorded bytes of one address space. */
struct qc;

/* Returns NULL when out of memory. */
struct qc *qc_new(void);
void qc_free(struct qc *q);
/*
 * The @len bytes at @code are code at address @vaddr (a translated
 * block, a page).  @version(@ctx) is called once when they are a new
 * version, and returns its time.  Returns the time of the block (above),
 * or 0 also when out of memory (the bytes are then not remembered: the
 * next block there is compared with what was known before).  @force:
 * they are a new version even when every byte agrees or was never
 * recorded (the ptrace backend: a mapping record of the process, dated
 * later than the bytes' version, would hide them).  *@fresh
 * (may be NULL) is set to 1 when a byte was not recorded before or
 * differed (the bytes were remembered: a caller keeping copies keeps
 * this one), else 0.
 */
uint64_t qc_block(struct qc *q, uint64_t vaddr, const uint8_t *code,
    size_t len, uint64_t (*version)(void *), void *ctx, int force,
    int *fresh);
/*
 * 1 when every one of the @len bytes at @code was recorded at @vaddr as
 * it is (no new version), with *@time the latest time of them; else 0.
 * Changes nothing.
 */
int qc_known(struct qc *q, uint64_t vaddr, const uint8_t *code, size_t len,
    uint64_t *time);

#endif /* MT_QEMU_QCODE_H */
