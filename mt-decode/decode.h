/* SPDX-License-Identifier: MIT */
/*
 * Decoding a snapshot's PT buffers into the event stream
 * (docs/formats/events.md) with libipt's block decoder; docs/decode.md
 * describes what is emitted when.
 *
 * Each AUX buffer is decoded on its own (its own pt_block_decoder, its own
 * state in struct dec_buf), so buffers can be decoded by separate threads
 * (-j, parallel.h) and written in buffer order; per-CPU buffers with
 * context switches are cut into runs and merged by time (runs.h).
 */
#ifndef MT_DECODE_DECODE_H
#define MT_DECODE_DECODE_H

#include <pthread.h>
#include <stdint.h>

#include "image.h"
#include "progress.h"

struct mt_snap;
struct mt_evw;

struct decode_opts {
	const char *source;	/* snapshot path for `info source` */
	int all_branches;	/* 1: --all-branches */
	struct image_opts img;	/* where ELF files are looked for */
	/* Called with each warning (missing file, ...); may be NULL. */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
	int jobs;		/* -j: decoding threads (parallel.c) */
	int jobs_auto;		/* -j not given: jobs is the CPUs, and
				 * decode_run uses fewer on little work */
	int no_cache;		/* --no-cache: libipt's block decoder only */
	int out_fd;		/* the output's fd, written directly under -j */
	int out_private;	/* out_fd is a file no one reads before the
				 * end (renamed when complete): a stream
				 * written there may be cut back */
	struct decode_progress *progress;	/* NULL: no progress lines */
};

/*
 * Progress lines (issue 8): the share of the PT bytes consumed and the
 * events written, on @fd (standard error, when it is a terminal and -q
 * was not given: main.c decides).  The sequential loop shows them from
 * its block loop, -j N from the thread that writes the output.
 */
struct decode_progress {
	struct mt_progress p;	/* throttle and format (common/progress.h) */
	int fd;			/* where the lines go */
	uint64_t done;		/* PT bytes of the buffers finished */
};

/*
 * Start progress for @s on @fd: one line per MT_PROGRESS_INTERVAL_MS
 * milliseconds (environment; default 250, 0 as often as the loop asks,
 * for tests).
 */
void decode_progress_start(struct decode_progress *dp,
    const struct mt_snap *s, int fd);
/* Write a line: @done PT bytes consumed, @events records written. */
void decode_progress_show(struct decode_progress *dp, uint64_t done,
    uint64_t events);
/* Erase the line, if one is shown. */
void decode_progress_end(struct decode_progress *dp);

/* libipt error codes counted separately (pte_* up to this bound). */
#define DECODE_NERR 32

struct decode_stats {
	uint64_t buffers;	/* AUX buffers decoded */
	uint64_t pt_bytes;	/* PT bytes in them */
	uint64_t instructions;	/* sum of block.ninsn */
	uint64_t blocks;	/* pt_blk_next calls (also empty blocks) */
	uint64_t ipt_events;	/* libipt events (pt_blk_event) */
	uint64_t events;	/* event records written */
	uint64_t errors;	/* decode errors (each an `error` record) */
	uint64_t err_by_code[DECODE_NERR];	/* by -pte_* code */
	uint64_t overflows;	/* OVF packets */
	uint64_t bytes_before_sync;	/* bytes before each buffer's 1st PSB */
	uint64_t bytes_skipped;	/* bytes skipped resyncing after errors */
	uint64_t walk_mismatch;	/* blocks whose end disagreed with the walk */
	uint64_t walks;		/* distinct block starts walked */
	uint64_t walk_insns;	/* instructions decoded by the walks */
	uint64_t no_image;	/* mappings whose file was not found */
	uint64_t seg_joins;	/* -j N: segments stitched to the one before */
	uint64_t cfg_buffers;	/* buffers the cached decoder decoded */
	uint64_t cfg_fallbacks;	/* buffers it gave back to libipt */
	uint64_t cfg_full;	/* of them: because its cache was full */
	uint64_t cfg_pq_refused;	/* buffers mt's query layer (pq.h)
					 * gave to libipt's query decoder */
	uint64_t jmp_unknown_src;	/* unconditional jumps from code in no
					 * known function into code in none
					 * (not written) */
	uint64_t jmp_unknown_dst;	/* jumps written as jmp whose target
					 * is in no known function */
};

/* Where a fatal error happened (corrupt sideband). */
struct decode_diag {
	uint64_t off;		/* byte offset in the sideband data */
	const char *msg;	/* what was wrong, static */
};

/*
 * Decode every AUX buffer of @s and write the stream to @w (header
 * already written by mt_evw_new).  Counters go to @st.
 * Returns 0, -MT_E_IO (output, errno set), -MT_E_NOMEM, -MT_E_IPT,
 * or -MT_E_CORRUPT / -MT_E_TRUNC with @d set (corrupt sideband).
 */
int decode_run(const struct decode_opts *o, const struct mt_snap *s,
    struct mt_evw *w, struct decode_stats *st, struct decode_diag *d);

/*
 * Start @fn(@arg) on a thread with DECODE_STACK bytes of stack: every
 * thread that runs libipt's block decoder is one (the -j N workers, and
 * decode_run's own where the main thread's stack limit cannot be raised
 * to DECODE_STACK; where it can, decode_run decodes in the main thread).
 * libipt 2.0.5 recurses once per block-cache trampoline
 * (pt_blk_proceed_no_event_cached, ptbq_again), up to the 65535
 * instructions of a block: on code that loops on a direct jump that is
 * more than the default 8 MiB.  Returns 0 or pthread_create's error.
 */
#define DECODE_STACK	(64u << 20)
int decode_thread_start(pthread_t *th, void *(*fn)(void *), void *arg);

#endif /* MT_DECODE_DECODE_H */
