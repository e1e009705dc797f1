/* SPDX-License-Identifier: MIT */
/*
 * Progress lines: throttling and formatting (see progress.h).  The clock
 * is read once per MT_PROGRESS_STRIDE calls to mt_progress_due(), so a
 * per-event call costs an increment and a compare.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define MT_PROGRESS_STRIDE 4096

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
mt_progress_wanted(int quiet, const char *in)
{
	struct stat st;
	int rc;

	if (quiet || !isatty(STDERR_FILENO))
		return 0;
	if (in == NULL || strcmp(in, "-") == 0)
		rc = fstat(STDIN_FILENO, &st);
	else
		rc = stat(in, &st);
	if (rc == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return 0;
	return 1;
}

unsigned int
mt_progress_interval_ms(void)
{
	const char *e = getenv("MT_PROGRESS_INTERVAL_MS");
	unsigned long v;
	char *end;

	if (e == NULL || *e < '0' || *e > '9')
		return 250;
	errno = 0;
	v = strtoul(e, &end, 10);
	return errno != 0 || *end != '\0' || v > 60000 ? 250 :
	    (unsigned int)v;
}

void
mt_progress_init(struct mt_progress *p, const char *prog, uint64_t total,
		 unsigned int interval_ms)
{
	p->prog = prog;
	p->total = total;
	p->interval_ns = (uint64_t)interval_ms * 1000000u;
	p->last_ns = now_ns();
	p->calls = 0;
	p->shown = 0;
}

int
mt_progress_due(struct mt_progress *p)
{
	uint64_t t;

	if (++p->calls < MT_PROGRESS_STRIDE)
		return 0;
	p->calls = 0;
	t = now_ns();
	if (t - p->last_ns < p->interval_ns)
		return 0;
	p->last_ns = t;
	return 1;
}

static void
size_text(char *buf, size_t size, uint64_t bytes)
{
	if (bytes >= (uint64_t)1 << 30)
		snprintf(buf, size, "%.1f GiB", (double)bytes / (1 << 30));
	else if (bytes >= (uint64_t)1 << 20)
		snprintf(buf, size, "%.1f MiB", (double)bytes / (1 << 20));
	else
		snprintf(buf, size, "%.1f KiB", (double)bytes / (1 << 10));
}

size_t
mt_progress_format(struct mt_progress *p, char *buf, size_t size,
		   uint64_t done, uint64_t count, const char *unit)
{
	char tot[32];
	int n;

	if (size == 0)
		return 0;
	if (p->total) {
		unsigned int pct;

		if (done > p->total)
			done = p->total;
		pct = (unsigned int)(done * 100 / p->total);
		size_text(tot, sizeof(tot), p->total);
		n = snprintf(buf, size, "\r%s: %u%% of %s, %llu %s\033[K",
			     p->prog, pct, tot, (unsigned long long)count,
			     unit);
	} else {
		n = snprintf(buf, size, "\r%s: %llu %s\033[K", p->prog,
			     (unsigned long long)count, unit);
	}
	p->shown = 1;
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

size_t
mt_progress_clear(struct mt_progress *p, char *buf, size_t size)
{
	int n;

	if (!p->shown || size == 0)
		return 0;
	p->shown = 0;
	n = snprintf(buf, size, "\r\033[K");
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}
