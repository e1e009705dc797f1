/* SPDX-License-Identifier: MIT */
/*
 * mt-decode --info: what a snapshot holds, as text for a person: its
 * chunks, then the key facts (processes, threads, PT buffers, CPU, timing
 * settings, filters, triggers, bundled files).
 */
#ifndef MT_DECODE_INFO_H
#define MT_DECODE_INFO_H

#include <stdio.h>

struct mt_snap;
struct decode_stats;

/* Write the description of @s (read from @name) to @fp.  Returns 0 or -1
 * when writing failed. */
int info_print(FILE *fp, const struct mt_snap *s, const char *name);

/* Write @st as "key: value" lines (mt-decode --stats). */
void info_print_stats(FILE *fp, const struct decode_stats *st);

/* Short name of libipt error @code (a pte_* value), e.g. "nomap". */
const char *info_ipt_errname(int code);

#endif /* MT_DECODE_INFO_H */
