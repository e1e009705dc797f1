/* SPDX-License-Identifier: MIT */
/*
 * Writer of the Fuchsia trace format (FXT), the binary trace that Perfetto
 * and magic-trace.org open.  Spec:
 * https://fuchsia.dev/fuchsia-src/reference/tracing/trace-format
 * docs/formats/fxt.md lists the subset written here.
 *
 * The writer owns the string and thread tables of the format: callers
 * intern a string once (mt_fxt_str) and a thread once (mt_fxt_thread) and
 * then use the returned handles for ever.  The writer maps handles onto the
 * 32,767 string slots and 255 thread slots of the format, re-registering a
 * handle in a reused slot when the tables are full, so any number of
 * distinct strings and threads can be written.  Records are buffered and
 * handed to a sink in chunks; the writer does no I/O itself.
 *
 * Errors are sticky: event functions return nothing, and mt_fxt_error() or
 * mt_fxt_free() reports the first failure (a sink error or -MT_E_NOMEM).
 */
#ifndef MT_FXT_H
#define MT_FXT_H

#include <stddef.h>
#include <stdint.h>

#define MT_FXT_MAGIC		0x0016547846040010ull	/* first word */
#define MT_FXT_MAX_STRINGS	32767	/* string table slots 1..32767 */
#define MT_FXT_MAX_THREADS	255	/* thread table slots 1..255 */
#define MT_FXT_MAX_STRLEN	32000	/* longer strings are truncated */
#define MT_FXT_MAX_ARGS		15	/* arguments per record */
/* Fewest string slots a writer accepts: one record's refs must fit. */
#define MT_FXT_MIN_STRINGS	(2 * MT_FXT_MAX_ARGS + 3)

/*
 * Takes @n bytes at @p; returns 0, or a negative -MT_E_* code that the
 * writer keeps as its sticky error.
 */
typedef int (*mt_fxt_sink_fn)(void *ctx, const void *p, size_t n);

struct mt_fxt_limits {
	uint32_t max_strings;	/* string slots, MT_FXT_MIN_STRINGS..32767; 0 all */
	uint32_t max_threads;	/* thread slots to use, 1..255 (0: all) */
};

enum mt_fxt_arg_type {
	MT_FXT_ARG_NULL = 0,
	MT_FXT_ARG_INT = 1,	/* signed; written as int32 when it fits */
	MT_FXT_ARG_UINT = 2,	/* unsigned; uint32 when it fits */
	MT_FXT_ARG_DOUBLE = 5,
	MT_FXT_ARG_STR = 6,	/* a string handle */
	MT_FXT_ARG_PTR = 7,
	MT_FXT_ARG_KOID = 8,
	MT_FXT_ARG_BOOL = 9,
};

/* One argument of an event or kernel object. */
struct mt_fxt_arg {
	uint32_t name;			/* string handle of the name */
	enum mt_fxt_arg_type type;	/* which member of the union */
	union {
		int64_t i;		/* INT, BOOL (0 or 1) */
		uint64_t u;		/* UINT, PTR, KOID */
		double d;		/* DOUBLE */
		uint32_t str;		/* STR: string handle */
	} v;
};

enum mt_fxt_kobj_type {
	MT_FXT_KOBJ_PROCESS = 1,
	MT_FXT_KOBJ_THREAD = 2,
};

struct mt_fxt;

/*
 * Start a trace: writes the magic, provider info and section (id 0,
 * @provider, copied) and the initialization record (1e9 ticks per second:
 * one tick is one nanosecond).  @sink gets the bytes, @ctx is passed to it
 * untouched.  @lim may be NULL for the format's limits.
 * Returns 0, -MT_E_INVAL for limits out of range, -MT_E_NOMEM.
 */
int mt_fxt_new(struct mt_fxt **w, mt_fxt_sink_fn sink, void *ctx,
    const struct mt_fxt_limits *lim, const char *provider);
/* Flush, free, and return the sticky error (0 if none).  @w may be NULL. */
int mt_fxt_free(struct mt_fxt *w);
/* Hand the buffered bytes to the sink; returns the sticky error. */
int mt_fxt_flush(struct mt_fxt *w);
/* The sticky error, 0 if none. */
int mt_fxt_error(const struct mt_fxt *w);
/* Bytes produced so far (handed to the sink or buffered). */
uint64_t mt_fxt_bytes(const struct mt_fxt *w);

/*
 * Intern @len bytes at @s (copied; truncated to MT_FXT_MAX_STRLEN at a
 * UTF-8 character boundary) and return its handle, stable for the
 * writer's lifetime.  The empty string is handle 0.  Equal strings get
 * equal handles.  On allocation failure returns 0 and sets the sticky
 * error.  Nothing is written until an event uses the handle.
 */
uint32_t mt_fxt_str(struct mt_fxt *w, const char *s, size_t len);
/* mt_fxt_str() of a NUL-terminated string. */
uint32_t mt_fxt_cstr(struct mt_fxt *w, const char *s);

/*
 * A new thread handle for (process koid, thread koid).  koids must be
 * non-zero and below 2^32 (Perfetto truncates them to 32 bits).  Nothing
 * is written until an event uses the handle.  Returns 0 and sets the
 * sticky error on failure (bad koid, no memory).
 */
uint32_t mt_fxt_thread(struct mt_fxt *w, uint64_t pkoid, uint64_t tkoid);

/*
 * Kernel object naming a process or thread.  @name (@len bytes, copied,
 * truncated like mt_fxt_str) is written inline.  A thread object gets the
 * `process` koid argument Perfetto needs ahead of @args; @pkoid is ignored
 * for a process.  Write it before the thread's first event.
 */
void mt_fxt_kobj(struct mt_fxt *w, enum mt_fxt_kobj_type type, uint64_t koid,
    uint64_t pkoid, const char *name, size_t len,
    const struct mt_fxt_arg *args, unsigned nargs);

/*
 * Events on @thread (a handle) at @ts ticks, category @cat and name @name
 * (string handles), with @nargs (<= MT_FXT_MAX_ARGS; more are dropped)
 * arguments.
 */
void mt_fxt_begin(struct mt_fxt *w, uint32_t thread, uint32_t cat,
    uint32_t name, uint64_t ts, const struct mt_fxt_arg *args,
    unsigned nargs);
void mt_fxt_end(struct mt_fxt *w, uint32_t thread, uint32_t cat,
    uint32_t name, uint64_t ts, const struct mt_fxt_arg *args,
    unsigned nargs);
/* A slice from @ts to @end_ts (>= @ts; an earlier end is raised to @ts). */
void mt_fxt_complete(struct mt_fxt *w, uint32_t thread, uint32_t cat,
    uint32_t name, uint64_t ts, uint64_t end_ts,
    const struct mt_fxt_arg *args, unsigned nargs);
/* A counter sample: each numeric argument is one series of counter @id. */
void mt_fxt_counter(struct mt_fxt *w, uint32_t thread, uint32_t cat,
    uint32_t name, uint64_t ts, uint64_t id, const struct mt_fxt_arg *args,
    unsigned nargs);

#endif /* MT_FXT_H */
