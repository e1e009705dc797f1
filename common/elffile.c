/* SPDX-License-Identifier: MIT */
/*
 * ELF file handle (elffile.h) over libelf: headers, PT_LOAD segments, build-id,
 * .gnu_debuglink, and a sorted function-symbol table with synthetic PLT
 * symbols.  All reads of file bytes go through libelf's bounded accessors
 * or are checked against the section size first.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elffile.h"
#include "err.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif
#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif

#define ERRMSG_MAX 256

/* An executable allocated section, for addr2line's same-section rule. */
struct xsec {
	uint64_t addr;		/* sh_addr */
	uint64_t size;		/* sh_size, bytes */
	uint32_t idx;		/* section index */
};

struct mt_elf {
	int fd;			/* open file, -1 for memory images */
	void *mem;		/* owned copy of a memory image, or NULL */
	Elf *elf;		/* libelf handle */
	enum mt_elf_ftype type;
	struct mt_elf_seg *segs;	/* PT_LOAD segments; owned */
	size_t nsegs;
	uint8_t build_id[MT_ELF_BUILD_ID_MAX];
	size_t build_id_len;	/* 0: none */
	char *debuglink;	/* .gnu_debuglink file name; owned, or NULL */
	uint32_t debuglink_crc;
	int has_dwarf;
	int has_symtab;
	struct xsec *xsecs;	/* executable sections sorted by addr; owned */
	size_t nxsecs;
	int syms_loaded;	/* 1 once syms is built */
	struct mt_elf_sym *syms;	/* sorted by start; owned */
	size_t nsyms;
	char *plt_names;	/* storage for "name@plt" strings; owned */
	char **abs_names;	/* "*ABS*+0x..." strings; owned */
	size_t nabs_names;
	char errmsg[ERRMSG_MAX];	/* last error on this object */
	uint64_t size;		/* bytes in the file or image */
	char *trunc;		/* how the file is cut short; owned, or NULL */
	int phdrs_cut;		/* the program header table is cut short */
};

static _Thread_local char open_errmsg[ERRMSG_MAX];

static void
set_err(char *buf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, ERRMSG_MAX, fmt, ap);
	va_end(ap);
}

static int
fail_elf(struct mt_elf *e, const char *what)
{
	set_err(e->errmsg, "%s: %s", what, elf_errmsg(-1));
	return -MT_E_ELF;
}

const char *
mt_elf_errmsg(const struct mt_elf *e)
{
	return e ? e->errmsg : open_errmsg;
}

enum mt_elf_ftype
mt_elf_type(const struct mt_elf *e)
{
	return e->type;
}

size_t
mt_elf_build_id(const struct mt_elf *e, const uint8_t **id)
{
	*id = e->build_id;
	return e->build_id_len;
}

void
mt_elf_build_id_hex(const struct mt_elf *e, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < e->build_id_len; i++) {
		buf[2 * i] = hex[e->build_id[i] >> 4];
		buf[2 * i + 1] = hex[e->build_id[i] & 15];
	}
	buf[2 * i] = '\0';
}

size_t
mt_elf_segs(const struct mt_elf *e, const struct mt_elf_seg **segs)
{
	*segs = e->segs;
	return e->nsegs;
}

int
mt_elf_off_to_vaddr(const struct mt_elf *e, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < e->nsegs; i++) {
		const struct mt_elf_seg *s = &e->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	return -MT_E_NOTFOUND;
}

const char *
mt_elf_debuglink(const struct mt_elf *e, uint32_t *crc)
{
	if (crc)
		*crc = e->debuglink_crc;
	return e->debuglink;
}

int
mt_elf_has_dwarf(const struct mt_elf *e)
{
	return e->has_dwarf;
}

int
mt_elf_has_symtab(const struct mt_elf *e)
{
	return e->has_symtab;
}

int
mt_elf_section(struct mt_elf *e, const char *name, struct mt_elf_secdata *d)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *n;

	if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return -MT_E_NOTFOUND;	/* no section headers */
	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL)
			return fail_elf(e, "section header");
		n = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (n == NULL || strcmp(n, name) != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			return -MT_E_NOTFOUND;
		if (sh.sh_flags & SHF_COMPRESSED)
			return -MT_E_UNSUPP;
		/* Raw bytes: the file's own byte order, no translation. */
		data = elf_rawdata(scn, NULL);
		if (data == NULL)
			return fail_elf(e, name);
		d->p = data->d_buf;
		d->len = data->d_buf != NULL ? data->d_size : 0;
		d->addr = (sh.sh_flags & SHF_ALLOC) ? sh.sh_addr : 0;
		return d->len > 0 ? 0 : -MT_E_NOTFOUND;
	}
	return -MT_E_NOTFOUND;
}

/* Looks for NT_GNU_BUILD_ID in one note data block. */
static int
scan_notes(struct mt_elf *e, Elf_Data *d)
{
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;

	while (off < d->d_size &&
	    (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0) {
			size_t n = nh.n_descsz;

			if (n > MT_ELF_BUILD_ID_MAX)
				n = MT_ELF_BUILD_ID_MAX;
			memcpy(e->build_id, (const char *)d->d_buf + desc_off,
			    n);
			e->build_id_len = n;
			return 1;
		}
		off = next;
	}
	return 0;
}

static int
read_phdrs(struct mt_elf *e)
{
	size_t n, i, k = 0;
	GElf_Phdr ph;

	if (e->phdrs_cut)
		return 0;	/* mt_elf_truncated() says so */
	if (elf_getphdrnum(e->elf, &n) != 0)
		return fail_elf(e, "program headers");
	if (n == 0)
		return 0;
	e->segs = calloc(n, sizeof(*e->segs));
	if (e->segs == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < n; i++) {
		if (gelf_getphdr(e->elf, (int)i, &ph) == NULL)
			return fail_elf(e, "program header");
		if (ph.p_type == PT_NOTE && e->build_id_len == 0) {
			Elf_Data *d = elf_getdata_rawchunk(e->elf,
			    (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);

			if (d != NULL)
				scan_notes(e, d);
		}
		if (ph.p_type != PT_LOAD)
			continue;
		e->segs[k].vaddr = ph.p_vaddr;
		e->segs[k].memsz = ph.p_memsz;
		e->segs[k].offset = ph.p_offset;
		e->segs[k].filesz = ph.p_filesz;
		e->segs[k].flags = ph.p_flags;
		k++;
	}
	e->nsegs = k;
	return 0;
}

static int
cmp_xsec(const void *a, const void *b)
{
	const struct xsec *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int
read_debuglink(struct mt_elf *e, Elf_Scn *scn)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	const char *p;
	size_t len, crc_off;

	if (d == NULL || d->d_buf == NULL)
		return 0;
	p = d->d_buf;
	len = strnlen(p, d->d_size);
	crc_off = (len + 4) & ~(size_t)3;
	if (len == 0 || len == d->d_size || crc_off > d->d_size ||
	    d->d_size - crc_off < 4)
		return 0;
	e->debuglink = strndup(p, len);
	if (e->debuglink == NULL)
		return -MT_E_NOMEM;
	e->debuglink_crc = (uint32_t)((const uint8_t *)p)[crc_off] |
	    (uint32_t)((const uint8_t *)p)[crc_off + 1] << 8 |
	    (uint32_t)((const uint8_t *)p)[crc_off + 2] << 16 |
	    (uint32_t)((const uint8_t *)p)[crc_off + 3] << 24;
	return 0;
}

static int
read_shdrs(struct mt_elf *e)
{
	size_t shstrndx, nscn;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int rc;

	if (elf_getshdrnum(e->elf, &nscn) != 0)
		return fail_elf(e, "section headers");
	if (nscn == 0)
		return 0;
	if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return fail_elf(e, "section name table");
	e->xsecs = calloc(nscn, sizeof(*e->xsecs));
	if (e->xsecs == NULL)
		return -MT_E_NOMEM;
	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		const char *name;

		if (gelf_getshdr(scn, &sh) == NULL)
			return fail_elf(e, "section header");
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (name == NULL)
			name = "";
		if (sh.sh_type == SHT_SYMTAB)
			e->has_symtab = 1;
		if (sh.sh_type == SHT_NOTE && e->build_id_len == 0) {
			Elf_Data *d = elf_getdata(scn, NULL);

			if (d != NULL && d->d_buf != NULL)
				scan_notes(e, d);
		}
		if (strcmp(name, ".debug_info") == 0 &&
		    sh.sh_type != SHT_NOBITS && sh.sh_size > 0)
			e->has_dwarf = 1;
		if (strcmp(name, ".gnu_debuglink") == 0 &&
		    sh.sh_type != SHT_NOBITS && e->debuglink == NULL) {
			rc = read_debuglink(e, scn);
			if (rc < 0)
				return rc;
		}
		if ((sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) ==
		    (SHF_ALLOC | SHF_EXECINSTR) && sh.sh_size > 0) {
			struct xsec *x = &e->xsecs[e->nxsecs++];

			x->addr = sh.sh_addr;
			x->size = sh.sh_size;
			x->idx = (uint32_t)elf_ndxscn(scn);
		}
	}
	qsort(e->xsecs, e->nxsecs, sizeof(*e->xsecs), cmp_xsec);
	return 0;
}

/* @off + @n * @entsize, or UINT64_MAX where that overflows. */
static uint64_t
table_end(uint64_t off, uint64_t n, uint64_t entsize)
{
	if (entsize != 0 && n > UINT64_MAX / entsize)
		return UINT64_MAX;
	return off > UINT64_MAX - n * entsize ? UINT64_MAX : off + n * entsize;
}

/* Records the first end past the file's size; 0, or -MT_E_NOMEM. */
static int
note_end(struct mt_elf *e, uint64_t end, const char *fmt, ...)
{
	char what[128];
	va_list ap;

	if (e->trunc != NULL || end <= e->size)
		return 0;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (asprintf(&e->trunc, "truncated: %s at byte %llu, file has %llu",
	    what, (unsigned long long)end,
	    (unsigned long long)e->size) < 0) {
		e->trunc = NULL;
		return -MT_E_NOMEM;
	}
	return 0;
}

/*
 * A file cut short (a partial copy, a full disk) keeps a valid ELF header
 * but loses its section headers, which sit at the end: libelf then sees
 * no sections at all and says nothing.  Checks that the header tables,
 * the segments' and the sections' file bytes lie within the file.
 */
static int
check_truncated(struct mt_elf *e, const GElf_Ehdr *eh)
{
	size_t n, shstrndx, i;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	const char *name;
	int rc;

	/*
	 * e_phnum, or with PN_XNUM the count in section 0 (gABI extended
	 * numbering); libelf clamps its count to the file, so not that.
	 */
	n = eh->e_phnum;
	if (n == PN_XNUM && elf_getphdrnum(e->elf, &i) == 0 && i > n)
		n = i;
	if (n > 0 && (rc = note_end(e, table_end(eh->e_phoff, n,
	    eh->e_phentsize), "program headers end")) < 0)
		return rc;
	/* libelf reads the table whole or not at all. */
	e->phdrs_cut = e->trunc != NULL;
	n = eh->e_shnum;
	if (n == 0 && eh->e_shoff != 0)
		n = 1;	/* section 0 holds the count */
	if (n > 0 && (rc = note_end(e, table_end(eh->e_shoff, n,
	    eh->e_shentsize), "section headers end")) < 0)
		return rc;
	if (e->trunc != NULL)
		return 0;
	for (i = 0; elf_getphdrnum(e->elf, &n) == 0 && i < n; i++) {
		if (gelf_getphdr(e->elf, (int)i, &ph) == NULL ||
		    ph.p_type == PT_NULL || ph.p_filesz == 0)
			continue;
		rc = note_end(e, table_end(ph.p_offset, 1, ph.p_filesz),
		    "segment %zu ends", i);
		if (rc < 0 || e->trunc != NULL)
			return rc;
	}
	if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		shstrndx = 0;
	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL ||
		    sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		rc = name != NULL ? note_end(e, table_end(sh.sh_offset, 1,
		    sh.sh_size), "section '%.64s' ends", name) :
		    note_end(e, table_end(sh.sh_offset, 1, sh.sh_size),
		    "section %zu ends", elf_ndxscn(scn));
		if (rc < 0 || e->trunc != NULL)
			return rc;
	}
	return 0;
}

const char *
mt_elf_truncated(const struct mt_elf *e)
{
	return e->trunc;
}

static int
finish_open(struct mt_elf *e)
{
	GElf_Ehdr eh;
	int rc;

	if (elf_kind(e->elf) != ELF_K_ELF) {
		set_err(e->errmsg, "not an ELF file");
		return -MT_E_MAGIC;
	}
	if (gelf_getehdr(e->elf, &eh) == NULL)
		return fail_elf(e, "ELF header");
	e->type = eh.e_type == ET_EXEC ? MT_ELF_EXEC :
	    eh.e_type == ET_DYN ? MT_ELF_DYN : MT_ELF_OTHER;
	rc = check_truncated(e, &eh);
	if (rc < 0)
		return rc;
	rc = read_shdrs(e);
	if (rc < 0)
		return rc;
	return read_phdrs(e);
}

static int
open_common(struct mt_elf **ep, struct mt_elf *e)
{
	int rc;

	if (e->elf == NULL && e->size < sizeof(Elf64_Ehdr)) {
		/* libelf saw the magic but not a whole header. */
		rc = -MT_E_TRUNC;
		set_err(e->errmsg, "truncated: ELF header ends at byte %zu, "
		    "file has %llu", sizeof(Elf64_Ehdr),
		    (unsigned long long)e->size);
	} else if (e->elf == NULL) {
		rc = -MT_E_ELF;
		set_err(e->errmsg, "%s", elf_errmsg(-1));
	} else {
		rc = finish_open(e);
	}
	if (rc < 0) {
		if (e->errmsg[0] == '\0')
			set_err(e->errmsg, "%s", mt_strerror(rc));
		memcpy(open_errmsg, e->errmsg, ERRMSG_MAX);
		mt_elf_free(e);
		return rc;
	}
	open_errmsg[0] = '\0';
	*ep = e;
	return 0;
}

static struct mt_elf *
new_elf(void)
{
	struct mt_elf *e = calloc(1, sizeof(*e));

	if (e != NULL)
		e->fd = -1;
	return e;
}

int
mt_elf_open(struct mt_elf **ep, const char *path)
{
	struct mt_elf *e;
	struct stat sb;

	*ep = NULL;
	elf_version(EV_CURRENT);
	e = new_elf();
	if (e == NULL) {
		set_err(open_errmsg, "%s", mt_strerror(-MT_E_NOMEM));
		return -MT_E_NOMEM;
	}
	/* O_NONBLOCK: a path naming a FIFO must not hang the open. */
	e->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (e->fd < 0) {
		int saved = errno;

		set_err(open_errmsg, "%s", strerror(saved));
		mt_elf_free(e);
		errno = saved;
		return -MT_E_SYS;
	}
	if (fstat(e->fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		/* A device or FIFO could block or never end. */
		set_err(open_errmsg, "not a regular file");
		mt_elf_free(e);
		return -MT_E_MAGIC;
	}
	e->size = (uint64_t)sb.st_size;
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	return open_common(ep, e);
}

int
mt_elf_open_ref(struct mt_elf **ep, const void *p, size_t len)
{
	struct mt_elf *e;

	*ep = NULL;
	elf_version(EV_CURRENT);
	e = new_elf();
	if (e == NULL) {
		set_err(open_errmsg, "%s", mt_strerror(-MT_E_NOMEM));
		return -MT_E_NOMEM;
	}
	e->size = len;
	/* libelf reads a native-order image in place and writes nothing. */
	e->elf = elf_memory((char *)(uintptr_t)p, len);
	return open_common(ep, e);
}

int
mt_elf_open_mem(struct mt_elf **ep, const void *p, size_t len)
{
	void *copy = malloc(len ? len : 1);
	int rc;

	*ep = NULL;
	if (copy == NULL) {
		set_err(open_errmsg, "%s", mt_strerror(-MT_E_NOMEM));
		return -MT_E_NOMEM;
	}
	memcpy(copy, p, len);
	rc = mt_elf_open_ref(ep, copy, len);
	if (rc < 0) {
		free(copy);
		return rc;
	}
	(*ep)->mem = copy;	/* freed with it */
	return 0;
}

void
mt_elf_free(struct mt_elf *e)
{
	if (e == NULL)
		return;
	if (e->elf != NULL)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->mem);
	free(e->segs);
	free(e->debuglink);
	free(e->trunc);
	free(e->xsecs);
	free(e->syms);
	free(e->plt_names);
	while (e->nabs_names > 0)
		free(e->abs_names[--e->nabs_names]);
	free(e->abs_names);
	free(e);
}

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
				rc = fail_elf(e, "section header");
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
		set_err(e->errmsg, "%s", mt_strerror(rc));
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
