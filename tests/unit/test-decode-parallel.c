/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the stitching of mt-decode -j N (mt-decode/parallel.c):
 * which units of a split buffer are kept and from where (par_stitch: a
 * buffer's first unit from its start, the unit each one joined from its
 * mark, units jumped over dropped, relative-time bases summed), and the
 * time fix-up of a later segment's records (par_shift_line).  The decode
 * side is tested end to end in tests/mt-decode-parallel.bats.
 */
#include <string.h>

#include "tap.h"
#include "../../mt-decode/parallel.h"

static struct dec_unit_res
res(int64_t joined, uint64_t stop, int marked, uint64_t mark)
{
	struct dec_unit_res r;

	memset(&r, 0, sizeof(r));
	r.joined = joined;
	r.stop_icount = stop;
	r.marked = marked;
	r.mark = mark;
	return r;
}

static void
stitch_chain(void)
{
	struct par_stitch ps = { 0, 0, 0 };
	struct dec_unit_res r;
	uint64_t from = 7, base = 7;

	/* buffer A: 4 segments; 0 joins 1, 1 joins 3 (past 2), 3 ends */
	r = res(0, 100, 0, 0);
	CHECK(par_stitch(&ps, 0, 0, &r, 12, &from, &base) == 1);
	CHECK_EQ_U64(from, 12);
	CHECK_EQ_U64(base, 0);
	r = res(1, 50, 1, 300);
	CHECK(par_stitch(&ps, 1, 1, &r, 12, &from, &base) == 2);
	CHECK_EQ_U64(from, 300);
	CHECK_EQ_U64(base, 100);
	r = res(0, 9, 1, 40);
	CHECK(par_stitch(&ps, 2, 2, &r, 12, &from, &base) == 0);
	r = res(-1, 77, 1, 60);
	CHECK(par_stitch(&ps, 3, 3, &r, 12, &from, &base) == 2);
	CHECK_EQ_U64(from, 60);
	CHECK_EQ_U64(base, 150);
	/* buffer B, not split: from its start, base 0 again */
	r = res(-1, 5, 0, 0);
	CHECK(par_stitch(&ps, 4, 0, &r, 12, &from, &base) == 1);
	CHECK_EQ_U64(from, 12);
	CHECK_EQ_U64(base, 0);
}

static void
stitch_end_drops_the_rest(void)
{
	struct par_stitch ps = { 0, 0, 0 };
	struct dec_unit_res r;
	uint64_t from, base;

	/* segment 0 decoded to the end of the buffer: 1 and 2 dropped */
	r = res(-1, 10, 0, 0);
	CHECK(par_stitch(&ps, 0, 0, &r, 12, &from, &base) == 1);
	r = res(0, 10, 1, 30);
	CHECK(par_stitch(&ps, 1, 1, &r, 12, &from, &base) == 0);
	r = res(-1, 10, 1, 30);
	CHECK(par_stitch(&ps, 2, 2, &r, 12, &from, &base) == 0);
	/* a joined unit without a block is dropped with all after it */
	ps.want = 0;
	ps.from_mark = 0;
	r = res(0, 10, 0, 0);
	CHECK(par_stitch(&ps, 0, 0, &r, 12, &from, &base) == 1);
	r = res(-1, 10, 0, 0);
	CHECK(par_stitch(&ps, 1, 1, &r, 12, &from, &base) == 0);
}

static void
shift(const char *in, uint64_t base, const char *want)
{
	char out[256];
	size_t n = par_shift_line(in, strlen(in), base, out);

	out[n] = '\0';
	CHECK_STR(out, want);
}

static void
shift_times(void)
{
	shift("call 5 42 0x401000 0x402000\n", 1000,
	    "call 1005 42 0x401000 0x402000\n");
	shift("end 0 7\n", 18446744073709551000ull,
	    "end 18446744073709551000 7\n");
	shift("ret 99999 1 0x1 0x2\n", 1, "ret 100000 1 0x1 0x2\n");
	/* no time to shift: as it is */
	shift("thread 4242 4242 prog\n", 5, "thread 4242 4242 prog\n");
	shift("info clock relative\n", 5, "info clock relative\n");
	shift("end\n", 5, "end\n");
	/* the last line may lack its newline */
	shift("error 3 0 0x0 17 bad%20packet", 4,
	    "error 7 0 0x0 17 bad%20packet");
}

int
main(void)
{
	TEST(stitch_chain);
	TEST(stitch_end_drops_the_rest);
	TEST(shift_times);
	return tap_done();
}
