/* SPDX-License-Identifier: MIT */
/*
 * Call-stack reconstruction (see recon.h).  Each thread keeps one flat
 * stack of shown frames: a real frame (a function entered by a call, a
 * jump or inferred) is followed by the functions inlined into it at the
 * current address.  The stack is cut into segments: the thread's window
 * (from its start or the last decode error) and, with the kernel traced,
 * one segment per system call or interrupt, whose frames end together
 * when it returns.  The policies are magic-trace's (src/trace_writer.ml,
 * summarised in REFERENCE.md 1.4):
 *
 *  - call pushes, ret pops; after a ret or jmp the top frame is compared
 *    with the function of the target address and replaced when they
 *    differ (tail calls, PLT stubs, a return into another function);
 *  - on an empty segment the target's function is inferred: it begins at
 *    the segment start and is marked inferred;
 *  - one difference: when a segment is empty and the event's source
 *    address is symbolized, the source function is inferred first (it
 *    was running since the segment start), so the first ret of a window
 *    ends a named frame where magic-trace shows `[unknown]`;
 *  - gaps push `[syscall]` / `[untraced]`, popped when tracing resumes;
 *  - a decode error is a zero-length `[decode error: MSG]` frame, then all
 *    frames end and a new window starts at the error; an event at exactly
 *    the error's time moves 1 ns later;
 *  - events of a thread that share a timestamp are spread over the time to
 *    the next distinct timestamp: the k-th of n calls gets
 *    floor(left / (n - k + 1)) ns, returns and other events none.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "grow.h"
#include "events.h"
#include "out.h"
#include "recon.h"
#include "sym.h"
#include "thrtab.h"
#include "view.h"

struct rframe {
	struct frame f;		/* as shown */
	uint32_t fn;		/* fn id for identity checks, 0 unknown */
	uint8_t real;		/* a function frame, not an inlined one */
};

struct rseg {
	uint32_t base;		/* index of the segment's first frame */
	uint64_t create;	/* when the segment started */
	uint8_t kernel;		/* a syscall/interrupt segment */
};

/* One event of a batch that shares a timestamp. */
struct bev {
	uint8_t kind;		/* enum mt_ev_kind */
	uint64_t a[2];		/* addresses */
	uint32_t loc[2];	/* loc ids */
	uint32_t str;		/* sym handle of the string field */
};

struct rthread {
	struct sym_thread *t;	/* names and index */
	struct rframe *fr;	/* open frames, bottom first */
	uint32_t nfr, capfr;
	struct rseg *seg;	/* open segments, outermost first */
	uint32_t nseg, capseg;
	struct bev *batch;	/* events at time btime, not yet applied */
	uint32_t nb, capb;
	uint64_t btime;
	uint64_t last;		/* time of the last applied event */
	uint64_t errtime;	/* arrival time of the last decode error */
	uint8_t haserr;
	uint8_t live;		/* a window is open */
	uint8_t seen;		/* a window was opened before */
};

struct recon {
	struct sym *sym;	/* names (not owned) */
	struct view *v;		/* receives frames (not owned) */
	struct fxt_stats *st;	/* counts (not owned) */
	uint64_t base;		/* subtracted from times */
	struct thrtab thr;	/* struct rthread by sym_thread index */
	int err;
	/* Interned names. */
	uint32_t n_unknown, n_untraced, n_syscall, n_overflow;
};

int
recon_new(struct recon **rp, struct sym *sym, struct view *v,
    struct fxt_stats *st)
{
	struct recon *r = calloc(1, sizeof(*r));

	*rp = NULL;
	if (r == NULL)
		return -MT_E_NOMEM;
	r->sym = sym;
	r->v = v;
	r->st = st;
	r->n_unknown = sym_cintern(sym, "[unknown]");
	r->n_untraced = sym_cintern(sym, "[untraced]");
	r->n_syscall = sym_cintern(sym, "[syscall]");
	r->n_overflow = sym_cintern(sym, "[trace overflow: data lost]");
	if (sym_error(sym)) {
		free(r);
		return -MT_E_NOMEM;
	}
	*rp = r;
	return 0;
}

static void
rthread_fini(void *p)
{
	struct rthread *rt = p;

	free(rt->fr);
	free(rt->seg);
	free(rt->batch);
}

void
recon_free(struct recon *r)
{
	if (r == NULL)
		return;
	thrtab_free(&r->thr, rthread_fini);
	free(r);
}

void
recon_set_base(struct recon *r, uint64_t base)
{
	r->base = base;
}

static struct rthread *
get_thread(struct recon *r, uint32_t tid)
{
	struct sym_thread *t = sym_thread(r->sym, 0, tid);
	struct rthread *rt;
	int fresh;

	if (t == NULL ||
	    (rt = thrtab_get(&r->thr, t->index, sizeof(*rt), &fresh)) == NULL)
		return NULL;
	if (fresh)
		rt->t = t;
	return rt;
}

static struct rseg *
topseg(struct rthread *rt)
{
	return &rt->seg[rt->nseg - 1];
}

static int
seg_empty(struct rthread *rt)
{
	return rt->nfr == topseg(rt)->base;
}

static void
push(struct recon *r, struct rthread *rt, uint64_t ts, const struct frame *f,
    uint32_t fn, int real)
{
	struct rframe *x;

	if (fxt_grow((void **)&rt->fr, &rt->capfr, rt->nfr + 1,
	    sizeof(*rt->fr)) < 0) {
		r->err = -MT_E_NOMEM;
		return;
	}
	x = &rt->fr[rt->nfr++];
	x->f = *f;
	x->fn = fn;
	x->real = (uint8_t)real;
	r->st->frames++;
	if (f->flags & FR_INFERRED)
		r->st->inferred++;
	view_begin(r->v, rt->t, ts, f);
}

static void
pop(struct recon *r, struct rthread *rt, uint64_t ts)
{
	rt->nfr--;
	view_end(r->v, rt->t, ts);
}

/* Index of the innermost real frame of the current segment, -1 if none. */
static int
top_real(struct rthread *rt)
{
	uint32_t i = rt->nfr;

	while (i > topseg(rt)->base) {
		i--;
		if (rt->fr[i].real)
			return (int)i;
	}
	return -1;
}

/*
 * Push the function at (@loc, @addr) and the functions inlined there.
 * With FR_INFERRED in @flags the frames begin at the segment start.
 */
static void
push_loc(struct recon *r, struct rthread *rt, uint64_t ts, uint32_t loc,
    uint64_t addr, uint32_t flags)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);
	struct frame f = { .addr = addr, .flags = flags };
	uint32_t k;

	if (flags & FR_INFERRED)
		ts = topseg(rt)->create;
	if (l == NULL) {
		f.name = addr ? sym_addr_name(r->sym, addr) : r->n_unknown;
		push(r, rt, ts, &f, 0, 1);
		return;
	}
	for (k = 0; k < l->nframes; k++) {
		f.name = l->frames[k].name;
		f.file = l->frames[k].file;
		f.line = l->frames[k].line;
		f.flags = flags | (k ? FR_INLINED : 0);
		push(r, rt, ts, &f, l->frames[k].fn, k == 0);
		if (r->err)
			return;
	}
}

/* End the innermost real frame of the segment and what is above it. */
static int
pop_real(struct recon *r, struct rthread *rt, uint64_t ts)
{
	int ti = top_real(rt);

	if (ti < 0)
		return 0;
	while (rt->nfr > (uint32_t)ti)
		pop(r, rt, ts);
	return 1;
}

/* Function identity of a loc: its outermost fn id, 0 unknown. */
static uint32_t
ident(struct recon *r, uint32_t loc)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);

	return l ? l->frames[0].fn : 0;
}

/* Make the inlined frames above the top real frame match @loc's chain. */
static void
set_inline(struct recon *r, struct rthread *rt, uint64_t ts, uint32_t loc)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);
	struct frame f = { .flags = FR_INLINED };
	int ti = top_real(rt);
	uint32_t m = 0, k;

	if (l == NULL || ti < 0 || rt->fr[ti].fn != l->frames[0].fn)
		return;
	while ((uint32_t)ti + 1 + m < rt->nfr && m + 1 < l->nframes &&
	    rt->fr[ti + 1 + m].fn == l->frames[m + 1].fn)
		m++;
	while (rt->nfr > (uint32_t)ti + 1 + m)
		pop(r, rt, ts);
	for (k = m + 1; k < l->nframes && !r->err; k++) {
		f.name = l->frames[k].name;
		f.file = l->frames[k].file;
		f.line = l->frames[k].line;
		f.addr = l->addr;
		push(r, rt, ts, &f, l->frames[k].fn, 0);
	}
}

/*
 * magic-trace's check_current_symbol: after a ret or jmp, execution is in
 * the function of (@loc, @addr).  An empty segment infers it; a different
 * function on top is replaced.
 */
static void
check_current(struct recon *r, struct rthread *rt, uint64_t ts, uint32_t loc,
    uint64_t addr)
{
	uint32_t id = ident(r, loc);
	int ti;

	if (seg_empty(rt)) {
		if (addr != 0 || loc != 0)
			push_loc(r, rt, ts, loc, addr, FR_INFERRED | FR_OUTER);
		return;
	}
	ti = top_real(rt);
	if (id == 0 || ti < 0)
		return;
	if (rt->fr[ti].fn != 0 && rt->fr[ti].fn != id &&
	    !(rt->fr[ti].f.flags & FR_SYNTH)) {
		pop_real(r, rt, ts);
		push_loc(r, rt, ts, loc, addr, 0);
	} else if (rt->fr[ti].fn == id) {
		set_inline(r, rt, ts, loc);
	}
}

/*
 * The source of an event on an empty segment was running since the
 * segment started: infer it when it is symbolized.  Returns whether it did.
 */
static int
infer_source(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr)
{
	if (!seg_empty(rt) || ident(r, loc) == 0)
		return 0;
	push_loc(r, rt, 0, loc, addr, FR_INFERRED | FR_OUTER);
	return 1;
}

/* Top frame of the segment if it is a synthetic gap frame, else NULL. */
static struct rframe *
top_gap(struct rthread *rt)
{
	struct rframe *x;

	if (seg_empty(rt))
		return NULL;
	x = &rt->fr[rt->nfr - 1];
	return (x->f.flags & FR_SYNTH) && !(x->f.flags & FR_ERROR) ? x : NULL;
}

static void
push_gap(struct recon *r, struct rthread *rt, uint64_t ts, uint32_t name,
    uint64_t addr)
{
	struct frame f = { .name = name, .flags = FR_SYNTH, .addr = addr };
	struct rframe *g = top_gap(rt);

	if (g != NULL && g->f.name == name)
		return;	/* syscall then disable: one gap */
	push(r, rt, ts, &f, 0, 1);
}

static void
open_window(struct recon *r, struct rthread *rt, uint64_t create)
{
	if (fxt_grow((void **)&rt->seg, &rt->capseg, 1, sizeof(*rt->seg)) < 0) {
		r->err = -MT_E_NOMEM;
		return;
	}
	rt->nseg = 1;
	rt->seg[0].base = 0;
	rt->seg[0].create = create;
	rt->seg[0].kernel = 0;
	rt->live = 1;
	view_seg_push(r->v, rt->t, create);
}

/* End every frame and segment of @rt at @ts. */
static void
close_window(struct recon *r, struct rthread *rt, uint64_t ts)
{
	while (rt->nseg > 0) {
		while (rt->nfr > topseg(rt)->base)
			pop(r, rt, ts);
		rt->nseg--;
		view_seg_pop(r->v, rt->t, ts);
	}
	rt->live = 0;
}

static void
error_reset(struct recon *r, struct rthread *rt, uint64_t ts, uint32_t name)
{
	struct frame f = { .name = name, .flags = FR_SYNTH | FR_ERROR };

	r->st->errors++;
	push(r, rt, ts, &f, 0, 1);
	pop(r, rt, ts);
	close_window(r, rt, ts);
	open_window(r, rt, ts);
}

static void
kernel_enter(struct recon *r, struct rthread *rt, uint64_t ts,
    const struct bev *e)
{
	struct rseg *s;

	if (fxt_grow((void **)&rt->seg, &rt->capseg, rt->nseg + 1,
	    sizeof(*rt->seg)) < 0) {
		r->err = -MT_E_NOMEM;
		return;
	}
	s = &rt->seg[rt->nseg++];
	s->base = rt->nfr;
	s->create = ts;
	s->kernel = 1;
	view_seg_push(r->v, rt->t, ts);
	push_loc(r, rt, ts, e->loc[1], e->a[1], 0);
}

/* sysret / iret: leave the kernel segment, or close the gap. */
static void
kernel_leave(struct recon *r, struct rthread *rt, uint64_t ts,
    const struct bev *e)
{
	if (rt->nseg > 1 && topseg(rt)->kernel) {
		while (rt->nfr > topseg(rt)->base)
			pop(r, rt, ts);
		rt->nseg--;
		view_seg_pop(r->v, rt->t, ts);
	} else if (top_gap(rt) != NULL) {
		pop(r, rt, ts);
	}
	check_current(r, rt, ts, e->loc[1], e->a[1]);
}

static void
apply(struct recon *r, struct rthread *rt, uint64_t ts, const struct bev *e)
{
	size_t len;
	const char *s;

	rt->last = ts;
	switch (e->kind) {
	case MT_EV_CALL:
		if (!infer_source(r, rt, e->loc[0], e->a[0]) &&
		    !seg_empty(rt))
			check_current(r, rt, ts, e->loc[0], e->a[0]);
		push_loc(r, rt, ts, e->loc[1], e->a[1], 0);
		break;
	case MT_EV_RET:
		if (seg_empty(rt) &&
		    !infer_source(r, rt, e->loc[0], e->a[0])) {
			/* Returning from a frame nothing is known of. */
			struct frame f = { .name = r->n_unknown,
			    .flags = FR_INFERRED | FR_OUTER | FR_SYNTH };

			push(r, rt, topseg(rt)->create, &f, 0, 1);
		}
		pop_real(r, rt, ts);
		check_current(r, rt, ts, e->loc[1], e->a[1]);
		break;
	case MT_EV_JMP:
		infer_source(r, rt, e->loc[0], e->a[0]);
		if (ident(r, e->loc[1]) == 0 && !seg_empty(rt) &&
		    e->a[1] != 0) {
			/* Unsymbolized: a jmp leaves the function. */
			pop_real(r, rt, ts);
			push_loc(r, rt, ts, 0, e->a[1], 0);
		} else {
			check_current(r, rt, ts, e->loc[1], e->a[1]);
		}
		break;
	case MT_EV_BR:
		if (!seg_empty(rt))
			set_inline(r, rt, ts, e->loc[1]);
		break;
	case MT_EV_SYSCALL:
	case MT_EV_IRQ:
		if (!infer_source(r, rt, e->loc[0], e->a[0]) &&
		    !seg_empty(rt))
			set_inline(r, rt, ts, e->loc[0]);
		if (e->a[1] != 0)
			kernel_enter(r, rt, ts, e);
		else
			push_gap(r, rt, ts, e->kind == MT_EV_SYSCALL ?
			    r->n_syscall : r->n_untraced, e->a[0]);
		break;
	case MT_EV_SYSRET:
	case MT_EV_IRET:
		kernel_leave(r, rt, ts, e);
		break;
	case MT_EV_DISABLE:
		if (!infer_source(r, rt, e->loc[0], e->a[0]) &&
		    !seg_empty(rt))
			set_inline(r, rt, ts, e->loc[0]);
		s = sym_str(r->sym, e->str, &len);
		push_gap(r, rt, ts, len == 7 && memcmp(s, "syscall", 7) == 0 ?
		    r->n_syscall : r->n_untraced, e->a[0]);
		break;
	case MT_EV_ENABLE:
		if (top_gap(rt) != NULL)
			pop(r, rt, ts);
		check_current(r, rt, ts, e->loc[0], e->a[0]);
		break;
	case MT_EV_TRIGGER:
		r->st->triggers++;
		view_trigger(r->v, rt->t, ts, e->a[0], e->str);
		break;
	default:
		break;
	}
}

/* Apply the batch, spreading its time over [btime, next). */
static void
flush(struct recon *r, struct rthread *rt, uint64_t next)
{
	uint64_t left = next > rt->btime ? next - rt->btime : 0, used = 0;
	uint32_t ncalls = 0, i;

	for (i = 0; i < rt->nb; i++)
		if (rt->batch[i].kind == MT_EV_CALL ||
		    rt->batch[i].kind == MT_EV_SYSCALL ||
		    rt->batch[i].kind == MT_EV_IRQ)
			ncalls++;
	for (i = 0; i < rt->nb && !r->err; i++) {
		const struct bev *e = &rt->batch[i];

		apply(r, rt, rt->btime + used, e);
		if (e->kind == MT_EV_CALL || e->kind == MT_EV_SYSCALL ||
		    e->kind == MT_EV_IRQ) {
			uint64_t share = left / ncalls--;

			used += share;
			left -= share;
		}
	}
	rt->nb = 0;
}

static uint32_t
event_str(struct recon *r, const struct mt_ev *ev)
{
	const char *s;

	if (ev->kind == MT_EV_ERROR) {
		/* The frame's name, as magic-trace writes it. */
		size_t n = strlen(ev->str[0] ? ev->str[0] : "");
		char *b = malloc(n + 18);
		uint32_t h;

		if (b == NULL)
			return 0;
		memcpy(b, "[decode error: ", 15);
		memcpy(b + 15, ev->str[0] ? ev->str[0] : "", n);
		memcpy(b + 15 + n, "]", 2);
		h = sym_intern(r->sym, b, n + 16);
		free(b);
		return h;
	}
	s = ev->str[0];
	return s ? sym_cintern(r->sym, s) : 0;
}

int
recon_event(struct recon *r, const struct mt_ev *ev)
{
	struct rthread *rt;
	struct bev *e;
	uint64_t t;

	if (r->err)
		return r->err;
	r->st->events++;
	rt = get_thread(r, ev->tid);
	if (rt == NULL)
		return r->err = -MT_E_NOMEM;
	t = ev->time > r->base ? ev->time - r->base : 0;
	if (rt->haserr && t == rt->errtime)
		t++;	/* magic-trace #155: keep it after the error */
	if (!rt->live) {
		if (ev->kind == MT_EV_END)
			return 0;
		/*
		 * A thread's window starts at its first event (as
		 * magic-trace: nothing is known of it before), after an
		 * `end` where the last window ended.
		 */
		if (rt->seen && t < rt->btime)
			t = rt->btime;
		open_window(r, rt, rt->seen ? rt->btime : t);
		rt->seen = 1;
		rt->btime = t;
	}
	if (t < rt->btime)
		t = rt->btime;	/* out of order: keep the thread monotonic */
	if (rt->nb > 0 && (t > rt->btime || rt->nb == RECON_MAX_BATCH ||
	    ev->kind == MT_EV_END))
		flush(r, rt, t);
	rt->btime = t;
	if (ev->kind == MT_EV_END) {
		close_window(r, rt, t);
		return r->err;
	}
	if (ev->kind == MT_EV_ERROR || ev->kind == MT_EV_OVERFLOW) {
		/*
		 * An error happens at its own time: the events before it at
		 * that time get no share of the time after it, and every
		 * frame ends there (as magic-trace).
		 */
		if (rt->nb > 0)
			flush(r, rt, t);
		rt->haserr = 1;
		rt->errtime = t;
		error_reset(r, rt, t, ev->kind == MT_EV_ERROR ?
		    event_str(r, ev) : r->n_overflow);
		return r->err ? r->err : sym_error(r->sym);
	}
	if (fxt_grow((void **)&rt->batch, &rt->capb, rt->nb + 1,
	    sizeof(*rt->batch)) < 0)
		return r->err = -MT_E_NOMEM;
	e = &rt->batch[rt->nb++];
	e->kind = (uint8_t)ev->kind;
	e->a[0] = ev->addr[0];
	e->a[1] = ev->addr[1];
	e->loc[0] = ev->loc[0];
	e->loc[1] = ev->loc[1];
	e->str = (ev->kind == MT_EV_TRIGGER || ev->kind == MT_EV_DISABLE) ?
	    event_str(r, ev) : 0;
	if (sym_error(r->sym))
		r->err = sym_error(r->sym);
	return r->err;
}

int
recon_finish(struct recon *r)
{
	uint32_t i;

	for (i = 0; i < r->thr.n && !r->err; i++) {
		struct rthread *rt = thrtab_at(&r->thr, i);

		if (rt == NULL || !rt->live)
			continue;
		flush(r, rt, rt->btime);
		close_window(r, rt, rt->last > rt->btime ? rt->last :
		    rt->btime);
	}
	return r->err;
}
