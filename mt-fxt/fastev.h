/* SPDX-License-Identifier: MIT */
/*
 * mt-fxt's fast path for the lines that are nearly all of a stream:
 * events without string fields (call, ret, jmp, br, syscall, sysret, irq,
 * iret, enable, overflow, end) and `disable` with one of events.md's
 * reasons, written the plain way, single spaces and an optional @LOC per
 * address.  A line is accepted only when
 * mt_evr_next() would read the very same record from it; anything else
 * (comments, tabs, CR, leading zeros in a tid, upper-case 0X, extra or
 * malformed fields, errors) is left to the full reader of
 * common/events.c, which also gives the error messages.
 */
#ifndef MT_FXT_FASTEV_H
#define MT_FXT_FASTEV_H

#include <stddef.h>

#include "events.h"

/*
 * Parse the line at @line, up to and including its '\n', which must come
 * before @e (the end of the bytes read ahead, mt_evr_ahead()).  Returns
 * the line's length with its '\n', @ev filled as mt_evr_next() fills it;
 * or 0 (then @ev may be partly written): not such a line, or its end not
 * before @e.
 */
size_t fastev_line(const char *line, const char *e, struct mt_ev *ev);

#endif /* MT_FXT_FASTEV_H */
