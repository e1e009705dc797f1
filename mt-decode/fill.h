/* SPDX-License-Identifier: MIT */
/*
 * libipt 2.0.5's block cache, modelled, for the cached decoder (cfg.h)
 * on traces with perf time.
 *
 * With perf time a block's end decides the time of the records in it:
 * decode.c reads libipt's time after each block, and a call record gets
 * the time from before the next query when its block ends at the call,
 * from after it when the block goes on.  libipt's block decoder ends
 * blocks where its per-section block cache says (pt_block_decoder.c):
 * while it fills that cache (code decoded for the first time, one entry
 * per instruction), a block ends after a direct near call, after a
 * direct jump backwards, before an instruction that already has an
 * entry, and after 1024 instructions filled in a row; an instruction
 * that has an entry never ends a block (the entries lead on to the next
 * branch that needs trace).  Moving to an event's IP fills nothing.
 *
 * The model is the set of instructions holding an entry, by libipt's
 * section (a file range: one section, so one cache, for all the
 * addresses it is mapped at, image_set_section_base) and offset in it.
 * It equals libipt's cache only when it has seen every block libipt
 * decoded with that cache: its owner keeps one per cache (a fresh image
 * view, or the run's images while no buffer went to libipt).  [uprobes]
 * slots are a section of their own each time (xol.c): never cached.
 */
#ifndef MT_DECODE_FILL_H
#define MT_DECODE_FILL_H

#include <stddef.h>
#include <stdint.h>

struct image_set;
struct walk;

struct fill;

/*
 * An empty model for the sections of @is (not owned); NULL: no memory.
 * With MT_DECODE_NO_FILL set in the environment it ends no block (for
 * comparisons: the stream then differs from libipt's on timed traces).
 */
struct fill *fill_new(struct image_set *is);
void fill_free(struct fill *f);

/* Where libipt's fill ends a block inside a walk. */
struct fill_cut {
	uint32_t at;		/* index of its last instruction in the walk */
	uint64_t last;		/* that instruction's address */
	uint64_t next;		/* the address after it (a call's target) */
};

/*
 * Walk @w (index @wi of its cache; section @isid of process @pid, mapped
 * at [@lo, @hi), in @bits-bit mode) as libipt's fill would after *@run
 * instructions filled in a row, adding the entries it makes.  Returns 1
 * with *@cut where the fill ends the block (the instructions after it
 * are not walked), 0 when it does not end it inside the walk (*@run
 * then counts on), -1 when the code cannot be read or no memory.
 */
int fill_walk(struct fill *f, uint32_t pid, int isid, uint64_t lo,
    uint64_t hi, int bits, const struct walk *w, size_t wi, uint32_t *run,
    struct fill_cut *cut);

#endif /* MT_DECODE_FILL_H */
