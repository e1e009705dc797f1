/* SPDX-License-Identifier: MIT */
/*
 * What the capture framework opens before recording (capture.h): the
 * targets (run: the gated child), the triggers, the sideband events,
 * the ring and descriptor budgets, and the buffers.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "err.h"
#include "proc.h"
#include "sbevent.h"
#include "trigev.h"
#include "capture.h"

/* ---- targets ---- */

int
mt_cap_find_program(const char *name, char *out, size_t outsz)
{
	const char *path = getenv("PATH"), *d;

	if (strchr(name, '/') != NULL)
		return (size_t)snprintf(out, outsz, "%s", name) < outsz ? 0 : -1;
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (d = path; *d != '\0';) {
		size_t k = strcspn(d, ":");

		if (k > 0 && (size_t)snprintf(out, outsz, "%.*s/%s", (int)k, d,
		    name) < outsz && access(out, X_OK) == 0)
			return 0;
		d += k;
		if (*d == ':')
			d++;
	}
	return -1;
}

static int
spawn(struct mt_cap *c)
{
	int gate[2], ex[2];
	pid_t pid;

	if (pipe2(gate, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(ex, O_CLOEXEC) < 0) {
		close(gate[0]);
		close(gate[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(gate[0]);
		close(gate[1]);
		close(ex[0]);
		close(ex[1]);
		return -1;
	}
	if (pid == 0) {
		char b = 0;
		int e;

		close(gate[1]);
		close(ex[0]);
		/* Wait until the events are open; EOF: we died, give up. */
		if (read(gate[0], &b, 1) != 1 || b != 'g')
			_exit(127);
		/* With -o - our stdout carries the snapshot: the program
		 * writes to stderr instead. */
		if (strcmp(c->o->output, "-") == 0 &&
		    dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		if (c->ops->exec != NULL)
			c->ops->exec(c);
		else
			execvp(c->o->argv[0], c->o->argv);
		e = errno;
		(void)!write(ex[1], &e, sizeof(e));
		_exit(127);
	}
	close(gate[0]);
	close(ex[1]);
	c->child = pid;
	c->gate_w = gate[1];
	c->exec_r = ex[0];
	return 0;
}

/* Open the gate; returns 0 once the child exec'd, else its errno. */
int
mt_cap_open_gate(struct mt_cap *c)
{
	int e = 0;
	ssize_t n;

	if (c->gate_w < 0)
		return 0;
	(void)!write(c->gate_w, "g", 1);
	close(c->gate_w);
	c->gate_w = -1;
	do
		n = read(c->exec_r, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->exec_r);
	c->exec_r = -1;
	return n == (ssize_t)sizeof(e) ? e : 0;
}

/*
 * The executable of running process @pid (@link is /proc/PID/exe) as
 * mt-capture can open it: in a container, through /proc/PID/root, not a
 * same-named file of this mount namespace.  Returns 0 or -1 (errno).
 */
static int
target_exe(pid_t pid, const char *link, char *out, size_t outsz)
{
	char name[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (stat(link, &st) < 0 ||
	    (n = readlink(link, name, sizeof(name) - 1)) < 0)
		return -1;
	name[n] = '\0';
	if (mt_proc_target_file(pid, name, major(st.st_dev),
	    minor(st.st_dev), (uint64_t)st.st_ino, out, outsz) == 0)
		return 0;
	/* Deleted or unreachable: the link itself opens the file. */
	snprintf(out, outsz, "%s", link);
	return 0;
}

int
mt_cap_setup_targets(struct mt_cap *c)
{
	size_t i;

	for (i = 0; i < MT_CAP_MAX_PIDS; i++)
		c->pidfd[i] = -1;
	if (!c->o->attach) {
		char cand[PATH_MAX];

		if (mt_cap_find_program(c->o->argv[0], cand, sizeof(cand)) < 0 ||
		    realpath(cand, c->exe) == NULL) {
			warnx("cannot find program '%s'", c->o->argv[0]);
			return -1;
		}
		if (spawn(c) < 0) {
			warn("cannot start '%s'", c->o->argv[0]);
			return -1;
		}
		c->targets[0] = c->child;
		c->alive[0] = 1;
		c->ntargets = c->nalive = 1;
		return 0;
	}
	for (i = 0; i < c->o->npids; i++) {
		pid_t p = c->o->pids[i];
		char path[64];

		if (kill(p, 0) < 0 && errno == ESRCH) {
			warnx("no process %d", (int)p);
			return -1;
		}
		if (mt_proc_state(p) == 'T' && !c->o->quiet)
			fprintf(stderr, "mt-capture: process %d is stopped: "
			    "it stays stopped, and is recorded once it "
			    "continues (SIGCONT)\n", (int)p);
		c->targets[i] = p;
		c->alive[i] = 1;
		c->pidfd[i] = (int)syscall(SYS_pidfd_open, p, 0);
		if (i == 0) {
			snprintf(path, sizeof(path), "/proc/%d/exe", (int)p);
			if (target_exe(p, path, c->exe, sizeof(c->exe)) < 0) {
				if (errno == EACCES || errno == EPERM)
					warnx("cannot record process %d: "
					    "permission denied (only processes "
					    "you may ptrace: your own, or any "
					    "with CAP_SYS_PTRACE; see also "
					    "sysctl kernel.yama.ptrace_scope)",
					    (int)p);
				else
					warn("cannot read '%s'", path);
				return -1;
			}
		}
	}
	c->ntargets = c->nalive = c->o->npids;
	return 0;
}

int
mt_cap_setup_triggers(struct mt_cap *c)
{
	char msg[PATH_MAX + 256];
	pid_t tids[4096];
	size_t i, n = 0;
	int rc, k, inherit;

	for (i = 0; i < c->o->ntriggers; i++) {
		rc = mt_trig_resolve(c->o->triggers[i],
		    c->o->attach ? c->targets[0] : 0, c->exe, &c->sites[i],
		    msg, sizeof(msg));
		if (rc < 0) {
			warnx("--trigger '%s': %s", c->o->triggers[i], msg);
			return rc;
		}
		if (!c->o->quiet)
			fprintf(stderr, "mt-capture: trigger '%s' is %s\n",
			    c->o->triggers[i], c->sites[i].desc);
	}
	c->nsites = c->o->ntriggers;
	for (i = 0; i < c->o->nfilters; i++) {
		rc = mt_trig_resolve_range(c->o->filters[i],
		    c->o->attach ? c->targets[0] : 0, c->exe, &c->fsites[i],
		    msg, sizeof(msg));
		if (rc < 0) {
			warnx("--filter '%s': %s", c->o->filters[i], msg);
			return rc;
		}
		if (!c->o->quiet)
			fprintf(stderr, "mt-capture: filter '%s' is %s, %llu "
			    "bytes\n", c->o->filters[i], c->fsites[i].desc,
			    (unsigned long long)c->fsites[i].size);
	}
	c->nfsites = c->o->nfilters;
	if (c->nfsites > 0 && c->ops != &mt_cap_backend_pt)
		warnx("--filter: the %s backend records every instruction; "
		    "only live PT applies IP filters", c->ops->name);
	if (c->nsites == 0 || c->ops->own_triggers)
		return 0;
	/* The targets' threads: a uprobe traps only in their processes. */
	for (i = 0; i < c->ntargets && n < 4096; i++)
		if ((k = mt_proc_threads(c->targets[i], tids + n,
		    4096 - n)) > 0)
			n += (size_t)k;
	/*
	 * Inherited into new threads and child processes: the live PT
	 * backend follows both (scan_forks), so their hits count.
	 */
	inherit = c->ops->trig_forks ? MT_TRIG_INHERIT : 0;
	rc = mt_trig_open(&c->trig, c->sites, c->nsites, c->o->sysfs_root,
	    c->ops->trig_threads ? tids : NULL, n, inherit, msg, sizeof(msg));
	if (rc < 0)
		warnx("%s", msg);
	else if (c->o->verbose)
		fprintf(stderr, "mt-capture: triggers: %s\n",
		    mt_trig_how(c->trig));
	return rc;
}

/*
 * "hw:" triggers: breakpoints need run-time addresses, known once the
 * code is mapped (run: after the exec).
 */
int
mt_cap_arm_hw_triggers(struct mt_cap *c)
{
	char msg[512];
	pid_t tids[4096];
	size_t s, t;
	int rc, n;

	for (s = 0; s < c->nsites; s++) {
		if (!c->sites[s].hw)
			continue;
		mt_cap_fix_refresh(c);
		for (t = 0; t < c->ntargets; t++) {
			size_t f;

			for (f = 0; f < c->nfix; f++)
				if (c->fix[f].pid == c->targets[t] &&
				    c->fix[f].site == s)
					break;
			if (f == c->nfix) {
				warnx("--trigger '%s': %s is not mapped in "
				    "process %d yet; a hardware breakpoint "
				    "needs its address (a uprobe trigger, "
				    "without hw:, can wait for it)",
				    c->o->triggers[s], c->sites[s].path,
				    (int)c->targets[t]);
				return -1;
			}
			n = mt_proc_threads(c->targets[t], tids, 4096);
			if (n <= 0)
				continue;
			rc = mt_trig_open_hw(c->trig, (unsigned)s,
			    c->fix[f].addr, tids, (size_t)n, msg, sizeof(msg));
			if (rc < 0) {
				warnx("%s", msg);
				return rc;
			}
		}
	}
	return 0;
}

/*
 * trig_forks: a thread a target created after the trigger events were
 * bound and before the sideband (whose FORK records bind the later
 * ones) was opened gets its events now.
 */
int
mt_cap_bind_new_threads(struct mt_cap *c)
{
	pid_t tids[4096];
	size_t i;
	int k, j, rc;

	if (!c->ops->trig_forks || c->trig == NULL)
		return 0;
	for (i = 0; i < c->ntargets; i++) {
		k = mt_proc_threads(c->targets[i], tids, 4096);
		for (j = 0; j < k; j++)
			if ((rc = mt_cap_trig_thread(c, tids[j])) < 0)
				return rc;
	}
	return 0;
}

int
mt_cap_setup_sideband(struct mt_cap *c)
{
	pid_t tids[4096];
	size_t n = 0, i;
	char msg[512];
	int k, rc;

	if (c->ops->no_sideband)
		return 0;
	for (i = 0; i < c->ntargets && n < 4096; i++) {
		k = c->o->attach ? mt_proc_threads(c->targets[i], tids + n,
		    4096 - n) : 0;
		if (k <= 0) {
			tids[n] = c->targets[i];
			k = 1;
		}
		n += (size_t)k;
	}
	rc = mt_sbev_open(&c->sb, tids, n, c->plan.sb_pages, c->o->kernel,
	    c->ops->switch_sideband, c->sb_per_thread, msg, sizeof(msg));
	if (rc < 0) {
		warnx("%s", msg);
		return rc;
	}
	(void)mt_sbev_timeconv(c->sb, &c->timeconv);
	if (c->o->kernel && mt_sbev_kernel_err(c->sb) != 0)
		warnx("--kernel: the CPU-wide events for kernel code loaded or "
		    "patched while recording were refused (%s; they need "
		    "CAP_PERFMON or kernel.perf_event_paranoid <= 0): BPF JIT "
		    "code and text patches of the recording are not described",
		    strerror(mt_sbev_kernel_err(c->sb)));
	return 0;
}

/*
 * Descriptors: an event per (thread, CPU) for the sideband (and per-CPU
 * PT), per (trigger, CPU) for uprobes, per (trigger, thread, CPU) when
 * they are bound to the threads.  Raise the soft limit to the hard one;
 * refuse up front when even that is too low.  Threads created later are
 * not counted (inherited events need no new descriptor; bound uprobes
 * do).
 */
static int
plan_fds(struct mt_cap *c, struct mt_perfenv *e)
{
	uint64_t threads = 0, need, rest;
	char msg[1024];
	int rc;
	pid_t tids[4096];
	size_t i;
	int k;

	if (mt_perfenv_raise_nofile(e) < 0)
		warn("cannot raise the open-files limit (ulimit -n)");
	for (i = 0; i < c->ntargets; i++) {
		k = c->o->attach ? mt_proc_threads(c->targets[i], tids,
		    4096) : 1;
		threads += k > 0 ? (uint64_t)k : 1;
	}
	rest = c->plan.trig_rings * (c->ops->trig_threads ? threads : 1) +
	    (c->ptcfg.per_cpu ? threads * (uint64_t)e->ncpus :
	    c->plan.pt_bufs * (1 + c->o->ntriggers)) + 64;
	need = threads * (uint64_t)e->ncpus + rest;
	if (need <= e->nofile)
		return 0;
	/*
	 * Per-thread PT buffers follow no new thread anyway: one sideband
	 * event per thread (threads x 1 descriptors), each new thread
	 * getting its own from its FORK record (scan_forks), if that fits,
	 * with the locked-memory budget planned again for a ring per
	 * thread.
	 */
	if (c->ops->trig_forks && !c->ptcfg.per_cpu &&
	    threads + rest <= e->nofile) {
		c->sb_per_thread = 1;
		c->plan.sb_rings = (size_t)threads;
		c->plan.sb_pages = SB_DATA_PAGES;
		rc = mt_perfenv_plan(e, &c->plan, msg, sizeof(msg));
		if (rc < 0 || (msg[0] != '\0' && !c->o->quiet))
			warnx("%s", msg);
		if (rc < 0)
			return rc;
		if (!c->o->quiet)
			fprintf(stderr, "mt-capture: %llu threads x %d CPUs "
			    "sideband events would pass the open-files limit "
			    "%llu: one per thread instead (a new thread's "
			    "from its FORK record)\n",
			    (unsigned long long)threads, e->ncpus,
			    (unsigned long long)e->nofile);
		return 0;
	}
	warnx("too many open files: recording %llu threads on %d CPUs needs "
	    "about %llu descriptors (one event per thread and CPU), but the "
	    "limit is %llu (hard limit; ulimit -Hn): raise it, e.g. in "
	    "/etc/security/limits.conf or with prlimit --nofile",
	    (unsigned long long)threads, e->ncpus, (unsigned long long)need,
	    (unsigned long long)e->nofile);
	return -MT_E_LIMIT;
}

/*
 * Size the perf rings to what they need and fit them to the locked-memory
 * budget before any is mapped (perfenv.h): shrink, saying so, or refuse
 * with the numbers.  Buffers of threads created later are not counted.
 */
int
mt_cap_plan_rings(struct mt_cap *c)
{
	struct mt_perf_plan *p = &c->plan;
	struct mt_perfenv e;
	pid_t tids[4096];
	char msg[1024];
	size_t i;
	int k, rc;

	mt_perfenv_read(&e, c->o->sysfs_root);
	memset(p, 0, sizeof(*p));
	p->page = (size_t)sysconf(_SC_PAGESIZE);
	p->sb_rings = (size_t)e.ncpus;
	p->sb_pages = SB_DATA_PAGES;
	p->pt_pages = PT_DATA_PAGES;
	p->aux_bytes = c->o->snapshot_size;
	for (i = 0; i < c->o->ntriggers; i++)
		if (strncmp(c->o->triggers[i], "hw:", 3) != 0)
			p->trig_rings += (size_t)e.ncpus;
	if (c->ops == &mt_cap_backend_pt && c->ptcfg.per_cpu)
		p->pt_bufs = (size_t)e.ncpus;
	else if (c->ops == &mt_cap_backend_pt)
		for (i = 0; i < c->ntargets; i++) {
			k = c->o->attach && c->o->all_threads ?
			    mt_proc_threads(c->targets[i], tids, 4096) : 1;
			p->pt_bufs += k > 0 ? (size_t)k : 1;
		}
	rc = mt_perfenv_plan(&e, p, msg, sizeof(msg));
	if (rc < 0 || (msg[0] != '\0' && !c->o->quiet))
		warnx("%s", msg);
	if (rc < 0)
		return rc;
	return plan_fds(c, &e);
}

const struct mt_perf_plan *
mt_cap_plan(const struct mt_cap *c)
{
	return &c->plan;
}

int
mt_cap_setup_buffers(struct mt_cap *c)
{
	pid_t tids[4096];
	size_t i;
	int k, j, rc;

	if (c->ptcfg.per_cpu) {
		int cpus[4096];
		int n = mt_perfenv_online_cpus(c->o->sysfs_root, cpus, 4096);

		for (j = 0; j < n; j++)
			if ((rc = mt_cap_buf_add(c, -1, -1, cpus[j],
			    NULL)) < 0 && rc != -MT_E_NOTFOUND)
				return rc;
		return 0;
	}
	for (i = 0; i < c->ntargets; i++) {
		if (c->o->attach && c->o->all_threads)
			k = mt_proc_threads(c->targets[i], tids, 4096);
		else
			k = 0;
		if (k <= 0) {
			tids[0] = c->targets[i];
			k = 1;
		}
		for (j = 0; j < k; j++)
			if ((rc = mt_cap_buf_add(c, c->targets[i], tids[j], -1,
			    NULL)) < 0)
				return rc;
	}
	return 0;
}
