/* SPDX-License-Identifier: MIT */
/*
 * Fast event-line parser (see fastev.h).  Every rule here is a subset of
 * common/events.c's reader: the same keywords, decimal numbers of at most
 * 19 digits for the time (so no overflow check is needed) and at most 10
 * for the tid and @LOC (checked against UINT32_MAX), "0x" and 1 to 16 hex
 * digits of either case for an address, at most one @LOC per address.
 * tests/unit/test-fxt-fastev.c compares both readers on every line it
 * accepts.
 */
#include <stdint.h>
#include <string.h>

#include "fastev.h"

/* Hex digit value + 1; 0: not a hex digit. */
static const unsigned char hexv[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6,
	['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
	['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14,
	['E'] = 15, ['F'] = 16,
};

/*
 * 1 to @maxd decimal digits at p[0..e) ending at @e or a space; returns
 * the byte after them, or NULL.
 */
static inline const char *
decimal(const char *p, const char *e, int maxd, uint64_t *v)
{
	const char *s = p;
	uint64_t x = 0;
	unsigned d;

	while (p < e && (d = (unsigned)(*p - '0')) <= 9) {
		x = x * 10 + d;
		p++;
	}
	if (p == s || p - s > maxd || (p < e && *p != ' '))
		return NULL;
	*v = x;
	return p;
}

/* "0x" and 1 to 16 hex digits at p[0..e), ending at @e or a space. */
static inline const char *
address(const char *p, const char *e, uint64_t *v)
{
	const char *s;
	uint64_t x = 0;
	unsigned d;

	if (e - p < 3 || p[0] != '0' || p[1] != 'x')
		return NULL;
	s = p += 2;
	while (p < e && (d = hexv[(unsigned char)*p]) != 0) {
		x = x << 4 | (d - 1);
		p++;
	}
	if (p == s || p - s > 16 || (p < e && *p != ' '))
		return NULL;
	*v = x;
	return p;
}

int
fastev_parse(const char *line, size_t len, struct mt_ev *ev)
{
	const char *p, *e = line + len, *sp;
	uint64_t v;
	int i, na;

	sp = memchr(line, ' ', len < 9 ? len : 9);
	if (sp == NULL)
		return 0;
	ev->kind = mt_ev_kind_lookup(line, (size_t)(sp - line));
	if (!mt_ev_plain(ev->kind))
		return 0;
	if ((p = decimal(sp + 1, e, 19, &ev->time)) == NULL || p == e)
		return 0;
	if ((p = decimal(p + 1, e, 10, &v)) == NULL || v > UINT32_MAX)
		return 0;
	ev->tid = (uint32_t)v;
	ev->addr[0] = ev->addr[1] = 0;
	na = mt_ev_naddr(ev->kind);
	for (i = 0; i < na; i++) {
		if (p == e || (p = address(p + 1, e, &ev->addr[i])) == NULL)
			return 0;
	}
	ev->loc[0] = ev->loc[1] = 0;
	for (i = 0; p < e; i++) {
		if (i == na || e - p < 3 || p[1] != '@' ||
		    (p = decimal(p + 2, e, 10, &v)) == NULL || v > UINT32_MAX)
			return 0;
		ev->loc[i] = (uint32_t)v;
	}
	ev->pid = ev->id = 0;
	ev->num = 0;
	ev->str[0] = ev->str[1] = NULL;
	ev->nframes = 0;
	return 1;
}
