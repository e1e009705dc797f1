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
 * newest version whose time is at most t (docs/emulate.md).  Translations
 * are serialized by the caller (qmaps.c's lock).
 */
#ifndef MT_QEMU_QCODE_H
#define MT_QEMU_QCODE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The @len bytes at @code were translated at guest address @vaddr (@len
 * at most MTQ_CODE_MAX).  @version is called once when they are a new
 * version, and returns its time.  Returns the time of the block (above),
 * or 0 also when out of memory (the bytes are then not remembered: the
 * next block there is compared with what was known before).
 */
uint64_t qc_block(uint64_t vaddr, const uint8_t *code, size_t len,
    uint64_t (*version)(void));

#endif /* MT_QEMU_QCODE_H */
