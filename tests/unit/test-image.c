/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-decode/image*.c: an ELF reached by several mappings
 * (two processes, two segments, the snapshot's list and the sideband) is
 * opened once, bundled or on disk, and every mapping still decodes
 * against it; the bundled bytes are read where the snapshot holds them,
 * not mapped or copied again.  The ELF is this test program itself (its
 * build-id and symbols read with common/elffile, not with image.c).
 */
#include <fcntl.h>
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

/* This program's bytes, *@len of them (malloc'ed), or NULL. */
static uint8_t *
read_self_bytes(uint64_t *len)
{
	FILE *f = fopen(self, "rb");
	uint8_t *p = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0) {
		rewind(f);
		p = malloc((size_t)n);
		if (p != NULL && fread(p, 1, (size_t)n, f) != (size_t)n) {
			free(p);
			p = NULL;
		}
		*len = (uint64_t)n;
	}
	fclose(f);
	return p;
}

/* Bundle this program in @s by its build-id.  Returns 0 or -1. */
static int
bundle_self(struct mt_snap *s)
{
	struct mt_snap_elf e = { .build_id_len = (uint8_t)bidlen };
	int rc;

	e.data = read_self_bytes(&e.len);
	CHECK(e.data != NULL);
	if (e.data == NULL)
		return -1;
	memcpy(e.build_id, bid, bidlen);
	e.path = self;
	rc = mt_snap_add_elf(s, &e);
	free(e.data);
	return rc;
}

/* The first @len bytes of the program mapped at @base in @pid. */
static void
add_map_len(struct mt_snap *s, uint32_t pid, uint64_t base,
    const char *path, uint64_t len)
{
	struct mt_snap_mmap m = { .pid = pid, .start = base,
	    .end = base + len, .pgoff = 0, .prot = PROT_READ | PROT_EXEC,
	    .flags = MAP_PRIVATE, .build_id_len = (uint8_t)bidlen };

	memcpy(m.build_id, bid, bidlen);
	m.path = (char *)(uintptr_t)path;
	mt_snap_add_mmap(s, &m);
}

/* The first page-aligned 1 MiB of the program mapped at @base in @pid. */
static void
add_map(struct mt_snap *s, uint32_t pid, uint64_t base, const char *path)
{
	add_map_len(s, pid, base, path, 0x100000);
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
	if (bundled && bundle_self(&s) < 0) {
		mt_snap_release(&s);
		return;
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

/* Lines of /proc/self/maps that contain @what. */
static int
maps_lines(const char *what)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, what) != NULL)
			n++;
	fclose(f);
	return n;
}

/*
 * The code of main, mapped at BASE1 in process 40 from the bundled copy
 * in @s: image_set_code gives a pointer into @lo..@hi (where the snapshot
 * holds the copy) whose bytes are the program's own.
 */
static void
code_held_by_snapshot(struct image_set *is, const uint8_t *lo,
    const uint8_t *hi)
{
	const uint8_t *code;
	uint64_t vaddr, size, slo, shi, len;
	uint8_t *file = read_self_bytes(&len);
	int isid;

	CHECK(file != NULL && main_off + 16 <= len);
	CHECK(image_set_section_at(is, 40, BASE1 + main_off, &isid, &slo,
	    &shi) == 0);
	CHECK(image_set_code(is, isid, &code, &vaddr, &size) == 0);
	if (file != NULL && main_off + 16 <= len && code != NULL &&
	    vaddr == BASE1 && size >= main_off + 16) {
		CHECK(code >= lo && code + size <= hi);
		CHECK(memcmp(code + main_off, file + main_off, 16) == 0);
	} else {
		CHECK(!"section of main at BASE1");
	}
	free(file);
}

/* A snapshot with this program bundled and mapped as one_image_per_file. */
static int
write_snap(const char *path)
{
	struct mt_snap s;
	int fd, rc;

	mt_snap_init(&s);
	rc = bundle_self(&s);
	/* The whole pages of the file: the set reads code only where the
	 * bundled copy has every byte of the mapping. */
	if (rc == 0)
		add_map_len(&s, 40, BASE1, "/nonexistent/prog",
		    s.elfs[0].len & ~(uint64_t)4095);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (rc == 0 && fd >= 0)
		rc = mt_snap_write_fd(&s, fd);
	if (fd < 0 || close(fd) != 0)
		rc = -1;
	mt_snap_release(&s);
	return rc;
}

/*
 * A snapshot file is mapped once (mt_snap_map_fd): the set reads the
 * bundled code from that mapping (libipt opens the file by its path),
 * and maps no copy of the file besides it.
 */
static void
bundled_code_read_from_the_snapshot_mapping(void)
{
	char path[] = "/tmp/mt-test-image-XXXXXX";
	struct image_opts o = { 0 };
	struct image_set *is = NULL;
	struct mt_snap_diag d;
	struct mt_snap s;
	int fd;

	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	mt_snap_init(&s);
	CHECK(write_snap(path) == 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && mt_snap_map_fd(&s, fd, &d) == 0);
	if (fd >= 0)
		close(fd);
	CHECK(s.map != NULL && s.nelfs == 1);
	o.snap_path = path;
	CHECK(s.map != NULL && image_set_new(&is, &s, &o) == 0);
	if (is != NULL) {
		CHECK(finds_main(is, BASE1));
		code_held_by_snapshot(is, s.map, s.map + s.maplen);
		/* The snapshot's own mapping, and no other. */
		CHECK_EQ_U64(maps_lines(path), 1);
		CHECK_EQ_U64(maps_lines("mt-decode-code"), 0);
	}
	image_set_free(is);
	mt_snap_release(&s);
	unlink(path);
}

/*
 * A snapshot read from a pipe holds its chunks in memory: the set reads
 * the code there; only libipt gets the memfd copy, which the set does
 * not map.
 */
static void
bundled_code_read_from_a_piped_snapshot(void)
{
	char path[] = "/tmp/mt-test-image-XXXXXX";
	struct image_opts o = { 0 };
	struct image_set *is = NULL;
	struct mt_snap_diag d;
	struct mt_snap s;
	int fd, p[2];

	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	mt_snap_init(&s);
	CHECK(write_snap(path) == 0);
	/* Through a pipe, as mt-decode reads its standard input. */
	CHECK(pipe(p) == 0);
	if (fork() == 0) {
		char buf[65536];
		ssize_t n;

		close(p[0]);
		fd = open(path, O_RDONLY);
		while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
			if (write(p[1], buf, (size_t)n) != n)
				break;
		_exit(0);
	}
	close(p[1]);
	CHECK(mt_snap_map_fd(&s, p[0], &d) == 0);
	close(p[0]);
	CHECK(s.map == NULL && s.nelfs == 1);
	CHECK(image_set_new(&is, &s, &o) == 0);
	if (is != NULL && s.nelfs == 1) {
		CHECK(finds_main(is, BASE1));
		code_held_by_snapshot(is, s.elfs[0].data,
		    s.elfs[0].data + s.elfs[0].len);
		CHECK_EQ_U64(maps_lines("mt-decode-code"), 0);
	}
	image_set_free(is);
	mt_snap_release(&s);
	unlink(path);
}

/*
 * Mappings that overlap (the program at BASE1 in one process and 16
 * bytes higher in another) give function ranges out of order: the
 * lookup still takes the function that starts last at or before the
 * address, whichever mapping gave it (the later mapping on a tie), as a
 * search of both mappings' symbols (read here with common/elffile)
 * finds it, at the first bytes of every function of either mapping.
 */
static void
overlapping_mappings_give_the_nearest_function(void)
{
	struct image_opts o = { 0 };
	struct image_set *is = NULL;
	const struct mt_elf_sym *syms;
	struct mt_elf *e = NULL;
	struct mt_snap s;
	uint64_t fv = 0, lo, hi, base[2] = { BASE1, BASE1 + 16 };
	size_t n = 0, i, k, j, checked = 0;
	int bad = 0;

	mt_snap_init(&s);
	add_map(&s, 40, base[0], self);
	add_map(&s, 41, base[1], self);
	CHECK(image_set_new(&is, &s, &o) == 0);
	CHECK(mt_elf_open(&e, self) == 0 && mt_elf_off_to_vaddr(e, 0,
	    &fv) == 0 && mt_elf_syms(e, &syms, &n) == 0);
	for (i = 0; is != NULL && e != NULL && i < n; i++)
		for (k = 0; k < 2; k++) {
			uint64_t a = syms[i].start - fv + base[k] + 3;
			uint64_t blo = 0, bhi = 0;

			if (syms[i].start - fv >= 0x100000)
				continue;
			/* The reference: the largest start <= a (in the
			 * mapping added last on a tie). */
			for (j = 0; j < 2 * n; j++) {
				const struct mt_elf_sym *y = &syms[j % n];
				uint64_t l = y->start - fv + base[j / n];

				if (y->start - fv < 0x100000 &&
				    y->end > y->start && l <= a && l >= blo) {
					blo = l;
					bhi = y->end - fv + base[j / n];
				}
			}
			if (a >= bhi)
				continue;	/* no symbol: FDEs decide */
			checked++;
			if (!image_set_fn_lookup(is, a, &lo, &hi) ||
			    lo != blo || hi != bhi)
				bad++;
		}
	CHECK(checked > 100);
	CHECK_EQ_U64(bad, 0);
	CHECK(is != NULL && !image_set_fns_failed(is));
	mt_elf_free(e);
	image_set_free(is);
	mt_snap_release(&s);
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
	TEST(bundled_code_read_from_the_snapshot_mapping);
	TEST(bundled_code_read_from_a_piped_snapshot);
	TEST(overlapping_mappings_give_the_nearest_function);
	return tap_done();
}
