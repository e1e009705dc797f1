/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-symbolize/demangle.c: C++ and Rust (legacy and v0)
 * through libiberty, OCaml by hand, @plt/@VERSION suffixes kept.
 */
#include <stdlib.h>

#include "tap.h"
#include "../../mt-symbolize/demangle.h"

static int
is(const char *raw, int ocaml, const char *want)
{
	char *d = sym_demangle(raw, ocaml);
	int ok = want == NULL ? d == NULL : d != NULL && strcmp(d, want) == 0;

	if (!ok)
		printf("# %s -> %s, expected %s\n", raw, d ? d : "(null)",
		    want ? want : "(null)");
	free(d);
	return ok;
}

static void
demangle_cxx(void)
{
	CHECK(is("_ZN2ns6Widget4drawEi", 0, "ns::Widget::draw(int)"));
	CHECK(is("_ZNSt6vectorIiSaIiEE9push_backERKi", 0,
	    "std::vector<int, std::allocator<int> >::push_back(int const&)"));
	CHECK(is("_Z3foov.constprop.0", 0, "foo() [clone .constprop.0]"));
}

static void
demangle_rust_legacy_and_v0(void)
{
	CHECK(is("_ZN7mycrate4util5parse17h0123456789abcdefE", 0,
	    "mycrate::util::parse"));
	CHECK(is("_RNvCs15kBYyAo9fc_7mycrate7example", 0,
	    "mycrate::example"));
	CHECK(is("_RNvNtCs1234_7mycrate3foo3bar", 0, "mycrate::foo::bar"));
}

static void
demangle_keeps_suffixes(void)
{
	CHECK(is("_Z3fooi@plt", 0, "foo(int)@plt"));
	CHECK(is("_ZSt4cout@GLIBCXX_3.4", 0, "std::cout@GLIBCXX_3.4"));
}

static void
demangle_ocaml(void)
{
	CHECK(is("camlStdlib__List__map_123", 1, "Stdlib.List.map_123"));
	CHECK(is("camlFoo$3ebar__baz_7", 1, "Foo>bar.baz_7"));
	CHECK(is("camlStdlib__List__map_123", 0, NULL));
	CHECK(is("caml_alloc", 1, NULL));	/* runtime, not a module */
}

static void
plain_names_are_not_mangled(void)
{
	CHECK(is("main", 1, NULL));
	CHECK(is("__libc_start_main", 1, NULL));
	CHECK(is("_start", 1, NULL));
	CHECK(is("", 1, NULL));
}

int
main(void)
{
	TEST(demangle_cxx);
	TEST(demangle_rust_legacy_and_v0);
	TEST(demangle_keeps_suffixes);
	TEST(demangle_ocaml);
	TEST(plain_names_are_not_mangled);
	return tap_done();
}
