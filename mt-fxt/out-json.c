/* SPDX-License-Identifier: MIT */
/*
 * --format json: the Chrome trace event format (catapult's "Trace Event
 * Format"), which Perfetto, chrome://tracing and speedscope read.  Frames
 * are B/E events with real pids and tids (a goroutine's track: see
 * jtid), timestamps in microseconds with
 * three decimals (nanosecond precision), process and thread names as
 * metadata (M) events, trigger hits as instant events on a "triggers"
 * process (pid 0).  Events are written in the FXT order (defer.h): sorted
 * by a stable sort on ts they nest.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "defer.h"
#include "err.h"
#include "out.h"
#include "sink.h"
#include "sym.h"

struct ojson {
	struct out *o;
	struct defer *d;
	uint8_t *named;		/* sym_thread index -> metadata written */
	uint32_t nnamed;
	uint8_t *pnamed;	/* sym_proc index -> metadata written */
	uint32_t npnamed;
	int hits;		/* trigger metadata written */
	int first;		/* no event written yet */
};

/* Write @len bytes as the body of a JSON string (no quotes). */
static void
esc(struct sink *s, const char *p, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char b[256];
	size_t n = 0, i = 0;

	while (i < len) {
		uint8_t c = (uint8_t)p[i];
		size_t k = 1, j;

		if (n > sizeof(b) - 16) {
			sink_write(s, b, n);
			n = 0;
		}
		if (c == '"' || c == '\\') {
			b[n++] = '\\';
			b[n++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(b + n, "\\u00", 4);
			b[n + 4] = hex[c >> 4];
			b[n + 5] = hex[c & 15];
			n += 6;
		} else if (c < 0x80) {
			b[n++] = (char)c;
		} else {
			/* Copy a valid UTF-8 sequence, else U+FFFD. */
			if (c >= 0xc2 && c <= 0xdf)
				k = 2;
			else if (c >= 0xe0 && c <= 0xef)
				k = 3;
			else if (c >= 0xf0 && c <= 0xf4)
				k = 4;
			else
				k = 0;
			for (j = 1; k && j < k; j++)
				if (i + j >= len ||
				    ((uint8_t)p[i + j] & 0xc0) != 0x80)
					k = 0;
			if (k) {
				memcpy(b + n, p + i, k);
				n += k;
			} else {
				memcpy(b + n, "\\ufffd", 6);
				n += 6;
				k = 1;
			}
		}
		i += k;
	}
	sink_write(s, b, n);
}

static void
esc_h(struct ojson *j, uint32_t h)
{
	size_t len;
	const char *p = sym_str(j->o->sym, h, &len);

	esc(j->o->sink, p, len);
}

static void
sep(struct ojson *j)
{
	sink_puts(j->o->sink, j->first ? "\n" : ",\n");
	j->first = 0;
}

static void
ts_us(struct sink *s, uint64_t ts)
{
	sink_printf(s, "%" PRIu64 ".%03u", ts / 1000, (unsigned)(ts % 1000));
}

static uint32_t
jpid(const struct sym_thread *t)
{
	return t->pid ? t->pid : t->tid;
}

/*
 * A goroutine track's JSON tid: above every Linux tid (pid_max is at most
 * 2^22), one per track, so that viewers keep the tracks apart; its name
 * gives the real tid.
 */
static uint32_t
jtid(const struct sym_thread *t)
{
	return t->goroutine ? (UINT32_C(1) << 22) + t->index : t->tid;
}

static int
mark(uint8_t **v, uint32_t *n, uint32_t i)
{
	if (i >= *n) {
		uint32_t nn = i + 64;
		uint8_t *nv = realloc(*v, nn);

		if (nv == NULL)
			return -1;
		memset(nv + *n, 0, nn - *n);
		*v = nv;
		*n = nn;
	}
	if ((*v)[i])
		return 0;
	(*v)[i] = 1;
	return 1;
}

static void
meta(struct ojson *j, const struct sym_thread *t)
{
	struct sink *s = j->o->sink;
	const struct sym_proc *p = sym_proc(j->o->sym, t->proc);
	int r;

	r = mark(&j->pnamed, &j->npnamed, t->proc);
	if (r < 0)
		j->o->err = -MT_E_NOMEM;
	if (r > 0) {
		sep(j);
		sink_printf(s, "{\"name\":\"process_name\",\"ph\":\"M\","
		    "\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		    ",\"args\":{\"name\":\"", jpid(t), jpid(t));
		if (p->cmdline || p->comm) {
			esc_h(j, p->cmdline ? p->cmdline : p->comm);
			sink_puts(s, " ");
		}
		if (p->pid)
			sink_printf(s, "[pid=%" PRIu32 "]\"}}", p->pid);
		else
			sink_puts(s, "[pid=?]\"}}");
	}
	r = mark(&j->named, &j->nnamed, t->index);
	if (r < 0)
		j->o->err = -MT_E_NOMEM;
	if (r > 0) {
		sep(j);
		sink_printf(s, "{\"name\":\"thread_name\",\"ph\":\"M\","
		    "\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		    ",\"args\":{\"name\":\"", jpid(t), jtid(t));
		if (t->comm) {
			esc_h(j, t->comm);
			sink_puts(s, " ");
		}
		sink_printf(s, "[tid=%" PRIu32 "]\"}}", t->tid);
	}
}

static void
emit(void *ctx, const struct sym_thread *t, int kind, uint64_t ts,
    const struct frame *f)
{
	struct ojson *j = ctx;
	struct sink *s = j->o->sink;

	meta(j, t);
	sep(j);
	sink_puts(s, "{\"name\":\"");
	esc_h(j, f->name);
	sink_printf(s, "\",\"ph\":\"%s\",\"ts\":", kind == DEFER_BEGIN ?
	    "B" : "E");
	ts_us(s, ts);
	sink_printf(s, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, jpid(t),
	    jtid(t));
	if (kind == DEFER_BEGIN) {
		const char *c = "{";

		sink_puts(s, ",\"args\":");
		if (f->addr) {
			sink_printf(s, "%s\"address\":\"0x%" PRIx64 "\"", c,
			    f->addr);
			c = ",";
		}
		if (f->file) {
			sink_printf(s, "%s\"file\":\"", c);
			esc_h(j, f->file);
			sink_printf(s, "\",\"line\":%" PRIu32, f->line);
			c = ",";
		}
		if (f->flags & FR_INFERRED) {
			sink_printf(s, "%s\"inferred_start_time\":true", c);
			c = ",";
		}
		if (f->flags & FR_INLINED) {
			sink_printf(s, "%s\"inlined\":true", c);
			c = ",";
		}
		sink_puts(s, *c == '{' ? "{}" : "}");
	}
	sink_puts(s, "}");
}

static int
json_open(struct out *o)
{
	struct ojson *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return -MT_E_NOMEM;
	o->priv = j;
	j->o = o;
	j->first = 1;
	sink_puts(o->sink, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	return defer_new(&j->d, emit, j);
}

static void
json_seg_push(struct out *o, const struct sym_thread *t, uint64_t ts)
{
	struct ojson *j = o->priv;

	meta(j, t);
	defer_seg_push(j->d, t, ts);
}

static void
json_seg_pop(struct out *o, const struct sym_thread *t, uint64_t ts)
{
	struct ojson *j = o->priv;

	(void)ts;
	defer_seg_pop(j->d, t);
}

static void
json_begin(struct out *o, const struct sym_thread *t, uint64_t ts,
    const struct frame *f)
{
	defer_event(((struct ojson *)o->priv)->d, t, DEFER_BEGIN, ts, f);
}

static void
json_end(struct out *o, const struct sym_thread *t, uint64_t ts,
    const struct frame *f)
{
	defer_event(((struct ojson *)o->priv)->d, t, DEFER_END, ts, f);
}

static void
json_trigger(struct out *o, const struct sym_thread *t, uint64_t ts,
    uint64_t ip, uint32_t what)
{
	struct ojson *j = o->priv;
	struct sink *s = o->sink;

	if (!j->hits) {
		j->hits = 1;
		sep(j);
		sink_puts(s, "{\"name\":\"process_name\",\"ph\":\"M\","
		    "\"pid\":0,\"tid\":0,\"args\":{\"name\":\"triggers\"}}");
		sep(j);
		sink_puts(s, "{\"name\":\"thread_name\",\"ph\":\"M\","
		    "\"pid\":0,\"tid\":0,\"args\":{\"name\":\"hits\"}}");
	}
	sep(j);
	sink_puts(s, "{\"name\":\"hit ");
	esc_h(j, what);
	sink_puts(s, "\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
	ts_us(s, ts);
	sink_printf(s, ",\"pid\":0,\"tid\":0,\"args\":{\"tid\":%" PRIu32
	    ",\"ip\":\"0x%" PRIx64 "\"}}", t->tid, ip);
}

static int
json_close(struct out *o, const struct fxt_stats *st)
{
	struct ojson *j = o->priv;

	(void)st;
	if (j == NULL)
		return -MT_E_NOMEM;
	sink_puts(o->sink, "\n]}\n");
	return o->err ? o->err : defer_error(j->d);
}

static void
json_free(struct out *o)
{
	struct ojson *j = o->priv;

	if (j == NULL)
		return;
	defer_free(j->d);
	free(j->named);
	free(j->pnamed);
	free(j);
	o->priv = NULL;
}

const struct out_ops out_json_ops = {
	.name = "json",
	.binary = 0,
	.open = json_open,
	.seg_push = json_seg_push,
	.seg_pop = json_seg_pop,
	.begin = json_begin,
	.end = json_end,
	.trigger = json_trigger,
	.close = json_close,
	.free = json_free,
};
