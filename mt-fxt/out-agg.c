/* SPDX-License-Identifier: MIT */
/*
 * --format folded and --format summary: both aggregate the timeline into
 * a calling-context tree (one node per distinct stack, per thread) and
 * print it at the end.  Memory grows with the number of distinct stacks,
 * not with the number of events.
 *
 * An outer inferred frame (FR_OUTER) is discovered after the frames it
 * held: its node takes over every child its parent gained in the current
 * segment.  Each segment gets a nameless node, merged into its parent
 * when the segment closes, so that only the segment's own frames move.
 *
 * folded: one line per stack, "THREAD;outer;...;inner SELF_NS", sorted,
 * the format of flamegraph.pl and speedscope.
 * summary: counts, the stack at each trigger hit, the top functions by
 * self and inclusive time (recursion counted once) with call counts, what
 * --min-duration dropped, and with --function NAME a latency histogram.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "grow.h"
#include "out.h"
#include "sink.h"
#include "sym.h"
#include "thrtab.h"

#define NONE		UINT32_MAX
#define TOP_N		20
#define MAX_TRIGGERS	1000	/* stacks kept for the summary */
#define HIST_BUCKETS	64

struct node {
	uint32_t name;		/* sym handle; 0 for a segment or thread root */
	uint32_t parent;	/* NONE for a thread root */
	uint32_t child;		/* first child, NONE */
	uint32_t next;		/* next sibling, NONE */
	uint32_t fwd;		/* merged into this node, NONE if live */
	uint64_t total;		/* ns inside, summed over calls */
	uint64_t calls;		/* times entered */
};

struct aentry {
	uint32_t node;
	uint64_t start;
};

struct aseg {
	uint32_t node;		/* the segment's nameless node */
	uint32_t depth;		/* stack depth when it opened */
};

struct athread {
	const struct sym_thread *t;
	uint32_t root;		/* nameless root node */
	struct aentry *st;
	uint32_t nst, capst;
	struct aseg *seg;
	uint32_t nseg, capseg;
};

struct trig {
	uint32_t thread;	/* sym_thread index */
	uint64_t ts;
	uint32_t node;		/* innermost frame then */
	uint32_t what;		/* sym handle */
};

/* A latency histogram (--function). */
struct hist {
	uint64_t b[HIST_BUCKETS];	/* by floor(log2(ns)) + 1 */
	uint64_t count, sum, min, max;	/* calls, ns */
};

static void
hist_add(struct hist *h, uint64_t d)
{
	int b = 0;

	while (b < HIST_BUCKETS - 1 && (d >> b) != 0)
		b++;
	h->b[b]++;
	if (h->count == 0 || d < h->min)
		h->min = d;
	if (d > h->max)
		h->max = d;
	h->count++;
	h->sum += d;
}

struct agg {
	struct out *o;
	int folded;		/* folded, else summary */
	struct node *n;
	uint32_t nn, capn;
	struct thrtab thr;	/* struct athread by sym_thread index */
	struct trig *trig;
	uint32_t ntrig;
	uint32_t fn;		/* --function name handle, 0 none */
	/*
	 * --function NAME: [0] the frames named NAME, [1] the functions the
	 * IFUNC NAME picked (then [0] is its resolver, not shown).
	 */
	struct hist h[2];
};

static uint32_t
node_new(struct agg *a, uint32_t name, uint32_t parent)
{
	struct node *x;
	uint32_t i;

	if (fxt_grow((void **)&a->n, &a->capn, a->nn + 1, sizeof(*a->n)) < 0) {
		a->o->err = -MT_E_NOMEM;
		return NONE;
	}
	i = a->nn++;
	x = &a->n[i];
	x->name = name;
	x->parent = parent;
	x->child = NONE;
	x->fwd = NONE;
	x->total = x->calls = 0;
	if (parent != NONE) {
		x->next = a->n[parent].child;
		a->n[parent].child = i;
	} else {
		x->next = NONE;
	}
	return i;
}

static uint32_t
child(struct agg *a, uint32_t parent, uint32_t name)
{
	uint32_t c;

	for (c = a->n[parent].child; c != NONE; c = a->n[c].next)
		if (a->n[c].name == name)
			return c;
	return node_new(a, name, parent);
}

static struct athread *
get(struct agg *a, const struct sym_thread *t)
{
	struct athread *at;
	int fresh;

	at = thrtab_get(&a->thr, t->index, sizeof(*at), &fresh);
	if (at == NULL) {
		a->o->err = -MT_E_NOMEM;
		return NULL;
	}
	if (fresh) {
		at->t = t;
		at->root = node_new(a, 0, NONE);
	}
	return at->root == NONE ? NULL : at;
}

/* The node new frames of @at go under. */
static uint32_t
top(struct athread *at)
{
	if (at->nseg > 0 && at->nst <= at->seg[at->nseg - 1].depth)
		return at->seg[at->nseg - 1].node;
	if (at->nst > 0)
		return at->st[at->nst - 1].node;
	return at->root;
}

static void
agg_seg_push(struct out *o, const struct sym_thread *t, uint64_t ts)
{
	struct agg *a = o->priv;
	struct athread *at = get(a, t);
	uint32_t p;

	(void)ts;
	if (at == NULL || fxt_grow((void **)&at->seg, &at->capseg, at->nseg + 1,
	    sizeof(*at->seg)) < 0) {
		o->err = -MT_E_NOMEM;
		return;
	}
	p = node_new(a, 0, top(at));
	at->seg[at->nseg].node = p;
	at->seg[at->nseg].depth = at->nst;
	at->nseg++;
}

/* Unlink @c from its parent's child list. */
static void
unlink_node(struct agg *a, uint32_t c)
{
	uint32_t *pp = &a->n[a->n[c].parent].child;

	while (*pp != c)
		pp = &a->n[*pp].next;
	*pp = a->n[c].next;
}

/* Move @c (with its subtree) under @dst, merging equal names. */
static void
merge(struct agg *a, uint32_t dst, uint32_t c)
{
	uint32_t e, cc, next;

	for (e = a->n[dst].child; e != NONE; e = a->n[e].next)
		if (a->n[e].name == a->n[c].name && e != c)
			break;
	if (e == NONE) {
		a->n[c].parent = dst;
		a->n[c].next = a->n[dst].child;
		a->n[dst].child = c;
		return;
	}
	a->n[e].total += a->n[c].total;
	a->n[e].calls += a->n[c].calls;
	for (cc = a->n[c].child; cc != NONE; cc = next) {
		next = a->n[cc].next;
		merge(a, e, cc);
	}
	a->n[c].child = NONE;
	a->n[c].fwd = e;
}

static void
agg_seg_pop(struct out *o, const struct sym_thread *t, uint64_t ts)
{
	struct agg *a = o->priv;
	struct athread *at = get(a, t);
	uint32_t p, parent, c, next;

	(void)ts;
	if (at == NULL || at->nseg == 0)
		return;
	p = at->seg[--at->nseg].node;
	parent = a->n[p].parent;
	unlink_node(a, p);
	for (c = a->n[p].child; c != NONE; c = next) {
		next = a->n[c].next;
		merge(a, parent, c);
	}
	a->n[p].child = NONE;
	a->n[p].fwd = parent;
}

static void
agg_begin(struct out *o, const struct sym_thread *t, uint64_t ts,
    const struct frame *f)
{
	struct agg *a = o->priv;
	struct athread *at = get(a, t);
	uint32_t p, x, c;

	if (at == NULL)
		return;
	p = top(at);
	if (f->flags & FR_OUTER) {
		/* Everything under p so far happened inside the new frame. */
		x = node_new(a, f->name, NONE);
		if (x == NONE)
			return;
		a->n[x].child = a->n[p].child;
		for (c = a->n[x].child; c != NONE; c = a->n[c].next)
			a->n[c].parent = x;
		a->n[x].parent = p;
		a->n[x].next = NONE;
		a->n[p].child = x;
	} else {
		x = child(a, p, f->name);
		if (x == NONE)
			return;
	}
	a->n[x].calls++;
	if (fxt_grow((void **)&at->st, &at->capst, at->nst + 1,
	    sizeof(*at->st)) < 0) {
		o->err = -MT_E_NOMEM;
		return;
	}
	at->st[at->nst].node = x;
	at->st[at->nst].start = ts;
	at->nst++;
}

static void
agg_end(struct out *o, const struct sym_thread *t, uint64_t ts,
    const struct frame *f)
{
	struct agg *a = o->priv;
	struct athread *at = get(a, t);
	struct aentry *e;
	uint64_t d;

	if (at == NULL || at->nst == 0)
		return;
	e = &at->st[--at->nst];
	d = ts > e->start ? ts - e->start : 0;
	a->n[e->node].total += d;
	if (a->fn && f->name == a->fn)
		hist_add(&a->h[0], d);
	else if (a->fn && sym_ifunc_of(a->o->sym, f->name) == a->fn)
		hist_add(&a->h[1], d);
}

static void
agg_trigger(struct out *o, const struct sym_thread *t, uint64_t ts,
    uint64_t ip, uint32_t what)
{
	struct agg *a = o->priv;
	struct athread *at = get(a, t);

	(void)ip;
	if (at == NULL || a->ntrig == MAX_TRIGGERS)
		return;
	if (a->trig == NULL &&
	    (a->trig = calloc(MAX_TRIGGERS, sizeof(*a->trig))) == NULL) {
		o->err = -MT_E_NOMEM;
		return;
	}
	a->trig[a->ntrig].thread = t->index;
	a->trig[a->ntrig].ts = ts;
	a->trig[a->ntrig].node = at->nst ? at->st[at->nst - 1].node : NONE;
	a->trig[a->ntrig].what = what;
	a->ntrig++;
}

static uint32_t
live(const struct agg *a, uint32_t x)
{
	while (x != NONE && a->n[x].fwd != NONE)
		x = a->n[x].fwd;
	return x;
}

static uint64_t
self_time(const struct agg *a, uint32_t x)
{
	uint64_t kids = 0;
	uint32_t c;

	for (c = a->n[x].child; c != NONE; c = a->n[c].next)
		kids += a->n[c].total;
	return a->n[x].total > kids ? a->n[x].total - kids : 0;
}

/*
 * Copy @n bytes of a name from @p to @q, a control character (and with
 * @folded, ';', the folded separator) as '_': one line per stack or per
 * function, whatever a hostile binary's symbols hold.
 */
static void
clean(char *q, const char *p, size_t n, int folded)
{
	size_t m;

	for (m = 0; m < n; m++)
		q[m] = (uint8_t)p[m] < 0x20 || p[m] == 0x7f ||
		    (folded && p[m] == ';') ? '_' : p[m];
}

/* Write @n bytes of a name from @p to @s, control characters as '_'. */
static void
put_name(struct sink *s, const char *p, size_t n)
{
	char b[256];
	size_t k;

	for (; n > 0; p += k, n -= k) {
		k = n < sizeof(b) ? n : sizeof(b);
		clean(b, p, k, 0);
		sink_write(s, b, k);
	}
}

static char *
thread_label(struct agg *a, const struct sym_thread *t, size_t *lenp)
{
	size_t clen;
	const char *c = sym_str(a->o->sym, t->comm, &clen);
	char *b = malloc(clen + 32);

	if (b == NULL)
		return NULL;
	*lenp = (size_t)snprintf(b, clen + 32, "%.*s%s[tid=%" PRIu32 "]",
	    (int)clen, c, clen ? " " : "", t->tid);
	clean(b, b, clen, 1);
	return b;
}

struct fline {
	char *s;		/* "a;b;c" */
	uint64_t v;
};

static int
cmp_fline(const void *x, const void *y)
{
	return strcmp(((const struct fline *)x)->s,
	    ((const struct fline *)y)->s);
}

/* Collect "label;path value" for every node with self time, sort, print. */
static int
print_folded(struct agg *a)
{
	struct fline *lines = NULL;
	uint32_t nl = 0, capl = 0, i, *path = NULL, capp = 0;
	uint32_t *rootof = calloc(a->nn ? a->nn : 1, sizeof(*rootof));
	int rc = 0;

	if (rootof == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < a->thr.n; i++) {
		const struct athread *t0 = thrtab_at(&a->thr, i);

		if (t0 != NULL)
			rootof[t0->root] = i + 1;
	}
	for (i = 0; i < a->nn; i++) {
		struct node *x = &a->n[i];
		uint32_t np = 0, y, k;
		uint64_t v;
		size_t len, tl;
		char *lbl, *s, *q;
		const struct athread *at;

		if (x->name == 0 || x->fwd != NONE || (v = self_time(a, i)) == 0)
			continue;
		for (y = i; a->n[y].parent != NONE; y = a->n[y].parent) {
			if (a->n[y].name == 0)
				continue;
			if (fxt_grow((void **)&path, &capp, np + 1,
			    sizeof(*path)) < 0)
				goto nomem;
			path[np++] = a->n[y].name;
		}
		if (rootof[y] == 0)
			continue;
		at = thrtab_at(&a->thr, rootof[y] - 1);
		lbl = thread_label(a, at->t, &tl);
		if (lbl == NULL)
			goto nomem;
		len = tl;
		for (k = 0; k < np; k++) {
			size_t l;

			sym_str(a->o->sym, path[k], &l);
			len += 1 + l;
		}
		s = malloc(len + 1);
		if (s == NULL) {
			free(lbl);
			goto nomem;
		}
		memcpy(s, lbl, tl);
		free(lbl);
		q = s + tl;
		for (k = np; k-- > 0;) {
			size_t l;
			const char *p = sym_str(a->o->sym, path[k], &l);

			*q++ = ';';
			clean(q, p, l, 1);
			q += l;
		}
		*q = '\0';
		if (fxt_grow((void **)&lines, &capl, nl + 1,
		    sizeof(*lines)) < 0) {
			free(s);
			goto nomem;
		}
		lines[nl].s = s;
		lines[nl++].v = v;
	}
	if (nl > 0)	/* qsort(NULL, 0) is undefined */
		qsort(lines, nl, sizeof(*lines), cmp_fline);
	for (i = 0; i < nl; i++) {
		/* Equal stacks of one thread merged already; print. */
		sink_printf(a->o->sink, "%s %" PRIu64 "\n", lines[i].s,
		    lines[i].v);
	}
	goto out;
nomem:
	rc = -MT_E_NOMEM;
out:
	for (i = 0; i < nl; i++)
		free(lines[i].s);
	free(lines);
	free(path);
	free(rootof);
	return rc;
}

struct fnstat {
	uint32_t name;
	uint64_t self, incl, calls;
};

static int
cmp_self(const void *x, const void *y)
{
	const struct fnstat *p = x, *q = y;

	if (p->self != q->self)
		return p->self < q->self ? 1 : -1;
	return p->name < q->name ? -1 : p->name > q->name;
}

static int
cmp_incl(const void *x, const void *y)
{
	const struct fnstat *p = x, *q = y;

	if (p->incl != q->incl)
		return p->incl < q->incl ? 1 : -1;
	return p->name < q->name ? -1 : p->name > q->name;
}

/* Per-function totals; inclusive time counts a recursive function once. */
static struct fnstat *
fn_stats(struct agg *a, uint32_t *nout)
{
	uint32_t nstr = sym_nstr(a->o->sym), i, n = 0, *onpath, *stack;
	uint32_t ns = 0, caps = 0;
	struct fnstat *acc, *out;

	acc = calloc(nstr, sizeof(*acc));
	onpath = calloc(nstr, sizeof(*onpath));
	stack = NULL;
	if (acc == NULL || onpath == NULL)
		goto fail;
	/* Iterative DFS over each thread root; stack holds node ids,
	 * a node id with the top bit set means "leaving". */
	for (i = 0; i < a->thr.n; i++) {
		const struct athread *at = thrtab_at(&a->thr, i);

		if (at == NULL)
			continue;
		if (fxt_grow((void **)&stack, &caps, ns + 1,
		    sizeof(*stack)) < 0)
			goto fail;
		stack[ns++] = at->root;
		while (ns > 0) {
			uint32_t x = stack[--ns], c;
			int leaving = (x & 0x80000000u) != 0;
			struct node *nd;

			x &= 0x7fffffffu;
			nd = &a->n[x];
			if (leaving) {
				onpath[nd->name]--;
				continue;
			}
			if (nd->name != 0) {
				acc[nd->name].name = nd->name;
				acc[nd->name].self += self_time(a, x);
				acc[nd->name].calls += nd->calls;
				if (onpath[nd->name] == 0)
					acc[nd->name].incl += nd->total;
				onpath[nd->name]++;
				if (fxt_grow((void **)&stack, &caps, ns + 1,
				    sizeof(*stack)) < 0)
					goto fail;
				stack[ns++] = x | 0x80000000u;
			}
			for (c = nd->child; c != NONE; c = a->n[c].next) {
				if (fxt_grow((void **)&stack, &caps, ns + 1,
				    sizeof(*stack)) < 0)
					goto fail;
				stack[ns++] = c;
			}
		}
	}
	for (i = 1; i < nstr; i++)
		if (acc[i].calls)
			acc[n++] = acc[i];
	out = acc;
	free(onpath);
	free(stack);
	*nout = n;
	return out;
fail:
	free(acc);
	free(onpath);
	free(stack);
	return NULL;
}

static void
print_top(struct agg *a, struct fnstat *v, uint32_t n, int by_self)
{
	struct sink *s = a->o->sink;
	uint32_t i;

	if (n > 0)	/* v may be NULL then */
		qsort(v, n, sizeof(*v), by_self ? cmp_self : cmp_incl);
	sink_printf(s, "\ntop functions by %s time:\n",
	    by_self ? "self" : "inclusive");
	sink_printf(s, "%14s %14s %10s  %s\n", "self ns", "inclusive ns",
	    "calls", "function");
	for (i = 0; i < n && i < TOP_N; i++) {
		size_t l;
		const char *p = sym_str(a->o->sym, v[i].name, &l);

		sink_printf(s, "%14" PRIu64 " %14" PRIu64 " %10" PRIu64 "  ",
		    v[i].self, v[i].incl, v[i].calls);
		put_name(s, p, l > 200 ? 200 : l);
		sink_puts(s, "\n");
	}
}

static void
print_trigger(struct agg *a, const struct trig *tr, uint32_t k)
{
	struct sink *s = a->o->sink;
	const struct sym_thread *t = sym_thread_at(a->o->sym, tr->thread);
	uint32_t x = live(a, tr->node), *path = NULL, np = 0, cap = 0, y;
	size_t l, tl;
	const char *w = sym_str(a->o->sym, tr->what, &l);
	char *lbl = thread_label(a, t, &tl);

	sink_printf(s, "\ntrigger %" PRIu32 " at %" PRIu64 " ns on %s: ",
	    k + 1, tr->ts, lbl ? lbl : "?");
	free(lbl);
	put_name(s, w, l);
	sink_puts(s, "\n");
	for (y = x; y != NONE && a->n[y].parent != NONE; y = a->n[y].parent) {
		if (a->n[y].name == 0)
			continue;
		if (fxt_grow((void **)&path, &cap, np + 1, sizeof(*path)) < 0)
			break;
		path[np++] = a->n[y].name;
	}
	if (np == 0)
		sink_puts(s, "  (no frame)\n");
	while (np-- > 0) {
		const char *p = sym_str(a->o->sym, path[np], &l);

		sink_puts(s, "  ");
		put_name(s, p, l);
		sink_puts(s, "\n");
	}
	free(path);
}

static void
print_hist(struct agg *a)
{
	struct sink *s = a->o->sink;
	/* An IFUNC: the implementation it picked, not its resolver. */
	const struct hist *h = &a->h[a->h[1].count > 0];
	uint64_t peak = 0;
	int b, lo = -1, hi = -1;

	sink_printf(s, "\nlatency of %s%s: %" PRIu64 " calls",
	    a->o->opts->function, h == &a->h[1] ? " (the implementation its "
	    "IFUNC picked)" : "", h->count);
	if (h->count == 0) {
		sink_puts(s, "\n");
		return;
	}
	sink_printf(s, ", min %" PRIu64 " ns, mean %" PRIu64 " ns, max %"
	    PRIu64 " ns\n", h->min, h->sum / h->count, h->max);
	for (b = 0; b < HIST_BUCKETS; b++) {
		if (h->b[b] == 0)
			continue;
		if (lo < 0)
			lo = b;
		hi = b;
		if (h->b[b] > peak)
			peak = h->b[b];
	}
	for (b = lo; b <= hi; b++) {
		uint64_t from = b ? 1ull << (b - 1) : 0, to = 1ull << b;
		unsigned bar = (unsigned)(h->b[b] * 40 / peak), i;
		char bars[41];

		for (i = 0; i < bar; i++)
			bars[i] = '#';
		bars[bar] = '\0';
		sink_printf(s, "  [%12" PRIu64 ", %12" PRIu64 ") ns %10" PRIu64
		    " %s\n", from, to, h->b[b], bars);
	}
}

static int
print_summary(struct agg *a, const struct fxt_stats *st)
{
	struct sink *s = a->o->sink;
	struct fnstat *v;
	uint32_t n, i;

	sink_printf(s, "threads %" PRIu32 ", events %" PRIu64 ", frames %"
	    PRIu64 ", inferred %" PRIu64 ", decode errors %" PRIu64
	    ", trigger hits %" PRIu64 "\n", sym_nthreads(a->o->sym),
	    st->events, st->frames, st->inferred, st->errors, st->triggers);
	if (sym_ntracks(a->o->sym))
		sink_printf(s, "goroutine tracks: %" PRIu32 "\n",
		    sym_ntracks(a->o->sym));
	if (st->folded)
		sink_printf(s, "frames folded below the depth limit: %" PRIu64
		    "\n", st->folded);
	if (a->o->opts->min_duration)
		sink_printf(s, "frames dropped by --min-duration %" PRIu64
		    ": %" PRIu64 ", holding %" PRIu64 " ns\n",
		    a->o->opts->min_duration, st->dropped, st->dropped_ns);
	if (st->filtered)
		sink_printf(s, "frames outside the filters: %" PRIu64 "\n",
		    st->filtered);
	for (i = 0; i < a->ntrig; i++)
		print_trigger(a, &a->trig[i], i);
	v = fn_stats(a, &n);
	if (v == NULL)
		return -MT_E_NOMEM;
	print_top(a, v, n, 1);
	print_top(a, v, n, 0);
	free(v);
	if (a->fn || a->o->opts->function)
		print_hist(a);
	return 0;
}

static int
agg_open(struct out *o)
{
	struct agg *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return -MT_E_NOMEM;
	o->priv = a;
	a->o = o;
	a->folded = o->ops == &out_folded_ops;
	if (o->opts->function)
		a->fn = sym_cintern(o->sym, o->opts->function);
	return sym_error(o->sym);
}

static int
agg_close(struct out *o, const struct fxt_stats *st)
{
	struct agg *a = o->priv;
	int rc;

	if (a == NULL)
		return -MT_E_NOMEM;
	if (o->err)
		return o->err;
	rc = a->folded ? print_folded(a) : print_summary(a, st);
	return rc ? rc : o->err;
}

static void
athread_fini(void *p)
{
	struct athread *at = p;

	free(at->st);
	free(at->seg);
}

static void
agg_free(struct out *o)
{
	struct agg *a = o->priv;

	if (a == NULL)
		return;
	thrtab_free(&a->thr, athread_fini);
	free(a->n);
	free(a->trig);
	free(a);
	o->priv = NULL;
}

const struct out_ops out_folded_ops = {
	.name = "folded",
	.open = agg_open,
	.seg_push = agg_seg_push,
	.seg_pop = agg_seg_pop,
	.begin = agg_begin,
	.end = agg_end,
	.trigger = agg_trigger,
	.close = agg_close,
	.free = agg_free,
};

const struct out_ops out_summary_ops = {
	.name = "summary",
	.open = agg_open,
	.seg_push = agg_seg_push,
	.seg_pop = agg_seg_pop,
	.begin = agg_begin,
	.end = agg_end,
	.trigger = agg_trigger,
	.close = agg_close,
	.free = agg_free,
};
