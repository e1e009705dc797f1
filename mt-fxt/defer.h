/* SPDX-License-Identifier: MIT */
/*
 * File order for the timeline formats (FXT, JSON).  Viewers sort events by
 * timestamp and keep the file order of ties, so events that share the
 * start time of their segment must be written outer frame first.  Outer
 * inferred frames (FR_OUTER) are discovered late, so every event at a
 * segment's start time is held until the segment closes: outer inferred
 * begins go to the front (most recently discovered first, each followed
 * by its inlined frames), everything else to the back.  Memory: the events
 * at one timestamp per open segment.
 */
#ifndef MT_FXT_DEFER_H
#define MT_FXT_DEFER_H

#include <stdint.h>

struct frame;
struct sym_thread;

enum { DEFER_BEGIN = 1, DEFER_END = 2 };

/* Writes one event for real. */
typedef void (*defer_emit_fn)(void *ctx, const struct sym_thread *t,
    int kind, uint64_t ts, const struct frame *f);

struct defer;

int defer_new(struct defer **d, defer_emit_fn emit, void *ctx);
void defer_free(struct defer *d);
void defer_seg_push(struct defer *d, const struct sym_thread *t, uint64_t ts);
/* Writes what the segment held back, then closes it. */
void defer_seg_pop(struct defer *d, const struct sym_thread *t);
/* Writes the event now or holds it back. */
void defer_event(struct defer *d, const struct sym_thread *t, int kind,
    uint64_t ts, const struct frame *f);
/* -MT_E_NOMEM after a failed allocation, else 0. */
int defer_error(const struct defer *d);

#endif /* MT_FXT_DEFER_H */
