/* SPDX-License-Identifier: MIT */
/*
 * The view between the reconstruction and the output format: it applies
 * the filters and level-of-detail options (thread, time, --between,
 * depth, minimum duration) and Perfetto's depth limit, and passes what
 * remains to the output hooks (out.h).  Memory per thread: the open frames.
 */
#ifndef MT_FXT_VIEW_H
#define MT_FXT_VIEW_H

#include <stdint.h>

struct fxt_opts;
struct fxt_stats;
struct frame;
struct out;
struct sym;
struct sym_thread;

struct view;

int view_new(struct view **v, const struct fxt_opts *o, struct out *out,
    struct sym *sym, struct fxt_stats *st);
void view_free(struct view *v);

/* A segment (thread window or kernel entry) opens or closes at @ts. */
void view_seg_push(struct view *v, const struct sym_thread *t, uint64_t ts);
void view_seg_pop(struct view *v, const struct sym_thread *t, uint64_t ts);
/* A frame begins on top of @t's stack (see out.h for FR_INFERRED). */
void view_begin(struct view *v, const struct sym_thread *t, uint64_t ts,
    const struct frame *f);
/* The innermost frame of @t ends. */
void view_end(struct view *v, const struct sym_thread *t, uint64_t ts);
void view_trigger(struct view *v, const struct sym_thread *t, uint64_t ts,
    uint64_t ip, uint32_t what);
/* Frames shown and still open, over all threads. */
uint64_t view_open_frames(const struct view *v);
/*
 * Split the output: end every shown frame (each thread at its latest
 * time), call @swap(@ctx) to start the next file, then show the open
 * frames again, as inferred, in the new file.  Returns @swap's result.
 */
int view_split(struct view *v, int (*swap)(void *ctx), void *ctx);
/* The sticky error of the view (-MT_E_NOMEM), 0 if none. */
int view_error(const struct view *v);

#endif /* MT_FXT_VIEW_H */
