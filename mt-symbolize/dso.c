/* SPDX-License-Identifier: MIT */
/*
 * Binaries and their debug info (dso.h).  Symbols come from common/elffile
 * (the binary's .symtab/.dynsym/PLT, plus the separate debug file's
 * .symtab); DWARF through one Dwfl per binary, reported at bias 0 so that
 * Dwfl addresses are file vaddrs.  dwfl_standard_find_debuginfo() does
 * the debug-file search (build-id under every absolute debuginfo_path
 * entry, .gnu_debuglink with CRC check, and debuginfod when
 * DEBUGINFOD_URLS is set: elfutils dlopens libdebuginfod itself, so the
 * build does not depend on it; see dlopen() below for when it does not).
 *
 * The inline chain is found by walking the CU's DIE tree down the
 * subprogram / inlined_subroutine / lexical_block DIEs whose ranges hold
 * the address (and into namespaces, where C++ puts definitions):
 * dwwalk.h, which keeps what it read for the next address.
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "dbgcopy.h"
#include "dbgpath.h"
#include "dso.h"
#include "dwwalk.h"
#include "elffile.h"
#include "err.h"
#include "fde.h"

/* A source path joined with its CU's comp_dir, keyed by libdw's strings. */
struct joined {
	const char *comp_dir;	/* libdw-owned key */
	const char *file;	/* libdw-owned key */
	char *path;		/* comp_dir/file; owned */
	struct joined *next;	/* bucket chain */
};

#define JOIN_BUCKETS 1024

/*
 * addr2line mode: what binutils remembers of one function DIE between
 * lookups (its struct funcinfo): the name it prints, and whether that
 * name is final ("is_linkage").
 */
struct fnstate {
	Dwarf_Off off;		/* DIE offset (the key) */
	const char *name;	/* libdw or libelf string */
	int linkage;		/* 1: name is final */
	uint64_t low;		/* first address of its first range */
	struct fnstate *next;	/* bucket chain */
};

#define FN_BUCKETS 4096

struct sym_dso {
	struct joined *join[JOIN_BUCKETS];	/* joined paths; owned */
	struct fnstate *fns[FN_BUCKETS];	/* addr2line mode; owned */
	char *path;		/* the file read, or NULL; owned */
	char *warning;		/* why unusable, or NULL; owned */
	struct mt_elf *elf;	/* the binary; owned, NULL if unusable */
	struct mt_elf *dbg;	/* separate debug file with .symtab; owned */
	Dwfl_Callbacks cb;	/* must outlive dwfl */
	char *dipath;		/* debuginfo_path string; owned */
	Dwfl *dwfl;		/* owned, or NULL */
	Dwfl_Module *mod;	/* the one module of dwfl */
	uint64_t mod_bias;	/* Dwfl address = file vaddr + mod_bias */
	int has_dwarf;		/* dwfl found DWARF for mod */
	struct sym_dwwalk *walk;	/* its DIEs walked; owned, NULL: none */
	int own_debug_done;	/* find_debuginfo() looked for mod's own
				 * debug file */
	const struct sym_dso_opts *opts;	/* the opener's; not owned */
	struct mt_fde_tab fdes;	/* FDE ranges of elf, for code without
				 * symbols */
	struct ifunc_impl *ifuncs;	/* sorted by target; owned */
	size_t nifuncs;
	int ifunc_done;		/* ifuncs is built */
};

static int __attribute__((format(printf, 2, 3)))
set_warning(struct sym_dso *d, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (d->warning != NULL)
		return 0;	/* the first says what went wrong */
	d->warning = strdup(buf);
	return d->warning ? 0 : -MT_E_NOMEM;
}

const char *
sym_dso_warning(const struct sym_dso *d)
{
	return d->warning;
}

int
sym_dso_ok(const struct sym_dso *d)
{
	return d->elf != NULL;
}

int
sym_dso_off_to_vaddr(const struct sym_dso *d, uint64_t off, uint64_t *vaddr)
{
	if (d->elf == NULL)
		return -MT_E_NOTFOUND;
	return mt_elf_off_to_vaddr(d->elf, off, vaddr);
}

void
sym_dso_free(struct sym_dso *d)
{
	size_t i;

	if (d == NULL)
		return;
	free(d->ifuncs);
	for (i = 0; i < FN_BUCKETS; i++) {
		while (d->fns[i] != NULL) {
			struct fnstate *f = d->fns[i];

			d->fns[i] = f->next;
			free(f);
		}
	}
	for (i = 0; i < JOIN_BUCKETS; i++) {
		while (d->join[i] != NULL) {
			struct joined *j = d->join[i];

			d->join[i] = j->next;
			free(j->path);
			free(j);
		}
	}
	sym_dwwalk_free(d->walk);
	if (d->dwfl != NULL)
		dwfl_end(d->dwfl);
	mt_elf_free(d->elf);
	mt_elf_free(d->dbg);
	mt_fde_tab_release(&d->fdes);
	free(d->dipath);
	free(d->path);
	free(d->warning);
	free(d);
}

static char *
build_dipath(const struct sym_dso_opts *o)
{
	size_t len = sizeof(":.debug:/usr/lib/debug"), i;
	char *p;

	for (i = 0; i < o->ndebug_dirs; i++)
		len += strlen(o->debug_dirs[i]) + 1;
	p = malloc(len);
	if (p == NULL)
		return NULL;
	strcpy(p, ":.debug:/usr/lib/debug");
	for (i = 0; i < o->ndebug_dirs; i++) {
		strcat(p, ":");
		strcat(p, o->debug_dirs[i]);
	}
	return p;
}

/*
 * elfutils dlopens libdebuginfod, and with it curl, TLS and Kerberos
 * (about 4 ms of CPU, more than symbolizing a 700 KB trace), the first
 * time a module's debug file is not found on this host, whether or not a
 * server is configured.  Without DEBUGINFOD_URLS libdebuginfod answers
 * ENOSYS before it reads its cache or anything else, so nothing is lost
 * by not loading it then: this program's dlopen, which libdw's call
 * reaches first, refuses that one library while the variable is unset
 * or empty and hands every other call to the C library's.  elfutils
 * offers no switch for this (libdwfl/debuginfod-client.c dlopens it
 * unconditionally, in 0.188 and in its git master as of this writing);
 * libdw linked from its archive still calls this dlopen, which the link
 * binds to ours.
 */
void *
dlopen(const char *file, int mode)
{
	void *(*next)(const char *, int);
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (file != NULL && strncmp(file, "libdebuginfod.so", 16) == 0 &&
	    (urls == NULL || urls[0] == '\0'))
		return NULL;
	*(void **)&next = dlsym(RTLD_NEXT, "dlopen");
	if (next == NULL)
		return NULL;
	return next(file, mode);
}

static char *by_build_id(const char *dir, const char *hex,
    const char *suffix);

/*
 * The module's own debug file by its build-id, under /usr/lib/debug then
 * the --debug-dir directories (the order of dwfl_standard_find_debuginfo,
 * whose debuginfo_path puts /usr/lib/debug first): an open descriptor,
 * *@name set, or -1.  The standard search finds the same file, but it
 * validates the build-id with a libelf handle it keeps in the module
 * ("backdoor", elfutils 0.188 dwfl_build_id_find_debuginfo.c), and libdw
 * then reads that handle rather than the descriptor returned, which the
 * inflated copy (dbgcopy.h) must replace.
 */
static int
own_debug_by_build_id(struct sym_dso *d, Dwfl_Module *mod, char **name)
{
	char hex[2 * MT_ELF_BUILD_ID_MAX + 1];
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, i, fd = -1;

	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len <= 0 || len > MT_ELF_BUILD_ID_MAX)
		return -1;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
	for (i = -1; fd < 0 && i < (int)d->opts->ndebug_dirs; i++) {
		char *p = by_build_id(i < 0 ? "/usr/lib/debug" :
		    d->opts->debug_dirs[i], hex, ".debug");
		const void *id;
		struct stat st;
		Elf *e;

		if (p == NULL)
			continue;
		/* O_NONBLOCK and a regular file: a FIFO there must not hang */
		fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		e = fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ?
		    NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (e == NULL || dwelf_elf_gnu_build_id(e, &id) != len ||
		    memcmp(id, bits, (size_t)len) != 0) {
			if (fd >= 0)
				close(fd);
			fd = -1;
			free(p);
		} else {
			*name = p;
		}
		if (e != NULL)
			elf_end(e);
	}
	return fd;
}

/*
 * The inflated copy (dbgcopy.h) of @mod's own debug file, open on @fd:
 * from the cache of copies when it holds a whole one, else made and
 * stored there.  Returns its descriptor, or -1 when there is none (libdw
 * then reads @fd).
 */
static int
own_debug_copy(struct sym_dso *d, Dwfl_Module *mod, int fd)
{
	char hex[2 * MT_ELF_BUILD_ID_MAX + 1], *path = NULL;
	const unsigned char *bits;
	GElf_Addr vaddr;
	struct stat st;
	int len, i, cfd = -1;

	if (d->opts->copy_cache != NULL && fstat(fd, &st) == 0 &&
	    (len = dwfl_module_build_id(mod, &bits, &vaddr)) > 1 &&
	    len <= MT_ELF_BUILD_ID_MAX) {
		for (i = 0; i < len; i++)
			snprintf(hex + 2 * i, 3, "%02x", bits[i]);
		if (asprintf(&path, "%s/.build-id/%.2s/%s.debug.mt-inflated",
		    d->opts->copy_cache, hex, hex + 2) < 0)
			path = NULL;
	}
	if (path != NULL &&
	    sym_dbgcopy_cached(path, &st, &cfd) == 1)
		goto out;
	if (sym_dbgcopy_make(fd, &cfd) == 1 && path != NULL)
		(void)sym_dbgcopy_store(cfd, path, &st, d->opts->copy_cache,
		    d->opts->copy_cache_max);
out:
	free(path);
	return cfd;
}

/*
 * 1 if a path the standard search would open for @mod is a FIFO or a
 * device (dbgpath.h): the search is not made, with a warning.
 */
static int
standard_search_unsafe(struct sym_dso *d, Dwfl_Module *mod,
    const char *file_name, const char *debuglink)
{
	char hex[2 * MT_ELF_BUILD_ID_MAX + 1] = "", bad[512];
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, i, rc;

	len = dwfl_module_build_id(mod, &bits, &vaddr);
	for (i = 0; i < len && i < MT_ELF_BUILD_ID_MAX; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
	rc = sym_dbgpath_unsafe(d != NULL && d->dipath != NULL ? d->dipath :
	    ":.debug:/usr/lib/debug", file_name, debuglink, hex, bad,
	    sizeof(bad));
	if (rc == 1 && d != NULL)
		set_warning(d, "'%s': its debug file is not searched: '%s' "
		    "is not a regular file", d->path, bad);
	return rc != 0;
}

/*
 * dwfl_standard_find_debuginfo, keeping only a regular file that starts as
 * an ELF file.  The standard search opens whatever path it builds: with an
 * empty or bogus .gnu_debuglink that is the main file's directory.  libdw
 * (elfutils 0.188, dwfl_module_getdwarf.c) keeps that name in mod->debug;
 * when the main file then turns out to hold the DWARF, mod->debug.elf is
 * set to the main Elf and dwfl_end never frees the name (a leak found by
 * tests/fuzz/fuzz-dwarf.c, input tests/fuzz/regress/dwarf/).  The first
 * call for a module looks for its own debug file by build-id first, and
 * that file is read through its inflated copy; later calls (a dwz
 * file's .gnu_debugaltlink) and files found otherwise go the standard
 * way.
 */
static int
find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
    Dwarf_Addr base, const char *file_name, const char *debuglink_file,
    GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct sym_dso *d = *userdata;
	unsigned char magic[4];
	struct stat st;
	int fd, mfd, own = d != NULL && !d->own_debug_done;

	if (own) {
		d->own_debug_done = 1;
		fd = own_debug_by_build_id(d, mod, debuginfo_file_name);
		own = fd >= 0;
	}
	if (!own) {
		if (standard_search_unsafe(d, mod, file_name, debuglink_file)) {
			errno = 0;
			return -1;
		}
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base,
		    file_name, debuglink_file, debuglink_crc,
		    debuginfo_file_name);
	}
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
	    memcmp(magic, "\177ELF", sizeof(magic)) == 0) {
		/* libdw would inflate every compressed section: dbgcopy.h */
		if (own && (mfd = own_debug_copy(d, mod, fd)) >= 0) {
			close(fd);
			return mfd;
		}
		return fd;
	}
	close(fd);
	free(*debuginfo_file_name);
	*debuginfo_file_name = NULL;
	errno = 0;
	return -1;
}

/* Sets up Dwfl for the file at d->path.  Missing DWARF is not an error. */
static int
load_dwarf(struct sym_dso *d, const struct sym_dso_opts *o)
{
	GElf_Addr bias = 0;
	Dwarf_Addr dbias;
	const char *dbgfile = NULL;
	void **ud;

	d->opts = o;
	d->dipath = build_dipath(o);
	if (d->dipath == NULL)
		return -MT_E_NOMEM;
	d->cb.find_elf = dwfl_build_id_find_elf;
	d->cb.find_debuginfo = find_debuginfo;
	d->cb.section_address = dwfl_offline_section_address;
	d->cb.debuginfo_path = &d->dipath;
	d->dwfl = dwfl_begin(&d->cb);
	if (d->dwfl == NULL)
		return 0;
	dwfl_report_begin(d->dwfl);
	d->mod = dwfl_report_elf(d->dwfl, d->path, d->path, -1, 0, false);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (d->mod != NULL && dwfl_module_info(d->mod, &ud, NULL, NULL, NULL,
	    NULL, NULL, NULL) != NULL)
		*ud = d;	/* for find_debuginfo() */
	if (d->mod == NULL || dwfl_module_getelf(d->mod, &bias) == NULL) {
		dwfl_end(d->dwfl);
		d->dwfl = NULL;
		d->mod = NULL;
		return 0;
	}
	d->mod_bias = bias;
	d->has_dwarf = dwfl_module_getdwarf(d->mod, &dbias) != NULL;
	if (d->has_dwarf && sym_dwwalk_new(&d->walk) < 0)
		return -MT_E_NOMEM;
	/* A separate debug file has the full .symtab of a stripped binary. */
	if (!mt_elf_has_symtab(d->elf) &&
	    dwfl_module_info(d->mod, NULL, NULL, NULL, NULL, NULL, NULL,
	    &dbgfile) != NULL && dbgfile != NULL &&
	    strcmp(dbgfile, d->path) != 0) {
		if (mt_elf_open(&d->dbg, dbgfile) == 0 &&
		    !mt_elf_has_symtab(d->dbg)) {
			mt_elf_free(d->dbg);
			d->dbg = NULL;
		}
	}
	return 0;
}

static int
file_exists(const char *p)
{
	return access(p, R_OK) == 0;
}

/* 1 if the ELF file at @p has build-id @hex. */
static int
build_id_matches(const char *p, const char *hex)
{
	struct mt_elf *e;
	char buf[2 * MT_ELF_BUILD_ID_MAX + 1];
	int ok;

	if (mt_elf_open(&e, p) != 0)
		return 0;
	mt_elf_build_id_hex(e, buf);
	ok = strcmp(buf, hex) == 0;
	mt_elf_free(e);
	return ok;
}

/* Candidate file for a build-id under @dir with @suffix, if readable. */
static char *
by_build_id(const char *dir, const char *hex, const char *suffix)
{
	char *p;

	if (strlen(hex) < 4)
		return NULL;
	if (asprintf(&p, "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2,
	    suffix) < 0)
		return NULL;
	if (file_exists(p))
		return p;
	free(p);
	return NULL;
}

/*
 * Function ranges for code without symbols; a bad section is a warning.
 * A file whose sections give none (a memory image, a file cut before its
 * section headers) is read through its PT_GNU_EH_FRAME segment.
 */
static int
load_fdes(struct sym_dso *d)
{
	struct mt_fde_diag fd;
	int rc = mt_fde_read_elf(&d->fdes, d->elf, &fd);

	if (rc == 0 && d->fdes.n == 0)
		rc = mt_fde_read_eh_frame_hdr(&d->fdes, d->elf, &fd);

	if (rc == -MT_E_NOMEM)
		return rc;
	if (rc == -MT_E_ELF)
		return set_warning(d, "'%s': %s", d->path,
		    mt_elf_errmsg(d->elf));
	if (rc < 0)
		return set_warning(d, "'%s': %s at byte %llu of %s; no "
		    "function ranges from its later records", d->path,
		    mt_strerror(rc), (unsigned long long)fd.off, fd.section);
	return 0;
}

/* The places a stripped binary's debug file may be (sym_dbgpath_each). */
struct dbg_find {
	struct sym_dso *d;
	const char *hex;	/* the binary's build-id, "" none */
	const char *link;	/* its .gnu_debuglink name, NULL none */
	uint32_t crc;		/* the CRC32 that .gnu_debuglink gives */
	struct stat self;	/* the binary's own file */
	struct mt_elf *found;	/* the debug file; owned */
};

/* CRC32 (zlib's, as .gnu_debuglink's) of the file at @path: 0, or -1. */
static int
file_crc(const char *path, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0, Z_NULL, 0);
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		c = crc32(c, buf, (uInt)n);
	close(fd);
	*crc = (uint32_t)c;
	return n == 0 ? 0 : -1;
}

/*
 * A candidate of sym_dbgpath_each(): taken, as libdw's search takes it
 * (elfutils 0.188 find-debuginfo.c, validate), when it is a regular file
 * other than the binary whose build-id is the binary's, or, for a binary
 * without one, whose CRC32 is the one .gnu_debuglink gives.
 */
static int
dbg_visit(void *ctx, const char *path, const struct stat *st)
{
	struct dbg_find *f = ctx;
	char hex[2 * MT_ELF_BUILD_ID_MAX + 1];
	uint32_t crc;
	struct mt_elf *e;

	if (!S_ISREG(st->st_mode) || (st->st_dev == f->self.st_dev &&
	    st->st_ino == f->self.st_ino))
		return 0;
	if (f->hex[0] == '\0' && f->link != NULL &&
	    (file_crc(path, &crc) != 0 || crc != f->crc))
		return 0;
	if (mt_elf_open(&e, path) != 0)
		return 0;
	mt_elf_build_id_hex(e, hex);
	if (strcmp(hex, f->hex) != 0) {
		mt_elf_free(e);
		return 0;
	}
	f->found = e;
	return 1;
}

/*
 * Symbols only (no DWARF wanted): a stripped binary's debug file, looked
 * for where libdw would look (by build-id under /usr/lib/debug and the
 * debug dirs first, then by .gnu_debuglink), for its .symtab.  Not
 * searched: debuginfod.  Missing is not an error.
 */
static int
load_debug_symtab(struct sym_dso *d, const struct sym_dso_opts *o)
{
	char hex[2 * MT_ELF_BUILD_ID_MAX + 1];
	struct dbg_find f = { .d = d, .hex = hex };
	size_t i;
	int rc = 0;

	if (mt_elf_has_symtab(d->elf) || stat(d->path, &f.self) != 0)
		return 0;
	mt_elf_build_id_hex(d->elf, hex);
	f.link = mt_elf_debuglink(d->elf, &f.crc);
	d->dipath = build_dipath(o);
	if (d->dipath == NULL)
		return -MT_E_NOMEM;
	/* own_debug_by_build_id()'s order, then the standard search's */
	for (i = 0; hex[0] != '\0' && f.found == NULL &&
	    i <= o->ndebug_dirs; i++) {
		char *p = by_build_id(i == 0 ? "/usr/lib/debug" :
		    o->debug_dirs[i - 1], hex, ".debug");
		struct stat st;

		if (p != NULL && stat(p, &st) == 0)
			(void)dbg_visit(&f, p, &st);
		free(p);
	}
	if (f.found == NULL && sym_dbgpath_each(d->dipath, d->path, f.link,
	    hex, dbg_visit, &f) < 0)
		rc = -MT_E_NOMEM;
	if (f.found != NULL && mt_elf_has_symtab(f.found))
		d->dbg = f.found;
	else
		mt_elf_free(f.found);
	return rc;
}

/*
 * sym_dbgpath_each()'s visitor: 1 for anything but a directory (which
 * libdw's search cannot take): a regular file it may read, or one it
 * must not open, which load_dwarf() warns about (dbgpath.h).
 */
static int
nondir_visit(void *ctx, const char *path, const struct stat *st)
{
	(void)ctx;
	(void)path;
	return !S_ISDIR(st->st_mode);
}

/*
 * 1 if libdw is to be set up for d->elf: lines or inlined frames are
 * wanted, and libdw could find DWARF: the file has a .debug_info (or
 * a .zdebug_info), DEBUGINFOD_URLS names a server, or something other
 * than a directory is where libdw's search looks for a debug file
 * (sym_dbgpath_each(), a superset of its places, and
 * own_debug_by_build_id()'s).  Without any of these libdw finds
 * nothing, and not setting it up saves its reading of the file (the page
 * dump of a real trace: its own mapping of it, libdw's code paged in).
 * 0 or 1, or -MT_E_NOMEM.
 */
static int
dwarf_wanted(struct sym_dso *d, const struct sym_dso_opts *o)
{
	char hex[2 * MT_ELF_BUILD_ID_MAX + 1], *dipath, *p;
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct mt_elf_secdata sd;
	size_t i;
	int rc;

	if (o->no_lines && o->no_inline)
		return 0;
	/* .zdebug_info: DWARF compressed the old GNU way, which libdw reads */
	if (mt_elf_has_dwarf(d->elf) || (urls != NULL && urls[0] != '\0') ||
	    mt_elf_section(d->elf, ".zdebug_info", &sd) != -MT_E_NOTFOUND)
		return 1;
	mt_elf_build_id_hex(d->elf, hex);
	for (i = 0; hex[0] != '\0' && i <= o->ndebug_dirs; i++) {
		p = by_build_id(i == 0 ? "/usr/lib/debug" :
		    o->debug_dirs[i - 1], hex, ".debug");
		if (p != NULL) {
			free(p);
			return 1;
		}
	}
	dipath = build_dipath(o);
	if (dipath == NULL)
		return -MT_E_NOMEM;
	rc = sym_dbgpath_each(dipath, d->path, mt_elf_debuglink(d->elf,
	    NULL), hex, nondir_visit, NULL);
	free(dipath);
	return rc < 0 ? -MT_E_NOMEM : rc != 0;
}

static int
open_path(struct sym_dso *d, const struct sym_dso_opts *o)
{
	int rc;

	rc = mt_elf_open(&d->elf, d->path);
	if (rc < 0) {
		if (rc == -MT_E_NOMEM)
			return rc;
		return set_warning(d, "cannot read '%s': %s", d->path,
		    mt_elf_errmsg(NULL));
	}
	/* Usable for what is left of it, and the first thing to say. */
	if (mt_elf_truncated(d->elf) != NULL &&
	    (rc = set_warning(d, "'%s': %s", d->path,
	    mt_elf_truncated(d->elf))) < 0)
		return rc;
	d->opts = o;
	rc = dwarf_wanted(d, o);
	if (rc == 1)
		rc = load_dwarf(d, o);
	else if (rc == 0)
		rc = load_debug_symtab(d, o);
	if (rc < 0)
		return rc;
	return load_fdes(d);
}

int
sym_dso_open_file(struct sym_dso **dp, const char *path,
    const struct sym_dso_opts *o)
{
	struct sym_dso *d = calloc(1, sizeof(*d));
	int rc;

	*dp = NULL;
	if (d == NULL || (d->path = strdup(path)) == NULL) {
		free(d);
		return -MT_E_NOMEM;
	}
	rc = open_path(d, o);
	if (rc < 0) {
		sym_dso_free(d);
		return rc;
	}
	*dp = d;
	return 0;
}

/*
 * ROOT/path (a copy of the target's tree, mt-decode --root) if it is there
 * and its build-id is @hex (or none was recorded): a new string, else NULL
 * (*@mismatch set when the build-id differs).
 */
static char *
under_root(const char *root, const char *path, const char *hex,
    int *mismatch)
{
	char *p;

	if (asprintf(&p, "%s%s", root, path) < 0)
		return NULL;
	if (file_exists(p) && (hex[0] == '\0' || build_id_matches(p, hex)))
		return p;
	if (file_exists(p))
		*mismatch = 1;
	free(p);
	return NULL;
}

int
sym_dso_open(struct sym_dso **dp, const char *path, const char *build_id,
    const struct sym_dso_opts *o)
{
	struct sym_dso *d;
	const char *hex = build_id ? build_id : "";
	char *found = NULL;
	size_t i;
	int rc, mismatch = 0;

	*dp = NULL;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return -MT_E_NOMEM;
	for (i = 0; hex[0] && i < o->ndebug_dirs && !found; i++)
		found = by_build_id(o->debug_dirs[i], hex, "");
	if (found == NULL && path[0] == '/' && o->root != NULL)
		found = under_root(o->root, path, hex, &mismatch);
	if (found == NULL && path[0] == '/' && file_exists(path)) {
		if (hex[0] == '\0' || build_id_matches(path, hex))
			found = strdup(path);
		else
			mismatch = 1;
	}
	for (i = 0; hex[0] && i < o->ndebug_dirs && !found; i++)
		found = by_build_id(o->debug_dirs[i], hex, ".debug");
	if (found == NULL && hex[0])
		found = by_build_id("/usr/lib/debug", hex, ".debug");
	if (found == NULL) {
		rc = set_warning(d, mismatch ? "'%s': build-id differs from "
		    "the recorded %s; not used" : "'%s' not found (build-id "
		    "%s)", path, hex[0] ? hex : "unknown");
	} else {
		d->path = found;
		rc = open_path(d, o);
	}
	if (rc < 0) {
		sym_dso_free(d);
		return rc;
	}
	*dp = d;
	return 0;
}

/* Linkage name if any (*@linkage 1), else DW_AT_name, through origins. */
static const char *
die_name(Dwarf_Die *die, int *linkage)
{
	Dwarf_Attribute a;
	const char *s;

	*linkage = 1;
	s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name,
	    &a));
	if (s == NULL)
		s = dwarf_formstring(dwarf_attr_integrate(die,
		    DW_AT_MIPS_linkage_name, &a));
	if (s == NULL) {
		*linkage = 0;
		s = dwarf_diename(die);
	}
	return s;
}

static uint32_t
die_udata(Dwarf_Die *die, int at)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (dwarf_formudata(dwarf_attr(die, at, &a), &w) != 0 ||
	    w > UINT32_MAX)
		return 0;
	return (uint32_t)w;
}

/*
 * libdw joins a relative file name only with its line-table directory
 * ("../sysdeps/x/f.c", "./nptl/g.c"); binutils also puts the CU's
 * DW_AT_comp_dir in front of a relative result, and so do we: it is the
 * directory those paths are relative to.  NULL only when out of memory.
 */
static const char *
join_path(struct sym_dso *d, const char *comp_dir, const char *file)
{
	uintptr_t h;
	struct joined *j;

	if (file == NULL || file[0] == '/' || comp_dir == NULL ||
	    comp_dir[0] == '\0')
		return file;
	h = ((uintptr_t)comp_dir * 31 + (uintptr_t)file) >> 3;
	h = (h ^ (h >> 13)) % JOIN_BUCKETS;
	for (j = d->join[h]; j != NULL; j = j->next)
		if (j->comp_dir == comp_dir && j->file == file)
			return j->path;
	j = malloc(sizeof(*j));
	if (j == NULL)
		return file;
	if (asprintf(&j->path, "%s/%s", comp_dir, file) < 0) {
		free(j);
		return file;
	}
	j->comp_dir = comp_dir;
	j->file = file;
	j->next = d->join[h];
	d->join[h] = j;
	return j->path;
}

/* binutils' non_mangled(): languages whose DW_AT_name is the symbol. */
static int
non_mangled(int lang)
{
	switch (lang) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_Ada83:
	case DW_LANG_Cobol74:
	case DW_LANG_Cobol85:
	case DW_LANG_Fortran77:
	case DW_LANG_Pascal83:
	case DW_LANG_C99:
	case DW_LANG_Ada95:
	case DW_LANG_PLI:
	case DW_LANG_UPC:
	case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
		return 1;
	default:
		return 0;
	}
}

static const char *die_name(Dwarf_Die *die, int *linkage);

static struct fnstate *
fn_state(struct sym_dso *d, Dwarf_Die *die, int lang)
{
	Dwarf_Off off = dwarf_dieoffset(die);
	size_t h = (size_t)(off ^ (off >> 12)) % FN_BUCKETS;
	struct fnstate *f;
	Dwarf_Addr base, start, end;
	int linkage = 0;

	for (f = d->fns[h]; f != NULL; f = f->next)
		if (f->off == off)
			return f;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NULL;
	f->off = off;
	f->name = die_name(die, &linkage);
	f->linkage = linkage || non_mangled(lang);
	if (dwarf_ranges(die, 0, &base, &start, &end) > 0)
		f->low = start;
	else if (dwarf_lowpc(die, &start) == 0)
		f->low = start;
	f->next = d->fns[h];
	d->fns[h] = f;
	return f;
}

/*
 * Names as binutils 2.40 addr2line gives them.  A function whose DWARF
 * name is not a linkage name (C++ without DW_AT_linkage_name) is named,
 * the first time an address inside it is the innermost, after the symbol
 * nearest below the address; that symbol name sticks to the function only
 * when it starts at the function's first range.  The innermost name thus
 * depends on earlier lookups ("main.cold" once, then "main"), which is
 * what binutils prints.  @sym is the nearest symbol or NULL.
 */
static void
a2l_names(struct sym_dso *d, Dwarf_Die *cu, Dwarf_Die *chain, int n,
    const struct mt_elf_sym *sym, uint64_t dbias_off, struct sym_frame *fr)
{
	int lang = dwarf_srclang(cu), i;

	for (i = 0; i < n; i++) {
		struct fnstate *f = fn_state(d, &chain[i], lang);

		if (f == NULL)
			continue;
		if (i == n - 1 && !f->linkage) {
			if (sym != NULL) {
				fr[i].name = sym->name;
				if (sym->start == f->low + dbias_off)
					f->name = sym->name;
			} else {
				fr[i].name = f->name;
			}
			f->linkage = 1;
		} else {
			fr[i].name = f->name;
		}
	}
}

/*
 * 1 if @line uses the initial file register of its sequence: it and every
 * row before it in the sequence name file entry 1 (@f1), no
 * DW_LNS_set_file having changed it.  libdw keeps rows sorted by address,
 * sequences contiguous.
 */
static int
initial_file_row(Dwarf_Die *cu, Dwarf_Line *line, const char *f1)
{
	Dwarf_Lines *lines;
	size_t n, i, k;
	bool end;

	if (dwarf_getsrclines(cu, &lines, &n) != 0)
		return 0;
	for (i = 0; i < n && dwarf_onesrcline(lines, i) != line; i++)
		;
	if (i == n)
		return 0;
	for (k = i + 1; k-- > 0; ) {
		Dwarf_Line *l = dwarf_onesrcline(lines, k);

		if (k < i && dwarf_lineendsequence(l, &end) == 0 && end)
			return 1;
		if (dwarf_linesrc(l, NULL, NULL) != f1)
			return 0;
	}
	return 1;
}

/*
 * DWARF frames for @vaddr.  Without lines (no_lines) no line table is
 * read; without inlined frames (no_inline) one frame, its line @vaddr's
 * own, and the DIE walk only for code without a symbol @sym in trace
 * mode, whose name and start the symbol's replace (sym_dso_lookup).
 */
static int
dwarf_frames(struct sym_dso *d, uint64_t vaddr, enum sym_rules rules,
    const struct mt_elf_sym *sym, struct sym_frame *fr, int max)
{
	Dwarf_Die chain[SYM_MAX_FRAMES], cu, *cup;
	Dwarf_Addr dbias, pc, lo;
	Dwarf_Files *files = NULL;
	Dwarf_Attribute cda;
	const char *comp_dir = NULL;
	Dwarf_Line *line = NULL;
	size_t nfiles = 0;
	int n = 0, i, lines = !d->opts->no_lines;
	unsigned disc = 0;

	if (max > SYM_MAX_FRAMES)
		max = SYM_MAX_FRAMES;
	if (d->opts->no_inline)
		max = 1;
	cup = dwfl_module_addrdie(d->mod, vaddr + d->mod_bias, &dbias);
	if (cup == NULL)
		return 0;
	cu = *cup;
	pc = vaddr + d->mod_bias - dbias;
	/* dwfl may hand out a CU that does not cover pc (crt1's _start). */
	if (dwarf_haspc(&cu, pc) != 1)
		return 0;
	if (!d->opts->no_inline || sym == NULL || rules != SYM_RULES_TRACE)
		n = sym_dwwalk_chain(d->walk, &cu, pc, chain, max,
		    rules == SYM_RULES_A2L);
	if (lines) {
		comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir,
		    &cda));
		if (dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
			files = NULL;
	}
	for (i = 0; i < n; i++) {
		int linkage;

		fr[i].name = die_name(&chain[i], &linkage);
		fr[i].start = 0;
		fr[i].file = NULL;
		fr[i].line = 0;
		fr[i].disc = 0;
		if (lines && i + 1 < n) {
			uint32_t f = die_udata(&chain[i + 1],
			    DW_AT_call_file);

			if (files != NULL && f < nfiles)
				fr[i].file = join_path(d, comp_dir,
				    dwarf_filesrc(files, f, NULL, NULL));
			fr[i].line = die_udata(&chain[i + 1],
			    DW_AT_call_line);
		}
	}
	if (n > 0 && (dwarf_entrypc(&chain[0], &lo) == 0 ||
	    dwarf_lowpc(&chain[0], &lo) == 0) && lo + dbias >= d->mod_bias)
		fr[0].start = lo + dbias - d->mod_bias;
	if (rules == SYM_RULES_A2L && n > 0)
		a2l_names(d, &cu, chain, n, sym, dbias - d->mod_bias, fr);
	if (lines)
		line = dwarf_getsrc_die(&cu, pc);
	if (n == 0) {
		if (line == NULL)
			return 0;
		fr[0].name = NULL;
		fr[0].start = 0;
		n = 1;
	}
	fr[n - 1].file = NULL;
	fr[n - 1].line = 0;
	fr[n - 1].disc = 0;
	if (line != NULL) {
		const char *src = dwarf_linesrc(line, NULL, NULL);
		Dwarf_Half version = 0;
		int ln = 0;

		/*
		 * binutils 2.40 reads a DWARF 5 row that uses the initial
		 * file register (1, never set in its sequence) as file entry
		 * 0, the CU's primary file; with a .c file #included first
		 * they differ.  Emulated in addr2line mode only
		 * (docs/symbolize.md).
		 */
		if (rules == SYM_RULES_A2L && files != NULL && nfiles > 1 &&
		    src == dwarf_filesrc(files, 1, NULL, NULL) &&
		    dwarf_cu_info(cu.cu, &version, NULL, NULL, NULL, NULL, NULL,
		    NULL) == 0 && version >= 5 &&
		    initial_file_row(&cu, line, src))
			src = dwarf_filesrc(files, 0, NULL, NULL);
		fr[n - 1].file = join_path(d, comp_dir, src);
		if (dwarf_lineno(line, &ln) == 0 && ln > 0)
			fr[n - 1].line = (uint32_t)ln;
		if (dwarf_linediscriminator(line, &disc) == 0)
			fr[n - 1].disc = disc;
	}
	return n;
}

/*
 * In trace mode, code with neither a symbol nor a DWARF name takes the
 * start of the FDE holding @vaddr as its function's start (its name
 * stays NULL).  Returns 1 with *@start set, else 0.
 */
static int
fde_start(struct sym_dso *d, uint64_t vaddr, enum sym_rules rules,
    uint64_t *start)
{
	const struct mt_fde *f;

	if (rules != SYM_RULES_TRACE ||
	    (f = mt_fde_find(&d->fdes, vaddr)) == NULL)
		return 0;
	*start = f->start;
	return 1;
}

int
sym_dso_lookup(struct sym_dso *d, uint64_t vaddr, enum sym_rules rules,
    struct sym_frame *fr, int max)
{
	const struct mt_elf_sym *sym = NULL;
	int n = 0;

	if (d->elf == NULL || max < 1)
		return 0;
	if (rules == SYM_RULES_A2L) {
		/* binutils takes the debug file's symbols when it has one. */
		if (mt_elf_sym_nearest(d->dbg ? d->dbg : d->elf, vaddr,
		    &sym) != 0)
			sym = NULL;
	} else if (rules == SYM_RULES_ELFUTILS) {
		if ((d->dbg == NULL ||
		    mt_elf_sym_find(d->dbg, vaddr, &sym) != 0) &&
		    mt_elf_sym_find(d->elf, vaddr, &sym) != 0)
			sym = NULL;
	} else if (mt_elf_sym_find(d->elf, vaddr, &sym) != 0 &&
	    (d->dbg == NULL || mt_elf_sym_find(d->dbg, vaddr, &sym) != 0)) {
		/* Exported names (the binary's own table) first. */
		sym = NULL;
	}
	if (d->has_dwarf)
		n = dwarf_frames(d, vaddr, rules, sym, fr, max);
	if (n == 0) {
		if (sym == NULL && !fde_start(d, vaddr, rules, &fr[0].start))
			return 0;
		fr[0].name = NULL;
		fr[0].file = NULL;
		fr[0].line = 0;
		fr[0].disc = 0;
		n = 1;
	}
	if (sym != NULL && (fr[0].name == NULL || rules == SYM_RULES_TRACE)) {
		fr[0].name = rules == SYM_RULES_TRACE ? sym->alias : sym->name;
		fr[0].start = sym->start;
	} else if (sym == NULL && fr[0].name == NULL) {
		(void)fde_start(d, vaddr, rules, &fr[0].start);
	}
	/* binutils names the file after the symbol's STT_FILE. */
	if (rules == SYM_RULES_A2L && sym != NULL && n == 1 &&
	    fr[0].file == NULL)
		fr[0].file = sym->file;
	return n;
}

/* An IFUNC implementation: the resolver of @name may return @target. */
struct ifunc_impl {
	uint64_t target;	/* file vaddr of the implementation */
	const char *name;	/* the IFUNC's name; owned by the mt_elf */
};

static int
impl_cmp(const void *a, const void *b)
{
	const struct ifunc_impl *x = a, *y = b;

	return x->target < y->target ? -1 : x->target > y->target;
}

/*
 * Collect the candidates of every IFUNC resolver of d->elf: the addresses
 * its code loads with a RIP-relative LEA into a 64-bit register (REX.W
 * 8D /r, ModRM mod 00 r/m 101), which is how GCC and glibc's resolvers
 * return their implementations, when they lie in .text.  A resolver is
 * read up to its st_size, at most 512 bytes.
 */
static int
ifunc_scan(struct sym_dso *d)
{
	const struct mt_elf_sym *syms;
	struct mt_elf_secdata text;
	struct ifunc_impl *v = NULL, *nv;
	size_t n, i, nv_n = 0, cap = 0;

	d->ifunc_done = 1;
	if (d->elf == NULL || mt_elf_syms(d->elf, &syms, &n) < 0 ||
	    mt_elf_section(d->elf, ".text", &text) < 0)
		return 0;
	for (i = 0; i < n; i++) {
		const uint8_t *p;
		uint64_t len, j;

		if (!syms[i].ifunc || syms[i].start < text.addr ||
		    syms[i].start - text.addr >= text.len)
			continue;
		p = text.p + (syms[i].start - text.addr);
		len = text.len - (syms[i].start - text.addr);
		if (len > 512)
			len = 512;
		if (syms[i].size > 0 && len > syms[i].size)
			len = syms[i].size;
		for (j = 0; j + 7 <= len; j++) {
			uint64_t t;
			int32_t disp;

			if ((p[j] != 0x48 && p[j] != 0x4c) || p[j + 1] != 0x8d ||
			    (p[j + 2] & 0xc7) != 0x05)
				continue;
			disp = (int32_t)((uint32_t)p[j + 3] |
			    (uint32_t)p[j + 4] << 8 | (uint32_t)p[j + 5] << 16 |
			    (uint32_t)p[j + 6] << 24);
			t = syms[i].start + j + 7 + (uint64_t)(int64_t)disp;
			if (t < text.addr || t - text.addr >= text.len)
				continue;
			if (nv_n == cap) {
				cap = cap ? 2 * cap : 16;
				nv = realloc(v, cap * sizeof(*v));
				if (nv == NULL) {
					free(v);
					return -MT_E_NOMEM;
				}
				v = nv;
			}
			v[nv_n].target = t;
			v[nv_n++].name = syms[i].alias;
		}
	}
	if (nv_n > 0)
		qsort(v, nv_n, sizeof(*v), impl_cmp);
	d->ifuncs = v;
	d->nifuncs = nv_n;
	return 0;
}

const char *
sym_dso_ifunc(struct sym_dso *d, uint64_t vaddr)
{
	size_t lo = 0, hi;

	if (!d->ifunc_done && ifunc_scan(d) < 0)
		return NULL;
	hi = d->nifuncs;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (d->ifuncs[m].target < vaddr)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < d->nifuncs && d->ifuncs[lo].target == vaddr ?
	    d->ifuncs[lo].name : NULL;
}
