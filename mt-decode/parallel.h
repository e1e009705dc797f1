/* SPDX-License-Identifier: MIT */
/*
 * Parallel decode (mt-decode -j N): the AUX buffers of a snapshot are
 * decoded by N worker threads at once and their event streams written in
 * buffer order, so the output is byte for byte the sequential output.
 *
 * Each worker is a fork of the run (decode.c's dec_fork): its own walk
 * cache, its own copies of the libipt images (an image is not safe to
 * share between decoders running concurrently; the image-section cache
 * is, libipt locks it), its own counters; it writes each buffer's stream
 * into its own temporary file, which the calling thread copies to the
 * output once every earlier buffer has been copied.  A window of 2 N
 * buffers bounds the temporary space.  The thread records ("thread" lines
 * are written once per run, at the thread's first buffer) come out the
 * same because a worker starts each buffer knowing the threads of all the
 * buffers before it.  That needs buffers whose thread is known before
 * decoding (per-thread buffers, or per-CPU buffers without context
 * switches): otherwise the sequential loop runs.  It also runs for traces
 * with MTC or CYC timing: there an event's time depends on where libipt
 * ended the block before it, and that depends on the state of the block
 * cache libipt keeps per section and shares between decoders, so the
 * times would vary with the order buffers are decoded in (measured: 88 of
 * 244,732 times on a 4 MiB CYC trace moved by a few ns, differently from
 * run to run).  TSC-only (magic-trace's "Low" timing) and relative times
 * do not depend on block boundaries.
 *
 * Splitting one large buffer at PSBs is not done here (docs/decode.md,
 * bench/README.md): parallelism is across buffers.
 */
#ifndef MT_DECODE_PARALLEL_H
#define MT_DECODE_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

struct dec_run;
struct decode_progress;
struct decode_stats;
struct image_set;
struct mt_evw;
struct mt_snap;
struct pt_image;

/* Returned by par_decode when the buffers need the sequential loop. */
#define PAR_SEQUENTIAL 1

/*
 * Decode every buffer of @s with @jobs threads; @w (header written) is
 * flushed, then the streams are written to @out_fd.  Counters are added
 * to @st.  Progress lines go to @prog (NULL: none) from the calling
 * thread while it waits for the next buffer.  Returns 0, PAR_SEQUENTIAL
 * (nothing done), or what the first failing buffer returned (-MT_E_*),
 * or -MT_E_IO (output, errno set).
 */
int par_decode(struct dec_run *r, const struct mt_snap *s,
    struct image_set *is, struct decode_stats *st, int jobs, int out_fd,
    struct mt_evw *w, struct decode_progress *prog);

/* Hooks implemented in decode.c for the workers. */
struct dec_run *dec_fork(const struct dec_run *r,
    struct pt_image *(*image)(void *arg, uint32_t pid), void *image_arg);
int dec_fork_buffer(struct dec_run *c, size_t i, struct mt_evw *w,
    struct decode_stats *st, const uint32_t *seen, size_t nseen);
/* Frees the fork; its walk counters are added to @st. */
void dec_fork_free(struct dec_run *c, struct decode_stats *st);
/* 1 with the thread of buffer @i when known before decoding, else 0. */
int dec_static_tid(const struct dec_run *r, size_t i, uint32_t *pid,
    uint32_t *tid);

#endif /* MT_DECODE_PARALLEL_H */
