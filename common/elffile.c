/* SPDX-License-Identifier: MIT */
/*
 * ELF file handle (elffile.h) over libelf: headers, PT_LOAD segments, build-id,
 * .gnu_debuglink and sections (the sorted function-symbol table with
 * synthetic PLT symbols is elfsyms.c).  All reads of file bytes go through
 * libelf's bounded accessors or are checked against the section size first.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elffile-int.h"
#include "err.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

static _Thread_local char open_errmsg[ERRMSG_MAX];

void
mt_elf_set_err(char *buf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, ERRMSG_MAX, fmt, ap);
	va_end(ap);
}

int
mt_elf_fail(struct mt_elf *e, const char *what)
{
	mt_elf_set_err(e->errmsg, "%s: %s", what, elf_errmsg(-1));
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
			return mt_elf_fail(e, "section header");
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
			return mt_elf_fail(e, name);
		d->p = data->d_buf;
		d->len = data->d_buf != NULL ? data->d_size : 0;
		d->addr = (sh.sh_flags & SHF_ALLOC) ? sh.sh_addr : 0;
		return d->len > 0 ? 0 : -MT_E_NOTFOUND;
	}
	return -MT_E_NOTFOUND;
}

void
mt_elf_map_once(struct mt_elf *e, struct mt_elf_secdata *d,
    struct mt_elf_once *o)
{
	long page = sysconf(_SC_PAGESIZE);
	const uint8_t *raw;
	uint64_t off, start;
	size_t n;
	void *m;

	o->base = NULL;
	o->len = 0;
	raw = e->fd >= 0 && page > 0 ?
	    (const uint8_t *)elf_rawfile(e->elf, &n) : NULL;
	/* Only bytes inside the file's image have a file offset. */
	if (raw == NULL || d->p < raw || (uint64_t)(d->p - raw) > n ||
	    d->len > n - (size_t)(d->p - raw))
		return;
	off = (uint64_t)(d->p - raw);
	start = off - off % (uint64_t)page;
	m = mmap(NULL, d->len + (size_t)(off - start), PROT_READ, MAP_PRIVATE,
	    e->fd, (off_t)start);
	if (m == MAP_FAILED)
		return;
	o->base = m;
	o->len = d->len + (size_t)(off - start);
	d->p = (const uint8_t *)m + (off - start);
}

void
mt_elf_once_unmap(struct mt_elf_once *o)
{
	if (o->base != NULL)
		munmap(o->base, o->len);
	o->base = NULL;
}

/* Points @d at the file bytes [@off, @off + @len), cut at the file's end. */
static int
raw_bytes(struct mt_elf *e, uint64_t off, uint64_t len, uint64_t addr,
    struct mt_elf_secdata *d)
{
	Elf_Data *data;

	if (off >= e->size)
		return -MT_E_NOTFOUND;
	if (len > e->size - off)
		len = e->size - off;
	if (len == 0)
		return -MT_E_NOTFOUND;
	data = elf_getdata_rawchunk(e->elf, (int64_t)off, (size_t)len,
	    ELF_T_BYTE);
	if (data == NULL || data->d_buf == NULL)
		return mt_elf_fail(e, "segment bytes");
	d->p = data->d_buf;
	d->len = data->d_size;
	d->addr = addr;
	return 0;
}

int
mt_elf_segment(struct mt_elf *e, uint32_t type, struct mt_elf_secdata *d)
{
	size_t n, i;
	GElf_Phdr ph;

	if (e->phdrs_cut || elf_getphdrnum(e->elf, &n) != 0)
		return -MT_E_NOTFOUND;
	for (i = 0; i < n; i++) {
		if (gelf_getphdr(e->elf, (int)i, &ph) == NULL)
			return mt_elf_fail(e, "program header");
		if (ph.p_type == type && ph.p_filesz > 0)
			return raw_bytes(e, ph.p_offset, ph.p_filesz,
			    ph.p_vaddr, d);
	}
	return -MT_E_NOTFOUND;
}

int
mt_elf_vaddr_bytes(struct mt_elf *e, uint64_t vaddr, struct mt_elf_secdata *d)
{
	size_t i;

	for (i = 0; i < e->nsegs; i++) {
		const struct mt_elf_seg *s = &e->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz)
			return raw_bytes(e, s->offset + (vaddr - s->vaddr),
			    s->filesz - (vaddr - s->vaddr), vaddr, d);
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
		return mt_elf_fail(e, "program headers");
	if (n == 0)
		return 0;
	e->segs = calloc(n, sizeof(*e->segs));
	if (e->segs == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < n; i++) {
		if (gelf_getphdr(e->elf, (int)i, &ph) == NULL)
			return mt_elf_fail(e, "program header");
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
		return mt_elf_fail(e, "section headers");
	if (nscn == 0)
		return 0;
	if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return mt_elf_fail(e, "section name table");
	e->xsecs = calloc(nscn, sizeof(*e->xsecs));
	if (e->xsecs == NULL)
		return -MT_E_NOMEM;
	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		const char *name;

		if (gelf_getshdr(scn, &sh) == NULL)
			return mt_elf_fail(e, "section header");
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
		mt_elf_set_err(e->errmsg, "not an ELF file (bad magic at "
		    "offset 0)");
		return -MT_E_MAGIC;
	}
	if (gelf_getehdr(e->elf, &eh) == NULL)
		return mt_elf_fail(e, "ELF header");
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
		mt_elf_set_err(e->errmsg, "truncated: ELF header ends at byte %zu, "
		    "file has %llu", sizeof(Elf64_Ehdr),
		    (unsigned long long)e->size);
	} else if (e->elf == NULL) {
		rc = -MT_E_ELF;
		mt_elf_set_err(e->errmsg, "%s", elf_errmsg(-1));
	} else {
		rc = finish_open(e);
	}
	if (rc < 0) {
		if (e->errmsg[0] == '\0')
			mt_elf_set_err(e->errmsg, "%s", mt_strerror(rc));
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
		mt_elf_set_err(open_errmsg, "%s", mt_strerror(-MT_E_NOMEM));
		return -MT_E_NOMEM;
	}
	/* O_NONBLOCK: a path naming a FIFO must not hang the open. */
	e->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (e->fd < 0) {
		int saved = errno;

		mt_elf_set_err(open_errmsg, "%s", strerror(saved));
		mt_elf_free(e);
		errno = saved;
		return -MT_E_SYS;
	}
	if (fstat(e->fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		/* A device or FIFO could block or never end. */
		mt_elf_set_err(open_errmsg, "not a regular file");
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
		mt_elf_set_err(open_errmsg, "%s", mt_strerror(-MT_E_NOMEM));
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
		mt_elf_set_err(open_errmsg, "%s", mt_strerror(-MT_E_NOMEM));
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
