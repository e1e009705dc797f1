/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-symbolize/dbgcopy.c: the copy of a file whose DWARF
 * objcopy compressed holds, for every .debug_* section libdw reads, the
 * bytes libelf's own decompression gives, uncompressed; the sections mt
 * never reads are SHT_NOBITS; everything else (ELF header but e_shoff,
 * program headers, other sections) is unchanged; a section whose zlib
 * stream is damaged stays compressed, as libelf fails on it too.  The
 * input is this test program (built with -g), compressed by binutils'
 * objcopy.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "../../mt-symbolize/dbgcopy.h"

static char zpath[64];

/* This program with its DWARF compressed (zlib, gABI) into zpath. */
static int
make_compressed(void)
{
	char cmd[256];

	snprintf(zpath, sizeof(zpath), "/tmp/mt-dbgcopy.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib "
	    "/proc/%d/exe %s", (int)getpid(), zpath);
	return system(cmd) == 0 ? 0 : -1;
}

static Elf_Scn *
scn_named(Elf *e, const char *name)
{
	Elf_Scn *s = NULL;
	size_t str;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e, &str) != 0)
		return NULL;
	while ((s = elf_nextscn(e, s)) != NULL) {
		const char *n;

		if (gelf_getshdr(s, &sh) != NULL &&
		    (n = elf_strptr(e, str, sh.sh_name)) != NULL &&
		    strcmp(n, name) == 0)
			return s;
	}
	return NULL;
}

/* Compares every section of @orig (libelf decompressing) with @copy. */
static void
compare(Elf *orig, Elf *copy, int *ndebug)
{
	Elf_Scn *s = NULL;
	size_t str;
	GElf_Shdr a, b;

	CHECK(elf_getshdrstrndx(orig, &str) == 0);
	while ((s = elf_nextscn(orig, s)) != NULL) {
		Elf_Scn *t = elf_getscn(copy, elf_ndxscn(s));
		const char *n;
		Elf_Data *da, *db;

		CHECK(t != NULL && gelf_getshdr(s, &a) != NULL &&
		    gelf_getshdr(t, &b) != NULL);
		if (t == NULL)
			return;
		n = elf_strptr(orig, str, a.sh_name);
		CHECK(n != NULL);
		if (n == NULL)
			return;
		if ((a.sh_flags & SHF_COMPRESSED) &&
		    (strcmp(n, ".debug_loclists") == 0 ||
		    strcmp(n, ".debug_loc") == 0 ||
		    strcmp(n, ".debug_frame") == 0)) {
			CHECK(b.sh_type == SHT_NOBITS);
			continue;
		}
		if (a.sh_flags & SHF_COMPRESSED) {
			(*ndebug)++;
			CHECK(elf_compress(s, 0, 0) == 1);
			CHECK((b.sh_flags & SHF_COMPRESSED) == 0);
		} else {
			CHECK(a.sh_offset == b.sh_offset);
		}
		if (a.sh_type == SHT_NOBITS)
			continue;
		da = elf_getdata(s, NULL);
		db = elf_getdata(t, NULL);
		CHECK(da != NULL && db != NULL);
		if (da == NULL || db == NULL)
			return;
		CHECK_EQ_U64(db->d_size, da->d_size);
		CHECK(da->d_size == db->d_size &&
		    memcmp(da->d_buf, db->d_buf, da->d_size) == 0);
	}
}

static void
inflated_as_libelf(void)
{
	int fd, mfd = -1, ndebug = 0;
	Elf *a, *b;
	GElf_Ehdr ea, eb;
	size_t na, nb, i;

	CHECK(make_compressed() == 0);
	fd = open(zpath, O_RDONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(sym_dbgcopy_make(fd, &mfd) == 1);
	a = elf_begin(fd, ELF_C_READ, NULL);
	b = mfd >= 0 ? elf_begin(mfd, ELF_C_READ_MMAP, NULL) : NULL;
	CHECK(a != NULL && b != NULL);
	if (a != NULL && b != NULL) {
		CHECK(gelf_getehdr(a, &ea) != NULL &&
		    gelf_getehdr(b, &eb) != NULL);
		CHECK(ea.e_shoff != eb.e_shoff);
		eb.e_shoff = ea.e_shoff;
		CHECK(memcmp(&ea, &eb, sizeof(ea)) == 0);
		CHECK(elf_getphdrnum(a, &na) == 0 &&
		    elf_getphdrnum(b, &nb) == 0 && na == nb);
		for (i = 0; i < na && na == nb; i++) {
			GElf_Phdr pa, pb;

			CHECK(gelf_getphdr(a, (int)i, &pa) != NULL &&
			    gelf_getphdr(b, (int)i, &pb) != NULL &&
			    memcmp(&pa, &pb, sizeof(pa)) == 0);
		}
		compare(a, b, &ndebug);
		CHECK(ndebug >= 3);	/* info, abbrev, line at least */
	}
	elf_end(a);
	elf_end(b);
	if (mfd >= 0)
		close(mfd);
	close(fd);
	unlink(zpath);
}

/* A file without compressed sections: no copy. */
static void
nothing_to_inflate(void)
{
	char self[64];
	int fd, mfd = 7;

	snprintf(self, sizeof(self), "/proc/%d/exe", (int)getpid());
	fd = open(self, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(sym_dbgcopy_make(fd, &mfd) == 0 && mfd == -1);
	close(fd);
	fd = open("/dev/null", O_RDONLY);
	CHECK(sym_dbgcopy_make(fd, &mfd) == 0 && mfd == -1);
	close(fd);
}

/* .debug_info's zlib stream damaged: left compressed, libelf agrees. */
static void
damaged_stream_left_compressed(void)
{
	int fd, mfd = -1;
	Elf *e, *c;
	Elf_Scn *s;
	GElf_Shdr sh;
	off_t at = 0;

	CHECK(make_compressed() == 0);
	fd = open(zpath, O_RDWR);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	e = elf_begin(fd, ELF_C_READ, NULL);
	s = e ? scn_named(e, ".debug_info") : NULL;
	CHECK(s != NULL && gelf_getshdr(s, &sh) != NULL);
	if (s != NULL)
		at = (off_t)(sh.sh_offset + sh.sh_size / 2);
	elf_end(e);
	CHECK(at > 0 && pwrite(fd, "\xff\xff\xff\xff\xff\xff\xff\xff", 8,
	    at) == 8);
	CHECK(sym_dbgcopy_make(fd, &mfd) == 1);
	c = mfd >= 0 ? elf_begin(mfd, ELF_C_READ_MMAP, NULL) : NULL;
	s = c ? scn_named(c, ".debug_info") : NULL;
	CHECK(s != NULL && gelf_getshdr(s, &sh) != NULL &&
	    (sh.sh_flags & SHF_COMPRESSED) != 0);
	CHECK(s != NULL && elf_compress(s, 0, 0) < 0);
	s = c ? scn_named(c, ".debug_abbrev") : NULL;
	CHECK(s != NULL && gelf_getshdr(s, &sh) != NULL &&
	    (sh.sh_flags & SHF_COMPRESSED) == 0);
	elf_end(c);
	if (mfd >= 0)
		close(mfd);
	close(fd);
	unlink(zpath);
}

/* 1 if the files open on @a and @b hold the same bytes. */
static int
same_bytes(int a, int b)
{
	struct stat sa, sb;
	char *x, *y;
	int same;

	if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0 || sa.st_size <= 0 ||
	    sa.st_size != sb.st_size)
		return 0;
	x = malloc((size_t)sa.st_size);
	y = malloc((size_t)sa.st_size);
	same = x != NULL && y != NULL &&
	    pread(a, x, (size_t)sa.st_size, 0) == sa.st_size &&
	    pread(b, y, (size_t)sa.st_size, 0) == sa.st_size &&
	    memcmp(x, y, (size_t)sa.st_size) == 0;
	free(x);
	free(y);
	return same;
}

/* Inverts the bits of the byte at @off of the file at @path. */
static void
flip(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	unsigned char v = 0;

	CHECK(fd >= 0 && pread(fd, &v, 1, off) == 1);
	v = (unsigned char)~v;
	CHECK(fd >= 0 && pwrite(fd, &v, 1, off) == 1);
	if (fd >= 0)
		close(fd);
}

/*
 * The cache of copies: a stored copy opens as the same bytes the copy
 * had (the trailer after them); a copy of another original size, a file
 * cut short, a flipped byte in its DWARF or in its trailer, or none at
 * all is not used; storing again replaces a damaged file.
 */
static void
cached_copy_whole_or_not_at_all(void)
{
	char dir[64], path[128];
	struct stat st, so;
	int fd, mfd = -1, cfd = -1;

	CHECK(make_compressed() == 0);
	snprintf(dir, sizeof(dir), "/tmp/mt-dbgcache.%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/.build-id/ab/cdef.debug.mt-inflated",
	    dir);
	fd = open(zpath, O_RDONLY);
	CHECK(fd >= 0 && fstat(fd, &so) == 0);
	if (fd < 0)
		return;
	CHECK(sym_dbgcopy_cached(path, (uint64_t)so.st_size, &cfd) == 0 &&
	    cfd == -1);
	CHECK(sym_dbgcopy_make(fd, &mfd) == 1);
	CHECK(sym_dbgcopy_store(mfd, path, (uint64_t)so.st_size) == 0);
	CHECK(sym_dbgcopy_cached(path, (uint64_t)so.st_size, &cfd) == 1);
	CHECK(cfd >= 0 && fstat(cfd, &st) == 0);
	if (cfd >= 0) {
		/* The copy's bytes, then 40 bytes of trailer. */
		int t = open(path, O_RDWR);

		CHECK(t >= 0 && ftruncate(t, st.st_size - 40) == 0);
		CHECK(same_bytes(t, mfd));
		close(t);
		close(cfd);
	}
	CHECK(sym_dbgcopy_cached(path, (uint64_t)so.st_size, &cfd) == 0);
	CHECK(sym_dbgcopy_store(mfd, path, (uint64_t)so.st_size) == 0);
	CHECK(sym_dbgcopy_cached(path, (uint64_t)so.st_size + 1, &cfd) == 0);
	flip(path, st.st_size / 2);
	CHECK(sym_dbgcopy_cached(path, (uint64_t)so.st_size, &cfd) == 0);
	CHECK(sym_dbgcopy_store(mfd, path, (uint64_t)so.st_size) == 0);
	CHECK(sym_dbgcopy_cached(path, (uint64_t)so.st_size, &cfd) == 1);
	if (cfd >= 0)
		close(cfd);
	flip(path, st.st_size - 1);	/* the hash's last byte */
	CHECK(sym_dbgcopy_cached(path, (uint64_t)so.st_size, &cfd) == 0);
	/* A directory that cannot be made: nothing stored, no error. */
	CHECK(sym_dbgcopy_store(mfd, "/dev/null/x/y.debug", 1) == -1);
	if (mfd >= 0)
		close(mfd);
	close(fd);
	unlink(path);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
	unlink(zpath);
}

int
main(void)
{
	elf_version(EV_CURRENT);
	TEST(inflated_as_libelf);
	TEST(nothing_to_inflate);
	TEST(damaged_stream_left_compressed);
	TEST(cached_copy_whole_or_not_at_all);
	return tap_done();
}
