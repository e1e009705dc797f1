/* SPDX-License-Identifier: MIT */
/*
 * The plugin's ground-truth logs (--ground-truth): per thread, DIR/gt.N,
 * one line "TID KIND 0xFROM 0xTO" per block change it turned into
 * packets (qt_gt, qthread.h), all threads together at most the config's
 * ground-truth-max bytes (--ground-truth-max).
 *
 * Each line claims its bytes from ctl's gt_bytes, shared by every thread,
 * before it is written: the first that would pass the cap is dropped,
 * sets ctl's gt_full (mt-capture says so) and closes its thread's log,
 * and so does every later line of every thread, since the count only
 * grows.  Each thread's log is so the start of what it ran, in whole
 * lines.  A thread without a log goes back to the fast path; its packets
 * are the same either way.
 */
#ifndef MT_QEMU_QGT_H
#define MT_QEMU_QGT_H

#include <stdint.h>

struct mtq_ctl;
struct vst;

/* The logs are DIR/gt.N, counted in @ctl's gt_bytes, at most @max bytes
 * in all. */
void qg_init(const char *dir, struct mtq_ctl *ctl, uint64_t max);

/* Open @v's log, DIR/gt.@idx (v->gt; NULL when it cannot be made). */
void qg_open(struct vst *v, int idx);

/* Close @v's log: written to its file (@drop: its buffered lines
 * dropped, for the child of fork, whose parent writes them). */
void qg_close(struct vst *v, int drop);

#endif /* MT_QEMU_QGT_H */
