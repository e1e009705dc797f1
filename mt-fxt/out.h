/* SPDX-License-Identifier: MIT */
/*
 * Output formats of mt-fxt as a table of hooks: every format (fxt, json,
 * folded, summary) receives the same reconstructed timeline: per thread,
 * segments (a thread's window, or a kernel entry) and frames that begin
 * and end inside them, plus trigger hits.
 *
 * Order guarantees: per thread, events arrive in time order except the
 * begins of outer inferred frames (FR_OUTER), which start at their
 * segment's start time and arrive when they are discovered, later.  Such a
 * frame goes below every frame its segment has held so far: everything
 * the segment held since it started happened inside it.  Segments nest;
 * a segment's start time is the earliest time any of its events carries.
 */
#ifndef MT_FXT_OUT_H
#define MT_FXT_OUT_H

#include <stdint.h>

#include "opts.h"

struct sym;
struct sym_thread;
struct sink;

enum frame_flags {
	FR_INFERRED = 1,	/* start time unknown: begins at the segment start */
	FR_INLINED = 2,		/* an inlined function (from a loc record) */
	FR_SYNTH = 4,		/* [untraced], [syscall], [unknown], markers */
	FR_ERROR = 8,		/* a zero-length [decode error: ...] span */
	FR_OUTER = 16,		/* inferred below the segment's frames so far */
};

/* One frame as shown. */
struct frame {
	uint32_t name;		/* sym string handle */
	uint32_t file;		/* sym string handle of the source file, 0 */
	uint32_t line;		/* 0 unknown */
	uint32_t flags;		/* enum frame_flags */
	uint64_t addr;		/* address argument, 0 none */
};

/* Counts every format can report; filled by the reconstruction and view. */
struct fxt_stats {
	uint64_t events;	/* event records read */
	uint64_t frames;	/* frames begun (before filters) */
	uint64_t errors;	/* decode errors and overflows */
	uint64_t triggers;	/* trigger hits */
	uint64_t inferred;	/* inferred frames */
	uint64_t folded;	/* frames hidden below the depth limit */
	uint64_t dropped;	/* frames dropped by --min-duration */
	uint64_t dropped_ns;	/* time those frames held */
	uint64_t filtered;	/* frames outside --between/--time/--tid */
	uint64_t files;		/* output files written (--max-size) */
	uint64_t written;	/* frame begins, ends and hits output */
	uint64_t tids_seen;	/* bit i: thread --tid entry i is in the
				 * stream */
	uint64_t between_hits;	/* calls of --between START seen */
};

struct out;

struct out_ops {
	const char *name;	/* the --format name */
	int binary;		/* never written to a terminal */
	int (*open)(struct out *o);
	void (*seg_push)(struct out *o, const struct sym_thread *t,
	    uint64_t ts);
	void (*seg_pop)(struct out *o, const struct sym_thread *t,
	    uint64_t ts);
	void (*begin)(struct out *o, const struct sym_thread *t, uint64_t ts,
	    const struct frame *f);
	void (*end)(struct out *o, const struct sym_thread *t, uint64_t ts,
	    const struct frame *f);
	void (*trigger)(struct out *o, const struct sym_thread *t,
	    uint64_t ts, uint64_t ip, uint32_t what);
	/* Bytes of output so far (NULL: the format cannot be split). */
	uint64_t (*size)(struct out *o);
	/* Finish the current file and go on in a new one on @next. */
	int (*split)(struct out *o, struct sink *next);
	/* Write what is left; returns 0 or -MT_E_*. */
	int (*close)(struct out *o, const struct fxt_stats *st);
	void (*free)(struct out *o);
};

/* An output being written. */
struct out {
	const struct out_ops *ops;	/* the format */
	const struct fxt_opts *opts;	/* options (not owned) */
	struct sym *sym;		/* names (not owned) */
	struct sink *sink;		/* bytes go here (not owned) */
	void *priv;			/* the format's state */
	int err;			/* sticky -MT_E_* */
};

extern const struct out_ops out_fxt_ops;
extern const struct out_ops out_json_ops;
extern const struct out_ops out_folded_ops;
extern const struct out_ops out_summary_ops;

/* The format called @name, NULL if none. */
const struct out_ops *out_find(const char *name);

#endif /* MT_FXT_OUT_H */
