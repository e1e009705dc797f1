/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for common/elffile.c and elfsyms.c, against the test binary
 * itself (/proc/self/exe, built with symbols) and the system's libc and
 * libm.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "elffile.h"
#include "err.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LIBM "/usr/lib/x86_64-linux-gnu/libm.so.6"

static void *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n)) != NULL &&
	    fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	if (p != NULL)
		*len = (size_t)n;
	fclose(f);
	return p;
}

static const struct mt_elf_sym *
sym_by_name(struct mt_elf *e, const char *name)
{
	const struct mt_elf_sym *s;
	size_t n, i;

	if (mt_elf_syms(e, &s, &n) != 0)
		return NULL;
	for (i = 0; i < n; i++)
		if (strcmp(s[i].name, name) == 0)
			return &s[i];
	return NULL;
}

static void
open_missing_file_fails(void)
{
	struct mt_elf *e = (struct mt_elf *)1;

	CHECK(mt_elf_open(&e, "/nonexistent/x.so") == -MT_E_SYS);
	CHECK(e == NULL);
	CHECK(strstr(mt_elf_errmsg(NULL), "No such file") != NULL);
}

static void
open_mem_garbage_is_magic_error(void)
{
	static const char junk[] = "this is not an ELF file at all......";
	struct mt_elf *e;

	CHECK(mt_elf_open_mem(&e, junk, sizeof(junk)) == -MT_E_MAGIC);
	CHECK(e == NULL);
	CHECK_STR(mt_elf_errmsg(NULL), "not an ELF file (bad magic at offset 0)");
}

static void
libc_headers_and_build_id(void)
{
	struct mt_elf *e;
	const struct mt_elf_seg *seg;
	const uint8_t *id;
	char hex[2 * MT_ELF_BUILD_ID_MAX + 1];
	size_t nseg, i, nx = 0;
	uint64_t va;

	CHECK(mt_elf_open(&e, LIBC) == 0);
	if (e == NULL)
		return;
	CHECK(mt_elf_type(e) == MT_ELF_DYN);
	CHECK_EQ_U64(mt_elf_build_id(e, &id), 20);
	mt_elf_build_id_hex(e, hex);
	CHECK_EQ_U64(strlen(hex), 40);
	nseg = mt_elf_segs(e, &seg);
	CHECK(nseg >= 2);
	for (i = 0; i < nseg; i++)
		nx += (seg[i].flags & 1) != 0;
	CHECK(nx >= 1);
	CHECK(mt_elf_off_to_vaddr(e, seg[0].offset, &va) == 0 &&
	    va == seg[0].vaddr);
	CHECK(mt_elf_off_to_vaddr(e, UINT64_MAX - 5, &va) == -MT_E_NOTFOUND);
	/* Debian's libc is stripped, with a debuglink to its debug file. */
	CHECK(mt_elf_has_symtab(e) == 0);
	CHECK(mt_elf_debuglink(e, NULL) != NULL);
	mt_elf_free(e);
}

static void
libc_mem_matches_file(void)
{
	struct mt_elf *a, *b;
	const struct mt_elf_sym *sa, *sb;
	const uint8_t *ida, *idb;
	size_t na, nb, len = 0;
	void *p = slurp(LIBC, &len);

	CHECK(p != NULL);
	if (p == NULL)
		return;
	CHECK(mt_elf_open(&a, LIBC) == 0);
	CHECK(mt_elf_open_mem(&b, p, len) == 0);
	free(p);	/* copied */
	if (a == NULL || b == NULL) {
		mt_elf_free(a);
		mt_elf_free(b);
		return;
	}
	CHECK(mt_elf_build_id(a, &ida) == mt_elf_build_id(b, &idb));
	CHECK(memcmp(ida, idb, mt_elf_build_id(a, &ida)) == 0);
	CHECK(mt_elf_syms(a, &sa, &na) == 0);
	CHECK(mt_elf_syms(b, &sb, &nb) == 0);
	CHECK_EQ_U64(na, nb);
	CHECK(na > 1000);
	CHECK(na == nb && sa[na / 2].start == sb[na / 2].start &&
	    strcmp(sa[na / 2].name, sb[na / 2].name) == 0);
	mt_elf_free(a);
	mt_elf_free(b);
}

/*
 * mt_elf_map_once: libc's .eh_frame (a section) and the bytes from its
 * .eh_frame_hdr's address (a segment's) read the same through the
 * mapping made for one reading as through libelf's, which is another
 * mapping, unmapped after; a memory image maps nothing and keeps its
 * pointer.
 */
static void
libc_map_once_same_bytes(void)
{
	struct mt_elf *a, *b;
	struct mt_elf_secdata d, m;
	struct mt_elf_once o;
	size_t len = 0;
	void *p = slurp(LIBC, &len);

	CHECK(p != NULL && mt_elf_open(&a, LIBC) == 0);
	if (p == NULL || a == NULL)
		return;
	CHECK(mt_elf_section(a, ".eh_frame", &d) == 0);
	m = d;
	mt_elf_map_once(a, &m, &o);
	CHECK(o.base != NULL && m.p != d.p && m.len == d.len &&
	    m.addr == d.addr);
	CHECK(memcmp(m.p, d.p, d.len) == 0);
	mt_elf_once_unmap(&o);
	CHECK(o.base == NULL);
	CHECK(mt_elf_segment(a, 0x6474e550 /* PT_GNU_EH_FRAME */, &d) == 0);
	CHECK(mt_elf_vaddr_bytes(a, d.addr, &d) == 0);
	m = d;
	mt_elf_map_once(a, &m, &o);
	CHECK(o.base != NULL && m.p != d.p && m.len == d.len);
	CHECK(memcmp(m.p, d.p, d.len) == 0);
	mt_elf_once_unmap(&o);
	mt_elf_once_unmap(&o);		/* twice: nothing */
	CHECK(mt_elf_open_mem(&b, p, len) == 0);
	if (b != NULL) {
		CHECK(mt_elf_section(b, ".eh_frame", &d) == 0);
		m = d;
		mt_elf_map_once(b, &m, &o);
		CHECK(o.base == NULL && m.p == d.p && m.len == d.len);
		mt_elf_once_unmap(&o);
	}
	free(p);
	mt_elf_free(a);
	mt_elf_free(b);
}

static void
libc_ref_matches_mem_and_copies_nothing(void)
{
	struct mt_elf *a, *b;
	const struct mt_elf_sym *sa, *sb;
	size_t na, nb, len = 0;
	void *p = slurp(LIBC, &len), *q;

	CHECK(p != NULL);
	if (p == NULL)
		return;
	q = malloc(len);
	CHECK(q != NULL);
	if (q == NULL) {
		free(p);
		return;
	}
	memcpy(q, p, len);
	CHECK(mt_elf_open_mem(&a, p, len) == 0);
	CHECK(mt_elf_open_ref(&b, q, len) == 0);
	if (a != NULL && b != NULL) {
		CHECK(mt_elf_syms(a, &sa, &na) == 0);
		CHECK(mt_elf_syms(b, &sb, &nb) == 0);
		CHECK(na > 1000 && na == nb);
		CHECK(na == nb && sa[na / 3].start == sb[na / 3].start &&
		    strcmp(sa[na / 3].name, sb[na / 3].name) == 0);
	}
	mt_elf_free(a);
	mt_elf_free(b);
	CHECK(memcmp(p, q, len) == 0);	/* read in place, nothing written */
	CHECK(mt_elf_open_ref(&b, "junk", 4) == -MT_E_MAGIC);
	free(p);
	free(q);
}

static void
libc_syms_sorted_and_found(void)
{
	struct mt_elf *e;
	const struct mt_elf_sym *s, *m, *f;
	size_t n, i;
	int sorted = 1, found = 1;

	CHECK(mt_elf_open(&e, LIBC) == 0);
	if (e == NULL)
		return;
	CHECK(mt_elf_syms(e, &s, &n) == 0);
	for (i = 1; i < n; i++)
		if (s[i - 1].start >= s[i].start ||
		    s[i - 1].end <= s[i - 1].start)
			sorted = 0;
	CHECK(sorted);
	/* Every symbol's own start and last byte find it. */
	for (i = 0; i < n; i++) {
		if (mt_elf_sym_find(e, s[i].start, &f) != 0 || f != &s[i])
			found = 0;
		if (s[i].size > 0 && (mt_elf_sym_find(e, s[i].end - 1, &f) !=
		    0 || f != &s[i]))
			found = 0;
	}
	CHECK(found);
	m = sym_by_name(e, "qsort");
	CHECK(m != NULL && m->kind == MT_ELF_SYM_FUNC && m->size > 0);
	CHECK(mt_elf_sym_find(e, 0, &f) == -MT_E_NOTFOUND);
	/* A JUMP_SLOT stub, and an IRELATIVE one named after its IFUNC. */
	CHECK(sym_by_name(e, "realloc@plt") != NULL);
	CHECK(sym_by_name(e, "strnlen@plt") != NULL);
	if (m != NULL) {
		CHECK(mt_elf_sym_nearest(e, m->start + 1, &f) == 0 && f == m);
	}
	mt_elf_free(e);
}

static void
libm_has_plt_stubs(void)
{
	struct mt_elf *e;
	const struct mt_elf_sym *s, *f;
	size_t n, i, nplt = 0;

	CHECK(mt_elf_open(&e, LIBM) == 0);
	if (e == NULL)
		return;
	CHECK(mt_elf_syms(e, &s, &n) == 0);
	for (i = 0; i < n; i++) {
		if (s[i].kind != MT_ELF_SYM_PLT)
			continue;
		nplt++;
		CHECK(strstr(s[i].name, "@plt") != NULL);
		CHECK(mt_elf_sym_find(e, s[i].start + 3, &f) == 0 &&
		    f == &s[i]);
	}
	CHECK(nplt > 0);
	/* cos, cosf64 and cosf32x share an address: "cos" is the alias. */
	f = sym_by_name(e, "cosf64");
	if (f == NULL)
		f = sym_by_name(e, "cos");
	CHECK(f != NULL && strcmp(f->alias, "cos") == 0);
	mt_elf_free(e);
}

static void
self_function_addresses(void)
{
	struct mt_elf *e;
	const struct mt_elf_sym *a, *b, *f;
	uint64_t bias_a, bias_b;

	CHECK(mt_elf_open(&e, "/proc/self/exe") == 0);
	if (e == NULL)
		return;
	CHECK(mt_elf_has_symtab(e) == 1);
	a = sym_by_name(e, "libm_has_plt_stubs");
	b = sym_by_name(e, "self_function_addresses");
	CHECK(a != NULL && b != NULL);
	if (a != NULL && b != NULL) {
		bias_a = (uint64_t)(uintptr_t)libm_has_plt_stubs - a->start;
		bias_b = (uint64_t)(uintptr_t)self_function_addresses -
		    b->start;
		CHECK_EQ_U64(bias_a, bias_b);
		CHECK(mt_elf_sym_find(e, b->start + b->size / 2, &f) == 0 &&
		    f == b);
	}
	f = sym_by_name(e, "elf_begin@plt");
	CHECK(f != NULL && f->kind == MT_ELF_SYM_PLT);
	mt_elf_free(e);
}

static void
truncated_images_never_crash(void)
{
	size_t len = 0, cut;
	char *p = slurp("/proc/self/exe", &len);
	struct mt_elf *e;
	const struct mt_elf_sym *s;
	size_t n;
	int bad = 0;

	CHECK(p != NULL);
	if (p == NULL)
		return;
	for (cut = 0; cut < len; cut += cut < 4096 ? 7 : 4093) {
		int rc = mt_elf_open_mem(&e, p, cut);

		if (rc == 0) {
			/* The section headers are at the end: every cut
			 * that still opens loses them. */
			if (mt_elf_truncated(e) == NULL)
				bad = 1;
			rc = mt_elf_syms(e, &s, &n);
			mt_elf_free(e);
		} else if (e != NULL || mt_elf_errmsg(NULL)[0] == '\0') {
			bad = 1;
		}
	}
	CHECK(!bad);
	free(p);
}

static uint64_t
le(const char *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | (uint8_t)p[n];
	return v;
}

static void
put_le(char *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (char)(v >> (8 * i));
}

static void
truncation_is_reported_not_fatal(void)
{
	size_t len = 0;
	char *p = slurp(LIBC, &len), msg[128];
	const struct mt_elf_seg *segs;
	uint64_t shoff, phoff;
	struct mt_elf *e;
	const char *t;

	CHECK(p != NULL && len > 4096);
	if (p == NULL || len <= 4096)
		return;
	CHECK(mt_elf_open_mem(&e, p, len) == 0);
	CHECK(mt_elf_truncated(e) == NULL);
	mt_elf_free(e);

	/* Cut in the code: the section headers at the end are lost. */
	CHECK(mt_elf_open_mem(&e, p, 3000) == 0);
	t = e ? mt_elf_truncated(e) : NULL;
	shoff = le(p + 0x28, 8);
	snprintf(msg, sizeof(msg), "truncated: section headers end at byte "
	    "%llu, file has 3000", (unsigned long long)(shoff +
	    le(p + 0x3a, 2) * le(p + 0x3c, 2)));
	CHECK(t != NULL && strcmp(t, msg) == 0);
	/* Still usable: the program headers are within the cut. */
	CHECK(e != NULL && mt_elf_segs(e, &segs) > 0);
	mt_elf_free(e);

	/* Cut inside the ELF header: that one is an open failure. */
	e = (struct mt_elf *)1;
	CHECK(mt_elf_open_mem(&e, p, 40) == -MT_E_TRUNC && e == NULL);
	CHECK(strcmp(mt_elf_errmsg(NULL), "truncated: ELF header ends at "
	    "byte 64, file has 40") == 0);

	/* One byte short. */
	CHECK(mt_elf_open_mem(&e, p, len - 1) == 0);
	CHECK(e != NULL && mt_elf_truncated(e) != NULL);
	mt_elf_free(e);

	/* The program headers themselves cut. */
	phoff = le(p + 0x20, 8);
	CHECK(mt_elf_open_mem(&e, p, phoff + 10) == 0);
	t = e ? mt_elf_truncated(e) : NULL;
	CHECK(t != NULL && strstr(t, "program headers end at byte") == t +
	    strlen("truncated: "));
	mt_elf_free(e);

	/* Headers intact, the first segment's bytes said to run past EOF. */
	put_le(p + phoff + 0x20, len, 8);	/* phdr[0].p_filesz */
	CHECK(mt_elf_open_mem(&e, p, len) == 0);
	t = e ? mt_elf_truncated(e) : NULL;
	CHECK(t != NULL && strstr(t, "truncated: segment 0 ends at byte ")
	    == t);
	mt_elf_free(e);
	free(p);

	/* Headers intact, section 1's bytes moved past EOF. */
	p = slurp(LIBC, &len);
	CHECK(p != NULL);
	if (p == NULL)
		return;
	shoff = le(p + 0x28, 8);
	put_le(p + shoff + 64 + 0x18, len, 8);	/* shdr[1].sh_offset */
	CHECK(mt_elf_open_mem(&e, p, len) == 0);
	t = e ? mt_elf_truncated(e) : NULL;
	CHECK(t != NULL && strncmp(t, "truncated: section '.", 21) == 0 &&
	    strstr(t, "' ends at byte ") != NULL);
	mt_elf_free(e);
	free(p);
}

int
main(void)
{
	TEST(open_missing_file_fails);
	TEST(open_mem_garbage_is_magic_error);
	TEST(libc_headers_and_build_id);
	TEST(libc_mem_matches_file);
	TEST(libc_ref_matches_mem_and_copies_nothing);
	TEST(libc_map_once_same_bytes);
	TEST(libc_syms_sorted_and_found);
	TEST(truncation_is_reported_not_fatal);
	TEST(libm_has_plt_stubs);
	TEST(self_function_addresses);
	TEST(truncated_images_never_crash);
	return tap_done();
}
