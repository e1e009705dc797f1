/* SPDX-License-Identifier: MIT */
/*
 * The resolver: turns (process, address) into a loc id of the event
 * stream, emitting the file, fn and loc records a new id needs through a
 * callback.  It keeps the processes' mappings (from mod records), opens
 * each binary once (dso.h), and resolves each distinct address once.
 */
#ifndef MT_SYM_RESOLVE_H
#define MT_SYM_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

struct mt_ev;
struct sym_dso_opts;
struct sym_textsyms;
struct sym_res;

/* A perf map and the process it belongs to. */
struct sym_res_map {
	struct sym_textsyms *syms;	/* not owned */
	uint32_t pid;			/* 0: applies to every process */
	const char *path;		/* for fn records' DSO field */
};

struct sym_res_opts {
	const struct sym_dso_opts *dso;	/* where to find files */
	int demangle;			/* 0: keep raw names */
	const struct sym_res_map *maps;	/* perf maps; not owned */
	size_t nmaps;
	struct sym_textsyms *kallsyms;	/* kernel symbols or NULL */
	/* Called once per unusable binary (never NULL). */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	/* Writes a file/fn/loc record; returns 0 or a negative code. */
	int (*emit)(void *ctx, const struct mt_ev *ev);
	void *emit_ctx;
};

/* Counters for the caller (bench, -v). */
struct sym_res_stats {
	uint64_t lookups;	/* sym_res_addr() calls */
	uint64_t resolved;	/* distinct addresses resolved (cache misses) */
	uint64_t unknown;	/* of which nothing was known */
};

/* @o and what it points to must outlive the resolver. */
int sym_res_new(struct sym_res **rp, const struct sym_res_opts *o);
void sym_res_free(struct sym_res *r);

/*
 * Records that @pid maps @path (build-id @build_id, lower-case hex or "")
 * at [@start, @end) from file offset @pgoff, from perf time @time on (0:
 * from the start).  A later mapping hides the earlier ones it overlaps;
 * one with a time over code mapped before it does so only from @time on
 * (resolve.c).  The binary is opened at its first lookup.
 * Returns 0 or -MT_E_NOMEM.
 */
int sym_res_add_mod(struct sym_res *r, uint32_t pid, uint64_t start,
    uint64_t end, uint64_t pgoff, const char *build_id, const char *path,
    uint64_t time);

/*
 * Sets *@loc to the loc id of @addr in @pid at @time (0 for address 0),
 * emitting the records it needs first.  Returns 0, or the emit
 * callback's error, or -MT_E_NOMEM.
 */
int sym_res_addr(struct sym_res *r, uint32_t pid, uint64_t addr,
    uint64_t time, uint32_t *loc);

/*
 * Sets *@ep to the epoch of @pid at @time: two times of one epoch give
 * every address the same mapping (0 when the process has no mapping that
 * replaces another at a time).  Returns 0 or -MT_E_NOMEM.
 */
int sym_res_epoch(struct sym_res *r, uint32_t pid, uint64_t time,
    uint32_t *ep);

void sym_res_stats(const struct sym_res *r, struct sym_res_stats *s);

#endif /* MT_SYM_RESOLVE_H */
