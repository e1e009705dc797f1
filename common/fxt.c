/* SPDX-License-Identifier: MIT */
/*
 * FXT writer (see fxt.h and docs/formats/fxt.md).  Records are assembled
 * in a 64 KiB buffer as little-endian 64-bit words and handed to the sink
 * when it fills.  String and thread handles are mapped onto table slots on
 * use: a handle whose slot was taken by another is registered again in the
 * next slot a clock hand finds, skipping the slots the record being built
 * already refers to, so one record's references never evict each other.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fxt.h"

#define BUF_CAP		(64 * 1024)
#define MAX_REC_WORDS	4095		/* header field [4..15] */

/* Record types (spec: "Record types"). */
enum {
	REC_METADATA = 0,
	REC_INIT = 1,
	REC_STRING = 2,
	REC_THREAD = 3,
	REC_EVENT = 4,
	REC_KOBJ = 7,
};

enum {
	EV_INSTANT = 0,
	EV_COUNTER = 1,
	EV_BEGIN = 2,
	EV_END = 3,
	EV_COMPLETE = 4,
};

/* Argument types as written (spec: "Arguments"). */
enum {
	ARGT_NULL = 0,
	ARGT_I32 = 1,
	ARGT_U32 = 2,
	ARGT_I64 = 3,
	ARGT_U64 = 4,
	ARGT_DOUBLE = 5,
	ARGT_STR = 6,
	ARGT_PTR = 7,
	ARGT_KOID = 8,
	ARGT_BOOL = 9,
};

struct fxt_str {
	size_t off;		/* bytes in pool */
	uint32_t len;		/* bytes */
	uint32_t next;		/* hash chain: next handle, 0 ends */
	uint16_t slot;		/* table slot it was last registered in */
};

struct fxt_thr {
	uint64_t pkoid;		/* process koid */
	uint64_t tkoid;		/* thread koid */
	uint8_t slot;		/* table slot last registered in, 0 none */
};

struct mt_fxt {
	mt_fxt_sink_fn sink;	/* receives full buffers */
	void *ctx;		/* for sink */
	int err;		/* sticky: first error */
	uint64_t flushed;	/* bytes handed to the sink */
	uint8_t *buf;		/* BUF_CAP bytes of pending records */
	size_t len;		/* bytes used in buf */

	/* Strings: handle i (1..nstr-1) is strs[i]; bytes in pool. */
	struct fxt_str *strs;
	uint32_t nstr, capstr;
	char *pool;
	size_t poollen, poolcap;
	uint32_t *hash;		/* hashmask+1 chain heads (handles) */
	uint32_t hashmask;

	uint32_t max_strings;	/* slots in use: 1..max_strings */
	uint32_t *slot_str;	/* slot -> handle owning it, 0 free */
	uint64_t *slot_stamp;	/* slot -> record number last using it */
	uint32_t str_next;	/* next never-used slot */
	uint32_t str_hand;	/* clock hand for eviction */

	struct fxt_thr *thrs;	/* handle i is thrs[i], 1..nthr-1 */
	uint32_t nthr, capthr;
	uint32_t max_threads;
	uint32_t slot_thr[MT_FXT_MAX_THREADS + 1];	/* slot -> handle */
	uint64_t thr_stamp[MT_FXT_MAX_THREADS + 1];	/* like slot_stamp */
	uint32_t thr_next, thr_hand;

	uint64_t stamp;		/* number of the record being built */
};

/* One little-endian word at @p; returns the byte after it. */
static inline uint8_t *
le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 8);
#else
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	p[4] = (uint8_t)(v >> 32);
	p[5] = (uint8_t)(v >> 40);
	p[6] = (uint8_t)(v >> 48);
	p[7] = (uint8_t)(v >> 56);
#endif
	return p + 8;
}

/* One word at the end of the buffer (room reserved). */
static inline void
put64(struct mt_fxt *w, uint64_t v)
{
	le64(w->buf + w->len, v);
	w->len += 8;
}

/* Pad a byte run out to whole words (the caller reserved the room). */
static void
putbytes(struct mt_fxt *w, const void *p, size_t n)
{
	size_t pad = (8 - n % 8) % 8;

	memcpy(w->buf + w->len, p, n);
	memset(w->buf + w->len + n, 0, pad);
	w->len += n + pad;
}

int
mt_fxt_flush(struct mt_fxt *w)
{
	int rc;

	if (w == NULL)
		return -MT_E_INVAL;
	if (w->len > 0 && w->err == 0) {
		rc = w->sink(w->ctx, w->buf, w->len);
		if (rc < 0)
			w->err = rc;
	}
	w->flushed += w->len;
	w->len = 0;
	return w->err;
}

/* Make room for @words more words; false once the writer has failed. */
static int
reserve(struct mt_fxt *w, size_t words)
{
	if (w->err)
		return 0;
	if (w->len + words * 8 > BUF_CAP)
		mt_fxt_flush(w);
	return w->err == 0;
}

static uint32_t
hash_bytes(const char *s, size_t n)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (n--)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static int
grow(void **p, uint32_t *cap, size_t elem)
{
	uint32_t ncap = *cap ? *cap * 2 : 256;
	void *np;

	if (ncap < *cap)
		return -MT_E_NOMEM;
	np = realloc(*p, (size_t)ncap * elem);
	if (np == NULL)
		return -MT_E_NOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

static int
rehash(struct mt_fxt *w)
{
	uint32_t nmask = w->hashmask ? w->hashmask * 2 + 1 : 1023;
	uint32_t *nh, i;

	nh = calloc((size_t)nmask + 1, sizeof(*nh));
	if (nh == NULL)
		return -MT_E_NOMEM;
	for (i = 1; i < w->nstr; i++) {
		uint32_t b = hash_bytes(w->pool + w->strs[i].off,
		    w->strs[i].len) & nmask;

		w->strs[i].next = nh[b];
		nh[b] = i;
	}
	free(w->hash);
	w->hash = nh;
	w->hashmask = nmask;
	return 0;
}

/* Length of @s cut to at most @max bytes without splitting a character. */
static size_t
utf8_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	len = max;
	while (len > 0 && ((uint8_t)s[len] & 0xc0) == 0x80)
		len--;
	return len;
}

uint32_t
mt_fxt_str(struct mt_fxt *w, const char *s, size_t len)
{
	uint32_t h, b;

	if (w == NULL || w->err)
		return 0;
	len = utf8_cut(s, len, MT_FXT_MAX_STRLEN);
	if (len == 0)
		return 0;
	b = hash_bytes(s, len);
	for (h = w->hash[b & w->hashmask]; h != 0; h = w->strs[h].next)
		if (w->strs[h].len == len &&
		    memcmp(w->pool + w->strs[h].off, s, len) == 0)
			return h;
	if (w->nstr == w->capstr &&
	    grow((void **)&w->strs, &w->capstr, sizeof(*w->strs)) < 0)
		goto nomem;
	while (w->poollen + len > w->poolcap) {
		size_t ncap = w->poolcap ? w->poolcap * 2 : 65536;
		char *np = realloc(w->pool, ncap);

		if (np == NULL)
			goto nomem;
		w->pool = np;
		w->poolcap = ncap;
	}
	memcpy(w->pool + w->poollen, s, len);
	h = w->nstr++;
	w->strs[h].off = w->poollen;
	w->strs[h].len = (uint32_t)len;
	w->strs[h].slot = 0;
	w->poollen += len;
	if (w->nstr > (w->hashmask + 1) / 2) {
		if (rehash(w) < 0)
			goto nomem;
	} else {
		w->strs[h].next = w->hash[b & w->hashmask];
		w->hash[b & w->hashmask] = h;
	}
	return h;
nomem:
	w->err = -MT_E_NOMEM;
	return 0;
}

uint32_t
mt_fxt_cstr(struct mt_fxt *w, const char *s)
{
	return mt_fxt_str(w, s, strlen(s));
}

/*
 * The string-table index of handle @h for the record being built,
 * registering it (string record) first if its slot was lost.  0 for the
 * empty string.  str_ref_new() registers it.
 */
static uint16_t
str_ref_new(struct mt_fxt *w, uint32_t h)
{
	struct fxt_str *s = &w->strs[h];
	uint32_t slot;
	size_t words;

	if (w->str_next <= w->max_strings) {
		slot = w->str_next++;
	} else {
		/* Full: evict the next slot not used by this record. */
		do {
			if (++w->str_hand > w->max_strings)
				w->str_hand = 1;
		} while (w->slot_stamp[w->str_hand] == w->stamp);
		slot = w->str_hand;
	}
	w->slot_str[slot] = h;
	w->slot_stamp[slot] = w->stamp;
	s->slot = (uint16_t)slot;
	words = 1 + (s->len + 7) / 8;
	if (!reserve(w, words))
		return 0;
	put64(w, REC_STRING | (uint64_t)words << 4 | (uint64_t)slot << 16 |
	    (uint64_t)s->len << 32);
	putbytes(w, w->pool + s->off, s->len);
	return (uint16_t)slot;
}

static inline uint16_t
str_ref(struct mt_fxt *w, uint32_t h)
{
	uint32_t slot;

	if (h == 0 || h >= w->nstr)
		return 0;
	slot = w->strs[h].slot;
	if (slot != 0 && w->slot_str[slot] == h) {
		w->slot_stamp[slot] = w->stamp;
		return (uint16_t)slot;
	}
	return str_ref_new(w, h);
}

uint32_t
mt_fxt_thread(struct mt_fxt *w, uint64_t pkoid, uint64_t tkoid)
{
	uint32_t h;

	if (w == NULL || w->err)
		return 0;
	if (pkoid == 0 || tkoid == 0 || pkoid >> 32 || tkoid >> 32) {
		w->err = -MT_E_INVAL;
		return 0;
	}
	if (w->nthr == w->capthr &&
	    grow((void **)&w->thrs, &w->capthr, sizeof(*w->thrs)) < 0) {
		w->err = -MT_E_NOMEM;
		return 0;
	}
	h = w->nthr++;
	w->thrs[h].pkoid = pkoid;
	w->thrs[h].tkoid = tkoid;
	w->thrs[h].slot = 0;
	return h;
}

/* Like str_ref, for the thread table (thread records). */
static uint8_t
thr_ref(struct mt_fxt *w, uint32_t h)
{
	struct fxt_thr *t;
	uint32_t slot;

	if (h == 0 || h >= w->nthr)
		return 0;
	t = &w->thrs[h];
	if (t->slot != 0 && w->slot_thr[t->slot] == h) {
		w->thr_stamp[t->slot] = w->stamp;
		return t->slot;
	}
	if (w->thr_next <= w->max_threads) {
		slot = w->thr_next++;
	} else {
		do {
			if (++w->thr_hand > w->max_threads)
				w->thr_hand = 1;
		} while (w->thr_stamp[w->thr_hand] == w->stamp);
		slot = w->thr_hand;
	}
	w->slot_thr[slot] = h;
	w->thr_stamp[slot] = w->stamp;
	t->slot = (uint8_t)slot;
	if (!reserve(w, 3))
		return 0;
	put64(w, REC_THREAD | 3ull << 4 | (uint64_t)slot << 16);
	put64(w, t->pkoid);
	put64(w, t->tkoid);
	return (uint8_t)slot;
}

/* An argument as written: header fields and the words that follow. */
struct arg_enc {
	uint64_t hdr;		/* header word without the size */
	uint64_t val;		/* second word, if words == 2 */
	unsigned words;		/* 1 or 2 */
};

/* Resolve the string refs of @a (may write string records). */
static void
arg_encode(struct mt_fxt *w, const struct mt_fxt_arg *a, struct arg_enc *e)
{
	uint64_t name = str_ref(w, a->name);

	e->words = 1;
	e->val = 0;
	switch (a->type) {
	case MT_FXT_ARG_INT:
		if (a->v.i >= INT32_MIN && a->v.i <= INT32_MAX) {
			e->hdr = ARGT_I32 | (uint64_t)(uint32_t)a->v.i << 32;
		} else {
			e->hdr = ARGT_I64;
			e->val = (uint64_t)a->v.i;
			e->words = 2;
		}
		break;
	case MT_FXT_ARG_UINT:
		if (a->v.u <= UINT32_MAX) {
			e->hdr = ARGT_U32 | a->v.u << 32;
		} else {
			e->hdr = ARGT_U64;
			e->val = a->v.u;
			e->words = 2;
		}
		break;
	case MT_FXT_ARG_DOUBLE:
		e->hdr = ARGT_DOUBLE;
		memcpy(&e->val, &a->v.d, 8);
		e->words = 2;
		break;
	case MT_FXT_ARG_STR:
		e->hdr = ARGT_STR | (uint64_t)str_ref(w, a->v.str) << 32;
		break;
	case MT_FXT_ARG_PTR:
	case MT_FXT_ARG_KOID:
		e->hdr = a->type == MT_FXT_ARG_PTR ? ARGT_PTR : ARGT_KOID;
		e->val = a->v.u;
		e->words = 2;
		break;
	case MT_FXT_ARG_BOOL:
		e->hdr = ARGT_BOOL | (uint64_t)(a->v.i != 0) << 32;
		break;
	case MT_FXT_ARG_NULL:
	default:
		e->hdr = ARGT_NULL;
		break;
	}
	e->hdr |= (uint64_t)e->words << 4 | name << 16;
}

static void
arg_put(struct mt_fxt *w, const struct arg_enc *e)
{
	put64(w, e->hdr);
	if (e->words == 2)
		put64(w, e->val);
}

static void
event(struct mt_fxt *w, unsigned type, uint32_t thread, uint32_t cat,
    uint32_t name, uint64_t ts, const struct mt_fxt_arg *args,
    unsigned nargs, int nextra, uint64_t extra)
{
	struct arg_enc enc[MT_FXT_MAX_ARGS];
	uint64_t tref, cref, nref;
	uint8_t *p;
	size_t words;
	unsigned i;

	if (w == NULL || w->err)
		return;
	if (nargs > MT_FXT_MAX_ARGS)
		nargs = MT_FXT_MAX_ARGS;
	w->stamp++;
	tref = thr_ref(w, thread);
	cref = str_ref(w, cat);
	nref = str_ref(w, name);
	words = 2 + (size_t)nextra;
	for (i = 0; i < nargs; i++) {
		arg_encode(w, &args[i], &enc[i]);
		words += enc[i].words;
	}
	if (!reserve(w, words))
		return;
	/* Through a local pointer: the buffer's bytes alias w's fields. */
	p = le64(w->buf + w->len, REC_EVENT | (uint64_t)words << 4 |
	    (uint64_t)type << 16 | (uint64_t)nargs << 20 | tref << 24 |
	    cref << 32 | nref << 48);
	p = le64(p, ts);
	for (i = 0; i < nargs; i++) {
		p = le64(p, enc[i].hdr);
		if (enc[i].words == 2)
			p = le64(p, enc[i].val);
	}
	if (nextra)
		p = le64(p, extra);
	w->len += words * 8;
}

void
mt_fxt_begin(struct mt_fxt *w, uint32_t thread, uint32_t cat, uint32_t name,
    uint64_t ts, const struct mt_fxt_arg *args, unsigned nargs)
{
	event(w, EV_BEGIN, thread, cat, name, ts, args, nargs, 0, 0);
}

void
mt_fxt_end(struct mt_fxt *w, uint32_t thread, uint32_t cat, uint32_t name,
    uint64_t ts, const struct mt_fxt_arg *args, unsigned nargs)
{
	event(w, EV_END, thread, cat, name, ts, args, nargs, 0, 0);
}

void
mt_fxt_complete(struct mt_fxt *w, uint32_t thread, uint32_t cat,
    uint32_t name, uint64_t ts, uint64_t end_ts,
    const struct mt_fxt_arg *args, unsigned nargs)
{
	event(w, EV_COMPLETE, thread, cat, name, ts, args, nargs, 1,
	    end_ts < ts ? ts : end_ts);
}

void
mt_fxt_counter(struct mt_fxt *w, uint32_t thread, uint32_t cat,
    uint32_t name, uint64_t ts, uint64_t id, const struct mt_fxt_arg *args,
    unsigned nargs)
{
	event(w, EV_COUNTER, thread, cat, name, ts, args, nargs, 1, id);
}

void
mt_fxt_kobj(struct mt_fxt *w, enum mt_fxt_kobj_type type, uint64_t koid,
    uint64_t pkoid, const char *name, size_t len,
    const struct mt_fxt_arg *args, unsigned nargs)
{
	struct arg_enc enc[MT_FXT_MAX_ARGS + 1];
	unsigned n = 0, i;
	size_t words;

	if (w == NULL || w->err)
		return;
	if (nargs > MT_FXT_MAX_ARGS - 1)
		nargs = MT_FXT_MAX_ARGS - 1;
	len = utf8_cut(name, len, MT_FXT_MAX_STRLEN);
	w->stamp++;
	if (type == MT_FXT_KOBJ_THREAD) {
		struct mt_fxt_arg pa = {
			.name = mt_fxt_cstr(w, "process"),
			.type = MT_FXT_ARG_KOID,
			.v.u = pkoid,
		};

		arg_encode(w, &pa, &enc[n++]);
	}
	for (i = 0; i < nargs; i++)
		arg_encode(w, &args[i], &enc[n++]);
	words = 2 + (len + 7) / 8;
	for (i = 0; i < n; i++)
		words += enc[i].words;
	if (!reserve(w, words))
		return;
	put64(w, REC_KOBJ | (uint64_t)words << 4 | (uint64_t)type << 16 |
	    (len ? (0x8000 | (uint64_t)len) : 0) << 24 | (uint64_t)n << 40);
	put64(w, koid);
	if (len)
		putbytes(w, name, len);
	for (i = 0; i < n; i++)
		arg_put(w, &enc[i]);
}

int
mt_fxt_new(struct mt_fxt **wp, mt_fxt_sink_fn sink, void *ctx,
    const struct mt_fxt_limits *lim, const char *provider)
{
	struct mt_fxt *w;
	size_t plen;

	if (wp == NULL || sink == NULL)
		return -MT_E_INVAL;
	*wp = NULL;
	if (lim && ((lim->max_strings &&
	    lim->max_strings < MT_FXT_MIN_STRINGS) ||
	    lim->max_strings > MT_FXT_MAX_STRINGS ||
	    lim->max_threads > MT_FXT_MAX_THREADS))
		return -MT_E_INVAL;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return -MT_E_NOMEM;
	w->sink = sink;
	w->ctx = ctx;
	w->max_strings = lim && lim->max_strings ? lim->max_strings :
	    MT_FXT_MAX_STRINGS;
	w->max_threads = lim && lim->max_threads ? lim->max_threads :
	    MT_FXT_MAX_THREADS;
	w->str_next = w->thr_next = 1;
	w->nstr = w->nthr = 1;	/* handle 0 is "none" */
	w->buf = malloc(BUF_CAP);
	/*
	 * Not cleared: slots are taken in order (str_next), and a slot is
	 * read only once taken (a string's slot, or any slot by the
	 * eviction once all are taken), so pages are touched only as slots
	 * are used: a short trace faults in none of the 384 KiB that
	 * calloc() would have cleared.
	 */
	w->slot_str = malloc(((size_t)w->max_strings + 1) * sizeof(uint32_t));
	w->slot_stamp = malloc(((size_t)w->max_strings + 1) *
	    sizeof(uint64_t));
	if (w->buf == NULL || w->slot_str == NULL || w->slot_stamp == NULL ||
	    grow((void **)&w->strs, &w->capstr, sizeof(*w->strs)) < 0 ||
	    grow((void **)&w->thrs, &w->capthr, sizeof(*w->thrs)) < 0 ||
	    rehash(w) < 0) {
		mt_fxt_free(w);
		return -MT_E_NOMEM;
	}
	if (provider == NULL)
		provider = "";
	plen = strlen(provider);
	if (plen > 255)
		plen = 255;
	put64(w, MT_FXT_MAGIC);
	/* Provider info (metadata type 1): id 0, name inline. */
	put64(w, REC_METADATA | (uint64_t)(1 + (plen + 7) / 8) << 4 |
	    1ull << 16 | (uint64_t)plen << 52);
	putbytes(w, provider, plen);
	/* Provider section (metadata type 2): id 0. */
	put64(w, REC_METADATA | 1ull << 4 | 2ull << 16);
	/* Initialization: ticks per second. */
	put64(w, REC_INIT | 2ull << 4);
	put64(w, 1000000000ull);
	*wp = w;
	return 0;
}

int
mt_fxt_error(const struct mt_fxt *w)
{
	return w ? w->err : -MT_E_INVAL;
}

uint64_t
mt_fxt_bytes(const struct mt_fxt *w)
{
	return w ? w->flushed + w->len : 0;
}

int
mt_fxt_free(struct mt_fxt *w)
{
	int rc;

	if (w == NULL)
		return 0;
	rc = w->buf ? mt_fxt_flush(w) : w->err;
	free(w->buf);
	free(w->strs);
	free(w->pool);
	free(w->hash);
	free(w->slot_str);
	free(w->slot_stamp);
	free(w->thrs);
	free(w);
	return rc;
}
