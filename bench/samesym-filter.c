// SPDX-License-Identifier: MIT
/*
 * bench/samesym-filter.c: a `perf script --dlfilter` shared object with
 * magic-trace's filtering rule (its src/perf_dlfilter.c): a sample whose source
 * and destination both resolve to a symbol of the same name is dropped
 * (a branch inside one function); every other sample is kept, errors
 * included (they are not samples with two symbols).  bench/run builds it
 * and passes it to the perf column that runs magic-trace's command.
 *
 * Written against perf's documented API, /usr/include/perf/perf_dlfilter.h
 * (perf 5.14 and later): perf fills perf_dlfilter_fns before it calls
 * filter_event_early, which runs before perf's own filtering, as
 * magic-trace's does.
 */
#include <string.h>

#include <perf/perf_dlfilter.h>

struct perf_dlfilter_fns perf_dlfilter_fns;

int filter_event_early(void *data, const struct perf_dlfilter_sample *sample,
    void *ctx);
const char *filter_description(const char **long_description);

int
filter_event_early(void *data, const struct perf_dlfilter_sample *sample,
    void *ctx)
{
	const struct perf_dlfilter_al *src, *dst;

	(void)data;
	(void)sample;
	src = perf_dlfilter_fns.resolve_ip(ctx);
	if (src == NULL || src->sym == NULL)
		return 0;
	dst = perf_dlfilter_fns.resolve_addr(ctx);
	if (dst == NULL || dst->sym == NULL)
		return 0;
	return strcmp(src->sym, dst->sym) == 0;
}

const char *
filter_description(const char **long_description)
{
	if (long_description != NULL)
		*long_description = "drops a branch whose source and "
		    "destination symbols have the same name (magic-trace's rule)";
	return "branches that leave a function";
}
