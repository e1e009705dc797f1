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
#include <time.h>
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

/* The copy's e_shoff, read from the file at @path. */
static uint64_t
shoff_of(const char *path)
{
	uint64_t v = 0;
	int fd = open(path, O_RDONLY);

	if (fd >= 0 && pread(fd, &v, 8, 0x28) != 8)
		v = 0;
	if (fd >= 0)
		close(fd);
	return v;
}

/*
 * The cache of copies: a stored copy opens as the same bytes the copy
 * had (the 48-byte trailer after them); a copy of an original of another
 * size or modification time, a file cut short, a flipped byte in its ELF
 * header, its section header table or its trailer, or none at all is not
 * used; storing again replaces a damaged file.  A byte changed inside a
 * section's data is not looked for (dbgcopy.h says why).
 */
static void
cached_copy_whole_or_not_at_all(void)
{
	char dir[64], path[128];
	struct stat st, so, other;
	int fd, mfd = -1, cfd = -1;
	uint64_t max = 1ull << 40;

	CHECK(make_compressed() == 0);
	snprintf(dir, sizeof(dir), "/tmp/mt-dbgcache.%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/.build-id/ab/cdef.debug.mt-inflated",
	    dir);
	fd = open(zpath, O_RDONLY);
	CHECK(fd >= 0 && fstat(fd, &so) == 0);
	if (fd < 0)
		return;
	CHECK(sym_dbgcopy_cached(path, &so, &cfd) == 0 && cfd == -1);
	CHECK(sym_dbgcopy_make(fd, &mfd) == 1);
	CHECK(sym_dbgcopy_store(mfd, path, &so, dir, max) == 0);
	CHECK(sym_dbgcopy_cached(path, &so, &cfd) == 1);
	CHECK(cfd >= 0 && fstat(cfd, &st) == 0);
	if (cfd >= 0) {
		/* The copy's bytes, then 48 bytes of trailer. */
		int t = open(path, O_RDWR);

		CHECK(t >= 0 && ftruncate(t, st.st_size - 48) == 0);
		CHECK(same_bytes(t, mfd));
		close(t);
		close(cfd);
	}
	CHECK(sym_dbgcopy_cached(path, &so, &cfd) == 0);	/* cut */
	CHECK(sym_dbgcopy_store(mfd, path, &so, dir, max) == 0);
	other = so;
	other.st_size++;
	CHECK(sym_dbgcopy_cached(path, &other, &cfd) == 0);
	other = so;
	other.st_mtim.tv_nsec ^= 1;
	CHECK(sym_dbgcopy_cached(path, &other, &cfd) == 0);
	flip(path, 0x3c);		/* e_shnum */
	CHECK(sym_dbgcopy_cached(path, &so, &cfd) == 0);
	CHECK(sym_dbgcopy_store(mfd, path, &so, dir, max) == 0);
	flip(path, (off_t)shoff_of(path) + 64 + 24);	/* sh_offset of 1 */
	CHECK(sym_dbgcopy_cached(path, &so, &cfd) == 0);
	CHECK(sym_dbgcopy_store(mfd, path, &so, dir, max) == 0);
	CHECK(sym_dbgcopy_cached(path, &so, &cfd) == 1);
	if (cfd >= 0)
		close(cfd);
	flip(path, st.st_size - 1);	/* the hash's last byte */
	CHECK(sym_dbgcopy_cached(path, &so, &cfd) == 0);
	/* A directory that cannot be made: nothing stored, no error. */
	CHECK(sym_dbgcopy_store(mfd, "/dev/null/x/y.debug", &so, "/dev/null",
	    max) == -1);
	if (mfd >= 0)
		close(mfd);
	close(fd);
	unlink(path);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
	unlink(zpath);
}

/* Sets the modification time of @path to @age seconds ago. */
static void
age_file(const char *path, time_t age)
{
	struct timespec t[2];

	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age;
	t[1] = t[0];
	CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
}

/* A file of @size bytes at @dir/.build-id/@name, modified @age s ago. */
static void
old_file(const char *dir, const char *name, off_t size, time_t age)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "mkdir -p %s/.build-id/%.2s", dir, name);
	CHECK(system(p) == 0);
	snprintf(p, sizeof(p), "%s/.build-id/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && ftruncate(fd, size) == 0);
	if (fd >= 0)
		close(fd);
	age_file(p, age);
}

static int
exists(const char *dir, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/.build-id/%s", dir, name);
	return access(p, F_OK) == 0;
}

/*
 * The cache's copies stay within the given room: storing removes the
 * copies used longest ago first, only as many as needed, never other
 * files; a copy larger than the room is not stored and removes nothing;
 * a copy read from the cache counts as just used.
 */
static void
trimmed_oldest_first(void)
{
	char dir[64], path[128], path2[128], cmd[128];
	struct stat so, st;
	int fd, mfd = -1, cfd = -1;
	uint64_t len;

	CHECK(make_compressed() == 0);
	snprintf(dir, sizeof(dir), "/tmp/mt-dbgtrim.%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/.build-id/ab/cdef.debug.mt-inflated",
	    dir);
	snprintf(path2, sizeof(path2), "%s/.build-id/ab/cdff.debug.mt-inflated",
	    dir);
	fd = open(zpath, O_RDONLY);
	CHECK(fd >= 0 && fstat(fd, &so) == 0);
	CHECK(fd >= 0 && sym_dbgcopy_make(fd, &mfd) == 1);
	if (fd < 0 || mfd < 0)
		return;
	CHECK(fstat(mfd, &st) == 0);
	len = (uint64_t)st.st_size + 48;
	/* Room for the copy and 3000 bytes more. */
	old_file(dir, "01/a.debug.mt-inflated", 1000, 300);
	old_file(dir, "02/b.debug.mt-inflated", 1000, 200);
	old_file(dir, "03/c.debug.mt-inflated", 1000, 100);
	old_file(dir, "04/d.debug", 5000, 400);	/* not a copy */
	old_file(dir, "05/e.debug.mt-inflated", 1000, 50);
	/* e is used now: the newest. */
	CHECK(sym_dbgcopy_store(mfd, path, &so, dir, len + 4000) == 0);
	CHECK(exists(dir, "01/a.debug.mt-inflated"));
	CHECK(sym_dbgcopy_cached(path, &so, &cfd) == 1);
	if (cfd >= 0)
		close(cfd);
	/* Stored again (its own old size does not count): a and b go. */
	CHECK(sym_dbgcopy_store(mfd, path, &so, dir, len + 2000) == 0);
	CHECK(!exists(dir, "01/a.debug.mt-inflated"));
	CHECK(!exists(dir, "02/b.debug.mt-inflated"));
	CHECK(exists(dir, "03/c.debug.mt-inflated"));
	CHECK(exists(dir, "05/e.debug.mt-inflated"));
	CHECK(exists(dir, "04/d.debug"));
	/*
	 * A copy read is the newest: made older than c, then read, it stays
	 * and c goes when another copy (the same bytes) needs the room.
	 */
	age_file(path, 500);
	CHECK(sym_dbgcopy_cached(path, &so, &cfd) == 1);
	if (cfd >= 0)
		close(cfd);
	CHECK(sym_dbgcopy_store(mfd, path2, &so, dir, 2 * len + 1000) == 0);
	CHECK(exists(dir, "ab/cdef.debug.mt-inflated"));
	CHECK(exists(dir, "ab/cdff.debug.mt-inflated"));
	CHECK(!exists(dir, "03/c.debug.mt-inflated"));
	CHECK(exists(dir, "05/e.debug.mt-inflated"));
	/* Too big for the room: not stored, nothing removed. */
	unlink(path);
	CHECK(sym_dbgcopy_store(mfd, path, &so, dir, len - 1) == -1);
	CHECK(!exists(dir, "ab/cdef.debug.mt-inflated"));
	CHECK(exists(dir, "ab/cdff.debug.mt-inflated"));
	CHECK(exists(dir, "05/e.debug.mt-inflated"));
	close(mfd);
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
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
	TEST(trimmed_oldest_first);
	return tap_done();
}
