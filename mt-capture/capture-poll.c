/* SPDX-License-Identifier: MIT */
/*
 * The capture framework's events (capture.h): signals, the accessors
 * backends use, their buffers, trigger hits, exits of targets, child
 * processes followed, the int3 bytes of triggers put back for backends,
 * and mt_cap_poll.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "sideband.h"
#include "proc.h"
#include "sbevent.h"
#include "trigev.h"
#include "capture.h"

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

int
mt_cap_install_signals(void)
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

int
mt_cap_signal(void)
{
	return g_signal;
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

int
mt_cap_target_index(const struct mt_cap *c, pid_t pid)
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
	int i = mt_cap_target_index(c, pid);

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

void
mt_cap_fix_refresh(struct mt_cap *c)
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

void
mt_cap_fix_code(const struct mt_cap *cc, pid_t pid, uint64_t addr,
    uint8_t *buf, size_t len)
{
	struct mt_cap *c = (struct mt_cap *)(uintptr_t)cc;
	pid_t tgid;
	size_t i;

	if (c->nsites == 0 || memchr(buf, 0xcc, len) == NULL)
		return;
	/* New mappings arrive as sideband records: recompute then. */
	if (!c->fix_valid || sb_total(c) != c->fix_sb_len)
		mt_cap_fix_refresh(c);
	/* a thread of a target: its process (itself when /proc says none) */
	if (mt_cap_target_index(c, pid) < 0 && (tgid = mt_proc_tgid(pid)) > 0)
		pid = tgid;
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
int
mt_cap_stdout_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = 0 };

	if (fcntl(STDOUT_FILENO, F_GETFD) < 0)
		return 1;
	return poll(&p, 1, 0) == 1 &&
	    (p.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
}

/* mt_cap_stdout_gone() at most every 50 ms: mt_cap_poll runs between steps. */
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
	return mt_cap_stdout_gone();
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
 * Does the backend's trace follow the targets' child processes?  Live
 * PT does: per-CPU buffers (--all-threads) inherit into them; per-thread
 * buffers cannot (the kernel refuses to map an inherited per-task
 * event), so a child's main thread gets its own buffer from its FORK
 * record (scan_forks).  The emulate backend follows them itself.
 */
static int
follows_forks(const struct mt_cap *c)
{
	return c->ops == &mt_cap_backend_pt;
}

/*
 * A child process followed with per-thread PT buffers: its main thread
 * (@pid's, the clone of the thread that forked) gets its buffer, traced
 * from now on (what ran between the fork and now is not in the trace).
 */
static void
open_child_buf(struct mt_cap *c, pid_t pid)
{
	int rc;

	if (mt_cap_buf_find(c, pid) != NULL ||
	    (kill(pid, 0) < 0 && errno == ESRCH))
		return;
	rc = mt_cap_buf_add(c, pid, pid, -1, NULL);
	if (rc < 0)
		warnx("process %d is not traced: no PT buffer (%s)",
		    (int)pid, mt_strerror(rc));
}

/*
 * Live PT follows the targets' child processes: make such a descendant
 * a target too, so its trigger hits count and its maps and files go
 * into the snapshot (issue 19).  Returns 1 if @pid is a target (now),
 * else 0.
 */
static int
adopt(struct mt_cap *c, pid_t pid)
{
	pid_t a = pid;
	int depth;

	if (mt_cap_target_index(c, pid) >= 0)
		return 1;
	if (!follows_forks(c) || pid <= 0)
		return 0;
	for (depth = 0; depth < 64 && mt_cap_target_index(c, a) < 0; depth++)
		if ((a = mt_proc_ppid(a)) <= 1)
			return 0;
	if (mt_cap_target_index(c, a) < 0 || !mt_cap_follow(c, pid, a))
		return 0;
	if (!c->ptcfg.per_cpu)
		open_child_buf(c, pid);
	return 1;
}

int
mt_cap_follow(struct mt_cap *c, pid_t pid, pid_t parent)
{
	size_t n = c->ntargets;

	if (mt_cap_target_index(c, pid) >= 0)
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
 * (live PT follows them: per-CPU buffers inherit into them, a per-thread
 * buffer is opened for each; follows_forks), give each new thread of a
 * target its sideband event when they are per thread (plan_fds; its
 * records from then on), and with trig_forks bind the trigger
 * uprobes to each new thread of a target (the record comes after the
 * clone: a hit of the thread before mt-capture reads it is not seen; the
 * kernel still traps there, the thread's process having the breakpoint,
 * but no event of that thread is scheduled to count it).
 */
static void
scan_forks(struct mt_cap *c)
{
	size_t r, n = mt_sbev_nrings(c->sb), nnew = 0, nkids = 0, k;
	int bind = c->ops->trig_forks && c->trig != NULL &&
	    !mt_trig_inherits(c->trig);
	int follow = follows_forks(c);
	pid_t fresh[256], kids[64];
	char msg[512];

	if (!follow && !bind && !c->sb_per_thread)
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
			pid_t pid = (pid_t)rec.u.task.pid;

			if (rec.type != MT_SB_FORK)
				continue;
			/* (the record says whose: the child may be gone) */
			if (pid != (pid_t)rec.u.task.ppid && follow &&
			    mt_cap_target_index(c,
			    (pid_t)rec.u.task.ppid) >= 0 &&
			    mt_cap_follow(c, pid, (pid_t)rec.u.task.ppid) &&
			    !c->ptcfg.per_cpu && nkids < 64)
				kids[nkids++] = pid;
			if (mt_cap_target_index(c, pid) < 0)
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
	for (k = 0; k < nkids; k++)
		open_child_buf(c, kids[k]);
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
	if (!follows_forks(c) || c->sb == NULL || kill(pid, 0) == 0 ||
	    errno != ESRCH || mt_sbev_drain(c->sb) < 0)
		return 0;
	scan_forks(c);
	return mt_cap_target_index(c, pid) >= 0;
}

/* The longest mt_cap_poll() waits without draining the sideband. */
static int
poll_ms(const struct mt_cap *c)
{
	return (c->ops->trig_forks && c->trig != NULL &&
	    !mt_trig_inherits(c->trig)) || c->sb_per_thread ||
	    (follows_forks(c) && !c->ptcfg.per_cpu) ? 10 : 100;
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
		 * 10 ms while new threads are bound or child processes
		 * given PT buffers from its FORK records (scan_forks),
		 * whose records wake no one: the kernel
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

/*
 * run mode, after the last snapshot: the child is ours.  After a
 * signal it gets the same signal; after --duration or when recording
 * failed, SIGTERM; otherwise it runs to its end.  A second Ctrl+C (or 5 s after a forwarded
 * signal) kills it.
 */
void
mt_cap_finish_child(struct mt_cap *c, int ev, int failed)
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
