/* SPDX-License-Identifier: MIT */
/*
 * The records of one buffer's decode (decbuf.h): events written to the
 * stream, thread records once per run of mt or per run of a thread
 * (runs.h), triggers, and the per-CPU switch list.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <intel-pt.h>

#include "cfg.h"
#include "decode.h"
#include "err.h"
#include "events.h"
#include "ild.h"
#include "image.h"
#include "parallel.h"
#include "runs.h"
#include "snap.h"
#include "threads.h"
#include "walk.h"
#include "xol.h"

#include "decbuf.h"

/* Give @b's decoder the image of its process at its time. */
int
dec_set_image(struct dec_buf *b)
{
	struct pt_image *img = dec_image(b->r, b->pid, b->now, &b->img_next);

	if (img == NULL || pt_blk_set_image(b->dec, img) < 0)
		return -MT_E_IPT;
	b->img = img;
	b->xol_img = 0;
	return 0;
}

/* Out of a probed branch's slot: the decoder's own image again. */
void
dec_xol_end(struct dec_buf *b)
{
	b->xol_br = 0;
	if (b->xol_img) {
		b->xol_img = 0;
		(void)pt_blk_set_image(b->dec, b->img);
	}
}


/* A record of @b's thread at @time is written: the run's times follow. */
static inline void
dec_note(struct dec_buf *b, uint64_t time)
{
	b->last_t = time;
	if (b->run != NULL) {
		if (!b->run_ev && time < b->run->key)
			b->run->key = time;	/* the first run of a buffer */
		b->run_ev = 1;
		if (time > b->run_last)
			b->run_last = time;
	}
	b->r->st->events++;
}

void
dec_emit(struct dec_buf *b, enum mt_ev_kind k, uint64_t time, uint64_t a0,
    uint64_t a1)
{
	dec_note(b, time);
	mt_evw_event(b->r->w, k, time, b->tid, a0, a1);
}

void
dec_emit_str(struct dec_buf *b, enum mt_ev_kind k, uint64_t time,
    uint64_t ip, uint64_t num, const char *str)
{
	if (k != MT_EV_ERROR) {
		/* disables, triggers, tx: no number, no struct */
		dec_note(b, time);
		mt_evw_event_str(b->r->w, k, time, b->tid, ip, str);
		return;
	}
	b->ev.kind = k;
	b->ev.time = time;
	b->ev.tid = b->tid;
	b->ev.addr[0] = ip;
	b->ev.addr[1] = 0;
	b->ev.num = num;
	b->ev.str[0] = str;
	dec_note(b, time);
	mt_evw_write(b->r->w, &b->ev);
	b->ev.str[0] = NULL;
	b->ev.num = 0;
}

/* Write the thread record of the current thread. */
static void
dec_thread_rec(struct dec_buf *b)
{
	struct mt_ev ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = MT_EV_THREAD;
	ev.pid = b->pid;
	ev.tid = b->tid;
	ev.str[0] = thr_comm(&b->r->ts, b->tid);
	mt_evw_write(b->r->w, &ev);
}

/* Write the thread record of the current thread once per run. */
int
dec_thread(struct dec_buf *b)
{
	struct dec_run *r = b->r;
	size_t i;

	for (i = 0; i < r->nseen; i++)
		if (r->seen[i] == b->tid)
			return 0;
	if ((r->nseen & (r->nseen - 1)) == 0) {
		uint32_t *n = realloc(r->seen,
		    (r->nseen ? 2 * r->nseen : 8) * sizeof(*n));

		if (n == NULL)
			return -MT_E_NOMEM;
		r->seen = n;
	}
	r->seen[r->nseen++] = b->tid;
	dec_thread_rec(b);
	return 0;
}

/* Where the next byte of this buffer's stream goes (written so far). */
static int
dec_run_pos(struct dec_buf *b, uint64_t *pos)
{
	off_t o;

	if (mt_evw_flush(b->r->w) < 0)
		return -MT_E_IO;
	o = lseek(b->runs->fd, 0, SEEK_CUR);
	if (o < 0)
		return -MT_E_IO;
	*pos = (uint64_t)o;
	return 0;
}

/* Start a run of the current thread that began at @start (runs.h). */
int
dec_run_open(struct dec_buf *b, uint64_t start)
{
	uint64_t head;
	int rc = dec_run_pos(b, &head);

	if (rc < 0)
		return rc;
	b->run = runs_add(b->runs, start, b->tid);
	if (b->run == NULL)
		return -MT_E_NOMEM;
	b->run->head = head;
	b->run_ev = 0;
	b->run_last = start == UINT64_MAX ? 0 : start;
	dec_thread_rec(b);
	return dec_run_pos(b, &b->run->body);
}

/* End the current run: its thread's `end` at @t (kept for its last run). */
int
dec_run_close(struct dec_buf *b, uint64_t t)
{
	struct run_rec *run = b->run;
	int rc = dec_run_pos(b, &run->tail);

	if (rc < 0)
		return rc;
	b->run_ev = 1;		/* `end` does not move the start */
	dec_emit(b, MT_EV_END, t, 0, 0);
	b->run = NULL;
	return dec_run_pos(b, &run->stop);
}

/* The time of instruction @idx of the block that starts at icount. */
/*
 * Did the trigger @t fire on this buffer's CPU?  A thread is "current" on
 * a CPU from its switch-in to the next one there, also after it left
 * (switch-outs are not kept), so a hit could otherwise be written by two
 * buffers, one of them out of time order.
 */
static int
dec_trigger_here(const struct dec_buf *b, const struct mt_snap_trigger *t)
{
	uint32_t cpu;

	return !thr_on_cpu(&b->r->ts, t->tid, t->time, &cpu) ||
	    cpu == b->cpu->cpu;
}

/* Triggers of this thread that fired by now (perf clock only). */
void
dec_triggers(struct dec_buf *b, uint64_t upto)
{
	const struct mt_snap *s = b->r->s;

	for (; b->trigi < s->ntriggers; b->trigi++) {
		const struct mt_snap_trigger *t = &s->triggers[b->trigi];

		/*
		 * A hit at the current time waits until time moves on:
		 * events that share its nanosecond (the call that reached
		 * the probe among them) come before it.
		 */
		if (t->time >= upto)
			return;
		if (t->tid != b->tid || (b->cpu != NULL &&
		    !dec_trigger_here(b, t)))
			continue;
		dec_emit_str(b, MT_EV_TRIGGER, t->time < b->last_t ?
		    b->last_t : t->time, t->ip, 0, t->what);
	}
}

/*
 * Before a gap that starts at @t with the thread at @ip (0: unknown): the
 * hits of this thread up to @t.  The probe that fired stopped the thread
 * there (the uprobe's trap, a software backend's stop for the snapshot),
 * so the hit belongs to the stack it reached, before the gap, not to the
 * gap's [untraced] frame.  The next hit, if it is this thread's at @ip and
 * not earlier, is the one that stopped it, recorded a little later (the
 * trap's handling): it takes the gap's time.
 */
void
dec_triggers_before_gap(struct dec_buf *b, uint64_t t, uint64_t ip)
{
	const struct mt_snap *s = b->r->s;
	const struct mt_snap_trigger *h;

	if (!b->r->perf_clock || b->trigi >= s->ntriggers)
		return;
	if (t < UINT64_MAX)
		dec_triggers(b, t + 1);
	if (ip == 0 || b->trigi >= s->ntriggers)
		return;
	h = &s->triggers[b->trigi];
	if (h->tid == b->tid && h->ip == ip && h->time >= t &&
	    (b->cpu == NULL || dec_trigger_here(b, h))) {
		dec_emit_str(b, MT_EV_TRIGGER, t, h->ip, 0, h->what);
		b->trigi++;
	}
}

/* Follow the per-CPU switch list up to the current time. */
int
dec_switch(struct dec_buf *b)
{
	const struct thr_cpu *c = b->cpu;
	int rc;

	if (c->nsw == 0 || b->swi >= c->nsw || c->sw[b->swi].time > b->now)
		return 0;
	while (b->swi < c->nsw && c->sw[b->swi].time <= b->now)
		b->swi++;
	if (c->sw[b->swi - 1].tid == b->tid)
		return 0;
	/* Hits of the thread switched out before the switch are its own. */
	if (b->trigi < b->r->s->ntriggers)
		dec_triggers(b, c->sw[b->swi - 1].time);
	if (b->run != NULL) {
		rc = dec_run_close(b, b->run_last);
		if (rc < 0)
			return rc;
	}
	b->tid = c->sw[b->swi - 1].tid;
	b->pid = c->sw[b->swi - 1].pid;
	rc = dec_set_image(b);
	if (rc < 0)
		return -MT_E_IPT;
	/* The branch pending belonged to the thread switched out. */
	b->pend.kind = WK_NONE;
	dec_xol_end(b);
	b->gap_at = 0;
	if (b->runs != NULL)
		return dec_run_open(b, c->sw[b->swi - 1].time);
	return dec_thread(b);
}

/*
 * An unconditional jump between two pieces of code of no known function,
 * or from a known function into such code: it could not be classified
 * (--stats).
 */
