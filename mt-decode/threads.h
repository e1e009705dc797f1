/* SPDX-License-Identifier: MIT */
/*
 * Who ran where: the threads and processes of a snapshot (THREAD and
 * PROCESS chunks, then COMM, FORK and ITRACE_START sideband records), the
 * mappings the sideband adds (MMAP, MMAP2, handed to the image set), and
 * for per-CPU buffers the context switches that split a CPU's trace into
 * per-thread streams.
 *
 * A switch list holds, for one CPU and in time order, the thread that ran
 * from each switch-in (SWITCH or SWITCH_CPU_WIDE without the OUT bit, or
 * ITRACE_START) on; times are perf-clock ns, so splitting needs a trace
 * with TSC and a time conversion.
 */
#ifndef MT_DECODE_THREADS_H
#define MT_DECODE_THREADS_H

#include <stddef.h>
#include <stdint.h>

struct mt_snap;
struct image_set;

struct thr_switch {
	uint64_t time;		/* perf ns of the switch-in */
	uint32_t pid, tid;	/* the thread that runs from then on */
};

struct thr_cpu {
	uint32_t cpu;
	struct thr_switch *sw;	/* sorted by time; owned */
	size_t nsw;
};

struct thr_info {
	uint32_t pid, tid;
	const char *comm;	/* borrowed from the snapshot, or "" */
};

struct thr_set {
	struct thr_info *t;	/* known threads; owned */
	size_t nt;
	struct thr_cpu *cpus;	/* per-CPU switch lists; owned */
	size_t ncpus;
	uint64_t sb_records;	/* sideband records read */
	uint64_t sb_lost;	/* LOST records: sideband data lost */
};

/*
 * Fill @ts from @s; mappings found in the sideband go to @is.  On a
 * corrupt SIDEBAND chunk, *@err_off is the byte offset in the chunk's
 * data and *@err_msg says what; returns -MT_E_CORRUPT or -MT_E_TRUNC.
 * Returns 0 or -MT_E_NOMEM otherwise.
 */
int thr_set_build(struct thr_set *ts, const struct mt_snap *s,
    struct image_set *is, uint64_t *err_off, const char **err_msg);
void thr_set_release(struct thr_set *ts);

/* The pid of @tid (0 when unknown). */
uint32_t thr_pid(const struct thr_set *ts, uint32_t tid);
/* The comm of @tid ("" when unknown). */
const char *thr_comm(const struct thr_set *ts, uint32_t tid);
/* The switch list of @cpu, or NULL. */
const struct thr_cpu *thr_cpu(const struct thr_set *ts, uint32_t cpu);
/*
 * The CPU @tid ran on at @time: the one whose last switch-in at or before
 * @time is @tid's (the latest such switch-in if several CPUs show it:
 * switch-outs are not kept); when none, the CPU of @tid's first switch-in.
 * Returns 1 with *@cpu, 0 when no switch list names @tid.
 */
int thr_on_cpu(const struct thr_set *ts, uint32_t tid, uint64_t time,
    uint32_t *cpu);

#endif /* MT_DECODE_THREADS_H */
