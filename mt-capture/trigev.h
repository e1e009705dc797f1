/* SPDX-License-Identifier: MIT */
/*
 * Trigger events: the uprobe (and hardware breakpoint) perf events of
 * resolved trigger sites (trigger.h), which report every hit with time,
 * pid, tid and ip (docs/capture.md).
 *
 * One uprobe event per (selector, thread, CPU), bound to the
 * targets' threads (mt_trig_open with @tids, then mt_trig_add_thread for
 * each thread that appears): the kernel's uprobe filter
 * (__uprobe_perf_filter in kernel/trace/trace_uprobe.c: an event whose
 * hw.target->mm is the mm that maps the file) then puts the int3 only into
 * the targets' processes.  A uprobe PMU event cannot inherit: the child
 * event's init (perf_uprobe_init) copies attr.config1, a pointer into our
 * memory, as a user string in the child's context, and the target's
 * clone() fails.  So, when the caller asks for inheritance and tracefs is
 * there, the probes are defined in tracefs' uprobe_events and opened as
 * tracepoint events with inherit (mt_trig_open).  With @tids NULL they
 * are system-wide (pid -1): every process mapping the
 * file takes the trap and hits of other processes are dropped.  The events
 * are opened disabled and enabled (mt_trig_enable) only once PT records,
 * so no hit precedes the trace.  Needs CAP_SYS_ADMIN (uprobes are
 * never allowed unprivileged).  Never prints.
 */
#ifndef MT_CAPTURE_TRIGEV_H
#define MT_CAPTURE_TRIGEV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trigger.h"

/* A hit read from an event. */
struct mt_trig_hit {
	uint64_t time;		/* perf clock ns */
	uint32_t pid, tid;
	uint64_t ip;
	uint64_t id;		/* the event's (its parent's when inherited);
				 * 0 in a sample without PERF_SAMPLE_ID */
	unsigned trigger;	/* index given to mt_trig_open */
};

struct mt_trig;

/*
 * Open the uprobe events of the @nsites sites that are not "hw:" on every
 * CPU (uprobe PMU type from @sysfs_root), bound to the threads @tids, or
 * with @tids NULL system-wide (pid -1).  Bound, the kernel puts the
 * breakpoint only into the processes of those threads (and of threads
 * added with mt_trig_add_thread); system-wide, into every process that
 * maps the file.  @sites must outlive @out.  Returns 0, or -MT_E_NOPMU /
 * -MT_E_PERM / -MT_E_SYS with a one-line reason in @msg.
 */
int mt_trig_open(struct mt_trig **out, const struct mt_trig_site *sites,
    size_t nsites, const char *sysfs_root, const pid_t *tids, size_t ntids,
    int inherit, char *msg, size_t msgsz);
/* @inherit of mt_trig_open: new threads and child processes get the
 * events. */
#define MT_TRIG_INHERIT		1
/*
 * With @inherit (and @tids) mt_trig_open first defines the uprobes in
 * tracefs (tracefs.h) and opens them as PERF_TYPE_TRACEPOINT events with
 * inherit, one per (site, thread, CPU) as perf record does (the kernel
 * refuses to mmap an inherited per-task event, cpu -1): a thread or
 * child process created later has its events from its first
 * instruction, so no hit is lost before anyone binds it.  Without
 * tracefs (not mounted, not writable) it falls back to the uprobe PMU.
 * mt_trig_inherits says which it got, mt_trig_how in words (for -v).
 * The probes are removed by mt_trig_free.
 */
int mt_trig_inherits(const struct mt_trig *t);
const char *mt_trig_how(const struct mt_trig *t);
/*
 * Bind the uprobe events also to thread @tid (a new thread or process of
 * a target, before it runs), enabled if the triggers are.  A no-op for
 * system-wide events or a thread bound already.  Returns as mt_trig_open.
 */
int mt_trig_add_thread(struct mt_trig *t, pid_t tid, char *msg,
    size_t msgsz);
void mt_trig_free(struct mt_trig *t);
/*
 * Arm hardware breakpoint site @site at run-time address @addr in the
 * threads @tids (one event per thread and CPU, with inherit).
 * Returns 0, or -MT_E_PERM / -MT_E_SYS with a reason in @msg.
 */
int mt_trig_open_hw(struct mt_trig *t, unsigned site, uint64_t addr,
    const pid_t *tids, size_t ntids, char *msg, size_t msgsz);
/* fds to poll (readable when hits are pending) into @fds (NULL: only
 * count them); returns the count (<= @max). */
size_t mt_trig_fds(const struct mt_trig *t, int *fds, size_t max);
/*
 * Move pending hits of processes in @pids into @hits (at most @max);
 * returns how many.  A hit of another process is kept if @other (may be
 * NULL) returns 1 for its pid (e.g. a child process, adopted), else
 * dropped.  Hits beyond @max stay in the rings for the next call.
 */
size_t mt_trig_read(struct mt_trig *t, const pid_t *pids, size_t npids,
    int (*other)(void *, pid_t), void *arg, struct mt_trig_hit *hits,
    size_t max);

/*
 * The ring parser of mt_trig_read: the records of the ring of @size bytes
 * at @data between *@tailp and @head (perf_event_mmap_page data_tail and
 * data_head), samples of IP|TID|TIME[|ID].  Hits of @pids (or accepted by
 * @other, as for mt_trig_read) go to @hits as
 * trigger @site; stops before a sample when @max hits are stored, so
 * *@tailp (advanced) never passes a hit that was not kept.
 */
size_t mt_trig_parse(const uint8_t *data, uint64_t size, uint64_t head,
    uint64_t *tailp, unsigned site, const pid_t *pids, size_t npids,
    int (*other)(void *, pid_t), void *arg, struct mt_trig_hit *hits,
    size_t max);

/*
 * Drop, from the @n hits of one ring in ring order, the second sample of
 * one hit counted by two events of its thread (a thread bound while it
 * had an inherited event already): the same pid, tid and ip as the
 * previous sample kept, with another event id, or the same time.
 * @last and @last_kept carry the ring's state across calls ({0}, 0 at
 * first).  Returns the hits left, moved to the front.
 */
size_t mt_trig_drop_doubles(struct mt_trig_hit *last, int *last_kept,
    struct mt_trig_hit *h, size_t n);

/*
 * The events are opened disabled.  Enable them (@on; with @drop, first
 * drop every hit queued in the rings: older than this start) or disable
 * them, uprobe and hw: alike.  Returns 0 or -MT_E_SYS.
 */
int mt_trig_enable(struct mt_trig *t, int on, int drop);


#endif /* MT_CAPTURE_TRIGEV_H */
