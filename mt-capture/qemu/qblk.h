/* SPDX-License-Identifier: MIT */
/*
 * The plugin's block records (struct qb_blk), one per distinct block of
 * guest code, whatever the number of times QEMU translates it.
 *
 * QEMU translates the same code again after it drops its translations: a
 * page made writable (mprotect, a JIT rewriting its code), a full
 * translation cache, an exception inside a block (the instruction is then
 * translated alone).  Each translation hands the exec callback a pointer
 * to a record; a retranslation of the same code gets the record it had,
 * so the records grow with the code translated, not with the number of
 * translations.  Records are never changed nor freed once made: another
 * thread may still be running an older translation that points to one
 * (docs/emulate.md, "Memory").
 */
#ifndef MT_QEMU_QBLK_H
#define MT_QEMU_QBLK_H

#include <stddef.h>
#include <stdint.h>

/* A translated block, as the exec callback sees it (in a 64-byte cache
 * line of its own). */
struct qb_blk {
	uint64_t pc;		/* first instruction */
	uint64_t last;		/* last instruction */
	uint64_t fall;		/* the address after it */
	uint64_t target;	/* direct branch target, else 0 */
	uint32_t ninsns;	/* instructions */
	uint8_t len;		/* bytes of the last instruction */
	uint8_t cls;		/* enum mt_emu_cls of the last one */
	uint8_t rep;		/* it has a rep prefix */
	uint8_t disp0;		/* a call to the next instruction */
	uint64_t since;		/* JIT code: the clock from which its bytes
				 * are the code there (qcode.h), else 0 */
};

/*
 * The record for block @b, whose @len instruction bytes are @code, JIT
 * code when @jit (outside file mappings): the one made before for a
 * block equal in every field, with the same bytes and @jit, else a new
 * copy of @b (*@made set to 1, else 0).  NULL when out of memory.
 * Thread-safe (a mutex: translation time only).
 */
const struct qb_blk *qb_intern(const struct qb_blk *b, const uint8_t *code,
    size_t len, int jit, int *made);

/* Records made so far. */
uint64_t qb_count(void);

#endif /* MT_QEMU_QBLK_H */
