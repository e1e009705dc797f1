/* SPDX-License-Identifier: MIT */
/*
 * The mt-symbolize filter (stream.h): common/events reader and writer
 * around the resolver.  Records pass through in order; file, fn and loc
 * records are written just before the first event that needs them.  An
 * already symbolized input is symbolized afresh: its file/fn/loc records,
 * @ fields and "info symbolized", "info lines" and "info inline" are
 * dropped.
 *
 * The fast path: an event line in canonical form (fastline.h), which is
 * almost every line mt-decode writes, is copied through with its @ fields
 * appended, and the @ text of an address comes from a direct-mapped cache
 * in front of the resolver; every other line is read and written again
 * by common/events.  Both give the same bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dso.h"
#include "err.h"
#include "events.h"
#include "fastline.h"
#include "outfile.h"
#include "pages.h"
#include "progress.h"
#include "resolve.h"
#include "stream.h"
#include "textsyms.h"

/* tid -> pid, from thread records (open addressing; 0 = empty key). */
struct tidmap {
	uint32_t *tid, *pid;	/* owned */
	size_t cap, n;		/* cap is a power of two */
};

static int
tidmap_put(struct tidmap *t, uint32_t tid, uint32_t pid)
{
	size_t i;

	if (tid == 0)
		return 0;
	if (2 * (t->n + 1) > t->cap) {
		struct tidmap nt = { .cap = t->cap ? 2 * t->cap : 256 };
		size_t j;

		nt.tid = calloc(nt.cap, sizeof(*nt.tid));
		nt.pid = calloc(nt.cap, sizeof(*nt.pid));
		if (nt.tid == NULL || nt.pid == NULL) {
			free(nt.tid);
			free(nt.pid);
			return -MT_E_NOMEM;
		}
		for (j = 0; j < t->cap; j++)
			if (t->tid[j] != 0)
				tidmap_put(&nt, t->tid[j], t->pid[j]);
		free(t->tid);
		free(t->pid);
		*t = nt;
	}
	for (i = (tid * 0x9e3779b1u) & (t->cap - 1); t->tid[i] != 0 &&
	    t->tid[i] != tid; i = (i + 1) & (t->cap - 1))
		;
	if (t->tid[i] == 0)
		t->n++;
	t->tid[i] = tid;
	t->pid[i] = pid;
	return 0;
}

/* The pid of @tid; a thread never announced is taken as its own process. */
static uint32_t
tidmap_get(const struct tidmap *t, uint32_t tid)
{
	size_t i;

	if (t->cap == 0 || tid == 0)
		return tid;
	for (i = (tid * 0x9e3779b1u) & (t->cap - 1); t->tid[i] != 0;
	    i = (i + 1) & (t->cap - 1))
		if (t->tid[i] == tid)
			return t->pid[i];
	return tid;
}

/*
 * Direct-mapped cache (pid, address) -> " @LOC" text, in front of
 * sym_res_addr().  An entry is valid while its epoch is the run's (a mod
 * record may change what an address means, so it starts a new epoch)
 * and the process is in the same epoch of its mappings (sym_res_epoch:
 * dlclose then dlopen of another file there).
 */
#define DM_BITS_MIN 9
#define DM_BITS_MAX 13
#define DM_TEXT 14		/* " @" and up to 10 digits, 2 spare */

struct dm_ent {
	uint64_t addr;
	uint32_t pid;
	uint32_t epoch;		/* 0: empty */
	uint32_t tep;		/* sym_res_epoch() of the process */
	uint32_t loc;
	uint8_t len;		/* bytes of text */
	char text[DM_TEXT];
};

/* Everything one run owns, released in one place. */
struct run {
	int infd;
	struct mt_outfile out;		/* fd -1: not open */
	int out_open;			/* out to commit or abort */
	struct mt_evr *r;
	struct mt_evw *w;
	struct sym_res *res;
	struct sym_textsyms *kallsyms;
	struct sym_textsyms **maps;	/* one per perf map */
	struct sym_res_map *rmaps;
	size_t nmaps;
	struct tidmap tids;
	uint32_t last_tid, last_pid;	/* tidmap_get() of the last event */
	struct dm_ent *dm;		/* 1 << dm_bits entries; owned */
	unsigned dm_bits;		/* DM_BITS_MIN up to DM_BITS_MAX */
	size_t dm_misses;		/* since dm was last made */
	uint32_t epoch;
	uint64_t events;		/* event lines done, for progress */
	const struct sym_stream_opts *o;
	struct mt_progress prog;	/* used when o->progress_ms >= 0 */
};

static int
emit(void *ctx, const struct mt_ev *ev)
{
	return mt_evw_write(ctx, ev);
}

static int __attribute__((format(printf, 4, 5)))
fail(char *msg, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return rc;
}

/* "perf-1234.map" -> 1234; 0 when the name has no pid. */
static uint32_t
map_pid(const char *path)
{
	const char *b = strrchr(path, '/');
	unsigned long v;
	char *end;

	b = b ? b + 1 : path;
	if (strncmp(b, "perf-", 5) != 0)
		return 0;
	v = strtoul(b + 5, &end, 10);
	if (end == b + 5 || strcmp(end, ".map") != 0 || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

/* Why sym_textsyms_load() failed with @rc, its message being @why. */
static const char *
load_error(int rc, const char *why)
{
	if (rc == -MT_E_SYNTAX || rc == -MT_E_IO)
		return why;
	return rc == -MT_E_SYS ? strerror(errno) : mt_strerror(rc);
}

static int
load_tables(struct run *u, const struct sym_stream_opts *o, char *msg,
    size_t len)
{
	char why[256];
	size_t i;
	int rc;

	if (o->kallsyms != NULL) {
		why[0] = '\0';
		rc = sym_textsyms_load(&u->kallsyms, o->kallsyms, 1, why,
		    sizeof(why));
		if (rc < 0)
			return fail(msg, len, rc, "'%s': %s", o->kallsyms,
			    load_error(rc, why));
	}
	if (o->nperf_maps == 0)
		return 0;
	u->maps = calloc(o->nperf_maps, sizeof(*u->maps));
	u->rmaps = calloc(o->nperf_maps, sizeof(*u->rmaps));
	if (u->maps == NULL || u->rmaps == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < o->nperf_maps; i++) {
		rc = sym_textsyms_load(&u->maps[i], o->perf_maps[i], 0, why,
		    sizeof(why));
		if (rc < 0)
			return fail(msg, len, rc, "'%s': %s", o->perf_maps[i],
			    load_error(rc, why));
		u->rmaps[i].syms = u->maps[i];
		u->rmaps[i].pid = map_pid(o->perf_maps[i]);
		u->rmaps[i].path = o->perf_maps[i];
		u->nmaps++;
	}
	return 0;
}

static int
open_files(struct run *u, const struct sym_stream_opts *o, char *msg,
    size_t len)
{
	struct stat si, so;
	int rc;

	u->infd = 0;
	if (strcmp(o->in, "-") != 0) {
		u->infd = open(o->in, O_RDONLY | O_CLOEXEC);
		if (u->infd < 0)
			return fail(msg, len, -MT_E_SYS, "cannot open '%s': %s",
			    o->in, strerror(errno));
	}
	if (strcmp(o->out, "-") != 0 && fstat(u->infd, &si) == 0 &&
	    stat(o->out, &so) == 0 && si.st_dev == so.st_dev &&
	    si.st_ino == so.st_ino)
		return fail(msg, len, -MT_E_INVAL, "'%s': refusing to "
		    "overwrite the input", o->out);
	/* A temporary file renamed at the end; stdout and devices (/dev/null,
	 * a FIFO) in place. */
	u->out_open = 1;	/* from here release() aborts it */
	rc = mt_outfile_open(&u->out, o->out, 0666, 0);
	if (rc == -MT_E_ISDIR)
		return fail(msg, len, rc, "'%s' is a directory (-o names the "
		    "output file)", o->out);
	if (rc < 0)
		return fail(msg, len, -MT_E_SYS, "cannot %s '%s': %s",
		    u->out.in_place ? "open" : "create", o->out,
		    strerror(errno));
	return 0;
}

static void
release(struct run *u)
{
	size_t i;

	mt_evr_free(u->r);
	mt_evw_free(u->w);
	sym_res_free(u->res);
	sym_textsyms_free(u->kallsyms);
	for (i = 0; u->maps && i < u->nmaps; i++)
		sym_textsyms_free(u->maps[i]);
	free(u->maps);
	free(u->rmaps);
	free(u->tids.tid);
	free(u->tids.pid);
	sym_pages_free(u->dm, sizeof(*u->dm) << u->dm_bits);
	if (u->infd > 0)
		close(u->infd);
	if (u->out_open)
		mt_outfile_abort(&u->out);
}

/* One record; returns 0 or a negative code. */
static int
step(struct run *u, struct mt_ev *ev)
{
	uint32_t pid;
	int na, i, rc;

	switch (ev->kind) {
	case MT_EV_INFO:
		if (ev->str[0] != NULL && (strcmp(ev->str[0], "symbolized") ==
		    0 || strcmp(ev->str[0], "lines") == 0 ||
		    strcmp(ev->str[0], "inline") == 0))
			return 0;
		break;
	case MT_EV_FILE:
	case MT_EV_FN:
	case MT_EV_LOC:
		return 0;
	case MT_EV_THREAD:
		rc = tidmap_put(&u->tids, ev->tid, ev->pid);
		if (rc < 0)
			return rc;
		u->last_tid = 0;
		break;
	case MT_EV_MOD:
		rc = sym_res_add_mod(u->res, ev->pid, ev->addr[0], ev->addr[1],
		    ev->num, ev->str[0], ev->str[1], ev->time);
		if (rc < 0)
			return rc;
		u->epoch++;
		break;
	default:
		if (!MT_EV_IS_EVENT(ev->kind))
			break;
		u->events++;
		pid = tidmap_get(&u->tids, ev->tid);
		na = mt_ev_naddr(ev->kind);
		for (i = 0; i < na; i++) {
			rc = sym_res_addr(u->res, pid, ev->addr[i],
			    ev->time, &ev->loc[i]);
			if (rc < 0)
				return rc;
		}
		break;
	}
	return mt_evw_write(u->w, ev);
}

/* The pid of @tid, remembering the last answer. */
static uint32_t
pid_of(struct run *u, uint32_t tid)
{
	if (tid != u->last_tid || tid == 0) {
		u->last_tid = tid;
		u->last_pid = tidmap_get(&u->tids, tid);
	}
	return u->last_pid;
}

/*
 * The cache starts small, so that a short stream touches a few pages,
 * and doubles (emptied: it only saves sym_res_addr() calls) each time
 * it has missed as many times as it has entries.  Returns 0 or
 * -MT_E_NOMEM.
 */
static int
dm_make(struct run *u, unsigned bits)
{
	struct dm_ent *v = sym_pages_new(sizeof(*v) << bits);

	if (v == NULL)
		return -MT_E_NOMEM;
	sym_pages_free(u->dm, sizeof(*v) << u->dm_bits);
	u->dm = v;
	u->dm_bits = bits;
	u->dm_misses = 0;
	return 0;
}

static struct dm_ent *
dm_slot(struct run *u, uint32_t pid, uint64_t addr)
{
	return &u->dm[((addr ^ addr >> DM_BITS_MAX ^
	    (uint64_t)pid * 0x9e3779b1u) * 0x9e3779b97f4a7c15ull) >>
	    (64 - u->dm_bits)];
}

/*
 * The cache entry holding " @LOC" of @addr in @pid at @time; NULL on
 * error *@rc.
 */
static const struct dm_ent *
dm_get(struct run *u, uint32_t pid, uint64_t addr, uint64_t time, int *rc)
{
	struct dm_ent *d = dm_slot(u, pid, addr);
	uint32_t loc, v, tep;
	char t[10];
	int n = 0;

	if ((*rc = sym_res_epoch(u->res, pid, time, &tep)) < 0)
		return NULL;
	if (d->epoch == u->epoch && d->addr == addr && d->pid == pid &&
	    d->tep == tep)
		return d;
	*rc = sym_res_addr(u->res, pid, addr, time, &loc);
	if (*rc < 0)
		return NULL;
	if (++u->dm_misses > ((size_t)1 << u->dm_bits) &&
	    u->dm_bits < DM_BITS_MAX) {
		if ((*rc = dm_make(u, u->dm_bits + 1)) < 0)
			return NULL;
		d = dm_slot(u, pid, addr);
	}
	d->addr = addr;
	d->pid = pid;
	d->epoch = u->epoch;
	d->tep = tep;
	d->loc = loc;
	v = loc;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	d->text[0] = ' ';
	d->text[1] = '@';
	for (d->len = 2; n > 0; )
		d->text[d->len++] = t[--n];
	return d;
}

/*
 * A canonical event line (@len bytes at @line, no '\n'): resolve its
 * addresses (emitting the records they need), then copy it with its @
 * fields.  As mt_evw_write(), no @ fields when no address resolved.
 */
static int
fast_step(struct run *u, const char *line, size_t len,
    const struct sym_fast_ev *e)
{
	const struct dm_ent *d;
	char tail[2 * DM_TEXT + 1];
	size_t n = 0;
	uint32_t pid;
	int i, rc = 0, any = 0;

	u->events++;
	if (e->naddr > 0)
		pid = pid_of(u, e->tid);
	for (i = 0; i < e->naddr; i++) {
		/* Copied at once: the second lookup may reuse the entry. */
		d = dm_get(u, pid, e->addr[i], e->time, &rc);
		if (d == NULL)
			return rc;
		any |= d->loc != 0;
		memcpy(tail + n, d->text, d->len);
		n += d->len;
	}
	if (!any)
		n = 0;
	tail[n++] = '\n';
	rc = mt_evw_raw(u->w, line, len);
	return rc < 0 ? rc : mt_evw_raw(u->w, tail, n);
}

/* Show @text (a progress line or its erasure) if progress is on. */
static void
show(struct run *u, const char *text, size_t n)
{
	if (n > 0)
		u->o->show(u->o->show_ctx, text, n);
}

static void
progress(struct run *u)
{
	char line[160];

	if (u->o->progress_ms >= 0 && mt_progress_due(&u->prog))
		show(u, line, mt_progress_format(&u->prog, line,
		    sizeof(line), mt_evr_offset(u->r), u->events, "events"));
}

/* Warnings erase the progress line first. */
static void
warn_clear(void *ctx, const char *msg)
{
	struct run *u = ctx;
	char clr[16];

	if (u->o->progress_ms >= 0)
		show(u, clr, mt_progress_clear(&u->prog, clr, sizeof(clr)));
	u->o->warn(u->o->warn_ctx, msg);
}

/* Input size for the progress share: a regular file read from its start. */
static uint64_t
input_size(int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    lseek(fd, 0, SEEK_CUR) != 0)
		return 0;
	return (uint64_t)st.st_size;
}

int
sym_stream_run(const struct sym_stream_opts *o, const struct sym_dso_opts *d,
    char *msg, size_t msglen)
{
	struct run u = { .infd = -1, .o = o, .epoch = 1 };
	struct sym_fast_ev fe;
	const char *line;
	size_t len;
	struct sym_res_opts ro = { .dso = d, .demangle = o->demangle };
	struct mt_ev *ev = NULL;
	const char *name = strcmp(o->in, "-") == 0 ? "<stdin>" : o->in;
	int rc;

	msg[0] = '\0';
	rc = open_files(&u, o, msg, msglen);
	if (rc == 0)
		rc = load_tables(&u, o, msg, msglen);
	if (rc < 0)
		goto out;
	ro.maps = u.rmaps;
	ro.nmaps = u.nmaps;
	ro.kallsyms = u.kallsyms;
	ro.warn = warn_clear;
	ro.warn_ctx = &u;
	ro.emit = emit;
	ev = malloc(sizeof(*ev));
	if (ev == NULL || dm_make(&u, DM_BITS_MIN) < 0 ||
	    (rc = mt_evr_new(&u.r, u.infd, name)) < 0 ||
	    (rc = mt_evw_new(&u.w, u.out.fd)) < 0) {
		rc = rc < 0 ? rc : -MT_E_NOMEM;
		goto out;
	}
	ro.emit_ctx = u.w;
	rc = sym_res_new(&u.res, &ro);
	if (rc < 0)
		goto out;
	memset(ev, 0, sizeof(*ev));
	ev->kind = MT_EV_INFO;
	ev->str[0] = "symbolized";
	ev->str[1] = "1";
	rc = mt_evw_write(u.w, ev);
	ev->str[1] = "0";
	if (rc == 0 && o->no_lines) {
		ev->str[0] = "lines";
		rc = mt_evw_write(u.w, ev);
	}
	if (rc == 0 && o->no_inline) {
		ev->str[0] = "inline";
		rc = mt_evw_write(u.w, ev);
	}
	if (o->progress_ms >= 0)
		mt_progress_init(&u.prog, "mt-symbolize", input_size(u.infd),
		    (unsigned int)o->progress_ms);
	while (rc == 0) {
		progress(&u);
		rc = mt_evr_peek(u.r, &line, &len);
		if (rc == 0 && sym_fast_parse(line, len, &fe)) {
			mt_evr_skip(u.r);
			rc = fast_step(&u, line, len, &fe);
			continue;
		}
		if (rc >= 0)
			rc = mt_evr_next(u.r, ev);
		if (rc == MT_EOS) {
			rc = 0;
			break;
		}
		if (rc < 0) {
			fail(msg, msglen, rc, "%s: %s", name,
			    mt_evr_errmsg(u.r));
			break;
		}
		rc = step(&u, ev);
	}
	if (rc == 0) {
		rc = mt_evw_free(u.w);
		u.w = NULL;
	}
	if (rc == 0) {
		u.out_open = 0;
		rc = mt_outfile_commit(&u.out);
	}
out:
	if (o->progress_ms >= 0 && u.r != NULL) {
		char clr[16];

		show(&u, clr, mt_progress_clear(&u.prog, clr, sizeof(clr)));
	}
	if (rc < 0 && msg[0] == '\0') {
		if (rc == -MT_E_IO)
			fail(msg, msglen, rc, "cannot write '%s': %s", o->out,
			    strerror(errno));
		else
			fail(msg, msglen, rc, "%s", mt_strerror(rc));
	}
	free(ev);
	release(&u);
	return rc < 0 ? rc : 0;
}
