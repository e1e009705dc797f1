/* SPDX-License-Identifier: MIT */
/*
 * The kernel text a snapshot carries (the BLOB of kind kernel text named
 * "[kernel.kallsyms]", copied from /proc/kcore at capture) as an ELF
 * executable perf reads with `perf script --vmlinux FILE`, for
 * mt-capture export-perf (docs/perf.md, "Kernel code").
 *
 * perf 6.1 decodes kernel code only through its kernel map, which a
 * perf.data being read gets from a kernel MMAP record, and reads the
 * code bytes of that map from a vmlinux (an ELF file whose .text is at
 * its run-time address; `--vmlinux`) or a kcore directory, never from a
 * flat file.  So the file written here is the smallest such ELF: one
 * PT_LOAD segment and a .text section holding the bytes at their
 * address, and a symbol table made of the snapshot's kallsyms text
 * symbols inside that range, plus `_text` at its start when kallsyms
 * has none there (perf relocates kernel symbols against the `_text` the
 * MMAP record names).  Checked with perf 6.1 only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "perf.h"
#include "snap.h"

#define EHDR_SIZE	64
#define PHDR_SIZE	56
#define SHDR_SIZE	64
#define SYM_SIZE	24
#define TEXT_ALIGN	4096

/* Append @n zero bytes. */
static void
pad(struct mt_wbuf *w, size_t n)
{
	while (n-- > 0)
		mt_wbuf_u8(w, 0);
}

/* Pad @w to a multiple of @a bytes. */
static void
align(struct mt_wbuf *w, size_t a)
{
	pad(w, (a - w->len % a) % a);
}

static void
sym(struct mt_wbuf *syms, struct mt_wbuf *str, const char *name,
    size_t nlen, uint64_t value)
{
	mt_wbuf_u32le(syms, (uint32_t)str->len);
	mt_wbuf_u8(syms, 0x12);		/* STB_GLOBAL, STT_FUNC */
	mt_wbuf_u8(syms, 0);
	mt_wbuf_u16le(syms, 1);		/* .text */
	mt_wbuf_u64le(syms, value);
	mt_wbuf_u64le(syms, 0);		/* perf ends it at the next one */
	mt_wbuf_put(str, name, nlen);
	mt_wbuf_u8(str, 0);
}

/*
 * The text symbols of kallsyms text @k ("ADDR TYPE NAME [MODULE]" lines)
 * in [@lo, @lo + @len) into @syms and @str; returns 1 if one is `_text`
 * at @lo.  Malformed lines are skipped.
 */
static int
kallsyms_syms(const char *k, size_t klen, uint64_t lo, uint64_t len,
    struct mt_wbuf *syms, struct mt_wbuf *str)
{
	const char *p = k, *end = k + klen;
	int has_text = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end, *q = p, *name;
		uint64_t a = 0;
		int digits = 0;
		char type;

		for (; q < e && digits < 16; q++, digits++) {
			int v = *q >= '0' && *q <= '9' ? *q - '0' :
			    *q >= 'a' && *q <= 'f' ? *q - 'a' + 10 : -1;

			if (v < 0)
				break;
			a = a << 4 | (uint64_t)v;
		}
		p = nl ? nl + 1 : end;
		if (digits == 0 || e - q < 4 || q[0] != ' ' || q[2] != ' ')
			continue;
		type = q[1];
		name = q + 3;
		if ((type != 't' && type != 'T' && type != 'w' &&
		    type != 'W') || a < lo || a - lo >= len)
			continue;
		q = name;
		while (q < e && *q != ' ' && *q != '\t')
			q++;
		if (q == name)
			continue;
		if (a == lo && q - name == 5 && memcmp(name, "_text", 5) == 0)
			has_text = 1;
		sym(syms, str, name, (size_t)(q - name), a);
	}
	return has_text;
}

int
perf_vmlinux(struct mt_wbuf *out, const struct mt_snap *s, uint64_t addr,
    const uint8_t *code, uint64_t len)
{
	struct mt_wbuf syms, str;
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	uint64_t text_off, sym_off, str_off, shstr_off, sh_off;
	size_t i;
	int has_text = 0, rc;

	mt_wbuf_init(&syms);
	mt_wbuf_init(&str);
	pad(&syms, SYM_SIZE);		/* the null symbol */
	mt_wbuf_u8(&str, 0);
	for (i = 0; i < s->ntexts; i++)
		if (s->texts[i].kind == MT_SNAP_TEXT_KALLSYMS)
			has_text |= kallsyms_syms(s->texts[i].data,
			    (size_t)s->texts[i].len, addr, len, &syms, &str);
	if (!has_text)
		sym(&syms, &str, "_text", 5, addr);
	/* file offset of .text congruent to its address, as PT_LOAD needs */
	text_off = TEXT_ALIGN + (addr & (TEXT_ALIGN - 1));
	sym_off = (text_off + len + 7) & ~(uint64_t)7;
	str_off = sym_off + syms.len;
	shstr_off = str_off + str.len;
	sh_off = (shstr_off + sizeof(shstr) + 7) & ~(uint64_t)7;

	/* ELF header: ELFCLASS64, little-endian, ET_EXEC, EM_X86_64 */
	mt_wbuf_put(out, "\177ELF\2\1\1", 7);
	pad(out, 9);
	mt_wbuf_u16le(out, 2);
	mt_wbuf_u16le(out, 62);
	mt_wbuf_u32le(out, 1);
	mt_wbuf_u64le(out, addr);
	mt_wbuf_u64le(out, EHDR_SIZE);
	mt_wbuf_u64le(out, sh_off);
	mt_wbuf_u32le(out, 0);
	mt_wbuf_u16le(out, EHDR_SIZE);
	mt_wbuf_u16le(out, PHDR_SIZE);
	mt_wbuf_u16le(out, 1);
	mt_wbuf_u16le(out, SHDR_SIZE);
	mt_wbuf_u16le(out, 5);
	mt_wbuf_u16le(out, 4);
	/* PT_LOAD, R+X */
	mt_wbuf_u32le(out, 1);
	mt_wbuf_u32le(out, 5);
	mt_wbuf_u64le(out, text_off);
	mt_wbuf_u64le(out, addr);
	mt_wbuf_u64le(out, addr);
	mt_wbuf_u64le(out, len);
	mt_wbuf_u64le(out, len);
	mt_wbuf_u64le(out, TEXT_ALIGN);
	pad(out, (size_t)text_off - out->len);
	mt_wbuf_put(out, code, (size_t)len);
	align(out, 8);
	mt_wbuf_put(out, syms.p, syms.len);
	mt_wbuf_put(out, str.p, str.len);
	mt_wbuf_put(out, shstr, sizeof(shstr));
	align(out, 8);
	/* section headers: null, .text, .symtab, .strtab, .shstrtab */
	pad(out, SHDR_SIZE);
	{
		const struct {
			uint32_t name, type;
			uint64_t flags, addr, off, size;
			uint32_t link, info;
			uint64_t align, entsize;
		} sh[4] = {
			{ 1, 1, 6, addr, text_off, len, 0, 0, 16, 0 },
			{ 7, 2, 0, 0, sym_off, syms.len, 3, 1, 8, SYM_SIZE },
			{ 15, 3, 0, 0, str_off, str.len, 0, 0, 1, 0 },
			{ 23, 3, 0, 0, shstr_off, sizeof(shstr), 0, 0, 1, 0 },
		};

		for (i = 0; i < 4; i++) {
			mt_wbuf_u32le(out, sh[i].name);
			mt_wbuf_u32le(out, sh[i].type);
			mt_wbuf_u64le(out, sh[i].flags);
			mt_wbuf_u64le(out, sh[i].addr);
			mt_wbuf_u64le(out, sh[i].off);
			mt_wbuf_u64le(out, sh[i].size);
			mt_wbuf_u32le(out, sh[i].link);
			mt_wbuf_u32le(out, sh[i].info);
			mt_wbuf_u64le(out, sh[i].align);
			mt_wbuf_u64le(out, sh[i].entsize);
		}
	}
	rc = syms.err ? syms.err : str.err ? str.err : out->err;
	mt_wbuf_release(&syms);
	mt_wbuf_release(&str);
	return rc < 0 ? rc : 0;
}
