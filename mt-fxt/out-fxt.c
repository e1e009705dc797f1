/* SPDX-License-Identifier: MIT */
/*
 * --format fxt: the Fuchsia trace that Perfetto opens, through the FXT
 * writer (common/fxt.h).  One FXT process per traced process and one FXT
 * thread per traced thread, with synthetic small koids (real ids are in
 * the names); frames are begin/end pairs (docs/formats/fxt.md says why),
 * trigger hits go to their own process "triggers", thread "hits".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "defer.h"
#include "err.h"
#include "fxt.h"
#include "out.h"
#include "sink.h"
#include "sym.h"

struct ofxt {
	struct out *o;
	struct mt_fxt *w;
	struct defer *d;
	uint64_t next_koid;	/* next synthetic koid */
	uint64_t *pkoid;	/* sym_proc index -> koid, 0 none yet */
	uint8_t *pdone;		/* sym_proc index -> kobj in this file */
	uint32_t npk;
	uint32_t *thr;		/* sym_thread index -> fxt thread handle */
	uint32_t nthr;
	uint32_t *tkoid;	/* sym_thread index -> koid, 0 none yet */
	uint32_t ntk;
	uint32_t *names;	/* sym string handle -> fxt handle + 1 */
	uint32_t nnames;
	uint32_t hits;		/* trigger track thread handle */
	uint64_t hits_pk, hits_tk;	/* its koids, 0 none yet */
	/* Argument names. */
	uint32_t a_address, a_file, a_line, a_inferred, a_inlined, a_tid,
	    a_pid, a_ip;
};

static int
grow_u32(uint32_t **p, uint32_t *n, uint32_t need)
{
	uint32_t nn = *n ? *n : 64;
	uint32_t *np;

	if (need <= *n)
		return 0;
	while (nn < need)
		nn *= 2;
	np = realloc(*p, nn * sizeof(*np));
	if (np == NULL)
		return -MT_E_NOMEM;
	memset(np + *n, 0, (nn - *n) * sizeof(*np));
	*p = np;
	*n = nn;
	return 0;
}

/* name(), the first time @h is used in this file. */
static uint32_t
name_new(struct ofxt *x, uint32_t h)
{
	const char *s;
	size_t len;

	if (h >= x->nnames && grow_u32(&x->names, &x->nnames, h + 1) < 0) {
		x->o->err = -MT_E_NOMEM;
		return 0;
	}
	if (x->names[h] == 0) {
		s = sym_str(x->o->sym, h, &len);
		x->names[h] = mt_fxt_str(x->w, s, len) + 1;
	}
	return x->names[h] - 1;
}

/* FXT handle of sym string @h. */
static inline uint32_t
name(struct ofxt *x, uint32_t h)
{
	if (h == 0)
		return 0;
	if (h < x->nnames && x->names[h] != 0)
		return x->names[h] - 1;
	return name_new(x, h);
}

static uint64_t
proc_koid(struct ofxt *x, uint32_t index)
{
	const struct sym_proc *p = sym_proc(x->o->sym, index);
	char b[MT_FXT_MAX_STRLEN + 64];
	const char *what;
	size_t wlen;
	struct mt_fxt_arg a = { .name = x->a_pid, .type = MT_FXT_ARG_UINT };
	int n;

	if (index < x->npk && x->pdone[index])
		return x->pkoid[index];
	if (index >= x->npk) {
		uint32_t nn = index + 16;
		uint64_t *np = realloc(x->pkoid, nn * sizeof(*np));
		uint8_t *nd;

		if (np == NULL) {
			x->o->err = -MT_E_NOMEM;
			return 1;
		}
		x->pkoid = np;
		nd = realloc(x->pdone, nn);
		if (nd == NULL) {
			x->o->err = -MT_E_NOMEM;
			return 1;
		}
		x->pdone = nd;
		memset(np + x->npk, 0, (nn - x->npk) * sizeof(*np));
		memset(nd + x->npk, 0, nn - x->npk);
		x->npk = nn;
	}
	if (x->pkoid[index] == 0)
		x->pkoid[index] = x->next_koid++;
	x->pdone[index] = 1;
	what = sym_str(x->o->sym, p->cmdline ? p->cmdline : p->comm, &wlen);
	if (wlen > MT_FXT_MAX_STRLEN - 32)
		wlen = MT_FXT_MAX_STRLEN - 32;	/* long cmdlines: cut */
	if (p->pid)
		n = snprintf(b, sizeof(b), "%.*s%s[pid=%" PRIu32 "]",
		    (int)wlen, what, wlen ? " " : "", p->pid);
	else
		n = snprintf(b, sizeof(b), "%.*s%s[pid=?]", (int)wlen, what,
		    wlen ? " " : "");
	a.v.u = p->pid;
	mt_fxt_kobj(x->w, MT_FXT_KOBJ_PROCESS, x->pkoid[index], 0, b,
	    (size_t)n, &a, p->pid ? 1 : 0);
	return x->pkoid[index];
}

/* thread(), the first time @t is used in this file. */
static uint32_t
thread_new(struct ofxt *x, const struct sym_thread *t)
{
	struct mt_fxt_arg a = { .name = x->a_tid, .type = MT_FXT_ARG_UINT,
	    .v.u = t->tid };
	uint64_t pk;
	const char *c;
	size_t clen;
	char b[600];
	int n;

	if (grow_u32(&x->thr, &x->nthr, t->index + 1) < 0 ||
	    grow_u32(&x->tkoid, &x->ntk, t->index + 1) < 0) {
		x->o->err = -MT_E_NOMEM;
		return 0;
	}
	pk = proc_koid(x, t->proc);
	if (x->tkoid[t->index] == 0)
		x->tkoid[t->index] = (uint32_t)x->next_koid++;
	c = sym_str(x->o->sym, t->comm, &clen);
	if (clen > 512)
		clen = 512;
	n = snprintf(b, sizeof(b), "%.*s%s[tid=%" PRIu32 "]", (int)clen, c,
	    clen ? " " : "", t->tid);
	mt_fxt_kobj(x->w, MT_FXT_KOBJ_THREAD, x->tkoid[t->index], pk, b,
	    (size_t)n, &a, 1);
	x->thr[t->index] = mt_fxt_thread(x->w, pk, x->tkoid[t->index]);
	return x->thr[t->index];
}

/* The FXT thread of @t, written (kernel objects) on first use. */
static inline uint32_t
thread(struct ofxt *x, const struct sym_thread *t)
{
	if (t->index < x->nthr && x->thr[t->index])
		return x->thr[t->index];
	return thread_new(x, t);
}

static void
emit(void *ctx, const struct sym_thread *t, int kind, uint64_t ts,
    const struct frame *f)
{
	struct ofxt *x = ctx;
	struct mt_fxt_arg a[5];
	uint32_t th = thread(x, t);
	unsigned n = 0;

	if (kind == DEFER_END) {
		mt_fxt_end(x->w, th, 0, name(x, f->name), ts, NULL, 0);
		return;
	}
	if (f->addr) {
		a[n].name = x->a_address;
		a[n].type = MT_FXT_ARG_PTR;
		a[n++].v.u = f->addr;
	}
	if (f->file) {
		a[n].name = x->a_file;
		a[n].type = MT_FXT_ARG_STR;
		a[n++].v.str = name(x, f->file);
		if (f->line) {
			a[n].name = x->a_line;
			a[n].type = MT_FXT_ARG_INT;
			a[n++].v.i = f->line;
		}
	}
	if (f->flags & FR_INFERRED) {
		a[n].name = x->a_inferred;
		a[n].type = MT_FXT_ARG_BOOL;
		a[n++].v.i = 1;
	}
	if (f->flags & FR_INLINED) {
		a[n].name = x->a_inlined;
		a[n].type = MT_FXT_ARG_BOOL;
		a[n++].v.i = 1;
	}
	mt_fxt_begin(x->w, th, 0, name(x, f->name), ts, a, n);
}

/* A new writer on o->sink; caches of the previous one are reset. */
static int
start_writer(struct ofxt *x)
{
	struct out *o = x->o;
	struct mt_fxt_limits lim = {
		.max_strings = o->opts->string_slots,
		.max_threads = o->opts->thread_slots,
	};
	int rc;

	rc = mt_fxt_new(&x->w, sink_fxt, o->sink, &lim, "mt-fxt");
	if (rc < 0)
		return rc;
	if (x->names)
		memset(x->names, 0, x->nnames * sizeof(*x->names));
	if (x->thr)
		memset(x->thr, 0, x->nthr * sizeof(*x->thr));
	if (x->pdone)
		memset(x->pdone, 0, x->npk);
	x->hits = 0;
	x->a_address = mt_fxt_cstr(x->w, "address");
	x->a_file = mt_fxt_cstr(x->w, "file");
	x->a_line = mt_fxt_cstr(x->w, "line");
	x->a_inferred = mt_fxt_cstr(x->w, "inferred_start_time");
	x->a_inlined = mt_fxt_cstr(x->w, "inlined");
	x->a_tid = mt_fxt_cstr(x->w, "tid");
	x->a_pid = mt_fxt_cstr(x->w, "pid");
	x->a_ip = mt_fxt_cstr(x->w, "ip");
	return mt_fxt_error(x->w);
}

static int
fxt_open(struct out *o)
{
	struct ofxt *x = calloc(1, sizeof(*x));
	int rc;

	if (x == NULL)
		return -MT_E_NOMEM;
	o->priv = x;
	x->o = o;
	x->next_koid = 1;
	rc = defer_new(&x->d, emit, x);
	if (rc < 0)
		return rc;
	return start_writer(x);
}

static uint64_t
fxt_size(struct out *o)
{
	struct ofxt *x = o->priv;

	return mt_fxt_bytes(x->w);
}

static int
fxt_split(struct out *o, struct sink *next)
{
	struct ofxt *x = o->priv;
	int rc = mt_fxt_free(x->w);

	x->w = NULL;
	if (rc < 0)
		return rc;
	o->sink = next;
	return start_writer(x);
}

static void
fxt_seg_push(struct out *o, const struct sym_thread *t, uint64_t ts)
{
	struct ofxt *x = o->priv;

	thread(x, t);
	defer_seg_push(x->d, t, ts);
}

static void
fxt_seg_pop(struct out *o, const struct sym_thread *t, uint64_t ts)
{
	struct ofxt *x = o->priv;

	(void)ts;
	defer_seg_pop(x->d, t);
}

static void
fxt_begin(struct out *o, const struct sym_thread *t, uint64_t ts,
    const struct frame *f)
{
	struct ofxt *x = o->priv;

	defer_event(x->d, t, DEFER_BEGIN, ts, f);
}

static void
fxt_end(struct out *o, const struct sym_thread *t, uint64_t ts,
    const struct frame *f)
{
	struct ofxt *x = o->priv;

	defer_event(x->d, t, DEFER_END, ts, f);
}

static void
fxt_trigger(struct out *o, const struct sym_thread *t, uint64_t ts,
    uint64_t ip, uint32_t what)
{
	struct ofxt *x = o->priv;
	struct mt_fxt_arg a[2] = {
		{ .name = x->a_tid, .type = MT_FXT_ARG_UINT, .v.u = t->tid },
		{ .name = x->a_ip, .type = MT_FXT_ARG_PTR, .v.u = ip },
	};
	const char *w;
	size_t wlen;
	char b[300];
	uint32_t nm;
	int n;

	if (x->hits == 0) {
		if (x->hits_pk == 0) {
			x->hits_pk = x->next_koid++;
			x->hits_tk = x->next_koid++;
		}
		mt_fxt_kobj(x->w, MT_FXT_KOBJ_PROCESS, x->hits_pk, 0,
		    "triggers", 8, NULL, 0);
		mt_fxt_kobj(x->w, MT_FXT_KOBJ_THREAD, x->hits_tk, x->hits_pk,
		    "hits", 4, NULL, 0);
		x->hits = mt_fxt_thread(x->w, x->hits_pk, x->hits_tk);
	}
	w = sym_str(o->sym, what, &wlen);
	if (wlen > 256)
		wlen = 256;
	n = snprintf(b, sizeof(b), "hit %.*s", (int)wlen, w);
	nm = mt_fxt_str(x->w, b, (size_t)n);
	mt_fxt_begin(x->w, x->hits, 0, nm, ts, a, 2);
	mt_fxt_end(x->w, x->hits, 0, nm, ts, NULL, 0);
}

static int
fxt_close(struct out *o, const struct fxt_stats *st)
{
	struct ofxt *x = o->priv;
	int rc;

	(void)st;
	if (x == NULL)
		return o->err ? o->err : -MT_E_NOMEM;
	rc = defer_error(x->d);
	if (rc == 0)
		rc = o->err;
	if (rc == 0)
		rc = mt_fxt_flush(x->w);
	return rc;
}

static void
fxt_free(struct out *o)
{
	struct ofxt *x = o->priv;

	if (x == NULL)
		return;
	mt_fxt_free(x->w);
	defer_free(x->d);
	free(x->pkoid);
	free(x->pdone);
	free(x->tkoid);
	free(x->thr);
	free(x->names);
	free(x);
	o->priv = NULL;
}

const struct out_ops out_fxt_ops = {
	.name = "fxt",
	.binary = 1,
	.open = fxt_open,
	.seg_push = fxt_seg_push,
	.seg_pop = fxt_seg_pop,
	.begin = fxt_begin,
	.end = fxt_end,
	.trigger = fxt_trigger,
	.size = fxt_size,
	.split = fxt_split,
	.close = fxt_close,
	.free = fxt_free,
};
