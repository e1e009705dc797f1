/* SPDX-License-Identifier: MIT */
/*
 * Progress lines for long decodes and writes.  A program asks
 * mt_progress_due() from its work loop (cheap: it reads the clock only
 * every few thousand calls) and, when it says yes, formats the line with
 * mt_progress_format() and writes it to stderr itself: this module never
 * prints.  The line starts with '\r' and ends with "\033[K" (erase to end
 * of line) so each one overwrites the last on a terminal; a program shows
 * progress only when stderr is a terminal and it was not asked to be
 * quiet, and erases the line with mt_progress_clear() when done.
 */
#ifndef MT_PROGRESS_H
#define MT_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

struct mt_progress {
	const char *prog;	/* program name shown first; not owned */
	uint64_t total;		/* bytes of input in all, 0 if unknown */
	uint64_t last_ns;	/* monotonic time of the last line, 0 none */
	uint64_t interval_ns;	/* at most one line per interval */
	unsigned int calls;	/* calls since the clock was last read */
	int shown;		/* a line is on the terminal */
};

/*
 * Whether a filter reading @in ("-" or NULL: standard input) should show
 * progress: not @quiet, standard error a terminal, and the input not a
 * pipe or socket.  In a pipeline of mt programs on one terminal only the
 * first, which knows how far through its input it is, shows a line;
 * the ones reading its output stay silent instead of overwriting it.
 */
int mt_progress_wanted(int quiet, const char *in);
/*
 * The interval between lines the user asked for: MT_PROGRESS_INTERVAL_MS
 * from the environment, decimal digits 0 to 60000 (0: a line at every
 * check); else, or when it is not set, 250 ms.
 */
unsigned int mt_progress_interval_ms(void);
/* Start: @total input bytes (0 unknown); first line after @interval_ms. */
void mt_progress_init(struct mt_progress *p, const char *prog,
		      uint64_t total, unsigned int interval_ms);
/* Non-zero when a new line is due; call it as often as you like. */
int mt_progress_due(struct mt_progress *p);
/*
 * Format the line into @buf (@size bytes, NUL-terminated, truncated to
 * fit): "\rPROG: 42% of 64.0 MiB, 1234567 events\033[K", or without the
 * share when the total is unknown.  @done is input bytes consumed, @count
 * the number of @unit written.  Marks the line as shown.  Returns the
 * length.
 */
size_t mt_progress_format(struct mt_progress *p, char *buf, size_t size,
			  uint64_t done, uint64_t count, const char *unit);
/*
 * Format the sequence that erases a shown line ("\r\033[K") into @buf;
 * returns its length, 0 when no line was shown.
 */
size_t mt_progress_clear(struct mt_progress *p, char *buf, size_t size);

#endif /* MT_PROGRESS_H */
