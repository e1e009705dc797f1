/* SPDX-License-Identifier: MIT */
/*
 * What the perf.data reader (perfdata.c) and writer (perfdata-write.c)
 * share beyond perfdata.h.  Private to those two files.
 */
#ifndef MT_PERFDATA_INT_H
#define MT_PERFDATA_INT_H

#include <stddef.h>

#define REC_HDR		8
#define NAME_ALIGN	64	/* perf pads header strings to this */
#define BUILD_ID_SIZE_MISC (1u << 15)	/* PERF_RECORD_MISC_BUILD_ID_SIZE */

/*
 * Append a zeroed element to *arrp (of *n elements of @sz), growing the
 * array to powers of two from 16; returns the new slot or NULL.
 */
void *mt_pd_grow(void *arrp, size_t *n, size_t sz);

#endif /* MT_PERFDATA_INT_H */
