/* SPDX-License-Identifier: MIT */
/*
 * Trigger selectors resolved to sites (see trigger.h); their events are
 * trigev.c.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <libiberty/demangle.h>

#include "elffile.h"
#include "err.h"
#include "proc.h"
#include "trigger.h"

/* File offset of file vaddr @va through the PT_LOAD segment holding it. */
static int
vaddr_to_off(const struct mt_elf *e, uint64_t va, uint64_t *off)
{
	const struct mt_elf_seg *s;
	size_t n = mt_elf_segs(e, &s), i;

	for (i = 0; i < n; i++)
		if (va >= s[i].vaddr && va - s[i].vaddr < s[i].filesz) {
			*off = va - s[i].vaddr + s[i].offset;
			return 0;
		}
	return -MT_E_NOTFOUND;
}

static int
read_orig(struct mt_trig_site *site)
{
	int fd = open(site->path, O_RDONLY | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return -MT_E_SYS;
	ok = pread(fd, &site->orig, 1, (off_t)site->offset) == 1;
	close(fd);
	return ok ? 0 : -MT_E_SYS;
}

static int
finish_site(struct mt_trig_site *site, struct mt_elf *e, uint64_t va,
    const char *what, char *msg, size_t msgsz)
{
	if (vaddr_to_off(e, va, &site->offset) < 0) {
		snprintf(msg, msgsz, "%s at 0x%llx is outside the loadable "
		    "segments of '%s'", what, (unsigned long long)va,
		    site->path);
		return -MT_E_NOTFOUND;
	}
	site->vaddr = va;
	if (read_orig(site) < 0) {
		snprintf(msg, msgsz, "cannot read '%s'", site->path);
		return -MT_E_SYS;
	}
	snprintf(site->desc, sizeof(site->desc), "%s in %s+0x%llx", what,
	    site->path, (unsigned long long)site->offset);
	return 0;
}

/*
 * The implementation an IFUNC symbol resolves to on this CPU: load the
 * library here and ask the dynamic linker (the target, on this host,
 * gets the same answer).  Returns its file vaddr, or 0.
 */
static uint64_t
ifunc_target(const char *path, const char *name)
{
	void *h, *sym;
	Dl_info info;
	uint64_t va = 0;

	h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (h == NULL)
		return 0;
	sym = dlsym(h, name);
	if (sym != NULL && dladdr(sym, &info) != 0 && info.dli_fbase != NULL)
		va = (uint64_t)((uintptr_t)sym - (uintptr_t)info.dli_fbase);
	dlclose(h);
	return va;
}

/*
 * @dm, a demangled C++ name, without its return type, parameters and
 * clone suffix: "int ns::f<int>(int) const [clone .constprop.0]" gives
 * "ns::f<int>".  Into @out.
 */
static void
demangled_base(const char *dm, char *out, size_t outsz)
{
	const char *p, *start = dm;
	int depth = 0;

	for (p = dm; *p != '\0'; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth > 0)
			depth--;
		else if (*p == '(' && depth == 0 && p != dm)
			break;
		else if (*p == ' ' && depth == 0)
			start = p + 1;
	}
	snprintf(out, outsz, "%.*s", (int)(p - start), start);
}

/* Is @base "@name<...>", an instance of template @name? */
static int
template_of(const char *base, const char *name)
{
	size_t n = strlen(name), k = strlen(base);

	return k > n + 2 && strncmp(base, name, n) == 0 && base[n] == '<' &&
	    base[k - 1] == '>';
}

/* What find_func found. */
struct func_found {
	uint64_t va, size;	/* file vaddr and size of the symbol */
	int ifunc;		/* STT_GNU_IFUNC */
	int exact;		/* the symbol, or its whole demangled name */
	int nbase;		/* base-name matches at other addresses:
				 * 0, 1, or 2 for more */
	char first[256];	/* the demangled names of two of them */
	char other[256];
};

/*
 * Does symbol @sn (at @sym) match @name?  Its own name (version suffix
 * ignored) or its whole demangled name (with or without a clone suffix)
 * is an exact match; the demangled name without return type and
 * parameters (demangled_base), or a template's name without its
 * arguments, a base match, which counts only when it names one
 * function.
 */
static void
func_match(const char *sn, const char *name, const GElf_Sym *sym,
    struct func_found *f)
{
	size_t nlen = strlen(name);
	char base[1024], whole[1024], *dm = NULL, *clone;
	int exact;

	if (strncmp(sn, name, nlen) == 0 && (sn[nlen] == '\0' ||
	    sn[nlen] == '@'))
		exact = 1;
	else if (sn[0] != '_' || sn[1] != 'Z' ||
	    (dm = cplus_demangle(sn, DMGL_PARAMS | DMGL_ANSI)) == NULL)
		return;
	else {
		/* Split-off parts are not where the function starts: only
		 * their whole name, clone suffix and all, names them. */
		exact = strcmp(dm, name) == 0;
		if (!exact && (strstr(dm, "[clone .cold") != NULL ||
		    strstr(dm, "[clone .part") != NULL))
			goto out;
		/* "f(int) [clone .constprop.0]" is f(int) too. */
		snprintf(whole, sizeof(whole), "%s", dm);
		if ((clone = strstr(whole, " [clone ")) != NULL)
			*clone = '\0';
		exact |= strcmp(whole, name) == 0;
		demangled_base(whole, base, sizeof(base));
		if (!exact && strcmp(base, name) != 0 &&
		    !template_of(base, name))
			goto out;
	}
	if (!exact && f->nbase > 0) {
		if (f->va != sym->st_value && f->nbase == 1) {
			f->nbase = 2;
			snprintf(f->other, sizeof(f->other), "%s", dm);
		}
		goto out;
	}
	f->va = sym->st_value;
	f->size = sym->st_size;
	f->ifunc = GELF_ST_TYPE(sym->st_info) == STT_GNU_IFUNC;
	f->exact = exact;
	if (!exact) {
		f->nbase = 1;
		snprintf(f->first, sizeof(f->first), "%s", dm);
	}
out:
	free(dm);
}

/*
 * Find function @name in .symtab or .dynsym: by its symbol (version
 * suffix ignored) or its demangled C++ name, whole ("ns::f(int)", as
 * mt-symbolize shows it) or without return type and parameters
 * ("ns::f") when that names one function.  Returns 0, -MT_E_NOTFOUND,
 * or -MT_E_LIMIT when a base name names several (f->first, f->other).
 */
static int
find_func(const char *path, const char *name, struct func_found *f)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int fd;

	memset(f, 0, sizeof(*f));
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -MT_E_SYS;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf == NULL) {
		close(fd);
		return -MT_E_ELF;
	}
	while (!f->exact && (scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *d;
		size_t i, n;

		if (gelf_getshdr(scn, &sh) == NULL || (sh.sh_type !=
		    SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    sh.sh_entsize == 0 || (d = elf_getdata(scn, NULL)) == NULL)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n && !f->exact; i++) {
			GElf_Sym sym;
			const char *sn;
			int t;

			if (gelf_getsym(d, (int)i, &sym) == NULL ||
			    sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
				continue;
			t = GELF_ST_TYPE(sym.st_info);
			if (t != STT_FUNC && t != STT_GNU_IFUNC)
				continue;
			sn = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (sn != NULL)
				func_match(sn, name, &sym, f);
		}
	}
	elf_end(elf);
	close(fd);
	if (f->exact || f->nbase == 1)
		return 0;
	return f->nbase == 2 ? -MT_E_LIMIT : -MT_E_NOTFOUND;
}

/* Look @name up among @path's function symbols. */
static int
sym_in(const char *path, const char *name, struct mt_trig_site *site,
    char *msg, size_t msgsz)
{
	struct func_found f;
	struct mt_elf *e;
	uint64_t va, size;
	int ifunc, rc;
	char what[300];

	if (mt_elf_open(&e, path) < 0) {
		snprintf(msg, msgsz, "cannot read ELF file '%s': %s", path,
		    mt_elf_errmsg(NULL));
		return -MT_E_ELF;
	}
	rc = find_func(path, name, &f);
	va = f.va;
	size = f.size;
	ifunc = f.ifunc;
	if (rc == -MT_E_LIMIT) {
		snprintf(msg, msgsz, "'%s' names more than one function in "
		    "'%s' ('%s', '%s'): give the whole name, as the trace "
		    "shows it", name, path, f.first, f.other);
		mt_elf_free(e);
		return -MT_E_NOTFOUND;
	}
	if (rc < 0) {
		snprintf(msg, msgsz, "no function '%s' in '%s'%s", name, path,
		    mt_elf_has_symtab(e) ? "" :
		    " (it has no .symtab: only exported names)");
		mt_elf_free(e);
		return -MT_E_NOTFOUND;
	}
	snprintf(what, sizeof(what), "%s", name);
	if (ifunc) {
		/* The symbol is a resolver that runs once, at binding. */
		uint64_t impl = ifunc_target(path, name);

		if (impl == 0 || mt_elf_type(e) != MT_ELF_DYN) {
			snprintf(msg, msgsz, "'%s' in '%s' is an IFUNC whose "
			    "implementation could not be found; name the "
			    "implementation (e.g. with addr:)", name, path);
			mt_elf_free(e);
			return -MT_E_NOTFOUND;
		}
		va = impl;
		size = 0;	/* the implementation's size is not known */
		snprintf(what, sizeof(what), "%s (IFUNC, this CPU's "
		    "implementation at 0x%llx)", name,
		    (unsigned long long)impl);
	}
	snprintf(site->path, sizeof(site->path), "%s", path);
	rc = finish_site(site, e, va, what, msg, msgsz);
	site->size = size;
	mt_elf_free(e);
	return rc;
}

static int
resolve_line(const char *exe, const char *file, int line,
    struct mt_trig_site *site, char *msg, size_t msgsz)
{
	Dwarf *dw;
	Dwarf_Line **srcs = NULL;
	size_t nsrcs = 0, i;
	Dwarf_Addr best = 0;
	int fd, found = 0, rc;
	struct mt_elf *e;
	char what[PATH_MAX + 16];

	fd = open(exe, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(msg, msgsz, "cannot open '%s': %s", exe,
		    strerror(errno));
		return -MT_E_SYS;
	}
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (dw == NULL) {
		close(fd);
		snprintf(msg, msgsz, "'%s' has no DWARF line table (build "
		    "with -g): %s", exe, dwarf_errmsg(-1));
		return -MT_E_ELF;
	}
	if (dwarf_getsrc_file(dw, file, line, 0, &srcs, &nsrcs) == 0)
		for (i = 0; i < nsrcs; i++) {
			Dwarf_Addr a;

			if (dwarf_lineaddr(srcs[i], &a) == 0 &&
			    (!found || a < best)) {
				best = a;
				found = 1;
			}
		}
	free(srcs);
	dwarf_end(dw);
	close(fd);
	if (!found) {
		snprintf(msg, msgsz, "no code for %s:%d in the line table of "
		    "'%s'", file, line, exe);
		return -MT_E_NOTFOUND;
	}
	if (mt_elf_open(&e, exe) < 0) {
		snprintf(msg, msgsz, "cannot read ELF file '%s'", exe);
		return -MT_E_ELF;
	}
	snprintf(site->path, sizeof(site->path), "%s", exe);
	snprintf(what, sizeof(what), "%s:%d", file, line);
	rc = finish_site(site, e, best, what, msg, msgsz);
	mt_elf_free(e);
	return rc;
}

static int
holds_file_addr(const struct mt_proc_map *m, void *arg)
{
	uint64_t addr = *(const uint64_t *)arg;

	return addr >= m->start && addr < m->end && m->path[0] == '/';
}

/* attach: run-time address in a file mapping of @pid. */
static int
resolve_runtime_addr(pid_t pid, uint64_t addr, struct mt_trig_site *site,
    char *msg, size_t msgsz)
{
	struct mt_proc_map m;
	int rc;

	rc = mt_proc_find_map(pid, holds_file_addr, &addr, &m);
	if (rc == -MT_E_SYS) {
		snprintf(msg, msgsz, "cannot read '/proc/%d/maps'", (int)pid);
		return -MT_E_NOTFOUND;
	}
	if (rc < 0) {
		snprintf(msg, msgsz, "0x%llx is not in a file mapping of "
		    "process %d", (unsigned long long)addr, (int)pid);
		return -MT_E_NOTFOUND;
	}
	/* In a container, the file through /proc/PID/root. */
	(void)mt_proc_target_file(pid, m.path, m.maj, m.min, m.ino,
	    site->path, sizeof(site->path));
	site->offset = addr - m.start + m.pgoff;
	{
		struct mt_elf *e;

		site->vaddr = 0;
		if (mt_elf_open(&e, site->path) == 0) {
			(void)mt_elf_off_to_vaddr(e, site->offset,
			    &site->vaddr);
			mt_elf_free(e);
		}
	}
	if (read_orig(site) < 0) {
		snprintf(msg, msgsz, "cannot read '%s'", site->path);
		return -MT_E_SYS;
	}
	snprintf(site->desc, sizeof(site->desc), "0x%llx in %s+0x%llx",
	    (unsigned long long)addr, site->path,
	    (unsigned long long)site->offset);
	return 0;
}

static int
all_digits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

struct anywhere {
	pid_t pid;
	const char *exe, *name;
	struct mt_trig_site *site;
	char *msg;
	size_t msgsz;
	int rc;
};

/* Look for the symbol in @m's file; a match when found or on an error. */
static int
sym_in_map(const struct mt_proc_map *m, void *arg)
{
	struct anywhere *w = arg;
	char file[PATH_MAX];

	if (m->path[0] != '/' || !(m->prot & PROT_EXEC))
		return 0;
	(void)mt_proc_target_file(w->pid, m->path, m->maj, m->min, m->ino,
	    file, sizeof(file));
	if (strcmp(file, w->exe) == 0)
		return 0;
	w->rc = sym_in(file, w->name, w->site, w->msg, w->msgsz);
	if (w->rc == -MT_E_ELF)
		w->rc = -MT_E_NOTFOUND;
	return w->rc != -MT_E_NOTFOUND;
}

/* Attach without a DSO: the executable, then every mapped object. */
static int
sym_anywhere(pid_t pid, const char *exe, const char *name,
    struct mt_trig_site *site, char *msg, size_t msgsz)
{
	struct anywhere w = { pid, exe, name, site, msg, msgsz, 0 };
	struct mt_proc_map m;
	char first[256];

	w.rc = sym_in(exe, name, site, msg, msgsz);
	if (w.rc != -MT_E_NOTFOUND || pid <= 0)
		return w.rc;
	snprintf(first, sizeof(first), "%s", msg);
	(void)mt_proc_find_map(pid, sym_in_map, &w, &m);
	if (w.rc == -MT_E_NOTFOUND)
		snprintf(msg, msgsz, "%s, nor in the objects process %d maps "
		    "(name the library: DSO:%s)", first, (int)pid, name);
	return w.rc;
}

/* The address of an "addr:" selector @sel.  Returns 0 or -1. */
static int
parse_addr(const char *sel, uint64_t *a)
{
	const char *p = sel + 5;
	char *end;

	if (!isxdigit((unsigned char)*p))
		return -1;
	errno = 0;
	*a = strtoull(p, &end, 16);
	return *end != '\0' || errno != 0 ? -1 : 0;
}

int
mt_trig_check(const char *sel, char *msg, size_t msgsz)
{
	const char *colon;
	uint64_t a;

	if (strncmp(sel, "hw:", 3) == 0)
		sel += 3;
	if (*sel == '\0') {
		snprintf(msg, msgsz, "empty trigger");
		return -MT_E_SYNTAX;
	}
	if (strncmp(sel, "addr:", 5) == 0) {
		if (parse_addr(sel, &a) < 0) {
			snprintf(msg, msgsz, "bad address '%s' (addr:0xHEX)",
			    sel + 5);
			return -MT_E_SYNTAX;
		}
		return 0;
	}
	colon = strrchr(sel, ':');
	if (colon != NULL && colon[1] == '\0') {
		snprintf(msg, msgsz, "nothing after the last ':'");
		return -MT_E_SYNTAX;
	}
	return 0;
}

int
mt_trig_resolve(const char *sel, pid_t pid, const char *exe,
    struct mt_trig_site *site, char *msg, size_t msgsz)
{
	char dso[PATH_MAX], file[PATH_MAX];
	const char *colon, *last;
	struct mt_elf *e;
	uint64_t a;
	int rc;

	memset(site, 0, sizeof(*site));
	if ((rc = mt_trig_check(sel, msg, msgsz)) < 0)
		return rc;
	if (strncmp(sel, "hw:", 3) == 0) {
		rc = mt_trig_resolve(sel + 3, pid, exe, site, msg, msgsz);
		site->hw = 1;
		return rc;
	}
	if (strncmp(sel, "addr:", 5) == 0) {
		(void)parse_addr(sel, &a);
		if (pid > 0)
			return resolve_runtime_addr(pid, a, site, msg, msgsz);
		if (mt_elf_open(&e, exe) < 0) {
			snprintf(msg, msgsz, "cannot read ELF file '%s'", exe);
			return -MT_E_ELF;
		}
		snprintf(site->path, sizeof(site->path), "%s", exe);
		rc = finish_site(site, e, a, sel, msg, msgsz);
		mt_elf_free(e);
		return rc;
	}
	if (strncmp(sel, "symbol:", 7) == 0)
		return sym_anywhere(pid, exe, sel + 7, site, msg, msgsz);
	if (strncmp(sel, "line:", 5) == 0)
		sel += 5;
	last = strrchr(sel, ':');
	if (last != NULL && all_digits(last + 1) &&
	    (size_t)(last - sel) < sizeof(file) && last != sel) {
		memcpy(file, sel, (size_t)(last - sel));
		file[last - sel] = '\0';
		return resolve_line(exe, file, atoi(last + 1), site, msg,
		    msgsz);
	}
	colon = strchr(sel, ':');
	if (colon != NULL && colon != sel && colon[1] != ':' &&
	    (size_t)(colon - sel) < sizeof(file)) {
		memcpy(file, sel, (size_t)(colon - sel));
		file[colon - sel] = '\0';
		if (strchr(file, '/') != NULL || strstr(file, ".so") != NULL) {
			if (mt_proc_find_dso(pid, file, dso, sizeof(dso)) <
			    0) {
				snprintf(msg, msgsz, "cannot find library "
				    "'%s' (searched as the loader would: "
				    "mappings, LD_LIBRARY_PATH, "
				    "/etc/ld.so.cache, /lib, /usr/lib)", file);
				return -MT_E_NOTFOUND;
			}
			return sym_in(dso, colon + 1, site, msg, msgsz);
		}
	}
	return sym_anywhere(pid, exe, sel, site, msg, msgsz);
}

int
mt_trig_resolve_range(const char *sel, pid_t pid, const char *exe,
    struct mt_trig_site *site, char *msg, size_t msgsz)
{
	char dso[PATH_MAX];
	const struct mt_elf_seg *sg;
	struct mt_elf *e;
	size_t n, i;
	int rc;

	if (strchr(sel, ':') == NULL && (strchr(sel, '/') != NULL ||
	    strstr(sel, ".so") != NULL)) {
		memset(site, 0, sizeof(*site));
		if (mt_proc_find_dso(pid, sel, dso, sizeof(dso)) < 0) {
			snprintf(msg, msgsz, "cannot find '%s'", sel);
			return -MT_E_NOTFOUND;
		}
		if (mt_elf_open(&e, dso) < 0) {
			snprintf(msg, msgsz, "cannot read ELF file '%s'", dso);
			return -MT_E_ELF;
		}
		n = mt_elf_segs(e, &sg);
		for (i = 0; i < n; i++)
			if (sg[i].flags & 1)	/* PF_X */
				break;
		if (i == n) {
			mt_elf_free(e);
			snprintf(msg, msgsz, "'%s' has no executable segment",
			    dso);
			return -MT_E_NOTFOUND;
		}
		snprintf(site->path, sizeof(site->path), "%s", dso);
		site->offset = sg[i].offset;
		site->size = sg[i].filesz;
		site->vaddr = sg[i].vaddr;
		snprintf(site->desc, sizeof(site->desc), "the code of %s",
		    dso);
		mt_elf_free(e);
		return 0;
	}
	rc = mt_trig_resolve(sel, pid, exe, site, msg, msgsz);
	if (rc == 0 && site->size == 0) {
		snprintf(msg, msgsz, "'%s' has no size: name a symbol with a "
		    "size or a whole library", sel);
		return -MT_E_UNSUPP;
	}
	return rc;
}
