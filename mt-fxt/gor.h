/* SPDX-License-Identifier: MIT */
/*
 * Go's goroutines (see flow.c, go_switch): a goroutine that parks
 * (runtime.mcall, or morestack into the scheduler) keeps its frames,
 * open on its own track, until gogo resumes it at the return address of
 * that mcall, on its thread or another of the process; which parked
 * goroutine gogo resumes is told by that address and, when several
 * parked there, by the returns that follow (the events are held
 * meanwhile, until the goroutine leaves again; gorsim.c when it leaves
 * before).  Memory per thread: at most
 * GOR_MAX_PARK parked stacks and GOR_MAX_HELD held events.  Internal to
 * mt-fxt's recon.
 */
#ifndef MT_FXT_GOR_H
#define MT_FXT_GOR_H

#include <stdint.h>

struct recon;
struct rthread;
struct bev;
struct rpark;

/* Parked goroutines kept per thread: past it the oldest ends. */
#define GOR_MAX_PARK	1024
/* Events held while a resume is decided: past it, it is forced. */
#define GOR_MAX_HELD	65536

/* gor_verdict: not decided yet; a goroutine not seen parking. */
enum { GOR_WAIT = -2, GOR_NEW = -1 };

/*
 * The goroutine running on @rt leaves at a switch: with @k the index of
 * its runtime.mcall/morestack frame, in the thread's window, it parks
 * (the frames above @k end, the others stay open on its track), unless
 * it is exiting (goexit); otherwise (@k < 0) every frame and the window
 * end.  Then no frame is open on @rt until gor_enter.
 */
void gor_leave(struct recon *r, struct rthread *rt, int k);
/*
 * List the parked goroutines gogo may resume at @addr (the return
 * address of their mcall/morestack call): those parked on @rt, else
 * those parked on another thread of the process, by the batch's time;
 * returns how many.
 */
uint32_t gor_candidates(struct recon *r, struct rthread *rt, uint64_t addr);
/*
 * Candidate @i's parked goroutine (for one below a sleeping thread's
 * scheduler, a view of that thread's frames: gor_enter does not take
 * it), NULL if it resumed meanwhile.
 */
struct rpark *gor_cand_park(struct rthread *rt, uint32_t i);
/*
 * Run the goroutine gor_verdict chose on @rt: candidate @idx gets
 * its frames and track back (returns 1), or (GOR_NEW) a window opens on
 * a track with nothing open (returns 0).
 */
int gor_enter(struct recon *r, struct rthread *rt, int idx);
/* Start holding events: the resume by gogo's jump @e at @ts is open. */
void gor_defer(struct rthread *rt, const struct bev *e, uint64_t ts);
/* Hold event @e at @t.  Returns 0, or -MT_E_NOMEM. */
int gor_hold(struct recon *r, struct rthread *rt, uint64_t t,
    const struct bev *e);
/*
 * What held event @e says of the candidates: a return below the resumed
 * frame keeps those whose frame it returns from was called from there.
 * Returns gor_verdict(), forced at gogo's next jump out.
 */
int gor_watch(struct recon *r, struct rthread *rt, const struct bev *e);
/*
 * The goroutine resumed: GOR_NEW once no candidate is left (one that
 * parked before the trace or on another thread); else GOR_WAIT until
 * @force (gogo's next jump out, the end of the held events), then the one
 * left, or GOR_NEW when several are (never told apart).
 */
int gor_verdict(struct rthread *rt, int force);
/* The candidates no return disagreed with, still parked. */
uint32_t gor_left(struct rthread *rt);
/* @addr is the return address of the call at @site (0: none known). */
int gor_returns_to(uint64_t site, uint64_t addr);
/* End every parked goroutine's frames and window (end of the thread). */
void gor_close(struct recon *r, struct rthread *rt);
/* Free what @rt holds for goroutines. */
void gor_fini(struct rthread *rt);

#endif /* MT_FXT_GOR_H */
