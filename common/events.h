/* SPDX-License-Identifier: MIT */
/*
 * The event stream (docs/formats/events.md): the text that mt-decode
 * writes, mt-symbolize annotates and mt-fxt reads.  One module holds the
 * reader and the writer.
 */
#ifndef MT_EVENTS_H
#define MT_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#define MT_EV_MAGIC	"mt-events"
#define MT_EV_MAJOR	1
#define MT_EV_MINOR	2
#define MT_EV_MAX_FRAMES 64	/* frames in one loc record */

enum mt_ev_kind {
	MT_EV_NONE = 0,
	/* Definitions. */
	MT_EV_INFO,	/* str[0] key, str[1] value */
	MT_EV_PROC,	/* pid, str[0] comm, str[1] cmdline (args joined by ' ') */
	MT_EV_THREAD,	/* pid, tid, str[0] comm */
	MT_EV_MOD,	/* pid, addr[0] start, addr[1] end, num pgoff,
			 * str[0] build-id hex ("" unknown), str[1] path,
			 * time: from when it holds the code there, 0 from
			 * the start (1.2) */
	MT_EV_FILE,	/* id, str[0] path */
	MT_EV_FN,	/* id, addr[0] start, str[0] dso, str[1] name,
			 * str[2] the IFUNC that picks it or NULL (1.1) */
	MT_EV_LOC,	/* id, addr[0], frames[0..nframes) outermost first */
	/* Events: time, tid, then the fields named. */
	MT_EV_CALL,	/* addr[0] from (the call insn), addr[1] to */
	MT_EV_RET,	/* addr[0] from (the ret insn), addr[1] to */
	MT_EV_JMP,	/* jump that leaves a function: from, to */
	MT_EV_BR,	/* taken branch inside a function: from, to */
	MT_EV_SYSCALL,	/* from (the syscall insn), to (0: not traced) */
	MT_EV_SYSRET,	/* from (0: not traced), to */
	MT_EV_IRQ,	/* interrupt/exception: from (next insn), to */
	MT_EV_IRET,	/* from, to */
	MT_EV_DISABLE,	/* addr[0] last ip, str[0] reason */
	MT_EV_ENABLE,	/* addr[0] ip where tracing resumes */
	MT_EV_OVERFLOW,	/* addr[0] ip where tracing resumes (0: unknown) */
	MT_EV_ERROR,	/* addr[0] ip, num trace offset, str[0] message */
	MT_EV_TRIGGER,	/* addr[0] ip, str[0] what */
	MT_EV_TX,	/* TSX: addr[0] ip, str[0] begin, commit or abort (1.1) */
	MT_EV_END,	/* end of this thread's trace (no fields) */
	MT_EV_NKINDS
};

/* Inclusive range of event kinds that carry time and tid. */
#define MT_EV_IS_EVENT(k) ((k) >= MT_EV_CALL && (k) <= MT_EV_END)

struct mt_ev_frame {
	uint32_t fn;		/* fn id */
	uint32_t file;		/* file id, 0 unknown */
	uint32_t line;		/* 0 unknown */
};

/*
 * One record.  Which fields are used depends on kind (see above).  Strings
 * point into the reader's line buffer (decoded) and stay valid until the
 * next mt_evr_next(); the writer encodes them.  NULL and "" are written as
 * "-".
 */
struct mt_ev {
	enum mt_ev_kind kind;
	uint64_t time;		/* ns: events, MOD (1.2) */
	uint32_t pid;
	uint32_t tid;		/* events, THREAD */
	uint32_t id;		/* FILE, FN, LOC */
	uint64_t addr[2];	/* addresses (see kind) */
	uint32_t loc[2];	/* symbolized: loc id of addr[i], 0 none */
	uint64_t num;		/* MOD pgoff, ERROR offset */
	const char *str[3];	/* strings (see kind) */
	uint32_t nframes;	/* LOC */
	struct mt_ev_frame frames[MT_EV_MAX_FRAMES];	/* LOC */
};

/* Number of address fields events of @kind carry (0, 1 or 2). */
int mt_ev_naddr(enum mt_ev_kind kind);
/* Record keyword of @kind, e.g. "call". */
const char *mt_ev_kind_name(enum mt_ev_kind kind);
/* Kind of the record keyword @w (@n bytes, not NUL-terminated);
 * MT_EV_NONE for an unknown one. */
enum mt_ev_kind mt_ev_kind_lookup(const char *w, size_t n);
/* Non-zero for event kinds without string fields: time, tid and
 * addresses only (what the filters' fast paths parse themselves). */
int mt_ev_plain(enum mt_ev_kind kind);
/* Value of the hex digit @c (either case), or -1. */
int mt_ev_hexval(int c);

struct mt_evr;

/*
 * Reader over @fd (not closed).  @name is used in messages (copied).
 * mt_evr_next() returns 0 with a record, MT_EOS at the end of input, or a
 * negative code with mt_evr_errmsg() saying "line N: field F: why" (or
 * "read error at offset N: why" when reading fails).
 * Comment lines and unknown record kinds (newer minor versions) are skipped.
 */
int mt_evr_new(struct mt_evr **r, int fd, const char *name);
void mt_evr_free(struct mt_evr *r);
int mt_evr_next(struct mt_evr *r, struct mt_ev *ev);
const char *mt_evr_errmsg(const struct mt_evr *r);
uint64_t mt_evr_lineno(const struct mt_evr *r);
/* Bytes consumed so far (for progress). */
uint64_t mt_evr_offset(const struct mt_evr *r);
/*
 * For filters that copy lines through unchanged: the next line (without
 * its '\n', possibly a comment or a malformed line), left in place.
 * Returns 0 with *@line, *@len valid until the next call on @r; 1 when
 * there is no line to show (header not read yet, end of input: call
 * mt_evr_next()); or a negative code as mt_evr_next().  Then either
 * mt_evr_skip() consumes the line or mt_evr_next() reads it as usual.
 */
int mt_evr_peek(struct mt_evr *r, const char **line, size_t *len);
/* Consume the line mt_evr_peek() just showed; it counts as a line. */
void mt_evr_skip(struct mt_evr *r);
/*
 * For a caller's own parser of the lines it knows (mt-fxt's plain
 * events): the bytes read ahead, from the next line on, left in place,
 * without looking for the line's end.  Returns 0 with *@p, *@n (> 0)
 * valid until the next call on @r; 1 when there are none (header not
 * read yet, buffer empty: call mt_evr_next(), which reads on).  The
 * caller either parses one whole line there, its '\n' included, and
 * consumes it with mt_evr_take(), or leaves it to mt_evr_next() (a line
 * that does not end in the buffer, or one it does not know).
 */
int mt_evr_ahead(struct mt_evr *r, const char **p, size_t *n);
/* Consume @n bytes shown by mt_evr_ahead(): one line with its '\n'. */
void mt_evr_take(struct mt_evr *r, size_t n);

struct mt_evw;

/*
 * Buffered writer to @fd (not closed).  mt_evw_new() writes the header line.
 * Errors are sticky: check mt_evw_flush()'s result at the end.  Returns 0,
 * or -MT_E_IO with errno set.
 */
int mt_evw_new(struct mt_evw **w, int fd);
int mt_evw_write(struct mt_evw *w, const struct mt_ev *ev);
/*
 * The event record mt_evw_write() writes for @kind at @time on @tid with
 * addresses @a0, @a1 (as many as mt_ev_naddr(@kind) says), no string, no
 * number and no loc ids: the same bytes, without a struct mt_ev and, for
 * mt_ev_plain() kinds, in one pass (the decoder's branches).
 */
int mt_evw_event(struct mt_evw *w, enum mt_ev_kind kind, uint64_t time,
    uint32_t tid, uint64_t a0, uint64_t a1);
/*
 * The record mt_evw_write() writes for a disable, trigger or tx event of
 * @kind at @time on @tid at @a0 with string @str (NULL: none), no loc
 * ids: the same bytes, without a struct mt_ev (the decoder's disables).
 */
int mt_evw_event_str(struct mt_evw *w, enum mt_ev_kind kind, uint64_t time,
    uint32_t tid, uint64_t a0, const char *str);
int mt_evw_comment(struct mt_evw *w, const char *text);
/* @n bytes as they are (a line copied through, with its '\n'). */
int mt_evw_raw(struct mt_evw *w, const char *s, size_t n);
int mt_evw_flush(struct mt_evw *w);
/* Flushes, then frees; returns the flush result.  @w may be NULL. */
int mt_evw_free(struct mt_evw *w);

#endif /* MT_EVENTS_H */
