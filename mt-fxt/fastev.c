/* SPDX-License-Identifier: MIT */
/*
 * Fast event-line parser (see fastev.h).  Every rule here is a subset of
 * common/events.c's reader: the same keywords, decimal numbers of at most
 * 19 digits for the time (so no overflow check is needed) and at most 10
 * for the tid and @LOC (checked against UINT32_MAX), "0x" and 1 to 16 hex
 * digits of either case for an address, at most one @LOC per address,
 * and for `disable` one of the reasons events.md lists, written plainly.
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

#define ONES	0x0101010101010101ull
#define HIGHS	0x8080808080808080ull

/*
 * Value of the 1 to 8 decimal digits that start the 8 bytes at @p (@n of
 * them, counted by digits8()), read as one little-endian word: each
 * digit less '0' in its byte, shifted so the digits end the word (the
 * bytes before them are zeros), then pairs, quads and the eight combined
 * by multiplications (no byte overflows: a digit is at most 9).
 */
static inline uint64_t
value8(uint64_t t, unsigned n)
{
	t <<= 8 * (8 - n);
	t = t * 10 + (t >> 8);
	t = ((t & 0x000000ff000000ffull) * (100 + (1000000ull << 32)) +
	    ((t >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32))) >>
	    32;
	return t;
}

/*
 * How many of the 8 bytes of @w (little-endian: the first byte lowest)
 * are decimal digits before the first that is not; *@t gets each byte
 * less '0'.  A byte below '0' borrows from the next one and a byte above
 * '9' carries into it, but only bytes after a non-digit are changed.
 */
static inline unsigned
digits8(uint64_t w, uint64_t *t)
{
	uint64_t x = w - '0' * ONES;
	uint64_t nd = (x | (x + (0x80 - 10) * ONES)) & HIGHS;

	*t = x;
	return nd ? (unsigned)__builtin_ctzll(nd) >> 3 : 8;
}

/*
 * The byte after the first @n (< 8) bytes of @w (the first byte lowest)
 * ends a field: a space or the line's '\n'.
 */
static inline int
field_end(uint64_t w, unsigned n)
{
	unsigned c = (unsigned)(w >> 8 * n) & 0xff;

	return c == ' ' || c == '\n';
}

/*
 * 1 to @maxd decimal digits at p[0..e) ending at a space or the line's
 * '\n' (before @e); returns the byte after them, or NULL.
 */
static inline const char *
decimal(const char *p, const char *e, int maxd, uint64_t *v)
{
	const char *s = p;
	uint64_t x = 0, w, t;
	unsigned d, n;

	if (e - p >= 8) {
		memcpy(&w, p, 8);
		n = digits8(w, &t);
		if (n == 0)
			return NULL;
		x = value8(t, n);
		if (n < 8) {	/* the byte after them is in the word */
			if (!field_end(w, n))	/* (and maxd >= 8) */
				return NULL;
			*v = x;
			return p + n;
		}
		p += 8;
	}
	while (p < e && (d = (unsigned)(*p - '0')) <= 9) {
		x = x * 10 + d;
		p++;
	}
	if (p == s || p - s > maxd || p == e || (*p != ' ' && *p != '\n'))
		return NULL;
	*v = x;
	return p;
}

/*
 * How many of the 8 bytes of @w (the first byte lowest) are hex digits
 * before the first that is not; *@nib gets each byte's digit value.
 * The compares add to the low 7 bits of each byte, so no byte carries
 * into the next; a byte with its top bit set is no digit.
 */
static inline unsigned
hex8(uint64_t w, uint64_t *nib)
{
	uint64_t lo = w & 0x7f * ONES, lc = lo | 0x20 * ONES;
	uint64_t dig = (lo + (0x80 - '0') * ONES) &
	    ~(lo + (0x80 - '9' - 1) * ONES);
	uint64_t let = (lc + (0x80 - 'a') * ONES) &
	    ~(lc + (0x80 - 'f' - 1) * ONES) & HIGHS;
	uint64_t bad = (~(dig | let) | w) & HIGHS;

	*nib = (w & 0x0f * ONES) + (let >> 7) * 9;
	return bad ? (unsigned)__builtin_ctzll(bad) >> 3 : 8;
}

/* Value of the first @n (1 to 8) digits of @nib, the first the highest. */
static inline uint64_t
hexvalue8(uint64_t nib, unsigned n)
{
	uint64_t v = __builtin_bswap64(nib << 8 * (8 - n));

	/* Byte k holds the digit of weight 16^k: pack pairs, quads, all. */
	v = (v | v >> 4) & 0x00ff00ff00ff00ffull;
	v = (v | v >> 8) & 0x0000ffff0000ffffull;
	return (v | v >> 16) & 0xffffffffull;
}

/*
 * "0x" and 1 to 16 hex digits at p[0..e), ending at a space or the
 * line's '\n' (before @e).
 */
static inline const char *
address(const char *p, const char *e, uint64_t *v)
{
	const char *s;
	uint64_t x = 0, w, nib;
	unsigned d, n;

	if (e - p < 3 || p[0] != '0' || p[1] != 'x')
		return NULL;
	s = p += 2;
	while (e - p >= 8 && p - s < 16) {
		memcpy(&w, p, 8);
		n = hex8(w, &nib);
		if (n == 0)
			break;
		x = x << 4 * n | hexvalue8(nib, n);
		if (n < 8) {	/* the byte after them is in the word */
			if (!field_end(w, n))	/* (and at most 16) */
				return NULL;
			*v = x;
			return p + n;
		}
		p += 8;
	}
	while (p < e && p - s <= 16 && (d = hexv[(unsigned char)*p]) != 0) {
		x = x << 4 | (d - 1);
		p++;
	}
	if (p == s || p - s > 16 || p == e || (*p != ' ' && *p != '\n'))
		return NULL;
	*v = x;
	return p;
}

/*
 * The little-endian word of up to 8 characters, as a constant (building
 * it with memcpy at run time made the compiler store the bytes and load
 * the word back, a store-forwarding stall on every line).
 */
#define W8(a, b, c, d, e, f, g, h) \
	((uint64_t)(unsigned char)(a) | (uint64_t)(unsigned char)(b) << 8 | \
	(uint64_t)(unsigned char)(c) << 16 | \
	(uint64_t)(unsigned char)(d) << 24 | \
	(uint64_t)(unsigned char)(e) << 32 | \
	(uint64_t)(unsigned char)(f) << 40 | \
	(uint64_t)(unsigned char)(g) << 48 | (uint64_t)(unsigned char)(h) << 56)
#define KW_CALL		W8('c', 'a', 'l', 'l', ' ', 0, 0, 0)
#define KW_RET		W8('r', 'e', 't', ' ', 0, 0, 0, 0)
#define KW_ENABLE	W8('e', 'n', 'a', 'b', 'l', 'e', ' ', 0)
#define KW_DISABLE	W8('d', 'i', 's', 'a', 'b', 'l', 'e', ' ')
#define KW_JMP		W8('j', 'm', 'p', ' ', 0, 0, 0, 0)

/*
 * The keyword of @line and the space after it, for the kinds a stream is
 * made of; others through mt_ev_kind_lookup().  *@p is set after the
 * space.  MT_EV_NONE: not a plain event line.
 */
static inline enum mt_ev_kind
keyword(const char *line, const char *e, const char **p)
{
	const char *sp;
	uint64_t w;

	if (e - line >= 8) {
		memcpy(&w, line, 8);
		if ((w & 0xffffffffffull) == KW_CALL) {
			*p = line + 5;
			return MT_EV_CALL;
		}
		if ((w & 0xffffffffull) == KW_RET) {
			*p = line + 4;
			return MT_EV_RET;
		}
		if ((w & 0xffffffffffffffull) == KW_ENABLE) {
			*p = line + 7;
			return MT_EV_ENABLE;
		}
		if (w == KW_DISABLE) {
			*p = line + 8;
			return MT_EV_DISABLE;
		}
		if ((w & 0xffffffffull) == KW_JMP) {
			*p = line + 4;
			return MT_EV_JMP;
		}
	}
	sp = memchr(line, ' ', e - line < 9 ? (size_t)(e - line) : 9);
	if (sp == NULL)
		return MT_EV_NONE;
	*p = sp + 1;
	return mt_ev_kind_lookup(line, (size_t)(sp - line));
}

/*
 * The REASON of a disable line at p[0..e), ending at a space or '\n'
 * (before @e): the reader's string for it (the reasons have no
 * %-escapes), else NULL.
 */
static const char *
reason(const char *p, const char *e, const char **next)
{
	static const char *const reasons[] = {
		"filter", "syscall", "async", "uprobe", "other",
	};
	const char *q = p;
	size_t n, i;

	while (q < e && *q != ' ' && *q != '\n')
		q++;
	if (q == e)
		return NULL;
	n = (size_t)(q - p);
	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (strlen(reasons[i]) == n && memcmp(reasons[i], p, n) == 0) {
			*next = q;
			return reasons[i];
		}
	return NULL;
}

size_t
fastev_line(const char *line, const char *e, struct mt_ev *ev)
{
	const char *p = line;
	uint64_t v;
	int i, na;

	ev->kind = keyword(line, e, &p);
	if (!mt_ev_plain(ev->kind) && ev->kind != MT_EV_DISABLE)
		return 0;
	if ((p = decimal(p, e, 19, &ev->time)) == NULL || *p != ' ')
		return 0;
	if ((p = decimal(p + 1, e, 10, &v)) == NULL || v > UINT32_MAX)
		return 0;
	ev->tid = (uint32_t)v;
	ev->addr[0] = ev->addr[1] = 0;
	na = mt_ev_naddr(ev->kind);
	for (i = 0; i < na; i++) {
		if (*p != ' ' || (p = address(p + 1, e, &ev->addr[i])) == NULL)
			return 0;
	}
	ev->str[0] = ev->str[1] = NULL;
	if (ev->kind == MT_EV_DISABLE) {
		if (*p != ' ' || (ev->str[0] = reason(p + 1, e, &p)) == NULL)
			return 0;
	}
	ev->loc[0] = ev->loc[1] = 0;
	/* p is at a space or '\n' (decimal(), address() and reason()). */
	for (i = 0; *p != '\n'; i++) {
		if (i == na || e - p < 3 || p[1] != '@' ||
		    (p = decimal(p + 2, e, 10, &v)) == NULL || v > UINT32_MAX)
			return 0;
		ev->loc[i] = (uint32_t)v;
	}
	ev->pid = ev->id = 0;
	ev->num = 0;
	ev->nframes = 0;
	return (size_t)(p + 1 - line);
}
