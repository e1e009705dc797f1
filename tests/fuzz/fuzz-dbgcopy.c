/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: mt-symbolize's inflated copy of a debug file
 * (mt-symbolize/dbgcopy.c) on corrupted ELF files, then libelf and libdw
 * reading the copy as mt-symbolize's libdwfl would.
 *
 * Invariants: a copy is made only of a 64-bit ELF file; it is at least
 * as long as the file and starts with its ELF identification; its
 * section header table starts inside it.  The rest is ASan's: no read or
 * write outside the input, the copy or their buffers, and libelf and
 * libdw read every section of the copy (each section's last byte).
 */
#include <elf.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdw.h>

#include "../../mt-symbolize/dbgcopy.h"
#include "fuzz.h"

static void
check_copy(int mfd, const uint8_t *data, size_t size)
{
	struct stat st;
	Elf64_Ehdr eh;
	Elf *e;
	Elf_Scn *s = NULL;
	Dwarf *dw;

	FUZZ_CHECK(fstat(mfd, &st) == 0 && (uint64_t)st.st_size >= size);
	FUZZ_CHECK(pread(mfd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh));
	FUZZ_CHECK(size >= EI_NIDENT &&
	    memcmp(eh.e_ident, data, EI_NIDENT) == 0 &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64);
	FUZZ_CHECK(eh.e_shoff < (uint64_t)st.st_size);
	e = elf_begin(mfd, ELF_C_READ_MMAP, NULL);
	if (e == NULL)
		return;
	while ((s = elf_nextscn(e, s)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (gelf_getshdr(s, &sh) == NULL)
			break;
		d = elf_getdata(s, NULL);
		if (d != NULL && d->d_buf != NULL && d->d_size > 0)
			(void)((volatile const uint8_t *)d->d_buf)[d->d_size - 1];
	}
	dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (dw != NULL) {
		Dwarf_Off off = 0, next;
		size_t hsize;
		int n = 0;

		while (n++ < 64 && dwarf_nextcu(dw, off, &next, &hsize, NULL,
		    NULL, NULL) == 0)
			off = next;
		dwarf_end(dw);
	}
	elf_end(e);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size), mfd = -1;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	if (sym_dbgcopy_make(fd, &mfd) == 1) {
		FUZZ_CHECK(mfd >= 0);
		check_copy(mfd, data, size);
		close(mfd);
	} else {
		FUZZ_CHECK(mfd == -1);
	}
	close(fd);
	return 0;
}
