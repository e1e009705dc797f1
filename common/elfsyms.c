/* SPDX-License-Identifier: MIT */
/*
 * The function-symbol table of an ELF file handle (elffile.h): symbols of
 * .symtab and .dynsym, synthetic "name@plt" symbols for PLT stubs, sorted
 * and de-duplicated by start, and the lookups by address.  Read on first
 * use through libelf's bounded accessors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>
#include <libelf.h>

#include "elffile-int.h"
#include "err.h"

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif

/* A candidate symbol before sorting and de-duplication. */
struct cand {
	struct mt_elf_sym s;	/* the symbol */
	size_t order;		/* position in reading order (tie-break) */
	int bind;		/* 0 global, 1 weak, 2 local (alias rank) */
};

struct cands {
	struct cand *v;		/* owned */
	size_t n, cap;
};

static int
cands_add(struct cands *c, const struct mt_elf_sym *s, int bind)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct cand *v = realloc(c->v, cap * sizeof(*v));

		if (v == NULL)
			return -MT_E_NOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n].s = *s;
	c->v[c->n].order = c->n;
	c->v[c->n].bind = bind;
	c->n++;
	return 0;
}

/* < 0 when @a is the better display name (see mt_elf_sym.alias). */
static int
alias_cmp(const struct cand *a, const struct cand *b)
{
	size_t ua = strspn(a->s.name, "_"), ub = strspn(b->s.name, "_");
	size_t la = strlen(a->s.name), lb = strlen(b->s.name);

	if (a->bind != b->bind)
		return a->bind - b->bind;
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (la != lb)
		return la < lb ? -1 : 1;
	return 0;
}

static const struct xsec *
xsec_by_idx(const struct mt_elf *e, size_t idx)
{
	size_t i;

	for (i = 0; i < e->nxsecs; i++)
		if (e->xsecs[i].idx == idx)
			return &e->xsecs[i];
	return NULL;
}

static const struct xsec *
xsec_by_addr(const struct mt_elf *e, uint64_t a)
{
	size_t lo = 0, hi = e->nxsecs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->xsecs[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (a - e->xsecs[lo - 1].addr < e->xsecs[lo - 1].size)
		return &e->xsecs[lo - 1];
	return NULL;
}

static int
read_symtab(struct mt_elf *e, Elf_Scn *scn, const GElf_Shdr *sh,
    struct cands *c)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	const char *file = NULL;	/* last STT_FILE name */
	int state = 0;	/* 0 nothing seen, 1 a symbol, 2 a file after one */
	size_t i, n;
	int rc;

	if (d == NULL || sh->sh_entsize == 0)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		struct mt_elf_sym s;
		int type, local;
		const char *name;

		if (gelf_getsym(d, (int)i, &sym) == NULL)
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_SECTION)
			continue;
		if (type == STT_FILE) {
			file = elf_strptr(e->elf, sh->sh_link, sym.st_name);
			if (state == 1)
				state = 2;
			continue;
		}
		local = GELF_ST_BIND(sym.st_info) == STB_LOCAL;
		s.file = file != NULL && (local || state != 2) ? file : NULL;
		if (state == 0)
			state = 1;
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    type != STT_NOTYPE)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		if (xsec_by_idx(e, sym.st_shndx) == NULL)
			continue;
		/* Annobin markers, as binutils skips them. */
		if (type == STT_NOTYPE && sym.st_size == 0 && local &&
		    GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN)
			continue;
		name = elf_strptr(e->elf, sh->sh_link, sym.st_name);
		if (name == NULL || name[0] == '\0')
			continue;
		s.start = sym.st_value;
		s.size = sym.st_size;
		s.end = 0;
		s.name = name;
		s.shndx = sym.st_shndx;
		s.kind = type == STT_NOTYPE ? MT_ELF_SYM_NOTYPE :
		    MT_ELF_SYM_FUNC;
		s.ifunc = type == STT_GNU_IFUNC;
		rc = cands_add(c, &s, GELF_ST_BIND(sym.st_info) == STB_GLOBAL ?
		    0 : GELF_ST_BIND(sym.st_info) == STB_WEAK ? 1 : 2);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* A GOT slot filled by a JUMP_SLOT or GLOB_DAT relocation. */
struct gotrel {
	uint64_t slot;		/* r_offset: GOT slot address */
	const char *name;	/* dynamic symbol's name (libelf-owned), or
				 * NULL for R_X86_64_IRELATIVE */
	uint64_t addend;	/* IRELATIVE: the IFUNC resolver's address */
};

static int
cmp_gotrel(const void *a, const void *b)
{
	const struct gotrel *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static const struct gotrel *
gotrel_find(const struct gotrel *v, size_t n, uint64_t slot)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].slot < slot)
			lo = mid + 1;
		else if (v[mid].slot > slot)
			hi = mid;
		else
			return &v[mid];
	}
	return NULL;
}

/* Collects the GOT relocations of every SHT_RELA section. */
static int
read_gotrels(struct mt_elf *e, struct gotrel **out, size_t *nout)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, lsh;
	struct gotrel *v = NULL;
	size_t n = 0, cap = 0;

	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		Elf_Data *d, *symd;
		Elf_Scn *lscn;
		size_t i, nr;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_RELA ||
		    sh.sh_entsize == 0)
			continue;
		lscn = elf_getscn(e->elf, sh.sh_link);
		if (lscn == NULL || gelf_getshdr(lscn, &lsh) == NULL ||
		    lsh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		symd = elf_getdata(lscn, NULL);
		if (d == NULL || symd == NULL)
			continue;
		nr = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < nr; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			unsigned t;
			const char *name;

			if (gelf_getrela(d, (int)i, &r) == NULL)
				break;
			t = (unsigned)GELF_R_TYPE(r.r_info);
			if (t == R_X86_64_IRELATIVE) {
				name = NULL;
			} else if (t == R_X86_64_JUMP_SLOT ||
			    t == R_X86_64_GLOB_DAT) {
				if (gelf_getsym(symd, (int)GELF_R_SYM(r.r_info),
				    &sym) == NULL)
					continue;
				name = elf_strptr(e->elf, lsh.sh_link,
				    sym.st_name);
				if (name == NULL || name[0] == '\0')
					continue;
			} else {
				continue;
			}
			if (n == cap) {
				struct gotrel *nv;

				cap = cap ? cap * 2 : 256;
				nv = realloc(v, cap * sizeof(*v));
				if (nv == NULL) {
					free(v);
					return -MT_E_NOMEM;
				}
				v = nv;
			}
			v[n].slot = r.r_offset;
			v[n].name = name;
			v[n].addend = (uint64_t)r.r_addend;
			n++;
		}
	}
	if (n > 0)
		qsort(v, n, sizeof(*v), cmp_gotrel);
	*out = v;
	*nout = n;
	return 0;
}

/*
 * Name of the symbol at @addr among the candidates @c, or a
 * "*ABS*+0xADDR" string kept on @e (NULL when out of memory).
 */
static const char *
ifunc_name(struct mt_elf *e, const struct cands *c, uint64_t addr)
{
	char buf[40], **v;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i].s.start == addr && c->v[i].s.kind == MT_ELF_SYM_FUNC)
			return c->v[i].s.name;
	v = realloc(e->abs_names, (e->nabs_names + 1) * sizeof(*v));
	if (v == NULL)
		return NULL;
	e->abs_names = v;
	snprintf(buf, sizeof(buf), "*ABS*+0x%llx", (unsigned long long)addr);
	v[e->nabs_names] = strdup(buf);
	return v[e->nabs_names] ? v[e->nabs_names++] : NULL;
}

/*
 * PLT stubs: each 16-byte (.plt, .plt.sec) or 8/16-byte (.plt.got) entry
 * that jumps through a GOT slot, "jmp *disp32(%rip)" (ff 25, maybe after
 * a bnd prefix or endbr64), is named after the symbol whose relocation
 * fills that slot.  A slot filled by an IRELATIVE relocation is named
 * after the IFUNC symbol at the resolver's address (memcpy@plt), else
 * "*ABS*+0xADDR@plt" as objdump does.  The lazy-binding PLT0 and IBT .plt entries (push and
 * jump to PLT0 only) get no name.  x86-64 only.
 */
static int
read_plt(struct mt_elf *e, struct cands *c, struct cands *plt)
{
	struct gotrel *rels = NULL;
	size_t nrels = 0, shstrndx, namesz = 0, i;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	char *p;
	int rc;

	if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return 0;
	rc = read_gotrels(e, &rels, &nrels);
	if (rc < 0 || nrels == 0)
		return rc;
	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		const char *sname;
		Elf_Data *d;
		uint64_t esz, off;

		if (gelf_getshdr(scn, &sh) == NULL ||
		    sh.sh_type != SHT_PROGBITS)
			continue;
		sname = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (sname == NULL || (strcmp(sname, ".plt") != 0 &&
		    strcmp(sname, ".plt.sec") != 0 &&
		    strcmp(sname, ".plt.got") != 0))
			continue;
		esz = strcmp(sname, ".plt.got") == 0 ? 8 : 16;
		if (sh.sh_entsize == 8 || sh.sh_entsize == 16)
			esz = sh.sh_entsize;
		d = elf_getdata(scn, NULL);
		if (d == NULL || d->d_buf == NULL || d->d_size < esz)
			continue;
		for (off = strcmp(sname, ".plt") == 0 ? esz : 0;
		    off + esz <= d->d_size; off += esz) {
			const uint8_t *b = (const uint8_t *)d->d_buf + off;
			const char *name = NULL;
			const struct gotrel *g = NULL;
			struct mt_elf_sym s;
			uint64_t j;

			for (j = 0; j + 6 <= esz && g == NULL; j++) {
				int32_t disp;

				if (b[j] != 0xff || b[j + 1] != 0x25)
					continue;
				disp = (int32_t)((uint32_t)b[j + 2] |
				    (uint32_t)b[j + 3] << 8 |
				    (uint32_t)b[j + 4] << 16 |
				    (uint32_t)b[j + 5] << 24);
				g = gotrel_find(rels, nrels, sh.sh_addr +
				    off + j + 6 + (uint64_t)(int64_t)disp);
			}
			if (g == NULL)
				continue;
			name = g->name ? g->name : ifunc_name(e, c, g->addend);
			if (name == NULL)
				return -MT_E_NOMEM;
			s.start = sh.sh_addr + off;
			s.size = esz;
			s.end = 0;
			s.file = NULL;
			s.name = name;	/* fixed up below */
			s.shndx = (uint32_t)elf_ndxscn(scn);
			s.kind = MT_ELF_SYM_PLT;
			s.ifunc = 0;
			if (cands_add(plt, &s, 0) < 0) {
				free(rels);
				return -MT_E_NOMEM;
			}
			namesz += strlen(name) + sizeof("@plt");
		}
	}
	free(rels);
	if (plt->n == 0)
		return 0;
	e->plt_names = malloc(namesz);
	if (e->plt_names == NULL)
		return -MT_E_NOMEM;
	p = e->plt_names;
	for (i = 0; i < plt->n; i++) {
		struct mt_elf_sym s = plt->v[i].s;
		size_t len = strlen(s.name);

		memcpy(p, s.name, len);
		memcpy(p + len, "@plt", sizeof("@plt"));
		s.name = p;
		p += len + sizeof("@plt");
		rc = cands_add(c, &s, 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int
cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->s.start != y->s.start)
		return x->s.start < y->s.start ? -1 : 1;
	if (x->s.size != y->s.size)
		return x->s.size > y->s.size ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int
load_syms(struct mt_elf *e)
{
	struct cands c = { 0 }, plt = { 0 };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int pass, rc = 0;
	size_t i, k, best = 0;

	/* .symtab first so that its names win ties, as in addr2line. */
	for (pass = 0; pass < 2 && rc == 0; pass++) {
		scn = NULL;
		while ((scn = elf_nextscn(e->elf, scn)) != NULL && rc == 0) {
			if (gelf_getshdr(scn, &sh) == NULL) {
				rc = mt_elf_fail(e, "section header");
				break;
			}
			if (sh.sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
				rc = read_symtab(e, scn, &sh, &c);
		}
	}
	if (rc == 0)
		rc = read_plt(e, &c, &plt);
	free(plt.v);
	if (rc < 0)
		goto out;
	if (c.n > 0)
		qsort(c.v, c.n, sizeof(*c.v), cmp_cand);
	e->syms = calloc(c.n ? c.n : 1, sizeof(*e->syms));
	if (e->syms == NULL) {
		rc = -MT_E_NOMEM;
		goto out;
	}
	for (i = 0, k = 0; i < c.n; i++) {
		if (k > 0 && e->syms[k - 1].start == c.v[i].s.start) {
			e->syms[k - 1].ifunc |= c.v[i].s.ifunc;
			if (alias_cmp(&c.v[i], &c.v[best]) < 0) {
				best = i;
				e->syms[k - 1].alias = c.v[i].s.name;
			}
			continue;
		}
		best = i;
		e->syms[k] = c.v[i].s;
		e->syms[k++].alias = c.v[i].s.name;
	}
	for (i = 0; i < k; i++) {
		struct mt_elf_sym *s = &e->syms[i];

		/* Saturate: a hostile st_size or sh_size must not wrap. */
		if (s->size > 0) {
			s->end = s->size > UINT64_MAX - s->start ? UINT64_MAX :
			    s->start + s->size;
		} else {
			const struct xsec *x = xsec_by_idx(e, s->shndx);
			uint64_t one = s->start < UINT64_MAX ? s->start + 1 :
			    UINT64_MAX;
			uint64_t end = !x ? one : x->size > UINT64_MAX - x->addr ?
			    UINT64_MAX : x->addr + x->size;

			if (i + 1 < k && e->syms[i + 1].start < end)
				end = e->syms[i + 1].start;
			s->end = end > s->start ? end : one;
		}
	}
	e->nsyms = k;
	e->syms_loaded = 1;
out:
	if (rc == -MT_E_NOMEM)
		mt_elf_set_err(e->errmsg, "%s", mt_strerror(rc));
	free(c.v);
	return rc;
}

int
mt_elf_syms(struct mt_elf *e, const struct mt_elf_sym **syms, size_t *n)
{
	int rc;

	if (!e->syms_loaded) {
		rc = load_syms(e);
		if (rc < 0)
			return rc;
	}
	*syms = e->syms;
	*n = e->nsyms;
	return 0;
}

/* Index of the last symbol with start <= @a, or -1. */
static ptrdiff_t
last_at_or_before(const struct mt_elf *e, uint64_t a)
{
	size_t lo = 0, hi = e->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

int
mt_elf_sym_find(struct mt_elf *e, uint64_t vaddr,
    const struct mt_elf_sym **sym)
{
	ptrdiff_t i, stop;
	int rc;

	if (!e->syms_loaded && (rc = load_syms(e)) < 0)
		return rc;
	i = last_at_or_before(e, vaddr);
	/* A few steps back find a function that encloses a nested one. */
	for (stop = i - 8; i >= 0 && i > stop; i--) {
		if (vaddr < e->syms[i].end) {
			*sym = &e->syms[i];
			return 0;
		}
	}
	return -MT_E_NOTFOUND;
}

int
mt_elf_sym_nearest(struct mt_elf *e, uint64_t vaddr,
    const struct mt_elf_sym **sym)
{
	const struct xsec *x;
	ptrdiff_t i;
	int rc;

	if (!e->syms_loaded && (rc = load_syms(e)) < 0)
		return rc;
	x = xsec_by_addr(e, vaddr);
	if (x == NULL)
		return -MT_E_NOTFOUND;
	for (i = last_at_or_before(e, vaddr); i >= 0; i--) {
		if (e->syms[i].start < x->addr)
			break;
		if (e->syms[i].shndx == x->idx) {
			*sym = &e->syms[i];
			return 0;
		}
	}
	return -MT_E_NOTFOUND;
}
