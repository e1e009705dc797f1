/* SPDX-License-Identifier: MIT */
/*
 * What the host lets mt-capture do with perf events, and what to tell the
 * user when the kernel says no: the perf_event_paranoid and
 * perf_event_mlock_kb sysctls, RLIMIT_MEMLOCK and RLIMIT_NOFILE, the
 * effective capabilities, the online CPUs (docs/capture.md).
 *
 * The kernel's rules this follows (kernel/events/core.c):
 *   - perf_event_open: paranoid <= 2 for one's own (ptrace-able) process,
 *     <= 1 to trace the kernel, unless CAP_PERFMON (5.8+) or
 *     CAP_SYS_ADMIN; Debian's default 3 blocks every unprivileged user.
 *   - mmap of a ring charges its pages (data: 1 + n, AUX: n) to the user's
 *     perf_event_mlock_kb x online CPUs; what exceeds that is charged to
 *     RLIMIT_MEMLOCK, and beyond that mmap fails with EPERM, unless
 *     CAP_IPC_LOCK or paranoid -1.
 * Never prints.
 */
#ifndef MT_CAPTURE_PERFENV_H
#define MT_CAPTURE_PERFENV_H

#include <stddef.h>
#include <stdint.h>

struct mt_perfenv {
	int paranoid;		/* kernel.perf_event_paranoid; 99 unknown */
	uint64_t mlock_kb;	/* kernel.perf_event_mlock_kb; 0 unknown */
	uint64_t memlock;	/* RLIMIT_MEMLOCK soft limit, bytes;
				 * UINT64_MAX unlimited */
	uint64_t nofile, nofile_max;	/* RLIMIT_NOFILE soft, hard */
	int euid0;		/* effective uid 0 */
	int cap_perfmon;	/* CAP_PERFMON (38) effective */
	int cap_sys_admin;	/* CAP_SYS_ADMIN (21) effective */
	int cap_ipc_lock;	/* CAP_IPC_LOCK (14) effective */
	int ncpus;		/* online CPUs */
};

/*
 * Read the facts; the online CPUs from @root/sys/devices/system/cpu/online
 * (@root "" for the real one, else a fake tree).  Never fails: unknown
 * values are left at their "unknown" markers.
 */
void mt_perfenv_read(struct mt_perfenv *e, const char *root);

/*
 * Privileged for perf, as perf decides its default buffer sizes: root,
 * CAP_PERFMON, CAP_SYS_ADMIN, or perf_event_paranoid -1.
 */
int mt_perfenv_privileged(const struct mt_perfenv *e);

/* The locked-memory limits do not apply (CAP_IPC_LOCK or paranoid -1). */
int mt_perfenv_unlimited_lock(const struct mt_perfenv *e);

/*
 * Parse a sysfs CPU list ("0-3,5,8-9\n") into @cpus (at most @max).
 * Returns the count, or -1 on a malformed list.
 */
int mt_perfenv_parse_cpus(const char *list, int *cpus, int max);

/*
 * The online CPUs of @root/sys/devices/system/cpu/online into @cpus, or
 * 0..sysconf(_SC_NPROCESSORS_ONLN)-1 when the file cannot be read.
 * Returns the count.
 */
int mt_perfenv_online_cpus(const char *root, int *cpus, int max);

/*
 * The locked-memory budget of a capture, computed before any ring is
 * mapped.  The kernel charges each data ring 1 + n pages and each AUX
 * ring n pages to the user's allowance of perf_event_mlock_kb x online
 * CPUs, and what exceeds it to RLIMIT_MEMLOCK (unless CAP_IPC_LOCK or
 * paranoid -1).  The allowance is per user, shared with any other perf
 * user of the same uid, which mt-capture cannot see.
 */
struct mt_perf_plan {
	/* In: what the capture maps. */
	size_t page;		/* page size, bytes */
	size_t sb_rings;	/* sideband rings (one per online CPU) */
	size_t trig_rings;	/* trigger rings, 1 data page each */
	size_t pt_bufs;		/* live PT buffers; 0 for other backends */
	/* In: the sizes wanted; out: the sizes to use. */
	size_t sb_pages;	/* data pages per sideband ring (power of 2) */
	size_t pt_pages;	/* data pages per PT buffer (power of 2) */
	uint64_t aux_bytes;	/* AUX bytes per PT buffer (power of 2) */
	/* Out. */
	uint64_t need;		/* pages the rings charge */
	uint64_t allow;		/* pages allowed; UINT64_MAX: no limit */
	int shrunk;		/* sizes were reduced to fit */
};

#define MT_PERF_PLAN_SB_MIN	8	/* sideband pages per ring, at least */
#define MT_PERF_PLAN_AUX_MIN	(64u << 10)	/* AUX bytes, at least */

/*
 * Fit @p to the budget of @e (with e->ncpus online CPUs).  Shrinks the
 * sideband rings, then the PT data rings, then the AUX rings (halving, not
 * below the minimums) until they fit.  Returns 0 with @msg "" (fits) or
 * a one-line note of what was shrunk; or -MT_E_LIMIT with @msg giving the
 * pages needed and allowed and the knobs to turn.
 */
int mt_perfenv_plan(const struct mt_perfenv *e, struct mt_perf_plan *p,
    char *msg, size_t msgsz);

/*
 * Raise the RLIMIT_NOFILE soft limit to the hard one (attach opens an
 * event per thread and CPU: 16 threads on 64 CPUs pass 1024), updating
 * e->nofile.  Returns 0, or -1 with errno when setrlimit fails.
 */
int mt_perfenv_raise_nofile(struct mt_perfenv *e);

/* Where a perf call failed, for mt_perfenv_hint. */
enum mt_perfenv_stage {
	MT_PERFENV_OPEN = 0,	/* perf_event_open */
	MT_PERFENV_MAP,		/* mmap of the data ring */
	MT_PERFENV_MAP_AUX,	/* mmap of the AUX ring */
};

/*
 * One line saying what to do about errno @err from @stage on @what ("the
 * intel_pt event"): the sysctl, capability, limit or option to change,
 * with current values.  @kernel: --kernel was asked.
 */
void mt_perfenv_hint(int err, enum mt_perfenv_stage stage, const char *what,
    int kernel, char *msg, size_t msgsz);

#endif /* MT_CAPTURE_PERFENV_H */
