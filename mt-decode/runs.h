/* SPDX-License-Identifier: MIT */
/*
 * Runs of per-CPU buffers (docs/decode.md "Threads and CPUs"): a per-CPU
 * buffer holds the threads that ran on that CPU one after the other, split
 * at the context switches of the sideband.  A run is one thread's stretch
 * of one buffer, from a switch-in to the next switch.  Each buffer's
 * stream is decoded into its own temporary file (sequentially, or by -j N
 * workers), and for every run the decoder notes where its thread record,
 * its events and its `end` record are.  runs_merge() then writes the runs
 * of all buffers ordered by (start time, CPU): a thread runs on one CPU
 * at a time, so that puts each thread's runs, and so its events, in time
 * order.  The thread record is written before a thread's first run only,
 * the `end` record after its last run only, so the call stack of a thread
 * that moved between CPUs is one stream for the consumer.
 */
#ifndef MT_DECODE_RUNS_H
#define MT_DECODE_RUNS_H

#include <stddef.h>
#include <stdint.h>

struct mt_evw;

/* One run: byte offsets in its buffer's file, head <= body <= tail <= stop. */
struct run_rec {
	uint64_t key;		/* start: switch-in time, or first record's */
	uint32_t tid;
	uint64_t head;		/* its `thread` record */
	uint64_t body;		/* its first event */
	uint64_t tail;		/* its `end` record */
	uint64_t stop;		/* the byte after it */
};

/* The runs of one buffer, in decode order. */
struct runs {
	uint32_t cpu;		/* the buffer's CPU: orders runs that start together */
	int fd;			/* the buffer's stream (owned), -1 none */
	struct run_rec *r;
	size_t n, cap;
};

void runs_init(struct runs *rs);
/* A new run at the end of @rs (zeroed but for @key and @tid), or NULL. */
struct run_rec *runs_add(struct runs *rs, uint64_t key, uint32_t tid);
/* Frees the list and closes the file. */
void runs_release(struct runs *rs);

/*
 * Write the runs of the @n buffers @rs to @w, merged by (key, CPU, buffer;
 * a buffer's own runs stay in their order), with each tid's thread record
 * at its first run and its end record at its last.  Returns 0,
 * -MT_E_NOMEM, or -MT_E_IO (a file could not be read or @w written).
 */
int runs_merge(const struct runs *rs, size_t n, struct mt_evw *w);

#endif /* MT_DECODE_RUNS_H */
