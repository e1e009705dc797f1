/* SPDX-License-Identifier: MIT */
/*
 * Events of a stream whose threads share goroutines (Go), taken in time
 * order across threads (recon.c): the stream may give each thread's
 * events in a run of their own (the software backends do), and a
 * goroutine that parks on one thread and resumes on another is matched
 * only if its park is seen first.  The events are held, up to
 * ORDER_MAX, then handed on sorted by time, stably (a thread's own
 * order kept: the caller gives each event a key no smaller than the
 * thread's last).  Internal to mt-fxt's recon.
 */
#ifndef MT_FXT_ORDER_H
#define MT_FXT_ORDER_H

#include <stdint.h>

/* An event as recon takes it. */
struct oev {
	uint64_t key;		/* order: its time, or the last of its
				 * thread's before it if that is later */
	uint64_t time;		/* as in the stream */
	uint64_t a[2];		/* addresses */
	uint32_t loc[2];	/* loc ids */
	uint32_t tid;
	uint32_t str;		/* sym handle of its string, 0 none */
	uint32_t seq;		/* arrival, within a run of held events */
	uint8_t kind;		/* enum mt_ev_kind */
};

/* Events held at most: then those held are handed on. */
#define ORDER_MAX	(1u << 20)

struct order {
	struct oev *v;
	uint32_t n, cap;
};

/* Hold @e.  Returns 0, or -MT_E_NOMEM. */
int order_add(struct order *o, const struct oev *e);
/*
 * Hand every held event to @take in the order of their keys (equal keys
 * in arrival order), stopping at its first error, which is returned; then none is
 * held.
 */
int order_flush(struct order *o, int (*take)(void *ctx,
    const struct oev *e), void *ctx);
void order_free(struct order *o);

#endif /* MT_FXT_ORDER_H */
