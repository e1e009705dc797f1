/* SPDX-License-Identifier: MIT */
/*
 * The reconstruction's state and its stack primitives (stack.c), used by
 * the policies of flow.c and the batches of recon.c: per thread, the
 * open frames cut into segments (the window and kernel entries), the open
 * signal handlers, the batch of same-timestamp events, and the log of
 * what the view must see, replayed with times when the batch is applied.  Internal to mt-fxt's recon.
 */
#ifndef MT_FXT_STACK_H
#define MT_FXT_STACK_H

#include <stdint.h>

#include "order.h"
#include "out.h"
#include "thrtab.h"

struct sym;
struct sym_thread;
struct view;
struct fxt_stats;
struct gsim;

#define STACK_NONE	UINT32_MAX
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
	uint32_t create_op;	/* log entry of its start, STACK_NONE: create */
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

enum { OP_BEGIN, OP_END, OP_SEG_PUSH, OP_SEG_POP, OP_TRIGGER, OP_TRACK };

/* What the view must see, logged while a batch is applied. */
struct op {
	uint8_t kind;		/* OP_* */
	uint8_t share;		/* a frame that begins: takes a share */
	uint8_t fixed;		/* ts is given (inferred frame) */
	uint32_t tref;		/* inferred: log entry whose time it takes */
	uint64_t ts;		/* time (set when replayed) */
	struct frame f;		/* OP_BEGIN; OP_TRIGGER: name = what */
	struct sym_thread *track;	/* OP_TRACK: what follows goes there */
};

/* A goroutine parked on its thread while others run (Go, gor.c). */
struct rpark {
	struct sym_thread *t;	/* its track, where its frames stay open */
	struct rframe *fr;	/* its frames, bottom first (owned); the top
				 * one is the runtime.mcall or morestack it
				 * parked in */
	uint32_t nfr;
	uint64_t create;	/* when its track's window opened */
	uint64_t id;		/* 1, 2... in the reconstruction */
	uint64_t ptime;		/* when it parked */
};

/* A parked goroutine gogo may have resumed (gor.c). */
struct gcand {
	struct rthread *of;	/* the thread it parked on */
	uint64_t id;		/* its rpark.id */
	int32_t k;		/* -1; or, @of asleep in the scheduler above
				 * it, the index of its mcall/morestack */
	uint64_t site;		/* k: that call's site */
	uint32_t fn;		/* k: that frame's identity */
	struct rpark view;	/* k: its frames, as gor_cand_park sees them */
	uint8_t ok;		/* no return disagreed */
};

/* An event held while the goroutine gogo resumed is not known yet. */
struct pev {
	uint64_t t;		/* its time */
	struct bev e;
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
	/* Go's goroutines (gor.c). */
	struct sym_thread *track;	/* where frames go now: the thread's
					 * own track, or a goroutine's */
	struct sym_thread *shown;	/* where the log's replay is at */
	struct rpark *park;	/* parked goroutines, oldest first */
	uint32_t npark, cappark;
	struct sym_thread **spare;	/* goroutine tracks with nothing open */
	uint32_t nspare, capspare;
	uint32_t ntracks;	/* goroutine tracks made for this thread */
	uint8_t tparked;	/* rt->track's goroutine is parked */
	struct gcand *cand;	/* the goroutines the open resume may be */
	uint32_t ncand, capcand;
	uint8_t gwide;		/* those parked on other threads too */
	uint8_t deciding;	/* gogo resumed a goroutine not known yet */
	struct pev *pend;	/* the events held meanwhile */
	uint32_t npend, cappend;
	struct bev gjump;	/* the jump out of gogo */
	uint64_t gtime;		/* its time */
	uint32_t gdepth;	/* calls above the resumed frame not returned */
	uint32_t gdown;		/* frames below it returned from */
	uint8_t gkernel;	/* in a kernel entry */
	uint64_t gagain;	/* a resume never told apart, none of its
				 * returns below the resumed frame: its
				 * address (gor_watch, gor_leave) */
	uint32_t gwatched;	/* held events gor_watch saw */
	uint64_t okey;		/* order key of its last event (order.h) */
	struct gsim *gsim;	/* the resumed goroutine left before it was
				 * told apart: what it may be (gorsim.c) */
};

struct recon {
	struct sym *sym;	/* names (not owned) */
	struct view *v;		/* receives frames (not owned) */
	struct fxt_stats *st;	/* counts (not owned) */
	uint64_t base;		/* subtracted from times */
	struct thrtab thr;	/* struct rthread by sym_thread index */
	uint32_t last_tid;	/* get_thread()'s last answer, for last_tid */
	struct rthread *last_rt;	/* (NULL: none yet) */
	struct op *log;		/* the batch being applied */
	uint32_t nlog, caplog;
	int err;
	/* Interned names. */
	uint32_t n_unknown, n_untraced, n_syscall, n_overflow;
	uint32_t s_syscall, s_async, s_begin, s_commit, s_abort;
	uint32_t n_gogo[3], n_gogo_dst[3], n_sched[3], n_goexit[3];
	uint8_t go;		/* gogo was called: events in time order */
	uint64_t gor_ids;	/* rpark.id given so far */
	uint32_t ndeciding;	/* threads holding a resume open */
	struct order order;	/* the events held for that */
};

/*
 * (mt, Go) The resumes other threads of @rt's process hold open since @t
 * or before are decided now, as they stand (recon.c), so that the
 * goroutines they took are seen where they are; with @mine, only those
 * that may have taken one asleep on @rt (before @rt goes on).
 */
void recon_settle(struct recon *r, struct rthread *rt, uint64_t t,
    int mine);
/*
 * (mt) Candidate @idx of @rt is a goroutine that parked on another thread
 * which then slept in the scheduler (findRunnable, stopm: gogo did not
 * jump out there): it parks there now, at the resume's time, that
 * thread's frames above its mcall/morestack ending, and that thread goes
 * on with nothing open, on a track with nothing open (its callers
 * inferred as it returns).  Returns 0 if it is not there any more
 * (recon.c: it flushes the other thread's batch).
 */
int recon_take_asleep(struct recon *r, struct rthread *rt, int idx);
/* @name is one of the three names of @set (0 is none). */
int stack_is_name(uint32_t name, const uint32_t set[3]);
/* A new log entry of @kind, NULL (and r->err) when memory runs out. */
struct op *stack_log_add(struct recon *r, int kind);
/*
 * Replay the log to the view from @start: every frame that begins (not
 * inferred, not inlined) takes a share of @left ns, the k-th of n
 * floor(left / (n - k + 1)); every other entry happens at the time
 * reached so far.  Then forget it.
 */
void stack_log_replay(struct recon *r, struct rthread *rt, uint64_t start,
    uint64_t left);

struct rseg *stack_topseg(struct rthread *rt);
int stack_seg_empty(struct rthread *rt);
/*
 * Push @f.  An inferred frame begins when its segment began; a frame
 * that @share-s takes a share of the batch's time.  The pointer is valid
 * until the next push.  NULL (and r->err) when memory runs out.
 */
struct rframe *stack_push(struct recon *r, struct rthread *rt,
    const struct frame *f, uint32_t fn, int real, int share);
void stack_pop(struct recon *r, struct rthread *rt);
/* End every frame of the current segment from index @k up. */
void stack_pop_to(struct recon *r, struct rthread *rt, uint32_t k);
/* Index of the innermost real frame of the current segment, -1 if none. */
int stack_top_real(struct rthread *rt);
/* The innermost real frame below index @below, -1 if none. */
int stack_real_below(struct rthread *rt, int below);
/*
 * Push the function at (@loc, @addr) and the functions inlined there,
 * entered by the call at @site (0 none).  With FR_INFERRED in @flags the
 * frames begin at the segment start.  Returns the index of the real
 * frame, -1 if out of memory.
 */
int stack_push_loc(struct recon *r, struct rthread *rt, uint32_t loc,
    uint64_t addr, uint32_t flags, uint64_t site);
/* End the innermost real frame of the segment and what is above it. */
void stack_pop_real(struct recon *r, struct rthread *rt);
/* Identity of @loc's function, 0 none (unknown, or named by address). */
uint32_t stack_ident(struct recon *r, uint32_t loc);
/* Frame @x runs function @id (its own, or one it was resumed in). */
int stack_runs(const struct rframe *x, uint32_t id);
/* @addr is known to be inside its function, not at its entry. */
int stack_mid_function(struct recon *r, uint32_t loc, uint64_t addr);
/* @addr is known to be its function's entry. */
int stack_at_entry(struct recon *r, uint32_t loc, uint64_t addr);
/* @loc's innermost function is named one of @set (stack_is_name). */
int stack_loc_named(struct recon *r, uint32_t loc, const uint32_t set[3]);
/* Make the inlined frames above the top real frame match @loc's chain. */
void stack_set_inline(struct recon *r, struct rthread *rt, uint32_t loc);
/*
 * Replace the top real frame by the function at (@loc, @addr); the new
 * frame returns where the old one would have.
 */
void stack_replace_top(struct recon *r, struct rthread *rt, uint32_t loc,
    uint64_t addr);
/*
 * magic-trace's check_current_symbol: execution is in the function of
 * (@loc, @addr).  An empty segment infers it; a different function on
 * top is replaced, when the new one has an identity.
 */
void stack_check_current(struct recon *r, struct rthread *rt, uint32_t loc,
    uint64_t addr);
/* The innermost real frame at or below @from entered by a call that
 * returns to @to, -1 if none. */
int stack_find_site(struct rthread *rt, int from, uint64_t to);
/* The innermost real frame below @below running function @id, -1. */
int stack_find_fn(struct rthread *rt, int below, uint32_t id);
/* Open @rt's window (its start is set when the log is replayed). */
void stack_open_window(struct recon *r, struct rthread *rt, uint64_t create);
/* End every frame and segment of @rt. */
void stack_close_window(struct recon *r, struct rthread *rt);

#endif /* MT_FXT_STACK_H */
