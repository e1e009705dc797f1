/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-symbolize/fastline.c and the reader hooks it relies
 * on (mt_evr_peek/mt_evr_skip, mt_evw_raw in common/events.c).  The
 * property that makes the fast path safe: whenever sym_fast_parse()
 * accepts a line, reading it with mt_evr_next() and writing it back with
 * mt_evw_write() gives the same bytes and the same fields.  Checked on
 * hand-picked lines and on random mutations of canonical ones.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "err.h"
#include "events.h"
#include "../../mt-symbolize/fastline.h"

/*
 * Read "mt-events 1.0\n@line\n" with the full reader and write the record
 * back; the written line (without '\n') goes to @out.  Returns 1 with a
 * record, 0 when the reader skipped the line or refused it.
 */
static int
reformat(const char *line, char *out, size_t outsz, struct mt_ev *ev)
{
	struct mt_evr *r = NULL;
	struct mt_evw *w = NULL;
	int in[2], o[2], rc, ok = 0;
	const char *hdr = "mt-events 1.0\n";
	char buf[4096];
	ssize_t n;

	if (pipe(in) != 0 || pipe(o) != 0)
		abort();
	if (write(in[1], hdr, strlen(hdr)) < 0 ||
	    write(in[1], line, strlen(line)) < 0 || write(in[1], "\n", 1) < 0)
		abort();
	close(in[1]);
	if (mt_evr_new(&r, in[0], "t") != 0 || mt_evw_new(&w, o[1]) != 0)
		abort();
	rc = mt_evr_next(r, ev);
	if (rc == 0 && mt_evw_write(w, ev) == 0 && mt_evw_flush(w) == 0) {
		close(o[1]);
		o[1] = -1;
		n = read(o[0], buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = '\0';
			/* Skip the header line, drop the last '\n'. */
			snprintf(out, outsz, "%.*s", (int)(n - 15), buf + 14);
			ok = 1;
		}
	}
	mt_evr_free(r);
	mt_evw_free(w);
	close(in[0]);
	close(o[0]);
	if (o[1] >= 0)
		close(o[1]);
	return ok;
}

/* Checks the property on @line; returns what sym_fast_parse() said. */
static int
property(const char *line)
{
	struct sym_fast_ev fe;
	struct mt_ev *ev = calloc(1, sizeof(*ev));
	char out[4096];
	int fast, i, good = 1;

	if (ev == NULL)
		abort();
	fast = sym_fast_parse(line, strlen(line), &fe);
	if (fast) {
		good = reformat(line, out, sizeof(out), ev) &&
		    strcmp(out, line) == 0 && ev->kind == fe.kind &&
		    ev->time == fe.time && ev->tid == fe.tid &&
		    fe.naddr == mt_ev_naddr(ev->kind);
		for (i = 0; good && i < fe.naddr; i++)
			good = ev->addr[i] == fe.addr[i];
		if (!good)
			printf("# accepted but not canonical: '%s'\n", line);
		CHECK(good);
	}
	free(ev);
	return fast;
}

static void
accepts_canonical_lines(void)
{
	static const char *const yes[] = {
		"call 1000 4242 0x401136 0x401020",
		"ret 0 0 0x0 0x0",
		"jmp 18446744073709551 1 0xffffffffffffffff 0x1",
		"br 9999999999999999999 4294967295 0xa 0xb",
		"syscall 5 7 0x7f0000001234 0x0",
		"sysret 5 7 0x0 0x7f0000001236",
		"irq 1 2 0x3 0x4",
		"iret 1 2 0x3 0x4",
		"enable 10 11 0x401000",
		"overflow 10 11 0x0",
		"end 1300 4242",
	};
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!property(yes[i]))
			printf("# refused: '%s'\n", yes[i]);
		CHECK(property(yes[i]));
	}
}

static void
refuses_other_lines(void)
{
	static const char *const no[] = {
		"call  1000 4242 0x401136 0x401020",	/* two spaces */
		"call 1000 4242 0x401136 0x401020 ",	/* trailing space */
		"call 1000 4242 0x401136 0x401020\r",
		"call\t1000 4242 0x401136 0x401020",
		"call 01000 4242 0x401136 0x401020",	/* leading zero */
		"call 1000 04242 0x401136 0x401020",
		"call 1000 4242 0x0401136 0x401020",
		"call 1000 4242 0x00 0x401020",
		"call 1000 4242 0X401136 0x401020",
		"call 1000 4242 0x40113B 0x401020",	/* upper case */
		"call 1000 4242 0x401136 0x401020 @1 @2",
		"call 1000 4242 0x401136 0x401020 extra",
		"call 1000 4242 0x401136",		/* missing */
		"call 1000 4242",
		"call 1000",
		"call",
		"call 1000 4294967296 0x1 0x2",		/* tid too big */
		"call 18446744073709551616 1 0x1 0x2",	/* time too big */
		"call 12345678901234567890 1 0x1 0x2",	/* 20 digits */
		"call 1 2 0x12345678901234567 0x2",	/* 17 digits */
		"call 1 2 0x 0x2",
		"call -1 2 0x1 0x2",
		"disable 1 2 0x401000 syscall",		/* has a string */
		"error 1 2 0x0 4096 no%20memory",
		"trigger 1 2 0x401000 cos",
		"end 1 2 3",
		"calls 1 2 0x1 0x2",
		"info symbolized 1",
		"loc 1 0x401136 1:1:12",
		"# call 1 2 0x1 0x2",
		"",
	};
	size_t i;

	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		if (property(no[i]))
			printf("# accepted: '%s'\n", no[i]);
		CHECK(!property(no[i]));
	}
}

static uint64_t rng = 88172645463325252ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A random number with a random count of significant bits. */
static uint64_t
rnum(int maxbits)
{
	int b = (int)(rnd() % (unsigned)(maxbits + 1));

	return b == 0 ? 0 : rnd() >> (64 - b);
}

static void
random_mutations_keep_the_property(void)
{
	static const enum mt_ev_kind kinds[] = {
		MT_EV_CALL, MT_EV_RET, MT_EV_JMP, MT_EV_BR, MT_EV_SYSCALL,
		MT_EV_SYSRET, MT_EV_IRQ, MT_EV_IRET, MT_EV_ENABLE,
		MT_EV_OVERFLOW, MT_EV_END,
	};
	static const char alphabet[] = " \t\r0123456789abfxX@-AF";
	char line[256];
	int i, accepted = 0, mutated = 0, refused = 0;

	for (i = 0; i < 20000; i++) {
		enum mt_ev_kind k = kinds[rnd() % (sizeof(kinds) /
		    sizeof(kinds[0]))];
		int na = mt_ev_naddr(k), n, pos;

		n = snprintf(line, sizeof(line), "%s %llu %llu",
		    mt_ev_kind_name(k), (unsigned long long)rnum(63),
		    (unsigned long long)rnum(32));
		if (na > 0)
			n += snprintf(line + n, sizeof(line) - (size_t)n,
			    " 0x%llx", (unsigned long long)rnum(64));
		if (na > 1)
			n += snprintf(line + n, sizeof(line) - (size_t)n,
			    " 0x%llx", (unsigned long long)rnum(64));
		if (i % 2 == 0) {
			/* Canonical as written: must be taken. */
			if (property(line))
				accepted++;
			continue;
		}
		pos = (int)(rnd() % (unsigned)n);
		switch (rnd() % 3) {
		case 0:	/* replace */
			line[pos] = alphabet[rnd() % (sizeof(alphabet) - 1)];
			break;
		case 1:	/* insert */
			memmove(line + pos + 1, line + pos, (size_t)(n - pos + 1));
			line[pos] = alphabet[rnd() % (sizeof(alphabet) - 1)];
			break;
		default:	/* delete */
			memmove(line + pos, line + pos + 1, (size_t)(n - pos));
			break;
		}
		mutated++;
		if (!property(line))
			refused++;
	}
	CHECK_EQ_U64(accepted, 10000);
	/* Most mutations break canonical form; some (a digit for a digit)
	 * do not, and those were checked to be canonical above. */
	CHECK(refused > mutated / 2 && refused < mutated);
	printf("# %d of %d mutated lines refused\n", refused, mutated);
}

/* A reader over @text through a temporary file (lines longer than a pipe). */
static struct mt_evr *
reader(const char *text, size_t len, FILE **keep)
{
	struct mt_evr *r;

	*keep = tmpfile();
	if (*keep == NULL || fwrite(text, 1, len, *keep) != len ||
	    fflush(*keep) != 0 || lseek(fileno(*keep), 0, SEEK_SET) != 0 ||
	    mt_evr_new(&r, fileno(*keep), "t") != 0)
		abort();
	return r;
}

static void
peek_skip_and_next_share_the_input(void)
{
	const char *s = "mt-events 1.0\n# note\ncall 1 2 0x3 0x4\n"
	    "thread 7 8 x\nend 9 8";
	struct mt_ev *ev = calloc(1, sizeof(*ev));
	const char *line;
	size_t len;
	FILE *f;
	struct mt_evr *r = reader(s, strlen(s), &f);

	CHECK(ev != NULL);
	/* Before the header: the full reader must run first. */
	CHECK(mt_evr_peek(r, &line, &len) == 1);
	CHECK(mt_evr_next(r, ev) == 0 && ev->kind == MT_EV_CALL);
	CHECK_EQ_U64(mt_evr_lineno(r), 3);
	/* Peeking twice shows the same line and consumes nothing. */
	CHECK(mt_evr_peek(r, &line, &len) == 0);
	CHECK(len == 12 && memcmp(line, "thread 7 8 x", 12) == 0);
	CHECK(mt_evr_peek(r, &line, &len) == 0 && len == 12);
	CHECK_EQ_U64(mt_evr_offset(r), 38);
	/* mt_evr_next() reads the peeked line. */
	CHECK(mt_evr_next(r, ev) == 0 && ev->kind == MT_EV_THREAD &&
	    ev->tid == 8);
	CHECK_EQ_U64(mt_evr_lineno(r), 4);
	/* The last line has no '\n': shown, then skipped. */
	CHECK(mt_evr_peek(r, &line, &len) == 0);
	CHECK(len == 7 && memcmp(line, "end 9 8", 7) == 0);
	mt_evr_skip(r);
	CHECK_EQ_U64(mt_evr_lineno(r), 5);
	CHECK_EQ_U64(mt_evr_offset(r), strlen(s));
	CHECK(mt_evr_peek(r, &line, &len) == 1);
	CHECK(mt_evr_next(r, ev) == MT_EOS);
	mt_evr_free(r);
	fclose(f);
	free(ev);
}

static void
peek_shows_a_line_longer_than_the_read_buffer(void)
{
	size_t big = 600u << 10, n = 0;
	char *s = malloc(big + 64);
	struct mt_ev *ev = calloc(1, sizeof(*ev));
	struct sym_fast_ev fe;
	const char *line;
	size_t len;
	FILE *f;
	struct mt_evr *r;

	if (s == NULL || ev == NULL)
		abort();
	n += (size_t)sprintf(s, "mt-events 1.0\nend 0 1\n");
	n += (size_t)sprintf(s + n, "call 1 2 0x3 0x4 ");
	memset(s + n, 'a', big);
	n += big;
	n += (size_t)sprintf(s + n, "\nend 1 2\n");
	r = reader(s, n, &f);
	CHECK(mt_evr_next(r, ev) == 0 && ev->kind == MT_EV_END);
	/* 600 KiB: more than the reader's 256 KiB buffer, which grows. */
	CHECK(mt_evr_peek(r, &line, &len) == 0);
	CHECK_EQ_U64(len, 17 + big);
	CHECK(!sym_fast_parse(line, len, &fe));	/* a trailing field */
	CHECK(mt_evr_next(r, ev) == 0 && ev->kind == MT_EV_CALL &&
	    ev->addr[1] == 4);
	CHECK(mt_evr_peek(r, &line, &len) == 0);
	CHECK(len == 7 && memcmp(line, "end 1 2", 7) == 0);
	CHECK(sym_fast_parse(line, len, &fe) && fe.kind == MT_EV_END &&
	    fe.tid == 2);
	mt_evr_skip(r);
	CHECK(mt_evr_next(r, ev) == MT_EOS);
	mt_evr_free(r);
	fclose(f);
	free(s);
	free(ev);
}

static void
evw_raw_goes_between_records(void)
{
	struct mt_evw *w;
	struct mt_ev ev = { .kind = MT_EV_END, .time = 5, .tid = 6 };
	int p[2];
	char buf[256];
	ssize_t n;
	static const char want[] = "mt-events 1.2\ncall 1 2 0x3 0x4 @1 @2\n"
	    "end 5 6\n";

	CHECK(pipe(p) == 0);
	CHECK(mt_evw_new(&w, p[1]) == 0);
	CHECK(mt_evw_raw(w, "call 1 2 0x3 0x4", 16) == 0);
	CHECK(mt_evw_raw(w, " @1 @2\n", 7) == 0);
	CHECK(mt_evw_write(w, &ev) == 0);
	CHECK(mt_evw_free(w) == 0);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	CHECK(n == (ssize_t)strlen(want));
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, want);
}

int
main(void)
{
	TEST(accepts_canonical_lines);
	TEST(refuses_other_lines);
	TEST(random_mutations_keep_the_property);
	TEST(peek_skip_and_next_share_the_input);
	TEST(peek_shows_a_line_longer_than_the_read_buffer);
	TEST(evw_raw_goes_between_records);
	return tap_done();
}
