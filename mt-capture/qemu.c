/* SPDX-License-Identifier: MIT */
/*
 * The qemu backend ("--backend qemu", run only): the target runs under
 * qemu-x86_64 with mt's TCG plugin (mt-capture/qemu/, installed as
 * lib/mt/mt-qemu.so beside bin/), which writes the PT packets of every
 * guest thread into rings in a private directory (qemu-ipc.h).  This file
 * is the capture framework's side: it finds QEMU and the plugin, writes
 * the plugin's configuration, maps the rings as the framework's buffers,
 * turns the plugin's trigger hits into framework hits, stops the guest
 * threads for each snapshot and describes the guest process (its code
 * mappings at guest addresses, with timed MMAP2 records for those mapped
 * while it ran, JIT code bytes) from the plugin's files.
 *
 * The clock (docs/emulate.md): one TSC tick per guest instruction, per
 * thread, shown as one nanosecond; TIMECONV maps tick T to perf time
 * time_zero + T, time_zero chosen so the first tick is when recording
 * started.  HOST says a 2.5 GHz TSC and core clock as the emulate
 * backend does, so MTC and CYC packets convert to the same ticks.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <x86intrin.h>

#include "backend.h"
#include "emu-pt.h"
#include "err.h"
#include "proc.h"
#include "qemu-code.h"
#include "qemu-ipc.h"
#include "qemu-maps.h"

#define QEMU_BIN	"qemu-x86_64"
#define PLUGIN_REL	"../lib/mt/mt-qemu.so"	/* from the binary's dir */
#define TSC0		(1ull << 32)	/* first tick of the first thread */
#define STOP_WAIT_MS	2000		/* longest wait for threads to stop */
#define KEEPER_TRIES	1000		/* rmdir attempts, 10 ms apart */

struct qring {
	struct mtq_ring *hdr;	/* mapped header; the ring follows */
	size_t len;		/* mapping length */
};

struct qemu {
	char dir[PATH_MAX];		/* private directory, or "" */
	int keeper_w;			/* pipe to the directory's keeper,
					 * or -1 */
	char qemu[PATH_MAX];		/* qemu-x86_64 */
	char plugarg[PATH_MAX + 64];	/* "PLUGIN,dir=DIR" */
	struct mtq_ctl *ctl;		/* mapped DIR/ctl */
	struct qring *rings;		/* DIR/ring.N mapped so far */
	size_t nrings;
	struct qring *pending;		/* the ring buf_open is to take */
	uint32_t hits_seen;		/* plugin hits turned into framework
					 * hits */
	uint32_t stop_req;		/* request of the current stop */
	uint64_t config;		/* PT config bits */
	uint64_t time_zero;		/* perf ns of tick 0 (virtual clock) */
	uint64_t tsc0, mono0;		/* host TSC and CLOCK_MONOTONIC ns at
					 * the start (--clock host) */
	unsigned stops_timed_out;	/* threads that did not stop in time */
	int gt_said;			/* the cap message was printed */
};

/* ---- finding QEMU and the plugin ---- */

/* QEMU: $MT_QEMU if set, else qemu-x86_64 in PATH. */
static int
find_qemu(char *out, size_t outsz)
{
	const char *env = getenv("MT_QEMU");

	if (env != NULL && env[0] != '\0') {
		snprintf(out, outsz, "%s", env);
		return access(out, X_OK);
	}
	return mt_cap_find_program(QEMU_BIN, out, outsz);
}

/* The plugin: ../lib/mt/mt-qemu.so from our own binary's directory. */
static int
find_plugin(char *out, size_t outsz)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash == NULL)
		return -1;
	*slash = '\0';
	if ((size_t)snprintf(out, outsz, "%s/%s", self, PLUGIN_REL) >= outsz)
		return -1;
	return access(out, R_OK);
}

int
mt_cap_qemu_available(void)
{
	char q[PATH_MAX], p[PATH_MAX];

	return find_qemu(q, sizeof(q)) == 0 && find_plugin(p, sizeof(p)) == 0;
}

/* Does @qemu take -plugin (built with TCG plugin support)? */
static int
has_plugin_support(const char *qemu)
{
	char cmd[PATH_MAX + 32], line[512];
	int found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' -h 2>/dev/null", qemu);
	if (strchr(qemu, '\'') != NULL || (f = popen(cmd, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "-plugin", 7) == 0)
			found = 1;
	pclose(f);
	return found;
}

/* ---- the shared directory ---- */

static void
remove_dir(const char *dir)
{
	char path[PATH_MAX + 300];
	struct dirent *de;
	DIR *d;

	if (dir[0] == '\0' || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/*
 * The keeper: the directory must go even when mt-capture is killed
 * (SIGKILL runs no cleanup), and the plugin makes files in it for as long
 * as the guest starts threads, so it cannot be unlinked early.  A
 * grandchild of mt-capture, in a session of its own (a signal to
 * mt-capture's process group or terminal does not reach it), waits on a
 * pipe that only mt-capture writes.  At a clean close mt-capture removes
 * the directory itself, then writes one byte and the keeper leaves;
 * end of file without it means mt-capture died.  QEMU dies with it
 * (PR_SET_PDEATHSIG), but until then its plugin may still make a ring.N,
 * so the keeper empties the directory until rmdir succeeds; once it is
 * gone, the plugin's open(O_CREAT) of a path in it fails.
 * The keeper holds no other file of mt-capture's open.
 */
static void
keeper(const char *dir, int rfd)
{
	char c;
	ssize_t n;
	int i, fd;

	(void)setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	if (dup2(rfd, 3) < 0)
		return;
	(void)close_range(4, ~0u, 0);
	if ((fd = open("/dev/null", O_RDWR)) >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 3)
			close(fd);
	}
	(void)!chdir("/");
	while ((n = read(3, &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 0)
		return;		/* closed cleanly: the directory is gone */
	for (i = 0; i < KEEPER_TRIES; i++) {
		remove_dir(dir);
		if (access(dir, F_OK) < 0 && errno == ENOENT)
			return;
		usleep(10000);
	}
}

/*
 * Start the keeper of q->dir.  Returns 0, or -1 with errno set (no
 * keeper: the directory is removed at close only).
 */
static int
keeper_start(struct qemu *q)
{
	int p[2], st = 0;
	pid_t pid, r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		/* Not our child: mt-capture waits for no keeper. */
		pid = fork();
		if (pid == 0)
			keeper(q->dir, p[0]);
		_exit(pid < 0);
	}
	close(p[0]);
	while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (r != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		close(p[1]);
		errno = EAGAIN;
		return -1;
	}
	q->keeper_w = p[1];
	return 0;
}

/* The directory is gone: let the keeper go. */
static void
keeper_done(struct qemu *q)
{
	if (q->keeper_w < 0)
		return;
	(void)!write(q->keeper_w, "x", 1);
	close(q->keeper_w);
	q->keeper_w = -1;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
qemu_probe(struct mt_cap *c, struct mt_snap_ptcfg *ptcfg, char *msg,
    size_t msgsz)
{
	const struct mt_cap_opts *o = mt_cap_opts(c);
	const char *tmp = getenv("TMPDIR");
	char plugin[PATH_MAX];
	struct qemu *q;

	if (o->attach) {
		snprintf(msg, msgsz, "QEMU cannot attach to a running process: "
		    "use --backend emulate (ptrace) with attach");
		return -MT_E_UNSUPP;
	}
	if (o->kernel || o->nfilters > 0 || o->start_at != NULL) {
		snprintf(msg, msgsz, "the qemu backend records all of user "
		    "space from the first instruction: drop %s",
		    o->kernel ? "--kernel" : o->nfilters ? "--filter" :
		    "--start-at (an emulate backend option)");
		return -MT_E_UNSUPP;
	}
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return -MT_E_NOMEM;
	q->keeper_w = -1;
	mt_cap_set_priv(c, q);
	if (find_qemu(q->qemu, sizeof(q->qemu)) < 0) {
		snprintf(msg, msgsz, "%s not found%s%s: install the Debian "
		    "package qemu-user (apt-get install qemu-user)", QEMU_BIN,
		    getenv("MT_QEMU") != NULL ? " at $MT_QEMU " : " in PATH",
		    getenv("MT_QEMU") != NULL ? getenv("MT_QEMU") : "");
		return -MT_E_NOTFOUND;
	}
	if (!has_plugin_support(q->qemu)) {
		snprintf(msg, msgsz, "'%s' has no TCG plugin support (no "
		    "-plugin option): install Debian's qemu-user, not "
		    "qemu-user-static", q->qemu);
		return -MT_E_UNSUPP;
	}
	if (find_plugin(plugin, sizeof(plugin)) < 0) {
		snprintf(msg, msgsz, "mt's QEMU plugin is missing at '%s' "
		    "('make' builds it, 'make install' installs it)", plugin);
		return -MT_E_NOTFOUND;
	}
	snprintf(q->dir, sizeof(q->dir), "%s/mt-qemu.XXXXXX",
	    tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
	if (mkdtemp(q->dir) == NULL) {
		snprintf(msg, msgsz, "cannot create '%s': %s", q->dir,
		    strerror(errno));
		q->dir[0] = '\0';
		return -MT_E_IO;
	}
	if (keeper_start(q) < 0) {
		snprintf(msg, msgsz, "cannot start the keeper of '%s': %s",
		    q->dir, strerror(errno));
		return -MT_E_IO;
	}
	q->ctl = mtq_map(q->dir, "ctl", sizeof(*q->ctl), 1);
	if (q->ctl == NULL) {
		snprintf(msg, msgsz, "cannot create '%s/ctl': %s", q->dir,
		    strerror(errno));
		return -MT_E_IO;
	}
	q->ctl->magic = MTQ_MAGIC;
	q->ctl->version = 1;
	if ((size_t)snprintf(q->plugarg, sizeof(q->plugarg), "%s,dir=%s",
	    plugin, q->dir) >= sizeof(q->plugarg) || strchr(q->dir, ',')) {
		snprintf(msg, msgsz, "the path '%s' does not fit in QEMU's "
		    "-plugin argument", q->dir);
		return -MT_E_LIMIT;
	}
	ptcfg->config |= 1ull << 13;	/* BranchEn */
	ptcfg->user = 1;
	ptcfg->kernel = 0;
	ptcfg->per_cpu = 0;
	q->config = ptcfg->config;
	q->time_zero = mono_ns() - TSC0;
	q->tsc0 = __rdtsc();
	q->mono0 = mono_ns();
	return 0;
}

/* ---- the target ---- */

/* Can QEMU run @path?  A one-line reason in @msg when not. */
static int
check_target(const char *path, char *msg, size_t msgsz)
{
	Elf64_Ehdr eh;
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(msg, msgsz, "cannot open '%s': %s", path,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		return -MT_E_IO;
	}
	n = read(fd, &eh, sizeof(eh));
	close(fd);
	if (n != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		snprintf(msg, msgsz, "'%s' is not an x86-64 ELF program: the "
		    "qemu backend runs those only (for a script, run its "
		    "interpreter: mt-capture run -- /bin/sh script)", path);
		return -MT_E_UNSUPP;
	}
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		snprintf(msg, msgsz, "'%s' is set-user-ID or set-group-ID: "
		    "QEMU would run it without those privileges; record it "
		    "as the user it runs as, from a copy without the bit",
		    path);
		return -MT_E_PERM;
	}
	return 0;
}

static int
write_config(struct mt_cap *c, struct qemu *q, char *msg, size_t msgsz)
{
	const struct mt_cap_opts *o = mt_cap_opts(c);
	char path[PATH_MAX + 32];
	const char *site;
	uint64_t off;
	size_t i;
	FILE *f;
	int hw;

	snprintf(path, sizeof(path), "%s/config", q->dir);
	if ((f = fopen(path, "we")) == NULL) {
		snprintf(msg, msgsz, "cannot write '%s': %s", path,
		    strerror(errno));
		return -MT_E_IO;
	}
	fprintf(f, "snapshot-size %llu\nconfig %llx\ntsc0 %llu\n"
	    "all-threads %d\nground-truth %d\nground-truth-max %llu\n"
	    "host-clock %d\n",
	    (unsigned long long)o->snapshot_size,
	    (unsigned long long)q->config, (unsigned long long)TSC0,
	    o->all_threads, o->ground_truth != NULL,
	    (unsigned long long)o->ground_truth_max, o->host_clock);
	for (i = 0; mt_cap_trigger_site(c, i, &site, &off, &hw) == 0; i++) {
		if (hw) {
			fclose(f);
			snprintf(msg, msgsz, "--trigger '%s': the qemu backend "
			    "sees every instruction; drop hw:", o->triggers[i]);
			return -MT_E_UNSUPP;
		}
		fprintf(f, "trigger %zu %llx %s\n", i, (unsigned long long)off,
		    site);
	}
	if (ferror(f) | fclose(f)) {
		snprintf(msg, msgsz, "cannot write '%s'", path);
		return -MT_E_IO;
	}
	return 0;
}

static int
qemu_attach(struct mt_cap *c, pid_t pid, char *msg, size_t msgsz)
{
	struct qemu *q = mt_cap_priv(c);
	int rc;

	(void)pid;
	if ((rc = check_target(mt_cap_exe(c), msg, msgsz)) < 0)
		return rc;
	return write_config(c, q, msg, msgsz);
}

/* In the child, once the gate opened: become QEMU running the target. */
static void
qemu_exec(struct mt_cap *c)
{
	const struct mt_cap_opts *o = mt_cap_opts(c);
	struct qemu *q = mt_cap_priv(c);
	pid_t parent = getppid();
	size_t n = 0, i;
	char **argv;

	/* Never an orphan: QEMU dies with mt-capture. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		return;
	while (o->argv[n] != NULL)
		n++;
	argv = calloc(n + 5, sizeof(*argv));
	if (argv == NULL)
		return;
	argv[0] = q->qemu;
	argv[1] = (char *)(uintptr_t)"-plugin";
	argv[2] = q->plugarg;
	argv[3] = (char *)(uintptr_t)"--";
	for (i = 0; i < n; i++)
		argv[4 + i] = o->argv[i];
	execv(q->qemu, argv);
}

/* ---- rings ---- */

static int
qemu_buf_open(struct mt_cap *c, struct mt_cap_buf *b, char *msg,
    size_t msgsz)
{
	struct qemu *q = mt_cap_priv(c);
	size_t i;

	(void)msg;
	(void)msgsz;
	memset(&b->ring, 0, sizeof(b->ring));
	b->bk = NULL;
	if (q->pending == NULL)
		for (i = 0; i < q->nrings; i++)
			if ((pid_t)q->rings[i].hdr->tid == b->tid)
				q->pending = &q->rings[i];
	if (q->pending != NULL) {
		mt_ring_init_mapped(&b->ring, (uint8_t *)q->pending->hdr +
		    MTQ_HDR_SIZE, q->pending->hdr->size);
		b->bk = q->pending->hdr;
	}
	q->pending = NULL;
	return 0;
}

/* Map the rings the plugin made since the last look. */
static int
refresh_rings(struct mt_cap *c, struct qemu *q)
{
	uint32_t n = atomic_load(&q->ctl->nrings);
	uint64_t size = mt_cap_opts(c)->snapshot_size;
	struct mt_cap_buf *b;
	char name[32];
	int rc;

	while (q->nrings < n) {
		struct qring *r, *nr;

		nr = realloc(q->rings, (q->nrings + 1) * sizeof(*nr));
		if (nr == NULL)
			return -MT_E_NOMEM;
		q->rings = nr;
		r = &q->rings[q->nrings];
		snprintf(name, sizeof(name), "ring.%zu", q->nrings);
		r->len = MTQ_HDR_SIZE + size;
		r->hdr = mtq_map(q->dir, name, r->len, 0);
		if (r->hdr == NULL || r->hdr->magic != MTQ_MAGIC ||
		    r->hdr->size != size)
			return -MT_E_CORRUPT;
		q->nrings++;
		b = mt_cap_buf_find(c, (pid_t)r->hdr->tid);
		if (b != NULL && b->ring.base == NULL) {
			mt_ring_init_mapped(&b->ring, (uint8_t *)r->hdr +
			    MTQ_HDR_SIZE, size);
			b->bk = r->hdr;
		} else if (b == NULL) {
			q->pending = r;
			rc = mt_cap_buf_add(c, mt_cap_target(c, 0),
			    (pid_t)r->hdr->tid, -1, NULL);
			q->pending = NULL;
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* Turn the plugin's new hits into framework hits; 1 if there were any. */
static int
take_hits(struct mt_cap *c, struct qemu *q)
{
	uint32_t n = atomic_load(&q->ctl->nhits);
	int any = 0, rc;

	if (n - q->hits_seen > MTQ_MAX_HITS)
		q->hits_seen = n - MTQ_MAX_HITS;	/* overwritten */
	while (q->hits_seen != n) {
		uint32_t slot = q->hits_seen % MTQ_MAX_HITS;
		const struct mtq_hit *h = &q->ctl->hits[slot];

		if (atomic_load(&q->ctl->hit_ready[slot]) != q->hits_seen + 1)
			break;	/* being written: next time */
		/* The tick count: annotate turns it into perf time. */
		rc = mt_cap_add_hit(c, mt_cap_target(c, 0), (pid_t)h->tid,
		    h->ip, h->trigger, h->tsc);
		if (rc < 0)
			return rc;
		q->hits_seen++;
		any = 1;
	}
	return any;
}

/* Once the plugin found the ground-truth log full: say so, once. */
static void
gt_check_full(struct mt_cap *c, struct qemu *q)
{
	if (q->gt_said || !atomic_load(&q->ctl->gt_full))
		return;
	q->gt_said = 1;
	mt_cap_gt_full(c);
}

static int
qemu_start(struct mt_cap *c, char *msg, size_t msgsz)
{
	(void)c;
	(void)msg;
	(void)msgsz;
	return 0;
}

static int
qemu_run(struct mt_cap *c)
{
	struct qemu *q = mt_cap_priv(c);
	int rc;

	for (;;) {
		if ((rc = refresh_rings(c, q)) < 0)
			return rc;
		gt_check_full(c, q);
		if ((rc = take_hits(c, q)) < 0)
			return rc;
		rc = mt_cap_poll(c, rc > 0 ? 0 : 5);
		if (rc != MT_CAP_EV_NONE)
			return rc;
	}
}

/* Is process @pid still running (not gone, not a zombie)? */
static int
running(pid_t pid)
{
	char path[64], buf[512], *rp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp != NULL && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

/* Every ring stopped for request @r (or in a system call, or done)? */
static int
all_stopped(const struct qemu *q, uint32_t r)
{
	size_t i;

	for (i = 0; i < q->nrings; i++) {
		struct mtq_ring *h = q->rings[i].hdr;

		if (atomic_load(&h->state) == MTQ_T_RUN &&
		    (int32_t)(atomic_load(&h->ack) - r) < 0)
			return 0;
	}
	return 1;
}

static int
qemu_stop(struct mt_cap *c)
{
	struct qemu *q = mt_cap_priv(c);
	pid_t pid = mt_cap_target(c, 0);
	uint32_t r;
	size_t i;
	int waited = 0, rc;

	r = atomic_load(&q->ctl->req);
	if (r == atomic_load(&q->ctl->release))
		r = atomic_fetch_add(&q->ctl->req, 1) + 1;
	q->stop_req = r;
	while (running(pid)) {
		if ((rc = refresh_rings(c, q)) < 0)
			return rc;
		if (all_stopped(q, r))
			break;
		if (waited >= STOP_WAIT_MS) {
			/* A thread held inside QEMU (an exclusive section
			 * waiting for a parked one): take its ring as is. */
			q->stops_timed_out++;
			break;
		}
		usleep(1000);
		waited++;
	}
	if ((rc = refresh_rings(c, q)) < 0)
		return rc;
	(void)take_hits(c, q);
	for (i = 0; i < mt_cap_nbufs(c); i++) {
		struct mt_cap_buf *b = mt_cap_buf(c, i);
		struct mtq_ring *h = b->bk;	/* the ring's header */

		if (h != NULL)
			b->ring.head = atomic_load(&h->head) &
			    (b->ring.size - 1);
		if (h != NULL && atomic_load(&h->state) == MTQ_T_EXITED)
			b->exited = 1;
	}
	/* The guest's mappings and code from the plugin's files. */
	mt_cap_note_exiting(c, pid);
	return 0;
}

/* ---- describing the guest ---- */

static char *
slurp_file(const char *path, size_t *len)
{
	char *buf = NULL, *nb;
	size_t cap = 0, n = 0;
	ssize_t k;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	for (;;) {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 131072;
			if ((nb = realloc(buf, cap + 1)) == NULL)
				break;
			buf = nb;
		}
		k = read(fd, buf + n, cap - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	if (buf != NULL) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

/* The JIT code the plugin logged (qemu-code.h). */
static int
add_code_blobs(struct mt_snap *s, pid_t pid, const char *dir)
{
	char path[PATH_MAX + 32];
	size_t len = 0;
	char *code;
	int rc;

	snprintf(path, sizeof(path), "%s/code", dir);
	if ((code = slurp_file(path, &len)) == NULL)
		return 0;
	rc = mt_qemu_code_blobs(s, pid, (const uint8_t *)code, len);
	free(code);
	return rc;
}

static int
qemu_describe(struct mt_cap *c, pid_t pid, struct mt_snap *s)
{
	const struct mt_cap_opts *o = mt_cap_opts(c);
	struct qemu *q = mt_cap_priv(c);
	char path[PATH_MAX + 32], comm[16], *log, *maps = NULL, *cmd = NULL;
	const char *exe = mt_cap_exe(c), *base = strrchr(exe, '/');
	struct mt_snap_process p;
	size_t n = 0, clen = 0, i, skipped = 0;
	int rc;

	snprintf(comm, sizeof(comm), "%s", base != NULL ? base + 1 : exe);
	for (i = 0; o->argv[i] != NULL; i++)
		clen += strlen(o->argv[i]) + 1;
	if ((cmd = malloc(clen + 1)) == NULL)
		return -MT_E_NOMEM;
	for (i = 0, n = 0; o->argv[i] != NULL; i++) {
		memcpy(cmd + n, o->argv[i], strlen(o->argv[i]) + 1);
		n += strlen(o->argv[i]) + 1;
	}
	memset(&p, 0, sizeof(p));
	p.pid = (uint32_t)pid;
	p.ppid = (uint32_t)getpid();
	p.comm = comm;
	p.exe = (char *)(uintptr_t)exe;
	p.cmdline = cmd;
	p.cmdline_len = (uint32_t)clen;
	rc = mt_snap_add_process(s, &p);
	free(cmd);
	for (i = 0; rc == 0 && i < q->nrings; i++) {
		struct mt_snap_thread t;

		memset(&t, 0, sizeof(t));
		t.pid = (uint32_t)pid;
		t.tid = q->rings[i].hdr->tid;
		t.comm = comm;
		rc = mt_snap_add_thread(s, &t);
	}
	snprintf(path, sizeof(path), "%s/maps", q->dir);
	if (rc == 0 && (log = slurp_file(path, &n)) != NULL) {
		/* Every file that held code, also those unloaded since. */
		rc = mt_qemu_maps_text(log, n, &maps, &n);
		if (rc == 0)
			rc = mt_proc_describe_maps(s, pid, maps, n, o->bundle,
			    MT_CAP_MAX_BUNDLE, &skipped);
		free(maps);
		free(log);
	}
	if (rc == 0)
		rc = add_code_blobs(s, pid, q->dir);
	return rc;
}

static int
meta_u64(struct mt_snap *s, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return mt_snap_add_meta(s, key, buf);
}

static int
qemu_annotate(struct mt_cap *c, struct mt_snap *s)
{
	struct qemu *q = mt_cap_priv(c);
	uint64_t insns = atomic_load(&q->ctl->insns);
	char path[PATH_MAX + 32], *log;
	size_t i, n;
	int rc;

	for (i = 0; i < q->nrings; i++)
		insns += atomic_load(&q->rings[i].hdr->insns);
	s->has_host = 1;
	s->host.cpuid_15[0] = MT_EMU_CPUID15_EAX;
	s->host.cpuid_15[1] = MT_EMU_CPUID15_EBX;
	s->host.cpuid_15[2] = MT_EMU_CRYSTAL_HZ;
	s->host.max_nonturbo_ratio = MT_EMU_NOM_FREQ;
	s->has_timeconv = 1;
	memset(&s->timeconv, 0, sizeof(s->timeconv));
	s->timeconv.cap_user_time_zero = 1;
	if (mt_cap_opts(c)->host_clock) {
		/* The host's TSC, its rate measured since the start. */
		uint64_t t1 = __rdtsc(), m1 = mono_ns();
		double ns_per_tick = t1 > q->tsc0 ? (double)(m1 - q->mono0) /
		    (double)(t1 - q->tsc0) : 1.0;

		s->timeconv.time_shift = 24;
		s->timeconv.time_mult = (uint32_t)(ns_per_tick * (1 << 24) +
		    0.5);
		s->timeconv.time_zero = q->mono0 -
		    mt_snap_tsc_to_ns(&s->timeconv, q->tsc0);
	} else {
		/* One tick, one guest instruction, one nanosecond. */
		s->timeconv.time_shift = 0;
		s->timeconv.time_mult = 1;
		s->timeconv.time_zero = q->time_zero;
	}
	for (i = 0; i < s->ntriggers; i++)
		s->triggers[i].time = mt_snap_tsc_to_ns(&s->timeconv,
		    s->triggers[i].time);
	/* JIT code written over other code, from its tick on. */
	for (i = 0; i < s->nblobs; i++)
		if (s->blobs[i].kind == MT_SNAP_BLOB_JIT &&
		    s->blobs[i].time != 0)
			s->blobs[i].time = mt_snap_tsc_to_ns(&s->timeconv,
			    s->blobs[i].time);
	/* When each library was mapped, on this clock (dlclose, dlopen). */
	snprintf(path, sizeof(path), "%s/maps", q->dir);
	if ((log = slurp_file(path, &n)) != NULL) {
		rc = mt_qemu_maps_sideband(s, mt_cap_target(c, 0), log, n);
		free(log);
		if (rc < 0)
			return rc;
	}
	if ((rc = mt_snap_add_meta(s, "qemu-clock", mt_cap_opts(c)->host_clock ?
	    "host: the host's TSC when each block ran" : "virtual: 1 tick = "
	    "1 guest instruction = 1 ns, per thread")) < 0 ||
	    (rc = meta_u64(s, "qemu-instructions", insns)) < 0 ||
	    (rc = meta_u64(s, "qemu-translated-blocks",
	    atomic_load(&q->ctl->translated))) < 0 ||
	    (rc = meta_u64(s, "qemu-block-records",
	    atomic_load(&q->ctl->records))) < 0 ||
	    (rc = meta_u64(s, "qemu-async-changes",
	    atomic_load(&q->ctl->odd))) < 0 ||
	    (rc = meta_u64(s, "qemu-stop-timeouts", q->stops_timed_out)) < 0)
		return rc;
	return 0;
}

static int
qemu_resume(struct mt_cap *c)
{
	struct qemu *q = mt_cap_priv(c);

	atomic_store(&q->ctl->release, q->stop_req);
	return 0;
}

static void
qemu_detach(struct mt_cap *c)
{
	struct qemu *q = mt_cap_priv(c);

	if (q == NULL || q->ctl == NULL)
		return;
	/* The guest runs on under QEMU, recording nothing. */
	atomic_store(&q->ctl->off, 1);
	atomic_store(&q->ctl->release, atomic_load(&q->ctl->req));
}

/* --ground-truth: the plugin's per-thread logs, one after the other. */
static void
write_ground_truth(struct mt_cap *c, struct qemu *q)
{
	const char *out = mt_cap_opts(c)->ground_truth;
	char path[PATH_MAX + 32], tmp[PATH_MAX + 32], buf[65536];
	size_t i, n;
	FILE *f, *in;
	int bad = 0;

	gt_check_full(c, q);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid());
	if ((f = fopen(tmp, "we")) == NULL) {
		fprintf(stderr, "mt-capture: cannot write '%s': %s\n", tmp,
		    strerror(errno));
		return;
	}
	for (i = 0; i < q->nrings && !bad; i++) {
		snprintf(path, sizeof(path), "%s/gt.%zu", q->dir, i);
		if ((in = fopen(path, "re")) == NULL)
			continue;
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			if (fwrite(buf, 1, n, f) != n) {
				bad = 1;
				break;
			}
		bad |= ferror(in);
		fclose(in);
	}
	if ((bad | ferror(f) | fclose(f)) || rename(tmp, out) != 0) {
		fprintf(stderr, "mt-capture: cannot write '%s': %s\n", out,
		    strerror(errno));
		unlink(tmp);
	}
}

static void
qemu_close(struct mt_cap *c)
{
	struct qemu *q = mt_cap_priv(c);
	size_t i;

	if (q == NULL)
		return;
	if (q->ctl != NULL && mt_cap_opts(c)->ground_truth != NULL) {
		(void)refresh_rings(c, q);
		write_ground_truth(c, q);
	}
	for (i = 0; i < q->nrings; i++)
		munmap(q->rings[i].hdr, q->rings[i].len);
	free(q->rings);
	if (q->ctl != NULL)
		munmap(q->ctl, sizeof(*q->ctl));
	remove_dir(q->dir);
	keeper_done(q);
	free(q);
	mt_cap_set_priv(c, NULL);
}

const struct mt_cap_backend_ops mt_cap_backend_qemu = {
	.name = "qemu",
	.snap_backend = MT_SNAP_BK_EMULATE,
	.reaps_children = 0,
	.switch_sideband = 0,
	.own_triggers = 1,
	.no_sideband = 1,
	.exec = qemu_exec,
	.describe = qemu_describe,
	.probe = qemu_probe,
	.attach = qemu_attach,
	.buf_open = qemu_buf_open,
	.start = qemu_start,
	.run = qemu_run,
	.stop = qemu_stop,
	.annotate = qemu_annotate,
	.resume = qemu_resume,
	.detach = qemu_detach,
	.close = qemu_close,
};
