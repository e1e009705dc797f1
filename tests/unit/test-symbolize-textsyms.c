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

/* The message of loading @text as a perf map (@kallsyms 0) or kallsyms. */
static const char *
load_msg(const char *text, int kallsyms, int want_rc)
{
	static char msg[128];
	struct sym_textsyms *t = NULL;

	msg[0] = '\0';
	write_file(text);
	CHECK(sym_textsyms_load(&t, path, kallsyms, msg, sizeof(msg)) ==
	    want_rc);
	CHECK(t == NULL);
	sym_textsyms_free(t);
	unlink(path);
	return msg;
}

/* Each line says what is wrong with it; nothing wraps past 2^64. */
static void
malformed_line_says_what(void)
{
	char msg[128];
	struct sym_textsyms *t = NULL;

	CHECK_STR(load_msg("7f0000001000 10\n", 0, -MT_E_SYNTAX),
	    "line 1: missing name");
	CHECK_STR(load_msg("7f0000001000 10", 0, -MT_E_SYNTAX),
	    "line 1: missing name");
	CHECK_STR(load_msg("ffffffffffffffff 0 x\n", 0, -MT_E_SYNTAX),
	    "line 1: bad size");
	CHECK_STR(load_msg("1 0 a\nfffffffffffffff0 10 x\n", 0,
	    -MT_E_SYNTAX), "line 2: bad size");
	CHECK_STR(load_msg("ffffffff81000000\n", 1, -MT_E_SYNTAX),
	    "line 1: bad symbol type");
	CHECK_STR(load_msg("ffffffff81000000 \n", 1, -MT_E_SYNTAX),
	    "line 1: bad symbol type");
	/* The last byte of the address space is a symbol of its own. */
	write_file("fffffffffffffffe 0 last\n");
	CHECK(sym_textsyms_load(&t, path, 0, msg, sizeof(msg)) == 0);
	CHECK(t != NULL && sym_textsyms_find(t, 0xfffffffffffffffe) != NULL);
	sym_textsyms_free(t);
	unlink(path);
}

/* A directory opens but cannot be read: the offset and the reason. */
static void
directory_is_a_read_error(void)
{
	struct sym_textsyms *t = NULL;
	char msg[128] = "";

	CHECK(sym_textsyms_load(&t, "/", 0, msg, sizeof(msg)) == -MT_E_IO);
	CHECK(t == NULL);
	CHECK_STR(msg, "read error at offset 0: Is a directory");
}

int
main(void)
{
	TEST(malformed_line_says_what);
	TEST(directory_is_a_read_error);
	TEST(perf_map_lookup);
	TEST(kallsyms_text_only);
	TEST(malformed_line_is_reported);
	return tap_done();
}
