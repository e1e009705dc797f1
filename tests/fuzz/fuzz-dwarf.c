/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: DWARF loading of corrupted binaries, through mt-symbolize's
 * dso module (mt-symbolize/dso.c: libelf symbols plus libdw/libdwfl line
 * tables and inlined frames).  The input is the binary; it is reached
 * through /proc/self/fd/N of a memfd, as sym_dso_open_file() takes a path.
 * Every address at the start, middle and end of each symbol is looked up
 * under the three naming rules (trace, addr2line, eu-addr2line).
 *
 * Invariants: a lookup returns 0..max frames, and every frame's strings
 * are NUL-terminated (read through strlen under ASan).
 */
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "elffile.h"
#include "../../mt-symbolize/dso.h"
#include "fuzz.h"

static void
lookup(struct sym_dso *d, uint64_t a)
{
	struct sym_frame fr[SYM_MAX_FRAMES];
	int r, n, i;

	for (r = SYM_RULES_TRACE; r <= SYM_RULES_ELFUTILS; r++) {
		n = sym_dso_lookup(d, a, (enum sym_rules)r, fr, SYM_MAX_FRAMES);
		FUZZ_CHECK(n >= 0 && n <= SYM_MAX_FRAMES);
		for (i = 0; i < n; i++) {
			if (fr[i].name)
				(void)strlen(fr[i].name);
			if (fr[i].file)
				(void)strlen(fr[i].file);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sym_dso_opts o = { NULL, 0 };
	struct sym_dso *d;
	struct mt_elf *e;
	const struct mt_elf_sym *syms;
	char path[64];
	uint64_t va;
	size_t i, n;
	int fd = fuzz_memfd(data, size);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (sym_dso_open_file(&d, path, &o) < 0) {
		close(fd);
		return 0;
	}
	if (sym_dso_ok(d)) {
		(void)sym_dso_warning(d);
		(void)sym_dso_off_to_vaddr(d, 0x1000, &va);
		/* The addresses to try: the symbols' (read separately). */
		if (mt_elf_open_mem(&e, data, size) == 0) {
			if (mt_elf_syms(e, &syms, &n) == 0)
				for (i = 0; i < n && i < 32; i++) {
					lookup(d, syms[i].start);
					lookup(d, syms[i].start +
					    (syms[i].end - syms[i].start) / 2);
				}
			mt_elf_free(e);
		}
		lookup(d, 0);
		lookup(d, 0x1000);
	}
	sym_dso_free(d);
	close(fd);
	return 0;
}
