/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: ELF loading from memory (common/elffile.c), what mt-decode
 * does with the ELF files bundled in a snapshot and mt-symbolize with the
 * binaries it finds.  Opens the input with mt_elf_open_mem() and, when it
 * opens, asks every question the programs ask: build-id, segments, file
 * offset to address, debuglink, the symbol table and lookups in it, the
 * FDE ranges of .eh_frame and .debug_frame (common/fde.c).
 *
 * Invariants: the symbol table is sorted with start <= end, and a symbol
 * found for an address covers that address; the FDE ranges are sorted and
 * disjoint.
 */
#include <string.h>

#include "err.h"
#include "elffile.h"
#include "fde.h"
#include "fuzz.h"

static void
probe(struct mt_elf *e, uint64_t a)
{
	const struct mt_elf_sym *s;

	if (mt_elf_sym_find(e, a, &s) == 0)
		FUZZ_CHECK(s->start <= a && a < s->end);
	if (mt_elf_sym_nearest(e, a, &s) == 0)
		FUZZ_CHECK(s->start <= a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_elf *e;
	const struct mt_elf_seg *segs;
	const struct mt_elf_sym *syms;
	const uint8_t *id;
	struct mt_fde_tab fdes;
	struct mt_fde_diag fd;
	char hex[2 * MT_ELF_BUILD_ID_MAX + 1];
	uint32_t crc;
	uint64_t va;
	size_t i, n, nsyms;
	int rc;

	rc = mt_elf_open_mem(&e, data, size);
	if (rc < 0) {
		FUZZ_CHECK(e == NULL);
		FUZZ_CHECK(mt_elf_errmsg(NULL) != NULL);
		return 0;
	}
	(void)mt_elf_type(e);
	n = mt_elf_build_id(e, &id);
	FUZZ_CHECK(n <= MT_ELF_BUILD_ID_MAX);
	mt_elf_build_id_hex(e, hex);
	FUZZ_CHECK(strlen(hex) == 2 * n);
	(void)mt_elf_debuglink(e, &crc);
	(void)mt_elf_has_dwarf(e);
	(void)mt_elf_has_symtab(e);
	n = mt_elf_segs(e, &segs);
	for (i = 0; i < n; i++) {
		(void)mt_elf_off_to_vaddr(e, segs[i].offset, &va);
		probe(e, segs[i].vaddr);
		probe(e, segs[i].vaddr + segs[i].memsz / 2);
	}
	if (mt_elf_syms(e, &syms, &nsyms) == 0) {
		for (i = 0; i < nsyms; i++) {
			FUZZ_CHECK(syms[i].name != NULL);
			FUZZ_CHECK(syms[i].start <= syms[i].end);
			if (i > 0)
				FUZZ_CHECK(syms[i - 1].start < syms[i].start);
			if (i < 64) {
				probe(e, syms[i].start);
				if (syms[i].end > syms[i].start)
					probe(e, syms[i].end - 1);
			}
		}
	} else {
		FUZZ_CHECK(mt_elf_errmsg(e) != NULL);
	}
	mt_fde_tab_init(&fdes);
	(void)mt_fde_read_elf(&fdes, e, &fd);
	for (i = 0; i < fdes.n; i++) {
		FUZZ_CHECK(fdes.v[i].start < fdes.v[i].end);
		if (i > 0)
			FUZZ_CHECK(fdes.v[i - 1].end <= fdes.v[i].start);
	}
	mt_fde_tab_release(&fdes);
	mt_fde_tab_init(&fdes);
	(void)mt_fde_read_eh_frame_hdr(&fdes, e, &fd);
	for (i = 0; i < fdes.n; i++) {
		FUZZ_CHECK(fdes.v[i].start < fdes.v[i].end);
		if (i > 0)
			FUZZ_CHECK(fdes.v[i - 1].end <= fdes.v[i].start);
	}
	mt_fde_tab_release(&fdes);
	mt_elf_free(e);
	return 0;
}
