/* SPDX-License-Identifier: MIT */
/*
 * A signal's delivery held until the handler returns (qhold.c says why
 * and how): the blocks the handler runs are logged, then written with
 * the delivery once rt_sigreturn shows where the thread was
 * interrupted.  Each guest thread has its own (struct vst, qthread.h);
 * only that thread touches it.
 */
#ifndef MT_QEMU_QHOLD_H
#define MT_QEMU_QHOLD_H

#include <stddef.h>
#include <stdint.h>

struct qb_blk;
struct vst;

/* A block run while a signal's delivery is held, or (b NULL) the
 * rt_sigreturn system call entered. */
struct held {
	const struct qb_blk *b;	/* the block */
	uint64_t tsc;		/* the clock when it started */
};

/* A signal's delivery whose interrupted address is not known yet
 * (qhold.c, "Signals"). */
struct hold {
	const struct qb_blk *from;	/* the block after which the handler
				 * was entered */
	struct held *log;	/* what ran since, the handler's first block
				 * first; owned */
	size_t n, cap;		/* entries used, allocated */
	int depth;		/* calls the handler made, less returns */
};

/* Blocks held at most: a longer handler gets the FUP at the branch. */
#define QH_MAX	(1u << 16)

/* How a held delivery is written (qh_resolve). */
enum qh_how {
	QH_EXACT,	/* the branch to the interrupted address, FUP there */
	QH_UNKNOWN,	/* FUP at the branch, as if it had not run */
	QH_BRANCH,	/* no delivery: the branch went to the handler */
};

/* A block @v runs after @p starts at @next: when @next is a registered
 * handler's first instruction, start holding and return 1 (the caller
 * logs the handler's block with qh_log, for which there is room), else
 * 0.  Never while the held blocks are being written. */
int qh_start(struct vst *v, const struct qb_blk *p, uint64_t next);

/* Log @b, started at clock @tsc: 0, or -1 when the log is full. */
int qh_log(struct vst *v, const struct qb_blk *b, uint64_t tsc);

/* Write the held delivery as @how says (@at: the interrupted address,
 * for QH_EXACT), then every logged block, each at its own time; the
 * hold ends. */
void qh_resolve(struct vst *v, enum qh_how how, uint64_t at);

/* @b starts while a delivery is held: log it and return 1, or end the
 * hold and return 0 (the caller then steps @b as usual). */
int qh_block(struct vst *v, const struct qb_blk *b);

/* A system call @num starts while a delivery is held: rt_sigreturn is
 * logged (1); any other ends the hold (0: the caller writes its
 * entry). */
int qh_syscall(struct vst *v, int64_t num);

#endif /* MT_QEMU_QHOLD_H */
