/* SPDX-License-Identifier: MIT */
/*
 * The reconstruction's control-flow policies (see flow.h): what a call, a
 * return, a jump, a gap, a kernel entry or a transaction does to its
 * thread's stack.  Each policy, and whether it is magic-trace's
 * (src/trace_writer.ml) or mt's own, is in the table of docs/formats/fxt.md
 * ("Call-stack policies"); the comments below give the reasons.
 */
#include <string.h>

#include "err.h"
#include "events.h"
#include "flow.h"
#include "gor.h"
#include "grow.h"
#include "stack.h"
#include "sym.h"

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

void
flow_error_reset(struct recon *r, struct rthread *rt, uint32_t name)
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

void
flow_go_enter(struct recon *r, struct rthread *rt, int idx,
    const struct bev *e)
{
	if (idx >= 0 && rt->cand[idx].k >= 0 && !recon_take_asleep(r, rt, idx))
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
 * parked there (the events are held until then, see hold() in
 * recon.c), or a new one, whose window starts at the target.  Returns whether the top frame
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
		flow_go_enter(r, rt, GOR_NEW, e);
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

void
flow_apply(struct recon *r, struct rthread *rt, uint64_t ts,
    const struct bev *e)
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
