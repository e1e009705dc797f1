/* SPDX-License-Identifier: MIT */
/*
 * Call-stack reconstruction (see recon.h).  Each thread keeps one flat
 * stack of shown frames: a real frame (a function entered by a call, a
 * jump or inferred) is followed by the functions inlined into it at the
 * current address.  The stack is cut into segments: the thread's window
 * (from its first event or the last decode error) and, with the kernel
 * traced, one segment per system call or interrupt, whose frames end
 * together when it returns.  Each policy, and whether it is
 * magic-trace's (src/trace_writer.ml) or mt's own, is in the table of
 * docs/formats/fxt.md ("Call-stack policies"); the comments below give
 * the reasons.
 *
 * Times: the events of a thread that share a timestamp form a batch.
 * Applying a batch changes the stack at once and logs what the view must
 * see (begins, ends, segments, hits); the log is then replayed with
 * times: every frame that begins (not inferred, not inlined) takes a
 * share of the time to the next distinct timestamp, the k-th of n
 * floor(left / (n - k + 1)) ns, and every other entry happens at the
 * time reached so far.
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

#define NONE		UINT32_MAX
/*
 * A return address is at most this past its call instruction: the
 * longest call compilers emit, a prefix, REX, FF /2, ModRM, SIB, disp32.
 */
#define CALL_MAXLEN	9

enum { GAP_NONE, GAP_SYSCALL, GAP_ASYNC, GAP_OTHER };

struct rframe {
	struct frame f;		/* as shown */
	uint32_t fn;		/* identity (sym_frame.fn), 0 none */
	uint32_t prev;		/* identity of the frame it replaced by a jump */
	uint32_t alias;		/* identity its code was resumed in, 0 */
	uint64_t site;		/* the call instruction that entered it, 0 */
	uint8_t real;		/* a function frame, not an inlined one */
	uint8_t gap;		/* GAP_*: a [syscall] or [untraced] frame */
};

struct rseg {
	uint32_t base;		/* index of the segment's first frame */
	uint64_t create;	/* when the segment started */
	uint32_t create_op;	/* log entry of its start, NONE: create */
	uint64_t resume[2];	/* kernel: where the interrupted code goes on */
	uint8_t kernel;		/* a syscall/interrupt segment */
};

/* An asynchronous entry (a signal handler) above an interrupted frame. */
struct rmark {
	uint64_t resume[2];	/* where the interrupted code goes on */
	uint32_t depth;		/* frames below the handler */
};

/* One event of a batch that shares a timestamp. */
struct bev {
	uint8_t kind;		/* enum mt_ev_kind */
	uint64_t a[2];		/* addresses */
	uint32_t loc[2];	/* loc ids */
	uint32_t str;		/* sym handle of the string field */
};

enum { OP_BEGIN, OP_END, OP_SEG_PUSH, OP_SEG_POP, OP_TRIGGER };

/* What the view must see, logged while a batch is applied. */
struct op {
	uint8_t kind;		/* OP_* */
	uint8_t share;		/* a frame that begins: takes a share */
	uint8_t fixed;		/* ts is given (inferred frame) */
	uint32_t tref;		/* inferred: log entry whose time it takes */
	uint64_t ts;		/* time (set when replayed) */
	struct frame f;		/* OP_BEGIN; OP_TRIGGER: name = what */
};

struct rthread {
	struct sym_thread *t;	/* names and index */
	struct rframe *fr;	/* open frames, bottom first */
	uint32_t nfr, capfr;
	struct rseg *seg;	/* open segments, outermost first */
	uint32_t nseg, capseg;
	struct rmark *mark;	/* open asynchronous entries, oldest first */
	uint32_t nmark, capmark;
	struct bev *batch;	/* events at time btime, not yet applied */
	uint32_t nb, capb;
	uint64_t btime;
	uint64_t last;		/* time of the last applied event */
	uint64_t errtime;	/* arrival time of the last decode error */
	uint32_t txdepth;	/* frames below the open TSX transaction */
	uint8_t intx;		/* a transaction is open */
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
	struct op *log;		/* the batch being applied */
	uint32_t nlog, caplog;
	int err;
	/* Interned names. */
	uint32_t n_unknown, n_untraced, n_syscall, n_overflow;
	uint32_t s_syscall, s_async, s_begin, s_commit, s_abort;
	uint32_t n_gogo[3], n_gogo_dst[3];
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
	r->s_syscall = sym_cintern(sym, "syscall");
	r->s_async = sym_cintern(sym, "async");
	r->s_begin = sym_cintern(sym, "begin");
	r->s_commit = sym_cintern(sym, "commit");
	r->s_abort = sym_cintern(sym, "abort");
	/* Go's scheduler (see go_switch): Go 1.17+ names, and older ones. */
	r->n_gogo[0] = sym_cintern(sym, "gogo");
	r->n_gogo[1] = sym_cintern(sym, "runtime.gogo");
	r->n_gogo[2] = sym_cintern(sym, "runtime.gogo.abi0");
	r->n_gogo_dst[0] = sym_cintern(sym, "runtime.mcall");
	r->n_gogo_dst[1] = sym_cintern(sym, "runtime.morestack");
	r->n_gogo_dst[2] = sym_cintern(sym, "runtime.morestack.abi0");
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
	free(rt->mark);
	free(rt->batch);
}

void
recon_free(struct recon *r)
{
	if (r == NULL)
		return;
	thrtab_free(&r->thr, rthread_fini);
	free(r->log);
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

/*
 * The log.
 */

static struct op *
log_add(struct recon *r, int kind)
{
	struct op *o;

	if (fxt_grow((void **)&r->log, &r->caplog, r->nlog + 1,
	    sizeof(*r->log)) < 0) {
		r->err = -MT_E_NOMEM;
		return NULL;
	}
	o = &r->log[r->nlog++];
	memset(o, 0, sizeof(*o));
	o->kind = (uint8_t)kind;
	o->tref = NONE;
	return o;
}

/*
 * Replay the log to the view from @start, spreading @left ns over the
 * frames that begin, then forget it.
 */
static void
log_replay(struct recon *r, struct rthread *rt, uint64_t start,
    uint64_t left)
{
	uint64_t used = 0;
	uint32_t n = 0, i;

	for (i = 0; i < r->nlog; i++)
		n += r->log[i].share;
	for (i = 0; i < r->nlog; i++) {
		struct op *o = &r->log[i];

		if (!o->fixed)
			o->ts = start + used;
		else if (o->tref != NONE)
			o->ts = r->log[o->tref].ts;
		switch (o->kind) {
		case OP_BEGIN:
			view_begin(r->v, rt->t, o->ts, &o->f);
			break;
		case OP_END:
			view_end(r->v, rt->t, o->ts);
			break;
		case OP_SEG_PUSH:
			view_seg_push(r->v, rt->t, o->ts);
			break;
		case OP_SEG_POP:
			view_seg_pop(r->v, rt->t, o->ts);
			break;
		case OP_TRIGGER:
			view_trigger(r->v, rt->t, o->ts, o->f.addr, o->f.name);
			break;
		}
		if (o->share) {
			uint64_t share = left / n--;

			used += share;
			left -= share;
		}
	}
	for (i = 0; i < rt->nseg; i++)
		if (rt->seg[i].create_op != NONE) {
			rt->seg[i].create = r->log[rt->seg[i].create_op].ts;
			rt->seg[i].create_op = NONE;
		}
	r->nlog = 0;
}

/*
 * Stack primitives.
 */

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

/*
 * Push @f.  An inferred frame begins when its segment began; a frame
 * that @shares takes a share of the batch's time.
 */
static struct rframe *
push(struct recon *r, struct rthread *rt, const struct frame *f,
    uint32_t fn, int real, int share)
{
	struct rframe *x;
	struct op *o;

	if (fxt_grow((void **)&rt->fr, &rt->capfr, rt->nfr + 1,
	    sizeof(*rt->fr)) < 0 || (o = log_add(r, OP_BEGIN)) == NULL) {
		r->err = -MT_E_NOMEM;
		return NULL;
	}
	x = &rt->fr[rt->nfr++];
	memset(x, 0, sizeof(*x));
	x->f = *f;
	x->fn = fn;
	x->real = (uint8_t)real;
	o->f = *f;
	o->share = (uint8_t)share;
	if (f->flags & FR_INFERRED) {
		o->fixed = 1;
		o->ts = topseg(rt)->create;
		o->tref = topseg(rt)->create_op;
		o->share = 0;
		r->st->inferred++;
	}
	r->st->frames++;
	return x;
}

static void
pop(struct recon *r, struct rthread *rt)
{
	rt->nfr--;
	log_add(r, OP_END);
	/* A handler whose interrupted frame ended is no longer open. */
	while (rt->nmark > 0 && rt->mark[rt->nmark - 1].depth > rt->nfr)
		rt->nmark--;
	if (rt->intx && rt->txdepth > rt->nfr)
		rt->txdepth = rt->nfr;
}

/* End every frame of the current segment from index @k up. */
static void
pop_to(struct recon *r, struct rthread *rt, uint32_t k)
{
	while (rt->nfr > k && rt->nfr > topseg(rt)->base)
		pop(r, rt);
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

/* The innermost real frame below index @below, -1 if none. */
static int
real_below(struct rthread *rt, int below)
{
	while (below > (int)topseg(rt)->base) {
		below--;
		if (rt->fr[below].real)
			return below;
	}
	return -1;
}

/*
 * Push the function at (@loc, @addr) and the functions inlined there,
 * entered by the call at @site (0 none).  With FR_INFERRED in @flags the
 * frames begin at the segment start.  Returns the index of the real
 * frame (pushing may move the stack: no pointer), -1 if out of memory.
 */
static int
push_loc(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr,
    uint32_t flags, uint64_t site)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);
	struct frame f = { .addr = addr, .flags = flags };
	struct rframe *y;
	uint32_t k, op0 = 0;
	int x = (int)rt->nfr;

	if (l == NULL) {
		f.name = addr ? sym_addr_name(r->sym, addr) : r->n_unknown;
		y = push(r, rt, &f, 0, 1, 1);
		if (y == NULL)
			return -1;
		y->site = site;
		return x;
	}
	for (k = 0; k < l->nframes; k++) {
		f.name = l->frames[k].name;
		f.file = l->frames[k].file;
		f.line = l->frames[k].line;
		f.flags = flags | (k ? FR_INLINED : 0);
		y = push(r, rt, &f, l->frames[k].fn, k == 0, k == 0);
		if (y == NULL)
			return -1;
		if (k == 0) {
			y->site = site;
			op0 = r->nlog - 1;
		} else if (!(flags & FR_INFERRED)) {
			/* Inlined frames begin with their function. */
			r->log[r->nlog - 1].fixed = 1;
			r->log[r->nlog - 1].tref = op0;
		}
	}
	return x;
}

/* End the innermost real frame of the segment and what is above it. */
static void
pop_real(struct recon *r, struct rthread *rt)
{
	int ti = top_real(rt);

	if (ti >= 0)
		pop_to(r, rt, (uint32_t)ti);
}

static uint32_t
ident(struct recon *r, uint32_t loc)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);

	return l ? l->frames[0].fn : 0;
}

/*
 * Frame @x runs function @id: its own, or the one a resume at its stopped
 * address showed (a symbol boundary inside the code, see gap_resume).
 */
static int
runs(const struct rframe *x, uint32_t id)
{
	return x->fn == id || (x->alias != 0 && x->alias == id);
}

/* @addr is known to be inside its function, not at its entry. */
static int
mid_function(struct recon *r, uint32_t loc, uint64_t addr)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);

	return l != NULL && l->frames[0].start != 0 &&
	    addr != l->frames[0].start;
}

/* @addr is known to be its function's entry. */
static int
at_entry(struct recon *r, uint32_t loc, uint64_t addr)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);

	return l != NULL && l->frames[0].start != 0 &&
	    addr == l->frames[0].start;
}

/* Make the inlined frames above the top real frame match @loc's chain. */
static void
set_inline(struct recon *r, struct rthread *rt, uint32_t loc)
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
	pop_to(r, rt, (uint32_t)ti + 1 + m);
	for (k = m + 1; k < l->nframes && !r->err; k++) {
		f.name = l->frames[k].name;
		f.file = l->frames[k].file;
		f.line = l->frames[k].line;
		f.addr = l->addr;
		push(r, rt, &f, l->frames[k].fn, 0, 0);
	}
}

static int
is_name(uint32_t name, const uint32_t set[3])
{
	return name != 0 && (name == set[0] || name == set[1] ||
	    name == set[2]);
}

/*
 * Replace the top real frame by the function at (@loc, @addr): a tail
 * call, a PLT stub, a return into another function.  The new frame
 * returns where the old one would have.
 */
static void
replace_top(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr)
{
	int ti = top_real(rt);
	uint64_t site = 0;
	uint32_t prev = 0;
	int x;

	if (ti >= 0) {
		site = rt->fr[ti].site;
		prev = rt->fr[ti].fn;
		pop_to(r, rt, (uint32_t)ti);
	}
	x = push_loc(r, rt, loc, addr, 0, site);
	if (x >= 0)
		rt->fr[x].prev = prev;
}

/*
 * magic-trace's check_current_symbol: execution is in the function of
 * (@loc, @addr).  An empty segment infers it; a different function on
 * top is replaced, when the new one has an identity (mt: code named by
 * address only proves nothing).
 */
static void
check_current(struct recon *r, struct rthread *rt, uint32_t loc,
    uint64_t addr)
{
	uint32_t id = ident(r, loc);
	int ti;

	if (seg_empty(rt)) {
		if (addr != 0 || loc != 0)
			push_loc(r, rt, loc, addr, FR_INFERRED | FR_OUTER, 0);
		return;
	}
	ti = top_real(rt);
	if (id == 0 || ti < 0)
		return;
	if (runs(&rt->fr[ti], id))
		set_inline(r, rt, loc);
	else if (!(rt->fr[ti].f.flags & FR_SYNTH))
		replace_top(r, rt, loc, addr);
}

/* The innermost real frame at or below @from entered by a call that
 * returns to @to (mt: a non-local exit), -1 if none. */
static int
find_site(struct rthread *rt, int from, uint64_t to)
{
	for (; from >= (int)topseg(rt)->base; from--) {
		const struct rframe *x = &rt->fr[from];

		if (x->real && x->site != 0 && to > x->site &&
		    to - x->site <= CALL_MAXLEN)
			return from;
	}
	return -1;
}

/* The innermost real frame below @below running function @id, -1. */
static int
find_fn(struct rthread *rt, int below, uint32_t id)
{
	while ((below = real_below(rt, below)) >= 0)
		if (runs(&rt->fr[below], id) &&
		    !(rt->fr[below].f.flags & FR_SYNTH))
			return below;
	return -1;
}

/*
 * An asynchronous entry resumes: @addr is where an interrupted frame was
 * stopped.  End the handler's frames.  Returns whether it matched.
 */
static int
mark_resume(struct recon *r, struct rthread *rt, uint64_t addr)
{
	uint32_t i = rt->nmark;

	while (addr != 0 && i-- > 0) {
		struct rmark *m = &rt->mark[i];

		if (addr != m->resume[0] && addr != m->resume[1])
			continue;
		if (m->depth < topseg(rt)->base)
			return 0;	/* below the current segment */
		pop_to(r, rt, m->depth);
		rt->nmark = i;
		return 1;
	}
	return 0;
}

/*
 * Control arrived at (@loc, @addr) by a jump, a return or a resume that
 * says nothing else: where does it land?  (mt) The return address of an
 * open frame's call, or the middle of an older open frame's function,
 * ends the frames above it: longjmp, exceptions, a return through
 * untraced code.  Otherwise magic-trace's check_current_symbol.
 */
static void
arrive(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr)
{
	uint32_t id = ident(r, loc);
	int ti, k;

	if (seg_empty(rt) || (ti = top_real(rt)) < 0) {
		check_current(r, rt, loc, addr);
		return;
	}
	if (!at_entry(r, loc, addr)) {
		k = find_site(rt, ti, addr);
		if (k >= 0) {
			pop_to(r, rt, (uint32_t)k);
			check_current(r, rt, loc, addr);
			return;
		}
	}
	if (id != 0 && !runs(&rt->fr[ti], id) && rt->fr[ti].prev != id &&
	    mid_function(r, loc, addr) &&
	    (k = find_fn(rt, ti, id)) >= 0) {
		pop_to(r, rt, (uint32_t)k + 1);
		set_inline(r, rt, loc);
		return;
	}
	check_current(r, rt, loc, addr);
}

/*
 * The source of an event on an empty segment was running since the
 * segment started: infer it when it is symbolized.  Returns whether it did.
 */
static int
infer_source(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr)
{
	if (!seg_empty(rt) || sym_loc(r->sym, loc) == NULL)
		return 0;
	push_loc(r, rt, loc, addr, FR_INFERRED | FR_OUTER, 0);
	return 1;
}

/*
 * The source of an event says which function runs (mt: magic-trace does
 * not look).  On the top frame: the inlined frames follow it.  In an
 * older open frame's function: the frames above it were left without a
 * return seen.  Elsewhere the top frame is replaced.  Only an identity
 * counts: code named by address only proves nothing.
 */
static void
at_source(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr)
{
	uint32_t id = ident(r, loc);
	int ti = top_real(rt), k;

	if (id == 0 || ti < 0)
		return;
	if (runs(&rt->fr[ti], id)) {
		set_inline(r, rt, loc);
	} else if (!(rt->fr[ti].f.flags & FR_SYNTH)) {
		if ((k = find_fn(rt, ti, id)) >= 0) {
			pop_to(r, rt, (uint32_t)k + 1);
			set_inline(r, rt, loc);
		} else {
			replace_top(r, rt, loc, addr);
		}
	}
}

/* Top frame of the segment if it is a gap frame, else NULL. */
static struct rframe *
top_gap(struct rthread *rt)
{
	struct rframe *x;

	if (seg_empty(rt))
		return NULL;
	x = &rt->fr[rt->nfr - 1];
	return x->gap != GAP_NONE ? x : NULL;
}

static void
push_gap(struct recon *r, struct rthread *rt, uint32_t name, int gap,
    uint64_t addr)
{
	struct frame f = { .name = name, .flags = FR_SYNTH, .addr = addr };
	struct rframe *g = top_gap(rt), *x;

	if (g != NULL && g->f.name == name)
		return;	/* syscall then disable: one gap */
	x = push(r, rt, &f, 0, 1, 1);
	if (x != NULL)
		x->gap = (uint8_t)gap;
}

/*
 * Where code stopped by a system call at @ip (the instruction: 2 bytes,
 * SYSCALL, SYSENTER, INT 0x80) or an interrupt before @ip goes on.  A
 * system call goes on after it, or at it when restarted.
 */
static void
resume_addrs(int gap, uint64_t ip, uint64_t out[2])
{
	out[0] = ip;
	out[1] = gap == GAP_SYSCALL && ip != 0 ? ip + 2 : 0;
}

/*
 * Code stopped by a gap or a kernel entry goes on where it stopped, at
 * (@loc, @addr): the frame goes on unchecked (as magic-trace), and when
 * a symbol boundary there names another function, the frame runs that
 * one too (a __write resumed in __write_nocancel stays one frame).
 */
static void
resumed(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr)
{
	uint32_t id = ident(r, loc);
	int ti;

	if (seg_empty(rt)) {
		check_current(r, rt, loc, addr);
		return;
	}
	ti = top_real(rt);
	if (id != 0 && ti >= 0 && !runs(&rt->fr[ti], id) &&
	    !(rt->fr[ti].f.flags & FR_SYNTH))
		rt->fr[ti].alias = id;
}

/*
 * Code stopped at @resume went on at (@loc, @addr) instead: a signal
 * handler (mt).  It nests above the interrupted frame until execution
 * comes back to @resume (mark_resume), and takes a share of the time.
 */
static void
async_enter(struct recon *r, struct rthread *rt, const uint64_t resume[2],
    uint32_t loc, uint64_t addr)
{
	struct rmark *m;

	if (rt->nmark > 0 && rt->mark[rt->nmark - 1].depth >= rt->nfr)
		rt->nmark--;	/* an older handler with no frames left */
	if (fxt_grow((void **)&rt->mark, &rt->capmark, rt->nmark + 1,
	    sizeof(*rt->mark)) < 0) {
		r->err = -MT_E_NOMEM;
		return;
	}
	m = &rt->mark[rt->nmark++];
	m->resume[0] = resume[0];
	m->resume[1] = resume[1];
	m->depth = rt->nfr;
	push_loc(r, rt, loc, addr, 0, 0);
}

/*
 * Tracing resumes at (@loc, @addr) after the gap on top (popped here).
 * At the stopped address, the frame goes on unchecked (as magic-trace: a
 * syscall return is in the same function even when a symbol boundary
 * says otherwise).  At an interrupted address further down, the handler
 * above it ends.  At a function's entry (or code of unknown bounds)
 * after a syscall or an asynchronous exit: a signal handler (mt).
 * Otherwise wherever the address says (arrive).
 */
static void
gap_resume(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr)
{
	struct rframe *g = top_gap(rt);
	uint64_t res[2];
	int gap;

	if (g == NULL) {
		if (!mark_resume(r, rt, addr))
			arrive(r, rt, loc, addr);
		return;
	}
	gap = g->gap;
	resume_addrs(gap, g->f.addr, res);
	pop(r, rt);
	if (addr == res[0] || (res[1] != 0 && addr == res[1])) {
		resumed(r, rt, loc, addr);
		return;
	}
	if (mark_resume(r, rt, addr))
		return;
	if ((gap == GAP_SYSCALL || gap == GAP_ASYNC) && res[0] != 0 &&
	    !seg_empty(rt) && !mid_function(r, loc, addr))
		async_enter(r, rt, res, loc, addr);
	else
		arrive(r, rt, loc, addr);
}

static void
open_window(struct recon *r, struct rthread *rt, uint64_t create)
{
	if (fxt_grow((void **)&rt->seg, &rt->capseg, 1, sizeof(*rt->seg)) < 0 ||
	    log_add(r, OP_SEG_PUSH) == NULL) {
		r->err = -MT_E_NOMEM;
		return;
	}
	rt->nseg = 1;
	memset(rt->seg, 0, sizeof(*rt->seg));
	rt->seg[0].create = create;
	rt->seg[0].create_op = r->nlog - 1;
	rt->live = 1;
	rt->nmark = 0;
	rt->intx = 0;
}

/* End every frame and segment of @rt. */
static void
close_window(struct recon *r, struct rthread *rt)
{
	while (rt->nseg > 0) {
		pop_to(r, rt, 0);
		rt->nseg--;
		log_add(r, OP_SEG_POP);
	}
	rt->live = 0;
	rt->nmark = 0;
	rt->intx = 0;
}

static void
error_reset(struct recon *r, struct rthread *rt, uint32_t name)
{
	struct frame f = { .name = name, .flags = FR_SYNTH | FR_ERROR };

	r->st->errors++;
	if (push(r, rt, &f, 0, 1, 0) != NULL)
		pop(r, rt);
	close_window(r, rt);
	open_window(r, rt, 0);
}

static void
kernel_enter(struct recon *r, struct rthread *rt, const struct bev *e)
{
	struct rseg *s;

	if (fxt_grow((void **)&rt->seg, &rt->capseg, rt->nseg + 1,
	    sizeof(*rt->seg)) < 0 || log_add(r, OP_SEG_PUSH) == NULL) {
		r->err = -MT_E_NOMEM;
		return;
	}
	s = &rt->seg[rt->nseg++];
	memset(s, 0, sizeof(*s));
	s->base = rt->nfr;
	s->create_op = r->nlog - 1;
	s->kernel = 1;
	resume_addrs(e->kind == MT_EV_SYSCALL ? GAP_SYSCALL : GAP_ASYNC,
	    e->a[0], s->resume);
	push_loc(r, rt, e->loc[1], e->a[1], 0, 0);
}

/* sysret / iret to (@loc, @addr). */
static void
kernel_leave(struct recon *r, struct rthread *rt, const struct bev *e)
{
	uint32_t loc = e->loc[1];
	uint64_t addr = e->a[1], res[2];

	if (rt->nseg > 1 && topseg(rt)->kernel) {
		/* The kernel entry's frames end (as magic-trace). */
		res[0] = topseg(rt)->resume[0];
		res[1] = topseg(rt)->resume[1];
		pop_to(r, rt, topseg(rt)->base);
		rt->nseg--;
		log_add(r, OP_SEG_POP);
		if (addr == res[0] || (res[1] != 0 && addr == res[1])) {
			resumed(r, rt, loc, addr);
			return;
		}
		if (mark_resume(r, rt, addr))
			return;
		if (res[0] != 0 && !seg_empty(rt) &&
		    !mid_function(r, loc, addr))
			async_enter(r, rt, res, loc, addr);
		else
			arrive(r, rt, loc, addr);
	} else if (top_gap(rt) != NULL || e->a[0] == 0) {
		gap_resume(r, rt, loc, addr);
	} else if (!mark_resume(r, rt, addr)) {
		/*
		 * A return from a kernel entry before the window (as
		 * magic-trace): the kernel frames end, and the function
		 * returned to is inferred from the window start.
		 */
		pop_to(r, rt, topseg(rt)->base);
		check_current(r, rt, loc, addr);
	}
}

/*
 * Go's scheduler switches goroutines by jumping out of gogo to a saved
 * PC (as magic-trace, src/trace_writer.ml Go_hacks): control goes on as
 * if returned from the last runtime.mcall or runtime.morestack, whose
 * frames (the scheduler's) end; with none open, the thread starts over.
 * Returns whether the top frame was gogo.
 */
static int
go_switch(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr)
{
	const struct sym_loc *l = sym_loc(r->sym, loc);
	int ti = top_real(rt), k;

	if (ti < 0 || !is_name(rt->fr[ti].f.name, r->n_gogo) ||
	    (l != NULL && is_name(l->frames[0].name, r->n_gogo)))
		return 0;	/* runtime.gogo jumps to gogo: not yet */
	for (k = ti; (k = real_below(rt, k)) >= 0;)
		if (is_name(rt->fr[k].f.name, r->n_gogo_dst))
			break;
	if (k >= 0) {
		pop_to(r, rt, (uint32_t)k);
		arrive(r, rt, loc, addr);
	} else {
		close_window(r, rt);
		open_window(r, rt, 0);
		push_loc(r, rt, loc, addr, 0, 0);
	}
	return 1;
}

static void
ev_ret(struct recon *r, struct rthread *rt, const struct bev *e)
{
	uint32_t id = ident(r, e->loc[1]);
	struct rmark *m;
	int ti, ci, k;

	if (seg_empty(rt) && !infer_source(r, rt, e->loc[0], e->a[0])) {
		/* Returning from a frame nothing is known of. */
		struct frame f = { .name = r->n_unknown,
		    .flags = FR_INFERRED | FR_OUTER | FR_SYNTH };

		push(r, rt, &f, 0, 1, 0);
	}
	if (go_switch(r, rt, e->loc[1], e->a[1]))
		return;
	/*
	 * (mt) The return's source says which function returns: another
	 * one than the top frame's was entered by a jump not seen (a tail
	 * call in code without symbols), or runs in an older frame.
	 */
	at_source(r, rt, e->loc[0], e->a[0]);
	m = rt->nmark ? &rt->mark[rt->nmark - 1] : NULL;
	ti = top_real(rt);
	if (m != NULL && ti >= 0 && (uint32_t)ti == m->depth) {
		/*
		 * A signal handler returns to the restorer the kernel gave
		 * it (__restore_rt): that runs in the handler's place, above
		 * the interrupted frame (mt).
		 */
		pop_to(r, rt, (uint32_t)ti);
		push_loc(r, rt, e->loc[1], e->a[1], 0, 0);
		return;
	}
	if (ti >= 0 && find_site(rt, ti, e->a[1]) != ti) {
		/* (mt) Not to the top frame's caller: a non-local exit? */
		if ((k = find_site(rt, ti, e->a[1])) >= 0) {
			pop_to(r, rt, (uint32_t)k);
			check_current(r, rt, e->loc[1], e->a[1]);
			return;
		}
		ci = real_below(rt, ti);
		if (id != 0 && ci >= 0 && !runs(&rt->fr[ci], id) &&
		    mid_function(r, e->loc[1], e->a[1]) &&
		    (k = find_fn(rt, ci, id)) >= 0) {
			pop_to(r, rt, (uint32_t)k + 1);
			set_inline(r, rt, e->loc[1]);
			return;
		}
	}
	pop_real(r, rt);
	check_current(r, rt, e->loc[1], e->a[1]);
}

static void
ev_tx(struct recon *r, struct rthread *rt, const struct bev *e)
{
	if (e->str == r->s_begin) {
		if (!rt->intx)
			rt->txdepth = rt->nfr;
		rt->intx = 1;
	} else if (e->str == r->s_commit) {
		rt->intx = 0;
	} else if (e->str == r->s_abort && rt->intx) {
		/*
		 * The transaction's effects are undone: the frames entered
		 * since it began end here (magic-trace drops them instead).
		 */
		pop_to(r, rt, rt->txdepth);
		rt->intx = 0;
	}
}

static void
apply(struct recon *r, struct rthread *rt, uint64_t ts, const struct bev *e)
{
	struct op *o;
	int gap;

	rt->last = ts;
	switch (e->kind) {
	case MT_EV_CALL:
		if (!infer_source(r, rt, e->loc[0], e->a[0]))
			at_source(r, rt, e->loc[0], e->a[0]);
		push_loc(r, rt, e->loc[1], e->a[1], 0, e->a[0]);
		break;
	case MT_EV_RET:
		ev_ret(r, rt, e);
		break;
	case MT_EV_JMP:
		infer_source(r, rt, e->loc[0], e->a[0]);
		if (go_switch(r, rt, e->loc[1], e->a[1]))
			break;
		if (ident(r, e->loc[1]) == 0 && !seg_empty(rt) &&
		    e->a[1] != 0 && find_site(rt, top_real(rt), e->a[1]) < 0)
			/* To code of no known function: it left the top one. */
			replace_top(r, rt, e->loc[1], e->a[1]);
		else
			arrive(r, rt, e->loc[1], e->a[1]);
		break;
	case MT_EV_BR:
		if (!seg_empty(rt))
			set_inline(r, rt, e->loc[1]);
		break;
	case MT_EV_SYSCALL:
	case MT_EV_IRQ:
		if (!infer_source(r, rt, e->loc[0], e->a[0]) &&
		    !seg_empty(rt))
			set_inline(r, rt, e->loc[0]);
		if (e->a[1] != 0)
			kernel_enter(r, rt, e);
		else if (e->kind == MT_EV_SYSCALL)
			push_gap(r, rt, r->n_syscall, GAP_SYSCALL, e->a[0]);
		else
			push_gap(r, rt, r->n_untraced, GAP_ASYNC, e->a[0]);
		break;
	case MT_EV_SYSRET:
	case MT_EV_IRET:
		kernel_leave(r, rt, e);
		break;
	case MT_EV_DISABLE:
		if (!infer_source(r, rt, e->loc[0], e->a[0]) &&
		    !seg_empty(rt))
			set_inline(r, rt, e->loc[0]);
		gap = e->str == r->s_syscall ? GAP_SYSCALL :
		    e->str == r->s_async ? GAP_ASYNC : GAP_OTHER;
		push_gap(r, rt, gap == GAP_SYSCALL ? r->n_syscall :
		    r->n_untraced, gap, e->a[0]);
		break;
	case MT_EV_ENABLE:
		gap_resume(r, rt, e->loc[0], e->a[0]);
		break;
	case MT_EV_TX:
		ev_tx(r, rt, e);
		break;
	case MT_EV_TRIGGER:
		r->st->triggers++;
		if ((o = log_add(r, OP_TRIGGER)) != NULL) {
			o->f.addr = e->a[0];
			o->f.name = e->str;
		}
		break;
	default:
		break;
	}
}

/* Apply the batch, spreading its time over [btime, next). */
static void
flush(struct recon *r, struct rthread *rt, uint64_t next)
{
	uint32_t i;

	for (i = 0; i < rt->nb && !r->err; i++)
		apply(r, rt, rt->btime, &rt->batch[i]);
	rt->nb = 0;
	log_replay(r, rt, rt->btime, next > rt->btime ? next - rt->btime : 0);
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
		open_window(r, rt, 0);
		log_replay(r, rt, rt->seen ? rt->btime : t, 0);
		rt->seen = 1;
		rt->btime = t;
	}
	if (t < rt->btime)
		t = rt->btime;	/* out of order: keep the thread monotonic */
	/* `br` records never end a batch: they must not change times. */
	if (rt->nb > 0 && (rt->nb == RECON_MAX_BATCH ||
	    ev->kind == MT_EV_END || (ev->kind != MT_EV_BR && t > rt->btime)))
		flush(r, rt, t);
	if (ev->kind != MT_EV_BR || rt->nb == 0)
		rt->btime = t;
	if (ev->kind == MT_EV_END) {
		close_window(r, rt);
		log_replay(r, rt, t, 0);
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
		rt->last = t;
		error_reset(r, rt, ev->kind == MT_EV_ERROR ?
		    event_str(r, ev) : r->n_overflow);
		log_replay(r, rt, t, 0);
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
	e->str = (ev->kind == MT_EV_TRIGGER || ev->kind == MT_EV_DISABLE ||
	    ev->kind == MT_EV_TX) ? event_str(r, ev) : 0;
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
		uint64_t end;

		if (rt == NULL || !rt->live)
			continue;
		flush(r, rt, rt->btime);
		end = rt->last > rt->btime ? rt->last : rt->btime;
		close_window(r, rt);
		log_replay(r, rt, end, 0);
	}
	return r->err;
}
