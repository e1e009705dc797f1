/* SPDX-License-Identifier: MIT */
/*
 * Call-stack reconstruction: turns the events of each thread (call, ret,
 * jmp, gaps, errors...) into frames that begin and end, following
 * magic-trace's policies (src/trace_writer.ml) where they hold on real
 * programs; the table in docs/formats/fxt.md gives every rule and where
 * mt differs.  Frames go to a view (view.h).  Memory: per thread, the
 * open frames, the open signal handlers, one batch of same-timestamp
 * events (at most RECON_MAX_BATCH; a longer run of equal timestamps is
 * not spread) with what it begins and ends, and for Go the parked
 * goroutines' frames and the events held while a resume is open (gor.h).
 */
#ifndef MT_FXT_RECON_H
#define MT_FXT_RECON_H

#include <stdint.h>

#define RECON_MAX_BATCH	4096

struct mt_ev;
struct sym;
struct view;
struct fxt_stats;

struct recon;

/* @sym, @v and @st must outlive the reconstruction. */
int recon_new(struct recon **r, struct sym *sym, struct view *v,
    struct fxt_stats *st);
void recon_free(struct recon *r);
/*
 * The stream's smallest time (info time-base), before the first event:
 * output times count from it.  Without it, times are absolute.  Either
 * way a thread's window starts at its first event.
 */
void recon_set_base(struct recon *r, uint64_t base);
/* One event record (MT_EV_IS_EVENT).  Returns 0 or -MT_E_NOMEM. */
int recon_event(struct recon *r, const struct mt_ev *ev);
/* End of input: close every thread at its last time. */
int recon_finish(struct recon *r);

#endif /* MT_FXT_RECON_H */
