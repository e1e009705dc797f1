/* SPDX-License-Identifier: MIT */
/*
 * A tiny TAP producer for the unit tests.  Each test is a function
 * returning void that calls CHECK(); tap_run() prints "ok N - name" or
 * "not ok N - name" with the first failing check, then the plan.
 */
#ifndef MT_TAP_H
#define MT_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_failed_;		/* the current test failed */
static int tap_n_;		/* tests run */
static int tap_bad_;		/* tests failed */

#define CHECK(cond) do { \
	if (!(cond) && !tap_failed_) { \
		tap_failed_ = 1; \
		printf("# %s:%d: check failed: %s\n", __FILE__, __LINE__, \
		    #cond); \
	} \
} while (0)

#define CHECK_EQ_U64(a, b) do { \
	unsigned long long a_ = (a), b_ = (b); \
	if (a_ != b_ && !tap_failed_) { \
		tap_failed_ = 1; \
		printf("# %s:%d: %s == %llu, expected %s == %llu\n", \
		    __FILE__, __LINE__, #a, a_, #b, b_); \
	} \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	if ((a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) && \
	    !tap_failed_) { \
		tap_failed_ = 1; \
		printf("# %s:%d: %s == \"%s\", expected \"%s\"\n", \
		    __FILE__, __LINE__, #a, a_ ? a_ : "(null)", \
		    b_ ? b_ : "(null)"); \
	} \
} while (0)

static inline void
tap_run(const char *name, void (*fn)(void))
{
	tap_failed_ = 0;
	fn();
	tap_n_++;
	if (tap_failed_)
		tap_bad_++;
	printf("%sok %d - %s\n", tap_failed_ ? "not " : "", tap_n_, name);
}

#define TEST(fn) tap_run(#fn, fn)

static inline int
tap_done(void)
{
	printf("1..%d\n", tap_n_);
	return tap_bad_ ? 1 : 0;
}

#endif /* MT_TAP_H */
