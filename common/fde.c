/* SPDX-License-Identifier: MIT */
/*
 * FDE ranges (fde.h).  Layout of a record (DWARF 5 section 6.4.1; LSB
 * Core, "The .eh_frame section"):
 *
 *   length        u32, or 0xffffffff then u64 (64-bit DWARF)
 *   id / pointer  u32 (u64 in 64-bit DWARF): a CIE has id 0 in .eh_frame
 *                 and all ones in .debug_frame; an FDE has its CIE's
 *                 position: in .eh_frame the distance back from this
 *                 field, in .debug_frame the section offset
 *   CIE           version u8, augmentation string, [v4: address size u8,
 *                 segment selector size u8], code alignment ULEB, data
 *                 alignment SLEB, return register (u8 in v1, else ULEB),
 *                 ["z": ULEB length, then one argument per letter]
 *   FDE           initial location, address range (in the CIE's "R"
 *                 encoding in .eh_frame, address-size words in
 *                 .debug_frame), then instructions, unread here
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "elffile.h"
#include "err.h"
#include "fde.h"

/* DW_EH_PE_* pointer encodings (LSB Core, "DWARF Exception Header
 * Encoding"): the low nibble is the data format, bits 4-6 what it is
 * relative to, bit 7 an indirection. */
#define PE_ABSPTR	0x00
#define PE_ULEB128	0x01
#define PE_UDATA2	0x02
#define PE_UDATA4	0x03
#define PE_UDATA8	0x04
#define PE_SIGNED	0x08
#define PE_SLEB128	0x09
#define PE_SDATA2	0x0a
#define PE_SDATA4	0x0b
#define PE_SDATA8	0x0c
#define PE_PCREL	0x10
#define PE_DATAREL	0x30
#define PE_OMIT		0xff

/* GCC's augmentation strings are at most "zPLRSB"-like: a longer one is
 * refused, which also bounds the work per CIE. */
#define AUG_MAX		16

/* What an FDE needs from its CIE. */
struct cie {
	uint64_t off;		/* section offset of the CIE; UINT64_MAX none */
	uint8_t enc;		/* FDE pointer encoding (PE_*) */
	uint8_t addr_size;	/* bytes of an absolute pointer */
	uint8_t has_z;		/* 1: FDEs carry augmentation data */
};

/* The section being read. */
struct sec {
	const uint8_t *p;	/* first byte */
	size_t len;		/* bytes */
	uint64_t addr;		/* file vaddr of p[0] */
	enum mt_fde_kind kind;
};

void
mt_fde_tab_init(struct mt_fde_tab *t)
{
	memset(t, 0, sizeof(*t));
}

void
mt_fde_tab_release(struct mt_fde_tab *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

int
mt_fde_tab_add(struct mt_fde_tab *t, uint64_t start, uint64_t end)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct mt_fde *v;

		if (cap > SIZE_MAX / sizeof(*v))
			return -MT_E_NOMEM;
		v = realloc(t->v, cap * sizeof(*v));
		if (v == NULL)
			return -MT_E_NOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n].start = start;
	t->v[t->n].end = end;
	t->n++;
	return 0;
}

/*
 * Reads a value in the data format of @enc (its low nibble) from @b; a
 * signed format is sign-extended to 64 bits.
 */
static int
get_encoded(struct mt_buf *b, uint8_t enc, uint8_t addr_size, uint64_t *v)
{
	uint16_t u16;
	uint32_t u32;
	int64_t s;
	int rc;

	switch (enc & 0x0f) {
	case PE_ABSPTR:
	case PE_SIGNED:
		if (addr_size == 4) {
			rc = mt_buf_get_u32le(b, &u32);
			*v = (enc & 0x0f) == PE_SIGNED ?
			    (uint64_t)(int64_t)(int32_t)u32 : u32;
			return rc;
		}
		return mt_buf_get_u64le(b, v);
	case PE_ULEB128:
		return mt_buf_get_uleb128(b, v);
	case PE_UDATA2:
		rc = mt_buf_get_u16le(b, &u16);
		*v = u16;
		return rc;
	case PE_UDATA4:
		rc = mt_buf_get_u32le(b, &u32);
		*v = u32;
		return rc;
	case PE_UDATA8:
	case PE_SDATA8:
		return mt_buf_get_u64le(b, v);
	case PE_SLEB128:
		rc = mt_buf_get_sleb128(b, &s);
		*v = (uint64_t)s;
		return rc;
	case PE_SDATA2:
		rc = mt_buf_get_u16le(b, &u16);
		*v = (uint64_t)(int64_t)(int16_t)u16;
		return rc;
	case PE_SDATA4:
		rc = mt_buf_get_u32le(b, &u32);
		*v = (uint64_t)(int64_t)(int32_t)u32;
		return rc;
	default:
		return -MT_E_UNSUPP;
	}
}

/*
 * Reads a record's length at @off.  *@body gets the offset of the field
 * after it, *@end the offset past the record, *@wide 1 for 64-bit DWARF.
 * Returns 0, MT_EOS for a zero length, or -MT_E_TRUNC.
 */
static int
get_length(const struct sec *s, uint64_t off, uint64_t *body, uint64_t *end,
    int *wide)
{
	struct mt_buf b;
	uint32_t l32;
	uint64_t l;

	mt_buf_init(&b, s->p + off, s->len - off);
	if (mt_buf_get_u32le(&b, &l32) < 0)
		return -MT_E_TRUNC;
	*wide = l32 == 0xffffffffu;
	if (*wide) {
		if (mt_buf_get_u64le(&b, &l) < 0)
			return -MT_E_TRUNC;
	} else {
		l = l32;
	}
	if (l == 0 && !*wide)
		return MT_EOS;
	if (l > b.len)
		return -MT_E_TRUNC;
	*body = off + b.off;
	*end = *body + l;
	return 0;
}

/* 1 if @id, read at a record's id field, marks a CIE. */
static int
is_cie_id(const struct sec *s, uint64_t id, int wide)
{
	if (s->kind == MT_FDE_EH_FRAME)
		return id == 0;
	return id == (wide ? UINT64_MAX : 0xffffffffu);
}

static int
get_id(struct mt_buf *b, int wide, uint64_t *id)
{
	uint32_t u32;
	int rc;

	if (wide)
		return mt_buf_get_u64le(b, id);
	rc = mt_buf_get_u32le(b, &u32);
	*id = u32;
	return rc;
}

/* Reads the augmentation arguments of a "z" CIE from @b. */
static int
parse_aug(struct mt_buf *b, const char *aug, struct cie *c)
{
	struct mt_buf a;
	const uint8_t *data;
	uint64_t n, v;
	uint8_t enc;
	int rc;

	rc = mt_buf_get_uleb128(b, &n);
	if (rc < 0)
		return rc;
	if (n > b->len)
		return -MT_E_TRUNC;
	(void)mt_buf_get_bytes(b, (size_t)n, &data);
	mt_buf_init(&a, data, (size_t)n);
	for (aug++; *aug != '\0'; aug++) {
		switch (*aug) {
		case 'R':
			rc = mt_buf_get_u8(&a, &c->enc);
			break;
		case 'L':
			rc = mt_buf_get_u8(&a, &enc);
			break;
		case 'P':
			rc = mt_buf_get_u8(&a, &enc);
			if (rc == 0)
				rc = get_encoded(&a, enc, c->addr_size, &v);
			break;
		case 'S':	/* signal frame */
		case 'B':	/* AArch64 branch target identification */
		case 'G':	/* AArch64 memory tagging */
			break;
		default:
			return -MT_E_UNSUPP;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Reads the CIE at section offset @off into @c. */
static int
parse_cie(const struct sec *s, uint64_t off, struct cie *c)
{
	uint64_t body, end, id, u;
	const uint8_t *p, *nul;
	struct mt_buf b;
	uint8_t version, u8;
	char aug[AUG_MAX + 1];
	int64_t sv;
	int wide, rc;

	if (off >= s->len)
		return -MT_E_CORRUPT;
	rc = get_length(s, off, &body, &end, &wide);
	if (rc != 0)
		return rc == MT_EOS ? -MT_E_CORRUPT : rc;
	mt_buf_init(&b, s->p + body, (size_t)(end - body));
	if ((rc = get_id(&b, wide, &id)) < 0)
		return rc;
	if (!is_cie_id(s, id, wide))
		return -MT_E_CORRUPT;	/* the pointer leads to an FDE */
	if ((rc = mt_buf_get_u8(&b, &version)) < 0)
		return rc;
	if (version != 1 && version != 3 &&
	    (version != 4 || s->kind != MT_FDE_DEBUG_FRAME))
		return -MT_E_UNSUPP;
	nul = memchr(b.p, '\0', b.len < AUG_MAX + 1 ? b.len : AUG_MAX + 1);
	if (nul == NULL)
		return b.len <= AUG_MAX ? -MT_E_TRUNC : -MT_E_UNSUPP;
	(void)mt_buf_get_bytes(&b, (size_t)(nul - b.p) + 1, &p);
	memcpy(aug, p, (size_t)(nul - p) + 1);
	c->off = off;
	c->enc = s->kind == MT_FDE_EH_FRAME ? PE_ABSPTR : PE_UDATA8;
	c->addr_size = 8;
	c->has_z = 0;
	if (strncmp(aug, "eh", 2) == 0) {
		/* GCC before 3.0: a pointer to exception data follows. */
		if ((rc = mt_buf_skip(&b, c->addr_size)) < 0)
			return rc;
		memmove(aug, aug + 2, strlen(aug + 2) + 1);
	}
	if (version == 4) {
		if ((rc = mt_buf_get_u8(&b, &c->addr_size)) < 0 ||
		    (rc = mt_buf_get_u8(&b, &u8)) < 0)
			return rc;
		if ((c->addr_size != 4 && c->addr_size != 8) || u8 != 0)
			return -MT_E_UNSUPP;	/* segment selectors */
		c->enc = c->addr_size == 4 ? PE_UDATA4 : PE_UDATA8;
	}
	if ((rc = mt_buf_get_uleb128(&b, &u)) < 0 ||
	    (rc = mt_buf_get_sleb128(&b, &sv)) < 0)
		return rc;
	rc = version == 1 ? mt_buf_get_u8(&b, &u8) :
	    mt_buf_get_uleb128(&b, &u);
	if (rc < 0)
		return rc;
	if (aug[0] == 'z') {
		c->has_z = 1;
		return parse_aug(&b, aug, c);
	}
	return aug[0] == '\0' ? 0 : -MT_E_UNSUPP;
}

/*
 * Reads the FDE whose body (after the length) starts at @body, before
 * @end, with its CIE pointer @ptr at @ptr_off, and adds its range.
 */
static int
parse_fde(struct mt_fde_tab *t, const struct sec *s, struct cie *c,
    uint64_t ptr_off, uint64_t ptr, uint64_t body, uint64_t end,
    uint64_t *off)
{
	uint64_t cie_off, start, range;
	struct mt_buf b;
	int rc;

	if (s->kind == MT_FDE_EH_FRAME) {
		if (ptr > ptr_off)
			return -MT_E_CORRUPT;
		cie_off = ptr_off - ptr;
	} else {
		cie_off = ptr;
	}
	if (cie_off != c->off) {
		c->off = UINT64_MAX;
		rc = parse_cie(s, cie_off, c);
		if (rc < 0) {
			c->off = UINT64_MAX;
			if (rc == -MT_E_UNSUPP)
				*off = cie_off;
			return rc;
		}
	}
	if ((c->enc & 0x70) != 0 && (c->enc & 0x70) != PE_PCREL)
		return -MT_E_UNSUPP;
	if ((c->enc & 0x80) != 0)
		return -MT_E_UNSUPP;	/* indirect (or omitted) */
	mt_buf_init(&b, s->p + body, (size_t)(end - body));
	if ((rc = get_encoded(&b, c->enc, c->addr_size, &start)) < 0)
		return rc;
	if ((c->enc & 0x70) == PE_PCREL)
		start += s->addr + body;
	/* The range is a size: its format only, relative to nothing. */
	if ((rc = get_encoded(&b, c->enc & 0x0f, c->addr_size, &range)) < 0)
		return rc;
	if (range == 0 || start == 0)
		return 0;
	if (range > UINT64_MAX - start)
		return -MT_E_CORRUPT;
	return mt_fde_tab_add(t, start, start + range);
}

int
mt_fde_parse(struct mt_fde_tab *t, const uint8_t *p, size_t len,
    uint64_t addr, enum mt_fde_kind kind, uint64_t *off)
{
	struct sec s = { .p = p, .len = len, .addr = addr, .kind = kind };
	struct cie c = { .off = UINT64_MAX };
	uint64_t at = 0, body, end, id;
	struct mt_buf b;
	int wide, rc = 0;

	*off = 0;
	while (at < len) {
		*off = at;
		rc = get_length(&s, at, &body, &end, &wide);
		if (rc == MT_EOS) {
			rc = 0;
			if (kind == MT_FDE_EH_FRAME)
				break;
			at += 4;	/* padding in .debug_frame */
			continue;
		}
		if (rc < 0)
			break;
		mt_buf_init(&b, p + body, (size_t)(end - body));
		if ((rc = get_id(&b, wide, &id)) < 0)
			break;
		if (!is_cie_id(&s, id, wide)) {
			rc = parse_fde(t, &s, &c, body, id, body + b.off, end,
			    off);
			if (rc < 0)
				break;
		}
		at = end;
	}
	return rc;
}

static int
fde_cmp(const void *a, const void *b)
{
	const struct mt_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;	/* longest first */
}

/*
 * Sort the @n ranges at @v by fde_cmp by merging their ascending runs,
 * two by two, until one is left.  A file's .eh_frame is mostly in
 * address order (Debian 12's libc: 3,713 FDEs in 200 runs; libm: 873 in
 * 2), where this moves each range a few times instead of qsort's n log n.
 * Returns 0, or -1 without memory for the copy (@v unchanged).
 */
static int
fde_merge_runs(struct mt_fde *v, size_t n)
{
	struct mt_fde *a = v, *b = malloc(n * sizeof(*b)), *swap;
	size_t runs;

	if (b == NULL)
		return -1;
	do {
		size_t i = 0, o = 0;

		for (runs = 0; i < n; runs++) {
			size_t m = i + 1, e, x, y;

			while (m < n && fde_cmp(&a[m - 1], &a[m]) <= 0)
				m++;
			for (e = m + 1; e < n && fde_cmp(&a[e - 1], &a[e]) <= 0;
			    e++)
				;
			if (e > n)
				e = n;
			for (x = i, y = m; x < m || y < e;) {
				if (y == e || (x < m &&
				    fde_cmp(&a[x], &a[y]) <= 0))
					b[o++] = a[x++];
				else
					b[o++] = a[y++];
			}
			i = e;
		}
		swap = a;
		a = b;
		b = swap;
	} while (runs > 1);
	if (a != v) {
		memcpy(v, a, n * sizeof(*v));
		free(a);
	} else {
		free(b);
	}
	return 0;
}

void
mt_fde_sort(struct mt_fde_tab *t)
{
	size_t i, k = 0;

	if (t->n == 0)
		return;
	/* (Sorted already, as some files' .eh_frame are: one pass.) */
	for (i = 1; i < t->n && fde_cmp(&t->v[i - 1], &t->v[i]) <= 0; i++)
		;
	if (i < t->n && fde_merge_runs(t->v, t->n) < 0)
		qsort(t->v, t->n, sizeof(*t->v), fde_cmp);
	for (i = 1; i < t->n; i++) {
		if (t->v[i].start == t->v[k].start)
			continue;
		if (t->v[k].end > t->v[i].start)
			t->v[k].end = t->v[i].start;
		t->v[++k] = t->v[i];
	}
	t->n = k + 1;
}

/*
 * Appends the FDEs of section @name of @e; a missing or compressed
 * section gives none.
 */
static int
read_section(struct mt_fde_tab *t, struct mt_elf *e, const char *name,
    enum mt_fde_kind kind, struct mt_fde_diag *d)
{
	struct mt_elf_secdata sd;
	struct mt_elf_once once;
	int rc = mt_elf_section(e, name, &sd);

	d->section = name;
	d->off = 0;
	if (rc == -MT_E_NOTFOUND || rc == -MT_E_UNSUPP)
		return 0;	/* none, or compressed (gcc -gz, Go) */
	if (rc < 0)
		return rc;
	/* Read once: its pages go when the table is made. */
	mt_elf_map_once(e, &sd, &once);
	rc = mt_fde_parse(t, sd.p, sd.len, sd.addr, kind, &d->off);
	mt_elf_once_unmap(&once);
	return rc;
}

int
mt_fde_read_elf(struct mt_fde_tab *t, struct mt_elf *e,
    struct mt_fde_diag *d)
{
	struct mt_fde_diag d2;
	int rc, rc2;

	rc = read_section(t, e, ".eh_frame", MT_FDE_EH_FRAME, d);
	if (rc == -MT_E_NOMEM)
		return rc;
	rc2 = read_section(t, e, ".debug_frame", MT_FDE_DEBUG_FRAME, &d2);
	if (rc == 0 && rc2 < 0) {
		rc = rc2;
		*d = d2;
	}
	mt_fde_sort(t);
	return rc;
}

/*
 * Reads a pointer of .eh_frame_hdr (at file vaddr @hdr) in encoding @enc
 * from @b: pc-relative counts from the field's own address,
 * data-relative from the header's first byte.
 */
static int
hdr_pointer(struct mt_buf *b, uint64_t hdr, uint8_t enc, uint64_t *v)
{
	uint64_t at = hdr + b->off;
	int rc;

	if ((enc & 0x80) != 0)
		return -MT_E_UNSUPP;	/* indirect, or omitted (0xff) */
	rc = get_encoded(b, enc, 8, v);
	if (rc < 0)
		return rc;
	switch (enc & 0x70) {
	case 0:
		return 0;
	case PE_PCREL:
		*v += at;
		return 0;
	case PE_DATAREL:
		*v += hdr;
		return 0;
	default:
		return -MT_E_UNSUPP;
	}
}

/*
 * The address of .eh_frame from the .eh_frame_hdr bytes @hdr into
 * *@eh_addr (d->off: where it failed).  Returns 0, -MT_E_UNSUPP for
 * another version, or the error of a short or bad field.
 */
static int
eh_frame_ptr(const struct mt_elf_secdata *hdr, struct mt_fde_diag *d,
    uint64_t *eh_addr)
{
	struct mt_buf b;
	uint8_t version, ptr_enc;
	int rc;

	/* version, eh_frame_ptr's encoding, fde_count's, the table's. */
	mt_buf_init(&b, hdr->p, hdr->len);
	if ((rc = mt_buf_get_u8(&b, &version)) < 0 ||
	    (rc = mt_buf_get_u8(&b, &ptr_enc)) < 0 ||
	    (rc = mt_buf_skip(&b, 2)) < 0)
		return rc;
	if (version != 1)
		return -MT_E_UNSUPP;
	d->off = b.off;
	return hdr_pointer(&b, hdr->addr, ptr_enc, eh_addr);
}

int
mt_fde_read_eh_frame_hdr(struct mt_fde_tab *t, struct mt_elf *e,
    struct mt_fde_diag *d)
{
	struct mt_elf_secdata hdr, eh;
	struct mt_elf_once once;
	uint64_t eh_addr;
	int rc;

	d->section = ".eh_frame_hdr";
	d->off = 0;
	rc = mt_elf_segment(e, PT_GNU_EH_FRAME, &hdr);
	if (rc == -MT_E_NOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	/* Both read once: their pages go when the table is made. */
	mt_elf_map_once(e, &hdr, &once);
	rc = eh_frame_ptr(&hdr, d, &eh_addr);
	mt_elf_once_unmap(&once);
	if (rc < 0)
		return rc;
	rc = mt_elf_vaddr_bytes(e, eh_addr, &eh);
	if (rc < 0)
		return rc == -MT_E_NOTFOUND ? -MT_E_CORRUPT : rc;
	d->section = ".eh_frame";
	mt_elf_map_once(e, &eh, &once);
	rc = mt_fde_parse(t, eh.p, eh.len, eh.addr, MT_FDE_EH_FRAME, &d->off);
	mt_elf_once_unmap(&once);
	mt_fde_sort(t);
	return rc;
}

const struct mt_fde *
mt_fde_find(const struct mt_fde_tab *t, uint64_t addr)
{
	size_t l = 0, h = t->n;

	while (l < h) {		/* first range with start > addr */
		size_t m = l + (h - l) / 2;

		if (t->v[m].start <= addr)
			l = m + 1;
		else
			h = m;
	}
	if (l == 0 || addr >= t->v[l - 1].end)
		return NULL;
	return &t->v[l - 1];
}
