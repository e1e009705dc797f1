/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: mt-fxt's whole run (mt-fxt/run.c fxt_run): the event
 * stream reader, symbol definitions, call-stack reconstruction, the view
 * filters and the four output formats, over a hostile event stream.
 *
 * Input layout: one byte of options, then the event stream.  Bits 0-1
 * pick the format (fxt, json, folded, summary); bit 2 sets --max-depth 3;
 * bit 3 --min-duration 10; bit 4 --tid 42; bit 5 --time 0,5000; bit 6
 * --between main,leaf; bit 7 a tiny FXT string and thread table (so slots
 * are reused).  The output goes to a memfd standing in for stdout.
 */
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "../../mt-fxt/run.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct out_ops *const fmts[] = { &out_fxt_ops,
	    &out_json_ops, &out_folded_ops, &out_summary_ops };
	struct fxt_opts o;
	struct fxt_stats st;
	char msg[512];
	int in, out, saved, rc;
	uint8_t b;

	if (size < 1)
		return 0;
	b = data[0];
	memset(&o, 0, sizeof(o));
	o.in = "fuzz";
	o.out = "-";
	o.format = fmts[b & 3];
	o.level = 0;
	o.force = 1;
	o.quiet = 1;
	if (b & 4)
		o.max_depth = 3;
	if (b & 8)
		o.min_duration = 10;
	if (b & 16) {
		o.tids[0] = 42;
		o.ntids = 1;
	}
	if (b & 32) {
		o.have_time = 1;
		o.time_to = 5000;
	}
	if (b & 64) {
		o.between_start = "main";
		o.between_stop = "leaf";
	}
	if (b & 128) {
		o.string_slots = 40;
		o.thread_slots = 2;
	}
	in = fuzz_memfd(data + 1, size - 1);
	out = fuzz_memfd("", 0);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	FUZZ_CHECK(saved >= 0 && dup2(out, STDOUT_FILENO) == STDOUT_FILENO);
	msg[0] = '\0';
	rc = fxt_run(&o, in, &st, msg, sizeof(msg));
	FUZZ_CHECK(dup2(saved, STDOUT_FILENO) == STDOUT_FILENO);
	close(saved);
	close(in);
	close(out);
	FUZZ_CHECK(rc == 0 || rc < 0);
	if (rc < 0)
		FUZZ_CHECK(msg[0] != '\0' && memchr(msg, '\0', sizeof(msg)));
	return 0;
}
