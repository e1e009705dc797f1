/* SPDX-License-Identifier: MIT */
/*
 * Perf limits, privileges and actionable errors (see perfenv.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "err.h"
#include "perfenv.h"

#define CAP_BIT_IPC_LOCK	14
#define CAP_BIT_SYS_ADMIN	21
#define CAP_BIT_PERFMON		38

static int
read_line(const char *path, char *buf, size_t sz)
{
	FILE *fp = fopen(path, "re");
	int ok;

	if (fp == NULL)
		return -1;
	ok = fgets(buf, (int)sz, fp) != NULL;
	fclose(fp);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static uint64_t
lim(rlim_t v)
{
	return v == RLIM_INFINITY ? UINT64_MAX : (uint64_t)v;
}

void
mt_perfenv_read(struct mt_perfenv *e, const char *root)
{
	char line[256];
	struct rlimit rl;
	FILE *fp;
	int cpus[1];

	memset(e, 0, sizeof(*e));
	e->paranoid = 99;
	e->memlock = e->nofile = e->nofile_max = UINT64_MAX;
	if (read_line("/proc/sys/kernel/perf_event_paranoid", line,
	    sizeof(line)) == 0)
		e->paranoid = atoi(line);
	if (read_line("/proc/sys/kernel/perf_event_mlock_kb", line,
	    sizeof(line)) == 0)
		e->mlock_kb = strtoull(line, NULL, 10);
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
		e->memlock = lim(rl.rlim_cur);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		e->nofile = lim(rl.rlim_cur);
		e->nofile_max = lim(rl.rlim_max);
	}
	e->euid0 = geteuid() == 0;
	if ((fp = fopen("/proc/self/status", "re")) != NULL) {
		while (fgets(line, sizeof(line), fp) != NULL) {
			unsigned long long caps;

			if (sscanf(line, "CapEff: %llx", &caps) != 1)
				continue;
			e->cap_ipc_lock = (caps >> CAP_BIT_IPC_LOCK) & 1;
			e->cap_sys_admin = (caps >> CAP_BIT_SYS_ADMIN) & 1;
			e->cap_perfmon = (caps >> CAP_BIT_PERFMON) & 1;
		}
		fclose(fp);
	}
	e->ncpus = mt_perfenv_online_cpus(root, cpus, 0);
}

int
mt_perfenv_privileged(const struct mt_perfenv *e)
{
	return e->euid0 || e->cap_perfmon || e->cap_sys_admin ||
	    e->paranoid == -1;
}

int
mt_perfenv_unlimited_lock(const struct mt_perfenv *e)
{
	return e->cap_ipc_lock || e->paranoid == -1;
}

int
mt_perfenv_parse_cpus(const char *list, int *cpus, int max)
{
	const char *p = list;
	int n = 0;

	while (*p != '\0' && *p != '\n') {
		char *end;
		long a, b;

		a = strtol(p, &end, 10);
		if (end == p || a < 0)
			return -1;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -1;
			p = end;
		}
		for (; a <= b; a++) {
			if (n < max)
				cpus[n] = (int)a;
			n++;
		}
		if (*p == ',')
			p++;
		else if (*p != '\0' && *p != '\n')
			return -1;
	}
	return n;
}

int
mt_perfenv_online_cpus(const char *root, int *cpus, int max)
{
	char path[4096], line[4096];
	int n = -1, i;

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/online",
	    root != NULL ? root : "");
	if (read_line(path, line, sizeof(line)) == 0)
		n = mt_perfenv_parse_cpus(line, cpus, max);
	if (n > 0)
		return n < max || max == 0 ? n : max;
	n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	for (i = 0; i < n && i < max; i++)
		cpus[i] = i;
	return max == 0 ? n : i;
}

static void
open_hint(const struct mt_perfenv *e, int err, const char *what, int kernel,
    char *msg, size_t msgsz)
{
	char par[16];

	snprintf(par, sizeof(par), e->paranoid == 99 ? "?" : "%d",
	    e->paranoid);
	switch (err) {
	case EACCES:
	case EPERM:
		if (kernel)
			snprintf(msg, msgsz, "cannot open %s: %s; tracing "
			    "the kernel needs root, CAP_PERFMON (kernel "
			    "5.8+) or CAP_SYS_ADMIN, or sysctl "
			    "kernel.perf_event_paranoid <= 1 (it is %s)",
			    what, strerror(err), par);
		else
			snprintf(msg, msgsz, "cannot open %s: %s; needs root, "
			    "CAP_PERFMON (kernel 5.8+) or CAP_SYS_ADMIN, or "
			    "sysctl kernel.perf_event_paranoid <= 2 (it is "
			    "%s: sysctl -w kernel.perf_event_paranoid=2), and "
			    "permission to ptrace the target", what,
			    strerror(err), par);
		break;
	case EBUSY:
		snprintf(msg, msgsz, "cannot open %s: %s; another user of "
		    "Intel PT holds it (perf record -e intel_pt, another "
		    "mt-capture or magic-trace, a hypervisor tracing its "
		    "guests): stop it and retry", what, strerror(err));
		break;
	case EMFILE:
	case ENFILE:
		snprintf(msg, msgsz, "cannot open %s: %s; mt-capture needs a "
		    "descriptor per event (threads x CPUs): raise the limit "
		    "(ulimit -n; the hard limit is %llu)%s", what,
		    strerror(err), (unsigned long long)e->nofile_max,
		    err == ENFILE ? " or sysctl fs.file-max" : "");
		break;
	case ESRCH:
		snprintf(msg, msgsz, "cannot open %s: the target is gone",
		    what);
		break;
	default:
		snprintf(msg, msgsz, "cannot open %s: %s", what,
		    strerror(err));
	}
}

void
mt_perfenv_hint(int err, enum mt_perfenv_stage stage, const char *what,
    int kernel, char *msg, size_t msgsz)
{
	struct mt_perfenv e;
	char ml[32];

	mt_perfenv_read(&e, "");
	if (stage == MT_PERFENV_OPEN) {
		open_hint(&e, err, what, kernel, msg, msgsz);
		return;
	}
	if (e.memlock == UINT64_MAX)
		snprintf(ml, sizeof(ml), "unlimited");
	else
		snprintf(ml, sizeof(ml), "%llu KiB",
		    (unsigned long long)(e.memlock >> 10));
	if (err == EPERM)
		/* perf_mmap: over perf_event_mlock_kb and RLIMIT_MEMLOCK. */
		snprintf(msg, msgsz, "cannot map %s: %s; locked memory: the "
		    "perf rings exceed sysctl kernel.perf_event_mlock_kb "
		    "(%llu KiB per CPU, %d CPUs, for all of this user's perf "
		    "rings) plus RLIMIT_MEMLOCK (ulimit -l: %s): use a "
		    "smaller --snapshot-size, raise ulimit -l or "
		    "kernel.perf_event_mlock_kb, or run with CAP_IPC_LOCK",
		    what, strerror(err), (unsigned long long)e.mlock_kb,
		    e.ncpus, ml);
	else if (err == ENOMEM && stage == MT_PERFENV_MAP_AUX)
		snprintf(msg, msgsz, "cannot map %s: %s; the kernel found no "
		    "free pages for a ring this size (PT needs large "
		    "physically contiguous chunks): use a smaller "
		    "--snapshot-size", what, strerror(err));
	else
		snprintf(msg, msgsz, "cannot map %s: %s", what,
		    strerror(err));
}

static uint64_t
plan_need(const struct mt_perf_plan *p)
{
	return (uint64_t)p->trig_rings * 2 +
	    (uint64_t)p->sb_rings * (p->sb_pages + 1) +
	    (uint64_t)p->pt_bufs * (p->pt_pages + 1 + p->aux_bytes / p->page);
}

static unsigned long long
kib(uint64_t pages, size_t page)
{
	return (unsigned long long)(pages * page >> 10);
}

int
mt_perfenv_plan(const struct mt_perfenv *e, struct mt_perf_plan *p,
    char *msg, size_t msgsz)
{
	uint64_t want_aux = p->aux_bytes, user, lock;
	size_t want_sb = p->sb_pages;
	char ml[32];

	msg[0] = '\0';
	p->shrunk = 0;
	p->need = plan_need(p);
	if (mt_perfenv_unlimited_lock(e) || e->memlock == UINT64_MAX) {
		p->allow = UINT64_MAX;
		return 0;
	}
	/* perf_mmap: mlock_kb in pages, times the online CPUs ... */
	user = e->mlock_kb * 1024 / p->page * (uint64_t)e->ncpus;
	/* ... then RLIMIT_MEMLOCK for the rest. */
	lock = e->memlock / p->page;
	p->allow = user + lock;
	while (p->need > p->allow) {
		if (p->sb_pages > MT_PERF_PLAN_SB_MIN)
			p->sb_pages /= 2;
		else if (p->pt_bufs > 0 && p->pt_pages > 1)
			p->pt_pages /= 2;
		else if (p->pt_bufs > 0 &&
		    p->aux_bytes > MT_PERF_PLAN_AUX_MIN &&
		    p->aux_bytes / 2 >= p->page)
			p->aux_bytes /= 2;
		else
			break;
		p->shrunk = 1;
		p->need = plan_need(p);
	}
	snprintf(ml, sizeof(ml), "%llu KiB", (unsigned long long)(e->memlock
	    >> 10));
	if (p->need > p->allow) {
		snprintf(msg, msgsz, "locked memory: the perf rings need %llu "
		    "KiB (%zu sideband rings of %llu KiB, %zu PT buffers of "
		    "%llu KiB + %llu KiB data, %zu trigger rings of %llu "
		    "KiB) even at their smallest, but this user may lock "
		    "%llu KiB (kernel.perf_event_mlock_kb %llu KiB x %d "
		    "CPUs, less what other perf users of this uid hold, + "
		    "ulimit -l %s): raise ulimit -l or "
		    "kernel.perf_event_mlock_kb, run with CAP_IPC_LOCK, or "
		    "trace fewer threads", kib(p->need, p->page),
		    p->sb_rings, kib(p->sb_pages + 1, p->page), p->pt_bufs,
		    (unsigned long long)(p->aux_bytes >> 10),
		    kib(p->pt_pages + 1, p->page), p->trig_rings,
		    kib(2, p->page), kib(p->allow, p->page),
		    (unsigned long long)e->mlock_kb, e->ncpus, ml);
		return -MT_E_LIMIT;
	}
	if (p->shrunk)
		snprintf(msg, msgsz, "locked memory: shrank the rings to fit "
		    "%llu KiB (kernel.perf_event_mlock_kb %llu KiB x %d CPUs "
		    "+ ulimit -l %s): sideband %llu KiB per CPU (wanted "
		    "%llu), PT %llu KiB per buffer (wanted %llu); raise "
		    "ulimit -l or run with CAP_IPC_LOCK for the full size",
		    kib(p->allow, p->page), (unsigned long long)e->mlock_kb,
		    e->ncpus, ml, kib(p->sb_pages, p->page),
		    kib(want_sb, p->page),
		    (unsigned long long)(p->aux_bytes >> 10),
		    (unsigned long long)(want_aux >> 10));
	return 0;
}

int
mt_perfenv_raise_nofile(struct mt_perfenv *e)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	if (rl.rlim_cur != rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -1;
	}
	e->nofile = lim(rl.rlim_cur);
	e->nofile_max = lim(rl.rlim_max);
	return 0;
}
