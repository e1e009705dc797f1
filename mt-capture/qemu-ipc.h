/* SPDX-License-Identifier: MIT */
/*
 * What mt-capture's qemu backend (qemu.c) and its QEMU plugin
 * (qemu/plugin.c) share.  Both map files of one private directory that
 * mt-capture creates (mode 0700) and names to the plugin:
 *
 *   DIR/config   text, written by mt-capture before QEMU starts: one
 *                "key value" per line (see qemu.c, write_config)
 *   DIR/ctl      struct mtq_ctl: snapshot requests, trigger hits, counters
 *   DIR/ring.N   one per guest thread, in the order the plugin made them:
 *                a struct mtq_ring header page, then the PT ring bytes
 *                (config snapshot-size, a power of two)
 *   DIR/maps     a log of the guest's code mappings: per line a clock tick
 *                (0: mapped by QEMU itself) and a /proc/PID/maps line at
 *                guest addresses, appended in one write when a mapping is
 *                first found to hold code (qemu/qmaps.h)
 *   DIR/code     records of the code bytes of translated blocks outside
 *                file mappings (JIT): struct mtq_code, then the bytes
 *   DIR/gt.N     per thread: the ground-truth branch log, when asked for;
 *                all of them together at most config ground-truth-max
 *                bytes (whole lines; ctl's gt_bytes counts them)
 *
 * The files outlive QEMU: a target that dies or is killed still leaves
 * its rings, so mt-capture writes its snapshot all the same.
 *
 * Stopping for a snapshot (no lock on the plugin's hot path):
 *   requester  (mt-capture, or the plugin when a trigger fires)
 *              req += 1
 *   each guest thread, at its next block (or when it returns from a
 *              system call): ends its packets (FUP + TIP.PGD), stores its
 *              ring head, ack = req, then waits until release == ack
 *   a thread inside a system call (state MTQ_T_SYSCALL) has already ended
 *              its packets with TIP.PGD; it parks when it comes back
 *   mt-capture waits until every ring is acked, in a system call or gone,
 *              reads the rings, then sets release = req
 * Every field shared that way is accessed with C11 atomics (sequentially
 * consistent for req, state and ack, so that a thread leaving a system
 * call either sees the request or is waited for).
 */
#ifndef MT_CAPTURE_QEMU_IPC_H
#define MT_CAPTURE_QEMU_IPC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define MTQ_MAGIC	0x4d545131u	/* "MTQ1" */
#define MTQ_MAX_HITS	256		/* hits kept between snapshots */
#define MTQ_MAX_THREADS	4096		/* rings per capture */
#define MTQ_HDR_SIZE	4096		/* ring header page */

/* A trigger hit, as the plugin saw it. */
struct mtq_hit {
	uint64_t tsc;		/* virtual clock when it fired */
	uint32_t tid;		/* guest thread */
	uint32_t trigger;	/* index in the config's trigger lines */
	uint64_t ip;		/* guest address */
};

struct mtq_ctl {
	uint32_t magic;			/* MTQ_MAGIC */
	uint32_t version;		/* 1 */
	_Atomic uint32_t req;		/* snapshot requests so far */
	_Atomic uint32_t release;	/* the last request mt-capture let go */
	_Atomic uint32_t off;		/* 1: record nothing more (detached) */
	_Atomic uint32_t nrings;	/* ring.N files made so far */
	_Atomic uint32_t exited;	/* the guest called exit_group */
	_Atomic uint32_t nhits;		/* hits written (may exceed the array) */
	_Atomic uint64_t insns;		/* instructions of exited threads */
	_Atomic uint64_t blocks;	/* blocks of exited threads */
	_Atomic uint64_t translated;	/* blocks translated */
	_Atomic uint64_t records;	/* block records the plugin holds */
	_Atomic uint64_t odd;		/* block changes the model did not expect */
	_Atomic uint64_t gt_bytes;	/* ground-truth bytes written or
					 * claimed, all threads */
	_Atomic uint32_t gt_full;	/* 1: a line did not fit under the
					 * cap (config ground-truth-max);
					 * none is written any more */
	uint32_t pad;			/* 0 */
	struct mtq_hit hits[MTQ_MAX_HITS];	/* hits[i % MTQ_MAX_HITS] */
	_Atomic uint32_t hit_ready[MTQ_MAX_HITS];	/* seq + 1 once written */
};

/* Thread states (mtq_ring.state). */
enum {
	MTQ_T_NEW = 0,		/* ring made, no block executed yet */
	MTQ_T_RUN,		/* executing guest code */
	MTQ_T_SYSCALL,		/* inside a system call: packets off */
	MTQ_T_EXITED,		/* the thread ended */
};

/* The header page of a ring file. */
struct mtq_ring {
	uint32_t magic;			/* MTQ_MAGIC */
	uint32_t tid;			/* guest thread id */
	uint64_t size;			/* ring bytes after the header */
	_Atomic uint32_t state;		/* MTQ_T_* */
	_Atomic uint32_t ack;		/* the last request it stopped for */
	_Atomic uint64_t head;		/* ring offset one past the newest byte */
	_Atomic uint64_t written;	/* bytes ever written */
	_Atomic uint64_t insns;		/* instructions executed */
	_Atomic uint64_t blocks;	/* blocks executed */
	_Atomic uint64_t tsc;		/* its virtual clock */
};

/* A code record in DIR/code: the header, then len bytes. */
#define MTQ_CODE_MAX	4096	/* bytes of one record, at most */

struct mtq_code {
	uint64_t addr;		/* guest address of the first byte */
	uint32_t len;		/* bytes that follow */
	uint32_t pad;		/* 0 */
	uint64_t since;		/* clock tick from which they are the code
				 * at addr (JIT code written over other
				 * code); 0: always (qemu/qcode.h) */
};

/*
 * Map DIR/@name, @len bytes, read-write and shared; with @create the file
 * is made (mode 0600, it must not exist yet) and sized first.  Returns
 * the mapping, or NULL with errno set.
 */
void *mtq_map(const char *dir, const char *name, size_t len, int create);

#endif /* MT_CAPTURE_QEMU_IPC_H */
