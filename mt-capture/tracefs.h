/* SPDX-License-Identifier: MIT */
/*
 * uprobe trace events defined through tracefs (uprobe_events), for
 * trigger events that are inherited into new threads and child processes
 * (trigger.c): a perf event of the uprobe PMU carries its path as a
 * pointer (config1) that an inherited copy re-reads in the child, where it
 * is not ours; a tracefs event is a tracepoint id.
 *
 * Events are named GROUP/EVENT; mt-capture's group is "mtcap<PID>" so a
 * probe left by a capture that was killed can be recognised and removed
 * (mt_tracefs_reap).  Never prints.
 */
#ifndef MT_CAPTURE_TRACEFS_H
#define MT_CAPTURE_TRACEFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MT_TRACEFS_GROUP "mtcap"

/*
 * The tracefs directory whose uprobe_events can be written: $MT_TRACEFS
 * when set (tests), else /sys/kernel/tracing, else
 * /sys/kernel/debug/tracing.  Returns 0, or -MT_E_NOTFOUND with the
 * reason in @why (not mounted, not writable).
 */
int mt_tracefs_dir(char *dir, size_t dirsz, char *why, size_t whysz);

/*
 * Define the uprobe @group/@event at @path + @offset (a file offset) and
 * read its tracepoint id into @id (for PERF_TYPE_TRACEPOINT).  A path
 * holding white space cannot be written there.  Returns 0, or
 * -MT_E_UNSUPP / -MT_E_PERM / -MT_E_SYS with a one-line reason in @msg.
 */
int mt_tracefs_uprobe_add(const char *dir, const char *group,
    const char *event, const char *path, uint64_t offset, uint64_t *id,
    char *msg, size_t msgsz);

/*
 * Remove @group/@event (every perf event on it must be closed first, or
 * the kernel answers EBUSY).  Returns 0 or -MT_E_SYS.
 */
int mt_tracefs_uprobe_del(const char *dir, const char *group,
    const char *event);

/*
 * Remove the uprobes of groups MT_TRACEFS_GROUP<PID> whose PID is no
 * mt-capture (one that was killed before it could); a probe still in
 * use stays (EBUSY).  Returns how many were removed.
 */
int mt_tracefs_reap(const char *dir);

/*
 * One line of uprobe_events, "p:GROUP/EVENT PATH:0xOFFSET" (a uretprobe
 * "r:"; a reference counter "(0x...)" after the offset and arguments
 * after a blank are allowed): its name GROUP/EVENT, its file and the
 * file offset of the probed instruction.  Returns 0 or -MT_E_SYNTAX.
 */
int mt_tracefs_uprobe_parse(const char *line, char *name, size_t namesz,
    char *path, size_t pathsz, uint64_t *offset);

/*
 * Every uprobe defined in tracefs (the readable uprobe_events of
 * $MT_TRACEFS, /sys/kernel/tracing or /sys/kernel/debug/tracing),
 * whoever defined it, given to @fn until it returns non-zero.  Probes
 * registered through the uprobe PMU or BPF are in no such list.
 * Returns how many were listed (0 without tracefs).
 */
int mt_tracefs_uprobes(int (*fn)(void *arg, const char *name,
    const char *path, uint64_t offset), void *arg);

#endif /* MT_CAPTURE_TRACEFS_H */
