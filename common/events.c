/* SPDX-License-Identifier: MIT */
/*
 * Reader and writer of the text event stream (docs/formats/events.md).
 * Both are built for throughput: the reader splits lines in its own
 * buffer and decodes fields in place, the writer formats numbers by hand
 * into a 64 KiB buffer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "events.h"

#define RBUF_INIT	(256u << 10)
#define LINE_MAX_LEN	(1u << 20)
#define WBUF_SIZE	(64u << 10)
#define MAX_FIELDS	(4 + 2 * MT_EV_MAX_FRAMES)

/* Record keywords, with their lengths for the writer's copy. */
#define KW(k, s, na, plain) [k] = { s, sizeof(s) - 1, na, plain }
static const struct {
	char s[12];		/* NUL-terminated, 8 bytes copied at once */
	uint8_t n;		/* strlen(s) */
	uint8_t naddr;		/* events: address fields (mt_ev_naddr) */
	uint8_t plain;		/* events: no string or number fields
				 * (mt_ev_plain) */
} kinds[MT_EV_NKINDS] = {
	KW(MT_EV_NONE, "none", 0, 0),
	KW(MT_EV_INFO, "info", 0, 0),
	KW(MT_EV_PROC, "proc", 0, 0),
	KW(MT_EV_THREAD, "thread", 0, 0),
	KW(MT_EV_MOD, "mod", 0, 0),
	KW(MT_EV_FILE, "file", 0, 0),
	KW(MT_EV_FN, "fn", 0, 0),
	KW(MT_EV_LOC, "loc", 0, 0),
	KW(MT_EV_CALL, "call", 2, 1),
	KW(MT_EV_RET, "ret", 2, 1),
	KW(MT_EV_JMP, "jmp", 2, 1),
	KW(MT_EV_BR, "br", 2, 1),
	KW(MT_EV_SYSCALL, "syscall", 2, 1),
	KW(MT_EV_SYSRET, "sysret", 2, 1),
	KW(MT_EV_IRQ, "irq", 2, 1),
	KW(MT_EV_IRET, "iret", 2, 1),
	KW(MT_EV_DISABLE, "disable", 1, 0),
	KW(MT_EV_ENABLE, "enable", 1, 1),
	KW(MT_EV_OVERFLOW, "overflow", 1, 1),
	KW(MT_EV_ERROR, "error", 1, 0),
	KW(MT_EV_TRIGGER, "trigger", 1, 0),
	KW(MT_EV_TX, "tx", 1, 0),
	KW(MT_EV_END, "end", 0, 1),
};
#undef KW

const char *
mt_ev_kind_name(enum mt_ev_kind kind)
{
	return (unsigned)kind < MT_EV_NKINDS ? kinds[kind].s : "none";
}

int
mt_ev_naddr(enum mt_ev_kind kind)
{
	return MT_EV_IS_EVENT(kind) ? kinds[kind].naddr : 0;
}

enum mt_ev_kind
mt_ev_kind_lookup(const char *w, size_t n)
{
	enum mt_ev_kind k;

	/* By length first: one or two compares per keyword. */
	switch (n) {
	case 2:
		k = w[0] == 'b' ? MT_EV_BR : w[0] == 'f' ? MT_EV_FN :
		    w[0] == 't' ? MT_EV_TX : MT_EV_NONE;
		break;
	case 3:
		k = w[0] == 'r' ? MT_EV_RET : w[0] == 'j' ? MT_EV_JMP :
		    w[0] == 'e' ? MT_EV_END : w[0] == 'i' ? MT_EV_IRQ :
		    w[0] == 'm' ? MT_EV_MOD : w[0] == 'l' ? MT_EV_LOC :
		    MT_EV_NONE;
		break;
	case 4:
		k = w[0] == 'c' ? MT_EV_CALL : w[0] == 'i' ?
		    (w[1] == 'r' ? MT_EV_IRET : MT_EV_INFO) :
		    w[0] == 'p' ? MT_EV_PROC : w[0] == 'f' ? MT_EV_FILE :
		    MT_EV_NONE;
		break;
	case 5:
		k = w[0] == 'e' ? MT_EV_ERROR : MT_EV_NONE;
		break;
	case 6:
		k = w[0] == 's' ? MT_EV_SYSRET : w[0] == 'e' ? MT_EV_ENABLE :
		    w[0] == 't' ? MT_EV_THREAD : MT_EV_NONE;
		break;
	case 7:
		k = w[0] == 's' ? MT_EV_SYSCALL : w[0] == 'd' ? MT_EV_DISABLE :
		    w[0] == 't' ? MT_EV_TRIGGER : MT_EV_NONE;
		break;
	case 8:
		k = w[0] == 'o' ? MT_EV_OVERFLOW : MT_EV_NONE;
		break;
	default:
		k = MT_EV_NONE;
		break;
	}
	if (k != MT_EV_NONE && memcmp(kinds[k].s, w, n) != 0)
		k = MT_EV_NONE;
	return k;
}

int
mt_ev_plain(enum mt_ev_kind kind)
{
	return MT_EV_IS_EVENT(kind) && kinds[kind].plain;
}

/*
 * Reader.
 */

struct mt_evr {
	int fd;
	char *name;		/* input name, for messages */
	char *buf;		/* bytes read, lines split in place */
	size_t cap;		/* bytes allocated */
	size_t pos;		/* start of the next line */
	size_t end;		/* bytes valid in buf */
	int eof;
	uint64_t lineno;	/* number of the last line returned */
	uint64_t consumed;	/* bytes of input before buf[pos] */
	int header_seen;
	size_t peeked;		/* bytes of the line mt_evr_peek() showed */
	char err[256];
};

int
mt_evr_new(struct mt_evr **rp, int fd, const char *name)
{
	struct mt_evr *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -MT_E_NOMEM;
	r->fd = fd;
	r->name = strdup(name ? name : "-");
	r->cap = RBUF_INIT;
	r->buf = malloc(r->cap);
	if (r->name == NULL || r->buf == NULL) {
		mt_evr_free(r);
		return -MT_E_NOMEM;
	}
	*rp = r;
	return 0;
}

void
mt_evr_free(struct mt_evr *r)
{
	if (r == NULL)
		return;
	free(r->name);
	free(r->buf);
	free(r);
}

const char *
mt_evr_errmsg(const struct mt_evr *r)
{
	return r->err;
}

uint64_t
mt_evr_lineno(const struct mt_evr *r)
{
	return r->lineno;
}

uint64_t
mt_evr_offset(const struct mt_evr *r)
{
	return r->consumed;
}

static int
rerr(struct mt_evr *r, int rc, int field, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (field >= 0)
		n = snprintf(r->err, sizeof(r->err), "line %llu: field %d: ",
		    (unsigned long long)r->lineno, field);
	else
		n = snprintf(r->err, sizeof(r->err), "line %llu: ",
		    (unsigned long long)r->lineno);
	if (n < 0 || (size_t)n >= sizeof(r->err))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return rc;
}

/*
 * Make buf[pos..] hold a whole line; return its length (without '\n') in
 * *len.  Returns 0, MT_EOS, or an error.
 */
static int
fill_line(struct mt_evr *r, char **line, size_t *len)
{
	for (;;) {
		char *nl = memchr(r->buf + r->pos, '\n', r->end - r->pos);
		ssize_t n;

		if (nl != NULL) {
			*line = r->buf + r->pos;
			*len = (size_t)(nl - *line);
			r->consumed += *len + 1;
			r->pos += *len + 1;
			return 0;
		}
		if (r->eof) {
			if (r->pos == r->end)
				return MT_EOS;
			/* A last line without '\n'. */
			*line = r->buf + r->pos;
			*len = r->end - r->pos;
			r->consumed += *len;
			r->pos = r->end;
			return 0;
		}
		if (r->pos > 0) {
			memmove(r->buf, r->buf + r->pos, r->end - r->pos);
			r->end -= r->pos;
			r->pos = 0;
		}
		if (r->end == r->cap) {
			char *nb;

			if (r->cap >= LINE_MAX_LEN + 1) {
				r->lineno++;
				return rerr(r, -MT_E_LIMIT, -1,
				    "line longer than %u bytes", LINE_MAX_LEN);
			}
			nb = realloc(r->buf, r->cap * 2);
			if (nb == NULL)
				return -MT_E_NOMEM;
			r->buf = nb;
			r->cap *= 2;
		}
		n = read(r->fd, r->buf + r->end, r->cap - r->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* Not a line's fault: the byte offset it stopped at. */
			snprintf(r->err, sizeof(r->err),
			    "read error at offset %llu: %s",
			    (unsigned long long)(r->consumed + (r->end -
			    r->pos)), strerror(errno));
			return -MT_E_IO;
		}
		if (n == 0)
			r->eof = 1;
		r->end += (size_t)n;
	}
}

int
mt_ev_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (*s == '\0')
		return -1;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

static int
parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;

	if (parse_u64(s, &x) < 0 || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int
parse_addr(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	int n = 0, d;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	for (s += 2; *s; s++, n++) {
		d = mt_ev_hexval((unsigned char)*s);
		if (d < 0 || n >= 16)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	if (n == 0)
		return -1;
	*v = x;
	return 0;
}

/* Decode a str field in place; "-" is the empty string. */
static int
decode_str(char *s)
{
	char *o = s;
	const char *i = s;

	if (s[0] == '-' && s[1] == '\0') {
		s[0] = '\0';
		return 0;
	}
	while (*i) {
		if (*i == '%') {
			int h = mt_ev_hexval((unsigned char)i[1]), l;

			if (h < 0 || (l = mt_ev_hexval((unsigned char)i[2])) < 0)
				return -1;
			*o++ = (char)(h << 4 | l);
			i += 3;
		} else {
			*o++ = *i++;
		}
	}
	*o = '\0';
	return 0;
}

/* Split @line into fields in place; returns the count. */
static int
split(char *line, size_t len, char **f, int max)
{
	/* Separators (space, tab, CR) by table: one load per byte. */
	static const unsigned char sep[256] = {
		[' '] = 1, ['\t'] = 1, ['\r'] = 1,
	};
	char *p = line, *e = line + len;
	int n = 0;

	while (p < e) {
		while (p < e && sep[(unsigned char)*p])
			p++;
		if (p >= e)
			break;
		if (n == max)
			return n + 1;
		f[n++] = p;
		while (p < e && !sep[(unsigned char)*p])
			p++;
		*p++ = '\0';
	}
	return n;
}

static int
parse_header(struct mt_evr *r, char **f, int nf)
{
	unsigned long major, minor;
	char *end;

	if (nf < 2 || strcmp(f[0], MT_EV_MAGIC) != 0)
		return rerr(r, -MT_E_MAGIC, -1,
		    "not an mt event stream (expected '%s %d.%d')",
		    MT_EV_MAGIC, MT_EV_MAJOR, MT_EV_MINOR);
	errno = 0;
	major = strtoul(f[1], &end, 10);
	if (*end != '.' || errno)
		return rerr(r, -MT_E_SYNTAX, 1, "bad version '%s'", f[1]);
	minor = strtoul(end + 1, &end, 10);
	if (*end != '\0' || errno)
		return rerr(r, -MT_E_SYNTAX, 1, "bad version '%s'", f[1]);
	(void)minor;
	if (major != MT_EV_MAJOR)
		return rerr(r, -MT_E_VERSION, 1,
		    "unsupported event stream version %s (this reader: %d.x)",
		    f[1], MT_EV_MAJOR);
	return 0;
}

#define NEED(cond, i, ...) do { if (!(cond)) \
	return rerr(r, -MT_E_SYNTAX, (i), __VA_ARGS__); } while (0)

static int
parse_frame(struct mt_evr *r, char *s, int i, struct mt_ev_frame *fr)
{
	char *a = s, *b, *c;

	b = strchr(a, ':');
	NEED(b != NULL, i, "bad frame '%s' (want FN:FILE:LINE)", s);
	*b++ = '\0';
	c = strchr(b, ':');
	NEED(c != NULL, i, "bad frame (want FN:FILE:LINE)");
	*c++ = '\0';
	NEED(parse_u32(a, &fr->fn) == 0 && parse_u32(b, &fr->file) == 0 &&
	    parse_u32(c, &fr->line) == 0, i, "bad frame numbers");
	return 0;
}

static int
parse_record(struct mt_evr *r, char **f, int nf, struct mt_ev *ev)
{
	enum mt_ev_kind k = ev->kind;
	int i, na, first;

	switch (k) {
	case MT_EV_INFO:
		NEED(nf >= 3, nf, "missing field (info KEY VALUE)");
		NEED(decode_str(f[1]) == 0, 1, "bad %%-escape");
		NEED(decode_str(f[2]) == 0, 2, "bad %%-escape");
		ev->str[0] = f[1];
		ev->str[1] = f[2];
		return 0;
	case MT_EV_PROC:
		NEED(nf >= 4, nf, "missing field (proc PID COMM CMDLINE)");
		NEED(parse_u32(f[1], &ev->pid) == 0, 1, "bad pid '%s'", f[1]);
		NEED(decode_str(f[2]) == 0, 2, "bad %%-escape");
		NEED(decode_str(f[3]) == 0, 3, "bad %%-escape");
		ev->str[0] = f[2];
		ev->str[1] = f[3];
		return 0;
	case MT_EV_THREAD:
		NEED(nf >= 4, nf, "missing field (thread PID TID COMM)");
		NEED(parse_u32(f[1], &ev->pid) == 0, 1, "bad pid '%s'", f[1]);
		NEED(parse_u32(f[2], &ev->tid) == 0, 2, "bad tid '%s'", f[2]);
		NEED(decode_str(f[3]) == 0, 3, "bad %%-escape");
		ev->str[0] = f[3];
		return 0;
	case MT_EV_MOD:
		NEED(nf >= 7, nf,
		    "missing field (mod PID START END PGOFF BUILDID PATH)");
		NEED(parse_u32(f[1], &ev->pid) == 0, 1, "bad pid '%s'", f[1]);
		NEED(parse_addr(f[2], &ev->addr[0]) == 0, 2,
		    "bad address '%s'", f[2]);
		NEED(parse_addr(f[3], &ev->addr[1]) == 0, 3,
		    "bad address '%s'", f[3]);
		NEED(parse_u64(f[4], &ev->num) == 0, 4, "bad offset '%s'",
		    f[4]);
		NEED(decode_str(f[5]) == 0, 5, "bad %%-escape");
		NEED(decode_str(f[6]) == 0, 6, "bad %%-escape");
		ev->str[0] = f[5];
		ev->str[1] = f[6];
		/* 1.2: the time from which it holds the code there */
		NEED(nf < 8 || parse_u64(f[7], &ev->time) == 0, 7,
		    "bad time '%s'", f[7]);
		return 0;
	case MT_EV_FILE:
		NEED(nf >= 3, nf, "missing field (file ID PATH)");
		NEED(parse_u32(f[1], &ev->id) == 0, 1, "bad id '%s'", f[1]);
		NEED(decode_str(f[2]) == 0, 2, "bad %%-escape");
		ev->str[0] = f[2];
		return 0;
	case MT_EV_FN:
		NEED(nf >= 5, nf, "missing field (fn ID START DSO NAME)");
		NEED(parse_u32(f[1], &ev->id) == 0, 1, "bad id '%s'", f[1]);
		NEED(parse_addr(f[2], &ev->addr[0]) == 0, 2,
		    "bad address '%s'", f[2]);
		NEED(decode_str(f[3]) == 0, 3, "bad %%-escape");
		NEED(decode_str(f[4]) == 0, 4, "bad %%-escape");
		ev->str[0] = f[3];
		ev->str[1] = f[4];
		ev->str[2] = NULL;
		if (nf >= 6) {
			NEED(decode_str(f[5]) == 0, 5, "bad %%-escape");
			ev->str[2] = f[5];
		}
		return 0;
	case MT_EV_LOC:
		NEED(nf >= 4, nf, "missing field (loc ID ADDR FRAME...)");
		NEED(parse_u32(f[1], &ev->id) == 0, 1, "bad id '%s'", f[1]);
		NEED(parse_addr(f[2], &ev->addr[0]) == 0, 2,
		    "bad address '%s'", f[2]);
		NEED(nf - 3 <= MT_EV_MAX_FRAMES, nf - 1,
		    "more than %d frames", MT_EV_MAX_FRAMES);
		for (i = 3; i < nf; i++) {
			int rc = parse_frame(r, f[i], i,
			    &ev->frames[i - 3]);

			if (rc < 0)
				return rc;
		}
		ev->nframes = (uint32_t)(nf - 3);
		return 0;
	default:
		break;
	}

	/* Events: KEYWORD TIME TID fields... [@LOC...] */
	NEED(nf >= 3, nf, "missing field (%s TIME TID ...)",
	    mt_ev_kind_name(k));
	NEED(parse_u64(f[1], &ev->time) == 0, 1, "bad time '%s'", f[1]);
	NEED(parse_u32(f[2], &ev->tid) == 0, 2, "bad tid '%s'", f[2]);
	na = mt_ev_naddr(k);
	first = 3;
	for (i = 0; i < na; i++) {
		NEED(first + i < nf, first + i, "missing address field");
		NEED(parse_addr(f[first + i], &ev->addr[i]) == 0, first + i,
		    "bad address '%s'", f[first + i]);
	}
	i = first + na;
	switch (k) {
	case MT_EV_DISABLE:
	case MT_EV_TRIGGER:
	case MT_EV_TX:
		NEED(i < nf, i, "missing field");
		NEED(decode_str(f[i]) == 0, i, "bad %%-escape");
		ev->str[0] = f[i++];
		break;
	case MT_EV_ERROR:
		NEED(i + 1 < nf, i + 1, "missing field (error ... OFFSET "
		    "MESSAGE)");
		NEED(parse_u64(f[i], &ev->num) == 0, i, "bad offset '%s'",
		    f[i]);
		NEED(decode_str(f[i + 1]) == 0, i + 1, "bad %%-escape");
		ev->str[0] = f[i + 1];
		i += 2;
		break;
	default:
		break;
	}
	/* Trailing fields: @LOC per address, others ignored. */
	for (na = 0; i < nf; i++) {
		if (f[i][0] != '@')
			continue;
		NEED(na < mt_ev_naddr(k), i, "unexpected loc field '%s'",
		    f[i]);
		NEED(parse_u32(f[i] + 1, &ev->loc[na]) == 0, i,
		    "bad loc field '%s'", f[i]);
		na++;
	}
	return 0;
}

int
mt_evr_next(struct mt_evr *r, struct mt_ev *ev)
{
	char *f[MAX_FIELDS + 1];
	char *line = NULL;
	size_t len = 0;
	int nf, rc;

	for (;;) {
		rc = fill_line(r, &line, &len);
		if (rc == MT_EOS) {
			if (!r->header_seen) {
				r->lineno++;
				return rerr(r, -MT_E_TRUNC, -1,
				    "empty input: no '%s' header",
				    MT_EV_MAGIC);
			}
			return MT_EOS;
		}
		if (rc < 0)
			return rc;
		r->lineno++;
		if (len > 0 && line[len - 1] == '\r')
			len--;
		if (!r->header_seen) {
			nf = split(line, len, f, MAX_FIELDS);
			rc = parse_header(r, f, nf < MAX_FIELDS ? nf : 0);
			if (rc < 0)
				return rc;
			r->header_seen = 1;
			continue;
		}
		if (len == 0 || line[0] == '#')
			continue;
		nf = split(line, len, f, MAX_FIELDS);
		if (nf == 0)
			continue;
		if (nf > MAX_FIELDS)
			return rerr(r, -MT_E_SYNTAX, MAX_FIELDS,
			    "too many fields");
		ev->kind = mt_ev_kind_lookup(f[0], strlen(f[0]));
		if (ev->kind == MT_EV_NONE)
			continue;	/* newer minor version */
		ev->time = 0;
		ev->pid = ev->tid = ev->id = 0;
		ev->addr[0] = ev->addr[1] = 0;
		ev->loc[0] = ev->loc[1] = 0;
		ev->num = 0;
		ev->str[0] = ev->str[1] = NULL;
		ev->nframes = 0;
		return parse_record(r, f, nf, ev);
	}
}

int
mt_evr_peek(struct mt_evr *r, const char **line, size_t *len)
{
	char *l = r->buf + r->pos, *nl;
	size_t n, adv;
	int rc;

	if (!r->header_seen)
		return 1;
	/* The line is in the buffer already (nearly always): show it. */
	if ((nl = memchr(l, '\n', r->end - r->pos)) != NULL) {
		*line = l;
		*len = (size_t)(nl - l);
		r->peeked = *len + 1;
		return 0;
	}
	rc = fill_line(r, &l, &n);
	if (rc != 0)
		return rc == MT_EOS ? 1 : rc;
	/* Put the line back: mt_evr_skip() or mt_evr_next() takes it. */
	adv = (size_t)(r->buf + r->pos - l);
	r->pos -= adv;
	r->consumed -= adv;
	r->peeked = adv;
	*line = l;
	*len = n;
	return 0;
}

void
mt_evr_skip(struct mt_evr *r)
{
	r->pos += r->peeked;
	r->consumed += r->peeked;
	r->peeked = 0;
	r->lineno++;
}

int
mt_evr_ahead(struct mt_evr *r, const char **p, size_t *n)
{
	if (!r->header_seen || r->pos == r->end)
		return 1;
	*p = r->buf + r->pos;
	*n = r->end - r->pos;
	return 0;
}

void
mt_evr_take(struct mt_evr *r, size_t n)
{
	r->pos += n;
	r->consumed += n;
	r->lineno++;
}

/*
 * Writer.
 */

#define EVW_KEPT_STR	23	/* bytes of a string the writer keeps */

struct mt_evw {
	int fd;
	int err;		/* sticky error */
	size_t len;		/* bytes in buf */
	/* fmt_time's last high part: t_base, a multiple of 10^4 (>= 10^4),
	 * and the decimal text of t_base / 10^4 (t_len digits). */
	uint64_t t_base;
	char t_txt[24];
	uint8_t t_len;
	/* fmt_addr_kept's texts of addresses' high parts (above the last 16
	 * bits), direct-mapped by the high part's low 4 bits. */
	struct {
		uint64_t hi;	/* address >> 16; UINT64_MAX: empty */
		char txt[16];	/* " 0x" and hi's hex digits */
		uint8_t len;	/* bytes of txt */
	} ahi[16];
	/* mt_evw_event_str's last string: its bytes (s_raw, NUL-ended,
	 * at most EVW_KEPT_STR of them) and its text, " " and escaped
	 * (s_len bytes of s_txt); "" when nothing else was kept. */
	char s_raw[EVW_KEPT_STR + 1];
	uint8_t s_len;
	char s_txt[1 + 3 * EVW_KEPT_STR];
	/* fmt_tid's last tid and its text, " " and decimal (tid_len). */
	uint8_t tid_len;
	uint32_t tid;
	char tid_txt[16];
	char buf[WBUF_SIZE];
};

static int
wflush(struct mt_evw *w)
{
	size_t off = 0;

	while (!w->err && off < w->len) {
		ssize_t n = write(w->fd, w->buf + off, w->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			w->err = -MT_E_IO;
			break;
		}
		off += (size_t)n;
	}
	w->len = 0;
	return w->err;
}

/* Make room for @n bytes (n <= WBUF_SIZE). */
static inline char *
room(struct mt_evw *w, size_t n)
{
	if (WBUF_SIZE - w->len < n)
		wflush(w);
	return w->buf + w->len;
}

static void
put(struct mt_evw *w, const char *s, size_t n)
{
	while (n > 0) {
		size_t k = n < WBUF_SIZE ? n : WBUF_SIZE;

		memcpy(room(w, k), s, k);
		w->len += k;
		s += k;
		n -= k;
	}
}

static inline void
putc_(struct mt_evw *w, char c)
{
	*room(w, 1) = c;
	w->len++;
}

/* "00" to "99", two digits per entry. */
static const char dec2[] =
    "00010203040506070809101112131415161718192021222324252627282930"
    "31323334353637383940414243444546474849505152535455565758596061"
    "62636465666768697071727374757677787980818283848586878889909192"
    "93949596979899";

/* Number of decimal digits of @v (1 to 20). */
static inline int
dec_digits(uint64_t v)
{
	static const uint64_t p10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull,
		1000000ull, 10000000ull, 100000000ull, 1000000000ull,
		10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull,
		10000000000000000ull, 100000000000000000ull,
		1000000000000000000ull, 10000000000000000000ull,
	};
	/* log10 from log2 (1233 / 4096 ~ log10(2)), then one compare */
	int t;

	v |= 1;		/* 0 has one digit; no other v changes its count */
	t = ((64 - __builtin_clzll(v)) * 1233) >> 12;

	return t + (v >= p10[t]);
}

/*
 * Decimal @v at @o, written from its last digit back, two digits per
 * division; returns the end.  @o has room for 20 bytes.
 */
static inline char *
fmt_num(char *o, uint64_t v)
{
	char *end = o + dec_digits(v), *p = end;

	while (v >= 100) {
		p -= 2;
		memcpy(p, dec2 + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(p - 2, dec2 + 2 * v, 2);
	else
		p[-1] = (char)('0' + v);
	return end;
}

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "hex8() stores its digits for a little-endian CPU"
#endif

/*
 * The 8 lowercase hex digits of @v, most significant first, as 8 bytes to
 * store (a nibble per byte, then each made its digit: all at once).
 */
static inline uint64_t
hex8(uint32_t v)
{
	uint64_t x = v;

	x = (x | x << 16) & 0x0000ffff0000ffffull;
	x = (x | x << 8) & 0x00ff00ff00ff00ffull;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;	/* byte i: nibble i */
	/* '0' + n, and 'a' - '0' - 10 more where n >= 10 */
	x += 0x3030303030303030ull +
	    (((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull) *
	    0x27;
	return __builtin_bswap64(x);
}

/*
 * " 0x" and lowercase hex @v without leading zeros at @o, eight digits
 * at a time; returns the end.  Writes no more than 19 bytes from @o
 * (past the end: bytes the next field overwrites).
 */
static inline char *
fmt_addr(char *o, uint64_t v)
{
	int nd = (67 - __builtin_clzll(v | 1)) / 4;	/* digits, 1 to 16 */
	uint64_t h;

	o[0] = ' ';
	o[1] = '0';
	o[2] = 'x';
	o += 3;
	if (nd > 8) {
		h = hex8((uint32_t)((v >> 32) << (64 - 4 * nd)));
		memcpy(o, &h, 8);
		o += nd - 8;
		h = hex8((uint32_t)v);
		memcpy(o, &h, 8);
		return o + 8;
	}
	h = hex8((uint32_t)(v << (32 - 4 * nd)));
	memcpy(o, &h, 8);
	return o + nd;
}

/* "00" to "ff", two lowercase hex digits per byte value. */
#define HEX16(a) a "0" a "1" a "2" a "3" a "4" a "5" a "6" a "7" \
	a "8" a "9" a "a" a "b" a "c" a "d" a "e" a "f"
static const char hex2[] = HEX16("0") HEX16("1") HEX16("2") HEX16("3")
    HEX16("4") HEX16("5") HEX16("6") HEX16("7") HEX16("8") HEX16("9")
    HEX16("a") HEX16("b") HEX16("c") HEX16("d") HEX16("e") HEX16("f");

/*
 * fmt_addr_kept()'s miss: keep the text of @v's high part, or (an
 * address below 0x10000) write @v at @o and return the end; NULL: kept.
 */
static __attribute__((noinline)) char *
fmt_addr_new(struct mt_evw *w, char *o, uint64_t v)
{
	uint64_t hi = v >> 16;
	unsigned i = (unsigned)hi & 15;

	if (hi == 0)
		return fmt_addr(o, v);
	w->ahi[i].hi = hi;
	w->ahi[i].len = (uint8_t)(fmt_addr(w->ahi[i].txt, hi) -
	    w->ahi[i].txt);
	return NULL;
}

/*
 * fmt_addr() with the text of @v's high part (above its last 16 bits)
 * kept from an earlier address of the same high part (code addresses
 * share theirs): a copy and two digit pairs.  The same bytes, written no
 * further than 19 bytes from @o.
 */
static inline __attribute__((always_inline)) char *
fmt_addr_kept(struct mt_evw *w, char *o, uint64_t v)
{
	uint64_t hi = v >> 16;
	unsigned i = (unsigned)hi & 15;

	if (w->ahi[i].hi != hi) {
		char *e = fmt_addr_new(w, o, v);

		if (e != NULL)
			return e;
	}
	memcpy(o, w->ahi[i].txt, 16);
	o += w->ahi[i].len;
	memcpy(o, hex2 + 2 * ((v >> 8) & 0xff), 2);
	memcpy(o + 2, hex2 + 2 * (v & 0xff), 2);
	return o + 4;
}

/*
 * An event's time, decimal, at @o: the digits above the last four are
 * kept from the last call (times of a stream are close), so a time costs
 * a copy and two digit pairs; returns the end.  Writes no more than 20
 * bytes from @o.
 */
static inline char *
fmt_time(struct mt_evw *w, char *o, uint64_t t)
{
	uint64_t lo = t - w->t_base;

	if (lo >= 10000) {
		/* the last block is not kept: t_base + 9999 must not wrap */
		if (t < 10000 || t > UINT64_MAX - 10000)
			return fmt_num(o, t);
		w->t_base = t - t % 10000;
		w->t_len = (uint8_t)(fmt_num(w->t_txt, t / 10000) - w->t_txt);
		lo = t - w->t_base;
	}
	memcpy(o, w->t_txt, 16);
	o += w->t_len;
	memcpy(o, dec2 + 2 * (lo / 100), 2);
	memcpy(o + 2, dec2 + 2 * (lo % 100), 2);
	return o + 4;
}

/* " " and decimal @tid at @o, kept from the last call; returns the end.
 * Writes 16 bytes from @o. */
static inline char *
fmt_tid(struct mt_evw *w, char *o, uint32_t tid)
{
	if (tid != w->tid) {
		w->tid = tid;
		w->tid_len = (uint8_t)(fmt_num(w->tid_txt + 1, tid) -
		    w->tid_txt);
	}
	memcpy(o, w->tid_txt, 16);
	return o + w->tid_len;
}

/* Decimal @v, without a separator. */
static void
put_num(struct mt_evw *w, uint64_t v)
{
	char *o = room(w, 20);

	w->len = (size_t)(fmt_num(o, v) - w->buf);
}

/* A space, then decimal @v. */
static void
put_u64(struct mt_evw *w, uint64_t v)
{
	putc_(w, ' ');
	put_num(w, v);
}

static void
put_addr(struct mt_evw *w, uint64_t v)
{
	char *o = room(w, 19);

	w->len = (size_t)(fmt_addr(o, v) - w->buf);
}

static void
put_str(struct mt_evw *w, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s;

	putc_(w, ' ');
	if (s == NULL || *s == '\0') {
		putc_(w, '-');
		return;
	}
	if (s[0] == '-' && s[1] == '\0') {
		put(w, "%2D", 3);
		return;
	}
	for (; *p; p++) {
		if (*p <= 0x20 || *p == '%' || *p == 0x7f) {
			char *o = room(w, 3);

			o[0] = '%';
			o[1] = hex[*p >> 4];
			o[2] = hex[*p & 0xf];
			w->len += 3;
		} else {
			putc_(w, (char)*p);
		}
	}
}

static char *fmt_str(char *o, const char *s, size_t n);

int
mt_evw_new(struct mt_evw **wp, int fd)
{
	struct mt_evw *w = malloc(sizeof(*w));
	char hdr[64];
	int n, i;

	if (w == NULL)
		return -MT_E_NOMEM;
	w->fd = fd;
	w->err = 0;
	w->len = 0;
	w->t_base = 10000;
	memset(w->t_txt, '0', sizeof(w->t_txt));
	w->t_txt[0] = '1';
	w->t_len = 1;
	memset(w->tid_txt, '0', sizeof(w->tid_txt));
	w->tid_txt[0] = ' ';
	w->tid_len = 2;
	w->tid = 0;
	w->s_raw[0] = '\0';	/* "" kept: its text */
	w->s_len = (uint8_t)(fmt_str(w->s_txt, "", 0) - w->s_txt);
	for (i = 0; i < 16; i++)
		w->ahi[i].hi = UINT64_MAX;
	n = snprintf(hdr, sizeof(hdr), "%s %d.%d\n", MT_EV_MAGIC,
	    MT_EV_MAJOR, MT_EV_MINOR);
	put(w, hdr, (size_t)n);
	*wp = w;
	return 0;
}

int
mt_evw_raw(struct mt_evw *w, const char *s, size_t n)
{
	if (WBUF_SIZE - w->len >= n) {
		memcpy(w->buf + w->len, s, n);
		w->len += n;
	} else {
		put(w, s, n);
	}
	return w->err;
}

int
mt_evw_comment(struct mt_evw *w, const char *text)
{
	putc_(w, '#');
	putc_(w, ' ');
	for (; *text; text++)
		putc_(w, *text == '\n' ? ' ' : *text);
	putc_(w, '\n');
	return w->err;
}

/* An event line's bytes but for its string: keyword, time, tid, two
 * addresses, an offset, two loc ids, the newline (each field's most,
 * with what its fmt_ function writes past its end). */
#define EV_LINE_MAX	(8 + 2 * 21 + 2 * 19 + 21 + 2 * 12 + 1)

/* " STR" at @o, escaped as put_str does; @n is strlen(@s). */
static char *
fmt_str(char *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s, *e = p + n;

	*o++ = ' ';
	if (n == 0) {
		*o++ = '-';
		return o;
	}
	if (n == 1 && s[0] == '-') {
		memcpy(o, "%2D", 3);
		return o + 3;
	}
	for (; p < e; p++) {
		if (*p <= 0x20 || *p == '%' || *p == 0x7f) {
			o[0] = '%';
			o[1] = hex[*p >> 4];
			o[2] = hex[*p & 0xf];
			o += 3;
		} else {
			*o++ = (char)*p;
		}
	}
	return o;
}

/* An event line's keyword, time and tid at @o; returns the end. */
static inline __attribute__((always_inline)) char *
fmt_head(struct mt_evw *w, char *o, enum mt_ev_kind k, uint64_t time,
    uint32_t tid)
{
	memcpy(o, kinds[k].s, 8);
	o += kinds[k].n;
	*o++ = ' ';
	o = fmt_time(w, o, time);
	return fmt_tid(w, o, tid);
}

/*
 * An event record (time, tid, then its fields), formatted straight into
 * the buffer after one check for room for the whole line.
 */
static void
write_event(struct mt_evw *w, const struct mt_ev *ev)
{
	enum mt_ev_kind k = ev->kind;
	const char *str = NULL;
	size_t sn = 0;
	char *o;
	int na = mt_ev_naddr(k), i;

	if (k == MT_EV_DISABLE || k == MT_EV_TRIGGER || k == MT_EV_ERROR ||
	    k == MT_EV_TX) {
		str = ev->str[0] != NULL ? ev->str[0] : "";
		sn = strlen(str);
		if (sn > (WBUF_SIZE - EV_LINE_MAX) / 4) {
			/* a very long string: through the writer's pieces */
			put(w, kinds[k].s, kinds[k].n);
			put_u64(w, ev->time);
			put_u64(w, ev->tid);
			put_addr(w, ev->addr[0]);
			if (k == MT_EV_ERROR)
				put_u64(w, ev->num);
			put_str(w, str);
			if (ev->loc[0] || ev->loc[1]) {
				put(w, " @", 2);
				put_num(w, ev->loc[0]);
			}
			putc_(w, '\n');
			return;
		}
	}
	o = room(w, EV_LINE_MAX + 1 + 3 * sn);
	o = fmt_head(w, o, k, ev->time, ev->tid);
	if (na > 0)
		o = fmt_addr_kept(w, o, ev->addr[0]);
	if (na > 1)
		o = fmt_addr_kept(w, o, ev->addr[1]);
	if (k == MT_EV_ERROR) {
		*o++ = ' ';
		o = fmt_num(o, ev->num);
	}
	if (str != NULL)
		o = fmt_str(o, str, sn);
	if (na > 0 && (ev->loc[0] || ev->loc[1])) {
		for (i = 0; i < na; i++) {
			*o++ = ' ';
			*o++ = '@';
			o = fmt_num(o, ev->loc[i]);
		}
	}
	*o++ = '\n';
	w->len = (size_t)(o - w->buf);
}

/* mt_evw_event() of a kind with a string or a number, and
 * mt_evw_event_str()'s other kinds and long strings: through the struct
 * (@str NULL: none). */
static __attribute__((noinline)) int
write_struct(struct mt_evw *w, enum mt_ev_kind kind, uint64_t time,
    uint32_t tid, uint64_t a0, uint64_t a1, const char *str)
{
	struct mt_ev ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.time = time;
	ev.tid = tid;
	ev.addr[0] = a0;
	ev.addr[1] = a1;
	ev.str[0] = str;
	return mt_evw_write(w, &ev);
}

int
mt_evw_event(struct mt_evw *w, enum mt_ev_kind kind, uint64_t time,
    uint32_t tid, uint64_t a0, uint64_t a1)
{
	char *o;
	int na;

	if (!(MT_EV_IS_EVENT(kind) && kinds[kind].plain))
		return write_struct(w, kind, time, tid, a0, a1, NULL);
	na = kinds[kind].naddr;
	o = room(w, EV_LINE_MAX);
	o = fmt_head(w, o, kind, time, tid);
	if (na > 0)
		o = fmt_addr_kept(w, o, a0);
	if (na > 1)
		o = fmt_addr_kept(w, o, a1);
	*o++ = '\n';
	w->len = (size_t)(o - w->buf);
	return w->err;
}

int
mt_evw_event_str(struct mt_evw *w, enum mt_ev_kind kind, uint64_t time,
    uint32_t tid, uint64_t a0, const char *str)
{
	size_t sn = 0;
	char *o;

	if (str == NULL)
		str = "";
	/* the string kept from the last call (the decoder's few reasons) */
	while (sn < EVW_KEPT_STR && str[sn] != '\0' && str[sn] == w->s_raw[sn])
		sn++;
	if (str[sn] == '\0' && w->s_raw[sn] == '\0' &&
	    (kind == MT_EV_DISABLE || kind == MT_EV_TRIGGER ||
	    kind == MT_EV_TX)) {
		o = room(w, EV_LINE_MAX + 1 + sizeof(w->s_txt));
		o = fmt_head(w, o, kind, time, tid);
		o = fmt_addr_kept(w, o, a0);
		memcpy(o, w->s_txt, sizeof(w->s_txt));
		o += w->s_len;
		*o++ = '\n';
		w->len = (size_t)(o - w->buf);
		return w->err;
	}
	sn += strlen(str + sn);
	if ((kind != MT_EV_DISABLE && kind != MT_EV_TRIGGER &&
	    kind != MT_EV_TX) || sn > (WBUF_SIZE - EV_LINE_MAX) / 4) {
		/* another kind, or a very long string: through the struct */
		return write_struct(w, kind, time, tid, a0, 0, str);
	}
	o = room(w, EV_LINE_MAX + 1 + 3 * sn);
	o = fmt_head(w, o, kind, time, tid);
	o = fmt_addr_kept(w, o, a0);
	if (sn <= EVW_KEPT_STR) {
		memcpy(w->s_raw, str, sn + 1);
		w->s_len = (uint8_t)(fmt_str(w->s_txt, str, sn) - w->s_txt);
	}
	o = fmt_str(o, str, sn);
	*o++ = '\n';
	w->len = (size_t)(o - w->buf);
	return w->err;
}

int
mt_evw_write(struct mt_evw *w, const struct mt_ev *ev)
{
	uint32_t i;

	if ((unsigned)ev->kind >= MT_EV_NKINDS || ev->kind == MT_EV_NONE)
		return -MT_E_INVAL;
	if (MT_EV_IS_EVENT(ev->kind)) {
		write_event(w, ev);
		return w->err;
	}
	put(w, kinds[ev->kind].s, kinds[ev->kind].n);
	switch (ev->kind) {
	case MT_EV_INFO:
		put_str(w, ev->str[0]);
		put_str(w, ev->str[1]);
		break;
	case MT_EV_PROC:
		put_u64(w, ev->pid);
		put_str(w, ev->str[0]);
		put_str(w, ev->str[1]);
		break;
	case MT_EV_THREAD:
		put_u64(w, ev->pid);
		put_u64(w, ev->tid);
		put_str(w, ev->str[0]);
		break;
	case MT_EV_MOD:
		put_u64(w, ev->pid);
		put_addr(w, ev->addr[0]);
		put_addr(w, ev->addr[1]);
		put_u64(w, ev->num);
		put_str(w, ev->str[0]);
		put_str(w, ev->str[1]);
		if (ev->time != 0)
			put_u64(w, ev->time);
		break;
	case MT_EV_FILE:
		put_u64(w, ev->id);
		put_str(w, ev->str[0]);
		break;
	case MT_EV_FN:
		put_u64(w, ev->id);
		put_addr(w, ev->addr[0]);
		put_str(w, ev->str[0]);
		put_str(w, ev->str[1]);
		if (ev->str[2] != NULL)
			put_str(w, ev->str[2]);
		break;
	case MT_EV_LOC:
		if (ev->nframes == 0 || ev->nframes > MT_EV_MAX_FRAMES)
			return -MT_E_INVAL;
		put_u64(w, ev->id);
		put_addr(w, ev->addr[0]);
		for (i = 0; i < ev->nframes; i++) {
			put_u64(w, ev->frames[i].fn);
			putc_(w, ':');
			put_num(w, ev->frames[i].file);
			putc_(w, ':');
			put_num(w, ev->frames[i].line);
		}
		break;
	default:
		break;
	}
	putc_(w, '\n');
	return w->err;
}

int
mt_evw_flush(struct mt_evw *w)
{
	return wflush(w);
}

int
mt_evw_free(struct mt_evw *w)
{
	int rc;

	if (w == NULL)
		return 0;
	rc = wflush(w);
	free(w);
	return rc;
}
