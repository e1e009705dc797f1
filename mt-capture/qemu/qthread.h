/* SPDX-License-Identifier: MIT */
/*
 * A guest thread as the plugin sees it (plugin.c), and what of plugin.c
 * the signal hold (qhold.c) calls back: the ground-truth log, a block's
 * packets as step() writes them, a system call's entry.  Each thread's
 * state is touched by that thread only (QEMU runs guest threads as host
 * threads), except where plugin.c says otherwise.
 */
#ifndef MT_QEMU_QTHREAD_H
#define MT_QEMU_QTHREAD_H

#include <stdint.h>
#include <stdio.h>

#include "emu-pt.h"
#include "qhold.h"
#include "ring.h"

struct qb_blk;
struct mtq_ring;

/* A guest thread (64-byte aligned: tb_exec's fields in one line). */
struct vst {
	/* What tb_exec's common case reads, first. */
	int slow;		/* off, insys, not started, the host clock
				 * or a ground-truth log: tb_exec_full */
	uint32_t seen;		/* the last request it stopped for */
	const struct qb_blk *prev;	/* the block that ran last */
	uint64_t tsc;		/* the clock */
	uint64_t blocks;	/* executed so far */
	uint64_t jit_gen;	/* g_jit_gen when it last looked */
	uint64_t synced;	/* the latest JIT version time it ran */
	struct mt_emu_pt packets;	/* packet generator (its per-block
				 * members first) */
	struct mt_emu_pt *pt;	/* &packets once made; NULL: not traced */
	uint64_t tsc0;		/* the virtual clock at the start */
	uint64_t skipped;	/* ticks the clock jumped (jit_sync) */
	uint64_t insns;		/* instructions so far (host clock) */
	FILE *gt;		/* ground-truth log, or NULL */
	struct mtq_ring *hdr;	/* shared header; the ring follows it */
	struct mt_ring ring;	/* writes into the shared ring */
	int insys;		/* inside a system call: packets off */
	int sigreturn;		/* that system call is rt_sigreturn */
	int off;		/* records nothing */
	int started;		/* its first block ran */
	int idx;		/* ring.N */
	int holding;		/* a delivery is held (hold) */
	int replaying;		/* hold's blocks are being written */
	struct hold hold;	/* the held delivery */
	uint64_t sigact;	/* rt_sigaction's new action, until it
				 * returns */
};

/* The ground-truth log's line KIND FROM TO, when @v writes one. */
void qt_gt(struct vst *v, const char *kind, uint64_t from, uint64_t to);

/* After a change of off, insys, started, gt or holding. */
void qt_set_slow(struct vst *v);

/* The packets of the previous block's end and what is due before @b
 * runs (qt_step), or only what is due once that end is written
 * (qt_step_due). */
void qt_step(struct vst *v, const struct qb_blk *b);
void qt_step_due(struct vst *v, const struct qb_blk *b);

/* The packets of a system call's entry after the block v->prev;
 * @sigreturn: it is rt_sigreturn. */
void qt_sys_enter(struct vst *v, int sigreturn);

/* Count a block change the model did not expect (META
 * qemu-async-changes). */
void qt_odd(void);

/* 1 when the clock is the host's TSC, not the instruction count. */
int qt_host_clock(void);

#endif /* MT_QEMU_QTHREAD_H */
