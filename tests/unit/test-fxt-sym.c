/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-fxt/sym.c's id maps: dense ids (the direct array),
 * sparse and huge ids (the hash), an id that went to the hash before the
 * direct array grew over it, redefinition, and string interning.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "err.h"
#include "events.h"
#include "../../mt-fxt/sym.h"

/* Define fn @fn (named "f<fn>") and loc @id at address @id * 16 on it. */
static int
def_loc(struct sym *s, uint32_t id, uint32_t fn)
{
	struct mt_ev_frame f = { .fn = fn };
	char name[32];

	snprintf(name, sizeof(name), "f%u", fn);
	if (sym_add_fn(s, fn, 0x1000 + fn, name, NULL) < 0)
		return -1;
	return sym_add_loc(s, id, (uint64_t)id * 16, &f, 1);
}

/* Loc @id is at address @id * 16 and its frame names fn @fn. */
static int
loc_ok(struct sym *s, uint32_t id, uint32_t fn)
{
	const struct sym_loc *l = sym_loc(s, id);
	char name[32];
	size_t len;
	const char *p;

	if (l == NULL || l->addr != (uint64_t)id * 16 || l->nframes != 1 ||
	    l->frames[0].fn != fn)
		return 0;
	snprintf(name, sizeof(name), "f%u", fn);
	p = sym_str(s, l->frames[0].name, &len);
	return len == strlen(name) && memcmp(p, name, len) == 0;
}

static void
dense_ids(void)
{
	struct sym *s;
	uint32_t i;
	int ok = 1;

	CHECK(sym_new(&s) == 0);
	for (i = 1; i <= 20000; i++)	/* grows the direct array */
		ok &= def_loc(s, i, i % 300 + 1) == 0;
	CHECK(ok);
	for (i = 1; i <= 20000; i++)
		ok &= loc_ok(s, i, i % 300 + 1);
	CHECK(ok);
	CHECK(sym_loc(s, 0) == NULL);
	CHECK(sym_loc(s, 20001) == NULL);
	CHECK(sym_loc(s, 4095) != NULL);
	sym_free(s);
}

static void
sparse_and_huge_ids(void)
{
	static const uint32_t ids[] = { 4294967295u, 16777216u, 16777215u,
	    1000000u, 123457u, 9u };
	struct sym *s;
	size_t i;

	CHECK(sym_new(&s) == 0);
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		CHECK(def_loc(s, ids[i], (uint32_t)i + 1) == 0);
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		CHECK(loc_ok(s, ids[i], (uint32_t)i + 1));
	CHECK(sym_loc(s, 10) == NULL);
	CHECK(sym_loc(s, 1000001) == NULL);
	CHECK(sym_loc(s, 4294967294u) == NULL);
	sym_free(s);
}

/* 6000 is too far for the first direct array (hash); 1..8000 then grow
 * the array over it: both places must be searched, and a redefinition
 * must replace the entry where it lives. */
static void
hash_then_dense(void)
{
	struct sym *s;
	uint32_t i;
	int ok = 1;

	CHECK(sym_new(&s) == 0);
	CHECK(def_loc(s, 6000, 7) == 0);
	for (i = 1; i <= 8000; i++)
		if (i != 6000)
			ok &= def_loc(s, i, 1) == 0;
	CHECK(ok);
	CHECK(loc_ok(s, 6000, 7));
	CHECK(loc_ok(s, 5999, 1));
	CHECK(loc_ok(s, 6001, 1));
	CHECK(def_loc(s, 6000, 9) == 0);	/* redefined in the hash */
	CHECK(def_loc(s, 5999, 8) == 0);	/* and in the array */
	CHECK(loc_ok(s, 6000, 9));
	CHECK(loc_ok(s, 5999, 8));
	/* Threads: a big tid (hash) and small ones (direct). */
	CHECK(sym_thread(s, 10, 70000) != NULL);
	CHECK(sym_thread(s, 10, 11) != NULL);
	CHECK(sym_thread(s, 10, 70000)->index == 0);
	CHECK(sym_thread(s, 10, 11)->index == 1);
	CHECK(sym_nthreads(s) == 2);
	sym_free(s);
}

static void
strings_interned_once(void)
{
	struct sym *s;
	uint32_t a, b, c;
	size_t len;

	CHECK(sym_new(&s) == 0);
	a = sym_cintern(s, "main");
	b = sym_cintern(s, "cos");
	c = sym_intern(s, "main", 4);
	CHECK(a != 0 && b != 0 && a != b);
	CHECK(a == c);
	CHECK(sym_lookup(s, "cos", 3) == b);
	CHECK(sym_lookup(s, "sin", 3) == 0);
	CHECK(sym_cintern(s, "") == 0);
	CHECK(memcmp(sym_str(s, b, &len), "cos", 3) == 0 && len == 3);
	sym_free(s);
}

int
main(void)
{
	TEST(dense_ids);
	TEST(sparse_and_huge_ids);
	TEST(hash_then_dense);
	TEST(strings_interned_once);
	return tap_done();
}
