/* SPDX-License-Identifier: MIT */
/*
 * The walk cache (walk.h): the length decoder (ild.h) reads code in place
 * where the image has a section's bytes in memory (walk_cache_set_code),
 * else through libipt's image-section cache, once per (block start IP,
 * section).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <intel-pt.h>

#include "ild.h"
#include "walk.h"

#define WALK_MAX_INSN	512	/* instructions per walk before chaining */
#define WALK_READ	512	/* bytes read from the section at once */
#define WALK_FRONT	16384	/* entries in the direct-mapped front cache */
#define WALK_MEMO	1024	/* walk_leaves answers kept (direct-mapped) */

struct walk_cache {
	struct pt_image_section_cache *isc;	/* not owned */
	walk_fn_lookup fn;	/* function ranges, may be NULL */
	void *fnarg;
	walk_code_fn code;	/* sections' bytes in memory, may be NULL */
	void *codearg;
	struct walk *w;		/* walks */
	uint32_t nw, capw;
	struct walk_tr *tr;	/* transitions of all walks */
	uint32_t ntr, captr;
	uint64_t decoded;	/* instructions decoded by walks */
	uint32_t tags;		/* the last tag given (walk_tag_new) */
	uint32_t *front;	/* direct-mapped cache before the hash:
				 * walk index + 1, 0 empty */
	struct walk_memo {
		uint64_t from, to;	/* from 0: empty */
		int dest;		/* walk_leaves(from, to) */
	} *memo;		/* indirect jumps' answers (the function
				 * lookups are the run's, never change) */
	uint32_t *slot;		/* hash: walk index + 1, 0 empty */
	uint32_t nslot;		/* power of two */
	/* Code bytes read last, kept for the next walks (walks start near
	 * each other, and a read through the section cache takes its lock
	 * and looks the section up): buf_have bytes of section buf_isid
	 * from buf_base (buf_have 0: none). */
	int buf_isid;
	uint64_t buf_base;
	size_t buf_have;
	uint8_t buf[WALK_READ];
};

struct walk_cache *
walk_cache_new(struct pt_image_section_cache *isc, walk_fn_lookup fn,
    void *fnarg)
{
	struct walk_cache *wc = calloc(1, sizeof(*wc));

	if (wc == NULL)
		return NULL;
	wc->isc = isc;
	wc->fn = fn;
	wc->fnarg = fnarg;
	wc->nslot = 1u << 12;
	wc->slot = calloc(wc->nslot, sizeof(*wc->slot));
	wc->front = calloc(WALK_FRONT, sizeof(*wc->front));
	wc->memo = calloc(WALK_MEMO, sizeof(*wc->memo));
	if (wc->slot == NULL || wc->front == NULL || wc->memo == NULL) {
		walk_cache_free(wc);
		return NULL;
	}
	return wc;
}

void
walk_cache_set_code(struct walk_cache *wc, walk_code_fn code, void *arg)
{
	wc->code = code;
	wc->codearg = arg;
}

void
walk_cache_free(struct walk_cache *wc)
{
	if (wc == NULL)
		return;
	if (wc->w != NULL)
		munmap(wc->w, wc->capw * sizeof(*wc->w));
	if (wc->tr != NULL)
		munmap(wc->tr, wc->captr * sizeof(*wc->tr));
	free(wc->slot);
	free(wc->front);
	free(wc->memo);
	free(wc);
}

const struct walk_tr *
walk_tr_at(const struct walk_cache *wc, uint32_t i)
{
	return &wc->tr[i];
}

const struct walk *
walk_array(const struct walk_cache *wc)
{
	return wc->w;
}

const struct walk_tr *
walk_tr_array(const struct walk_cache *wc)
{
	return wc->tr;
}

static int
walk_dest(const struct walk_cache *wc, uint64_t from, uint64_t to)
{
	uint64_t lo, hi;

	if (wc->fn == NULL)
		return WL_UNKNOWN;
	if (!wc->fn(wc->fnarg, from, &lo, &hi))
		return wc->fn(wc->fnarg, to, &lo, &hi) ? WL_ENTERS : WL_UNKNOWN;
	if (to >= lo && to < hi)
		return WL_INSIDE;
	return wc->fn(wc->fnarg, to, &lo, &hi) ? WL_LEAVES : WL_LEAVES_UNKNOWN;
}

int
walk_leaves(const struct walk_cache *wc, uint64_t from, uint64_t to)
{
	struct walk_memo *m = &wc->memo[(uint32_t)((from ^ (to << 7) ^
	    (to >> 9)) * 0x9e3779b1u) >> 22];

	if (m->from == from && m->to == to && from != 0)
		return m->dest;
	m->from = from;
	m->to = to;
	m->dest = walk_dest(wc, from, to);
	return m->dest;
}

static inline uint32_t
walk_hash(uint64_t ip, int isid)
{
	uint64_t h = (ip ^ ((uint64_t)(uint32_t)isid << 48)) *
	    0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32);
}

static int
walk_rehash(struct walk_cache *wc)
{
	uint32_t n = wc->nslot * 2, i, j;
	uint32_t *s = calloc(n, sizeof(*s));

	if (s == NULL)
		return -1;
	for (i = 0; i < wc->nw; i++) {
		j = walk_hash(wc->w[i].ip, wc->w[i].isid) & (n - 1);
		while (s[j] != 0)
			j = (j + 1) & (n - 1);
		s[j] = i + 1;
	}
	free(wc->slot);
	wc->slot = s;
	wc->nslot = n;
	return 0;
}

/* libipt's execution mode as a bit width for the decoder. */
static int
walk_bits(int mode)
{
	return mode == ptem_16bit ? 16 : mode == ptem_32bit ? 32 : 64;
}

/*
 * The array at @p grown from @old to @new bytes (whole pages; @p NULL:
 * made): a mapping of its own, which mremap moves without a copy, so
 * the array it grew from does not stay resident in the heap (mruby:
 * the 2,048 walks before the doubling, 128 KiB; bench/RESULTS.md,
 * session 10).  Page-aligned, so a walk is a cache line.  NULL on
 * failure, @p left as it was.
 */
static void *
walk_grow(void *p, size_t old, size_t new)
{
	void *q = p == NULL ? mmap(NULL, new, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) :
	    mremap(p, old, new, MREMAP_MAYMOVE);

	return q == MAP_FAILED ? NULL : q;
}

static struct walk_tr *
walk_new_tr(struct walk_cache *wc)
{
	if (wc->ntr == wc->captr) {
		uint32_t n = wc->captr ? wc->captr * 2 : 1024;
		struct walk_tr *t = walk_grow(wc->tr,
		    wc->captr * sizeof(*t), n * sizeof(*t));

		if (t == NULL)
			return NULL;
		wc->tr = t;
		wc->captr = n;
	}
	return &wc->tr[wc->ntr++];
}

/*
 * Decode from w->ip the way libipt proceeds without trace: through
 * direct calls and jumps (a call to the next instruction is no transfer
 * of control and is not recorded), stopping at the first instruction that
 * needs trace, at the end of the section's bytes, or after WALK_MAX_INSN.
 */
static int
walk_fill(struct walk_cache *wc, struct walk *w, int mode)
{
	uint64_t ip = w->ip, base = wc->buf_base;
	size_t have = wc->buf_isid == w->isid ? wc->buf_have : 0;
	const uint8_t *code = NULL, *bytes = wc->buf;
	uint64_t size = 0;
	struct ild_insn in;
	int r, k, bits = walk_bits(mode);

	/* the section in memory: all of it is "read" (what the section
	 * cache would give, from any ip in it) */
	if (wc->code != NULL &&
	    wc->code(wc->codearg, w->isid, &code, &base, &size) == 0) {
		bytes = code;
		have = (size_t)size;
	}
	w->tr = wc->ntr;
	for (;;) {
		if (w->len == WALK_MAX_INSN) {
			w->term = WK_NONE;
			w->cont = ip;
			return 0;
		}
		if (code != NULL) {
			if (ip < base || ip - base >= have)
				break;	/* outside the section: no bytes */
		} else if (have == 0 || ip < base || ip - base >= have ||
		    have - (ip - base) < 16) {
			/* 16 bytes past ip (an instruction has 15 at
			 * most), or a read (what the section has) */
			r = pt_iscache_read(wc->isc, wc->buf, sizeof(wc->buf),
			    w->isid, ip);
			wc->buf_have = 0;
			if (r <= 0)
				break;
			base = wc->buf_base = ip;
			have = wc->buf_have = (size_t)r;
			wc->buf_isid = w->isid;
		}
		if (ild_decode(bytes + (ip - base), have - (size_t)(ip - base),
		    ip, bits, &in) < 0)
			break;
		w->len++;
		wc->decoded++;
		k = in.cls;
		if (k == WK_NONE) {
			ip += in.len;
			continue;
		}
		if ((k == WK_CALL || k == WK_JMP) && in.rel) {
			struct walk_tr *t;

			if (k == WK_CALL && in.target == ip + in.len) {
				ip = in.target;
				continue;
			}
			t = walk_new_tr(wc);
			if (t == NULL)
				return -1;
			t->idx = w->len - 1;
			t->kind = (uint8_t)k;
			t->size = in.len;
			t->from = ip;
			t->to = in.target;
			t->leaves = (uint8_t)walk_leaves(wc, ip, in.target);
			w->ntr++;
			ip = in.target;
			continue;
		}
		w->term = (uint8_t)k;
		w->term_size = in.len;
		w->term_ip = ip;
		w->term_target = in.rel ? in.target : 0;
		if (k == WK_COND) {
			w->leaves = (uint8_t)walk_leaves(wc, ip, in.target);
			if (!(w->leaves & WL_LEAVES))
				w->quiet = WQ_COND | (w->ntr == 0 ? WQ_NO_TR : 0);
		}
		w->cont = 0;
		return 0;
	}
	/* No bytes or no instruction here: libipt stops too. */
	w->term = WK_NONE;
	w->cont = 0;
	return 0;
}

/* Hash lookup and, on a miss, a new walk; kept out of walk_get so the
 * common front-cache hit costs no register saves. */
static __attribute__((noinline)) const struct walk *
walk_get_slow(struct walk_cache *wc, uint64_t ip, int isid, int mode,
    uint32_t f)
{
	uint32_t j = walk_hash(ip, isid) & (wc->nslot - 1), i;
	struct walk *w;

	while ((i = wc->slot[j]) != 0) {
		w = &wc->w[i - 1];
		if (w->ip == ip && w->isid == isid) {
			wc->front[f] = i;
			return w;
		}
		j = (j + 1) & (wc->nslot - 1);
	}
	if (wc->nw == wc->capw) {
		uint32_t n = wc->capw ? wc->capw * 2 : 1024;
		struct walk *nw = walk_grow(wc->w, wc->capw * sizeof(*nw),
		    n * sizeof(*nw));

		if (nw == NULL)
			return NULL;
		wc->w = nw;
		wc->capw = n;
	}
	w = &wc->w[wc->nw];
	memset(w, 0, sizeof(*w));
	w->ip = ip;
	w->isid = isid;
	if (walk_fill(wc, w, mode) < 0)
		return NULL;
	wc->slot[j] = ++wc->nw;
	if (wc->nw * 2 > wc->nslot && walk_rehash(wc) < 0)
		return NULL;
	return &wc->w[wc->nw - 1];
}

const struct walk *
walk_get(struct walk_cache *wc, uint64_t ip, int isid, int mode)
{
	uint32_t f = (uint32_t)(ip ^ (ip >> 12)) & (WALK_FRONT - 1);
	uint32_t i = wc->front[f];

	if (i != 0 && wc->w[i - 1].ip == ip && wc->w[i - 1].isid == isid)
		return &wc->w[i - 1];
	return walk_get_slow(wc, ip, isid, mode, f);
}

uint32_t
walk_tag_new(struct walk_cache *wc)
{
	return ++wc->tags;
}

void
walk_link(struct walk_cache *wc, uint32_t from, int which, uint32_t to,
    uint32_t tag)
{
	struct walk *w = &wc->w[from];

	if (w->tag != tag) {
		w->succ[0] = w->succ[1] = 0;
		w->tag = tag;
	}
	w->succ[which] = to + 1;
}

int
walk_insn(struct walk_cache *wc, const uint8_t *raw, size_t size,
    uint64_t ip, int mode, uint64_t *target)
{
	struct ild_insn in;

	(void)wc;
	*target = 0;
	if (ild_decode(raw, size, ip, walk_bits(mode), &in) < 0)
		return WK_NONE;
	if (in.rel)
		*target = in.target;
	if (in.cls == WK_CALL && in.rel && in.target == ip + in.len)
		return WK_NONE;
	return in.cls;
}

void
walk_cache_counts(const struct walk_cache *wc, uint64_t *walks,
    uint64_t *insns)
{
	*walks = wc->nw;
	*insns = wc->decoded;
}
