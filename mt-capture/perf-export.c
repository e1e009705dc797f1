/* SPDX-License-Identifier: MIT */
/*
 * mt-capture export-perf: a snapshot as a perf.data file that `perf script
 * --itrace=...` decodes with perf's own Intel PT decoder (docs/perf.md).
 *
 * What goes in, in file order: the intel_pt attr (id 1) and a dummy attr
 * (id 2) carrying the sideband, TIME_CONV, AUXTRACE_INFO built from the
 * PTCFG, HOST and TIMECONV chunks, then every sideband record sorted by
 * time (COMM for PROCESS/THREAD chunks and MMAP2 for MMAP chunks at time
 * 0, then the SIDEBAND chunks' records re-encoded with one sample_id
 * layout), then one AUXTRACE record per AUX chunk, FINISHED_ROUND, and the
 * CPUID, NRCPUS, BUILD_ID and AUXTRACE-index features.
 *
 * perf finds code by the path in MMAP2 records, so the code bytes the
 * snapshot carries (BLOB chunks: vDSO, raw page dumps; ELF chunks) are
 * written as files into files_dir and the mappings point at them; perf
 * reads a flat non-ELF file as raw bytes at pgoff.  Kernel text goes
 * there as a vmlinux (perf-vmlinux.c) with a kernel MMAP2 record.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "perf.h"
#include "perfdata.h"
#include "sideband.h"
#include "snap.h"

#define PT_ID		1	/* event id of the intel_pt attr */
#define DUMMY_ID	2	/* event id of the sideband attr */
#define ST_OUT	(MT_SB_ST_IP | MT_SB_ST_TID | MT_SB_ST_TIME | MT_SB_ST_CPU | \
    MT_SB_ST_IDENTIFIER)

/*
 * Adjacent BLOB chunks of one process and name (e.g. page dumps) joined
 * into one file: perf cannot read an instruction that crosses from one
 * mapping into the next.
 */
struct ex_blob {
	char *path;		/* the file written; owned */
	uint64_t addr, len;	/* [addr, addr + len) */
	uint32_t pid;		/* 0: every process */
	const char *name;	/* borrowed from the snapshot; "" none */
	uint64_t time;		/* perf ns from which it is the code there
				 * (JIT code written over other code), 0:
				 * from the start */
};

/* One encoded sideband record, sorted by time before writing. */
struct ex_rec {
	uint64_t time;
	size_t seq;		/* order of creation: ties keep it */
	size_t off, len;	/* bytes in ex.recs */
};

struct ex {
	const struct perf_export_opts *o;
	const struct mt_snap *s;
	struct perf_diag *d;
	struct mt_wbuf recs;		/* encoded records */
	struct ex_rec *list;
	size_t nlist;
	uint32_t *pids;			/* processes seen */
	size_t npids;
	struct ex_blob *blobs;		/* BLOB chunks joined into files */
	size_t nblobs;
	char **elf_path;		/* per ELF chunk: its file */
	char *kpath;			/* kernel text as a vmlinux, or NULL */
	uint64_t kaddr, klen;		/* its address and length */
	struct mt_pd_build_id *bids;	/* build-ids of written mappings */
	size_t nbids;
	int dir_made;
};

/* "cannot VERB 'PATH': strerror(errno)" into the diagnostics. */
static int
fail_io(struct ex *x, const char *verb, const char *path)
{
	snprintf(x->d->msg, sizeof(x->d->msg), "cannot %s '%s': %s", verb,
	    path, strerror(errno));
	return -MT_E_IO;
}

static void
warn(struct ex *x, const char *msg)
{
	if (x->o->warn != NULL)
		x->o->warn(x->o->warn_arg, msg);
}

static int
add_pid(struct ex *x, uint32_t pid)
{
	uint32_t *np;
	size_t i;

	if (pid == MT_SNAP_NONE)
		return 0;
	for (i = 0; i < x->npids; i++)
		if (x->pids[i] == pid)
			return 0;
	np = realloc(x->pids, (x->npids + 1) * sizeof(*np));
	if (np == NULL)
		return -MT_E_NOMEM;
	x->pids = np;
	x->pids[x->npids++] = pid;
	return 0;
}

static int
push(struct ex *x, const struct mt_sb_rec *r)
{
	struct ex_rec *nl;
	size_t before = x->recs.len;
	int n;

	n = mt_sb_write(&x->recs, r, ST_OUT);
	if (n < 0)
		return n;
	if ((x->nlist & (x->nlist - 1)) == 0) {
		nl = realloc(x->list, (x->nlist ? x->nlist * 2 : 1) *
		    sizeof(*nl));
		if (nl == NULL)
			return -MT_E_NOMEM;
		x->list = nl;
	}
	x->list[x->nlist].time = r->id.time;
	x->list[x->nlist].seq = x->nlist;
	x->list[x->nlist].off = before;
	x->list[x->nlist].len = (size_t)n;
	x->nlist++;
	return 0;
}

static int
ensure_dir(struct ex *x)
{
	if (x->dir_made)
		return 0;
	if (x->o->files_dir == NULL) {
		snprintf(x->d->msg, sizeof(x->d->msg),
		    "the snapshot carries code bytes but no directory was "
		    "given for them");
		return -MT_E_INVAL;
	}
	if (mkdir(x->o->files_dir, 0700) < 0 && errno != EEXIST)
		return fail_io(x, "create", x->o->files_dir);
	x->dir_made = 1;
	return 0;
}

/* Write @len bytes to a new file DIR/@name; its path into *@out. */
static int
write_code_file(struct ex *x, const char *name, const uint8_t *p,
    uint64_t len, char **out)
{
	char *path;
	int fd, rc = 0;
	size_t n;
	ssize_t k;

	rc = ensure_dir(x);
	if (rc < 0)
		return rc;
	n = strlen(x->o->files_dir) + strlen(name) + 2;
	path = malloc(n);
	if (path == NULL)
		return -MT_E_NOMEM;
	snprintf(path, n, "%s/%s", x->o->files_dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		rc = fail_io(x, "create", path);
		free(path);
		return rc;
	}
	while (len > 0) {
		k = write(fd, p, len > (1u << 30) ? (1u << 30) : (size_t)len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = fail_io(x, "write", path);
			break;
		}
		p += k;
		len -= (uint64_t)k;
	}
	if (close(fd) < 0 && rc == 0)
		rc = fail_io(x, "write", path);
	if (rc < 0) {
		free(path);
		return rc;
	}
	*out = path;
	return 0;
}

/* A file name for @s made of safe characters only. */
static void
safe_name(char *dst, size_t n, const char *s)
{
	const char *b = strrchr(s, '/');
	size_t i = 0;

	s = b ? b + 1 : s;
	for (; *s != 0 && i + 1 < n; s++)
		dst[i++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' &&
		    *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
		    *s == '-' || *s == '_' ? *s : '_';
	dst[i] = 0;
}

static int
write_code_files(struct ex *x)
{
	const struct mt_snap *s = x->s;
	char name[256], safe[128];
	size_t i, j, k;
	int rc;

	x->blobs = calloc(s->nblobs + 1, sizeof(*x->blobs));
	x->elf_path = calloc(s->nelfs + 1, sizeof(char *));
	if (x->blobs == NULL || x->elf_path == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < s->nblobs; i = j) {
		const struct mt_snap_blob *b = &s->blobs[i];
		const char *bn = b->name ? b->name : "";
		struct ex_blob *g = &x->blobs[x->nblobs];
		struct mt_wbuf data;

		/* The run of blobs that continue this one. */
		g->addr = b->addr;
		g->len = 0;
		g->pid = b->pid;
		g->name = bn;
		g->time = b->time;
		for (j = i; j < s->nblobs; j++) {
			const struct mt_snap_blob *c = &s->blobs[j];

			if (c->kind != b->kind || c->pid != b->pid ||
			    c->time != b->time ||
			    strcmp(c->name ? c->name : "", bn) != 0 ||
			    c->addr != g->addr + g->len ||
			    c->len > UINT64_MAX - c->addr)
				break;
			g->len += c->len;
		}
		if (j == i)
			j = i + 1;
		/* kernel text alone, as a vmlinux: see docs/perf.md */
		if (g->len == 0 || (b->kind == MT_SNAP_BLOB_KERNEL &&
		    (x->kpath != NULL || strcmp(bn, "[kernel.kallsyms]"))))
			continue;
		mt_wbuf_init(&data);
		for (k = i; k < j; k++)
			mt_wbuf_put(&data, s->blobs[k].data,
			    (size_t)s->blobs[k].len);
		if (b->kind == MT_SNAP_BLOB_KERNEL) {
			struct mt_wbuf elf;

			mt_wbuf_init(&elf);
			rc = data.err ? data.err : perf_vmlinux(&elf, s,
			    g->addr, data.p, data.len);
			if (rc == 0)
				rc = write_code_file(x, "vmlinux", elf.p,
				    elf.len, &x->kpath);
			mt_wbuf_release(&elf);
			mt_wbuf_release(&data);
			x->kaddr = g->addr;
			x->klen = g->len;
			if (rc < 0)
				return rc;
			continue;
		}
		safe_name(safe, sizeof(safe), bn[0] ? bn : "blob");
		snprintf(name, sizeof(name), "blob%zu-%llx-%s.bin", i,
		    (unsigned long long)g->addr, safe);
		rc = data.err ? data.err : write_code_file(x, name, data.p,
		    data.len, &g->path);
		mt_wbuf_release(&data);
		if (rc < 0)
			return rc;
		x->nblobs++;
	}
	for (i = 0; i < s->nelfs; i++) {
		safe_name(safe, sizeof(safe), s->elfs[i].path ?
		    s->elfs[i].path : "elf");
		snprintf(name, sizeof(name), "elf%zu-%s", i, safe);
		rc = write_code_file(x, name, s->elfs[i].data, s->elfs[i].len,
		    &x->elf_path[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * The file perf should read for a mapping: a bundled ELF with its
 * build-id (or, without one, its path), a BLOB of the same name covering
 * @addr (then *@pgoff becomes the offset in that blob), else @path.
 * *@bid/@bidlen get the ELF's build-id when one matched.
 */
static const char *
resolve(struct ex *x, uint32_t pid, uint64_t addr, const uint8_t *bid,
    size_t bidlen, const char *path, uint64_t *pgoff,
    const uint8_t **obid, size_t *obidlen)
{
	const struct mt_snap *s = x->s;
	size_t i;

	*obid = bid;
	*obidlen = bidlen;
	for (i = 0; i < s->nelfs; i++) {
		const struct mt_snap_elf *e = &s->elfs[i];

		if (bidlen > 0 ? (e->build_id_len == bidlen &&
		    memcmp(e->build_id, bid, bidlen) == 0) :
		    (e->path != NULL && strcmp(e->path, path) == 0)) {
			*obid = e->build_id;
			*obidlen = e->build_id_len;
			return x->elf_path[i];
		}
	}
	for (i = 0; i < x->nblobs; i++) {
		const struct ex_blob *b = &x->blobs[i];

		if (strcmp(b->name, path) != 0 ||
		    (b->pid != 0 && b->pid != pid) || addr < b->addr ||
		    addr - b->addr >= b->len)
			continue;
		*pgoff = addr - b->addr;
		return b->path;
	}
	return path;
}

/* Remember a build-id for the BUILD_ID feature (once per file). */
static int
note_build_id(struct ex *x, uint32_t pid, const uint8_t *bid, size_t len,
    const char *path)
{
	struct mt_pd_build_id *nb;
	size_t i;

	if (len == 0 || path[0] == '[')
		return 0;
	for (i = 0; i < x->nbids; i++)
		if (strcmp(x->bids[i].filename, path) == 0)
			return 0;
	nb = realloc(x->bids, (x->nbids + 1) * sizeof(*nb));
	if (nb == NULL)
		return -MT_E_NOMEM;
	x->bids = nb;
	nb = &x->bids[x->nbids];
	memset(nb, 0, sizeof(*nb));
	nb->pid = (int32_t)pid;
	nb->misc = MT_SB_MISC_USER;
	nb->len = (uint8_t)(len > 20 ? 20 : len);
	memcpy(nb->id, bid, nb->len);
	nb->filename = strdup(path);
	if (nb->filename == NULL)
		return -MT_E_NOMEM;
	x->nbids++;
	return 0;
}

static int
push_mmap2(struct ex *x, uint32_t pid, uint32_t tid, uint64_t time,
    uint64_t start, uint64_t len, uint64_t pgoff, uint32_t prot,
    uint32_t flags, const uint8_t *bid, size_t bidlen, const char *path)
{
	struct mt_sb_rec r;
	const uint8_t *obid;
	size_t obidlen;
	int rc;

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_MMAP2;
	r.misc = MT_SB_MISC_USER;
	r.id.pid = pid;
	r.id.tid = tid;
	r.id.time = time;
	r.id.id = DUMMY_ID;
	r.u.mmap.pid = pid;
	r.u.mmap.tid = tid;
	r.u.mmap.addr = start;
	r.u.mmap.len = len;
	r.u.mmap.pgoff = pgoff;
	r.u.mmap.prot = prot ? prot : 5;
	r.u.mmap.flags = flags ? flags : 2;
	r.u.mmap.filename = resolve(x, pid, start, bid, bidlen, path,
	    &r.u.mmap.pgoff, &obid, &obidlen);
	rc = note_build_id(x, pid, obid, obidlen, r.u.mmap.filename);
	if (rc < 0)
		return rc;
	return push(x, &r);
}

static int
push_comm(struct ex *x, uint32_t pid, uint32_t tid, const char *comm)
{
	struct mt_sb_rec r;

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_COMM;
	r.id.pid = pid;
	r.id.tid = tid;
	r.id.id = DUMMY_ID;
	r.u.comm.pid = pid;
	r.u.comm.tid = tid;
	r.u.comm.comm = comm && comm[0] ? comm : "unknown";
	return push(x, &r);
}

static int
thread_known(const struct mt_snap *s, uint32_t tid)
{
	size_t i;

	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			return 1;
	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == tid)
			return 1;
	return 0;
}

/*
 * The thread an AUX buffer is written for (per-thread buffers).  Thread 0
 * is the idle task to perf, which never looks up user code for it, so a
 * buffer of "thread 0" (import-raw) is written for PERF_EXPORT_TID0.
 */
static uint32_t
aux_tid(const struct ex *x, const struct mt_snap_aux *a)
{
	if (a->tid == 0)
		return PERF_EXPORT_TID0;
	if (a->tid != MT_SNAP_NONE || a->cpu != MT_SNAP_NONE)
		return a->tid;
	return x->npids > 0 ? x->pids[0] : PERF_EXPORT_TID0;
}

/*
 * The kernel MMAP record perf makes its kernel map from (it makes none
 * for a perf.data it reads without one): the host kernel's name with the
 * symbol the map is relocated against, at that symbol's address.
 */
static int
push_kernel_mmap(struct ex *x)
{
	struct mt_sb_rec r;

	memset(&r, 0, sizeof(r));
	r.type = MT_SB_MMAP2;
	r.misc = MT_SB_MISC_KERNEL;
	r.id.pid = r.id.tid = UINT32_MAX;
	r.id.id = DUMMY_ID;
	r.u.mmap.pid = r.u.mmap.tid = UINT32_MAX;
	r.u.mmap.addr = x->kaddr;
	r.u.mmap.len = x->klen;
	r.u.mmap.pgoff = x->kaddr;
	r.u.mmap.prot = 5;
	r.u.mmap.flags = 2;
	r.u.mmap.filename = "[kernel.kallsyms]_text";
	return push(x, &r);
}

/* COMM and MMAP2 records for what the snapshot knew at attach time. */
static int
synth_records(struct ex *x)
{
	const struct mt_snap *s = x->s;
	size_t i, j;
	int rc = 0;

	for (i = 0; rc == 0 && i < s->nprocs; i++)
		rc = add_pid(x, s->procs[i].pid);
	for (i = 0; rc == 0 && i < s->nthreads; i++)
		rc = add_pid(x, s->threads[i].pid);
	for (i = 0; rc == 0 && i < s->nmmaps; i++)
		rc = add_pid(x, s->mmaps[i].pid);
	for (i = 0; rc == 0 && i < s->nblobs; i++)
		if (s->blobs[i].pid != 0)
			rc = add_pid(x, s->blobs[i].pid);
	for (i = 0; rc == 0 && i < s->naux; i++)
		if (s->aux[i].cpu == MT_SNAP_NONE && !thread_known(s,
		    s->aux[i].tid))
			rc = add_pid(x, aux_tid(x, &s->aux[i]));
	if (rc == 0 && x->kpath != NULL)
		rc = push_kernel_mmap(x);
	for (i = 0; rc == 0 && i < s->nprocs; i++)
		rc = push_comm(x, s->procs[i].pid, s->procs[i].pid,
		    s->procs[i].comm);
	for (i = 0; rc == 0 && i < s->nthreads; i++)
		rc = push_comm(x, s->threads[i].pid, s->threads[i].tid,
		    s->threads[i].comm);
	for (i = 0; rc == 0 && i < s->naux; i++) {
		uint32_t tid = aux_tid(x, &s->aux[i]);

		if (s->aux[i].cpu == MT_SNAP_NONE && !thread_known(s, tid))
			rc = push_comm(x, tid, tid, NULL);
	}
	for (i = 0; rc == 0 && i < s->nmmaps; i++) {
		const struct mt_snap_mmap *m = &s->mmaps[i];

		if (m->path == NULL || m->path[0] == 0 || m->end <= m->start)
			continue;
		rc = push_mmap2(x, m->pid, m->pid, 0, m->start,
		    m->end - m->start, m->pgoff, m->prot, m->flags,
		    m->build_id, m->build_id_len, m->path);
	}
	/* Blobs whose name no mapping uses get a mapping of their own, in
	 * each process when they belong to all of them. */
	for (i = 0; rc == 0 && i < x->nblobs; i++) {
		const struct ex_blob *b = &x->blobs[i];
		int named = 0;

		for (j = 0; j < s->nmmaps; j++)
			if (s->mmaps[j].path != NULL &&
			    strcmp(s->mmaps[j].path, b->name) == 0)
				named = 1;
		if (named && b->name[0] != 0)
			continue;
		/* at its time: JIT code written over other code */
		if (b->pid != 0) {
			rc = push_mmap2(x, b->pid, b->pid, b->time, b->addr,
			    b->len, 0, 5, 2, NULL, 0, b->path);
			continue;
		}
		for (j = 0; rc == 0 && j < x->npids; j++)
			rc = push_mmap2(x, x->pids[j], x->pids[j], b->time,
			    b->addr, b->len, 0, 5, 2, NULL, 0, b->path);
	}
	return rc;
}

/* The SIDEBAND chunks' records, re-encoded with the output layout. */
static int
sideband_records(struct ex *x)
{
	const struct mt_snap *s = x->s;
	struct mt_sb_reader rd;
	struct mt_sb_rec r;
	size_t i;
	int rc;

	for (i = 0; i < s->nsideband; i++) {
		const struct mt_snap_sideband *sb = &s->sideband[i];

		mt_sb_reader_init(&rd, sb->data, (size_t)sb->len,
		    sb->sample_type, 1, 0);
		while ((rc = mt_sb_next(&rd, &r)) == 0) {
			if (r.type == MT_SB_SAMPLE || r.type >= MT_SB_KERNEL_MAX)
				continue;
			if (!(sb->sample_type & MT_SB_ST_CPU) &&
			    sb->cpu != MT_SNAP_NONE)
				r.id.cpu = sb->cpu;
			r.id.id = r.type == MT_SB_ITRACE_START ||
			    r.type == MT_SB_AUX ? PT_ID : DUMMY_ID;
			if (r.type == MT_SB_MMAP || r.type == MT_SB_MMAP2) {
				const struct mt_sb_mmap *m = &r.u.mmap;
				size_t bl = (r.misc & MT_SB_MISC_MMAP_BUILD_ID) ?
				    m->build_id_len : 0;

				if (r.misc & MT_SB_MISC_MMAP_DATA)
					continue;	/* not code */
				rc = push_mmap2(x, m->pid, m->tid, r.id.time,
				    m->addr, m->len, m->pgoff, m->prot,
				    m->flags, m->build_id, bl, m->filename);
				if (rc < 0)
					return rc;
				continue;
			}
			rc = push(x, &r);
			if (rc < 0)
				return rc;
		}
		if (rc < 0) {
			x->d->has_off = 1;
			x->d->off = rd.err_off;
			snprintf(x->d->msg, sizeof(x->d->msg),
			    "corrupt SIDEBAND chunk %zu at byte %llu of its "
			    "records: %s", i,
			    (unsigned long long)rd.err_off, rd.err_msg);
			return rc;
		}
	}
	return 0;
}

static int
cmp_rec(const void *a, const void *b)
{
	const struct ex_rec *p = a, *q = b;

	if (p->time != q->time)
		return p->time < q->time ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/*
 * The file mapped at @addr for perf: a joined blob, else an MMAP chunk
 * (with the file export points it at).  Returns 0 and fills the mapping's
 * start, length, file offset and path, or -1.
 */
static int
map_at(struct ex *x, uint64_t addr, uint64_t *start, uint64_t *len,
    uint64_t *pgoff, const char **path)
{
	const struct mt_snap *s = x->s;
	const uint8_t *bid;
	size_t i, bl;

	for (i = 0; i < x->nblobs; i++) {
		if (addr >= x->blobs[i].addr &&
		    addr - x->blobs[i].addr < x->blobs[i].len) {
			*start = x->blobs[i].addr;
			*len = x->blobs[i].len;
			*pgoff = 0;
			*path = x->blobs[i].path;
			return 0;
		}
	}
	for (i = 0; i < s->nmmaps; i++) {
		const struct mt_snap_mmap *m = &s->mmaps[i];

		if (m->path == NULL || addr < m->start || addr >= m->end)
			continue;
		*start = m->start;
		*len = m->end - m->start;
		*pgoff = m->pgoff;
		*path = resolve(x, m->pid, m->start, m->build_id,
		    m->build_id_len, m->path, pgoff, &bid, &bl);
		return 0;
	}
	return -1;
}

/*
 * perf's filter string (AUXTRACE_INFO) in the kernel's syntax.  perf
 * matches a user-space filter by DSO name and file offset when TIP.PGD
 * hides the IP, so each range is written per mapped file:
 * "filter 0x0/0x27000@/path/blob0-400000-dump.bin"; a range outside any
 * mapping is written as plain addresses.
 */
static void
filter_string(struct ex *x, const struct mt_snap_ptcfg *c, char *buf,
    size_t n)
{
	size_t i, used = 0;
	int k;

	buf[0] = 0;
	for (i = 0; i < c->nfilters && i < MT_SNAP_MAX_FILTERS; i++) {
		const struct mt_snap_filter *f = &c->filters[i];
		const char *act = f->cfg == 1 ? "filter" : "stop";
		uint64_t a = f->a, start, len, pgoff, end;
		const char *path;

		if (f->b < f->a || (f->cfg != 1 && f->cfg != 2))
			continue;
		while (a <= f->b) {
			if (map_at(x, a, &start, &len, &pgoff, &path) < 0) {
				k = snprintf(buf + used, n - used,
				    "%s%s 0x%llx/0x%llx", used ? " " : "", act,
				    (unsigned long long)a,
				    (unsigned long long)(f->b - a + 1));
				end = f->b;
			} else {
				end = start + len - 1 < f->b ?
				    start + len - 1 : f->b;
				k = snprintf(buf + used, n - used,
				    "%s%s 0x%llx/0x%llx@%s", used ? " " : "",
				    act, (unsigned long long)(a - start +
				    pgoff), (unsigned long long)(end - a + 1),
				    path);
			}
			if (k < 0 || (size_t)k >= n - used) {
				buf[used] = 0;
				warn(x, "address filters too long for perf: "
				    "some were left out");
				return;
			}
			used += (size_t)k;
			if (end == UINT64_MAX)
				break;
			a = end + 1;
		}
	}
}

static int
write_perf(struct ex *x, int fd)
{
	const struct mt_snap *s = x->s;
	struct mt_pd_writer *w = NULL;
	struct mt_pd_attr a[2];
	uint64_t ids[2] = { PT_ID, DUMMY_ID };
	uint64_t priv[MT_PD_IPT_FILTER_STR_LEN + 4 + 2048 / 8];
	struct mt_pd_time_conv tc;
	char filt[2048], cpuid[64];
	uint32_t pmu = s->has_ptcfg && s->ptcfg.pmu_type >= 6 ?
	    s->ptcfg.pmu_type : PERF_EXPORT_DEFAULT_PMU;
	int per_cpu = s->has_ptcfg && s->ptcfg.per_cpu;
	int timed = !x->o->timeless && s->has_timeconv &&
	    s->timeconv.cap_user_time_zero;
	int snapshot_mode = 0;
	uint64_t nguest = 0;	/* PIP.NR packets left as they are */
	size_t i, j, np, flen;
	uint32_t *keys = NULL, nkeys = 0;
	uint64_t *offs = NULL;
	int rc;

	memset(a, 0, sizeof(a));
	a[0].type = pmu;
	a[0].config = (s->has_ptcfg && s->ptcfg.config ? s->ptcfg.config :
	    0x2001) | 1;
	a[0].sample_period = 1;
	a[0].sample_type = ST_OUT;
	a[0].flags = MT_PD_ATTR_SAMPLE_ID_ALL | MT_PD_ATTR_EXCLUDE_HV |
	    MT_PD_ATTR_DISABLED | MT_PD_ATTR_ENABLE_ON_EXEC;
	if (s->has_ptcfg && !s->ptcfg.kernel)
		a[0].flags |= MT_PD_ATTR_EXCLUDE_KERNEL;
	if (s->has_ptcfg && !s->ptcfg.user && s->ptcfg.kernel)
		a[0].flags |= MT_PD_ATTR_EXCLUDE_USER;
	a[0].ids = &ids[0];
	a[0].nids = 1;
	a[1] = a[0];
	a[1].type = 1;		/* PERF_TYPE_SOFTWARE */
	a[1].config = 9;	/* PERF_COUNT_SW_DUMMY */
	a[1].flags |= MT_PD_ATTR_MMAP | MT_PD_ATTR_COMM | MT_PD_ATTR_TASK |
	    MT_PD_ATTR_MMAP2 | MT_PD_ATTR_COMM_EXEC;
	/*
	 * perf follows context switches only for per-CPU buffers; with
	 * have_sched_switch set it takes a per-thread buffer's thread from
	 * the CPU's switches too, and finds none (CPU -1).
	 */
	if (per_cpu)
		a[1].flags |= MT_PD_ATTR_CONTEXT_SWITCH;
	a[1].ids = &ids[1];

	memset(&tc, 0, sizeof(tc));
	if (timed) {
		tc.time_shift = s->timeconv.time_shift;
		tc.time_mult = s->timeconv.time_mult;
		tc.time_zero = s->timeconv.time_zero;
		tc.time_cycles = s->timeconv.time_cycles;
		tc.time_mask = s->timeconv.time_mask;
		tc.cap_user_time_zero = 1;
		tc.cap_user_time_short = s->timeconv.cap_user_time_short;
	}

	/* One AUXTRACE idx per thread (per-thread) or CPU (per-CPU). */
	keys = calloc(s->naux + 1, sizeof(*keys));
	offs = calloc(s->naux + 1, sizeof(*offs));
	if (keys == NULL || offs == NULL) {
		rc = -MT_E_NOMEM;
		goto out;
	}
	for (i = 0; i < s->naux; i++) {
		uint32_t k = per_cpu ? s->aux[i].cpu : aux_tid(x, &s->aux[i]);

		for (j = 0; j < nkeys && keys[j] != k; j++)
			;
		if (j == nkeys)
			keys[nkeys++] = k;
		else
			snapshot_mode = 1;
		if (s->aux[i].index > 0)
			snapshot_mode = 1;
	}

	memset(priv, 0, sizeof(priv));
	priv[MT_PD_IPT_PMU_TYPE] = pmu;
	priv[MT_PD_IPT_TIME_SHIFT] = tc.time_shift;
	priv[MT_PD_IPT_TIME_MULT] = tc.time_mult;
	priv[MT_PD_IPT_TIME_ZERO] = tc.time_zero;
	priv[MT_PD_IPT_CAP_USER_TIME_ZERO] = tc.cap_user_time_zero;
	priv[MT_PD_IPT_TSC_BIT] = MT_PT_CFG_TSC;
	priv[MT_PD_IPT_NORETCOMP_BIT] = MT_PT_CFG_NORETCOMP;
	priv[MT_PD_IPT_HAVE_SCHED_SWITCH] =
	    (a[1].flags & MT_PD_ATTR_CONTEXT_SWITCH) ? 2 : 0;
	priv[MT_PD_IPT_SNAPSHOT_MODE] = (uint64_t)snapshot_mode;
	priv[MT_PD_IPT_PER_CPU_MMAPS] = (uint64_t)per_cpu;
	priv[MT_PD_IPT_MTC_BIT] = MT_PT_CFG_MTC;
	priv[MT_PD_IPT_MTC_FREQ_BITS] = 0xfull << 14;
	priv[MT_PD_IPT_TSC_CTC_N] = s->has_host ? s->host.cpuid_15[1] : 0;
	priv[MT_PD_IPT_TSC_CTC_D] = s->has_host ? s->host.cpuid_15[0] : 0;
	priv[MT_PD_IPT_CYC_BIT] = MT_PT_CFG_CYC;
	priv[MT_PD_IPT_MAX_NONTURBO_RATIO] = s->has_host ?
	    s->host.max_nonturbo_ratio : 0;
	filt[0] = 0;
	if (s->has_ptcfg)
		filter_string(x, &s->ptcfg, filt, sizeof(filt));
	flen = strlen(filt);
	priv[MT_PD_IPT_FILTER_STR_LEN] = flen;
	np = MT_PD_IPT_FILTER_STR_LEN + 1;
	if (flen > 0) {
		uint8_t sb[sizeof(filt) + 8];
		size_t words = (flen + 1 + 7) / 8;

		memset(sb, 0, sizeof(sb));
		memcpy(sb, filt, flen);
		for (j = 0; j < words; j++)
			priv[np++] = mt_le64(sb + 8 * j);
	}
	priv[np++] = 0;		/* cap_event_trace */

	rc = mt_pd_writer_new(&w, x->o->pipe);
	if (rc == 0)
		rc = mt_pd_writer_attr(w, &a[0]);
	if (rc == 0)
		rc = mt_pd_writer_attr(w, &a[1]);
	if (rc == 0)
		rc = mt_pd_writer_time_conv(w, &tc);
	if (rc == 0)
		rc = mt_pd_writer_auxtrace_info(w, MT_PD_AUXTRACE_INTEL_PT,
		    priv, np);
	if (x->nlist > 0)	/* qsort(NULL, 0) is undefined */
		qsort(x->list, x->nlist, sizeof(*x->list), cmp_rec);
	for (i = 0; rc == 0 && i < x->nlist; i++)
		rc = mt_pd_writer_record(w, x->recs.p + x->list[i].off,
		    x->list[i].len);
	for (i = 0; rc == 0 && i < s->naux; i++) {
		const struct mt_snap_aux *ax = &s->aux[i];
		struct mt_pd_auxtrace t;
		uint32_t k = per_cpu ? ax->cpu : aux_tid(x, ax);

		for (j = 0; keys[j] != k; j++)
			;
		memset(&t, 0, sizeof(t));
		t.size = ax->len;
		t.offset = offs[j];
		t.idx = (uint32_t)j;
		t.tid = per_cpu ? MT_PD_NONE : k;
		t.cpu = per_cpu ? ax->cpu : MT_PD_NONE;
		t.data = ax->data;
		t.reference = timed ? perf_max_tsc(ax->data, ax->len) : 0;
		offs[j] += (ax->len + 7) & ~7ull;
		if (x->o->pip_as_host) {
			uint8_t *c = perf_pip_as_host(ax->data, ax->len);

			if (c == NULL) {
				rc = -MT_E_NOMEM;
				break;
			}
			t.data = c;
			rc = mt_pd_writer_auxtrace(w, &t);
			free(c);
			continue;
		}
		nguest += perf_pip_nr_scan(ax->data, ax->len, NULL);
		rc = mt_pd_writer_auxtrace(w, &t);
	}
	if (rc == 0 && nguest > 0) {
		char m[256];

		/* perf looks guest code up in guest machines it has not. */
		snprintf(m, sizeof(m), "the trace was recorded in a guest "
		    "(%llu PIP packets with NR set): perf script decodes no "
		    "instruction of it as exported; add --guest-as-host",
		    (unsigned long long)nguest);
		warn(x, m);
	}
	if (rc == 0)
		rc = mt_pd_writer_finished_round(w);
	for (i = 0; rc == 0 && i < x->nbids; i++)
		rc = mt_pd_writer_build_id(w, &x->bids[i]);
	if (rc == 0 && s->has_host && s->host.vendor[0] != 0) {
		snprintf(cpuid, sizeof(cpuid), "%s,%u,%u,%u", s->host.vendor,
		    s->host.family, s->host.model, s->host.stepping);
		rc = mt_pd_writer_cpuid(w, cpuid);
	}
	if (rc == 0 && s->has_host && s->host.nr_cpus > 0)
		rc = mt_pd_writer_nr_cpus(w, s->host.nr_cpus,
		    s->host.nr_cpus);
	if (rc == 0) {
		rc = mt_pd_writer_finish(w, fd);
		if (rc == -MT_E_IO)
			snprintf(x->d->msg, sizeof(x->d->msg), "%s",
			    strerror(errno));
	}
out:
	mt_pd_writer_free(w);
	free(keys);
	free(offs);
	return rc;
}

int
perf_export(const struct perf_export_opts *o, const struct mt_snap *s,
    int fd, struct perf_diag *d)
{
	struct ex x;
	char note[PATH_MAX + 64];
	size_t i;
	int rc;

	memset(&x, 0, sizeof(x));
	memset(d, 0, sizeof(*d));
	x.o = o;
	x.s = s;
	x.d = d;
	mt_wbuf_init(&x.recs);
	if (s->naux == 0) {
		snprintf(d->msg, sizeof(d->msg),
		    "the snapshot has no PT buffer (AUX chunk) to export");
		rc = -MT_E_UNSUPP;
		goto out;
	}
	rc = write_code_files(&x);
	if (rc == 0 && x.kpath != NULL) {
		snprintf(note, sizeof(note), "kernel code in '%s': give perf "
		    "script --vmlinux %s", x.kpath, x.kpath);
		warn(&x, note);
	} else if (rc == 0 && s->has_ptcfg && s->ptcfg.kernel &&
	    s->ptcfg.backend == MT_SNAP_BK_INTEL_PT)
		warn(&x, "kernel code is not exported: the snapshot has no "
		    "kernel text, see docs/perf.md");
	if (rc == 0)
		rc = synth_records(&x);
	if (rc == 0)
		rc = sideband_records(&x);
	if (rc == 0 && x.recs.err)
		rc = x.recs.err;
	if (rc == 0)
		rc = write_perf(&x, fd);
	if (rc == -MT_E_NOMEM && d->msg[0] == 0)
		snprintf(d->msg, sizeof(d->msg), "out of memory");
out:
	for (i = 0; i < x.nblobs; i++)
		free(x.blobs[i].path);
	for (i = 0; x.elf_path && i < s->nelfs; i++)
		free(x.elf_path[i]);
	free(x.kpath);
	for (i = 0; i < x.nbids; i++)
		free(x.bids[i].filename);
	free(x.bids);
	free(x.blobs);
	free(x.elf_path);
	free(x.pids);
	free(x.list);
	mt_wbuf_release(&x.recs);
	return rc;
}
