/* SPDX-License-Identifier: MIT */
/*
 * Parallel decode (mt-decode -j N): the AUX buffers of a snapshot, and
 * large buffers cut into segments at PSBs, are decoded by N worker
 * threads at once and their event streams written in order, so the output
 * is byte for byte the sequential output.
 *
 * Each worker is a fork of the run (decode.c's dec_fork): its own walk
 * cache, its own copies of the libipt images (an image is not safe to
 * share between decoders running concurrently; the image-section cache
 * is, libipt locks it), its own counters; it writes each buffer's stream
 * into its own temporary file, which the calling thread copies to the
 * output once every earlier buffer has been copied.  A window of 2 N
 * units bounds the temporary space.  The thread records ("thread" lines
 * are written once per run, at the thread's first buffer) come out the
 * same because a worker starts each buffer knowing the threads of all the
 * buffers before it.  That needs buffers whose thread is known before
 * decoding (per-thread buffers, or per-CPU buffers without context
 * switches); per-CPU buffers with switches are decoded whole, one per
 * unit, into runs that decode.c merges by time (par_decode_runs,
 * runs.h).  Traces with MTC or CYC timing decode every unit through a
 * fresh image view and cut buffers the same whatever -j (par_timed).
 *
 * A buffer is split when it is at least two segments long: a segment is
 * the total PT size / 4 N (timed: N = 16), at least 1 MiB
 * (MT_DECODE_SEGMENT_BYTES lowers that floor, for tests), cut at the next
 * PSB after each multiple whose fresh decode reaches a block without an
 * error.  How the segments meet is
 * described at struct dec_unit; docs/decode.md has the why.
 */
#ifndef MT_DECODE_PARALLEL_H
#define MT_DECODE_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include "decode.h"

struct dec_run;
struct image_set;
struct mt_evw;
struct mt_snap;
struct pt_image;
struct runs;

/* Returned by par_decode when the buffers need the sequential loop. */
#define PAR_SEQUENTIAL 1

/*
 * Decode every buffer of @s with @jobs threads; @w (header written) is
 * flushed, then the streams are written to @out_fd.  Counters are added
 * to @st.  Progress lines go to @prog (NULL: none) from the calling
 * thread while it waits for the next buffer.  @split 0: a buffer
 * without timing packets is not cut into segments (their seams and the
 * rewrite of their relative times cost more CPU than -j 1; timed
 * buffers are cut the same whatever -j).  Returns 0, PAR_SEQUENTIAL
 * (nothing done), or what the first failing buffer returned (-MT_E_*),
 * or -MT_E_IO (output, errno set).
 */
int par_decode(struct dec_run *r, const struct mt_snap *s,
    struct image_set *is, struct decode_stats *st, int jobs, int split,
    int out_fd, struct mt_evw *w, struct decode_progress *prog);

/*
 * Per-CPU buffers with switches (runs.h): each buffer decoded whole by
 * one of @jobs threads into runs, @rs[i] for buffer i (its fd the
 * temporary file, owned by @rs[i]); the caller merges them.  Counters
 * are added to @st, in buffer order.  Returns 0, PAR_SEQUENTIAL (nothing
 * done: one buffer, or MTC/CYC timing), or the first failing buffer's
 * -MT_E_*.
 */
int par_decode_runs(struct dec_run *r, const struct mt_snap *s,
    struct image_set *is, struct decode_stats *st, int jobs, struct runs *rs,
    struct decode_progress *prog);

/*
 * Non-zero when the trace has MTC or CYC timing.  Times then change
 * between branches, and the time of an event is libipt's time at the end
 * of its block, where libipt ends a block depends on its block cache
 * (warm or cold), and that cache belongs to the sections, shared by all
 * decoders of an image set: decoded in parallel the times would vary
 * with the order of the buffers (measured: 88 of 244,732 times on a
 * 4 MiB CYC trace moved by a few ns, differently from run to run).  So
 * every unit (and with -j 1 every buffer) of a timed trace is decoded
 * through a fresh image view (image.h), and its buffers are cut into the
 * same segments whatever -j: the output is one whatever the jobs.
 */
int par_timed(const struct mt_snap *s);

/* An anonymous temporary file: O_TMPFILE in $TMPDIR or /tmp, or a memfd. */
int par_tmpfile(void);

/*
 * A worker's unit of work: a whole buffer, or a segment of one that starts
 * at a PSB.  Segment k decodes from its PSB through the start of segment
 * k + 1 until it reaches the event segment k + 1's decoder reports first
 * after its sync (same packet offset, type, IP and TSC: @next[0]), then
 * on to the next block, where the branch pending at the border goes; if
 * that block is segment k + 1's first one (same IP, decoded from the same
 * offset) it stops there, else it looks for the next segment's start.
 * Segment k + 1's output is kept from that same block on (its mark).  A
 * segment whose decode jumps past @next[0] (a resync after an error)
 * joins a later one; one that reaches the end of the buffer writes the
 * buffer's end and the segments after it are dropped.  Timed traces: the
 * first events are those past the PSB after the segment's own (@self),
 * where a fresh decoder has calibrated its cycle counter, so segment
 * k + 1 decodes on from its PSB and keeps its output from the block after
 * @self.
 */
struct dec_sig {
	uint64_t off;		/* decoder offset after the event */
	uint64_t ip;		/* its IP (first field of the variant) */
	uint64_t tsc;
	uint32_t type;		/* enum pt_event_type */
	uint32_t has_tsc;
	uint64_t blk_ip;	/* the first block starts here, */
	uint64_t blk_off;	/* decoded from this offset on */
};

struct dec_unit {
	size_t buf;		/* index of the AUX buffer */
	size_t seg;		/* segment in it, 0 the first */
	uint64_t start;		/* seg > 0: offset of its PSB */
	const struct dec_sig *self;	/* timed, seg > 0: output kept from
					 * the block after this event */
	const struct dec_sig *next;	/* first events of the later segments */
	size_t nnext;
	int fd;			/* the file the worker's writer writes to */
	struct runs *runs;	/* per-CPU runs (runs.h) of the buffer, or NULL */
};

struct dec_unit_res {
	int64_t joined;		/* later segment joined, 0 the next; -1 end */
	uint64_t stop_icount;	/* instructions before the join block */
	uint64_t mark;		/* seg > 0: offset in fd of its first block */
	int marked;		/* seg > 0 reached a block */
	struct decode_stats mark_st;	/* seg > 0: counters at the mark */
};

/*
 * Copy the record @line (@len bytes, its '\n' included) to @out (room for
 * @len + 24 bytes) with @base added to its time, the field after the
 * keyword; `thread` records and lines without a time are copied as they
 * are.  Returns the bytes written to @out.
 */
size_t par_shift_line(const char *line, size_t len, uint64_t base,
    char *out);

/* Where the output stands in the units of a buffer (par_stitch). */
struct par_stitch {
	size_t want;		/* next unit whose output is kept */
	int from_mark;		/* keep it from its mark, not its start */
	uint64_t base;		/* relative time added to its records */
};

/*
 * Unit @i (segment @seg of its buffer, with result @res, its stream
 * starting at @hdr) is done, units are taken in order: returns 1 when its
 * output is kept from its start, 2 from its mark (it was joined), with
 * *@from the offset and *@base added to relative times; 0 when it is
 * dropped (a unit before it decoded past it).  Start @ps zeroed.
 */
int par_stitch(struct par_stitch *ps, size_t i, size_t seg,
    const struct dec_unit_res *res, uint64_t hdr, uint64_t *from,
    uint64_t *base);

/* Hooks implemented in decode.c for the workers. */
struct dec_run *dec_fork(const struct dec_run *r,
    struct pt_image *(*image)(void *arg, uint32_t pid, uint64_t time,
    uint64_t *next), void *image_arg);
/* Decode @u into @w (stream of fd u->fd); threads in @seen came before. */
int dec_fork_unit(struct dec_run *c, const struct dec_unit *u,
    struct dec_unit_res *res, struct mt_evw *w, struct decode_stats *st,
    const uint32_t *seen, size_t nseen);
/* Frees the fork; its walk counters are added to @st. */
void dec_fork_free(struct dec_run *c, struct decode_stats *st);
/* 1 with the thread of buffer @i when known before decoding, else 0. */
int dec_static_tid(const struct dec_run *r, size_t i, uint32_t *pid,
    uint32_t *tid);
/*
 * The first event a decoder of buffer @i synced at the PSB at @psb
 * reports past offset @after (0: the first it reports), and where the
 * block after it starts; 0, or -1 when it does not sync, reports no such
 * event or meets an error before that block.  Calling thread only (uses
 * the run's images).
 */
int dec_seg_sig(const struct dec_run *r, size_t i, uint64_t psb,
    uint64_t after, struct dec_sig *sig);
/* 1: times are perf ns; 0: relative (instruction counts from the start). */
int dec_perf_clock(const struct dec_run *r);

#endif /* MT_DECODE_PARALLEL_H */
