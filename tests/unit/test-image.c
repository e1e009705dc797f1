/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-decode/image*.c: an ELF reached by several mappings
 * (two processes, two segments, the snapshot's list and the sideband) is
 * opened once, bundled or on disk, and every mapping still decodes
 * against it.  The ELF is this test program itself (its build-id and
 * symbols read with common/elffile, not with image.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"
#include "elffile.h"
#include "snap.h"
#include "../../mt-decode/image.h"

#define BASE1 0x400000ull
#define BASE2 0x7f0000000000ull

static char self[4096];
static uint8_t bid[MT_SNAP_BUILD_ID_MAX];
static size_t bidlen;
static uint64_t main_off;	/* main's offset from the file's start */

/* This program's path, build-id and the vaddr of main. */
static int
read_self(void)
{
	struct mt_elf *e;
	const uint8_t *id;
	const struct mt_elf_sym *syms;
	uint64_t fv;
	size_t n, i;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0)
		return -1;
	self[len] = '\0';
	if (mt_elf_open(&e, self) < 0)
		return -1;
	bidlen = mt_elf_build_id(e, &id);
	if (bidlen == 0 || bidlen > sizeof(bid)) {
		mt_elf_free(e);
		return -1;
	}
	memcpy(bid, id, bidlen);
	if (mt_elf_off_to_vaddr(e, 0, &fv) == 0 &&
	    mt_elf_syms(e, &syms, &n) == 0)
		for (i = 0; i < n; i++)
			if (syms[i].name != NULL &&
			    strcmp(syms[i].name, "main") == 0 &&
			    syms[i].start - fv < 0x100000)
				main_off = syms[i].start - fv;
	mt_elf_free(e);
	return main_off != 0 ? 0 : -1;
}

/* The first page-aligned 1 MiB of the program mapped at @base in @pid. */
static void
add_map(struct mt_snap *s, uint32_t pid, uint64_t base, const char *path)
{
	struct mt_snap_mmap m = { .pid = pid, .start = base,
	    .end = base + 0x100000, .pgoff = 0, .prot = PROT_READ | PROT_EXEC,
	    .flags = MAP_PRIVATE, .build_id_len = (uint8_t)bidlen };

	memcpy(m.build_id, bid, bidlen);
	m.path = (char *)(uintptr_t)path;
	mt_snap_add_mmap(s, &m);
}

/* The set's function at main's address (mapped at @base) is main. */
static int
finds_main(struct image_set *is, uint64_t base)
{
	uint64_t lo = 0, hi = 0;

	return image_set_fn_lookup(is, base + main_off, &lo, &hi) &&
	    lo == base + main_off && hi > lo;
}

static void
one_image_per_file(int bundled)
{
	struct image_opts o = { 0 };
	struct image_set *is = NULL;
	struct mt_snap s;
	size_t i;
	int rc;

	mt_snap_init(&s);
	if (bundled) {
		struct mt_snap_elf e = { .build_id_len = (uint8_t)bidlen };
		FILE *f = fopen(self, "rb");

		CHECK(f != NULL);
		if (f == NULL)
			return;
		fseek(f, 0, SEEK_END);
		e.len = (uint64_t)ftell(f);
		rewind(f);
		e.data = malloc(e.len);
		CHECK(e.data != NULL && fread(e.data, 1, e.len, f) == e.len);
		fclose(f);
		memcpy(e.build_id, bid, bidlen);
		e.path = self;
		mt_snap_add_elf(&s, &e);
		free(e.data);
	}
	/* Recorded under a path that does not exist: only the bundled
	 * copy (or, on disk, the real path) can be the file. */
	add_map(&s, 40, BASE1, bundled ? "/nonexistent/prog" : self);
	add_map(&s, 41, BASE1, bundled ? "/nonexistent/prog" : self);
	add_map(&s, 41, BASE2, bundled ? "/nonexistent/prog" : self);
	rc = image_set_new(&is, &s, &o);
	CHECK_EQ_U64(rc, 0);
	if (rc != 0) {
		mt_snap_release(&s);
		return;
	}
	/* The sideband's record of the first mapping again. */
	rc = image_set_add_mapping(is, 40, BASE1, 0x100000, 0, bid, bidlen,
	    bundled ? "/nonexistent/prog" : self, 1000);
	CHECK_EQ_U64(rc, 0);
	CHECK_EQ_U64(image_set_nmods(is), 4);
	for (i = 0; i < image_set_nmods(is); i++)
		CHECK(image_set_mod(is, i)->loaded);
	CHECK(image_set_warning(is, 0) == NULL);
	CHECK_EQ_U64(image_set_nelfs(is), 1);
	CHECK(finds_main(is, BASE1));
	CHECK(finds_main(is, BASE2));
	image_set_free(is);
	mt_snap_release(&s);
}

static void
bundled_elf_opened_once(void)
{
	one_image_per_file(1);
}

static void
file_on_disk_opened_once(void)
{
	one_image_per_file(0);
}

int
main(void)
{
	if (read_self() < 0) {
		printf("Bail out! cannot read this program's ELF\n");
		return 1;
	}
	TEST(bundled_elf_opened_once);
	TEST(file_on_disk_opened_once);
	return tap_done();
}
