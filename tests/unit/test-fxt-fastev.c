/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-fxt/fastev.c: every line the fast path accepts is
 * read by common/events.c's reader as the very same record (hand-picked
 * lines and 20,000 random mutations of them), and the lines mt-symbolize
 * writes are accepted.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"
#include "err.h"
#include "events.h"
#include "../../mt-fxt/fastev.h"

/*
 * Read @line (@len bytes) after a header with the full reader: 1 and
 * the record in @ev, 0 when it gives no record or an error.
 */
static int
full_parse(const char *line, size_t len, struct mt_ev *ev)
{
	static const char hdr[] = "mt-events 1.0\n";
	struct mt_evr *r = NULL;
	int fd = memfd_create("fastev", 0), rc;

	if (fd < 0 || write(fd, hdr, sizeof(hdr) - 1) < 0 ||
	    write(fd, line, len) < 0 || write(fd, "\n", 1) < 0 ||
	    lseek(fd, 0, SEEK_SET) != 0 || mt_evr_new(&r, fd, "t") < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rc = mt_evr_next(r, ev);
	/* The string lives in the reader's buffer: keep a copy. */
	if (rc == 0 && ev->str[0] != NULL) {
		static char copy[128];

		snprintf(copy, sizeof(copy), "%s", ev->str[0]);
		ev->str[0] = copy;
	}
	mt_evr_free(r);
	close(fd);
	return rc == 0;
}

static int
same(const struct mt_ev *a, const struct mt_ev *b)
{
	return a->kind == b->kind && a->time == b->time && a->pid == b->pid &&
	    a->tid == b->tid && a->id == b->id && a->addr[0] == b->addr[0] &&
	    a->addr[1] == b->addr[1] && a->loc[0] == b->loc[0] &&
	    a->loc[1] == b->loc[1] && a->num == b->num &&
	    (a->str[0] == NULL ? b->str[0] == NULL :
	    b->str[0] != NULL && strcmp(a->str[0], b->str[0]) == 0) &&
	    a->str[1] == NULL && b->str[1] == NULL && a->nframes == b->nframes;
}

/*
 * The fast path on @s (@len bytes), its '\n' and another line after it,
 * as mt_evr_ahead() shows them: it takes the bytes up to the first '\n'
 * with it, or none, and a line it takes is read by the full reader as
 * the very same record.  Returns the bytes taken.
 */
static size_t
agree(const char *s, size_t len, int *bad)
{
	static const char next[] = "call 7 7 0x7 0x7 @7 @7\n";
	struct mt_ev *f = calloc(1, sizeof(*f)), *g = calloc(1, sizeof(*g));
	char *b = malloc(len + sizeof(next));
	size_t k;

	memcpy(b, s, len);
	b[len] = '\n';
	memcpy(b + len + 1, next, sizeof(next) - 1);
	k = fastev_line(b, b + len + sizeof(next), f);
	if (k > 0 && (memchr(b, '\n', k) != b + k - 1 ||
	    full_parse(s, k - 1, g) != 1 || !same(f, g))) {
		(*bad)++;
		printf("# disagree: '%.*s'\n", (int)len, s);
	}
	free(b);
	free(f);
	free(g);
	return k;
}

static const char *const good[] = {
	"call 1000565500 4242 0x401000 0x401007 @1 @2",
	"call 1000565500 4242 0x401000 0x401007",
	"call 1 2 0x401000 0x401007 @1",
	"ret 18446744073709551 7 0xffffffffffffffff 0x0 @4294967295 @0",
	"jmp 5 4294967295 0xABCdef 0x1",
	"br 5 1 0x0000000000401000 0x2 @3 @4",
	"syscall 10 1 0x401000 0x0",
	"sysret 11 1 0x0 0x401002 @9",
	"irq 12 1 0x1 0x2",
	"iret 13 1 0x2 0x1 @5 @6",
	"enable 14 1 0x401000 @7",
	"overflow 15 1 0x0",
	"end 16 1",
	"end 0 0",
	"call 007 1 0x1 0x2",
	"disable 56 0 0x474014 filter @10",
	"disable 1 2 0x1 syscall",
	"disable 123456789012 3 0xffffffff81000000 async @4",
	"disable 9 1 0x401000 uprobe @3",
	"disable 9 1 0x401000 other",
	"call 123456789 12345678 0x123456789abcdef0 0xfedcba9876543210 @12345678 @1",
	"ret 1234567890123456789 4294967295 0x1 0x2",
};

static const char *const bad[] = {
	"",
	"# comment",
	"call 1 2 0x1",
	"call 1 2 0x1 0x2 ",
	"call 1 2 0x1 0x2 @",
	"call 1 2 0x1 0x2 @1 @2 @3",
	"call 1 2 0x1 0x2 junk",
	"call  1 2 0x1 0x2",
	"call\t1 2 0x1 0x2",
	"call 1 2 0x1 0x2\r",
	"call 1 2 0X1 0x2",
	"call 1 2 0x 0x2",
	"call 1 2 0x11111111111111111 0x2",
	"call 1 4294967296 0x1 0x2",
	"call 12345678901234567890 1 0x1 0x2",
	"call 1 2 0x1 0x2 @4294967296",
	"end 1 2 @3",
	"end 1",
	"end 1 ",
	"trigger 1 2 0x1 cos",
	"disable 1 2 0x1 tip.pge",
	"disable 1 2 0x1 filterx",
	"disable 1 2 0x1 filter junk",
	"disable 1 2 0x1 filter @1 @2",
	"disable 1 2 0x1",
	"disable 1 2 0x1 ",
	"disable 1 2 0x1 fil%74er",
	"call 123456789 1 0x1 0x2 @123456789012",
	"ret 12345678901234567890 1 0x1 0x2",
	"error 1 2 0x1 5 bad",
	"thread 1 1 main",
	"calls 1 2 0x1 0x2",
	" call 1 2 0x1 0x2",
	"call -1 2 0x1 0x2",
	"call 1 2 0x1g 0x2",
};

static void
accepts_plain_lines(void)
{
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int ok = agree(good[i], strlen(good[i]), &n) ==
		    strlen(good[i]) + 1;

		if (!ok)
			printf("# not accepted: '%s'\n", good[i]);
		CHECK(ok);
	}
	CHECK(n == 0);
}

static void
leaves_the_rest_to_the_reader(void)
{
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ok = agree(bad[i], strlen(bad[i]), &n) > 0;

		if (ok)
			printf("# accepted: '%s'\n", bad[i]);
		CHECK(!ok);
	}
	CHECK(n == 0);
}

/*
 * The bytes read ahead end anywhere in a line, its '\n' included or
 * not: the parser takes the line only when they hold all of it, and
 * reads nothing past them (ASan sees any overread).
 */
static void
stays_within_the_bytes(void)
{
	const char *s = "call 1 2 0x10 0x20 @1 @2\n";
	size_t len = strlen(s), k;
	struct mt_ev ev;
	char *p;
	int n = 0;

	for (k = 0; k <= len; k++) {
		p = malloc(k ? k : 1);
		memcpy(p, s, k);
		if (fastev_line(p, p + k, &ev) != (k == len ? len : 0))
			n++;
		free(p);
	}
	CHECK(n == 0);
}

static void
random_mutations_agree(void)
{
	static const char alphabet[] = " \t\r\n@xX0123456789aAfFg#-:/%";
	char b[128];
	int n = 0, accepted = 0, i;

	srand(12345);
	for (i = 0; i < 20000; i++) {
		const char *s = good[(size_t)rand() %
		    (sizeof(good) / sizeof(good[0]))];
		size_t len = strlen(s), pos;
		int m, k = 1 + rand() % 3;

		memcpy(b, s, len);
		for (m = 0; m < k && len > 0 && len < sizeof(b) - 1; m++) {
			pos = (size_t)rand() % len;
			switch (rand() % 3) {
			case 0:		/* replace */
				b[pos] = alphabet[rand() %
				    (int)(sizeof(alphabet) - 1)];
				break;
			case 1:		/* delete */
				memmove(b + pos, b + pos + 1, len - pos - 1);
				len--;
				break;
			default:	/* insert */
				memmove(b + pos + 1, b + pos, len - pos);
				b[pos] = alphabet[rand() %
				    (int)(sizeof(alphabet) - 1)];
				len++;
				break;
			}
		}
		accepted += agree(b, len, &n) > 0;
	}
	printf("# %d of 20000 mutations taken by the fast path\n", accepted);
	CHECK(n == 0);
	CHECK(accepted > 100);
}

int
main(void)
{
	TEST(accepts_plain_lines);
	TEST(leaves_the_rest_to_the_reader);
	TEST(stays_within_the_bytes);
	TEST(random_mutations_agree);
	return tap_done();
}
