/* SPDX-License-Identifier: MIT */
/*
 * What the decode loop's files share: one run's and one buffer's state
 * (decode.c: the run and its buffers; block.c: a buffer's blocks and
 * events; record.c: the records, threads, runs and switches it writes).
 * Private to those three files.
 */
#ifndef MT_DECBUF_H
#define MT_DECBUF_H

#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

#include "cfg.h"
#include "decode.h"
#include "events.h"
#include "image.h"
#include "snap.h"
#include "threads.h"

/* A branch whose destination is not known yet. */
struct dec_pend {
	uint8_t kind;		/* enum walk_kind; WK_NONE: nothing pending */
	uint8_t leaves;		/* WK_COND: as walk.leaves */
	uint64_t from;		/* the branch instruction */
	uint64_t fall;		/* the instruction after it */
	uint64_t time;		/* its time */
};

/* State shared by all buffers of one run. */
struct dec_run {
	const struct decode_opts *o;
	const struct mt_snap *s;
	struct mt_evw *w;
	struct decode_stats *st;
	struct image_set *is;
	struct walk_cache *wc;
	struct thr_set ts;
	int perf_clock;		/* 1: times are perf ns from TSC */
	uint32_t *seen;		/* tids whose thread record was written */
	size_t nseen;
	/* Parallel decode (parallel.c): a worker's own copies of the
	 * images; NULL: image_set_image_at(). */
	struct pt_image *(*image)(void *arg, uint32_t pid, uint64_t time,
	    uint64_t *next);
	void *image_arg;
	struct decode_progress *prog;	/* NULL: none (and in workers) */
	int cfg;		/* the buffer goes through cfg.h: 1 on
				 * libipt's query decoder, 2 on pq.h */
	int cfg_full;		/* cfg.h gave up: its cache was full */
	int cfg_pq;		/* pq.h refused the trace */
	/* With perf time: the model of libipt's block cache (fill.h) the
	 * cached decoder's buffer uses; NULL: none (relative time) */
	struct fill *fill;
	/* TSC only: the buffers share the run's images, so one model for
	 * all (dec_seq_shared); NULL before the first */
	struct fill *sh_fill;
	int sh_ok;		/* one job: the shared model may be used */
	size_t sh_cached;	/* buffers the cached decoder decoded */
	int sh_off;		/* a buffer went back to libipt: libipt's
				 * block decoder decodes the rest */
	struct image_view *sh_view;	/* the images it decodes them on
					 * (dec_shared_back), or NULL */
};

/*
 * The image of @pid at @time for this run (a worker's copy under -j);
 * *@next: when another image takes over (image_set_image_at()).
 */
static inline struct pt_image *
dec_image(const struct dec_run *r, uint32_t pid, uint64_t time,
    uint64_t *next)
{
	return r->image ? r->image(r->image_arg, pid, time, next) :
	    image_set_image_at(r->is, pid, time, next);
}

/* State of one buffer's decode. */
struct dec_buf {
	struct dec_run *r;
	const struct mt_snap_aux *aux;
	struct pt_block_decoder *dec;	/* libipt's, or NULL with cfg */
	struct cfg_dec *cfg;	/* the cached decoder (cfg.h), or NULL */
	const struct thr_cpu *cpu;	/* per-CPU switch list, or NULL */
	size_t swi;		/* next switch in cpu */
	uint32_t pid, tid;	/* the thread running now */
	uint64_t icount;	/* instructions decoded (relative time) */
	uint64_t walks;		/* blocks of the fast path (dec_walk) */
	uint64_t now;		/* perf ns of the current position */
	uint64_t img_next;	/* now from which the image changes */
	uint64_t last_t;	/* time of the last record written */
	uint64_t last_ip;	/* last instruction decoded */
	uint64_t clk_tsc;	/* TSC dec_clock last converted, if clk_ok */
	int clk_ok;
	size_t trigi;		/* next trigger (index into snapshot) */
	struct dec_pend pend;
	int all;		/* --all-branches (o->all_branches) */
	int tx_abort;		/* the last event was a TSX abort */
	int xol;		/* in a [uprobes] slot: the probed
				 * instruction runs out of line (no record) */
	uint64_t xol_br;	/* in the slot of this probed ret or
				 * indirect branch (written at its end) */
	struct xol_view *xv;	/* its bytes in the slot, or NULL */
	int xol_img;		/* the decoder has xv's image, not img */
	struct pt_image *img;	/* the image dec_set_image gave it */
	uint64_t gap_at;	/* the last event: a trap (FUP + TIP.PGD)
				 * here, maybe a probe's (dec_probe_branch) */
	struct mt_ev ev;	/* dec_emit_str's record (only its fields set) */
	/* A segment of the buffer (-j N, parallel.h); NULL: all of it. */
	const struct dec_unit *u;
	struct dec_unit_res *res;
	size_t tgt;		/* next later segment whose start we look for */
	int in_join;		/* past its first event: stop at the next block */
	int at_self;		/* u->self reported: mark at the next block */
	uint64_t join_off;	/* in_join: decoder offset before the block */
	/* Per-CPU buffers with switches (runs.h): the runs of this buffer,
	 * written to runs->fd; NULL: thread records once per run of mt. */
	struct runs *runs;
	struct run_rec *run;	/* the run being written */
	uint64_t run_last;	/* its last record's time (or its start) */
	int run_ev;		/* it has an event */
	/* Decoded since the last branch or event that took trace (dec_loop) */
	uint64_t nt_insns;	/* instructions */
	uint64_t nt_ip;		/* a block start to meet again (Brent) */
	uint32_t nt_len, nt_pow;	/* blocks since nt_ip; next power of 2 */
	uint64_t nt_off;	/* decoder offset at the last block */
	uint64_t nt_off_insns;	/* instructions decoded since it moved */
	/* The trace's pages behind the decoder, unmapped (dec_drop) */
	uint64_t drop_from;	/* offset from which they are not yet */
	uint64_t drop_next;	/* offset that drops more; 0: not begun */
	uint32_t drop_n;	/* fast-path returns since the last look */
};

/*
 * The block decoder's calls: libipt's, or the cached decoder's (cfg.h),
 * which gives the same blocks and events or CFG_ABORT.
 */
static inline int
dec_next(struct dec_buf *b, struct pt_block *blk)
{
	return b->cfg ? cfg_next(b->cfg, blk) :
	    pt_blk_next(b->dec, blk, sizeof(*blk));
}

static inline int
dec_ev(struct dec_buf *b, struct pt_event *ev)
{
	return b->cfg ? cfg_event(b->cfg, ev) :
	    pt_blk_event(b->dec, ev, sizeof(*ev));
}

static inline void
dec_offset(const struct dec_buf *b, uint64_t *off)
{
	if (b->cfg)
		cfg_get_offset(b->cfg, off);
	else
		pt_blk_get_offset(b->dec, off);
}

static inline uint64_t
dec_tsc_ns(const struct mt_snap_timeconv *tc, uint64_t tsc)
{
	return mt_snap_tsc_to_ns(tc, tsc);
}

static inline uint64_t
dec_time(const struct dec_buf *b, uint64_t idx)
{
	return b->r->perf_clock ? b->now : b->icount + idx;
}


/* dec_stretch: this segment reached the start of a later one. */
#define DEC_JOINED (-1000)
/* dec_stretch: the output could not be written (errno set). */
#define DEC_IOERR (-1001)
/* dec_stretch: code that needs no trace runs in a circle (dec_loop). */
#define DEC_LOOP (-1002)
/* Instructions decoded without taking trace that make a loop certain. */
#define DEC_LOOP_INSNS (1u << 20)
/* Instructions decoded while the trace offset stays that make one so. */
#define DEC_LOOP_STUCK (1u << 24)

/* decode.c */
struct dec_unit;
struct dec_unit_res;
struct runs;
/*
 * Decode buffer @a, or with @u (a -j unit) the segment of it @u
 * describes, results in @res; into runs @runs, or NULL.  Returns 0,
 * CFG_ABORT (the cached decoder gave it back: nothing of it is kept),
 * or -MT_E_*.
 */
int dec_buffer(struct dec_run *r, const struct mt_snap_aux *a,
    const struct dec_unit *u, struct dec_unit_res *res, struct runs *runs);
/* The image of @pid at @time in image view @arg (dec_run.image). */
struct pt_image *dec_view_image(void *arg, uint32_t pid, uint64_t time,
    uint64_t *next);

/* cached.c: the cached decoder's buffers */
/* Buffer @a through the cached decoder, or libipt's when it gives it
 * back; the stream written to r->w. */
int dec_cfg_buffer(struct dec_run *r, const struct mt_snap_aux *a);
/* Unit @u of a -j N worker, likewise, into @w (the unit's file). */
int dec_cfg_unit(struct dec_run *c, const struct dec_unit *u,
    struct dec_unit_res *res, struct mt_evw *w, struct decode_stats *st,
    size_t nseen);
/* TSC only: buffer @i with the model all buffers share. */
int dec_seq_shared(struct dec_run *r, size_t i);
/* TSC only: libipt decodes buffer @i and the rest, its cache first
 * filled as without the cached decoder. */
int dec_shared_back(struct dec_run *r, size_t i);

/* record.c */
int dec_set_image(struct dec_buf *b);
void dec_xol_end(struct dec_buf *b);
void dec_emit(struct dec_buf *b, enum mt_ev_kind k, uint64_t time, uint64_t a0,
    uint64_t a1);
void dec_emit_str(struct dec_buf *b, enum mt_ev_kind k, uint64_t time,
    uint64_t ip, uint64_t num, const char *str);
int dec_thread(struct dec_buf *b);
int dec_run_open(struct dec_buf *b, uint64_t start);
int dec_run_close(struct dec_buf *b, uint64_t t);
void dec_triggers(struct dec_buf *b, uint64_t upto);
void dec_triggers_before_gap(struct dec_buf *b, uint64_t t, uint64_t ip);
int dec_switch(struct dec_buf *b);

/* block.c */
void dec_clock(struct dec_buf *b);
void dec_error(struct dec_buf *b, int st);
void dec_sig_of(struct dec_buf *b, const struct pt_event *ev, struct dec_sig *sig);
int dec_stretch(struct dec_buf *b, int st);

#endif
