/* SPDX-License-Identifier: MIT */
/*
 * The walk cache (walk.h): capstone decodes code bytes read through
 * libipt's image-section cache, once per (block start IP, section).
 */
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>
#include <intel-pt.h>

#include "walk.h"

#define WALK_MAX_INSN	512	/* instructions per walk before chaining */
#define WALK_READ	256	/* bytes read from the section at once */

struct walk_cache {
	struct pt_image_section_cache *isc;	/* not owned */
	walk_fn_lookup fn;	/* function ranges, may be NULL */
	void *fnarg;
	csh cs[3];		/* capstone handles: 16, 32, 64 bit; 0 unused */
	cs_insn *insn[3];	/* capstone's instruction buffer per handle */
	struct walk *w;		/* walks */
	uint32_t nw, capw;
	struct walk_tr *tr;	/* transitions of all walks */
	uint32_t ntr, captr;
	uint64_t decoded;	/* instructions decoded by walks */
	uint32_t *slot;		/* hash: walk index + 1, 0 empty */
	uint32_t nslot;		/* power of two */
	uint8_t buf[WALK_READ];	/* code bytes being decoded */
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
	if (wc->slot == NULL) {
		free(wc);
		return NULL;
	}
	return wc;
}

void
walk_cache_free(struct walk_cache *wc)
{
	int i;

	if (wc == NULL)
		return;
	for (i = 0; i < 3; i++) {
		if (wc->insn[i] != NULL)
			cs_free(wc->insn[i], 1);
		if (wc->cs[i] != 0)
			cs_close(&wc->cs[i]);
	}
	free(wc->w);
	free(wc->tr);
	free(wc->slot);
	free(wc);
}

const struct walk_tr *
walk_tr_at(const struct walk_cache *wc, uint32_t i)
{
	return &wc->tr[i];
}

int
walk_leaves(const struct walk_cache *wc, uint64_t from, uint64_t to)
{
	uint64_t lo, hi;

	if (wc->fn == NULL || !wc->fn(wc->fnarg, from, &lo, &hi))
		return 2;
	return to < lo || to >= hi;
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

static cs_insn *
walk_cs(struct walk_cache *wc, int mode, csh *h)
{
	int m = mode == ptem_16bit ? 0 : mode == ptem_32bit ? 1 : 2;
	static const cs_mode csm[3] = { CS_MODE_16, CS_MODE_32, CS_MODE_64 };

	if (wc->cs[m] == 0) {
		if (cs_open(CS_ARCH_X86, csm[m], &wc->cs[m]) != CS_ERR_OK)
			return NULL;
		wc->insn[m] = cs_malloc(wc->cs[m]);
		if (wc->insn[m] == NULL) {
			cs_close(&wc->cs[m]);
			wc->cs[m] = 0;
			return NULL;
		}
	}
	*h = wc->cs[m];
	return wc->insn[m];
}

/*
 * Target of a relative branch: the displacement is the instruction's last
 * field, 1, 2 or 4 bytes after the opcode (E8, E9, EB, 70-7F, 0F 80-8F,
 * E0-E3).  Returns 0 for other encodings (indirect: FF /2, FF /4, ...).
 * Capstone's detail mode would tell the same, at several times the cost.
 */
static uint64_t
walk_rel_target(const cs_insn *in, int mode)
{
	const uint8_t *b = in->bytes;
	size_t n = in->size, i = 0, dsz;
	uint64_t t;
	int64_t d;

	while (i < n && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf2 ||
	    b[i] == 0xf3 || b[i] == 0x2e || b[i] == 0x3e || b[i] == 0x26 ||
	    b[i] == 0x36 || b[i] == 0x64 || b[i] == 0x65 || b[i] == 0xf0))
		i++;
	if (mode == ptem_64bit && i < n && (b[i] & 0xf0) == 0x40)
		i++;
	if (i >= n)
		return 0;
	if (b[i] == 0xe8 || b[i] == 0xe9 || b[i] == 0xeb ||
	    (b[i] >= 0x70 && b[i] <= 0x7f) || (b[i] >= 0xe0 && b[i] <= 0xe3))
		i += 1;
	else if (b[i] == 0x0f && i + 1 < n && (b[i + 1] & 0xf0) == 0x80)
		i += 2;
	else
		return 0;
	dsz = n - i;
	if (dsz == 1)
		d = (int8_t)b[i];
	else if (dsz == 2)
		d = (int16_t)(b[i] | b[i + 1] << 8);
	else if (dsz == 4)
		d = (int32_t)((uint32_t)b[i] | (uint32_t)b[i + 1] << 8 |
		    (uint32_t)b[i + 2] << 16 | (uint32_t)b[i + 3] << 24);
	else
		return 0;
	t = in->address + n + (uint64_t)d;
	if (mode == ptem_32bit)
		t &= 0xffffffffull;
	else if (mode == ptem_16bit || dsz == 2)
		t &= 0xffffull;
	return t;
}

/* Classify @in; set *@target for direct branches (0 if indirect). */
static int
walk_classify(const cs_insn *in, int mode, uint64_t *target)
{
	*target = 0;
	switch (in->id) {
	case X86_INS_CALL:
		*target = walk_rel_target(in, mode);
		return WK_CALL;
	case X86_INS_JMP:
		*target = walk_rel_target(in, mode);
		return WK_JMP;
	case X86_INS_RET:
		return WK_RET;
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
		return WK_SYSCALL;
	case X86_INS_SYSRET:
	case X86_INS_SYSEXIT:
		return WK_SYSRET;
	case X86_INS_INT:
	case X86_INS_INT3:
	case X86_INS_INTO:
	case X86_INS_INT1:
		return WK_INT;
	case X86_INS_IRET:
	case X86_INS_IRETD:
	case X86_INS_IRETQ:
		return WK_IRET;
	case X86_INS_LCALL:
	case X86_INS_LJMP:
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_VMLAUNCH:
	case X86_INS_VMRESUME:
	case X86_INS_VMCALL:
	case X86_INS_VMMCALL:
	case X86_INS_UD2:
		return WK_FAR;
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE:
	case X86_INS_JB: case X86_INS_JCXZ: case X86_INS_JECXZ:
	case X86_INS_JE: case X86_INS_JGE: case X86_INS_JG:
	case X86_INS_JLE: case X86_INS_JL: case X86_INS_JNE:
	case X86_INS_JNO: case X86_INS_JNP: case X86_INS_JNS:
	case X86_INS_JO: case X86_INS_JP: case X86_INS_JRCXZ:
	case X86_INS_JS: case X86_INS_LOOP: case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
		*target = walk_rel_target(in, mode);
		return WK_COND;
	default:
		return WK_NONE;
	}
}

static struct walk_tr *
walk_new_tr(struct walk_cache *wc)
{
	if (wc->ntr == wc->captr) {
		uint32_t n = wc->captr ? wc->captr * 2 : 1024;
		struct walk_tr *t = realloc(wc->tr, n * sizeof(*t));

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
	uint64_t ip = w->ip, base = 0, target;
	size_t have = 0;
	cs_insn *in;
	csh h;
	int r, k;

	in = walk_cs(wc, mode, &h);
	if (in == NULL)
		return -1;
	w->tr = wc->ntr;
	for (;;) {
		const uint8_t *code;
		size_t size;
		uint64_t addr = ip;

		if (w->len == WALK_MAX_INSN) {
			w->term = WK_NONE;
			w->cont = ip;
			return 0;
		}
		if (have == 0 || ip < base || ip - base >= have ||
		    have - (ip - base) < 16) {
			r = pt_iscache_read(wc->isc, wc->buf, sizeof(wc->buf),
			    w->isid, ip);
			if (r <= 0)
				break;
			base = ip;
			have = (size_t)r;
		}
		code = wc->buf + (ip - base);
		size = have - (size_t)(ip - base);
		if (!cs_disasm_iter(h, &code, &size, &addr, in))
			break;
		w->len++;
		wc->decoded++;
		k = walk_classify(in, mode, &target);
		if (k == WK_NONE) {
			ip += in->size;
			continue;
		}
		if ((k == WK_CALL || k == WK_JMP) && target != 0) {
			if (k == WK_CALL && target == ip + in->size) {
				ip = target;
				continue;
			}
			struct walk_tr *t = walk_new_tr(wc);

			if (t == NULL)
				return -1;
			t->idx = w->len - 1;
			t->kind = (uint8_t)k;
			t->from = ip;
			t->to = target;
			t->leaves = (uint8_t)walk_leaves(wc, ip, target);
			w->ntr++;
			ip = target;
			continue;
		}
		w->term = (uint8_t)k;
		w->term_size = in->size;
		w->term_ip = ip;
		w->term_target = target;
		if (k == WK_COND)
			w->leaves = (uint8_t)walk_leaves(wc, ip, target);
		w->cont = 0;
		return 0;
	}
	/* No bytes or no instruction here: libipt stops too. */
	w->term = WK_NONE;
	w->cont = 0;
	return 0;
}

const struct walk *
walk_get(struct walk_cache *wc, uint64_t ip, int isid, int mode)
{
	uint32_t j = walk_hash(ip, isid) & (wc->nslot - 1), i;
	struct walk *w;

	while ((i = wc->slot[j]) != 0) {
		w = &wc->w[i - 1];
		if (w->ip == ip && w->isid == isid)
			return w;
		j = (j + 1) & (wc->nslot - 1);
	}
	if (wc->nw == wc->capw) {
		uint32_t n = wc->capw ? wc->capw * 2 : 1024;
		struct walk *nw = realloc(wc->w, n * sizeof(*nw));

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

int
walk_insn(struct walk_cache *wc, const uint8_t *raw, size_t size,
    uint64_t ip, int mode, uint64_t *target)
{
	const uint8_t *code = raw;
	uint64_t addr = ip;
	cs_insn *in;
	csh h;
	int k;

	*target = 0;
	in = walk_cs(wc, mode, &h);
	if (in == NULL || !cs_disasm_iter(h, &code, &size, &addr, in))
		return WK_NONE;
	k = walk_classify(in, mode, target);
	if (k == WK_CALL && *target == ip + in->size)
		return WK_NONE;
	return k;
}

void
walk_cache_counts(const struct walk_cache *wc, uint64_t *walks,
    uint64_t *insns)
{
	*walks = wc->nw;
	*insns = wc->decoded;
}
