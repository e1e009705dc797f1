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
#include "gor.h"
#include "grow.h"
#include "events.h"
#include "order.h"
#include "out.h"
#include "recon.h"
#include "stack.h"
#include "sym.h"
#include "thrtab.h"
#include "view.h"

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
	r->n_sched[0] = r->n_sched[1] = r->n_sched[2] =
	    sym_cintern(sym, "runtime.schedule");
	r->n_goexit[0] = sym_cintern(sym, "runtime.goexit0");
	r->n_goexit[1] = sym_cintern(sym, "runtime.goexit0.abi0");
	r->n_goexit[2] = sym_cintern(sym, "runtime.goexit1");
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
	gor_fini(rt);
}

void
recon_free(struct recon *r)
{
	if (r == NULL)
		return;
	thrtab_free(&r->thr, rthread_fini);
	order_free(&r->order);
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
		rt->t = rt->track = rt->shown = t;
	return rt;
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
		if (m->depth < stack_topseg(rt)->base)
			return 0;	/* below the current segment */
		stack_pop_to(r, rt, m->depth);
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
	uint32_t id = stack_ident(r, loc);
	int ti, k;

	if (stack_seg_empty(rt) || (ti = stack_top_real(rt)) < 0) {
		stack_check_current(r, rt, loc, addr);
		return;
	}
	if (!stack_at_entry(r, loc, addr)) {
		k = stack_find_site(rt, ti, addr);
		if (k >= 0) {
			stack_pop_to(r, rt, (uint32_t)k);
			stack_check_current(r, rt, loc, addr);
			return;
		}
	}
	if (id != 0 && !stack_runs(&rt->fr[ti], id) && rt->fr[ti].prev != id &&
	    stack_mid_function(r, loc, addr) &&
	    (k = stack_find_fn(rt, ti, id)) >= 0) {
		stack_pop_to(r, rt, (uint32_t)k + 1);
		stack_set_inline(r, rt, loc);
		return;
	}
	stack_check_current(r, rt, loc, addr);
}

/*
 * The source of an event on an empty segment was running since the
 * segment started: infer it when it is symbolized.  Returns whether it did.
 */
static int
infer_source(struct recon *r, struct rthread *rt, uint32_t loc, uint64_t addr)
{
	if (!stack_seg_empty(rt) || sym_loc(r->sym, loc) == NULL)
		return 0;
	stack_push_loc(r, rt, loc, addr, FR_INFERRED | FR_OUTER, 0);
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
	uint32_t id = stack_ident(r, loc);
	int ti = stack_top_real(rt), k;

	if (id == 0 || ti < 0)
		return;
	if (stack_runs(&rt->fr[ti], id)) {
		stack_set_inline(r, rt, loc);
	} else if (!(rt->fr[ti].f.flags & FR_SYNTH)) {
		if ((k = stack_find_fn(rt, ti, id)) >= 0) {
			stack_pop_to(r, rt, (uint32_t)k + 1);
			stack_set_inline(r, rt, loc);
		} else {
			stack_replace_top(r, rt, loc, addr);
		}
	}
}

/* Top frame of the segment if it is a gap frame, else NULL. */
static struct rframe *
top_gap(struct rthread *rt)
{
	struct rframe *x;

	if (stack_seg_empty(rt))
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
	x = stack_push(r, rt, &f, 0, 1, 1);
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
	uint32_t id = stack_ident(r, loc);
	int ti;

	if (stack_seg_empty(rt)) {
		stack_check_current(r, rt, loc, addr);
		return;
	}
	ti = stack_top_real(rt);
	if (id != 0 && ti >= 0 && !stack_runs(&rt->fr[ti], id) &&
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
	stack_push_loc(r, rt, loc, addr, 0, 0);
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
	stack_pop(r, rt);
	if (addr == res[0] || (res[1] != 0 && addr == res[1])) {
		resumed(r, rt, loc, addr);
		return;
	}
	if (mark_resume(r, rt, addr))
		return;
	if ((gap == GAP_SYSCALL || gap == GAP_ASYNC) && res[0] != 0 &&
	    !stack_seg_empty(rt) && !stack_mid_function(r, loc, addr))
		async_enter(r, rt, res, loc, addr);
	else
		arrive(r, rt, loc, addr);
}

static void
error_reset(struct recon *r, struct rthread *rt, uint32_t name)
{
	struct frame f = { .name = name, .flags = FR_SYNTH | FR_ERROR };

	r->st->errors++;
	if (stack_push(r, rt, &f, 0, 1, 0) != NULL)
		stack_pop(r, rt);
	gor_close(r, rt);
	stack_close_window(r, rt);
	stack_open_window(r, rt, 0);
}

static void
kernel_enter(struct recon *r, struct rthread *rt, const struct bev *e)
{
	struct rseg *s;

	if (fxt_grow((void **)&rt->seg, &rt->capseg, rt->nseg + 1,
	    sizeof(*rt->seg)) < 0 || stack_log_add(r, OP_SEG_PUSH) == NULL) {
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
	stack_push_loc(r, rt, e->loc[1], e->a[1], 0, 0);
}

/* sysret / iret to (@loc, @addr). */
static void
kernel_leave(struct recon *r, struct rthread *rt, const struct bev *e)
{
	uint32_t loc = e->loc[1];
	uint64_t addr = e->a[1], res[2];

	if (rt->nseg > 1 && stack_topseg(rt)->kernel) {
		/* The kernel entry's frames end (as magic-trace). */
		res[0] = stack_topseg(rt)->resume[0];
		res[1] = stack_topseg(rt)->resume[1];
		stack_pop_to(r, rt, stack_topseg(rt)->base);
		rt->nseg--;
		stack_log_add(r, OP_SEG_POP);
		if (addr == res[0] || (res[1] != 0 && addr == res[1])) {
			resumed(r, rt, loc, addr);
			return;
		}
		if (mark_resume(r, rt, addr))
			return;
		if (res[0] != 0 && !stack_seg_empty(rt) &&
		    !stack_mid_function(r, loc, addr))
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
		stack_pop_to(r, rt, stack_topseg(rt)->base);
		stack_check_current(r, rt, loc, addr);
	}
}

static void flush(struct recon *r, struct rthread *rt, uint64_t next);

/* The log being filled, set aside while another thread logs its own. */
struct aside {
	struct op *log;
	uint32_t nlog, caplog;
};

static void
log_aside(struct recon *r, struct aside *a)
{
	a->log = r->log;
	a->nlog = r->nlog;
	a->caplog = r->caplog;
	r->log = NULL;
	r->nlog = r->caplog = 0;
}

/* Replay what @rt logged meanwhile from @t, and take the log back. */
static void
log_back(struct recon *r, struct aside *a, struct rthread *rt, uint64_t t)
{
	stack_log_replay(r, rt, t, 0);
	free(r->log);
	r->log = a->log;
	r->nlog = a->nlog;
	r->caplog = a->caplog;
}

/*
 * (mt) Candidate @idx of @rt is a goroutine that parked on another thread
 * which then slept in the scheduler (findRunnable, stopm: gogo did not
 * jump out there): it parks there now, at the resume's time, that
 * thread's frames above its mcall/morestack ending, and that thread goes
 * on with nothing open, on a track with nothing open (its callers
 * inferred as it returns).  Returns 0 if it is not there any more.
 */
static int
take_asleep(struct recon *r, struct rthread *rt, int idx)
{
	struct gcand *c = &rt->cand[idx];
	struct rthread *of = c->of;
	struct aside a;
	uint32_t n;

	if (gor_cand_park(rt, (uint32_t)idx) == NULL || of->btime > rt->gtime)
		return 0;
	log_aside(r, &a);	/* @rt's may hold what it did meanwhile */
	if (of->nb > 0)
		flush(r, of, rt->gtime);	/* its last events first */
	n = of->npark;
	if (gor_cand_park(rt, (uint32_t)idx) != NULL)
		gor_leave(r, of, c->k);
	if (of->npark > n) {
		c->k = -1;
		c->id = of->park[of->npark - 1].id;
		gor_enter(r, of, GOR_NEW);
	}
	log_back(r, &a, of, rt->gtime);
	return c->k < 0;
}

/*
 * Goroutine @idx of gor_verdict runs from gogo's jump @e: a parked one
 * goes on where its mcall returns (its mcall frame ends); a new one
 * begins with the target (its callers are inferred as it returns).
 */
static void
go_enter(struct recon *r, struct rthread *rt, int idx, const struct bev *e)
{
	if (idx >= 0 && rt->cand[idx].k >= 0 && !take_asleep(r, rt, idx))
		idx = GOR_NEW;
	if (gor_enter(r, rt, idx))
		arrive(r, rt, e->loc[1], e->a[1]);
	else
		stack_push_loc(r, rt, e->loc[1], e->a[1], 0, 0);
}

/*
 * Go's scheduler switches goroutines by jumping out of gogo to a saved
 * PC (magic-trace, src/trace_writer.ml Go_hacks: as if returned from the
 * last runtime.mcall or runtime.morestack, whose frames end).  (mt) That
 * holds as is only when the goroutine that entered mcall or morestack is
 * the one that resumes: newstack back into the function that grew its
 * stack, park_m or exitsyscall0 running the same goroutine again through
 * execute.  When runtime.schedule ran in between, it may have picked
 * another goroutine: the one leaving parks with its frames, open on its
 * track (gor.c), and the one gogo jumps to is a parked one whose mcall
 * returns there, told apart by the returns that follow when several
 * parked there (the events are held until then, see hold()), or a new
 * one, whose window starts at the target.  Returns whether the top frame
 * was gogo.
 */
static int
go_switch(struct recon *r, struct rthread *rt, const struct bev *e)
{
	int ti = stack_top_real(rt), k, sched = 0;

	if (ti < 0 || !stack_is_name(rt->fr[ti].f.name, r->n_gogo) ||
	    stack_loc_named(r, e->loc[1], r->n_gogo))
		return 0;	/* runtime.gogo jumps to gogo: not yet */
	for (k = ti; (k = stack_real_below(rt, k)) >= 0;) {
		if (stack_is_name(rt->fr[k].f.name, r->n_gogo_dst))
			break;
		sched |= stack_is_name(rt->fr[k].f.name, r->n_sched);
	}
	if (k >= 0 && !sched) {
		stack_pop_to(r, rt, (uint32_t)k);
		arrive(r, rt, e->loc[1], e->a[1]);
		return 1;
	}
	gor_leave(r, rt, k);
	recon_settle(r, rt, rt->btime, 0);
	if (gor_candidates(r, rt, e->a[1]) > 0) {
		gor_defer(rt, e, rt->btime);
		r->ndeciding++;
	} else {
		go_enter(r, rt, GOR_NEW, e);
	}
	return 1;
}

static void
ev_ret(struct recon *r, struct rthread *rt, const struct bev *e)
{
	uint32_t id = stack_ident(r, e->loc[1]);
	struct rmark *m;
	int ti, ci, k = -1;

	if (stack_seg_empty(rt) && !infer_source(r, rt, e->loc[0], e->a[0])) {
		/* Returning from a frame nothing is known of. */
		struct frame f = { .name = r->n_unknown,
		    .flags = FR_INFERRED | FR_OUTER | FR_SYNTH };

		stack_push(r, rt, &f, 0, 1, 0);
	}
	if (go_switch(r, rt, e))
		return;
	/*
	 * (mt) The return's source says which function returns: another
	 * one than the top frame's was entered by a jump not seen (a tail
	 * call in code without symbols), or runs in an older frame.
	 */
	at_source(r, rt, e->loc[0], e->a[0]);
	m = rt->nmark ? &rt->mark[rt->nmark - 1] : NULL;
	ti = stack_top_real(rt);
	if (m != NULL && ti >= 0 && (uint32_t)ti == m->depth) {
		/*
		 * A signal handler returns to the restorer the kernel gave
		 * it (__restore_rt): that runs in the handler's place, above
		 * the interrupted frame (mt).
		 */
		stack_pop_to(r, rt, (uint32_t)ti);
		stack_push_loc(r, rt, e->loc[1], e->a[1], 0, 0);
		return;
	}
	if (ti >= 0 && (k = stack_find_site(rt, ti, e->a[1])) != ti) {
		/* (mt) Not to the top frame's caller: a non-local exit? */
		if (k >= 0) {
			stack_pop_to(r, rt, (uint32_t)k);
			stack_check_current(r, rt, e->loc[1], e->a[1]);
			return;
		}
		ci = stack_real_below(rt, ti);
		if (id != 0 && ci >= 0 && !stack_runs(&rt->fr[ci], id) &&
		    stack_mid_function(r, e->loc[1], e->a[1]) &&
		    (k = stack_find_fn(rt, ci, id)) >= 0) {
			stack_pop_to(r, rt, (uint32_t)k + 1);
			stack_set_inline(r, rt, e->loc[1]);
			return;
		}
	}
	stack_pop_real(r, rt);
	if (ti >= 0 && k < 0 && (ti = stack_top_real(rt)) >= 0 &&
	    stack_at_entry(r, e->loc[1], e->a[1]) &&
	    !stack_runs(&rt->fr[ti], id) &&
	    !(rt->fr[ti].f.flags & FR_SYNTH)) {
		/*
		 * (mt) A return to a function's entry, not just after the
		 * call that entered any open frame, returns to no caller:
		 * it enters that function (a retpoline, push-and-return),
		 * so the caller goes on below it.  (A signal's delivery
		 * comes as disable and enable: async_enter.)
		 */
		stack_push_loc(r, rt, e->loc[1], e->a[1], 0, 0);
		return;
	}
	stack_check_current(r, rt, e->loc[1], e->a[1]);
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
		stack_pop_to(r, rt, rt->txdepth);
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
		stack_push_loc(r, rt, e->loc[1], e->a[1], 0, e->a[0]);
		break;
	case MT_EV_RET:
		ev_ret(r, rt, e);
		break;
	case MT_EV_JMP:
		infer_source(r, rt, e->loc[0], e->a[0]);
		if (go_switch(r, rt, e))
			break;
		if (stack_ident(r, e->loc[1]) == 0 && !stack_seg_empty(rt) &&
		    e->a[1] != 0 && stack_find_site(rt, stack_top_real(rt), e->a[1]) < 0)
			/* To code of no known function: it left the top one. */
			stack_replace_top(r, rt, e->loc[1], e->a[1]);
		else
			arrive(r, rt, e->loc[1], e->a[1]);
		break;
	case MT_EV_BR:
		if (!stack_seg_empty(rt))
			stack_set_inline(r, rt, e->loc[1]);
		break;
	case MT_EV_SYSCALL:
	case MT_EV_IRQ:
		if (!infer_source(r, rt, e->loc[0], e->a[0]) &&
		    !stack_seg_empty(rt))
			stack_set_inline(r, rt, e->loc[0]);
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
		    !stack_seg_empty(rt))
			stack_set_inline(r, rt, e->loc[0]);
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
		if ((o = stack_log_add(r, OP_TRIGGER)) != NULL) {
			o->f.addr = e->a[0];
			o->f.name = e->str;
		}
		break;
	default:
		break;
	}
}

static void hold(struct recon *r, struct rthread *rt, uint64_t t,
    const struct bev *e);
static void decide(struct recon *r, struct rthread *rt, int v);

/*
 * Apply the batch, spreading its time over [btime, next).  When gogo
 * resumes a goroutine not known yet, what the batch did so far happens
 * at its time (no share of the time after), and the rest of it is held
 * with the events that follow.
 */
static void
flush(struct recon *r, struct rthread *rt, uint64_t next)
{
	uint32_t i, n = rt->nb, k;
	int v;

	for (i = 0; i < n && !r->err && !rt->deciding; i++)
		apply(r, rt, rt->btime, &rt->batch[i]);
	rt->nb = 0;
	if (!rt->deciding) {
		stack_log_replay(r, rt, rt->btime,
		    next > rt->btime ? next - rt->btime : 0);
		return;
	}
	stack_log_replay(r, rt, rt->btime, 0);
	k = rt->npend;
	for (; i < n; i++)
		if (gor_hold(r, rt, rt->btime, &rt->batch[i]) < 0)
			return;
	for (; k < rt->npend; k++)
		if ((v = gor_watch(r, rt, &rt->pend[k].e)) != GOR_WAIT) {
			decide(r, rt, v);
			return;
		}
}

/* Take event @e at @t into the thread's batch, or hold it. */
static void
feed(struct recon *r, struct rthread *rt, uint64_t t, const struct bev *e)
{
	/* `br` records never end a batch: they must not change times. */
	if (rt->nb > 0 && (rt->nb == RECON_MAX_BATCH ||
	    (e->kind != MT_EV_BR && t > rt->btime)))
		flush(r, rt, t);
	if (rt->deciding) {
		hold(r, rt, t, e);
		return;
	}
	if (e->kind != MT_EV_BR || rt->nb == 0)
		rt->btime = t;
	if (fxt_grow((void **)&rt->batch, &rt->capb, rt->nb + 1,
	    sizeof(*rt->batch)) < 0) {
		r->err = -MT_E_NOMEM;
		return;
	}
	rt->batch[rt->nb++] = *e;
}

/*
 * The goroutine gogo resumed is @v (gor_verdict): it goes on at the
 * jump's time, then the events held meanwhile are applied.
 */
static void
decide(struct recon *r, struct rthread *rt, int v)
{
	struct pev *p = rt->pend;
	uint32_t n = rt->npend, i;

	rt->pend = NULL;
	rt->npend = rt->cappend = 0;
	rt->deciding = 0;
	r->ndeciding--;
	go_enter(r, rt, v, &rt->gjump);
	stack_log_replay(r, rt, rt->gtime, 0);
	for (i = 0; i < n && !r->err; i++)
		feed(r, rt, p[i].t, &p[i].e);
	free(p);
}

/* While a resume is open: hold @e at @t, and decide once it tells. */
static void
hold(struct recon *r, struct rthread *rt, uint64_t t, const struct bev *e)
{
	int v;

	if (gor_hold(r, rt, t, e) < 0)
		return;
	if ((v = gor_watch(r, rt, e)) != GOR_WAIT)
		decide(r, rt, v);
}

/* @of holds a resume that may have taken a goroutine asleep on @rt. */
static int
claims(struct rthread *of, struct rthread *rt)
{
	uint32_t i;

	for (i = 0; i < of->ncand; i++)
		if (of->cand[i].ok && of->cand[i].of == rt &&
		    of->cand[i].k >= 0)
			return 1;
	return 0;
}

void
recon_settle(struct recon *r, struct rthread *rt, uint64_t t, int mine)
{
	struct aside a;
	uint32_t i;

	for (i = 0; rt->t->pid != 0 && i < r->thr.n && !r->err; i++) {
		struct rthread *of = thrtab_at(&r->thr, i);

		if (of == NULL || of == rt || !of->deciding ||
		    of->t->pid != rt->t->pid || of->gtime > t ||
		    (mine && !claims(of, rt)) || gor_left(of) > 1)
			continue;	/* several left: not yet */
		log_aside(r, &a);	/* @rt's may be being applied */
		decide(r, of, gor_verdict(of, 1));
		log_back(r, &a, of, of->btime);
	}
}

/*
 * Apply all the thread has: its batch (its time spread to @next, or
 * none) and the events held for a resume, decided now as it stands.
 */
static void
drain(struct recon *r, struct rthread *rt, uint64_t next)
{
	while (!r->err && (rt->deciding || rt->nb > 0)) {
		if (rt->deciding)
			decide(r, rt, gor_verdict(rt, 1));
		else
			flush(r, rt, next > rt->btime ? next : rt->btime);
	}
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

/* Event @x (recon_event, or held in time order). */
static int
take(void *ctx, const struct oev *x)
{
	struct recon *r = ctx;
	struct rthread *rt;
	struct bev e;
	uint64_t t;

	if (r->err)
		return r->err;
	r->st->events++;
	rt = get_thread(r, x->tid);
	if (rt == NULL)
		return r->err = -MT_E_NOMEM;
	t = x->time > r->base ? x->time - r->base : 0;
	if (rt->haserr && t == rt->errtime)
		t++;	/* magic-trace #155: keep it after the error */
	if (!rt->live) {
		if (x->kind == MT_EV_END)
			return 0;
		/*
		 * A thread's window starts at its first event (as
		 * magic-trace: nothing is known of it before), after an
		 * `end` where the last window ended.
		 */
		if (rt->seen && t < rt->btime)
			t = rt->btime;
		stack_open_window(r, rt, 0);
		stack_log_replay(r, rt, rt->seen ? rt->btime : t, 0);
		rt->seen = 1;
		rt->btime = t;
	}
	if (t < rt->btime)
		t = rt->btime;	/* out of order: keep the thread monotonic */
	if (x->kind == MT_EV_END) {
		drain(r, rt, t);
		rt->btime = t;
		gor_close(r, rt);
		stack_close_window(r, rt);
		stack_log_replay(r, rt, t, 0);
		return r->err;
	}
	if (x->kind == MT_EV_ERROR || x->kind == MT_EV_OVERFLOW) {
		/*
		 * An error happens at its own time: the events before it at
		 * that time get no share of the time after it, and every
		 * frame ends there (as magic-trace).
		 */
		drain(r, rt, t);
		rt->btime = t;
		rt->haserr = 1;
		rt->errtime = t;
		rt->last = t;
		error_reset(r, rt, x->kind == MT_EV_ERROR ? x->str :
		    r->n_overflow);
		stack_log_replay(r, rt, t, 0);
		return r->err ? r->err : sym_error(r->sym);
	}
	e.kind = x->kind;
	e.a[0] = x->a[0];
	e.a[1] = x->a[1];
	e.loc[0] = x->loc[0];
	e.loc[1] = x->loc[1];
	e.str = x->str;
	if (r->ndeciding > 0 && !rt->deciding)
		recon_settle(r, rt, t, 1);	/* before it wakes */
	feed(r, rt, t, &e);
	return r->err;
}

int
recon_event(struct recon *r, const struct mt_ev *ev)
{
	struct rthread *rt;
	struct oev x;

	if (r->err)
		return r->err;
	x.time = x.key = ev->time;
	x.tid = ev->tid;
	x.kind = (uint8_t)ev->kind;
	x.a[0] = ev->addr[0];
	x.a[1] = ev->addr[1];
	x.loc[0] = ev->loc[0];
	x.loc[1] = ev->loc[1];
	x.str = (ev->kind == MT_EV_ERROR || ev->kind == MT_EV_TRIGGER ||
	    ev->kind == MT_EV_DISABLE || ev->kind == MT_EV_TX) ?
	    event_str(r, ev) : 0;
	if (sym_error(r->sym))
		return r->err = sym_error(r->sym);
	/*
	 * (mt) From the first call into gogo on, the events are taken in
	 * time order across threads (order.h), so that a goroutine
	 * parked on one thread is seen parked when another resumes it.
	 */
	if (!r->go && x.kind == MT_EV_CALL &&
	    stack_loc_named(r, x.loc[1], r->n_gogo))
		r->go = 1;
	if (!r->go)
		return take(r, &x);
	if ((rt = get_thread(r, x.tid)) == NULL)
		return r->err = -MT_E_NOMEM;
	x.key = rt->okey = x.time > rt->okey ? x.time : rt->okey;
	if (r->order.n == ORDER_MAX &&
	    (r->err = order_flush(&r->order, take, r)) < 0)
		return r->err;
	if (order_add(&r->order, &x) < 0)
		return r->err = -MT_E_NOMEM;
	return 0;
}

int
recon_finish(struct recon *r)
{
	uint32_t i;

	if (!r->err && r->order.n > 0)
		r->err = order_flush(&r->order, take, r);
	for (i = 0; i < r->thr.n && !r->err; i++) {
		struct rthread *rt = thrtab_at(&r->thr, i);
		uint64_t end;

		if (rt == NULL || !rt->live)
			continue;
		drain(r, rt, rt->btime);
		end = rt->last > rt->btime ? rt->last : rt->btime;
		gor_close(r, rt);
		stack_close_window(r, rt);
		stack_log_replay(r, rt, end, 0);
	}
	return r->err;
}
