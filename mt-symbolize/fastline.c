/* SPDX-License-Identifier: MIT */
/*
 * Canonical event lines (fastline.h).  A line is accepted only when
 * mt_evw_write() of the record mt_evr_next() would read from it gives the
 * same bytes: keyword, one space before each field, decimal numbers
 * without leading zeros (time at most 19 digits, so it always fits a
 * u64; tid at most UINT32_MAX), addresses as "0x" and 1 to 16 lower-case
 * hex digits without leading zeros, nothing after the last address.
 * tests/unit/test-symbolize-fastline.c checks that property.
 */
#include <string.h>

#include "fastline.h"

/* Lower-case hex digit values; 0xff: not one. */
static const unsigned char hexv[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6,
	['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12,
	['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};	/* value + 1; 0: not a digit */

/* Non-zero when all 8 bytes of @x are ASCII digits. */
static inline int
all_digits8(uint64_t x)
{
	return (x & 0xf0f0f0f0f0f0f0f0ull) == 0x3030303030303030ull &&
	    ((x + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) ==
	    0x3030303030303030ull;
}

/* The end of the run of decimal digits at p[0..e), 8 bytes at a time. */
static inline const char *
skip_digits(const char *p, const char *e)
{
	uint64_t x;

	while (e - p >= 8) {
		memcpy(&x, p, 8);
		if (!all_digits8(x))
			break;
		p += 8;
	}
	while (p < e && (unsigned)(*p - '0') <= 9)
		p++;
	return p;
}

/*
 * A canonical decimal of at most @maxd digits at p[0..e); returns the
 * byte after it or NULL.  With @v, its value.
 */
static inline const char *
decimal(const char *p, const char *e, long maxd, uint64_t *v)
{
	const char *q = skip_digits(p, e);
	uint64_t x = 0;

	if (q == p || q - p > maxd || (*p == '0' && q - p > 1))
		return NULL;
	if (v != NULL) {
		for (; p < q; p++)
			x = x * 10 + (uint64_t)(*p - '0');
		*v = x;
	}
	return q;
}

/* A canonical address at p[0..e); returns the byte after it or NULL. */
static inline const char *
address(const char *p, const char *e, uint64_t *v)
{
	const char *s;
	uint64_t x = 0;
	unsigned d;

	if (e - p < 3 || p[0] != '0' || p[1] != 'x')
		return NULL;
	s = p += 2;
	if (*p == '0') {
		*v = 0;
		return p + 1;
	}
	while (p < e && (d = hexv[(unsigned char)*p]) != 0) {
		x = x << 4 | (d - 1);
		p++;
	}
	if (p == s || p - s > 16)
		return NULL;
	*v = x;
	return p;
}

int
sym_fast_parse(const char *line, size_t len, struct sym_fast_ev *e)
{
	const char *p, *end = line + len, *sp;
	uint64_t v;
	int i;

	sp = memchr(line, ' ', len < 9 ? len : 9);
	if (sp == NULL)
		return 0;
	e->kind = mt_ev_kind_lookup(line, (size_t)(sp - line));
	if (!mt_ev_plain(e->kind))
		return 0;
	/* TIME: any canonical u64 of up to 19 digits */
	p = decimal(sp + 1, end, 19, &e->time);
	if (p == NULL || p >= end || *p != ' ')
		return 0;
	p = decimal(p + 1, end, 10, &v);
	if (p == NULL || v > UINT32_MAX)
		return 0;
	e->tid = (uint32_t)v;
	e->naddr = mt_ev_naddr(e->kind);
	for (i = 0; i < e->naddr; i++) {
		if (p >= end || *p != ' ')
			return 0;
		p = address(p + 1, end, &e->addr[i]);
		if (p == NULL)
			return 0;
	}
	return p == end;
}
