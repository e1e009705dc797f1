/* SPDX-License-Identifier: MIT */
/* mt-fxt's options, filled by main.c and read (const) by every module. */
#ifndef MT_FXT_OPTS_H
#define MT_FXT_OPTS_H

#include <stddef.h>
#include <stdint.h>

#define FXT_MAX_TIDS	64	/* --tid list entries */
/* Deepest frame index shown (Perfetto keeps 512 levels per track). */
#define FXT_DEPTH_CAP	500
/*
 * Default gzip level: 2, mt's fastest (SINK_FAST_LEVEL, ISA-L): on mt's
 * FXT about 20% larger than zlib's level 4 in a sixth of its CPU time
 * (bench/RESULTS.md, "Session 9 ... mt-fxt").
 */
#define FXT_GZIP_LEVEL	2

struct out_ops;

struct fxt_opts {
	const char *in;			/* input path, "-" stdin */
	const char *out;		/* output path, "-" stdout */
	const struct out_ops *format;	/* output format */
	int level;			/* gzip level 0..9; -1: by name */
	int force;			/* -f: write binary to a terminal */
	int quiet;			/* -q: no warnings */
	const char *function;		/* --function NAME: latency histogram */
	uint32_t string_slots;		/* FXT string slots (tests), 0 all */
	uint32_t thread_slots;		/* FXT thread slots (tests), 0 all */
	int progress_ms;		/* progress line interval, -1 none */
	/* Shows a progress line or its erasure (main.c: on stderr). */
	void (*show)(const char *text, size_t n);

	/* Filters (issue 12). */
	const char *between_start;	/* --between START,STOP */
	const char *between_stop;
	uint32_t tids[FXT_MAX_TIDS];	/* --tid LIST */
	size_t ntids;
	int have_time;			/* --time FROM,TO given */
	uint64_t time_from, time_to;	/* ns from the window start */
	int have_around;		/* --around-trigger BEFORE,AFTER */
	uint64_t around_before, around_after;	/* ns */
	uint32_t max_depth;		/* --max-depth N, 0 none */
	uint64_t min_duration;		/* --min-duration NS, 0 none */
	uint64_t max_size;		/* --max-size BYTES of one FXT file */
};

#endif /* MT_FXT_OPTS_H */
