/* SPDX-License-Identifier: MIT */
/*
 * The inflated copy of a debug file (dbgcopy.h).  Layout of the copy:
 *
 *   [0, size)         the original file, except e_shoff and the bytes
 *                     of the sections inflated or dropped (zeros there)
 *   [base, ...)       base = size rounded up to a page: each inflated
 *                     section, 16-byte aligned, then the new section
 *                     header table
 *
 * The head is copied by the kernel (sendfile), the tail is written
 * through one shared mapping that is unmapped before libdw maps the file
 * again.  Only 64-bit little-endian ELF with 64-bit section headers is
 * handled (mt's targets are x86-64); anything else is left to libdw.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "bidcache.h"
#include "buf.h"
#include "dbgcopy.h"
#include "outfile.h"

/* libelf's bound on zlib's compression ratio (elf_compress.c). */
#define MAX_RATIO 1032

/* DWARF sections libdw would inflate that mt never reads. */
static int
unused_section(const char *name)
{
	static const char *const unused[] = {
		".debug_loc", ".debug_loclists", ".debug_macro",
		".debug_macinfo", ".debug_frame", ".debug_pubnames",
		".debug_pubtypes",
	};
	size_t i;

	for (i = 0; i < sizeof(unused) / sizeof(unused[0]); i++)
		if (strcmp(name, unused[i]) == 0)
			return 1;
	return 0;
}

static uint64_t
align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* One section to inflate: its header in the new table, where it goes. */
struct plan {
	size_t idx;		/* section index */
	uint64_t in_off;	/* compressed bytes after the Chdr */
	uint64_t in_len;
	uint64_t out_off;	/* in the copy */
	uint64_t out_len;	/* ch_size */
	uint64_t align;		/* ch_addralign */
	int done;		/* inflated, or dropped (out_len 0) */
};

/*
 * Inflates @in_len bytes at @in into exactly @out_len bytes at @out, as
 * libelf does: one or more zlib streams back to back, all input used.
 */
static int
inflate_exact(struct libdeflate_decompressor *z, const uint8_t *in,
    size_t in_len, uint8_t *out, size_t out_len)
{
	size_t done_in = 0, done_out = 0;

	while (done_in < in_len) {
		size_t used_in = 0, made = 0;

		if (libdeflate_zlib_decompress_ex(z, in + done_in,
		    in_len - done_in, out + done_out, out_len - done_out,
		    &used_in, &made) != LIBDEFLATE_SUCCESS || used_in == 0)
			return -1;
		done_in += used_in;
		done_out += made;
	}
	return done_out == out_len ? 0 : -1;
}

/* Copies bytes [@from_off, @to_off) of @from to the same place in @to. */
static int
copy_range(int from, int to, uint64_t from_off, uint64_t to_off)
{
	off_t in = (off_t)from_off;

	if (lseek(to, (off_t)from_off, SEEK_SET) < 0)
		return -1;
	while ((uint64_t)in < to_off) {
		ssize_t n = sendfile(to, from, &in, to_off - (uint64_t)in);

		if (n <= 0)
			return -1;
	}
	return 0;
}

static int
plan_by_offset(const void *a, const void *b)
{
	const struct plan *x = a, *y = b;

	return x->in_off < y->in_off ? -1 : x->in_off > y->in_off;
}

/*
 * Copies the original file into @to, except the compressed bytes of the
 * sections that were inflated (p[i].done), which nothing reads any more.
 */
static int
copy_head(int from, int to, uint64_t size, struct plan *p, size_t np)
{
	uint64_t at = 0;
	size_t i;

	qsort(p, np, sizeof(*p), plan_by_offset);
	for (i = 0; i < np; i++) {
		uint64_t start = p[i].in_off - sizeof(Elf64_Chdr);

		if (!p[i].done || start < at)
			continue;
		if (copy_range(from, to, at, start) < 0)
			return -1;
		at = p[i].in_off + p[i].in_len;
	}
	return copy_range(from, to, at, size);
}

/*
 * Reads the section headers and plans the copy: *@plans (owned by the
 * caller), *@np of them, *@sh the section header table to write.
 * Returns 0, or -1 when there is nothing to do.
 */
static int
plan_copy(const uint8_t *f, uint64_t size, Elf64_Shdr **shp, size_t *shnump,
    struct plan **plans, size_t *np, uint64_t *endp)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL, s0;
	struct plan *p = NULL;
	uint64_t shnum, strndx, end, hdr_end;
	const char *strtab;
	uint64_t strsize;
	size_t i, n = 0;

	memcpy(&eh, f, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff == 0 ||
	    eh.e_shoff > size || size - eh.e_shoff < sizeof(s0))
		return -1;
	memcpy(&s0, f + eh.e_shoff, sizeof(s0));
	shnum = eh.e_shnum != 0 ? eh.e_shnum : s0.sh_size;
	strndx = eh.e_shstrndx != SHN_XINDEX ? eh.e_shstrndx : s0.sh_link;
	if (shnum < 2 || shnum > (size - eh.e_shoff) / sizeof(*sh) ||
	    strndx >= shnum)
		return -1;
	sh = malloc(shnum * sizeof(*sh));
	p = malloc(shnum * sizeof(*p));
	if (sh == NULL || p == NULL)
		goto none;
	memcpy(sh, f + eh.e_shoff, shnum * sizeof(*sh));
	if (sh[strndx].sh_type == SHT_NOBITS ||
	    sh[strndx].sh_offset > size ||
	    sh[strndx].sh_size > size - sh[strndx].sh_offset)
		goto none;
	strtab = (const char *)f + sh[strndx].sh_offset;
	strsize = sh[strndx].sh_size;
	/* The bytes of a section are not copied: never the headers' */
	hdr_end = sizeof(eh);
	if (eh.e_phoff < size && eh.e_phnum * (uint64_t)eh.e_phentsize <
	    size - eh.e_phoff &&
	    eh.e_phoff + eh.e_phnum * (uint64_t)eh.e_phentsize > hdr_end)
		hdr_end = eh.e_phoff + eh.e_phnum * (uint64_t)eh.e_phentsize;
	end = align_up(size, 4096);
	for (i = 1; i < shnum; i++) {
		Elf64_Shdr *s = &sh[i];
		Elf64_Chdr ch;
		const char *name;

		if ((s->sh_flags & SHF_COMPRESSED) == 0 ||
		    s->sh_type == SHT_NOBITS || s->sh_name >= strsize ||
		    memchr(strtab + s->sh_name, '\0',
		    strsize - s->sh_name) == NULL)
			continue;
		name = strtab + s->sh_name;
		if (strncmp(name, ".debug_", 7) != 0)
			continue;
		if (s->sh_offset > size || s->sh_size > size - s->sh_offset ||
		    s->sh_size < sizeof(ch) || s->sh_offset < hdr_end ||
		    (s->sh_offset < eh.e_shoff + shnum * sizeof(*sh) &&
		    eh.e_shoff < s->sh_offset + s->sh_size))
			continue;
		p[n].idx = i;
		p[n].in_off = s->sh_offset + sizeof(ch);
		p[n].in_len = s->sh_size - sizeof(ch);
		if (unused_section(name)) {
			s->sh_type = SHT_NOBITS;
			p[n].out_len = 0;
			p[n++].done = 1;	/* dropped */
			continue;
		}
		memcpy(&ch, f + s->sh_offset, sizeof(ch));
		if (ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_size == 0 ||
		    ch.ch_size / MAX_RATIO > s->sh_size - sizeof(ch) ||
		    ch.ch_size > (1ull << 40))
			continue;
		p[n].out_off = end;
		p[n].out_len = ch.ch_size;
		p[n].align = ch.ch_addralign;
		p[n].done = 0;
		end = align_up(end + ch.ch_size, 16);
		n++;
	}
	if (n == 0)
		goto none;
	*shp = sh;
	*shnump = (size_t)shnum;
	*plans = p;
	*np = n;
	*endp = end;
	return 0;
none:
	free(sh);
	free(p);
	return -1;
}

int
sym_dbgcopy_make(int fd, int *memfd)
{
	struct libdeflate_decompressor *z = NULL;
	struct plan *p = NULL;
	Elf64_Shdr *sh = NULL;
	struct stat st;
	uint8_t *f = MAP_FAILED, *tail = MAP_FAILED;
	uint64_t size, base, end, total, shoff;
	size_t np = 0, shnum = 0, i;
	int mfd = -1, made = 0;

	*memfd = -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < sizeof(Elf64_Ehdr))
		return 0;
	size = (uint64_t)st.st_size;
	f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f == MAP_FAILED ||
	    plan_copy(f, size, &sh, &shnum, &p, &np, &end) < 0)
		goto out;
	base = align_up(size, 4096);
	shoff = end;
	total = shoff + shnum * sizeof(*sh);
	z = libdeflate_alloc_decompressor();
	mfd = memfd_create("mt-symbolize-debug", MFD_CLOEXEC);
	if (z == NULL || mfd < 0 || ftruncate(mfd, (off_t)total) < 0)
		goto out;
	/* All of it is written: one call allocates the pages, not a fault
	 * per page. */
	tail = mmap(NULL, total - base, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_POPULATE, mfd, (off_t)base);
	if (tail == MAP_FAILED)
		goto out;
	for (i = 0; i < np; i++) {
		Elf64_Shdr *s = &sh[p[i].idx];

		if (p[i].done || inflate_exact(z, f + p[i].in_off, p[i].in_len,
		    tail + (p[i].out_off - base), p[i].out_len) < 0)
			continue;	/* left compressed */
		s->sh_offset = p[i].out_off;
		s->sh_size = p[i].out_len;
		s->sh_addralign = p[i].align;
		s->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		p[i].done = 1;
	}
	memcpy(tail + (shoff - base), sh, shnum * sizeof(*sh));
	if (copy_head(fd, mfd, size, p, np) < 0 || pwrite(mfd, &shoff, sizeof(shoff), offsetof(Elf64_Ehdr, e_shoff)) !=
	    (ssize_t)sizeof(shoff))
		goto out;
	made = 1;
out:
	if (tail != MAP_FAILED)
		munmap(tail, total - base);
	if (f != MAP_FAILED)
		munmap(f, size);
	libdeflate_free_decompressor(z);
	free(sh);
	free(p);
	if (!made) {
		if (mfd >= 0)
			close(mfd);
		return 0;
	}
	*memfd = mfd;
	return 1;
}

/* The cache file's trailer (dbgcopy.h). */
#define TRAILER 48
static const char magic[16] = "mt-dbgcopy 2";

/* The original's modification time in nanoseconds. */
static uint64_t
mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000u +
	    (uint64_t)st->st_mtim.tv_nsec;
}

/*
 * XXH3-64 of the ELF header and the section header table of the copy of
 * @len bytes open on @fd (what sym_dbgcopy_make() wrote: 64-bit
 * little-endian, e_shnum set); 0 with *@h set, or -1 when they are not
 * whole or a section lies past @len.
 */
static int
hash_headers(int fd, uint64_t len, uint64_t *h)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	XXH3_state_t *x = NULL;
	size_t i, n;
	int rc = -1;

	if (len < sizeof(eh) ||
	    pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_shentsize != sizeof(*sh) || eh.e_shnum == 0 ||
	    eh.e_shoff > len ||
	    eh.e_shnum > (len - eh.e_shoff) / sizeof(*sh))
		return -1;
	n = eh.e_shnum;
	sh = malloc(n * sizeof(*sh));
	x = XXH3_createState();
	if (sh == NULL || x == NULL ||
	    pread(fd, sh, n * sizeof(*sh), (off_t)eh.e_shoff) !=
	    (ssize_t)(n * sizeof(*sh)))
		goto out;
	for (i = 0; i < n; i++)
		if (sh[i].sh_type != SHT_NOBITS &&
		    (sh[i].sh_offset > len ||
		    sh[i].sh_size > len - sh[i].sh_offset))
			goto out;
	if (XXH3_64bits_reset(x) != XXH_OK ||
	    XXH3_64bits_update(x, &eh, sizeof(eh)) != XXH_OK ||
	    XXH3_64bits_update(x, sh, n * sizeof(*sh)) != XXH_OK)
		goto out;
	*h = XXH3_64bits_digest(x);
	rc = 0;
out:
	XXH3_freeState(x);
	free(sh);
	return rc;
}

int
sym_dbgcopy_cached(const char *path, const struct stat *orig, int *copyfd)
{
	uint8_t t[TRAILER];
	struct stat st;
	uint64_t len, h;
	int fd;

	*copyfd = -1;
	/* O_NONBLOCK and a regular file: a FIFO there must not hang. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < TRAILER + (off_t)sizeof(Elf64_Ehdr) ||
	    pread(fd, t, sizeof(t), st.st_size - TRAILER) != TRAILER ||
	    memcmp(t, magic, sizeof(magic)) != 0 ||
	    mt_le64(t + 16) != (uint64_t)orig->st_size ||
	    mt_le64(t + 24) != mtime_ns(orig) ||
	    (len = mt_le64(t + 32)) != (uint64_t)st.st_size - TRAILER ||
	    hash_headers(fd, len, &h) < 0 || h != mt_le64(t + 40)) {
		close(fd);
		return 0;
	}
	/* Used: the last to go when the cache is trimmed (oldest first). */
	(void)futimens(fd, NULL);
	*copyfd = fd;
	return 1;
}

/* A file of the cache of copies: its path and what trimming needs. */
struct cached {
	char *path;		/* owned */
	uint64_t size;		/* bytes */
	struct timespec mtime;	/* last stored or used */
};

static int
cached_by_age(const void *a, const void *b)
{
	const struct cached *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Adds the copies of DIR/.build-id/@sub to *@v (*@n, room *@cap). */
static int
list_sub(const char *dir, const char *sub, const char *skip,
    struct cached **v, size_t *n, size_t *cap)
{
	static const char suffix[] = ".debug.mt-inflated";
	const size_t slen = sizeof(suffix) - 1;
	struct dirent *e;
	struct stat st;
	char *p;
	DIR *d;
	int rc = 0;

	if (asprintf(&p, "%s/.build-id/%s", dir, sub) < 0)
		return -1;
	d = opendir(p);
	free(p);
	if (d == NULL)
		return 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);

		if (l <= slen || e->d_name[0] == '.' ||
		    strcmp(e->d_name + l - slen, suffix) != 0)
			continue;
		if (asprintf(&p, "%s/.build-id/%s/%s", dir, sub,
		    e->d_name) < 0) {
			rc = -1;
			break;
		}
		if (strcmp(p, skip) == 0 || lstat(p, &st) < 0 ||
		    !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		if (*n == *cap) {
			size_t c = *cap ? 2 * *cap : 16;
			struct cached *w = realloc(*v, c * sizeof(*w));

			if (w == NULL) {
				free(p);
				rc = -1;
				break;
			}
			*v = w;
			*cap = c;
		}
		(*v)[*n].path = p;
		(*v)[*n].size = (uint64_t)st.st_size;
		(*v)[*n].mtime = st.st_mtim;
		(*n)++;
	}
	closedir(d);
	return rc;
}

/*
 * Removes the oldest copies under @dir (other than @path) until @need
 * more bytes fit within @max.  Returns 0, or -1 when they cannot fit
 * (nothing removed then) or the directory cannot be listed.
 */
static int
trim(const char *dir, const char *path, uint64_t need, uint64_t max)
{
	struct cached *v = NULL;
	size_t n = 0, cap = 0, i;
	uint64_t total = 0;
	struct dirent *e;
	DIR *d;
	char *top;
	int rc = 0;

	if (need > max)
		return -1;
	if (asprintf(&top, "%s/.build-id", dir) < 0)
		return -1;
	d = opendir(top);
	free(top);
	if (d != NULL) {
		while (rc == 0 && (e = readdir(d)) != NULL)
			if (e->d_name[0] != '.')
				rc = list_sub(dir, e->d_name, path, &v, &n,
				    &cap);
		closedir(d);
	}
	if (rc < 0)
		goto out;
	for (i = 0; i < n; i++)
		total += v[i].size;
	if (n > 1)
		qsort(v, n, sizeof(*v), cached_by_age);
	for (i = 0; i < n && total > max - need; i++)
		if (unlink(v[i].path) == 0 || errno == ENOENT)
			total -= v[i].size;
	rc = total > max - need ? -1 : 0;
out:
	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
	return rc;
}

int
sym_dbgcopy_store(int copyfd, const char *path, const struct stat *orig,
    const char *dir, uint64_t max)
{
	struct mt_outfile o;
	uint8_t t[TRAILER];
	struct stat st;
	uint64_t len, h;
	off_t at = 0;
	char *parents;
	int rc;

	if (fstat(copyfd, &st) < 0 || st.st_size <= 0 ||
	    hash_headers(copyfd, (uint64_t)st.st_size, &h) < 0)
		return -1;
	len = (uint64_t)st.st_size;
	if (trim(dir, path, len + TRAILER, max) < 0)
		return -1;
	parents = strdup(path);
	rc = parents != NULL ? mt_bidcache_mkparents(parents) : -1;
	free(parents);
	/* Synced before the rename: after a crash, whole or absent. */
	if (rc < 0 || mt_outfile_open(&o, path, 0644, MT_OUTFILE_SYNC) < 0)
		return -1;
	while ((uint64_t)at < len) {
		ssize_t n = sendfile(o.fd, copyfd, &at, len - (uint64_t)at);

		if (n <= 0) {
			mt_outfile_abort(&o);
			return -1;
		}
	}
	memcpy(t, magic, sizeof(magic));
	mt_put_le64(t + 16, (uint64_t)orig->st_size);
	mt_put_le64(t + 24, mtime_ns(orig));
	mt_put_le64(t + 32, len);
	mt_put_le64(t + 40, h);
	if (write(o.fd, t, sizeof(t)) != TRAILER) {
		mt_outfile_abort(&o);
		return -1;
	}
	return mt_outfile_commit(&o) < 0 ? -1 : 0;
}
