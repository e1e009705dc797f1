/* SPDX-License-Identifier: MIT */
/*
 * The record loop of mt-fxt (see run.h): definitions go to the tables
 * (sym.h), events to the reconstruction (recon.h), which feeds the view
 * (view.h), which feeds the output format (out.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "events.h"
#include "fastev.h"
#include "progress.h"
#include "recon.h"
#include "run.h"
#include "sink.h"
#include "sym.h"
#include "view.h"

static const char *
in_name(const struct fxt_opts *o)
{
	return strcmp(o->in, "-") == 0 ? "<stdin>" : o->in;
}

static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

/*
 * The next record: plain event lines through the fast path (fastev.h),
 * everything else through the full reader.  Returns as mt_evr_next().
 */
static int
next_record(struct mt_evr *r, struct mt_ev *ev)
{
	const char *p;
	size_t n;

	if (mt_evr_ahead(r, &p, &n) == 0 &&
	    (n = fastev_line(p, p + n, ev)) > 0) {
		mt_evr_take(r, n);
		return 0;
	}
	return mt_evr_next(r, ev);
}

/*
 * --around-trigger: find the first trigger hit (and the time base) in a
 * first pass, then rewind.  Needs a seekable input.
 */
static int
prescan(const struct fxt_opts *o, int fd, struct fxt_opts *eff, char *msg,
    size_t n)
{
	struct mt_evr *r = NULL;
	struct mt_ev *ev = malloc(sizeof(*ev));
	uint64_t base = 0, hit = 0;
	int rc, found = 0;

	if (ev == NULL)
		return -MT_E_NOMEM;
	if (lseek(fd, 0, SEEK_CUR) < 0) {
		snprintf(msg, n, "%s: --around-trigger needs a file, not a "
		    "pipe", in_name(o));
		free(ev);
		return -MT_E_INVAL;
	}
	rc = mt_evr_new(&r, fd, in_name(o));
	while (rc >= 0 && (rc = next_record(r, ev)) == 0) {
		if (ev->kind == MT_EV_INFO && ev->str[0] &&
		    strcmp(ev->str[0], "time-base") == 0)
			parse_u64(ev->str[1], &base);
		if (ev->kind == MT_EV_TRIGGER) {
			hit = ev->time > base ? ev->time - base : 0;
			found = 1;
			break;
		}
	}
	if (rc < 0 && r)
		snprintf(msg, n, "%s: %s", in_name(o), mt_evr_errmsg(r));
	mt_evr_free(r);
	free(ev);
	if (rc < 0)
		return rc;
	if (!found) {
		snprintf(msg, n, "%s: --around-trigger: no trigger hit in the "
		    "stream", in_name(o));
		return -MT_E_NOTFOUND;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		snprintf(msg, n, "%s: cannot rewind: %s", in_name(o),
		    strerror(errno));
		return -MT_E_IO;
	}
	eff->have_time = 1;
	eff->time_from = hit > o->around_before ? hit - o->around_before : 0;
	eff->time_to = hit + o->around_after;
	if (o->have_time) {	/* both: the intersection */
		if (o->time_from > eff->time_from)
			eff->time_from = o->time_from;
		if (o->time_to < eff->time_to)
			eff->time_to = o->time_to;
	}
	return 0;
}

/*
 * Gzip level for the output: explicit, else FXT_GZIP_LEVEL for .gz names
 * and FXT on standard output, else none.
 */
static int
out_level(const struct fxt_opts *o)
{
	size_t len = strlen(o->out);

	if (o->level >= 0)
		return o->level;
	if (len > 3 && strcmp(o->out + len - 3, ".gz") == 0)
		return FXT_GZIP_LEVEL;
	if (strcmp(o->out, "-") == 0 && o->format->binary)
		return FXT_GZIP_LEVEL;
	return 0;
}

/* "dir/trace.fxt.gz" -> "dir/trace.K.fxt.gz"; no dot: "trace.K". */
static char *
numbered(const char *path, unsigned k)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dot = strchr(base, '.');
	size_t pre = dot ? (size_t)(dot - path) : strlen(path);
	size_t len = strlen(path) + 16;
	char *b = malloc(len);

	if (b != NULL)
		snprintf(b, len, "%.*s.%u%s", (int)pre, path, k,
		    dot ? dot : "");
	return b;
}

/* State of --max-size splitting. */
struct split {
	struct out *out;
	const struct fxt_opts *o;
	struct fxt_stats *st;
	int level;
	char msg[256];
};

/* Close file number st->files + 1 under its numbered name, open the next. */
static int
split_swap(void *ctx)
{
	struct split *sp = ctx;
	struct sink *old = sp->out->sink, *next;
	char *name;
	int rc;

	rc = sink_open(&next, sp->o->out, sp->level, sp->msg,
	    sizeof(sp->msg));
	if (rc < 0)
		return rc;
	rc = sp->out->ops->split(sp->out, next);
	name = numbered(sp->o->out, (unsigned)sp->st->files + 1);
	if (rc == 0 && name == NULL)
		rc = -MT_E_NOMEM;
	if (rc == 0)
		rc = sink_set_path(old, name);
	free(name);
	if (rc < 0) {
		sink_close(old, 0, NULL, 0);
		return rc;
	}
	rc = sink_close(old, 1, sp->msg, sizeof(sp->msg));
	sp->st->files++;
	return rc;
}

/*
 * A run that fails after --max-size split its output: remove the numbered
 * files it finished (@out.1 ... @out.N), so that a failed run leaves no
 * part of a trace behind (the last part, not finished, was a temporary
 * file and is gone already).
 */
static void
remove_parts(const char *out, struct fxt_stats *st)
{
	char *name;

	for (; st->files > 0; st->files--) {
		name = numbered(out, (unsigned)st->files);
		if (name != NULL)
			(void)unlink(name);
		free(name);
	}
}

/* Split when the output would outgrow --max-size with its open frames. */
static int
maybe_split(struct split *sp, struct view *v)
{
	const struct out_ops *ops = sp->out->ops;
	uint64_t need;

	if (ops->split == NULL || !sink_renamable(sp->out->sink))
		return 0;	/* stdout or a device: one stream */
	need = ops->size(sp->out) + 16 * view_open_frames(v) + 4096;
	if (need <= sp->o->max_size)
		return 0;
	return view_split(v, split_swap, sp);
}

/* Input size for the progress share: a regular file read from its start. */
static uint64_t
input_size(int fd)
{
	struct stat sb;

	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    lseek(fd, 0, SEEK_CUR) != 0)
		return 0;
	return (uint64_t)sb.st_size;
}

/* Progress line: input consumed, events read and written. */
static void
progress(const struct fxt_opts *o, struct mt_progress *pg,
    const struct mt_evr *r, const struct fxt_stats *st)
{
	char unit[64], line[192];
	size_t n;

	if (o->progress_ms < 0 || !mt_progress_due(pg))
		return;
	snprintf(unit, sizeof(unit), "events read, %" PRIu64 " written",
	    st->written);
	n = mt_progress_format(pg, line, sizeof(line), mt_evr_offset(r),
	    st->events, unit);
	o->show(line, n);
}

static int
definition(struct sym *sym, struct recon *rc, const struct mt_ev *ev,
    int *seen_event)
{
	uint64_t base;
	struct sym_thread *t;

	switch (ev->kind) {
	case MT_EV_INFO:
		if (!*seen_event && ev->str[0] &&
		    strcmp(ev->str[0], "time-base") == 0 &&
		    parse_u64(ev->str[1], &base) == 0)
			recon_set_base(rc, base);
		return 0;
	case MT_EV_PROC:
		return sym_add_proc(sym, ev->pid, ev->str[0], ev->str[1]);
	case MT_EV_THREAD:
		t = sym_thread(sym, ev->pid, ev->tid);
		if (t == NULL)
			return -MT_E_NOMEM;
		return sym_name_thread(sym, t, ev->pid, ev->str[0]);
	case MT_EV_FILE:
		return sym_add_file(sym, ev->id, ev->str[0]);
	case MT_EV_FN:
		return sym_add_fn(sym, ev->id, ev->addr[0], ev->str[1],
		    ev->str[2]);
	case MT_EV_LOC:
		return sym_add_loc(sym, ev->id, ev->addr[0], ev->frames,
		    ev->nframes);
	default:
		return 0;
	}
}

int
fxt_run(const struct fxt_opts *o0, int fd, struct fxt_stats *st, char *msg,
    size_t n)
{
	struct fxt_opts o = *o0;
	struct out out = { .ops = o0->format, .opts = &o };
	struct mt_evr *r = NULL;
	struct mt_ev *ev = NULL;
	struct sym *sym = NULL;
	struct view *v = NULL;
	struct recon *rc = NULL;
	int ret, seen_event = 0, opened = 0;
	struct split sp = { 0 };
	struct mt_progress pg = { 0 };
	char smsg[256];
	size_t clr;

	memset(st, 0, sizeof(*st));
	msg[0] = '\0';
	if (o.progress_ms >= 0 && o.show == NULL)
		o.progress_ms = -1;
	if (o.progress_ms >= 0)
		mt_progress_init(&pg, "mt-fxt", input_size(fd),
		    (unsigned int)o.progress_ms);
	if (o.have_around && (ret = prescan(o0, fd, &o, msg, n)) < 0)
		return ret;
	ev = malloc(sizeof(*ev));
	if (ev == NULL || (ret = sym_new(&sym)) < 0 ||
	    (ret = mt_evr_new(&r, fd, in_name(&o))) < 0) {
		ret = -MT_E_NOMEM;
		goto out;
	}
	out.sym = sym;
	ret = sink_open(&out.sink, o.out, out_level(&o), smsg, sizeof(smsg));
	if (ret < 0) {
		snprintf(msg, n, "%s", smsg);
		goto out;
	}
	opened = 1;
	if ((ret = out.ops->open(&out)) < 0 ||
	    (ret = view_new(&v, &o, &out, sym, st)) < 0 ||
	    (ret = recon_new(&rc, sym, v, st)) < 0)
		goto out;
	sp.out = &out;
	sp.o = &o;
	sp.st = st;
	sp.level = out_level(&o);
	while ((ret = next_record(r, ev)) == 0) {
		progress(&o, &pg, r, st);
		if (MT_EV_IS_EVENT(ev->kind)) {
			seen_event = 1;
			ret = recon_event(rc, ev);
			if (ret == 0 && o.max_size &&
			    (ret = maybe_split(&sp, v)) < 0) {
				snprintf(msg, n, "%s", sp.msg[0] ? sp.msg :
				    mt_strerror(ret));
				goto out;
			}
		} else {
			ret = definition(sym, rc, ev, &seen_event);
			if (ret == -MT_E_CORRUPT) {
				snprintf(msg, n, "%s: line %" PRIu64 ": field "
				    "3: a frame names an undefined fn",
				    in_name(&o), mt_evr_lineno(r));
				goto out;
			}
		}
		if (ret == 0)
			ret = view_error(v);
		if (ret == 0)
			ret = out.err;
		if (ret < 0)
			goto out;
	}
	if (ret < 0) {
		snprintf(msg, n, "%s: %s", in_name(&o), mt_evr_errmsg(r));
		goto out;
	}
	ret = recon_finish(rc);
	if (ret == 0)
		ret = view_error(v);
	if (ret == 0)
		ret = out.ops->close(&out, st);
out:
	if (opened) {
		int cr;

		if (out.ops->free)
			out.ops->free(&out);
		if (ret >= 0 && st->files > 0) {
			char *last = numbered(o.out, (unsigned)st->files + 1);

			if (last == NULL || sink_set_path(out.sink, last) < 0)
				ret = -MT_E_NOMEM;
			free(last);
		}
		cr = sink_close(out.sink, ret >= 0, smsg, sizeof(smsg));
		if (ret < 0 || cr < 0)
			remove_parts(o.out, st);
		if (st->files > 0)
			st->files++;
		if (cr < 0 && (ret >= 0 || msg[0] == '\0')) {
			/* The sink knows why (e.g. the disk is full). */
			if (ret >= 0)
				ret = cr;
			snprintf(msg, n, "%s", smsg);
		}
	}
	if (ret < 0 && msg[0] == '\0')
		snprintf(msg, n, "%s", mt_strerror(ret));
	if (o.progress_ms >= 0 &&
	    (clr = mt_progress_clear(&pg, smsg, sizeof(smsg))) > 0)
		o.show(smsg, clr);
	recon_free(rc);
	view_free(v);
	mt_evr_free(r);
	sym_free(sym);
	free(ev);
	return ret < 0 ? ret : 0;
}

int
fxt_unmatched(const struct fxt_opts *o, const struct fxt_stats *st,
    char *msg, size_t n)
{
	size_t i, start, len;

	/* Named after the input, as the other errors of a run. */
	start = len = (size_t)snprintf(msg, n, "%s: ", in_name(o));
	for (i = 0; i < o->ntids; i++) {
		if (st->tids_seen & (1ull << i) || len >= n)
			continue;
		len += (size_t)snprintf(msg + len, n - len, "%s%" PRIu32,
		    len > start ? "," : "--tid ", o->tids[i]);
	}
	if (len > start && len < n)
		len += (size_t)snprintf(msg + len, n - len,
		    ": no such thread in the stream");
	if (o->between_start != NULL && st->between_hits == 0 && len < n)
		len += (size_t)snprintf(msg + len, n - len,
		    "%s--between: '%s' is never called",
		    len > start ? "; " : "", o->between_start);
	if (len == start)
		msg[0] = '\0';
	return len > start;
}
