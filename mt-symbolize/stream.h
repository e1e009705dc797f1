/* SPDX-License-Identifier: MIT */
/*
 * The filter: reads an event stream, writes it back with file, fn and loc
 * records and one @LOC field per address (docs/formats/events.md), in one
 * pass with constant memory apart from the resolver's caches.
 */
#ifndef MT_SYM_STREAM_H
#define MT_SYM_STREAM_H

#include <stddef.h>

struct sym_dso_opts;

struct sym_stream_opts {
	const char *in;		/* input path, "-" for stdin */
	const char *out;	/* output path, "-" for stdout; a file is
				 * written under a temporary name and renamed
				 * when complete */
	int demangle;		/* 0: --no-demangle */
	int no_lines;		/* 1: --no-lines, written as "info lines 0"
				 * (the resolver's is sym_dso_opts') */
	int no_inline;		/* 1: --no-inline, "info inline 0" */
	const char *const *perf_maps;	/* --perf-map files; not owned */
	size_t nperf_maps;
	const char *kallsyms;	/* --kallsyms file or NULL */
	/* Warnings (one per unusable binary); never NULL. */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	/* Progress lines (common/progress.h) at most every progress_ms
	 * milliseconds, -1 for none; show() writes one (or the sequence
	 * that erases it) to the terminal. */
	int progress_ms;
	void (*show)(void *ctx, const char *text, size_t len);
	void *show_ctx;
};

/*
 * Runs the filter.  Returns 0, or a negative code with a one-line message
 * naming the file (and line) in @msg.
 */
int sym_stream_run(const struct sym_stream_opts *o,
    const struct sym_dso_opts *d, char *msg, size_t msglen);

#endif /* MT_SYM_STREAM_H */
