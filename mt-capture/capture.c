/* SPDX-License-Identifier: MIT */
/*
 * The capture framework: the run/attach lifecycle of backend.h, shared by
 * the live PT and the emulate backends.  It starts or finds the targets,
 * opens the sideband event and the uprobe triggers, drives the backend,
 * and writes each snapshot (snap.h) atomically.  It is the body of the run
 * and attach commands, so it reports progress and errors on stderr.
 *
 * Lifecycle guarantees: every path out of mt_cap_main goes through
 * cleanup(), which calls ops->detach (targets left running, untraced),
 * closes every event and, in run mode, never leaves the child gated.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "sideband.h"
#include "snap.h"
#include "backend.h"
#include "perfenv.h"
#include "proc.h"
#include "ptattr.h"
#include "sbevent.h"
#include "snapout.h"
#include "sysfs.h"
#include "trigev.h"
#include "version.h"

#define SB_DATA_PAGES	32		/* 128 KiB sideband ring per CPU,
					 * drained every 100 ms or so */
#define PT_DATA_PAGES	2		/* the PT events' own records */
#define MAX_BUNDLE	(512ull << 20)	/* bigger ELF files are not bundled */
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

/* Signal state: the handler may only touch these. */
static volatile sig_atomic_t g_signal;	/* first SIGINT/TERM/HUP */
static volatile sig_atomic_t g_nsignals;
static int g_wake_w = -1;		/* self-pipe, write end */
static int g_wake_r = -1;

static void
on_signal(int signo)
{
	int e = errno;

	if (signo != SIGCHLD) {
		if (g_signal == 0)
			g_signal = signo;
		g_nsignals++;
	}
	if (g_wake_w >= 0)
		(void)!write(g_wake_w, "x", 1);
	errno = e;
}

static int
install_signals(void)
{
	struct sigaction sa;
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	g_wake_r = p[0];
	g_wake_w = p[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* ---- accessors for backends ---- */

const struct mt_cap_opts *
mt_cap_opts(const struct mt_cap *c)
{
	return c->o;
}

const struct mt_snap_ptcfg *
mt_cap_ptcfg(const struct mt_cap *c)
{
	return &c->ptcfg;
}

const struct mt_snap_timeconv *
mt_cap_timeconv(const struct mt_cap *c)
{
	return &c->timeconv;
}

void
mt_cap_set_priv(struct mt_cap *c, void *priv)
{
	c->priv = priv;
}

void *
mt_cap_priv(const struct mt_cap *c)
{
	return c->priv;
}

int
mt_cap_filter(const struct mt_cap *c, size_t i, const char **path,
    uint64_t *offset, uint64_t *size)
{
	if (i >= c->nfsites)
		return -MT_E_NOTFOUND;
	*path = c->fsites[i].path;
	*offset = c->fsites[i].offset;
	*size = c->fsites[i].size;
	return 0;
}

int
mt_cap_trigger_site(const struct mt_cap *c, size_t i, const char **path,
    uint64_t *offset, int *hw)
{
	if (i >= c->nsites)
		return -MT_E_NOTFOUND;
	*path = c->sites[i].path;
	*offset = c->sites[i].offset;
	*hw = c->sites[i].hw;
	return 0;
}

const char *
mt_cap_exe(const struct mt_cap *c)
{
	return c->exe;
}

size_t
mt_cap_ntargets(const struct mt_cap *c)
{
	return c->ntargets;
}

pid_t
mt_cap_target(const struct mt_cap *c, size_t i)
{
	return i < c->ntargets ? c->targets[i] : -1;
}

size_t
mt_cap_nbufs(const struct mt_cap *c)
{
	return c->nbufs;
}

struct mt_cap_buf *
mt_cap_buf(struct mt_cap *c, size_t i)
{
	return i < c->nbufs ? c->bufs[i] : NULL;
}

struct mt_cap_buf *
mt_cap_buf_find(struct mt_cap *c, pid_t tid)
{
	size_t i;

	for (i = 0; i < c->nbufs; i++)
		if (c->bufs[i]->tid == tid)
			return c->bufs[i];
	return NULL;
}

int
mt_cap_buf_add(struct mt_cap *c, pid_t pid, pid_t tid, int cpu,
    struct mt_cap_buf **out)
{
	struct mt_cap_buf *b;
	char msg[512];
	int rc;

	if (out != NULL)
		*out = NULL;
	if (c->nbufs == c->capbufs) {
		size_t n = c->capbufs ? c->capbufs * 2 : 16;
		struct mt_cap_buf **nb = realloc(c->bufs, n * sizeof(*nb));

		if (nb == NULL)
			return -MT_E_NOMEM;
		c->bufs = nb;
		c->capbufs = n;
	}
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return -MT_E_NOMEM;
	b->pid = pid;
	b->tid = tid;
	b->cpu = cpu;
	mt_ring_wrap_init(&b->wrap);
	msg[0] = '\0';
	rc = c->ops->buf_open(c, b, msg, sizeof(msg));
	if (rc < 0) {
		if (msg[0] != '\0')
			warnx("%s", msg);
		free(b);
		return rc;
	}
	c->bufs[c->nbufs++] = b;
	if (out != NULL)
		*out = b;
	return 0;
}

static int
target_index(const struct mt_cap *c, pid_t pid)
{
	size_t i;

	for (i = 0; i < c->ntargets; i++)
		if (c->targets[i] == pid)
			return (int)i;
	return -1;
}

/*
 * Say how target @pid ended when it did not exit with status 0: the
 * snapshot's reason is "exit" either way, and mt-capture's own status
 * stays 0 (a snapshot was written).  A status of 0 also stands for
 * "unknown" (a pidfd says only that a process ended).
 */
static void
report_end(pid_t pid, int status)
{
	const char *abbrev;
	int sig;

	if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		warnx("process %d exited with status %d", (int)pid,
		    WEXITSTATUS(status));
	else if (WIFSIGNALED(status)) {
		sig = WTERMSIG(status);
		abbrev = sigabbrev_np(sig);
		warnx("process %d was killed by signal %d (SIG%s: %s)%s",
		    (int)pid, sig, abbrev != NULL ? abbrev : "?",
		    strsignal(sig), WCOREDUMP(status) ? ", core dumped" : "");
	}
}

int
mt_cap_note_exit(struct mt_cap *c, pid_t pid, int status)
{
	int i = target_index(c, pid);

	if (pid == c->child && !c->child_reaped) {
		c->child_reaped = 1;
		c->child_status = status;
	}
	if (i >= 0 && c->alive[i]) {
		c->alive[i] = 0;
		c->nalive--;
		report_end(pid, status);
	}
	return c->nalive == 0;
}

void
mt_cap_gt_full(const struct mt_cap *c)
{
	warnx("ground truth '%s' reached its cap of %llu bytes "
	    "(--ground-truth-max): no more is written to it; the capture "
	    "goes on", c->o->ground_truth,
	    (unsigned long long)c->o->ground_truth_max);
}

static void
swap_elfs(struct mt_snap *a, struct mt_snap *b)
{
	struct mt_snap_elf *e = a->elfs;
	size_t n = a->nelfs;

	a->elfs = b->elfs;
	a->nelfs = b->nelfs;
	b->elfs = e;
	b->nelfs = n;
}

/* Drop the ELF chunks of @s that no MMAP chunk of @s names any more. */
static void
prune_elfs(struct mt_snap *s)
{
	size_t i, j, k = 0;

	for (i = 0; i < s->nelfs; i++) {
		struct mt_snap_elf *e = &s->elfs[i];

		for (j = 0; j < s->nmmaps; j++)
			if (s->mmaps[j].build_id_len == e->build_id_len &&
			    memcmp(s->mmaps[j].build_id, e->build_id,
			    e->build_id_len) == 0)
				break;
		if (j == s->nmmaps) {
			free(e->path);
			free(e->data);
			continue;
		}
		s->elfs[k++] = *e;
	}
	s->nelfs = k;
}

/*
 * (Re)read target @i's process, threads, maps and files.  The files
 * bundled by the previous description are reused by build-id instead of
 * being read again (--multi-snapshot: every snapshot describes again).
 */
static void
describe(struct mt_cap *c, size_t i)
{
	struct mt_snap *s = calloc(1, sizeof(*s));
	size_t skipped = 0;

	if (s == NULL)
		return;
	mt_snap_init(s);
	if (c->desc[i] != NULL)
		swap_elfs(s, c->desc[i]);	/* known build-ids: not read */
	if ((c->ops->describe != NULL ? c->ops->describe(c, c->targets[i], s) :
	    mt_proc_describe(s, c->targets[i], c->o->all_threads,
	    c->o->bundle, MAX_BUNDLE, &skipped)) < 0 || s->nmmaps == 0) {
		/* Gone, or a zombie without maps: keep the older one. */
		if (c->desc[i] != NULL)
			swap_elfs(s, c->desc[i]);
		mt_snap_release(s);
		free(s);
		return;
	}
	prune_elfs(s);
	if (c->desc[i] != NULL) {
		mt_snap_release(c->desc[i]);
		free(c->desc[i]);
	}
	c->desc[i] = s;
}

void
mt_cap_note_exiting(struct mt_cap *c, pid_t pid)
{
	int i = target_index(c, pid);

	if (i >= 0)
		describe(c, (size_t)i);
}

/* ---- trigger int3 bytes ---- */

static uint64_t
sb_total(const struct mt_cap *c)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; c->sb != NULL && i < mt_sbev_nrings(c->sb); i++)
		n += mt_sbev_data(c->sb, i, NULL)->len;
	return n;
}

struct fixwalk {
	struct mt_cap *c;
	pid_t pid;
};

/* Note each trigger site in mapping @m (never a match: all are seen). */
static int
fix_map(const struct mt_proc_map *m, void *arg)
{
	struct fixwalk *w = arg;
	struct mt_cap *c = w->c;
	size_t s;

	for (s = 0; s < c->nsites; s++) {
		const struct mt_trig_site *st = &c->sites[s];
		struct fixsite *nf;

		if (strcmp(st->path, m->path) != 0 || st->offset < m->pgoff ||
		    st->offset - m->pgoff >= m->end - m->start)
			continue;
		nf = realloc(c->fix, (c->nfix + 1) * sizeof(*nf));
		if (nf == NULL)
			return 1;
		c->fix = nf;
		nf[c->nfix].pid = w->pid;
		nf[c->nfix].addr = m->start + st->offset - m->pgoff;
		nf[c->nfix].orig = st->orig;
		nf[c->nfix].site = s;
		c->nfix++;
	}
	return 0;
}

static void
fix_refresh(struct mt_cap *c)
{
	struct fixwalk w = { c, 0 };
	struct mt_proc_map m;
	size_t t;

	free(c->fix);
	c->fix = NULL;
	c->nfix = 0;
	c->fix_valid = 1;
	c->fix_sb_len = sb_total(c);
	for (t = 0; t < c->ntargets; t++) {
		w.pid = c->targets[t];
		(void)mt_proc_find_map(w.pid, fix_map, &w, &m);
	}
}

/* The process a thread belongs to (Tgid in /proc/TID/status). */
static pid_t
tgid_of(pid_t tid)
{
	char path[64], line[128];
	FILE *fp;
	pid_t tgid = tid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	fp = fopen(path, "re");
	if (fp == NULL)
		return tid;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "Tgid:", 5) == 0) {
			tgid = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(fp);
	return tgid;
}

void
mt_cap_fix_code(const struct mt_cap *cc, pid_t pid, uint64_t addr,
    uint8_t *buf, size_t len)
{
	struct mt_cap *c = (struct mt_cap *)(uintptr_t)cc;
	size_t i;

	if (c->nsites == 0 || memchr(buf, 0xcc, len) == NULL)
		return;
	/* New mappings arrive as sideband records: recompute then. */
	if (!c->fix_valid || sb_total(c) != c->fix_sb_len)
		fix_refresh(c);
	if (target_index(c, pid) < 0)
		pid = tgid_of(pid);
	for (i = 0; i < c->nfix; i++) {
		const struct fixsite *f = &c->fix[i];

		if (f->pid == pid && !c->sites[f->site].hw &&
		    f->addr >= addr && f->addr - addr < len &&
		    buf[f->addr - addr] == 0xcc)
			buf[f->addr - addr] = f->orig;
	}
}

/* ---- polling ---- */

/*
 * Does anything still read our standard output?  A pipe whose reader
 * closed it polls POLLERR, a socket whose peer left POLLHUP; a regular
 * file or /dev/null never does.  A closed fd 1 counts as gone.
 */
static int
stdout_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = 0 };

	if (fcntl(STDOUT_FILENO, F_GETFD) < 0)
		return 1;
	return poll(&p, 1, 0) == 1 &&
	    (p.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
}

/* stdout_gone() at most every 50 ms: mt_cap_poll runs between steps. */
static int
reader_left(struct mt_cap *c)
{
	struct timespec now;

	if (!c->to_stdout)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - c->out_checked.tv_sec) * 1000000000LL +
	    (now.tv_nsec - c->out_checked.tv_nsec) < 50000000LL)
		return 0;
	c->out_checked = now;
	return stdout_gone();
}

static int
ms_until(const struct timespec *t)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(t->tv_sec - now.tv_sec) * 1000 +
	    (t->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
}

static int
add_hit(struct mt_cap *c, const struct mt_trig_hit *h)
{
	if (c->nhits == MAX_HITS) {
		/* Keep the first hit (it caused the snapshot) and the
		 * latest ones. */
		memmove(c->hits + 1, c->hits + 1 + MAX_HITS / 2,
		    (MAX_HITS - 1 - MAX_HITS / 2) * sizeof(*c->hits));
		c->nhits -= MAX_HITS / 2;
		c->hits_dropped += MAX_HITS / 2;
		if (c->hits_seen > c->nhits)
			c->hits_seen = c->nhits;
	}
	if (c->nhits == c->caphits) {
		size_t n = c->caphits ? c->caphits * 2 : 16;
		struct mt_cap_hit *nh = realloc(c->hits, n * sizeof(*nh));

		if (nh == NULL)
			return -MT_E_NOMEM;
		c->hits = nh;
		c->caphits = n;
	}
	c->hits[c->nhits].time = h->time;
	c->hits[c->nhits].pid = (pid_t)h->pid;
	c->hits[c->nhits].tid = (pid_t)h->tid;
	c->hits[c->nhits].ip = h->ip;
	c->hits[c->nhits].trigger = h->trigger;
	c->hits[c->nhits].snapshot = -1;
	c->nhits++;
	return 0;
}

/* Notice exits ourselves (backends that do not reap). */
static void
check_exits(struct mt_cap *c)
{
	size_t i;
	int st;

	if (c->ops->reaps_children)
		return;
	if (c->child > 0 && !c->child_reaped) {
		pid_t r = waitpid(c->child, &st, WNOHANG);

		if (r == c->child || (r < 0 && errno == ECHILD))
			mt_cap_note_exit(c, c->child, r == c->child ? st : 0);
	}
	for (i = 0; i < c->ntargets; i++) {
		struct pollfd p = { .fd = c->pidfd[i], .events = POLLIN };

		if (c->alive[i] && c->pidfd[i] >= 0 && poll(&p, 1, 0) == 1)
			mt_cap_note_exit(c, c->targets[i], 0);
		else if (c->alive[i] && c->pidfd[i] < 0 && c->child == 0 &&
		    kill(c->targets[i], 0) < 0 && errno == ESRCH)
			mt_cap_note_exit(c, c->targets[i], 0);
	}
}

int
mt_cap_add_hit(struct mt_cap *c, pid_t pid, pid_t tid, uint64_t ip,
    unsigned trigger, uint64_t time)
{
	struct mt_trig_hit h;

	memset(&h, 0, sizeof(h));
	h.time = time;
	h.pid = (uint32_t)pid;
	h.tid = (uint32_t)tid;
	h.ip = ip;
	h.trigger = trigger;
	return add_hit(c, &h);
}

/*
 * Live PT with per-CPU buffers (--all-threads) inherits into the
 * targets' child processes, which the trace then holds: make such a
 * descendant a target too, so its trigger hits count and its maps and
 * files go into the snapshot (issue 19).  Returns 1 if @pid is a target
 * (now), else 0.
 */
static int
adopt(struct mt_cap *c, pid_t pid)
{
	pid_t a = pid;
	int depth;

	if (target_index(c, pid) >= 0)
		return 1;
	if (!c->ptcfg.per_cpu || pid <= 0)
		return 0;
	for (depth = 0; depth < 64 && target_index(c, a) < 0; depth++)
		if ((a = mt_proc_ppid(a)) <= 1)
			return 0;
	if (target_index(c, a) < 0)
		return 0;
	return mt_cap_follow(c, pid, a);
}

int
mt_cap_follow(struct mt_cap *c, pid_t pid, pid_t parent)
{
	size_t n = c->ntargets;

	if (target_index(c, pid) >= 0)
		return 1;
	if (n == MT_CAP_MAX_PIDS || pid <= 0)
		return 0;
	c->targets[n] = pid;
	c->alive[n] = 1;
	c->pidfd[n] = (int)syscall(SYS_pidfd_open, pid, 0);
	c->desc[n] = NULL;
	c->ntargets++;
	c->nalive++;
	if (!c->o->quiet)
		fprintf(stderr, "mt-capture: following process %d, a child "
		    "of process %d\n", (int)pid, (int)parent);
	return 1;
}

int
mt_cap_trig_thread(struct mt_cap *c, pid_t tid)
{
	char msg[PATH_MAX + 256] = "";
	int rc = mt_trig_add_thread(c->trig, tid, msg, sizeof(msg));

	if (rc < 0)
		warnx("%s", msg[0] ? msg : mt_strerror(rc));
	return rc;
}

size_t
mt_cap_trim_sideband(struct mt_cap *c, uint64_t before)
{
	size_t r, n;

	if (c->sb == NULL)
		return 0;
	n = mt_sbev_trim(c->sb, before);
	/* Every record left was scanned for FORKs already. */
	for (r = 0; r < c->nfork_off && r < mt_sbev_nrings(c->sb); r++)
		c->fork_off[r] = mt_sbev_data(c->sb, r, NULL)->len;
	return n;
}

/*
 * The new sideband FORK records: adopt the child processes they announce
 * (per-CPU live PT follows them), give each new thread of a target its
 * sideband event when they are per thread (plan_fds; its records from
 * then on), and with trig_forks bind the trigger
 * uprobes to each new thread of a target (the record comes after the
 * clone: a hit of the thread before mt-capture reads it is not seen; the
 * kernel still traps there, the thread's process having the breakpoint,
 * but no event of that thread is scheduled to count it).
 */
static void
scan_forks(struct mt_cap *c)
{
	size_t r, n = mt_sbev_nrings(c->sb), nnew = 0, k;
	int bind = c->ops->trig_forks && c->trig != NULL &&
	    !mt_trig_inherits(c->trig);
	pid_t fresh[256];
	char msg[512];

	if (!c->ptcfg.per_cpu && !bind && !c->sb_per_thread)
		return;
	if (c->nfork_off < n) {
		size_t *no = realloc(c->fork_off, n * sizeof(*no));

		if (no == NULL)
			return;
		memset(no + c->nfork_off, 0, (n - c->nfork_off) *
		    sizeof(*no));
		c->fork_off = no;
		c->nfork_off = n;
	}
	for (r = 0; r < n; r++) {
		const struct mt_wbuf *w = mt_sbev_data(c->sb, r, NULL);
		struct mt_sb_reader rd;
		struct mt_sb_rec rec;

		mt_sb_reader_init(&rd, w->p + c->fork_off[r], w->len -
		    c->fork_off[r], mt_sbev_sample_type(c->sb), 1, 0);
		while (mt_sb_next(&rd, &rec) == 0) {
			if (rec.type != MT_SB_FORK)
				continue;
			/* (the record says whose: the child may be gone) */
			if (rec.u.task.pid != rec.u.task.ppid &&
			    c->ptcfg.per_cpu &&
			    target_index(c, (pid_t)rec.u.task.ppid) >= 0)
				(void)mt_cap_follow(c, (pid_t)rec.u.task.pid,
				    (pid_t)rec.u.task.ppid);
			if (target_index(c, (pid_t)rec.u.task.pid) < 0)
				continue;
			if (bind)
				(void)mt_cap_trig_thread(c,
				    (pid_t)rec.u.task.tid);
			if (c->sb_per_thread && nnew < 256)
				fresh[nnew++] = (pid_t)rec.u.task.tid;
		}
		c->fork_off[r] = w->len;
	}
	/* (after the scan: a new ring may move the others' buffers) */
	for (k = 0; k < nnew; k++)
		if (mt_sbev_add_thread(c->sb, fresh[k], msg, sizeof(msg)) < 0)
			warnx("thread %d: %s", (int)fresh[k], msg);
}

/*
 * A trigger hit of process @pid, not a target: adopt it if it descends
 * from one.  A child that hit and exited (reaped) has no /proc entry to
 * say whose it is; then its FORK record, in the sideband drained now.
 */
static int
adopt_cb(void *arg, pid_t pid)
{
	struct mt_cap *c = arg;

	if (adopt(c, pid))
		return 1;
	if (!c->ptcfg.per_cpu || c->sb == NULL || kill(pid, 0) == 0 ||
	    errno != ESRCH || mt_sbev_drain(c->sb) < 0)
		return 0;
	scan_forks(c);
	return target_index(c, pid) >= 0;
}

/* The longest mt_cap_poll() waits without draining the sideband. */
static int
poll_ms(const struct mt_cap *c)
{
	return (c->ops->trig_forks && c->trig != NULL &&
	    !mt_trig_inherits(c->trig)) || c->sb_per_thread ? 10 : 100;
}

int
mt_cap_poll(struct mt_cap *c, int timeout_ms)
{
	struct mt_trig_hit hits[64];
	size_t n = 0, k, i, nh;
	char junk[64];
	int rc;

	if (g_signal != 0)
		return MT_CAP_EV_SIGNAL;
	if (timeout_ms != 0) {
		/* Every trigger ring, however many (triggers x CPUs). */
		size_t want = 1 + mt_trig_fds(c->trig, NULL, SIZE_MAX) +
		    c->ntargets;
		struct pollfd *pfd = c->pfd;
		int *fds;

		if (want > c->npfd) {
			pfd = realloc(c->pfd, want * (sizeof(*pfd) +
			    sizeof(int)));
			if (pfd == NULL)
				return -MT_E_NOMEM;
			c->pfd = pfd;
			c->npfd = want;
		}
		fds = (int *)(void *)(pfd + c->npfd);
		/*
		 * Wake at least every 100 ms to drain the sideband; every
		 * 10 ms while new threads are bound from its FORK records
		 * (scan_forks), whose records wake no one: the kernel
		 * counts wakeup_events in samples only (perf_output_sample).
		 */
		if (timeout_ms < 0 || timeout_ms > poll_ms(c))
			timeout_ms = poll_ms(c);
		if (c->has_deadline && ms_until(&c->deadline) < timeout_ms)
			timeout_ms = ms_until(&c->deadline);
		pfd[n].fd = g_wake_r;
		pfd[n++].events = POLLIN;
		k = mt_trig_fds(c->trig, fds, c->npfd - 1 - c->ntargets);
		for (i = 0; i < k; i++) {
			pfd[n].fd = fds[i];
			pfd[n++].events = POLLIN;
		}
		for (i = 0; i < c->ntargets; i++)
			if (c->alive[i] && c->pidfd[i] >= 0 &&
			    !c->ops->reaps_children) {
				pfd[n].fd = c->pidfd[i];
				pfd[n++].events = POLLIN;
			}
		if (poll(pfd, n, timeout_ms) < 0 && errno != EINTR)
			return -MT_E_SYS;
		while (read(g_wake_r, junk, sizeof(junk)) > 0)
			;
	}
	if (g_signal != 0)
		return MT_CAP_EV_SIGNAL;
	/* Hits first: the snapshot (ops->stop) follows at once; the
	 * sideband is drained after the stop. */
	nh = mt_trig_read(c->trig, c->targets, c->ntargets, adopt_cb, c,
	    hits, 64);
	for (i = 0; i < nh; i++)
		if ((rc = add_hit(c, &hits[i])) < 0)
			return rc;
	if (c->nhits > c->hits_seen)
		return MT_CAP_EV_TRIGGER;
	if (c->sb != NULL && (rc = mt_sbev_drain(c->sb)) < 0)
		return rc;
	if (c->sb != NULL)
		scan_forks(c);
	if (c->has_deadline && ms_until(&c->deadline) == 0)
		return MT_CAP_EV_DURATION;
	if (reader_left(c))
		return MT_CAP_EV_OUTPUT_GONE;
	check_exits(c);
	if (c->nalive == 0)
		return MT_CAP_EV_EXIT;
	return MT_CAP_EV_NONE;
}

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
static int
open_gate(struct mt_cap *c)
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

/* ---- snapshots ---- */

static void
copy_desc(struct mt_snap *s, const struct mt_snap *d)
{
	size_t i;

	for (i = 0; i < d->nprocs; i++)
		(void)mt_snap_add_process(s, &d->procs[i]);
	for (i = 0; i < d->nthreads; i++)
		(void)mt_snap_add_thread(s, &d->threads[i]);
	for (i = 0; i < d->nmmaps; i++)
		(void)mt_snap_add_mmap(s, &d->mmaps[i]);
	for (i = 0; i < d->ntexts; i++)
		(void)mt_snap_add_text(s, &d->texts[i]);
	for (i = 0; i < d->nblobs; i++)
		(void)mt_snap_add_blob(s, &d->blobs[i]);
	for (i = 0; i < d->nelfs; i++) {
		size_t j;

		for (j = 0; j < s->nelfs; j++)
			if (s->elfs[j].build_id_len == d->elfs[i].build_id_len &&
			    memcmp(s->elfs[j].build_id, d->elfs[i].build_id,
			    d->elfs[i].build_id_len) == 0)
				break;
		if (j == s->nelfs)
			(void)mt_snap_add_elf(s, &d->elfs[i]);
	}
}

/* A THREAD chunk for every traced thread (also those gone by now). */
static void
add_buf_threads(struct mt_cap *c, struct mt_snap *s)
{
	size_t i, j;

	for (i = 0; i < c->nbufs; i++) {
		struct mt_cap_buf *b = c->bufs[i];
		struct mt_snap_thread t;
		char path[64], name[64] = "";
		FILE *fp;

		if (b->tid < 0)
			continue;
		for (j = 0; j < s->nthreads; j++)
			if (s->threads[j].tid == (uint32_t)b->tid)
				break;
		if (j < s->nthreads)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm",
		    (int)b->pid, (int)b->tid);
		if ((fp = fopen(path, "re")) != NULL) {
			if (fgets(name, sizeof(name), fp) == NULL)
				name[0] = '\0';
			name[strcspn(name, "\n")] = '\0';
			fclose(fp);
		}
		memset(&t, 0, sizeof(t));
		t.pid = (uint32_t)b->pid;
		t.tid = (uint32_t)b->tid;
		t.comm = name;
		(void)mt_snap_add_thread(s, &t);
	}
}

/* Bundle files mapped later (dlopen) from the sideband's MMAP2 records. */
static void
bundle_from_sideband(struct mt_cap *c, struct mt_snap *s)
{
	size_t r, j;

	for (r = 0; r < mt_sbev_nrings(c->sb); r++) {
		const struct mt_wbuf *w = mt_sbev_data(c->sb, r, NULL);
		struct mt_sb_reader rd;
		struct mt_sb_rec rec;

		mt_sb_reader_init(&rd, w->p, w->len,
		    mt_sbev_sample_type(c->sb), 1, 0);
		while (mt_sb_next(&rd, &rec) == 0) {
			const struct mt_sb_mmap *m = &rec.u.mmap;
			struct mt_snap_elf e;
			struct stat st;
			uint8_t *data;
			ssize_t got;
			int fd;

			if (rec.type != MT_SB_MMAP2 ||
			    !(rec.misc & MT_SB_MISC_MMAP_BUILD_ID) ||
			    m->build_id_len == 0 || !(m->prot & 4) ||
			    target_index(c, (pid_t)m->pid) < 0)
				continue;
			for (j = 0; j < s->nelfs; j++)
				if (s->elfs[j].build_id_len >= m->build_id_len &&
				    memcmp(s->elfs[j].build_id, m->build_id,
				    m->build_id_len) == 0)
					break;
			if (j < s->nelfs)
				continue;
			fd = open(m->filename, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (fstat(fd, &st) < 0 ||
			    (uint64_t)st.st_size > MAX_BUNDLE ||
			    (data = malloc((size_t)st.st_size + 1)) == NULL) {
				close(fd);
				continue;
			}
			got = pread(fd, data, (size_t)st.st_size, 0);
			close(fd);
			if (got == (ssize_t)st.st_size) {
				memset(&e, 0, sizeof(e));
				e.build_id_len = m->build_id_len;
				memcpy(e.build_id, m->build_id,
				    m->build_id_len);
				e.path = (char *)(uintptr_t)m->filename;
				e.len = (uint64_t)got;
				e.data = data;
				(void)mt_snap_add_elf(s, &e);
			}
			free(data);
		}
	}
}

/* FILE, FILE-1.snap / FILE.1 for later snapshots. */
static void
snapshot_path(const char *out, unsigned index, char *buf, size_t sz)
{
	const char *dot;
	size_t n = strlen(out);

	if (index == 0) {
		snprintf(buf, sz, "%s", out);
		return;
	}
	dot = strrchr(out, '.');
	if (dot != NULL && strchr(dot, '/') == NULL && dot != out)
		snprintf(buf, sz, "%.*s-%u%s", (int)(dot - out), out, index,
		    dot);
	else
		snprintf(buf, sz, "%.*s.%u", (int)n, out, index);
}

/* Write @s to @path (snapout.h), saying why when that fails. */
static int
write_atomic(const struct mt_snap *s, const char *path)
{
	int rc = mt_cap_write_snapshot(s, path);

	if (rc < 0)
		warnx("cannot write snapshot '%s': %s; nothing was left under "
		    "that name", path, rc == -MT_E_IO ? strerror(errno) :
		    mt_strerror(rc));
	return rc;
}

/*
 * The RTIT_ADDRn ranges the hardware used: each --filter range at its
 * run-time address in the first target that maps it.
 */
struct filtwalk {
	pid_t pid;
	const struct mt_trig_site *st;
};

/* The mapping of @arg's pid that holds the --filter site's file offset. */
static int
holds_filter(const struct mt_proc_map *m, void *arg)
{
	const struct filtwalk *w = arg;
	char file[PATH_MAX];

	(void)mt_proc_target_file(w->pid, m->path, m->maj, m->min, m->ino,
	    file, sizeof(file));
	return strcmp(file, w->st->path) == 0 && w->st->offset >= m->pgoff &&
	    w->st->offset - m->pgoff < m->end - m->start;
}

static void
filters_to_ptcfg(const struct mt_cap *c, struct mt_snap_ptcfg *p)
{
	size_t f, t;

	p->nfilters = 0;
	for (f = 0; f < c->nfsites && p->nfilters < MT_SNAP_MAX_FILTERS; f++)
		for (t = 0; t < c->ntargets; t++) {
			struct filtwalk w = { c->targets[t], &c->fsites[f] };
			struct mt_snap_filter *sf;
			struct mt_proc_map m;

			if (mt_proc_find_map(w.pid, holds_filter, &w, &m) < 0)
				continue;
			sf = &p->filters[p->nfilters++];
			sf->a = m.start + (w.st->offset - m.pgoff);
			sf->b = sf->a + w.st->size - 1;
			sf->cfg = 1;
			break;
		}
}

static const char *
reason_name(int ev)
{
	switch (ev) {
	case MT_CAP_EV_TRIGGER:
		return "trigger";
	case MT_CAP_EV_DURATION:
		return "duration";
	case MT_CAP_EV_EXIT:
		return "exit";
	case MT_CAP_EV_SIGNAL:
		return g_signal == SIGINT ? "sigint" : g_signal == SIGTERM ?
		    "sigterm" : "sighup";
	default:
		return "unknown";
	}
}

/* Copy every ring's valid bytes into @s (AUX chunks). */
static int
add_rings(struct mt_cap *c, struct mt_snap *s, uint64_t *ptbytes)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < c->nbufs; i++) {
		struct mt_cap_buf *b = c->bufs[i];
		struct mt_snap_aux a;

		if (b->ring.base == NULL)
			continue;
		memset(&a, 0, sizeof(a));
		rc = mt_ring_extract(b->ring.base, b->ring.size, b->ring.head,
		    &b->wrap, &a);
		if (rc < 0) {
			warnx("cannot extract ring of thread %d: %s",
			    (int)b->tid, mt_strerror(rc));
			continue;
		}
		a.tid = b->tid >= 0 ? (uint32_t)b->tid : MT_SNAP_NONE;
		a.cpu = b->cpu >= 0 ? (uint32_t)b->cpu : MT_SNAP_NONE;
		a.index = c->nsnapshots;
		*ptbytes += a.len;
		rc = mt_snap_add_aux(s, &a);
		free(a.data);
		if (rc < 0)
			break;
	}
	return rc;
}

/*
 * Resume recording (and the triggers, dropping the hits queued meanwhile)
 * after a snapshot, for --multi-snapshot.
 */
static int
resume_recording(struct mt_cap *c)
{
	int rc;

	if ((rc = c->ops->resume(c)) < 0 ||
	    (rc = mt_trig_enable(c->trig, 1, 1)) < 0)
		warnx("cannot resume: %s", mt_strerror(rc));
	return rc;
}

/*
 * --kernel: kallsyms, kernel and module text again, as they are now
 * (modules loaded and code patched since the start).  Keeps the older
 * copy when that fails.
 */
static void
refresh_kernel(struct mt_cap *c)
{
	struct mt_snap *k = calloc(1, sizeof(*k));
	char msg[512];

	if (k == NULL)
		return;
	struct mt_proc_krange jit[256];
	size_t njit = mt_sbev_ksyms(c->sb, jit, 256);

	mt_snap_init(k);
	if (mt_proc_kernel(k, jit, njit, msg, sizeof(msg)) < 0 ||
	    k->ntexts == 0) {
		mt_snap_release(k);
		free(k);
		return;
	}
	mt_snap_release(c->kdesc);
	free(c->kdesc);
	c->kdesc = k;
}

/*
 * Write a snapshot; with @more (--multi-snapshot continues), recording
 * resumes afterwards.  The live PT backend resumes as soon as the rings
 * are copied, before the slow part (maps, bundled files, writing), so
 * the time nothing is recorded is the copy only (issue 19).
 */
static int
take_snapshot(struct mt_cap *c, int ev, int more)
{
	struct mt_snap s;
	struct mt_snap_host h;
	char path[PATH_MAX + 32], num[32], when[64];
	uint64_t ptbytes = 0;
	time_t now = time(NULL);
	struct tm tm;
	size_t i;
	int rc;

	rc = c->ops->stop(c);
	if (rc < 0) {
		warnx("cannot stop recording: %s", mt_strerror(rc));
		return rc;
	}
	/* No hits while the snapshot is written (re-enabled on resume). */
	(void)mt_trig_enable(c->trig, 0, 0);
	mt_snap_init(&s);
	rc = add_rings(c, &s, &ptbytes);
	if (rc == 0 && more && c->ops == &mt_cap_backend_pt) {
		if ((rc = resume_recording(c)) < 0) {
			mt_snap_release(&s);
			return rc;
		}
		more = 0;
	}
	if (c->sb != NULL)
		(void)mt_sbev_drain(c->sb);
	snprintf(num, sizeof(num), "%u", c->nsnapshots);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	(void)mt_snap_add_meta(&s, "mt-version", MT_VERSION);
	(void)mt_snap_add_meta(&s, "reason", reason_name(ev));
	(void)mt_snap_add_meta(&s, "backend-name", c->ops->name);
	(void)mt_snap_add_meta(&s, "time", when);
	(void)mt_snap_add_meta(&s, "snapshot-index", num);
	for (i = 0; i < c->o->ntriggers; i++)
		(void)mt_snap_add_meta(&s, "trigger", c->o->triggers[i]);
	mt_proc_host(&h, c->max_nonturbo_ratio);
	(void)mt_snap_set_host(&s, &h);
	free(h.kernel);
	free(h.hostname);
	s.has_host = 1;
	s.ptcfg = c->ptcfg;
	filters_to_ptcfg(c, &s.ptcfg);
	s.has_ptcfg = 1;
	if (c->sb != NULL)
		(void)mt_sbev_timeconv(c->sb, &c->timeconv);
	s.timeconv = c->timeconv;
	s.has_timeconv = 1;
	for (i = 0; i < c->ntargets; i++) {
		if (c->alive[i])
			describe(c, i);
		if (c->desc[i] != NULL)
			copy_desc(&s, c->desc[i]);
	}
	add_buf_threads(c, &s);
	if (c->kdesc != NULL)
		refresh_kernel(c);
	if (c->kdesc != NULL)
		copy_desc(&s, c->kdesc);
	if (c->sb != NULL && c->o->bundle)
		bundle_from_sideband(c, &s);
	for (i = 0; c->sb != NULL && i < mt_sbev_nrings(c->sb); i++) {
		struct mt_snap_sideband sb;
		const struct mt_wbuf *w;
		int cpu;

		w = mt_sbev_data(c->sb, i, &cpu);
		memset(&sb, 0, sizeof(sb));
		sb.cpu = cpu < 0 ? MT_SNAP_NONE : (uint32_t)cpu;
		sb.tid = mt_sbev_tid(c->sb, i) < 0 ? MT_SNAP_NONE :
		    (uint32_t)mt_sbev_tid(c->sb, i);
		sb.sample_type = mt_sbev_sample_type(c->sb);
		sb.len = w->len;
		sb.data = w->p;
		(void)mt_snap_add_sideband(&s, &sb);
	}
	/* The hits since the previous snapshot: the ones that caused this
	 * one (a hot function can fire thousands of times meanwhile). */
	if (c->nhits > 0) {
		char nh[32];

		snprintf(nh, sizeof(nh), "%zu", c->nhits + c->hits_dropped);
		(void)mt_snap_add_meta(&s, "trigger-hits", nh);
	}
	for (i = 0; i < c->nhits; i++) {
		struct mt_snap_trigger t;
		struct mt_cap_hit *hh = &c->hits[i];

		memset(&t, 0, sizeof(t));
		t.time = hh->time;
		t.pid = (uint32_t)hh->pid;
		t.tid = (uint32_t)hh->tid;
		t.ip = hh->ip;
		t.index = c->nsnapshots;
		t.what = (char *)(uintptr_t)c->o->triggers[hh->trigger];
		(void)mt_snap_add_trigger(&s, &t);
	}
	c->nhits = c->hits_seen = c->hits_dropped = 0;
	if (rc == 0 && c->ops->annotate != NULL)
		rc = c->ops->annotate(c, &s);
	if (rc < 0) {
		warnx("cannot assemble the snapshot: %s", mt_strerror(rc));
		mt_snap_release(&s);
		return rc;
	}
	snapshot_path(c->o->output, c->nsnapshots, path, sizeof(path));
	rc = write_atomic(&s, path);
	mt_snap_release(&s);
	if (rc < 0)
		return rc;
	if (more && (rc = resume_recording(c)) < 0)
		return rc;
	if (!c->o->quiet)
		fprintf(stderr, "mt-capture: wrote snapshot %u (%s): '%s', "
		    "%llu bytes of trace in %zu buffer%s\n", c->nsnapshots,
		    reason_name(ev), path, (unsigned long long)ptbytes,
		    c->nbufs, c->nbufs == 1 ? "" : "s");
	c->nsnapshots++;
	return 0;
}

/* ---- lifecycle ---- */

static void
cleanup(struct mt_cap *c)
{
	size_t i;

	if (c->ops != NULL && !c->detached) {
		c->ops->detach(c);
		c->detached = 1;
	}
	if (c->gate_w >= 0) {
		/* The child never exec'd: EOF at the gate makes it exit. */
		close(c->gate_w);
		c->gate_w = -1;
	}
	if (c->exec_r >= 0) {
		close(c->exec_r);
		c->exec_r = -1;
	}
	mt_trig_free(c->trig);
	c->trig = NULL;
	mt_sbev_free(c->sb);
	c->sb = NULL;
	if (c->ops != NULL && c->ops->close != NULL)
		c->ops->close(c);
	c->ops = NULL;
	for (i = 0; i < c->nbufs; i++) {
		mt_ring_release(&c->bufs[i]->ring);
		free(c->bufs[i]);
	}
	free(c->bufs);
	c->bufs = NULL;
	c->nbufs = 0;
	for (i = 0; i < c->ntargets; i++) {
		if (c->pidfd[i] >= 0)
			close(c->pidfd[i]);
		c->pidfd[i] = -1;
		if (c->desc[i] != NULL) {
			mt_snap_release(c->desc[i]);
			free(c->desc[i]);
			c->desc[i] = NULL;
		}
	}
	if (c->kdesc != NULL) {
		mt_snap_release(c->kdesc);
		free(c->kdesc);
		c->kdesc = NULL;
	}
	free(c->hits);
	c->hits = NULL;
	free(c->pfd);
	c->pfd = NULL;
	c->npfd = 0;
	free(c->fork_off);
	c->fork_off = NULL;
	c->nfork_off = 0;
	free(c->fix);
	c->fix = NULL;
}

/*
 * run mode, after the last snapshot: the child is ours.  After a
 * signal it gets the same signal; after --duration or when recording
 * failed, SIGTERM; otherwise it runs to its end.  A second Ctrl+C (or 5 s after a forwarded
 * signal) kills it.
 */
static void
finish_child(struct mt_cap *c, int ev, int failed)
{
	int st, waited = 0, sent_kill = 0;
	sig_atomic_t seen = g_nsignals;
	char junk[64];

	if (c->child <= 0 || c->child_reaped)
		return;
	if (ev == MT_CAP_EV_SIGNAL)
		kill(c->child, g_signal);
	else if (ev == MT_CAP_EV_DURATION || failed)
		kill(c->child, SIGTERM);
	for (;;) {
		struct pollfd p = { .fd = g_wake_r, .events = POLLIN };
		pid_t r = waitpid(c->child, &st, WNOHANG);

		if (r == c->child || (r < 0 && errno != EINTR))
			break;
		if (!sent_kill && (g_nsignals != seen || ((failed ||
		    (ev != MT_CAP_EV_TRIGGER && ev != MT_CAP_EV_EXIT)) &&
		    waited >= 5000))) {
			kill(c->child, SIGKILL);
			sent_kill = 1;
		}
		(void)poll(&p, 1, 100);
		while (read(g_wake_r, junk, sizeof(junk)) > 0)
			;
		waited += 100;
	}
	c->child_reaped = 1;
}

/* Every attach pid exists (else setup_targets names the missing one). */
static int
pids_exist(const struct mt_cap_opts *o)
{
	size_t i;

	for (i = 0; i < o->npids; i++)
		if (kill(o->pids[i], 0) < 0 && errno == ESRCH)
			return 0;
	return 1;
}

static const struct mt_cap_backend_ops *
choose_backend(const struct mt_cap_opts *o, int *why_auto)
{
	int has_pt = mt_pmu_exists(o->sysfs_root, "intel_pt");

	*why_auto = o->backend == MT_CAP_BK_AUTO;
	if (o->backend == MT_CAP_BK_PT ||
	    (o->backend == MT_CAP_BK_AUTO && has_pt))
		return &mt_cap_backend_pt;
	if (o->backend == MT_CAP_BK_QEMU || (o->backend == MT_CAP_BK_AUTO &&
	    !o->attach && mt_cap_qemu_available()))
		return &mt_cap_backend_qemu;
	return &mt_cap_backend_emulate;
}

static int
setup_ptcfg(struct mt_cap *c, const struct mt_pmu *pmu)
{
	char warn[256], msg[256];
	uint64_t v;
	int rc;

	memset(&c->ptcfg, 0, sizeof(c->ptcfg));
	c->ptcfg.backend = c->ops->snap_backend;
	c->ptcfg.pmu_type = pmu->canonical ? 0 : pmu->type;
	c->ptcfg.user = 1;
	c->ptcfg.kernel = c->o->kernel ? 1 : 0;
	c->ptcfg.per_cpu = c->ops == &mt_cap_backend_pt && c->o->all_threads;
	rc = mt_ptattr_config(pmu, c->o->timing, &c->o->terms,
	    &c->ptcfg.config, warn, sizeof(warn), msg, sizeof(msg));
	if (rc < 0) {
		warnx("--timing: %s", msg);
		return rc;
	}
	if (warn[0] != '\0')
		warnx("%s", warn);
	if (!pmu->canonical && mt_pmu_cap(pmu, "max_nonturbo_ratio", &v) == 0)
		c->max_nonturbo_ratio = (uint32_t)v;
	return 0;
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

static int
setup_targets(struct mt_cap *c)
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

static int
setup_triggers(struct mt_cap *c)
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
	 * Live PT with per-thread buffers follows no child process: its
	 * trigger events would keep the breakpoint in a child, which would
	 * trap at every hit, its hits dropped (docs/capture.md).
	 */
	inherit = !c->ops->trig_forks ? 0 : c->ops == &mt_cap_backend_pt &&
	    !c->ptcfg.per_cpu ? MT_TRIG_INHERIT_THREADS : MT_TRIG_INHERIT;
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
static int
arm_hw_triggers(struct mt_cap *c)
{
	char msg[512];
	pid_t tids[4096];
	size_t s, t;
	int rc, n;

	for (s = 0; s < c->nsites; s++) {
		if (!c->sites[s].hw)
			continue;
		fix_refresh(c);
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
static int
bind_new_threads(struct mt_cap *c)
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

static int
setup_sideband(struct mt_cap *c)
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
static int
plan_rings(struct mt_cap *c)
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

static int
setup_buffers(struct mt_cap *c)
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

static int
ready(struct mt_cap *c)
{
	if (c->o->ready_fd >= 0) {
		if (write(c->o->ready_fd, "r", 1) != 1)
			warn("cannot write to --ready-fd %d", c->o->ready_fd);
		close(c->o->ready_fd);
	}
	if (!c->o->quiet)
		fprintf(stderr, "mt-capture: recording with the %s backend. "
		    "Press Ctrl-C to stop.\n", c->ops->name);
	return 0;
}

int
mt_cap_main(const struct mt_cap_opts *o)
{
	struct mt_cap cap, *c = &cap;
	struct mt_pmu pmu;
	char msg[512];
	int why_auto, rc, ev = 0, status = 1, e;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->gate_w = c->exec_r = -1;
	/* Before any fd is opened: a closed fd 1 would be reused. */
	c->to_stdout = strcmp(o->output, "-") == 0;
	if (c->to_stdout && stdout_gone()) {
		warnx("-o -: standard output is closed or nobody reads it");
		return 1;
	}
	if (install_signals() < 0)
		err(1, "cannot set up signal handling");
	if (o->ready_fd >= 0)
		(void)fcntl(o->ready_fd, F_SETFD, FD_CLOEXEC);
	if (o->attach && o->backend == MT_CAP_BK_AUTO &&
	    !mt_pmu_exists(o->sysfs_root, "intel_pt") && pids_exist(o)) {
		/* Never single-step a live process unasked (issue 19). */
		warnx("attach: no intel_pt PMU on this machine (%s/sys/bus/"
		    "event_source/devices/intel_pt is missing); the emulate "
		    "backend would single-step process %d with ptrace, about "
		    "100000 times slower, so not unasked: use --backend "
		    "emulate to do that anyway", o->sysfs_root,
		    (int)o->pids[0]);
		return 1;
	}
	c->ops = choose_backend(o, &why_auto);
	if (c->ops == NULL) {
		warnx("no intel_pt PMU here, and this build has no emulate "
		    "backend");
		return 1;
	}
	if (why_auto && !o->quiet)
		fprintf(stderr, "mt-capture: %s\n", c->ops ==
		    &mt_cap_backend_pt ? "using Intel PT (the intel_pt PMU "
		    "exists)" : c->ops == &mt_cap_backend_qemu ? "no intel_pt "
		    "PMU: using the qemu backend (software PT under "
		    "qemu-x86_64)" : "no intel_pt PMU: using the emulate "
		    "backend (software PT, much slower)");
	if (c->ops == &mt_cap_backend_pt) {
		rc = mt_pmu_read(&pmu, o->sysfs_root, "intel_pt", msg,
		    sizeof(msg));
		if (rc == -MT_E_NOPMU)
			mt_pmu_canonical_pt(&pmu);	/* probe explains */
		else if (rc < 0) {
			warnx("%s", msg);
			c->ops = NULL;
			return 1;
		}
	} else {
		mt_pmu_canonical_pt(&pmu);
	}
	if (setup_ptcfg(c, &pmu) < 0) {
		c->ops = NULL;
		return 1;
	}
	msg[0] = '\0';
	rc = c->ops->probe(c, &c->ptcfg, msg, sizeof(msg));
	if (rc < 0) {
		warnx("%s", msg[0] ? msg : mt_strerror(rc));
		c->ops->close(c);
		c->ops = NULL;
		return 1;
	}
	if ((rc = mt_cap_check_output(o->output)) < 0) {
		warnx("cannot write snapshot '%s': %s", o->output,
		    rc == -MT_E_IO ? strerror(errno) : mt_strerror(rc));
		goto out;
	}
	if (setup_targets(c) < 0 || plan_rings(c) < 0 ||
	    setup_triggers(c) < 0 || setup_sideband(c) < 0 ||
	    bind_new_threads(c) < 0)
		goto out;
	for (i = 0; i < c->ntargets; i++) {
		msg[0] = '\0';
		if (c->ops->attach(c, c->targets[i], msg, sizeof(msg)) < 0) {
			warnx("cannot attach to process %d: %s",
			    (int)c->targets[i], msg);
			goto out;
		}
	}
	if (setup_buffers(c) < 0)
		goto out;
	msg[0] = '\0';
	if (c->ops->start(c, msg, sizeof(msg)) < 0) {
		warnx("cannot start recording: %s", msg);
		goto out;
	}
	/*
	 * Triggers are opened disabled (issue 19): enabled only once PT
	 * records.  run: before the program runs (PT starts at its exec);
	 * attach: after the slow description and copies, below.
	 */
	if (!o->attach && mt_trig_enable(c->trig, 1, 1) < 0) {
		warn("cannot enable the triggers");
		goto out;
	}
	if ((e = open_gate(c)) != 0) {
		warnx("cannot run '%s': %s", o->argv[0], strerror(e));
		goto out;
	}
	if (o->duration > 0) {
		clock_gettime(CLOCK_MONOTONIC, &c->deadline);
		c->deadline.tv_sec += (time_t)o->duration;
		c->deadline.tv_nsec += (long)((o->duration -
		    (double)(time_t)o->duration) * 1e9);
		if (c->deadline.tv_nsec >= 1000000000L) {
			c->deadline.tv_sec++;
			c->deadline.tv_nsec -= 1000000000L;
		}
		c->has_deadline = 1;
	}
	for (i = 0; i < c->ntargets; i++)
		describe(c, i);
	if (arm_hw_triggers(c) < 0)
		goto out;
	if (o->kernel && (c->kdesc = calloc(1, sizeof(*c->kdesc))) != NULL) {
		mt_snap_init(c->kdesc);
		if (mt_proc_kernel(c->kdesc, NULL, 0, msg, sizeof(msg)) < 0)
			goto out;
		if (msg[0] != '\0')
			warnx("%s", msg);
	}
	/* run: also the hw: breakpoints armed above; keep uprobe hits. */
	if (mt_trig_enable(c->trig, 1, o->attach) < 0) {
		warn("cannot enable the triggers");
		goto out;
	}
	ready(c);
	for (;;) {
		ev = c->ops->run(c);
		if (ev < 0) {
			warnx("recording failed: %s", mt_strerror(ev));
			goto out;
		}
		if (ev == MT_CAP_EV_TRIGGER) {
			int more = o->multi_snapshot && (o->max_snapshots ==
			    0 || c->nsnapshots + 1 < o->max_snapshots) &&
			    c->ops->resume != NULL;

			if (take_snapshot(c, ev, more) < 0)
				goto out;
			if (more)
				continue;
			break;
		}
		if (ev == MT_CAP_EV_NONE)
			continue;
		if (ev == MT_CAP_EV_OUTPUT_GONE) {
			warnx("nothing reads standard output any more: "
			    "stopping without a snapshot");
			goto out;
		}
		/* signal, duration, exit: end, with a snapshot if none
		 * was written yet (a trigger that never fired). */
		if (c->nsnapshots == 0 && take_snapshot(c, ev, 0) < 0)
			goto out;
		break;
	}
	status = 0;
out:
	if (ev == MT_CAP_EV_SIGNAL && !o->quiet)
		fprintf(stderr, "mt-capture: got signal %d, detaching\n",
		    (int)g_signal);
	cleanup(c);
	if (c->child > 0) {
		if (c->gate_w < 0 && !c->child_reaped)
			finish_child(c, ev, status != 0);
	}
	return status;
}
