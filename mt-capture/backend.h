/* SPDX-License-Identifier: MIT */
/*
 * The capture framework and the interface of its backends.
 *
 * `mt-capture run` and `attach` share one lifecycle, driven by capture.c
 * (its modules: capture.h):
 *
 *   parse options (struct mt_cap_opts, read-only from then on)
 *   choose the backend (pt, emulate; auto = pt if sysfs has intel_pt)
 *   ops->probe                 can this machine do it?  (before any target)
 *   start or find the targets  run: fork, the child waits at a gate before
 *                              execvp; attach: the pids given
 *   sideband + triggers        the framework opens the dummy sideband events
 *                              and the uprobe triggers (same for both)
 *   ops->attach(pid)           per target process (run: before exec)
 *   mt_cap_buf_add             per traced thread (or per CPU for live PT
 *                              with --all-threads); calls ops->buf_open
 *   ops->start                 recording runs; run: the gate opens after it
 *   loop:
 *     ev = ops->run            until an event (MT_CAP_EV_*)
 *     ops->stop                freeze every ring; set each ring's head
 *     framework snapshot       mt_ring_extract on every buffer + sideband,
 *                              maps, triggers...; written atomically
 *     ops->resume              for --multi-snapshot, else leave the loop
 *   ops->detach                every target runs free, untraced, on ANY
 *                              exit path (also after errors); idempotent
 *   ops->close                 free the backend's state
 *
 * Two backend shapes fit: the live PT backend's run() just calls
 * mt_cap_poll(c, -1) in a loop (the target runs freely, the kernel fills
 * the rings); the emulate backend's run() is its own ptrace single-step
 * loop, appending packets to buf->ring with mt_ring_write() and calling
 * mt_cap_poll(c, 0) every few thousand steps (or every millisecond) so
 * triggers, signals and --duration are noticed.
 *
 * Threads: only the framework's mt_cap_buf_add() creates buffers.  The live
 * PT backend learns of new threads from sideband FORK records (the
 * framework calls mt_cap_buf_add for them when opts->all_threads); the
 * emulate backend learns of them from PTRACE_EVENT_CLONE and calls
 * mt_cap_buf_add itself (only when opts->all_threads; otherwise it lets the
 * new thread run untraced).
 *
 * Child processes: with a backend whose ops->reaps_children is set (emulate),
 * the framework never calls waitpid on targets: the backend's own waitpid
 * loop sees the exit and reports it with mt_cap_note_exit().  Otherwise the
 * framework notices exits itself (SIGCHLD for run, a pidfd for attach).
 *
 * Uprobe triggers put an int3 (0xcc) at each probed instruction in the
 * target's memory; mt_cap_fix_code() puts the original bytes back into a
 * copy of target memory read by a backend, so its disassembler sees the
 * program's real instruction.
 */
#ifndef MT_CAPTURE_BACKEND_H
#define MT_CAPTURE_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snap.h"
#include "ring.h"

/* --backend */
enum mt_cap_backend_kind {
	MT_CAP_BK_AUTO = 0,	/* pt if the intel_pt PMU exists, else emulate */
	MT_CAP_BK_PT,		/* live Intel PT through perf_event_open */
	MT_CAP_BK_EMULATE,	/* ptrace single-stepping + pt_enc (issue 7) */
	MT_CAP_BK_QEMU,		/* qemu-user with mt's TCG plugin (issue 20) */
};

/* --timing */
enum mt_cap_timing {
	MT_CAP_TIMING_LOW = 0,	/* tsc, noretcomp off: perf's defaults */
	MT_CAP_TIMING_NORMAL,	/* cyc=1,cyc_thresh=1,mtc_period=0 (default) */
	MT_CAP_TIMING_HIGH,	/* NORMAL + noretcomp=1 */
};

/* Explicit timing terms (--timing cyc=1,mtc_period=3,...): set bits. */
#define MT_CAP_TERM_CYC		0x01u
#define MT_CAP_TERM_CYC_THRESH	0x02u
#define MT_CAP_TERM_MTC		0x04u
#define MT_CAP_TERM_MTC_PERIOD	0x08u
#define MT_CAP_TERM_NORETCOMP	0x10u
#define MT_CAP_TERM_PSB_PERIOD	0x20u
#define MT_CAP_TERM_TSC		0x40u

struct mt_cap_terms {
	uint32_t set;		/* MT_CAP_TERM_* given explicitly */
	uint8_t cyc, cyc_thresh, mtc, mtc_period, noretcomp, psb_period, tsc;
};

#define MT_CAP_MAX_PIDS		64
#define MT_CAP_MAX_TRIGGERS	16
#define MT_CAP_MAX_FILTERS	4	/* = MT_SNAP_MAX_FILTERS */
#define MT_CAP_MAX_BUNDLE	(512ull << 20)	/* bigger ELF files are not
						 * bundled (every backend) */

/* Options: filled by main.c's parser, then read-only (const pointer). */
struct mt_cap_opts {
	int attach;		/* 0: run argv; 1: attach to pids */
	char *const *argv;	/* run: command and arguments; not owned */
	pid_t pids[MT_CAP_MAX_PIDS];	/* attach: target processes */
	size_t npids;
	const char *output;	/* -o: path, "-" for stdout; never NULL */
	const char *triggers[MT_CAP_MAX_TRIGGERS];	/* --trigger selectors */
	size_t ntriggers;
	int multi_snapshot;	/* --multi-snapshot */
	unsigned max_snapshots;	/* --max-snapshots; 0: unlimited */
	uint64_t snapshot_size;	/* bytes per ring, a power of two */
	enum mt_cap_timing timing;	/* --timing level */
	struct mt_cap_terms terms;	/* --timing explicit terms */
	int kernel;		/* --kernel: trace the kernel too */
	const char *filters[MT_CAP_MAX_FILTERS];	/* --filter [DSO:]SYM|DSO */
	size_t nfilters;
	int all_threads;	/* --all-threads; else the main thread only */
	int bundle;		/* --bundle (default) / --no-bundle */
	double duration;	/* --duration seconds; 0: none */
	int ready_fd;		/* --ready-fd; -1: none */
	enum mt_cap_backend_kind backend;	/* --backend */
	const char *sysfs_root;	/* "" or $MT_SYSFS_ROOT: prefix of /sys */
	int quiet;		/* -q: no progress messages */
	int verbose;		/* -v: say which mechanisms were used */
	/* Options only the emulate backend reads (issue 7). */
	const char *start_at;	/* --start-at SYMBOL, or NULL */
	const char *ground_truth;	/* --ground-truth FILE, or NULL */
	uint64_t ground_truth_max;	/* --ground-truth-max: its bytes at
					 * most; the lines past it are not
					 * written */
	int host_clock;		/* --clock host (qemu): the host's TSC
				 * instead of the instruction count */
};

/* What stopped recording: returned by ops->run and mt_cap_poll. */
enum mt_cap_event {
	MT_CAP_EV_NONE = 0,	/* nothing yet (mt_cap_poll only) */
	MT_CAP_EV_SIGNAL,	/* SIGINT, SIGTERM or SIGHUP reached us */
	MT_CAP_EV_TRIGGER,	/* a trigger hit (recorded in c->hits) */
	MT_CAP_EV_DURATION,	/* --duration elapsed */
	MT_CAP_EV_EXIT,		/* every target process has exited */
	MT_CAP_EV_OUTPUT_GONE,	/* -o -: nothing reads standard output */
};

/* One PT buffer: a traced thread's ring (or a CPU's, live PT only). */
struct mt_cap_buf {
	pid_t pid;		/* process */
	pid_t tid;		/* thread; -1 for a per-CPU buffer */
	int cpu;		/* CPU of a per-CPU buffer, else -1 */
	struct mt_ring ring;	/* set up by ops->buf_open */
	struct mt_ring_wrap wrap;	/* extraction state (framework) */
	int exited;		/* the thread has exited; ring kept */
	void *bk;		/* the backend's per-buffer data */
};

/* A trigger hit (copied into a TRIGGER chunk). */
struct mt_cap_hit {
	uint64_t time;		/* perf clock ns (sample time) */
	pid_t pid, tid;
	uint64_t ip;		/* address that fired */
	unsigned trigger;	/* index into opts->triggers */
	int snapshot;		/* snapshot index it caused, -1: none */
};

struct mt_cap;			/* run state: capture.h; opaque to backends
				 * except through the accessors below */

struct mt_cap_backend_ops {
	const char *name;	/* "pt", "emulate": META backend-name */
	uint32_t snap_backend;	/* MT_SNAP_BK_* written to PTCFG */
	int reaps_children;	/* the backend waitpid()s the targets */
	int switch_sideband;	/* 1: context-switch records in the
				 * sideband (live PT: where a thread's trace
				 * pauses); 0 for a single-stepping backend,
				 * which stops the target at every step */
	int own_triggers;	/* 1: the backend sees trigger hits itself
				 * (mt_cap_add_hit); no uprobes are opened */
	int no_sideband;	/* 1: no perf sideband events (the target's
				 * addresses are not the host process's) */
	int trig_threads;	/* 1: uprobes bound to the targets' threads;
				 * the backend calls mt_cap_trig_thread for
				 * each new one before it runs, or sets
				 * trig_forks.  0: uprobes system-wide
				 * (pid -1) */
	int trig_forks;		/* 1 (with trig_threads): the framework
				 * binds each new thread of a target when
				 * its sideband FORK record is read (live
				 * PT, which has no hook of its own) */
	/*
	 * Optional, run mode: called in the forked child once the gate
	 * opened, instead of execvp(argv).  Returns only on failure, with
	 * errno set.
	 */
	void (*exec)(struct mt_cap *c);
	/*
	 * Optional: describe target @pid into @s (PROCESS, THREAD, MMAP,
	 * ELF, BLOB chunks) instead of reading /proc/PID.  Returns 0 or
	 * -MT_E_*; -MT_E_NOTFOUND keeps the previous description.
	 */
	int (*describe)(struct mt_cap *c, pid_t pid, struct mt_snap *s);
	/*
	 * Can this machine record?  Called before any target exists.  On
	 * failure returns -MT_E_* and puts a one-line, actionable reason in
	 * @msg (e.g. which sysctl or capability).  May refine *ptcfg (the
	 * framework has filled config from the timing options in the
	 * intel_pt layout, user/kernel, filters).
	 */
	int (*probe)(struct mt_cap *c, struct mt_snap_ptcfg *ptcfg,
	    char *msg, size_t msgsz);
	/*
	 * A target process.  run: @pid is stopped at the gate before
	 * execvp (it has not exec'd yet: the backend may PTRACE_SEIZE it
	 * with PTRACE_O_TRACEEXEC and wait for the exec); attach: @pid runs.
	 */
	int (*attach)(struct mt_cap *c, pid_t pid, char *msg, size_t msgsz);
	/* Open a buffer: set b->ring (size opts->snapshot_size) and b->bk. */
	int (*buf_open)(struct mt_cap *c, struct mt_cap_buf *b, char *msg,
	    size_t msgsz);
	/* Recording starts (live PT: enable; run mode: the gate opens after). */
	int (*start)(struct mt_cap *c, char *msg, size_t msgsz);
	/* Record until an event; returns MT_CAP_EV_* (> 0) or -MT_E_*. */
	int (*run)(struct mt_cap *c);
	/* Freeze every ring and set each b->ring.head. */
	int (*stop)(struct mt_cap *c);
	/*
	 * Optional (may be NULL): adjust the snapshot the framework filled
	 * (META, HOST from CPUID, PTCFG, TIMECONV, processes, threads, maps,
	 * sideband, triggers, AUX) before it is written, e.g. the emulate
	 * backend's virtual clock: HOST cpuid_15 and max_nonturbo_ratio, and
	 * TIMECONV mapping its virtual TSC to perf time.
	 */
	int (*annotate)(struct mt_cap *c, struct mt_snap *s);
	/* Continue after a snapshot (--multi-snapshot). */
	int (*resume)(struct mt_cap *c);
	/*
	 * Leave every target running, not stopped, not traced.  Called on
	 * every exit path, also after a failed attach or buf_open, and may
	 * be called twice.  Must not block on a target.
	 */
	void (*detach)(struct mt_cap *c);
	/* Free b->bk and the backend's state (rings: the framework). */
	void (*close)(struct mt_cap *c);
};

extern const struct mt_cap_backend_ops mt_cap_backend_pt;
/* Defined by the emulate backend (mt-capture/emu.c). */
extern const struct mt_cap_backend_ops mt_cap_backend_emulate;
/* Defined by the qemu backend (mt-capture/qemu.c). */
extern const struct mt_cap_backend_ops mt_cap_backend_qemu;
/* 1 when qemu-x86_64 and mt's plugin are installed (auto for run). */
int mt_cap_qemu_available(void);

/* ---- Framework services for backends (capture-poll.c) ---- */

const struct mt_cap_opts *mt_cap_opts(const struct mt_cap *c);
/* The PT configuration recorded in the snapshot (timing bits, filters). */
const struct mt_snap_ptcfg *mt_cap_ptcfg(const struct mt_cap *c);
/* perf time conversion from the sideband event's mmap page (may be
 * all zero with cap_user_time_zero 0 when the kernel gives none). */
const struct mt_snap_timeconv *mt_cap_timeconv(const struct mt_cap *c);
/* Ring sizes fitted to the locked-memory budget (perfenv.h): the live
 * PT backend maps plan->pt_pages data pages and plan->aux_bytes of AUX. */
struct mt_perf_plan;
const struct mt_perf_plan *mt_cap_plan(const struct mt_cap *c);
/* The backend's private state: set once by probe, read anywhere. */
void mt_cap_set_priv(struct mt_cap *c, void *priv);
void *mt_cap_priv(const struct mt_cap *c);

/*
 * --filter range @i, resolved to an ELF file: its path (valid while the
 * capture runs), the file offset of its first byte and its size.
 * Returns 0, or -MT_E_NOTFOUND when @i is past the last filter.
 */
int mt_cap_filter(const struct mt_cap *c, size_t i, const char **path,
    uint64_t *offset, uint64_t *size);

/*
 * Trigger @i (in opts->triggers order) resolved to an ELF file: path,
 * file offset of the instruction, and whether it is a hardware
 * breakpoint ("hw:").  Returns 0, or -MT_E_NOTFOUND past the last.
 */
int mt_cap_trigger_site(const struct mt_cap *c, size_t i, const char **path,
    uint64_t *offset, int *hw);

/* run: the program (realpath); attach: the first target's executable. */
const char *mt_cap_exe(const struct mt_cap *c);

/*
 * The file execvp would run for @name: @name itself when it holds a '/',
 * else the first executable @name in a directory of $PATH (default
 * /usr/local/bin:/usr/bin:/bin), written to @out (@outsz bytes).
 * Returns 0, or -1 when there is none or it does not fit.
 */
int mt_cap_find_program(const char *name, char *out, size_t outsz);

/*
 * A backend with own_triggers saw trigger @trigger fire at @ip in thread
 * @tid of @pid at perf time @time (ns); the next mt_cap_poll returns
 * MT_CAP_EV_TRIGGER.  Returns 0 or -MT_E_NOMEM.
 */
int mt_cap_add_hit(struct mt_cap *c, pid_t pid, pid_t tid, uint64_t ip,
    unsigned trigger, uint64_t time);

/*
 * Drop the sideband's context-switch records older than perf time
 * @before (mt_sbev_trim): the live PT backend calls it with the time of
 * the oldest data its rings still hold.  Returns the bytes dropped.
 */
size_t mt_cap_trim_sideband(struct mt_cap *c, uint64_t before);

/*
 * A backend that follows child processes itself (emulate, with
 * --all-threads): @pid, a child of target @parent, becomes a target (its
 * trigger hits count, its maps and files go into the snapshot).
 * Returns 1 if it is a target now, 0 if the table is full.
 */
int mt_cap_follow(struct mt_cap *c, pid_t pid, pid_t parent);

/*
 * A backend with trig_threads: thread @tid of a target appeared; bind the
 * trigger uprobes to it before it runs.  Returns 0 or -MT_E_*.
 */
int mt_cap_trig_thread(struct mt_cap *c, pid_t tid);

/* Target processes: count, and pid of each. */
size_t mt_cap_ntargets(const struct mt_cap *c);
pid_t mt_cap_target(const struct mt_cap *c, size_t i);

/*
 * Buffers.  mt_cap_buf_add creates a buffer for thread @tid of @pid (cpu
 * -1) or for @cpu (tid -1) and calls ops->buf_open.  The pointer stays
 * valid until the capture ends.  Returns 0 or -MT_E_*.
 */
int mt_cap_buf_add(struct mt_cap *c, pid_t pid, pid_t tid, int cpu,
    struct mt_cap_buf **out);
size_t mt_cap_nbufs(const struct mt_cap *c);
struct mt_cap_buf *mt_cap_buf(struct mt_cap *c, size_t i);
/* The buffer of thread @tid, or NULL. */
struct mt_cap_buf *mt_cap_buf_find(struct mt_cap *c, pid_t tid);

/*
 * Between steps or while waiting: drain the sideband rings, read trigger
 * hits, and check signals, --duration, the reader of -o - (every 50 ms)
 * and (unless ops->reaps_children) target exits.  Waits at most @timeout_ms (0: do not wait; -1: until
 * something happens).  Returns MT_CAP_EV_NONE, an MT_CAP_EV_* or -MT_E_*.
 * Cheap with timeout 0: one poll(2) with no ready fd.
 */
int mt_cap_poll(struct mt_cap *c, int timeout_ms);

/*
 * Report that target process @pid ended with waitpid @status (backends
 * that reap children).  Returns 1 when every target has now exited
 * (then ops->run should return MT_CAP_EV_EXIT), else 0.
 */
int mt_cap_note_exit(struct mt_cap *c, pid_t pid, int status);

/* Say (once per capture: the backend's task) that the --ground-truth
 * log reached --ground-truth-max and gets no more lines. */
void mt_cap_gt_full(const struct mt_cap *c);

/*
 * A target process is about to exit (the emulate backend's
 * PTRACE_EVENT_EXIT stop of its main thread): the framework reads its
 * maps, threads and vDSO now, while they still exist, for the snapshot
 * written after the exit.  Optional: without it the snapshot uses what
 * was read when recording started, plus the sideband's MMAP2 records.
 */
void mt_cap_note_exiting(struct mt_cap *c, pid_t pid);

/*
 * Replace trigger int3 bytes in @buf, a copy of @len bytes of @pid's
 * memory at @addr, with the instruction bytes the file holds.
 */
void mt_cap_fix_code(const struct mt_cap *c, pid_t pid, uint64_t addr,
    uint8_t *buf, size_t len);

/* ---- Entry point (main.c) ---- */

/*
 * Record according to @o.  Prints progress and diagnostics to stderr
 * (this is the command's body, not a common/ module).
 * Returns the exit status: 0, 1 (runtime error) or 2 (usage).
 */
int mt_cap_main(const struct mt_cap_opts *o);

#endif /* MT_CAPTURE_BACKEND_H */
