/* SPDX-License-Identifier: MIT */
/*
 * Which goroutine gogo resumed, when the returns that tell the parked
 * ones apart come only after it left again (gor.c): the stretch blocked
 * deeper first.  One world per goroutine it may be: each world runs the
 * held events on bare stacks (call sites and functions) of every
 * goroutine parked on the thread (and the candidates parked on others), parking and resuming them at gogo's
 * jumps as the reconstruction does; a world where a return goes back
 * elsewhere than where its frame was called from ends.  When the worlds
 * left all began with the same goroutine, that is the one.  A later
 * resume that could be several goroutines splits a world in as many.
 * Memory: at most GSIM_MAX_WORLDS worlds, each a copy of the parked
 * stacks.  Internal to mt-fxt's recon.
 */
#ifndef MT_FXT_GORSIM_H
#define MT_FXT_GORSIM_H

#include <stdint.h>

struct recon;
struct rthread;
struct bev;

/* Worlds followed at once: past it, the resume is taken as a new one. */
#define GSIM_MAX_WORLDS	16

/*
 * Start following the resume open on @rt: one world per parked
 * goroutine still a candidate, each having run the first @n held
 * events.  Returns as gsim_event(); -MT_E_NOMEM is left in r->err.
 */
int gsim_start(struct recon *r, struct rthread *rt, uint32_t n);
/*
 * Held event @e in every world.  Returns the index of the candidate
 * (gor_candidates) the resume was, once the worlds left agree; GOR_NEW once
 * none is left (or too many); else GOR_WAIT.
 */
int gsim_event(struct recon *r, struct rthread *rt, const struct bev *e);
/*
 * Where the resumed goroutine parked first in the worlds, the call
 * instruction of its mcall/morestack (0: it did not park).
 */
uint64_t gsim_first_park(const struct rthread *rt);
/* Stop following (nothing if not). */
void gsim_stop(struct rthread *rt);

#endif /* MT_FXT_GORSIM_H */
