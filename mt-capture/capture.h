/* SPDX-License-Identifier: MIT */
/*
 * The capture framework's own state, shared by its modules (backends see
 * only backend.h):
 *
 *   capture.c        the run/attach lifecycle (mt_cap_main) and cleanup
 *   capture-setup.c  targets, triggers, sideband, ring and descriptor
 *                    budgets, buffers: everything opened before recording
 *   capture-poll.c   signals, accessors for backends, buffers, trigger
 *                    hits, exits, followed children, the int3 fix-ups
 *                    and mt_cap_poll
 *   capture-snap.c   describing the targets and writing each snapshot
 *   capture-probes.c the snapshot's uprobe sites (PROBE chunks)
 */
#ifndef MT_CAPTURE_CAPTURE_H
#define MT_CAPTURE_CAPTURE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "snap.h"
#include "backend.h"
#include "perfenv.h"
#include "trigger.h"

struct mt_pmu;
struct mt_sb_rec;
struct mt_sbev;
struct mt_trig;
struct pollfd;

#define SB_DATA_PAGES	32		/* 128 KiB sideband ring per CPU,
					 * drained every 100 ms or so */
#define PT_DATA_PAGES	2		/* the PT events' own records */
#define MAX_HITS	4096		/* hits kept between snapshots */

struct fixsite {
	pid_t pid;
	uint64_t addr;		/* run-time address of the int3 */
	uint8_t orig;
	size_t site;		/* index in sites[] */
};

struct mt_cap {
	const struct mt_cap_opts *o;
	const struct mt_cap_backend_ops *ops;
	void *priv;
	struct mt_snap_ptcfg ptcfg;
	struct mt_snap_timeconv timeconv;
	struct mt_perf_plan plan;	/* ring sizes, fitted to the
					 * locked-memory budget */
	uint32_t max_nonturbo_ratio;
	char exe[PATH_MAX];	/* run: the program; attach: first target's */

	pid_t targets[MT_CAP_MAX_PIDS];
	int alive[MT_CAP_MAX_PIDS];
	int pidfd[MT_CAP_MAX_PIDS];
	struct mt_snap *desc[MT_CAP_MAX_PIDS];	/* last description read */
	struct mt_snap *kdesc;	/* --kernel: kallsyms and kernel text */
	size_t ntargets, nalive;
	pid_t child;		/* run: the child, else 0 */
	int gate_w;		/* run: write 'g' to let the child exec */
	int exec_r;		/* run: EOF once exec succeeded, else errno */
	int child_status;	/* run: waitpid status when reaped */
	int child_reaped;

	struct mt_cap_buf **bufs;
	size_t nbufs, capbufs;

	struct mt_sbev *sb;
	struct mt_trig *trig;
	struct mt_trig_site sites[MT_CAP_MAX_TRIGGERS];
	size_t nsites;
	struct mt_trig_site fsites[MT_CAP_MAX_FILTERS];	/* --filter */
	size_t nfsites;
	struct mt_cap_hit *hits;
	size_t nhits, caphits, hits_seen;
	struct pollfd *pfd;	/* mt_cap_poll's fds, then as many ints */
	size_t npfd;
	size_t *fork_off;	/* per sideband ring: bytes scanned for
				 * FORK records (scan_forks) */
	size_t nfork_off;
	int sb_per_thread;	/* one sideband event per thread (plan_fds) */
	size_t hits_dropped;	/* older hits forgotten (MAX_HITS) */

	struct fixsite *fix;
	size_t nfix;
	uint64_t fix_sb_len;	/* sideband bytes when fix was computed */
	int fix_valid;

	struct timespec deadline;
	int has_deadline;
	int to_stdout;		/* -o -: watch for the reader going away */
	struct timespec out_checked;	/* when it was last looked at */
	unsigned nsnapshots;
	int detached;
};

/* capture-poll.c */
int mt_cap_install_signals(void);
int mt_cap_signal(void);	/* the first SIGINT/TERM/HUP, else 0 */
int mt_cap_stdout_gone(void);
int mt_cap_target_index(const struct mt_cap *c, pid_t pid);
void mt_cap_fix_refresh(struct mt_cap *c);
void mt_cap_finish_child(struct mt_cap *c, int ev, int failed);

/* capture-setup.c */
int mt_cap_setup_targets(struct mt_cap *c);
int mt_cap_open_gate(struct mt_cap *c);
int mt_cap_plan_rings(struct mt_cap *c);
int mt_cap_setup_triggers(struct mt_cap *c);
int mt_cap_arm_hw_triggers(struct mt_cap *c);
int mt_cap_setup_sideband(struct mt_cap *c);
int mt_cap_bind_new_threads(struct mt_cap *c);
int mt_cap_setup_buffers(struct mt_cap *c);

/* capture-probes.c: PROBE chunks for every uprobe site in the targets
 * as @out maps them (its MMAP chunks) and the sideband did. */
void mt_cap_add_probes(struct mt_cap *c, struct mt_snap *out);

/* capture-snap.c */
void mt_cap_describe(struct mt_cap *c, size_t i);
/* Each executable MMAP2 record of a target in the sideband, to @fn. */
void mt_cap_sb_mmaps(struct mt_cap *c, void (*fn)(void *arg,
    const struct mt_sb_rec *rec), void *arg);
int mt_cap_take_snapshot(struct mt_cap *c, int ev, int more);

#endif
