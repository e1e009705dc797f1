/* SPDX-License-Identifier: MIT */
/*
 * Call-stack reconstruction (see recon.h).  Each thread keeps one flat
 * stack of shown frames: a real frame (a function entered by a call, a
 * jump or inferred) is followed by the functions inlined into it at the
 * current address.  The stack is cut into segments: the thread's window
 * (from its first event or the last decode error) and, with the kernel
 * traced, one segment per system call or interrupt, whose frames end
 * together when it returns.  What each event does to the stack is in
 * flow.c; this file takes the events, per thread in batches, and holds
 * them while a Go resume is open.
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
#include "events.h"
#include "flow.h"
#include "gor.h"
#include "grow.h"
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
	struct sym_thread *t;
	struct rthread *rt;
	int fresh;

	/* Runs of events on one thread: its block again (blocks stay). */
	if (r->last_rt != NULL && r->last_tid == tid)
		return r->last_rt;
	t = sym_thread(r->sym, 0, tid);
	if (t == NULL ||
	    (rt = thrtab_get(&r->thr, t->index, sizeof(*rt), &fresh)) == NULL)
		return NULL;
	if (fresh)
		rt->t = rt->track = rt->shown = t;
	r->last_tid = tid;
	r->last_rt = rt;
	return rt;
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

int
recon_take_asleep(struct recon *r, struct rthread *rt, int idx)
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
		flow_apply(r, rt, rt->btime, &rt->batch[i]);
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
	flow_go_enter(r, rt, v, &rt->gjump);
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
		flow_error_reset(r, rt, x->kind == MT_EV_ERROR ? x->str :
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
