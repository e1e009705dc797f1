/* SPDX-License-Identifier: MIT */
/*
 * Target process and host facts for the snapshot (see proc.h).
 */
#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "buf.h"
#include "elffile.h"
#include "err.h"
#include "snap.h"
#include "kjit.h"
#include "proc.h"

/* Read a whole (small, /proc) file; returns bytes read or -1. */
static ssize_t
slurp(const char *path, char **out, size_t max)
{
	struct mt_wbuf w;
	char tmp[4096];
	ssize_t n;
	int fd;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	mt_wbuf_init(&w);
	while ((n = read(fd, tmp, sizeof(tmp))) > 0 && w.len < max)
		mt_wbuf_put(&w, tmp, (size_t)n);
	close(fd);
	mt_wbuf_u8(&w, 0);
	if (n < 0 || w.err) {
		mt_wbuf_release(&w);
		return -1;
	}
	*out = (char *)w.p;
	return (ssize_t)(w.len - 1);
}

int
mt_proc_parse_maps_line(const char *line, struct mt_proc_map *m)
{
	unsigned long long start, end, off;
	char perms[8];
	int pos = 0;
	const char *p;
	size_t n;

	unsigned maj, min;
	unsigned long long ino;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end,
	    perms, &off, &maj, &min, &ino, &pos) != 7 || pos == 0 ||
	    strlen(perms) != 4 || end < start)
		return -MT_E_SYNTAX;
	m->maj = maj;
	m->min = min;
	m->ino = ino;
	m->start = start;
	m->end = end;
	m->pgoff = off;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) |
	    (perms[1] == 'w' ? PROT_WRITE : 0) |
	    (perms[2] == 'x' ? PROT_EXEC : 0);
	m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	p = line + pos;
	while (*p == ' ' || *p == '\t')
		p++;
	n = strcspn(p, "\n");
	if (n >= sizeof(m->path))
		n = sizeof(m->path) - 1;
	memcpy(m->path, p, n);
	m->path[n] = '\0';
	return 0;
}

static int
same_file(const char *path, uint32_t maj, uint32_t min, uint64_t ino)
{
	struct stat st;

	return stat(path, &st) == 0 && major(st.st_dev) == maj &&
	    minor(st.st_dev) == min && (uint64_t)st.st_ino == ino;
}

int
mt_proc_target_file(pid_t pid, const char *path, uint32_t maj,
    uint32_t min, uint64_t ino, char *out, size_t outsz)
{
	char alt[PATH_MAX + 32];

	snprintf(out, outsz, "%s", path);
	if (path[0] != '/' || same_file(path, maj, min, ino))
		return 0;
	snprintf(alt, sizeof(alt), "/proc/%d/root%s", (int)pid, path);
	if (!same_file(alt, maj, min, ino))
		return -MT_E_NOTFOUND;
	snprintf(out, outsz, "%s", alt);
	return 0;
}

int
mt_proc_threads(pid_t pid, pid_t *tids, size_t max)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return -MT_E_NOTFOUND;
	/* The main thread first, then the others in directory order. */
	if (max > 0)
		tids[n++] = pid;
	while ((de = readdir(d)) != NULL && n < max) {
		long t = strtol(de->d_name, NULL, 10);

		if (t > 0 && t != pid)
			tids[n++] = (pid_t)t;
	}
	closedir(d);
	return (int)n;
}

static char *
read_comm(const char *path)
{
	char *s;

	if (slurp(path, &s, 64) < 0)
		return NULL;
	s[strcspn(s, "\n")] = '\0';
	return s;
}

/* The value of "@key:" in /proc/@pid/status, into @out.  Returns 0 or -1. */
static int
status_field(pid_t pid, const char *key, char *out, size_t outsz)
{
	char path[64], *text, *line;
	size_t k = strlen(key);
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (slurp(path, &text, 1u << 16) < 0)
		return -1;
	for (line = text; line != NULL && *line != '\0';) {
		char *nl = strchr(line, '\n');

		if (nl != NULL)
			*nl = '\0';
		if (strncmp(line, key, k) == 0 && line[k] == ':') {
			snprintf(out, outsz, "%s", line + k + 1 +
			    strspn(line + k + 1, " \t"));
			rc = 0;
			break;
		}
		line = nl != NULL ? nl + 1 : NULL;
	}
	free(text);
	return rc;
}

int
mt_proc_tracer(pid_t pid, pid_t *tracer, char *comm, size_t commsz)
{
	char v[32], path[64], *c;

	*tracer = 0;
	if (commsz > 0)
		comm[0] = '\0';
	if (status_field(pid, "TracerPid", v, sizeof(v)) < 0)
		return -MT_E_NOTFOUND;
	*tracer = (pid_t)strtol(v, NULL, 10);
	if (*tracer <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)*tracer);
	if ((c = read_comm(path)) != NULL) {
		snprintf(comm, commsz, "%s", c);
		free(c);
	}
	return 0;
}

pid_t
mt_proc_tgid(pid_t tid)
{
	char v[32];

	return status_field(tid, "Tgid", v, sizeof(v)) < 0 ? -1 :
	    (pid_t)strtol(v, NULL, 10);
}

int
mt_proc_state(pid_t pid)
{
	char v[64];

	return status_field(pid, "State", v, sizeof(v)) < 0 ? 0 :
	    (unsigned char)v[0];
}

/* Open the file of mapping @m of @pid: its path, else map_files. */
static int
open_map_elf(pid_t pid, const struct mt_proc_map *m, struct mt_elf **e)
{
	char alt[PATH_MAX + 32];

	/* The mapped file itself, also in a container (not a same-named
	 * file of ours). */
	if (mt_proc_target_file(pid, m->path, m->maj, m->min, m->ino, alt,
	    sizeof(alt)) == 0 && mt_elf_open(e, alt) == 0)
		return 0;
	snprintf(alt, sizeof(alt), "/proc/%d/map_files/%llx-%llx", (int)pid,
	    (unsigned long long)m->start, (unsigned long long)m->end);
	return mt_elf_open(e, alt);
}

static int
add_elf_file(struct mt_snap *s, const char *path, const char *name,
    const uint8_t *id, size_t idlen, uint64_t max_elf, size_t *skipped)
{
	struct mt_snap_elf e;
	char *data;
	struct stat st;
	int fd, rc;
	size_t got = 0;
	ssize_t n;

	for (size_t i = 0; i < s->nelfs; i++)
		if (s->elfs[i].build_id_len == idlen &&
		    memcmp(s->elfs[i].build_id, id, idlen) == 0)
			return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size > max_elf) {
		if (fd >= 0)
			close(fd);
		(*skipped)++;
		return 0;
	}
	data = malloc((size_t)st.st_size + 1);
	if (data == NULL) {
		close(fd);
		return -MT_E_NOMEM;
	}
	while (got < (size_t)st.st_size &&
	    (n = read(fd, data + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	memset(&e, 0, sizeof(e));
	e.build_id_len = (uint8_t)idlen;
	memcpy(e.build_id, id, idlen);
	e.path = (char *)(uintptr_t)name;	/* as the process names it */
	e.len = got;
	e.data = (uint8_t *)data;
	rc = mt_snap_add_elf(s, &e);
	free(data);
	return rc;
}

static int
add_vdso(struct mt_snap *s, pid_t pid, const struct mt_proc_map *m)
{
	struct mt_snap_blob b;
	struct iovec l, r;
	size_t len = (size_t)(m->end - m->start);
	uint8_t *buf;
	ssize_t n;
	int rc;

	if (len == 0 || len > (64u << 20))
		return 0;
	buf = malloc(len);
	if (buf == NULL)
		return -MT_E_NOMEM;
	l.iov_base = buf;
	l.iov_len = len;
	r.iov_base = (void *)(uintptr_t)m->start;
	r.iov_len = len;
	n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	if (n != (ssize_t)len) {
		/* ptrace access needed; without it the decoder gaps over
		 * vDSO calls. */
		free(buf);
		return 0;
	}
	memset(&b, 0, sizeof(b));
	b.pid = (uint32_t)pid;
	b.kind = MT_SNAP_BLOB_VDSO;
	b.addr = m->start;
	b.name = (char *)(uintptr_t)"[vdso]";
	b.len = len;
	b.data = buf;
	rc = mt_snap_add_blob(s, &b);
	free(buf);
	return rc;
}

struct describe {
	struct mt_snap *s;
	pid_t pid;
	int bundle;
	uint64_t max_elf;
	size_t *skipped;
	int rc;
};

/* Add mapping @m (MMAP, bundled ELF, vDSO); nonzero stops on an error. */
static int
describe_one(const struct mt_proc_map *m, void *arg)
{
	struct describe *d = arg;
	struct mt_snap_mmap mm;
	struct mt_elf *e = NULL;
	const uint8_t *id;
	size_t idlen = 0;

	memset(&mm, 0, sizeof(mm));
	mm.pid = (uint32_t)d->pid;
	mm.start = m->start;
	mm.end = m->end;
	mm.pgoff = m->pgoff;
	mm.prot = m->prot;
	mm.flags = m->flags;
	mm.path = (char *)(uintptr_t)m->path;	/* copied */
	if (m->path[0] == '/' && open_map_elf(d->pid, m, &e) == 0) {
		idlen = mt_elf_build_id(e, &id);
		if (idlen > MT_SNAP_BUILD_ID_MAX)
			idlen = MT_SNAP_BUILD_ID_MAX;
		mm.build_id_len = (uint8_t)idlen;
		if (idlen > 0)
			memcpy(mm.build_id, id, idlen);
	}
	d->rc = mt_snap_add_mmap(d->s, &mm);
	if (d->rc == 0 && d->bundle && idlen > 0 && (m->prot & PROT_EXEC)) {
		char fp[PATH_MAX + 32];

		(void)mt_proc_target_file(d->pid, m->path, m->maj, m->min,
		    m->ino, fp, sizeof(fp));
		d->rc = add_elf_file(d->s, fp, m->path, mm.build_id, idlen,
		    d->max_elf, d->skipped);
	}
	mt_elf_free(e);
	if (d->rc == 0 && strcmp(m->path, "[vdso]") == 0)
		d->rc = add_vdso(d->s, d->pid, m);
	return d->rc != 0;
}

int
mt_proc_describe_maps(struct mt_snap *s, pid_t pid, char *text, size_t n,
    int bundle, uint64_t max_elf, size_t *skipped)
{
	struct describe d = { s, pid, bundle, max_elf, skipped, 0 };
	struct mt_snap_text t;
	struct mt_proc_map m;

	memset(&t, 0, sizeof(t));
	t.kind = MT_SNAP_TEXT_MAPS;
	t.pid = (uint32_t)pid;
	t.len = (uint64_t)n;
	t.data = text;
	if ((d.rc = mt_snap_add_text(s, &t)) == 0)
		(void)mt_proc_find_map_in(text, describe_one, &d, &m);
	return d.rc;
}

int
mt_proc_find_map_in(char *text,
    int (*match)(const struct mt_proc_map *, void *), void *arg,
    struct mt_proc_map *m)
{
	char *line = text, *nl;
	int found = 0;

	while (!found && *line != '\0') {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';	/* sscanf must not read on past the line */
		found = mt_proc_parse_maps_line(line, m) == 0 && match(m, arg);
		if (nl == NULL)
			break;
		*nl = '\n';
		line = nl + 1;
	}
	return found ? 0 : -MT_E_NOTFOUND;
}

int
mt_proc_find_map(pid_t pid, int (*match)(const struct mt_proc_map *, void *),
    void *arg, struct mt_proc_map *m)
{
	char path[64], *text;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (slurp(path, &text, 64u << 20) < 0)
		return -MT_E_SYS;
	rc = mt_proc_find_map_in(text, match, arg, m);
	free(text);
	return rc;
}

static int
describe_maps(struct mt_snap *s, pid_t pid, int bundle, uint64_t max_elf,
    size_t *skipped)
{
	char path[64], *text;
	ssize_t n;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	n = slurp(path, &text, 64u << 20);
	if (n < 0)
		return -MT_E_NOTFOUND;
	rc = mt_proc_describe_maps(s, pid, text, (size_t)n, bundle, max_elf,
	    skipped);
	free(text);
	return rc;
}

pid_t
mt_proc_ppid(pid_t pid)
{
	char path[64], *stat;
	int ppid = -1;
	char *rp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (slurp(path, &stat, 4096) < 0)
		return -1;
	/* "pid (comm) S ppid ...": comm may hold ')' */
	rp = strrchr(stat, ')');
	if (rp == NULL || sscanf(rp + 1, " %*c %d", &ppid) != 1)
		ppid = -1;
	free(stat);
	return (pid_t)ppid;
}

int
mt_proc_describe(struct mt_snap *s, pid_t pid, int all_threads,
    int bundle, uint64_t max_elf, size_t *skipped)
{
	struct mt_snap_process p;
	char path[128], *exe = NULL, *cmd = NULL;
	pid_t ppid;
	pid_t tids[4096];
	ssize_t n;
	int nt, i, rc;

	memset(&p, 0, sizeof(p));
	p.pid = (uint32_t)pid;
	ppid = mt_proc_ppid(pid);
	if (ppid < 0)
		return -MT_E_NOTFOUND;
	p.ppid = (uint32_t)ppid;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	p.comm = read_comm(path);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	exe = realpath(path, NULL);
	p.exe = exe;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = slurp(path, &cmd, 1u << 20);
	if (n > 0) {
		p.cmdline = cmd;
		p.cmdline_len = (uint32_t)n;
	}
	rc = mt_snap_add_process(s, &p);
	free(p.comm);
	free(exe);
	free(cmd);
	if (rc < 0)
		return rc;
	nt = mt_proc_threads(pid, tids, all_threads ? 4096 : 1);
	for (i = 0; i < nt && rc == 0; i++) {
		struct mt_snap_thread t;

		memset(&t, 0, sizeof(t));
		t.pid = (uint32_t)pid;
		t.tid = (uint32_t)tids[i];
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid,
		    (int)tids[i]);
		t.comm = read_comm(path);
		rc = mt_snap_add_thread(s, &t);
		free(t.comm);
	}
	if (rc == 0)
		rc = describe_maps(s, pid, bundle, max_elf, skipped);
	return rc == -MT_E_NOTFOUND ? 0 : rc;
}

void
mt_proc_host(struct mt_snap_host *h, uint32_t max_nonturbo_ratio)
{
	unsigned a, b, c, d, maxleaf = 0, fam, model;
	struct utsname u;
	char host[256];
	int sub;

	memset(h, 0, sizeof(*h));
	if (__get_cpuid(0, &maxleaf, &b, &c, &d)) {
		memcpy(h->vendor, &b, 4);
		memcpy(h->vendor + 4, &d, 4);
		memcpy(h->vendor + 8, &c, 4);
	}
	if (__get_cpuid(1, &a, &b, &c, &d)) {
		fam = (a >> 8) & 0xf;
		model = (a >> 4) & 0xf;
		if (fam == 0xf)
			fam += (a >> 20) & 0xff;
		if (fam == 0x6 || fam >= 0xf)
			model += ((a >> 16) & 0xf) << 4;
		h->family = (uint16_t)fam;
		h->model = (uint8_t)model;
		h->stepping = (uint8_t)(a & 0xf);
	}
	if (maxleaf >= 0x14)
		for (sub = 0; sub < 2; sub++) {
			__cpuid_count(0x14, sub, a, b, c, d);
			h->cpuid_14[sub][0] = a;
			h->cpuid_14[sub][1] = b;
			h->cpuid_14[sub][2] = c;
			h->cpuid_14[sub][3] = d;
		}
	if (maxleaf >= 0x15) {
		__cpuid_count(0x15, 0, a, b, c, d);
		h->cpuid_15[0] = a;
		h->cpuid_15[1] = b;
		h->cpuid_15[2] = c;
	}
	h->max_nonturbo_ratio = max_nonturbo_ratio;
	h->nr_cpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (uname(&u) == 0)
		h->kernel = strdup(u.release);
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		h->hostname = strdup(host);
	}
}

/* ---- shared-object lookup as the loader does it ---- */

static int
is_elf64(const char *path)
{
	unsigned char id[5];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return 0;
	ok = read(fd, id, 5) == 5 && memcmp(id, "\177ELF", 4) == 0 &&
	    id[4] == 2;
	close(fd);
	return ok;
}

/*
 * @p, an ELF file under @root ("" or "/proc/PID/root"), as the path to
 * use from here: its real path in our namespace, or under another root
 * @p itself: realpath would follow the /proc/PID/root link to our own
 * root, where the kernel's lookup (the uprobe's path, open) jumps into
 * the target's and resolves the rest there.
 */
static int
in_root(const char *root, const char *p, char *out, size_t outsz)
{
	if (!is_elf64(p))
		return -MT_E_NOTFOUND;
	if (root[0] == '\0')
		return realpath(p, out) != NULL ? 0 : -MT_E_NOTFOUND;
	if (strlen(p) >= outsz)
		return -MT_E_NOTFOUND;
	strcpy(out, p);
	return 0;
}

static int
try_dir(const char *root, const char *dir, size_t dlen, const char *name,
    char *out, size_t outsz)
{
	char p[PATH_MAX];
	size_t rlen = strlen(root);

	if (dlen == 0 || rlen + dlen + strlen(name) + 2 > sizeof(p))
		return -MT_E_NOTFOUND;
	memcpy(p, root, rlen);
	memcpy(p + rlen, dir, dlen);
	p[rlen + dlen] = '/';
	strcpy(p + rlen + dlen + 1, name);
	return in_root(root, p, out, outsz);
}

/* glibc's ld.so.cache, new format ("glibc-ld.so.cache1.1"). */
static int
from_ld_cache(const char *root, const char *name, char *out, size_t outsz)
{
	static const char magic[] = "glibc-ld.so.cache1.1";
	char *data, path[PATH_MAX];
	ssize_t n;
	struct mt_buf b;
	uint32_t nlibs, i;
	int rc = -MT_E_NOTFOUND;

	snprintf(path, sizeof(path), "%s/etc/ld.so.cache", root);
	n = slurp(path, &data, 64u << 20);
	if (n < 48 || memcmp(data, magic, sizeof(magic) - 1) != 0) {
		free(data);
		return rc;
	}
	nlibs = mt_le32((const uint8_t *)data + 20);
	mt_buf_init(&b, data + 48, (size_t)n - 48);
	for (i = 0; i < nlibs; i++) {
		uint32_t flags, key, value;

		if (mt_buf_get_u32le(&b, &flags) < 0 ||
		    mt_buf_get_u32le(&b, &key) < 0 ||
		    mt_buf_get_u32le(&b, &value) < 0 ||
		    mt_buf_skip(&b, 12) < 0)
			break;
		if (key >= (uint64_t)n || value >= (uint64_t)n ||
		    memchr(data + key, 0, (size_t)n - key) == NULL ||
		    memchr(data + value, 0, (size_t)n - value) == NULL)
			continue;
		if (strcmp(data + key, name) == 0 &&
		    snprintf(path, sizeof(path), "%s%s", root, data + value) <
		    (int)sizeof(path) && in_root(root, path, out, outsz) == 0) {
			rc = 0;
			break;
		}
	}
	free(data);
	return rc;
}

struct named {
	const char *name;
	size_t outsz;
};

static int
is_named(const struct mt_proc_map *m, void *arg)
{
	const struct named *n = arg;

	return m->path[0] == '/' && strlen(m->path) < n->outsz &&
	    strcmp(strrchr(m->path, '/') + 1, n->name) == 0;
}

static int
from_pid_maps(pid_t pid, const char *name, char *out, size_t outsz)
{
	struct named n = { name, outsz };
	struct mt_proc_map m;

	if (mt_proc_find_map(pid, is_named, &n, &m) < 0)
		return -MT_E_NOTFOUND;
	(void)mt_proc_target_file(pid, m.path, m.maj, m.min, m.ino, out,
	    outsz);
	return 0;
}

static int
from_dir_list(const char *root, const char *d, const char *name, char *out,
    size_t outsz)
{
	int rc = -MT_E_NOTFOUND;

	while (d != NULL && *d != '\0' && rc < 0) {
		size_t k = strcspn(d, ":;");

		rc = try_dir(root, d, k, name, out, outsz);
		d += k;
		if (*d != '\0')
			d++;
	}
	return rc;
}

/* LD_LIBRARY_PATH of @pid, or ours (passed on to a child) if pid <= 0. */
static int
from_env_path(pid_t pid, const char *root, const char *name, char *out,
    size_t outsz)
{
	char path[64], *env;
	ssize_t n, off = 0;
	int rc = -MT_E_NOTFOUND;

	if (pid <= 0)
		return from_dir_list("", getenv("LD_LIBRARY_PATH"), name,
		    out, outsz);
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	n = slurp(path, &env, 1u << 20);
	while (n > 0 && off < n && rc < 0) {
		const char *e = env + off;

		if (strncmp(e, "LD_LIBRARY_PATH=", 16) == 0)
			rc = from_dir_list(root, e + 16, name, out, outsz);
		off += (ssize_t)strlen(e) + 1;
	}
	free(env);
	return rc;
}

/* Do @a and @b (followed) differ by device or inode? */
static int
differ(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 &&
	    (x.st_dev != y.st_dev || x.st_ino != y.st_ino);
}

/*
 * Does @pid see other files than we do under the same paths: another
 * mount namespace (nsfs inode of /proc/PID/ns/mnt) or root directory (a
 * chroot)?
 */
static int
other_root(pid_t pid)
{
	char ns[64], root[64];

	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)pid);
	snprintf(root, sizeof(root), "/proc/%d/root/", (int)pid);
	return differ(ns, "/proc/self/ns/mnt") || differ(root, "/");
}

int
mt_proc_find_dso(pid_t pid, const char *name, char *out, size_t outsz)
{
	static const char *const dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
		"/lib64", "/usr/lib64", "/lib", "/usr/lib",
	};
	char root[64] = "";
	size_t i;

	if (outsz < PATH_MAX)
		return -MT_E_INVAL;
	/* A target in another root (a container): its files, not ours. */
	if (pid > 0 && other_root(pid))
		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	if (strchr(name, '/') != NULL) {
		char p[PATH_MAX];

		if (name[0] != '/' || snprintf(p, sizeof(p), "%s%s", root,
		    name) >= (int)sizeof(p))
			return realpath(name, out) != NULL ? 0 :
			    -MT_E_NOTFOUND;
		return in_root(root, p, out, outsz);
	}
	if (pid > 0 && from_pid_maps(pid, name, out, outsz) == 0)
		return 0;
	if (from_env_path(pid, root, name, out, outsz) == 0)
		return 0;
	if (from_ld_cache(root, name, out, outsz) == 0)
		return 0;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (try_dir(root, dirs[i], strlen(dirs[i]), name, out,
		    outsz) == 0)
			return 0;
	return -MT_E_NOTFOUND;
}

/* ---- the kernel (--kernel) ---- */

static uint64_t
ksym(const char *text, const char *name)
{
	const char *p = text;
	size_t n = strlen(name);

	while ((p = strstr(p, name)) != NULL) {
		const char *ls = p;

		if ((p[n] == '\n' || p[n] == '\0') && p > text + 20 &&
		    p[-1] == ' ' && p[-3] == ' ') {
			while (ls > text && ls[-1] != '\n')
				ls--;
			return strtoull(ls, NULL, 16);
		}
		p += n;
	}
	return 0;
}

/*
 * Copy [@addr, @addr + @len) of kernel memory from /proc/kcore (@fd: its
 * ELF program headers map kernel addresses to file offsets) into @s as a
 * BLOB named @name.  Returns 1 copied, 0 not in kcore or short read, or
 * -MT_E_NOMEM.
 */
static int
kcore_copy(int fd, const uint8_t *eh, uint64_t addr, uint64_t len,
    const char *name, struct mt_snap *s)
{
	uint64_t phoff = mt_le64(eh + 0x20);
	uint16_t phentsize = mt_le16(eh + 0x36);
	uint16_t phnum = mt_le16(eh + 0x38), i;
	struct mt_snap_blob b;
	uint8_t ph[56];
	int rc = 0;

	for (i = 0; i < phnum && phentsize >= sizeof(ph); i++) {
		uint64_t off, va, filesz;
		uint8_t *buf;

		if (pread(fd, ph, sizeof(ph), (off_t)(phoff +
		    (uint64_t)i * phentsize)) != (ssize_t)sizeof(ph))
			break;
		off = mt_le64(ph + 8);
		va = mt_le64(ph + 16);
		filesz = mt_le64(ph + 32);
		if (mt_le32(ph) != 1 || addr < va || addr - va >= filesz)
			continue;
		if (len > filesz - (addr - va))
			len = filesz - (addr - va);
		buf = malloc((size_t)len ? (size_t)len : 1);
		if (buf == NULL)
			return -MT_E_NOMEM;
		if (pread(fd, buf, (size_t)len, (off_t)(off + (addr - va))) ==
		    (ssize_t)len) {
			memset(&b, 0, sizeof(b));
			b.pid = 0;
			b.kind = MT_SNAP_BLOB_KERNEL;
			b.addr = addr;
			b.name = (char *)(uintptr_t)name;
			b.len = len;
			b.data = buf;
			rc = mt_snap_add_blob(s, &b) < 0 ? -MT_E_NOMEM : 1;
		}
		free(buf);
		break;
	}
	return rc;
}

size_t
mt_proc_parse_modules(char *text, struct mt_proc_module *mods, size_t max)
{
	char *line, *save = NULL;
	size_t n = 0;

	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		unsigned long long size, addr;

		/* name size refcount deps state address [taint] */
		if (sscanf(line, "%63s %llu %*s %*s %*s %llx", name, &size,
		    &addr) != 3 || addr == 0 || size == 0)
			continue;
		if (n < max) {
			snprintf(mods[n].name, sizeof(mods[n].name), "[%s]",
			    name);
			mods[n].addr = addr;
			mods[n].size = size;
		}
		n++;
	}
	return n;
}

/* Add @text to the warnings in @warn, after "; " if there are some. */
static void
add_warn(char *warn, size_t warnsz, const char *text)
{
	size_t n = strlen(warn);

	snprintf(warn + n, warnsz - n, "%s%s", n > 0 ? "; " : "", text);
}

/* The JIT ranges as a perf map TEXT chunk of pid 0. */
static int
jit_text(struct mt_snap *s, const struct mt_proc_krange *jit, size_t njit)
{
	struct mt_snap_text t;
	char *buf;
	size_t i, len = 0, cap = njit * (16 + 1 + 8 + 1 + 128 + 1) + 1;
	int rc;

	if (njit == 0)
		return 0;
	if ((buf = malloc(cap)) == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < njit; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%llx %x %s\n",
		    (unsigned long long)jit[i].addr, (unsigned)jit[i].len,
		    jit[i].name);
	memset(&t, 0, sizeof(t));
	t.kind = MT_SNAP_TEXT_PERFMAP;
	t.pid = 0;
	t.len = len;
	t.data = buf;
	rc = mt_snap_add_text(s, &t);
	free(buf);
	return rc;
}

int
mt_proc_kernel(struct mt_snap *s, const struct mt_proc_krange *jit,
    size_t njit, char *warn, size_t warnsz)
{
	struct mt_snap_text t;
	struct mt_proc_module mods[512];
	uint8_t eh[64];
	char *syms, *text;
	ssize_t n;
	uint64_t stext, etext;
	struct mt_proc_krange *all = NULL;
	size_t nm = 0, i;
	long nj = 0;
	int fd = -1, rc;

	warn[0] = '\0';
	n = slurp("/proc/kallsyms", &syms, 256u << 20);
	if (n < 0) {
		snprintf(warn, warnsz, "cannot read /proc/kallsyms: kernel "
		    "addresses will not be named");
		return 0;
	}
	memset(&t, 0, sizeof(t));
	t.kind = MT_SNAP_TEXT_KALLSYMS;
	t.len = (uint64_t)n;
	t.data = syms;
	rc = mt_snap_add_text(s, &t);
	stext = ksym(syms, "_stext");
	etext = ksym(syms, "_etext");
	/* With the BPF programs loaded before recording. */
	if (rc >= 0 && (nj = mt_kjit_all(syms, jit, njit, &all, warn,
	    warnsz)) < 0)
		rc = (int)nj;
	free(syms);
	if (rc >= 0)
		rc = jit_text(s, all, (size_t)nj);
	if (rc < 0)
		goto out;
	jit = all;
	njit = (size_t)nj;
	if (stext == 0 || etext <= stext || etext - stext > (256u << 20)) {
		add_warn(warn, warnsz, "kallsyms hides kernel addresses "
		    "(sysctl kernel.kptr_restrict): kernel text not copied");
		goto out;
	}
	/* MT_KCORE: a file of kcore's form instead, for tests. */
	fd = open(getenv("MT_KCORE") != NULL ? getenv("MT_KCORE") :
	    "/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh, "\177ELF\2\1", 6) != 0) {
		add_warn(warn, warnsz, "cannot read /proc/kcore (needs "
		    "CAP_SYS_RAWIO): kernel text not copied; decoding kernel "
		    "code will fail where it was patched at run time");
		goto out;
	}
	rc = kcore_copy(fd, eh, stext, etext - stext, "[kernel.kallsyms]", s);
	if (rc == 0)
		add_warn(warn, warnsz, "short read of kernel text from "
		    "/proc/kcore");
	/* Module code as it is now (loaded since, or patched). */
	if (rc >= 0 && slurp("/proc/modules", &text, 16u << 20) >= 0) {
		nm = mt_proc_parse_modules(text, mods, 512);
		free(text);
	}
	for (i = 0; rc >= 0 && i < nm && i < 512; i++)
		if (mods[i].size <= (64u << 20))
			rc = kcore_copy(fd, eh, mods[i].addr, mods[i].size,
			    mods[i].name, s);
	/* BPF JIT code and trampolines, as they are now. */
	for (i = 0; rc >= 0 && i < njit; i++)
		if (jit[i].len > 0 && jit[i].len <= (16u << 20))
			rc = kcore_copy(fd, eh, jit[i].addr, jit[i].len,
			    jit[i].name, s);
out:
	if (fd >= 0)
		close(fd);
	free(all);
	return rc < 0 ? rc : 0;
}
