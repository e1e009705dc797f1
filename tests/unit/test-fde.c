/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for common/fde.c.  Real binaries: the test program itself
 * (built -O2 -g with symbols), a copy of it made by strip(1), and the
 * system's libc (shipped stripped).  The truth comes from outside the
 * module: the unstripped file's symbol table (every function gcc compiled
 * begins an FDE) and libdw's own CFI reader (dwarf_cfi_addrframe() must
 * give the same range for each FDE start).  Hand-made sections test the
 * encodings and bad input.
 */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "buf.h"
#include "elffile.h"
#include "err.h"
#include "fde.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

/* Sorted, disjoint, non-empty. */
static int
tab_ok(const struct mt_fde_tab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].start >= t->v[i].end)
			return 0;
		if (i > 0 && t->v[i - 1].end > t->v[i].start)
			return 0;
	}
	return 1;
}

static int
read_file(const char *path, struct mt_fde_tab *t)
{
	struct mt_fde_diag d;
	struct mt_elf *e;
	int rc;

	mt_fde_tab_init(t);
	if (mt_elf_open(&e, path) < 0)
		return -1;
	rc = mt_fde_read_elf(t, e, &d);
	mt_elf_free(e);
	return rc;
}

/*
 * libdw's CFI table rows must begin at each range's start and end at its
 * end: dwarf_frame_info() gives the PC range of one row of the FDE's
 * table, the first row starts at the FDE's initial location and the last
 * ends at initial location + address range.  Returns the ranges that
 * disagree.
 */
static size_t
libdw_mismatches(const char *path, const struct mt_fde_tab *t)
{
	Dwarf_Addr start, end, s2, e2;
	Dwarf_Frame *fr, *fr2;
	Dwarf_CFI *cfi;
	size_t i, bad = 0;
	Elf *elf;
	int fd = open(path, O_RDONLY);

	elf_version(EV_CURRENT);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	if (cfi == NULL)
		bad = t->n + 1;
	for (i = 0; cfi != NULL && i < t->n; i++) {
		fr = fr2 = NULL;
		if (dwarf_cfi_addrframe(cfi, t->v[i].start, &fr) != 0 ||
		    dwarf_cfi_addrframe(cfi, t->v[i].end - 1, &fr2) != 0 ||
		    dwarf_frame_info(fr, &start, &end, NULL) < 0 ||
		    dwarf_frame_info(fr2, &s2, &e2, NULL) < 0 ||
		    start != t->v[i].start || e2 != t->v[i].end) {
			if (bad < 5)
				printf("# 0x%llx-0x%llx: libdw disagrees\n",
				    (unsigned long long)t->v[i].start,
				    (unsigned long long)t->v[i].end);
			bad++;
		}
		free(fr);
		free(fr2);
	}
	if (cfi != NULL)
		dwarf_cfi_end(cfi);
	if (elf != NULL)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return bad;
}

/* The test program, stripped into a file under $TMPDIR. */
static char *
stripped_self(void)
{
	const char *dir = getenv("TMPDIR");
	char *path, *cmd;

	if (asprintf(&path, "%s/test-fde-stripped.%d", dir ? dir : "/tmp",
	    (int)getpid()) < 0)
		return NULL;
	if (asprintf(&cmd, "strip -o '%s' /proc/%d/exe", path,
	    (int)getpid()) < 0) {
		free(path);
		return NULL;
	}
	if (system(cmd) != 0) {
		free(path);
		path = NULL;
	}
	free(cmd);
	return path;
}

static void
stripped_binary_gives_every_function_start(void)
{
	const struct mt_elf_sym *syms;
	struct mt_fde_tab full, bare;
	struct mt_elf *e;
	size_t n, i, funcs = 0, missing = 0;
	char *path = stripped_self();

	CHECK(path != NULL);
	if (path == NULL)
		return;
	CHECK(mt_elf_open(&e, path) == 0);
	CHECK(mt_elf_has_symtab(e) == 0);	/* strip did its work */
	mt_elf_free(e);
	CHECK(read_file("/proc/self/exe", &full) == 0);
	CHECK(read_file(path, &bare) == 0);
	CHECK(tab_ok(&bare));
	CHECK_EQ_U64(bare.n, full.n);
	CHECK(bare.n > 0 && full.n == bare.n &&
	    memcmp(full.v, bare.v, bare.n * sizeof(*bare.v)) == 0);
	/* gcc gives every function it compiles an FDE starting there. */
	CHECK(mt_elf_open(&e, "/proc/self/exe") == 0);
	CHECK(mt_elf_syms(e, &syms, &n) == 0);
	for (i = 0; i < n; i++) {
		const struct mt_fde *f;

		if (syms[i].kind != MT_ELF_SYM_FUNC || syms[i].size == 0)
			continue;
		funcs++;
		f = mt_fde_find(&bare, syms[i].start);
		if (f == NULL || f->start != syms[i].start) {
			printf("# no FDE starts at %s 0x%llx\n", syms[i].name,
			    (unsigned long long)syms[i].start);
			missing++;
		}
	}
	mt_elf_free(e);
	CHECK(funcs > 50);
	CHECK_EQ_U64(missing, 0);
	CHECK_EQ_U64(libdw_mismatches(path, &bare), 0);
	unlink(path);
	free(path);
	mt_fde_tab_release(&full);
	mt_fde_tab_release(&bare);
}

/*
 * A program compiled without unwind tables has its FDEs in .debug_frame
 * only; compressed (objcopy --compress-debug-sections), that section
 * gives no ranges and no error.
 */
static void
debug_frame_of_a_compiled_program(void)
{
	const struct mt_elf_sym *syms;
	const struct mt_fde *f;
	struct mt_fde_tab t;
	struct mt_elf *e;
	const char *dir = getenv("TMPDIR");
	char *prog, *comp, *cmd;
	size_t n, i, funcs = 0;

	if (asprintf(&prog, "%s/test-fde-df.%d", dir ? dir : "/tmp",
	    (int)getpid()) < 0)
		return;
	if (asprintf(&comp, "%s.z", prog) < 0) {
		free(prog);
		return;
	}
	if (asprintf(&cmd, "printf 'int f(int x){return x*3;}\\nint main(void)"
	    "{return f(2);}\\n' | cc -O1 -g -fno-asynchronous-unwind-tables "
	    "-x c -o '%s' - && objcopy --compress-debug-sections=zlib '%s' "
	    "'%s'", prog, prog, comp) < 0)
		cmd = NULL;
	CHECK(cmd != NULL && system(cmd) == 0);
	free(cmd);
	CHECK(read_file(prog, &t) == 0);
	CHECK(tab_ok(&t));
	CHECK(mt_elf_open(&e, prog) == 0);
	CHECK(mt_elf_syms(e, &syms, &n) == 0);
	for (i = 0; i < n; i++) {
		if (strcmp(syms[i].name, "f") != 0 &&
		    strcmp(syms[i].name, "main") != 0)
			continue;
		funcs++;
		f = mt_fde_find(&t, syms[i].start);
		CHECK(f != NULL && f->start == syms[i].start &&
		    f->end == syms[i].start + syms[i].size);
	}
	mt_elf_free(e);
	CHECK_EQ_U64(funcs, 2);
	mt_fde_tab_release(&t);
	CHECK(read_file(comp, &t) == 0);
	CHECK(tab_ok(&t));
	CHECK(mt_elf_open(&e, comp) == 0);
	CHECK(mt_elf_syms(e, &syms, &n) == 0);
	for (i = 0; i < n; i++)
		if (strcmp(syms[i].name, "f") == 0)
			CHECK(mt_fde_find(&t, syms[i].start) == NULL);
	mt_elf_free(e);
	mt_fde_tab_release(&t);
	unlink(prog);
	unlink(comp);
	free(prog);
	free(comp);
}

static void
libc_ranges_match_libdw(void)
{
	const struct mt_elf_sym *syms;
	struct mt_fde_tab t;
	struct mt_elf *e;
	size_t n, i, inside = 0, funcs = 0;

	CHECK(read_file(LIBC, &t) == 0);
	CHECK(t.n > 1000);
	CHECK(tab_ok(&t));
	CHECK_EQ_U64(libdw_mismatches(LIBC, &t), 0);
	/* The exported functions (.dynsym) lie inside FDE ranges. */
	CHECK(mt_elf_open(&e, LIBC) == 0);
	CHECK(mt_elf_syms(e, &syms, &n) == 0);
	for (i = 0; i < n; i++) {
		if (syms[i].kind != MT_ELF_SYM_FUNC || syms[i].size == 0)
			continue;
		funcs++;
		inside += mt_fde_find(&t, syms[i].start) != NULL;
	}
	mt_elf_free(e);
	CHECK(funcs > 1000);
	CHECK(inside * 100 >= funcs * 99);
	mt_fde_tab_release(&t);
}

/*
 * A hand-made .eh_frame at vaddr 0x1000: a "zR" CIE with pc-relative
 * sdata4 pointers, three FDEs (one of them empty: left out), a terminator.
 * *@fde2 gets the offset of the second FDE.
 */
static void
make_eh_frame(struct mt_wbuf *w, size_t *fde2)
{
	static const uint64_t start[] = { 0x2000, 0x2100, 0x2040 };
	static const uint32_t size[] = { 0x40, 0, 0x30 };
	size_t i, at;

	mt_wbuf_init(w);
	/* CIE: length, id 0, version 1, "zR", code 1, data -8, ra 16,
	 * augmentation length 1, R = pcrel|sdata4. */
	mt_wbuf_u32le(w, 4 + 1 + 3 + 1 + 1 + 1 + 1 + 1);
	mt_wbuf_u32le(w, 0);
	mt_wbuf_u8(w, 1);
	mt_wbuf_put(w, "zR", 3);
	mt_wbuf_u8(w, 1);
	mt_wbuf_u8(w, 0x78);
	mt_wbuf_u8(w, 16);
	mt_wbuf_u8(w, 1);
	mt_wbuf_u8(w, 0x1b);
	for (i = 0; i < 3; i++) {
		at = w->len;
		if (i == 2)
			*fde2 = at;
		mt_wbuf_u32le(w, 4 + 4 + 4 + 1);
		mt_wbuf_u32le(w, (uint32_t)(at + 4));	/* back to the CIE */
		mt_wbuf_u32le(w, (uint32_t)(start[i] - (0x1000 + at + 8)));
		mt_wbuf_u32le(w, size[i]);
		mt_wbuf_u8(w, 0);	/* no augmentation data */
	}
	mt_wbuf_u32le(w, 0);
}

static void
eh_frame_pcrel_ranges(void)
{
	struct mt_fde_tab t;
	struct mt_wbuf w;
	uint64_t off;
	size_t fde2;

	make_eh_frame(&w, &fde2);
	mt_fde_tab_init(&t);
	CHECK(w.err == 0);
	CHECK(mt_fde_parse(&t, w.p, w.len, 0x1000, MT_FDE_EH_FRAME, &off) == 0);
	mt_fde_sort(&t);
	CHECK_EQ_U64(t.n, 2);
	CHECK(t.n == 2 && t.v[0].start == 0x2000 && t.v[0].end == 0x2040 &&
	    t.v[1].start == 0x2040 && t.v[1].end == 0x2070);
	CHECK(mt_fde_find(&t, 0x1fff) == NULL);
	CHECK(mt_fde_find(&t, 0x2040) == &t.v[1]);
	CHECK(mt_fde_find(&t, 0x2070) == NULL);
	mt_fde_tab_release(&t);
	mt_wbuf_release(&w);
}

/* Cut at every length: whole records read, a cut one is -MT_E_TRUNC at
 * its own offset, never a crash (run it under SANITIZE too). */
static void
eh_frame_truncated_everywhere(void)
{
	struct mt_fde_tab t;
	struct mt_wbuf w;
	uint64_t off;
	size_t fde2, cut;
	int rc, bad = 0;

	make_eh_frame(&w, &fde2);
	for (cut = 0; cut < w.len; cut++) {
		mt_fde_tab_init(&t);
		rc = mt_fde_parse(&t, w.p, cut, 0x1000, MT_FDE_EH_FRAME, &off);
		if (rc == 0) {
			/* Only at record boundaries. */
			if (cut != 0 && cut != 17 && cut != 34 && cut != 51 &&
			    cut != 68)
				bad++;
		} else if (rc != -MT_E_TRUNC || off > cut ||
		    (off != 0 && off != 17 && off != 34 && off != 51 &&
		    off != 68)) {
			bad++;
		}
		mt_fde_tab_release(&t);
	}
	CHECK_EQ_U64(w.len, 72);
	CHECK_EQ_U64(bad, 0);
	mt_wbuf_release(&w);
}

static void
eh_frame_bad_records_name_their_offset(void)
{
	struct mt_fde_tab t;
	struct mt_wbuf w;
	uint64_t off;
	size_t fde2;

	/* The CIE pointer of FDE 2 leads to FDE 1. */
	make_eh_frame(&w, &fde2);
	mt_put_le32(w.p + fde2 + 4, (uint32_t)(fde2 + 4 - 34));
	mt_fde_tab_init(&t);
	CHECK(mt_fde_parse(&t, w.p, w.len, 0x1000, MT_FDE_EH_FRAME, &off) ==
	    -MT_E_CORRUPT);
	CHECK_EQ_U64(off, fde2);
	CHECK_EQ_U64(t.n, 1);	/* what came before stays */
	mt_fde_tab_release(&t);
	/* A CIE pointer before the section. */
	mt_put_le32(w.p + fde2 + 4, (uint32_t)(fde2 + 5));
	CHECK(mt_fde_parse(&t, w.p, w.len, 0x1000, MT_FDE_EH_FRAME, &off) ==
	    -MT_E_CORRUPT);
	CHECK_EQ_U64(off, fde2);
	mt_fde_tab_release(&t);
	mt_wbuf_release(&w);

	/* Data-relative pointers are not read. */
	make_eh_frame(&w, &fde2);
	w.p[16] = 0x3b;
	CHECK(mt_fde_parse(&t, w.p, w.len, 0x1000, MT_FDE_EH_FRAME, &off) ==
	    -MT_E_UNSUPP);
	CHECK_EQ_U64(off, 17);
	mt_fde_tab_release(&t);
	/* An unknown augmentation letter: the CIE's offset. */
	w.p[16] = 0x1b;
	w.p[10] = 'Q';
	CHECK(mt_fde_parse(&t, w.p, w.len, 0x1000, MT_FDE_EH_FRAME, &off) ==
	    -MT_E_UNSUPP);
	CHECK_EQ_U64(off, 0);
	mt_fde_tab_release(&t);
	/* A range that wraps past 2^64. */
	w.p[10] = 'R';
	mt_put_le32(w.p + fde2 + 12, 0xffffffffu);
	CHECK(mt_fde_parse(&t, w.p, w.len, 0x1000, MT_FDE_EH_FRAME, &off) ==
	    -MT_E_CORRUPT);
	CHECK_EQ_U64(off, fde2);
	CHECK_EQ_U64(t.n, 1);
	mt_fde_tab_release(&t);
	mt_wbuf_release(&w);
}

static void
debug_frame_v4_absolute(void)
{
	struct mt_fde_tab t;
	struct mt_wbuf w;
	uint64_t off;

	mt_wbuf_init(&w);
	/* CIE v4: id ~0, "", address size 8, segment 0, code 1, data -8,
	 * ra 16 (ULEB). */
	mt_wbuf_u32le(&w, 4 + 1 + 1 + 2 + 3);
	mt_wbuf_u32le(&w, 0xffffffffu);
	mt_wbuf_u8(&w, 4);
	mt_wbuf_u8(&w, 0);
	mt_wbuf_u8(&w, 8);
	mt_wbuf_u8(&w, 0);
	mt_wbuf_u8(&w, 1);
	mt_wbuf_u8(&w, 0x78);
	mt_wbuf_u8(&w, 16);
	/* FDE: CIE at 0, start 0x401000, size 0x20. */
	mt_wbuf_u32le(&w, 4 + 8 + 8);
	mt_wbuf_u32le(&w, 0);
	mt_wbuf_u64le(&w, 0x401000);
	mt_wbuf_u64le(&w, 0x20);
	/* A discarded function (start 0) is left out. */
	mt_wbuf_u32le(&w, 4 + 8 + 8);
	mt_wbuf_u32le(&w, 0);
	mt_wbuf_u64le(&w, 0);
	mt_wbuf_u64le(&w, 0x20);
	mt_fde_tab_init(&t);
	CHECK(mt_fde_parse(&t, w.p, w.len, 0, MT_FDE_DEBUG_FRAME, &off) == 0);
	CHECK_EQ_U64(t.n, 1);
	CHECK(t.n == 1 && t.v[0].start == 0x401000 && t.v[0].end == 0x401020);
	/* In .debug_frame, id 0 is an FDE pointer, not a CIE: an .eh_frame
	 * reader must refuse the same bytes. */
	mt_fde_tab_release(&t);
	CHECK(mt_fde_parse(&t, w.p, w.len, 0, MT_FDE_EH_FRAME, &off) < 0);
	mt_fde_tab_release(&t);
	mt_wbuf_release(&w);
}

static void
sort_cuts_overlaps(void)
{
	struct mt_fde_tab t;

	mt_fde_tab_init(&t);
	t.cap = 4;
	t.v = calloc(4, sizeof(*t.v));
	CHECK(t.v != NULL);
	if (t.v == NULL)
		return;
	t.v[0] = (struct mt_fde){ 0x300, 0x400 };
	t.v[1] = (struct mt_fde){ 0x100, 0x350 };
	t.v[2] = (struct mt_fde){ 0x100, 0x120 };
	t.v[3] = (struct mt_fde){ 0x500, 0x510 };
	t.n = 4;
	mt_fde_sort(&t);
	CHECK_EQ_U64(t.n, 3);
	CHECK(t.v[0].start == 0x100 && t.v[0].end == 0x300);
	CHECK(t.v[1].start == 0x300 && t.v[1].end == 0x400);
	CHECK(tab_ok(&t));
	mt_fde_tab_release(&t);
}

static int
ref_cmp(const void *a, const void *b)
{
	const struct mt_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/*
 * Tables in runs (sorted, reversed, a few runs as in libc's .eh_frame,
 * many short ones, equal starts across runs) sort as qsort sorts them,
 * then cut as sort_cuts_overlaps: the reference is made here.
 */
static void
sort_merges_runs_as_qsort_would(void)
{
	static const size_t sizes[] = { 1, 2, 3, 7, 64, 1000, 3713 };
	uint64_t seed = 12345;
	size_t si, shape, i, k, bad = 0;

	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
		for (shape = 0; shape < 4; shape++) {
			size_t n = sizes[si];
			struct mt_fde_tab t;
			struct mt_fde *ref = malloc(n * sizeof(*ref));

			mt_fde_tab_init(&t);
			t.v = malloc(n * sizeof(*t.v));
			CHECK(ref != NULL && t.v != NULL);
			if (ref == NULL || t.v == NULL) {
				free(ref);
				free(t.v);
				return;
			}
			t.cap = t.n = n;
			for (i = 0; i < n; i++) {
				uint64_t r;

				seed = seed * 6364136223846793005ull + 1;
				r = seed >> 33;
				/* 0 sorted, 1 reversed, 2 runs of ~20,
				 * 3 random with repeated starts */
				t.v[i].start = shape == 0 ? 16 * i :
				    shape == 1 ? 16 * (n - i) :
				    shape == 2 ? 16 * i + (i % 20 == 0 ?
				    (r % 8) * 4096 : 0) : (r % (n + 1)) * 8;
				t.v[i].end = t.v[i].start + 1 + r % 40;
			}
			memcpy(ref, t.v, n * sizeof(*ref));
			qsort(ref, n, sizeof(*ref), ref_cmp);
			for (i = 1, k = 0; i < n; i++) {
				if (ref[i].start == ref[k].start)
					continue;
				if (ref[k].end > ref[i].start)
					ref[k].end = ref[i].start;
				ref[++k] = ref[i];
			}
			mt_fde_sort(&t);
			if (t.n != k + 1 || memcmp(t.v, ref, t.n *
			    sizeof(*ref)) != 0)
				bad++;
			free(ref);
			mt_fde_tab_release(&t);
		}
	CHECK_EQ_U64(bad, 0);
}

/* The whole file at @path in a malloc'ed buffer; NULL on failure. */
static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n)) != NULL &&
	    fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	if (f != NULL)
		fclose(f);
	*len = p != NULL ? (size_t)n : 0;
	return p;
}

/* Offset of @img's PT_GNU_EH_FRAME program header, or 0. */
static size_t
eh_hdr_phdr(const uint8_t *img, size_t len)
{
	uint64_t phoff = mt_le64(img + 0x20);
	size_t i, n = mt_le16(img + 0x38);

	for (i = 0; i < n && phoff + 56 * (i + 1) <= len; i++)
		if (mt_le32(img + phoff + 56 * i) == 0x6474e550)
			return (size_t)phoff + 56 * i;
	return 0;
}

/* The FDE ranges of @img through its .eh_frame_hdr; returns the error. */
static int
read_hdr(const uint8_t *img, size_t len, struct mt_fde_tab *t,
    struct mt_fde_diag *d)
{
	struct mt_elf *e;
	int rc;

	mt_fde_tab_init(t);
	if (mt_elf_open_ref(&e, img, len) < 0)
		return 1;
	rc = mt_fde_read_elf(t, e, d);
	if (rc == 0 && t->n == 0)
		rc = mt_fde_read_eh_frame_hdr(t, e, d);
	else
		rc = 2;	/* the sections were still found */
	mt_elf_free(e);
	return rc;
}

/*
 * libc with its section headers gone (e_shoff, e_shnum, e_shstrndx 0, as
 * in a memory image): the .eh_frame that PT_GNU_EH_FRAME leads to gives
 * the very ranges the section gives.  A header of another version, an
 * eh_frame_ptr outside the file and a header cut at each byte are errors
 * naming .eh_frame_hdr.
 */
static void
eh_frame_hdr_without_sections(void)
{
	struct mt_fde_tab want, t;
	struct mt_fde_diag d;
	uint8_t *img;
	size_t len, ph, i, same = 0;
	uint64_t off, filesz;

	CHECK(read_file(LIBC, &want) == 0);
	img = slurp(LIBC, &len);
	CHECK(img != NULL);
	if (img == NULL)
		return;
	memset(img + 0x28, 0, 8);
	memset(img + 0x3c, 0, 4);
	CHECK(read_hdr(img, len, &t, &d) == 0);
	CHECK(want.n > 1000);
	CHECK_EQ_U64(t.n, want.n);
	for (i = 0; i < t.n && i < want.n; i++)
		same += t.v[i].start == want.v[i].start &&
		    t.v[i].end == want.v[i].end;
	CHECK_EQ_U64(same, want.n);
	mt_fde_tab_release(&t);

	ph = eh_hdr_phdr(img, len);
	CHECK(ph != 0);
	if (ph == 0)
		goto out;
	off = mt_le64(img + ph + 8);
	filesz = mt_le64(img + ph + 32);
	img[off] = 2;	/* version */
	CHECK(read_hdr(img, len, &t, &d) == -MT_E_UNSUPP);
	CHECK(strcmp(d.section, ".eh_frame_hdr") == 0);
	mt_fde_tab_release(&t);
	img[off] = 1;
	CHECK_EQ_U64(img[off + 1], 0x1b);	/* pcrel sdata4 */
	memcpy(img + off + 4, "\x00\x00\x00\x40", 4);	/* +1 GiB */
	CHECK(read_hdr(img, len, &t, &d) == -MT_E_CORRUPT);
	CHECK(strcmp(d.section, ".eh_frame_hdr") == 0 && d.off == 4);
	CHECK_EQ_U64(t.n, 0);
	mt_fde_tab_release(&t);
	for (i = 0; i < 8; i++) {
		uint64_t cut = i;

		memcpy(img + ph + 32, &cut, 8);	/* p_filesz */
		CHECK(read_hdr(img, len, &t, &d) ==
		    (i == 0 ? 0 : -MT_E_TRUNC));
		CHECK_EQ_U64(t.n, 0);
		mt_fde_tab_release(&t);
	}
	memcpy(img + ph + 32, &filesz, 8);
out:
	mt_fde_tab_release(&want);
	free(img);
}

int
main(void)
{
	TEST(eh_frame_pcrel_ranges);
	TEST(eh_frame_truncated_everywhere);
	TEST(eh_frame_bad_records_name_their_offset);
	TEST(debug_frame_v4_absolute);
	TEST(sort_cuts_overlaps);
	TEST(sort_merges_runs_as_qsort_would);
	TEST(stripped_binary_gives_every_function_start);
	TEST(debug_frame_of_a_compiled_program);
	TEST(libc_ranges_match_libdw);
	TEST(eh_frame_hdr_without_sections);
	return tap_done();
}
