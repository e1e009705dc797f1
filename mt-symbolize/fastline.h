/* SPDX-License-Identifier: MIT */
/*
 * Recognises event lines that are already in canonical form, that is
 * exactly what common/events.c's writer would write for the record they
 * hold (single spaces, no leading zeros, lower-case hex, no trailing or
 * @ fields).  The filter copies such a line through and appends its @
 * fields instead of parsing and formatting it again; anything else takes
 * the full reader.
 */
#ifndef MT_SYM_FASTLINE_H
#define MT_SYM_FASTLINE_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"

struct sym_fast_ev {
	enum mt_ev_kind kind;
	uint64_t time;
	uint32_t tid;
	int naddr;		/* 0, 1 or 2 */
	uint64_t addr[2];
};

/*
 * Returns 1 and fills @e when the @len bytes at @line (no '\n') are a
 * canonical event line without string fields (call, ret, jmp, br,
 * syscall, sysret, irq, iret, enable, overflow, end); 0 otherwise.
 */
int sym_fast_parse(const char *line, size_t len, struct sym_fast_ev *e);

#endif /* MT_SYM_FASTLINE_H */
