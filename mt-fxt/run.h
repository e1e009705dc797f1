/* SPDX-License-Identifier: MIT */
/*
 * mt-fxt's work: read the event stream from a descriptor, reconstruct the
 * call stacks and write the chosen format to the output named in the
 * options (a temporary file renamed when complete, or standard output).
 */
#ifndef MT_FXT_RUN_H
#define MT_FXT_RUN_H

#include <stddef.h>

#include "opts.h"
#include "out.h"

/*
 * Run with options @o on input @fd (not closed).  Returns 0, or a
 * negative -MT_E_* code with a one-line reason in @msg (@n bytes), such
 * as "in.events: line 7: field 3: bad address '0x12g'".  @st receives the
 * counts.
 */
int fxt_run(const struct fxt_opts *o, int fd, struct fxt_stats *st,
    char *msg, size_t n);

/*
 * After a run: whether --tid or --between matched nothing in the stream.
 * Returns 1 with a one-line reason in @msg (@n bytes) that names the
 * input, such as "run.events: --tid 4242: no such thread in the stream",
 * else 0 with @msg "".
 */
int fxt_unmatched(const struct fxt_opts *o, const struct fxt_stats *st,
    char *msg, size_t n);

#endif /* MT_FXT_RUN_H */
