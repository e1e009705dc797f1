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
numarg_pair(char *s, uint64_t *a, uint64_t *b, enum numarg_units u)
{
	char *comma = strchr(s, ',');

	if (comma == NULL)
		return -1;
	*comma = '\0';
	return numarg(s, a, u) < 0 || numarg(comma + 1, b, u) < 0 ? -1 : 0;
}
