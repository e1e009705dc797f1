/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-symbolize/textsyms.c: perf maps and kallsyms, lookups,
 * malformed lines with their line number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tap.h"
#include "err.h"
#include "../../mt-symbolize/textsyms.h"

static char path[64];

static void
write_file(const char *text)
{
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/mt-textsyms.%d", (int)getpid());
	f = fopen(path, "w");
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static void
perf_map_lookup(void)
{
	struct sym_textsyms *t;
	const struct sym_textsym *s;
	char msg[128];

	write_file("7f0000002000 10 second\n7f0000001000 100 LazyCompile:~f a.js:1\n");
	CHECK(sym_textsyms_load(&t, path, 0, msg, sizeof(msg)) == 0);
	if (t == NULL)
		return;
	s = sym_textsyms_find(t, 0x7f0000001050);
	CHECK(s != NULL && strcmp(s->name, "LazyCompile:~f a.js:1") == 0);
	s = sym_textsyms_find(t, 0x7f000000200f);
	CHECK(s != NULL && strcmp(s->name, "second") == 0);
	CHECK(sym_textsyms_find(t, 0x7f0000002010) == NULL);
	CHECK(sym_textsyms_find(t, 0x7f0000000fff) == NULL);
	sym_textsyms_free(t);
	unlink(path);
}

static void
kallsyms_text_only(void)
{
	struct sym_textsyms *t;
	const struct sym_textsym *s;
	char msg[128];

	write_file("ffffffff81000000 T _stext\nffffffff81000100 D data\n"
	    "ffffffff81000200 t helper\t[mod]\n0000000000000000 T hidden\n");
	CHECK(sym_textsyms_load(&t, path, 1, msg, sizeof(msg)) == 0);
	if (t == NULL)
		return;
	s = sym_textsyms_find(t, 0xffffffff81000150);
	CHECK(s != NULL && strcmp(s->name, "_stext") == 0);
	s = sym_textsyms_find(t, 0xffffffff81000250);
	CHECK(s != NULL && strcmp(s->name, "helper") == 0);
	CHECK(sym_textsyms_find(t, 0x10) == NULL);
	sym_textsyms_free(t);
	unlink(path);
}

static void
malformed_line_is_reported(void)
{
	struct sym_textsyms *t;
	char msg[128] = "";

	write_file("7f00 10 ok\n\n7f10 zz bad\n");
	CHECK(sym_textsyms_load(&t, path, 0, msg, sizeof(msg)) ==
	    -MT_E_SYNTAX);
	CHECK(t == NULL);
	CHECK_STR(msg, "line 3: bad size");
	write_file("ffff T\n");
	CHECK(sym_textsyms_load(&t, path, 1, msg, sizeof(msg)) ==
	    -MT_E_SYNTAX);
	CHECK_STR(msg, "line 1: missing name");
	unlink(path);
	CHECK(sym_textsyms_load(&t, path, 1, msg, sizeof(msg)) == -MT_E_SYS);
}

int
main(void)
{
	TEST(perf_map_lookup);
	TEST(kallsyms_text_only);
	TEST(malformed_line_is_reported);
	return tap_done();
}
