/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for common/events.c: every record kind round-trips through
 * the writer and the reader; string escapes; comments, unknown kinds and
 * extra fields; and a line-and-field error for each malformed-line path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "err.h"
#include "events.h"

/* A file descriptor reading @text (through a temporary file). */
static int
text_fd(const char *text)
{
	char path[] = "/tmp/mt-test-ev-XXXXXX";
	int fd = mkstemp(path);
	size_t n = strlen(text);

	if (fd < 0)
		return -1;
	unlink(path);
	if (write(fd, text, n) != (ssize_t)n)
		return close(fd), -1;
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/*
 * Write @evs with the writer and return the text (malloc'd); @plain 1:
 * through mt_evw_event() (kind, time, tid, addresses only), 2: through
 * mt_evw_event_str() (kind, time, tid, the first address, the string).
 */
static char *
write_text_as(const struct mt_ev *evs, int n, int plain)
{
	char path[] = "/tmp/mt-test-ev-XXXXXX";
	int fd = mkstemp(path), i;
	struct mt_evw *w;
	char *buf;
	off_t len;

	unlink(path);
	if (fd < 0 || mt_evw_new(&w, fd) < 0)
		return NULL;
	for (i = 0; i < n; i++)
		if ((plain == 2 ? mt_evw_event_str(w, evs[i].kind,
		    evs[i].time, evs[i].tid, evs[i].addr[0], evs[i].str[0]) :
		    plain ? mt_evw_event(w, evs[i].kind, evs[i].time,
		    evs[i].tid, evs[i].addr[0], evs[i].addr[1]) :
		    mt_evw_write(w, &evs[i])) < 0)
			return NULL;
	if (mt_evw_free(w) < 0)
		return NULL;
	len = lseek(fd, 0, SEEK_CUR);
	buf = calloc(1, (size_t)len + 1);
	if (buf && pread(fd, buf, (size_t)len, 0) != len) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	return buf;
}

/* got equals want; else the first difference is printed as a TAP note */
static int
same_text(const char *got, const char *want)
{
	size_t i;

	if (got == NULL || strcmp(got, want) == 0)
		return got != NULL;
	for (i = 0; got[i] == want[i]; i++)
		;
	printf("# first difference at byte %zu: '%.40s', expected '%.40s'\n",
	    i, got + i, want + i);
	return 0;
}

static char *
write_text(const struct mt_ev *evs, int n)
{
	return write_text_as(evs, n, 0);
}

static const char expected_text[] =
    "mt-events 1.2\n"
    "info clock perf\n"
    "proc 42 demo ./demo%20-x%25\n"
    "thread 42 43 -\n"
    "mod 42 0x400000 0x402000 4096 abcd /usr/bin/demo\n"
    "mod 42 0x7f0000000000 0x7f0000001000 0 - /lib/b.so 900\n"
    "file 1 /src/a%20b.c\n"
    "fn 7 0x401120 /usr/bin/demo %2D\n"
    "fn 9 0x7f0000070ad0 /usr/lib/libm.so.6 __cos_fma cos\n"
    "loc 3 0x401136 7:1:12 8:0:0\n"
    "call 1000 43 0x401136 0x401020 @3 @0\n"
    "ret 1100 43 0x7f0000001290 0x40113b\n"
    "disable 1200 43 0x401200 syscall\n"
    "error 1300 43 0x0 4096 no%20map\n"
    "trigger 1400 43 0xffffffffffffffff libm.so.6:cos\n"
    "tx 1450 43 0x401210 abort @5\n"
    "end 1500 43\n";

static void
roundtrip_every_kind(void)
{
	struct mt_ev evs[16];
	struct mt_ev ev;
	struct mt_evr *r;
	char *text;
	int fd, i = 0, rc;

	memset(evs, 0, sizeof(evs));
	evs[i].kind = MT_EV_INFO;
	evs[i].str[0] = "clock";
	evs[i++].str[1] = "perf";
	evs[i].kind = MT_EV_PROC;
	evs[i].pid = 42;
	evs[i].str[0] = "demo";
	evs[i++].str[1] = "./demo -x%";
	evs[i].kind = MT_EV_THREAD;
	evs[i].pid = 42;
	evs[i++].tid = 43;
	evs[i].kind = MT_EV_MOD;
	evs[i].pid = 42;
	evs[i].addr[0] = 0x400000;
	evs[i].addr[1] = 0x402000;
	evs[i].num = 4096;
	evs[i].str[0] = "abcd";
	evs[i++].str[1] = "/usr/bin/demo";
	evs[i].kind = MT_EV_MOD;	/* mapped at a time (1.2) */
	evs[i].pid = 42;
	evs[i].addr[0] = 0x7f0000000000;
	evs[i].addr[1] = 0x7f0000001000;
	evs[i].str[0] = "";
	evs[i].str[1] = "/lib/b.so";
	evs[i++].time = 900;
	evs[i].kind = MT_EV_FILE;
	evs[i].id = 1;
	evs[i++].str[0] = "/src/a b.c";
	evs[i].kind = MT_EV_FN;
	evs[i].id = 7;
	evs[i].addr[0] = 0x401120;
	evs[i].str[0] = "/usr/bin/demo";
	evs[i++].str[1] = "-";
	evs[i].kind = MT_EV_FN;		/* an IFUNC's implementation (1.1) */
	evs[i].id = 9;
	evs[i].addr[0] = 0x7f0000070ad0;
	evs[i].str[0] = "/usr/lib/libm.so.6";
	evs[i].str[1] = "__cos_fma";
	evs[i++].str[2] = "cos";
	evs[i].kind = MT_EV_LOC;
	evs[i].id = 3;
	evs[i].addr[0] = 0x401136;
	evs[i].nframes = 2;
	evs[i].frames[0] = (struct mt_ev_frame){ 7, 1, 12 };
	evs[i++].frames[1] = (struct mt_ev_frame){ 8, 0, 0 };
	evs[i].kind = MT_EV_CALL;
	evs[i].time = 1000;
	evs[i].tid = 43;
	evs[i].addr[0] = 0x401136;
	evs[i].addr[1] = 0x401020;
	evs[i++].loc[0] = 3;
	evs[i].kind = MT_EV_RET;
	evs[i].time = 1100;
	evs[i].tid = 43;
	evs[i].addr[0] = 0x7f0000001290;
	evs[i++].addr[1] = 0x40113b;
	evs[i].kind = MT_EV_DISABLE;
	evs[i].time = 1200;
	evs[i].tid = 43;
	evs[i].addr[0] = 0x401200;
	evs[i++].str[0] = "syscall";
	evs[i].kind = MT_EV_ERROR;
	evs[i].time = 1300;
	evs[i].tid = 43;
	evs[i].num = 4096;
	evs[i++].str[0] = "no map";
	evs[i].kind = MT_EV_TRIGGER;
	evs[i].time = 1400;
	evs[i].tid = 43;
	evs[i].addr[0] = UINT64_MAX;
	evs[i++].str[0] = "libm.so.6:cos";
	evs[i].kind = MT_EV_TX;
	evs[i].time = 1450;
	evs[i].tid = 43;
	evs[i].addr[0] = 0x401210;
	evs[i].loc[0] = 5;
	evs[i++].str[0] = "abort";
	evs[i].kind = MT_EV_END;
	evs[i].time = 1500;
	evs[i++].tid = 43;

	text = write_text(evs, i);
	CHECK_STR(text, expected_text);
	fd = text_fd(expected_text);
	CHECK(mt_evr_new(&r, fd, "t") == 0);
	for (int k = 0; k < i; k++) {
		rc = mt_evr_next(r, &ev);
		CHECK(rc == 0);
		if (rc != 0)
			break;
		CHECK_EQ_U64(ev.kind, evs[k].kind);
		CHECK_EQ_U64(ev.time, evs[k].time);
		CHECK_EQ_U64(ev.tid, evs[k].tid);
		CHECK_EQ_U64(ev.pid, evs[k].pid);
		CHECK_EQ_U64(ev.id, evs[k].id);
		CHECK_EQ_U64(ev.addr[0], evs[k].addr[0]);
		CHECK_EQ_U64(ev.addr[1], evs[k].addr[1]);
		CHECK_EQ_U64(ev.loc[0], evs[k].loc[0]);
		CHECK_EQ_U64(ev.num, evs[k].num);
		CHECK_EQ_U64(ev.nframes, evs[k].nframes);
		if (evs[k].str[0])
			CHECK_STR(ev.str[0], evs[k].str[0]);
		if (evs[k].str[1])
			CHECK_STR(ev.str[1], evs[k].str[1]);
		if (evs[k].kind == MT_EV_FN && evs[k].str[2])
			CHECK_STR(ev.str[2], evs[k].str[2]);
		else if (evs[k].kind == MT_EV_FN)
			CHECK(ev.str[2] == NULL);
		if (ev.nframes == 2)
			CHECK(ev.frames[0].fn == 7 && ev.frames[0].line == 12 &&
			    ev.frames[1].fn == 8);
	}
	CHECK(mt_evr_next(r, &ev) == MT_EOS);
	CHECK_EQ_U64(mt_evr_lineno(r), 17);
	mt_evr_free(r);
	close(fd);
	free(text);
}

static void
skips_comments_unknown_kinds_extra_fields(void)
{
	struct mt_evr *r;
	struct mt_ev ev;
	int fd = text_fd("mt-events 1.3\r\n# hello\n\n"
	    "newkind 1 2 3\n"
	    "call 5 6 0x1 0x2 extra @4 @5\n");

	CHECK(mt_evr_new(&r, fd, "t") == 0);
	CHECK(mt_evr_next(r, &ev) == 0);
	CHECK(ev.kind == MT_EV_CALL && ev.time == 5 && ev.tid == 6);
	CHECK(ev.loc[0] == 4 && ev.loc[1] == 5);
	CHECK(mt_evr_next(r, &ev) == MT_EOS);
	mt_evr_free(r);
	close(fd);
}

/* Feed @text and expect an error whose message is @msg. */
static int
bad(const char *text, int want_rc, const char *msg)
{
	struct mt_evr *r;
	struct mt_ev ev;
	int fd = text_fd(text), rc, ok;

	if (mt_evr_new(&r, fd, "t") < 0)
		return 0;
	while ((rc = mt_evr_next(r, &ev)) == 0)
		;
	ok = rc == want_rc && strcmp(mt_evr_errmsg(r), msg) == 0;
	if (!ok)
		printf("# got %d '%s', want %d '%s'\n", rc, mt_evr_errmsg(r),
		    want_rc, msg);
	mt_evr_free(r);
	close(fd);
	return ok;
}

static void
malformed_lines_name_line_and_field(void)
{
	CHECK(bad("", -MT_E_TRUNC, "line 1: empty input: no 'mt-events' "
	    "header"));
	CHECK(bad("hello\n", -MT_E_MAGIC, "line 1: not an mt event stream "
	    "(expected 'mt-events 1.2')"));
	CHECK(bad("mt-events 2.0\n", -MT_E_VERSION, "line 1: field 1: "
	    "unsupported event stream version 2.0 (this reader: 1.x)"));
	CHECK(bad("mt-events x\n", -MT_E_SYNTAX, "line 1: field 1: bad "
	    "version 'x'"));
	CHECK(bad("mt-events 1.0\ncall 1 2 0x1\n", -MT_E_SYNTAX,
	    "line 2: field 4: missing address field"));
	CHECK(bad("mt-events 1.0\ncall 1 2 0x1 0x12g\n", -MT_E_SYNTAX,
	    "line 2: field 4: bad address '0x12g'"));
	CHECK(bad("mt-events 1.0\ncall 1 2 0x1 12\n", -MT_E_SYNTAX,
	    "line 2: field 4: bad address '12'"));
	CHECK(bad("mt-events 1.0\nret x 2 0x1 0x2\n", -MT_E_SYNTAX,
	    "line 2: field 1: bad time 'x'"));
	CHECK(bad("mt-events 1.0\nret 1 99999999999 0x1 0x2\n",
	    -MT_E_SYNTAX, "line 2: field 2: bad tid '99999999999'"));
	CHECK(bad("mt-events 1.0\nret 1\n", -MT_E_SYNTAX,
	    "line 2: field 2: missing field (ret TIME TID ...)"));
	CHECK(bad("mt-events 1.0\ncall 1 2 0x1 0x2 @1 @2 @3\n",
	    -MT_E_SYNTAX, "line 2: field 7: unexpected loc field '@3'"));
	CHECK(bad("mt-events 1.0\ncall 1 2 0x1 0x2 @z\n",
	    -MT_E_SYNTAX, "line 2: field 5: bad loc field '@z'"));
	CHECK(bad("mt-events 1.0\ninfo a%zz b\n", -MT_E_SYNTAX,
	    "line 2: field 1: bad %-escape"));
	CHECK(bad("mt-events 1.0\nloc 1 0x1 1:2\n", -MT_E_SYNTAX,
	    "line 2: field 3: bad frame (want FN:FILE:LINE)"));
	CHECK(bad("mt-events 1.0\nloc 1 0x1\n", -MT_E_SYNTAX,
	    "line 2: field 3: missing field (loc ID ADDR FRAME...)"));
	CHECK(bad("mt-events 1.0\nerror 1 2 0x0 x msg\n", -MT_E_SYNTAX,
	    "line 2: field 4: bad offset 'x'"));
	CHECK(bad("mt-events 1.0\nmod 1 0x0 0x1 0 -\n", -MT_E_SYNTAX,
	    "line 2: field 6: missing field (mod PID START END PGOFF "
	    "BUILDID PATH)"));
	CHECK(bad("mt-events 1.2\nmod 1 0x0 0x1 0 - /a 1x\n", -MT_E_SYNTAX,
	    "line 2: field 7: bad time '1x'"));
	CHECK(bad("mt-events 1.0\nthread 1 x c\n", -MT_E_SYNTAX,
	    "line 2: field 2: bad tid 'x'"));
	CHECK(bad("mt-events 1.0\nfn 1 0x1 d\n", -MT_E_SYNTAX,
	    "line 2: field 4: missing field (fn ID START DSO NAME)"));
	CHECK(bad("mt-events 1.0\ncall 1 2 0x11112222333344445 0x2\n",
	    -MT_E_SYNTAX, "line 2: field 3: bad address "
	    "'0x11112222333344445'"));
}

static void
long_lines_and_last_line_without_newline(void)
{
	size_t n = 300000;
	char *text = malloc(n + 64), *p;
	struct mt_evr *r;
	struct mt_ev ev;
	int fd;

	p = text + sprintf(text, "mt-events 1.0\ninfo k ");
	memset(p, 'v', n);
	strcpy(p + n, "\nend 7 8");
	fd = text_fd(text);
	CHECK(mt_evr_new(&r, fd, "t") == 0);
	CHECK(mt_evr_next(r, &ev) == 0 && strlen(ev.str[1]) == n);
	CHECK(mt_evr_next(r, &ev) == 0 && ev.kind == MT_EV_END &&
	    ev.time == 7);
	CHECK(mt_evr_next(r, &ev) == MT_EOS);
	mt_evr_free(r);
	close(fd);
	free(text);
}

/* Every keyword maps to its kind; near misses and "none" map to none. */
static void
kind_lookup(void)
{
	static const char *const miss[] = {
		"none", "cal", "calls", "Call", "rex", "ibq", "inff", "sysrep",
		"enabld", "triggers", "overflov", "x", "",
	};
	char w[16];
	int k;
	size_t i;

	for (k = MT_EV_INFO; k < MT_EV_NKINDS; k++) {
		const char *name = mt_ev_kind_name((enum mt_ev_kind)k);

		/* not NUL-terminated after the keyword */
		snprintf(w, sizeof(w), "%s 12", name);
		CHECK(mt_ev_kind_lookup(w, strlen(name)) == (enum mt_ev_kind)k);
	}
	for (i = 0; i < sizeof(miss) / sizeof(miss[0]); i++)
		CHECK(mt_ev_kind_lookup(miss[i], strlen(miss[i])) ==
		    MT_EV_NONE);
	CHECK(mt_ev_plain(MT_EV_CALL) && mt_ev_plain(MT_EV_END) &&
	    mt_ev_plain(MT_EV_OVERFLOW) && mt_ev_plain(MT_EV_ENABLE));
	CHECK(!mt_ev_plain(MT_EV_TRIGGER) && !mt_ev_plain(MT_EV_ERROR) &&
	    !mt_ev_plain(MT_EV_DISABLE) && !mt_ev_plain(MT_EV_LOC) &&
	    !mt_ev_plain(MT_EV_TX) &&
	    !mt_ev_plain(MT_EV_NONE));
}

/*
 * Numbers and addresses at every digit-count border (0, 9, 10, 99, ...,
 * 2^64 - 1; 0xf, 0x10, 0xff, 0x100, ...) are written as printf writes
 * them, also when a line straddles the writer's buffer end and with a
 * long escaped string.
 */
static void
numbers_at_every_digit_border(void)
{
	enum { N = 4000 };
	struct mt_ev *evs = calloc(N, sizeof(*evs));
	char *want = malloc(N * 160 + 4 * 20100), *got, *o = want, *big = malloc(20001);
	uint64_t v[200], p;
	int nv = 0, i;

	memset(big, 'a', 20000);
	big[20000] = '\0';
	big[7] = ' ';
	for (p = 1; p <= UINT64_MAX / 10; p *= 10) {
		v[nv++] = p - 1;
		v[nv++] = p;
	}
	v[nv++] = p - 1;
	v[nv++] = p;
	for (i = 0; i < 64; i++) {
		v[nv++] = (1ull << i) - 1;
		v[nv++] = 1ull << i;
	}
	v[nv++] = UINT64_MAX;
	o += sprintf(o, "mt-events 1.2\n");
	for (i = 0; i < N; i++) {
		struct mt_ev *e = &evs[i];
		uint64_t a = v[i % nv], b = v[(i * 7 + 3) % nv];

		e->kind = i % 3 == 0 ? MT_EV_CALL : i % 3 == 1 ?
		    MT_EV_ERROR : MT_EV_DISABLE;
		e->time = a;
		e->tid = (uint32_t)b;
		e->addr[0] = b;
		e->addr[1] = a;
		e->num = b;
		if (e->kind == MT_EV_CALL)
			o += sprintf(o, "call %llu %u 0x%llx 0x%llx\n",
			    (unsigned long long)a, (uint32_t)b,
			    (unsigned long long)b, (unsigned long long)a);
		else if (e->kind == MT_EV_ERROR) {
			e->str[0] = "bad packet";
			o += sprintf(o, "error %llu %u 0x%llx %llu bad%%20packet\n",
			    (unsigned long long)a, (uint32_t)b,
			    (unsigned long long)b, (unsigned long long)b);
		} else {
			e->str[0] = i % 500 == 2 ? big : "filter";
			o += sprintf(o, "disable %llu %u 0x%llx ",
			    (unsigned long long)a, (uint32_t)b,
			    (unsigned long long)b);
			if (e->str[0] == big) {
				o += sprintf(o, "aaaaaaa%%20");
				o += sprintf(o, "%s\n", big + 8);
			} else {
				o += sprintf(o, "filter\n");
			}
		}
	}
	got = write_text(evs, N);
	CHECK(same_text(got, want));
	free(got);
	free(want);
	free(big);
	free(evs);
}

/*
 * mt_evw_event() writes what printf writes for every event kind without
 * strings, and what mt_evw_write() writes for the others (a string or
 * number left out: "-", 0), over times and addresses that run in small
 * steps across the borders the writer's kept digits change at (10^4 for
 * times, 2^16 for addresses), jump far and back, and tids that change.
 */
static void
event_writes_what_printf_writes(void)
{
	enum { N = 6000 };
	struct mt_ev *evs = calloc(N, sizeof(*evs));
	char *want = malloc(N * 80), *got, *o = want;
	uint64_t t = 9990, a = 0xfff0, far[] = { 0, 1, 0xffff, 0x10000,
	    0x7fffffffe000ull, UINT64_MAX, 99999, 100000, 0x401000 };
	int i;

	o += sprintf(o, "mt-events 1.2\n");
	for (i = 0; i < N; i++) {
		struct mt_ev *e = &evs[i];
		enum mt_ev_kind k = (enum mt_ev_kind)(MT_EV_CALL +
		    i % (MT_EV_END - MT_EV_CALL + 1));
		int na = mt_ev_naddr(k);

		t += (uint64_t)(i % 7);
		a += (uint64_t)(i % 11) * 3;
		e->kind = k;
		e->time = i % 97 == 5 ? far[i % 9] : t;
		if (i >= 200 && i < 203)	/* the top block, then below it */
			e->time = i == 200 ? UINT64_MAX - 5 : i == 201 ? 0 : 1616;
		e->tid = i % 50 < 40 ? 4242 : (uint32_t)(i % 3 ? i : 0);
		e->addr[0] = i % 89 == 3 ? far[(i / 89) % 9] : a;
		e->addr[1] = i % 13 == 1 ? far[i % 9] : a + 0x20000;
		if (!mt_ev_plain(k)) {
			struct mt_ev one = *e;

			got = write_text(&one, 1);
			CHECK(got != NULL);
			if (got != NULL)
				o += sprintf(o, "%s", got + strlen("mt-events 1.2\n"));
			free(got);
			continue;
		}
		o += sprintf(o, "%s %llu %u", mt_ev_kind_name(k),
		    (unsigned long long)e->time, e->tid);
		if (na > 0)
			o += sprintf(o, " 0x%llx", (unsigned long long)e->addr[0]);
		if (na > 1)
			o += sprintf(o, " 0x%llx", (unsigned long long)e->addr[1]);
		o += sprintf(o, "\n");
	}
	got = write_text_as(evs, N, 1);
	CHECK(same_text(got, want));
	free(got);
	free(want);
	free(evs);
}

/*
 * mt_evw_event_str() writes what mt_evw_write() writes for the same
 * record, for strings the same as the last (kept), empty or none first,
 * a prefix or an extension of the last, with escapes, at the kept
 * length's border (23 and 24 bytes) and too long to keep or to format
 * in one piece; and for kinds it does not format itself.
 */
static void
event_str_writes_what_write_writes(void)
{
	static char l23[24], l24[25], huge[40000];
	const char *strs[] = { NULL, "filter", "filter", "", "filter",
	    "syscall", "filt", "filterx", "-", "a b%c\x7f\x01", "a b%c\x7f\x01",
	    l23, l23, l24, l24, l23, huge, huge, "other", NULL, "other" };
	enum mt_ev_kind kinds[] = { MT_EV_DISABLE, MT_EV_TRIGGER, MT_EV_TX,
	    MT_EV_ERROR, MT_EV_CALL };
	enum { NS = sizeof(strs) / sizeof(strs[0]), NK = 5, N = NS * NK };
	struct mt_ev evs[N];
	char *want, *got;
	int i;

	memset(l23, 'x', 23);
	memset(l24, 'x', 24);
	memset(huge, 'y', sizeof(huge) - 1);
	memset(evs, 0, sizeof(evs));
	for (i = 0; i < N; i++) {
		evs[i].kind = i < NS * (NK - 2) ? kinds[i / NS] :
		    kinds[i % NK];
		evs[i].time = 9990 + (uint64_t)i * 3;
		evs[i].tid = i % 5 == 4 ? 7 : 4242;
		evs[i].addr[0] = 0xfff0 + (uint64_t)i * 0x111;
		evs[i].str[0] = strs[i % NS];
	}
	want = write_text_as(evs, N, 0);
	got = write_text_as(evs, N, 2);
	CHECK(want != NULL && got != NULL);
	if (want != NULL && got != NULL)
		CHECK(same_text(got, want));
	free(want);
	free(got);
}

int
main(void)
{
	TEST(roundtrip_every_kind);
	TEST(kind_lookup);
	TEST(skips_comments_unknown_kinds_extra_fields);
	TEST(malformed_lines_name_line_and_field);
	TEST(long_lines_and_last_line_without_newline);
	TEST(numbers_at_every_digit_border);
	TEST(event_writes_what_printf_writes);
	TEST(event_str_writes_what_write_writes);
	return tap_done();
}
