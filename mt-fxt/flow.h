/* SPDX-License-Identifier: MIT */
/*
 * The reconstruction's control-flow policies (flow.c): what one event of
 * a batch does to its thread's stack (stack.h), following magic-trace's
 * policies where they hold on real programs (docs/formats/fxt.md,
 * "Call-stack policies").  Internal to mt-fxt's recon: recon.c calls
 * them as it applies a thread's batch.
 */
#ifndef MT_FXT_FLOW_H
#define MT_FXT_FLOW_H

#include <stdint.h>

struct recon;
struct rthread;
struct bev;

/* Apply event @e of @rt's batch at time @ts. */
void flow_apply(struct recon *r, struct rthread *rt, uint64_t ts,
    const struct bev *e);
/*
 * Goroutine @idx of gor_verdict runs from gogo's jump @e: a parked one
 * goes on where its mcall returns (its mcall frame ends); a new one
 * begins with the target (its callers are inferred as it returns).
 */
void flow_go_enter(struct recon *r, struct rthread *rt, int idx,
    const struct bev *e);
/*
 * A decode error or an overflow named @name: it shows as an error frame,
 * and every frame of the thread ends; a new window opens.
 */
void flow_error_reset(struct recon *r, struct rthread *rt, uint32_t name);

#endif /* MT_FXT_FLOW_H */
