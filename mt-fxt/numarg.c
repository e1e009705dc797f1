/* SPDX-License-Identifier: MIT */
/* Numeric option arguments with unit suffixes (see numarg.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "numarg.h"

struct unit {
	const char *suffix;
	uint64_t mult;
};

static const struct unit time_units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	{ NULL, 0 },
};

static const struct unit size_units[] = {
	{ "k", 1ull << 10 }, { "m", 1ull << 20 }, { "g", 1ull << 30 },
	{ NULL, 0 },
};

int
numarg(const char *s, uint64_t *v, enum numarg_units u)
{
	const struct unit *t = u == NUMARG_TIME ? time_units :
	    u == NUMARG_SIZE ? size_units : NULL;
	char *end;
	uint64_t x;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end == '\0') {
		*v = x;
		return 0;
	}
	for (; t && t->suffix; t++) {
		if (strcasecmp(end, t->suffix) == 0) {
			if (x > UINT64_MAX / t->mult)
				return -1;
			*v = x * t->mult;
			return 0;
		}
	}
	return -1;
}

int
numarg_pair(const char *s, uint64_t *a, uint64_t *b, enum numarg_units u)
{
	const char *comma = strchr(s, ',');
	char first[32];
	size_t n;

	if (comma == NULL)
		return -1;
	n = (size_t)(comma - s);
	if (n >= sizeof(first))
		return -1;
	memcpy(first, s, n);
	first[n] = '\0';
	return numarg(first, a, u) < 0 || numarg(comma + 1, b, u) < 0 ? -1 : 0;
}

int
numarg_list(const char *s, uint32_t *v, size_t max, size_t *n)
{
	char one[16];
	uint64_t x;
	size_t len;

	for (;;) {
		len = strcspn(s, ",");
		if (len == 0 || len >= sizeof(one) || *n == max)
			return -1;
		memcpy(one, s, len);
		one[len] = '\0';
		if (numarg(one, &x, NUMARG_PLAIN) < 0 || x > UINT32_MAX)
			return -1;
		v[(*n)++] = (uint32_t)x;
		if (s[len] == '\0')
			return 0;
		s += len + 1;
	}
}
