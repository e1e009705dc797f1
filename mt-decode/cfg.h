/* SPDX-License-Identifier: MIT */
/*
 * A block decoder over a packet layer (mt's pq.h, or libipt's query
 * decoder) and mt's control-flow cache (the walks of walk.h).
 *
 * libipt's block decoder pays for every block: an event check, a section
 * lookup, its block cache, a query.  This one answers the same calls
 * (sync, next block, event, offset) with the same results, so decode.c
 * runs its loop unchanged on either: the packet layer gives the TNT
 * bits, TIPs, events and PSB+, and what happens between
 * two queries comes from the walk cache, which knows each block's direct
 * calls and jumps, its length and the branch that ends it.
 *
 * Its results equal libipt 2.0.5's block decoder's where they decide
 * what the event stream holds (the facts it relies on are listed in
 * cfg.c): where an event binds, the return-compression stack, the resume
 * IP after a disable.  It does not end blocks where libipt does when
 * that does not change the stream, so its block count differs.  With
 * perf time it would: libipt ends a block after a near direct call while
 * it fills its own block cache (on a first visit), before the next
 * query, and the call gets the time from before that query.  So with
 * perf time the caller gives it a model of libipt's block cache
 * (fill.h), and it ends its blocks where libipt's fill ends them; with
 * relative time (instruction counts, which block ends do not move) it
 * needs none.
 *
 * What it does not do it refuses with CFG_ABORT, and the caller decodes
 * the buffer again with libipt's block decoder: decode errors (their
 * offsets are libipt's), paging, VMCS and PTWRITE events that bind to instructions,
 * a TIP with a suppressed IP, code not in exactly one section of the
 * image, an event IP inside straight-line code, errata workarounds.
 */
#ifndef MT_DECODE_CFG_H
#define MT_DECODE_CFG_H

#include <stdint.h>

struct pt_block;
struct pt_config;
struct pt_event;
struct image_set;
struct walk_cache;

/* The decoder cannot answer: decode the buffer with libipt instead. */
#define CFG_ABORT	(-100000)

struct cfg_dec;

/*
 * A decoder for the buffer @cfg describes (kept by pointer), reading code
 * through @is's sections of process @pid and the walks of @wc (neither
 * owned), its packets through mt's query layer (pq.h) if @own, else
 * through libipt's query decoder.  With @fill (not owned; perf time),
 * blocks end where libipt's block decoder with the block cache @fill
 * models would end them, and the model follows the blocks decoded
 * (cfg_run then leaves every block to cfg_next).  Returns NULL on
 * allocation failure.
 */
struct fill;
struct cfg_dec *cfg_new(const struct pt_config *cfg, struct image_set *is,
    uint32_t pid, struct walk_cache *wc, int own, struct fill *fill);
void cfg_free(struct cfg_dec *d);

/* As pt_blk_sync_forward, pt_blk_sync_set, pt_blk_next, pt_blk_event,
 * pt_blk_get_offset and pt_blk_get_sync_offset, or CFG_ABORT. */
int cfg_sync_forward(struct cfg_dec *d);
int cfg_sync_set(struct cfg_dec *d, uint64_t off);
int cfg_next(struct cfg_dec *d, struct pt_block *blk);
int cfg_event(struct cfg_dec *d, struct pt_event *ev);

/*
 * The fast path (no pt_block): from the current IP, while each walk ends
 * in a branch that needs trace and no event comes between, call @fn with
 * the walk (valid during the call; a block of exactly its instructions,
 * the branch last) and take the branch, the TNT bits from the query
 * layer's word without a query each.  Returns the status cfg_next would
 * return after the last of those blocks (an error after @fn had that
 * block), or CFG_SLOW when no walk was taken: call cfg_next.
 */
#define CFG_SLOW	(-100002)
struct walk;
typedef void (*cfg_walk_fn)(void *arg, const struct walk *w);
/*
 * With paths on (cfg_paths), after a walk whose branch is conditional
 * and whose taken target stays in its function (nothing pending after
 * it), a run of @walks such walks without transitions, one a TNT bit,
 * is given in one call instead of one @fn each: @insns their
 * instructions, @last_ip the branch of the last.  The run comes from a
 * table of paths per (walk, TNT bits), each made from this decoder's
 * links (they hold as long as its image does).  A run takes only TNT
 * bits already held by the query layer (pq.h), so no packet (no timing,
 * no event) is read inside it, and the status after it is the one the
 * last bit's query would give.  MT_DECODE_NO_PATHS (decode.c) turns the
 * paths off, for comparisons.
 */
typedef void (*cfg_jump_fn)(void *arg, uint32_t walks, uint64_t insns,
    uint64_t last_ip);
int cfg_run(struct cfg_dec *d, cfg_walk_fn fn, cfg_jump_fn jump, void *arg);
/* Paths on or off (off when made; on only on mt's query layer): on only
 * where @fn would only count such walks (no --all-branches). */
void cfg_paths(struct cfg_dec *d, int on);
int cfg_get_offset(const struct cfg_dec *d, uint64_t *off);
/* As pt_blk_time: the query decoder's time (libipt's only). */
int cfg_time(const struct cfg_dec *d, uint64_t *tsc, uint32_t *lost_mtc,
    uint32_t *lost_cyc);
int cfg_get_sync_offset(const struct cfg_dec *d, uint64_t *off);

/*
 * 1 if @d gave up because the walk cache holds its bound of walks
 * (2^22, about 300 MiB; MT_DECODE_CACHE_WALKS lowers it for tests).
 */
int cfg_full(const struct cfg_dec *d);

/* 1 if @d was made with @own (mt's query layer, pq.h) and that layer
 * refused the trace: libipt's query decoder may still decode it. */
int cfg_pq_refused(const struct cfg_dec *d);

#endif /* MT_DECODE_CFG_H */
