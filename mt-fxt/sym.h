/* SPDX-License-Identifier: MIT */
/*
 * mt-fxt's tables of what the event stream defines: interned strings
 * (names, paths), the `fn`, `file` and `loc` records of mt-symbolize, and
 * the processes and threads of `proc` and `thread` records.  Memory grows
 * with the number of distinct definitions, never with the number of events.
 */
#ifndef MT_FXT_SYM_H
#define MT_FXT_SYM_H

#include <stddef.h>
#include <stdint.h>

/* One frame of a loc record, resolved. */
struct sym_frame {
	uint32_t fn;		/* fn id (identity of the function); 0 for code
				 * named by address only, `[unknown @ ...]`:
				 * each address is its own "function" there,
				 * so it identifies nothing */
	uint64_t start;		/* the function's entry, 0 unknown (and for
				 * code named by address only) */
	uint32_t name;		/* string handle of its name */
	uint32_t file;		/* string handle of the source path, 0 none */
	uint32_t line;		/* 0 unknown */
};

/* A loc record: what mt-symbolize knows of one address. */
struct sym_loc {
	uint64_t addr;		/* the address */
	uint32_t nframes;	/* >= 1 */
	const struct sym_frame *frames;	/* outermost first; owned by sym */
};

/* A process or thread as the stream names it. */
struct sym_thread {
	uint32_t tid;		/* real thread id */
	uint32_t pid;		/* real process id, 0 unknown */
	uint32_t comm;		/* string handle: thread name, 0 unknown */
	uint32_t index;		/* 0, 1, 2... in order of creation */
	uint32_t proc;		/* index of its process (sym_proc) */
	uint32_t goroutine;	/* 0 a thread; N: the track of the N-th
				 * goroutine mt-fxt told apart on thread
				 * tid (sym_track), not Go's goroutine id */
};

struct sym_proc {
	uint32_t pid;		/* real pid, 0 unknown */
	uint32_t comm;		/* string handle, 0 unknown */
	uint32_t cmdline;	/* string handle, 0 unknown */
	uint32_t index;		/* 0, 1, 2... */
};

struct sym;

int sym_new(struct sym **s);
void sym_free(struct sym *s);

/*
 * Intern @len bytes (copied); returns a handle >= 1 stable for the
 * table's lifetime, equal for equal strings; 0 for the empty string or
 * when memory runs out (then sym_error() is -MT_E_NOMEM).
 */
uint32_t sym_intern(struct sym *s, const char *p, size_t len);
uint32_t sym_cintern(struct sym *s, const char *p);
/* Existing handle of a string, 0 if never interned. */
uint32_t sym_lookup(const struct sym *s, const char *p, size_t len);
/* Bytes of handle @h (not NUL-terminated); "" for 0. */
const char *sym_str(const struct sym *s, uint32_t h, size_t *len);
/* Handles are below this. */
uint32_t sym_nstr(const struct sym *s);
int sym_error(const struct sym *s);

/* Definitions.  Return 0, -MT_E_NOMEM, or -MT_E_CORRUPT for a loc
 * naming an undefined fn, or a duplicate id. */
int sym_add_file(struct sym *s, uint32_t id, const char *path);
int sym_add_fn(struct sym *s, uint32_t id, uint64_t start, const char *name,
    const char *ifunc);
/*
 * The name handle of the IFUNC that picks the function named by handle
 * @name (the fn record's fifth field: "cos" for __cos_fma), or 0.
 */
uint32_t sym_ifunc_of(const struct sym *s, uint32_t name);
struct mt_ev_frame;
int sym_add_loc(struct sym *s, uint32_t id, uint64_t addr,
    const struct mt_ev_frame *f, uint32_t n);
/* The loc with @id, NULL if unknown (or id 0); valid until sym_add_loc(). */
const struct sym_loc *sym_loc(const struct sym *s, uint32_t id);
/* Handle of "[unknown @ 0xADDR]", interned on first use. */
uint32_t sym_addr_name(struct sym *s, uint64_t addr);

/* Processes and threads.  Later records update earlier ones. */
int sym_add_proc(struct sym *s, uint32_t pid, const char *comm,
    const char *cmdline);
/* The thread @tid, created (with pid @pid, 0 unknown) if new. */
struct sym_thread *sym_thread(struct sym *s, uint32_t pid, uint32_t tid);
/*
 * A new track for the @n-th goroutine mt-fxt tells apart on thread @of
 * (Go, see recon): same tid and process, named "COMM goroutine #N";
 * never returned by sym_thread().  NULL when memory runs out.
 */
struct sym_thread *sym_track(struct sym *s, const struct sym_thread *of,
    uint32_t n);
const struct sym_proc *sym_proc(const struct sym *s, uint32_t index);
/* Threads the stream names; goroutine tracks are not counted. */
uint32_t sym_nthreads(const struct sym *s);
/* Goroutine tracks made (sym_track). */
uint32_t sym_ntracks(const struct sym *s);
const struct sym_thread *sym_thread_at(const struct sym *s, uint32_t index);
/* Give thread @t the name @comm (and its process, if pid was unknown). */
int sym_name_thread(struct sym *s, struct sym_thread *t, uint32_t pid,
    const char *comm);

#endif /* MT_FXT_SYM_H */
