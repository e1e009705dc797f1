/* SPDX-License-Identifier: MIT */
/*
 * Test program for mt-symbolize: C functions whose symbols carry Rust
 * mangled names (legacy "_ZN...17h<hash>E" and v0 "_R..."), set with asm
 * labels, so that demangling is checked against addr2line -C without a
 * Rust toolchain.  Built at test time by build-test-programs.
 */
#include <stdio.h>
#include <stdlib.h>

#define RUSTFN(cname, sym) \
	int cname(int) __asm__(sym); \
	__attribute__((noinline)) int cname(int x) { return x * 3 + (x >> 2) - atoi("1"); }

RUSTFN(legacy_a, "_ZN7mycrate4util5parse17h0123456789abcdefE")
RUSTFN(legacy_b, "_ZN4core3fmt9Formatter3pad17hfedcba9876543210E")
RUSTFN(legacy_c, "_ZN68_$LT$alloc..string..String$u20$as$u20$core..fmt..Display$GT$3fmt17h1111222233334444E")
RUSTFN(v0_a, "_RNvCs15kBYyAo9fc_7mycrate7example")
RUSTFN(v0_b, "_RNvNtCs1234_7mycrate3foo3bar")
RUSTFN(v0_c, "_RNvMNtCs1234_7mycrate3fooNtB2_6Parser5parse")
RUSTFN(cxx_a, "_ZN2ns6Widget4drawEi")

int
main(int argc, char **argv)
{
	int v = argc;

	(void)argv;
	v = legacy_a(v) + legacy_b(v) + legacy_c(v) + v0_a(v) + v0_b(v) +
	    v0_c(v) + cxx_a(v);
	printf("%d\n", v);
	return 0;
}
