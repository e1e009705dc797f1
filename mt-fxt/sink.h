/* SPDX-License-Identifier: MIT */
/*
 * Where an output goes: a file written under a temporary name in the same
 * directory and renamed over the final name only when complete, or
 * standard output; optionally gzip-compressed, as one gzip member
 * (docs/formats/fxt.md).
 */
#ifndef MT_FXT_SINK_H
#define MT_FXT_SINK_H

#include <stddef.h>
#include <stdint.h>

struct sink;

/* The level compressed by ISA-L, the fastest (see sink.c). */
#define SINK_FAST_LEVEL	2

/*
 * Open @path ("-" is standard output) for writing, compressed with gzip
 * @level (1..9, zlib's and libdeflate's levels; SINK_FAST_LEVEL ISA-L's)
 * or plain when @level is 0.  Returns 0 or -MT_E_IO / -MT_E_NOMEM with
 * the reason in @msg (@n bytes).
 */
int sink_open(struct sink **s, const char *path, int level, char *msg,
    size_t n);
/* Buffered write; errors are sticky (see sink_close). */
int sink_write(struct sink *s, const void *p, size_t n);
int sink_puts(struct sink *s, const char *str);
int sink_printf(struct sink *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Bytes written before compression. */
uint64_t sink_bytes(const struct sink *s);
/* Adapter for mt_fxt_new(): @ctx is the sink. */
int sink_fxt(void *ctx, const void *p, size_t n);
/* Whether the output is a file written under a temporary name. */
int sink_renamable(const struct sink *s);
/* Rename the final file to @path instead (copied); not for stdout. */
int sink_set_path(struct sink *s, const char *path);
/*
 * Finish: with @commit, flush, close and rename into place; without, drop
 * the temporary file.  Frees @s.  Returns 0, or the first error with its
 * reason in @msg.
 */
int sink_close(struct sink *s, int commit, char *msg, size_t n);

#endif /* MT_FXT_SINK_H */
