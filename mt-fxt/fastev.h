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
 * Parse the @len bytes at @line (no '\n').  Returns 1 with @ev filled as
 * mt_evr_next() fills it, or 0 (then @ev may be partly written).
 */
int fastev_parse(const char *line, size_t len, struct mt_ev *ev);

#endif /* MT_FXT_FASTEV_H */
