/* SPDX-License-Identifier: MIT */
/*
 * Images for the decoders (image.h): one section cache, a memfd for the
 * code bytes the snapshot carries, one pt_image per process, and the
 * function ranges of every ELF file that was found.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <intel-pt.h>

#include "elffile.h"
#include "epochs.h"
#include "err.h"
#include "fde.h"
#include "ild.h"
#include "image.h"
#include "snap.h"
#include "imageset.h"

int
image_warn(struct image_set *is, const char *fmt, ...)
{
	va_list ap;
	char *m, **w;
	size_t i;

	if (is->nwarn >= 1000)
		return 0;
	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	if (m == NULL)
		return -MT_E_NOMEM;
	/* A file mapped twice (a MMAP chunk and a sideband MMAP2 record,
	 * or two segments) is one warning. */
	for (i = 0; i < is->nwarn; i++)
		if (strcmp(is->warn[i], m) == 0) {
			free(m);
			return 0;
		}
	w = grow(is->warn, is->nwarn, sizeof(*w));
	if (w == NULL) {
		free(m);
		return -MT_E_NOMEM;
	}
	is->warn = w;
	is->warn[is->nwarn++] = m;
	return 0;
}

size_t
image_set_nelfs(const struct image_set *is)
{
	return is->nelfs;
}

const char *
image_set_warning(const struct image_set *is, size_t i)
{
	return i < is->nwarn ? is->warn[i] : NULL;
}

struct pt_image_section_cache *
image_set_iscache(struct image_set *is)
{
	return is->isc;
}

size_t
image_set_nmods(const struct image_set *is)
{
	return is->nmods;
}

const struct image_mod *
image_set_mod(const struct image_set *is, size_t i)
{
	return &is->mods[i];
}

/* Append @len bytes to the memfd; *@off gets their file offset. */
static int
image_mem_put(struct image_set *is, const uint8_t *p, uint64_t len,
    uint64_t *off)
{
	uint64_t done = 0;

	if (is->memfd < 0) {
		is->memfd = memfd_create("mt-decode-code", MFD_CLOEXEC);
		if (is->memfd < 0)
			return -MT_E_IO;
		snprintf(is->mempath, sizeof(is->mempath), "/proc/self/fd/%d",
		    is->memfd);
	}
	*off = is->memlen;
	while (done < len) {
		ssize_t n = pwrite(is->memfd, p + done,
		    (size_t)(len - done > (1u << 30) ? 1u << 30 : len - done),
		    (off_t)(is->memlen + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -MT_E_IO;
		}
		done += (uint64_t)n;
	}
	is->memlen += len;
	return 0;
}


static struct image_mod *
image_new_mod(struct image_set *is)
{
	struct image_mod *m = grow(is->mods, is->nmods, sizeof(*m));

	if (m == NULL)
		return NULL;
	is->mods = m;
	m = &is->mods[is->nmods++];
	memset(m, 0, sizeof(*m));
	return m;
}

const char *
image_keep(struct image_set *is, const char *s)
{
	char **p = grow(is->paths, is->npaths, sizeof(*p));
	char *c;

	if (p == NULL)
		return NULL;
	is->paths = p;
	c = strdup(s);
	if (c == NULL)
		return NULL;
	is->paths[is->npaths++] = c;
	return c;
}

/*
 * The bytes of a BLOB or ELF chunk at [@off, @off + @size) of the code
 * file (the snapshot, or the memfd of a piped one): where the snapshot
 * already holds them (mt_snap_map_fd's mapping, or the copies a pipe was
 * read into), so they are neither mapped nor copied again.  NULL when
 * no single chunk holds them.
 */
static const uint8_t *
image_chunk_code(const struct image_set *is, uint64_t off, uint64_t size)
{
	const struct mt_snap *s = is->snap;
	size_t i;

	for (i = 0; i < s->nblobs; i++)
		if (s->blobs[i].data != NULL && off >= is->blob_off[i] &&
		    off - is->blob_off[i] <= s->blobs[i].len &&
		    size <= s->blobs[i].len - (off - is->blob_off[i]))
			return s->blobs[i].data + (off - is->blob_off[i]);
	for (i = 0; i < s->nelfs; i++)
		if (s->elfs[i].data != NULL && off >= is->elf_off[i] &&
		    off - is->elf_off[i] <= s->elfs[i].len &&
		    size <= s->elfs[i].len - (off - is->elf_off[i]))
			return s->elfs[i].data + (off - is->elf_off[i]);
	return NULL;
}

/*
 * The bytes of [@off, @off + @size) of @file in memory: the snapshot's
 * own bytes for its chunks (image_chunk_code), else the file mapped
 * once, read-only, when its first section is added (before any buffer
 * is decoded, so the set does not change under -j's workers); NULL when
 * it cannot be mapped or is shorter (then libipt's cache reads it).
 */
static const uint8_t *
image_code(struct image_set *is, const char *file, uint64_t off,
    uint64_t size)
{
	struct image_cmap *c = NULL;
	struct stat sb;
	size_t i;
	void *m;
	int fd;

	if (is->codepath != NULL && strcmp(file, is->codepath) == 0)
		return image_chunk_code(is, off, size);
	for (i = 0; i < is->ncmaps; i++)
		if (strcmp(is->cmaps[i].file, file) == 0) {
			c = &is->cmaps[i];
			break;
		}
	if (c == NULL) {
		c = grow(is->cmaps, is->ncmaps, sizeof(*c));
		if (c == NULL)
			return NULL;
		is->cmaps = c;
		c = &is->cmaps[is->ncmaps++];
		c->file = file;
		c->base = NULL;
		c->len = 0;
		fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return NULL;
		if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    sb.st_size > 0) {
			m = mmap(NULL, (size_t)sb.st_size, PROT_READ,
			    MAP_PRIVATE, fd, 0);
			if (m != MAP_FAILED) {
				c->base = m;
				c->len = (size_t)sb.st_size;
			}
		}
		close(fd);
	}
	if (c->base == NULL || off > c->len || size > c->len - off)
		return NULL;
	return c->base + off;
}

int
image_set_code(void *arg, int isid, const uint8_t **code, uint64_t *vaddr,
    uint64_t *size)
{
	const struct image_set *is = arg;
	const struct image_sec *s;

	if (isid <= 0 || (size_t)isid > is->nsecs)
		return -1;
	s = &is->secs[isid - 1];
	if (s->code == NULL)
		return -1;
	*code = s->code;
	*vaddr = s->vaddr;
	*size = s->size;
	return 0;
}

int
image_set_decode(struct image_set *is, int isid, uint64_t ip, int bits,
    struct ild_insn *in)
{
	const struct image_sec *s;
	const uint8_t *p;
	uint8_t buf[16];
	int n;

	if (isid <= 0 || (size_t)isid > is->nsecs)
		return -1;
	s = &is->secs[isid - 1];
	if (s->code != NULL) {
		if (ip < s->vaddr || ip - s->vaddr >= s->size)
			return -1;
		p = s->code + (ip - s->vaddr);
		n = (int)(s->size - (ip - s->vaddr) < 16 ?
		    s->size - (ip - s->vaddr) : 16);
	} else {
		p = buf;
		n = pt_iscache_read(is->isc, buf, sizeof(buf), isid, ip);
	}
	return n > 0 && ild_decode(p, (size_t)n, ip, bits, in) == 0 ? 0 : -1;
}

int
image_set_section_base(const struct image_set *is, int isid)
{
	const struct image_sec *s, *o;
	size_t i;

	if (isid <= 0 || (size_t)isid > is->nsecs)
		return -1;
	s = &is->secs[isid - 1];
	for (i = 0; i + 1 < (size_t)isid; i++) {
		o = &is->secs[i];
		if (o->off == s->off && o->size == s->size &&
		    strcmp(o->file, s->file) == 0)
			return (int)i + 1;
	}
	return isid;
}

/*
 * Add [@off, @off + @size) of @file at @vaddr to the cache; a section new
 * to it is recorded for image_view_new.  Returns the isid or a libipt
 * error.
 */
static int
image_add_file(struct image_set *is, const char *file, uint64_t off,
    uint64_t size, uint64_t vaddr)
{
	struct image_sec *sec;
	int isid = pt_iscache_add_file(is->isc, file, off, size, vaddr);

	if (isid <= 0 || (size_t)isid <= is->nsecs)
		return isid;
	if ((size_t)isid != is->nsecs + 1)
		return -pte_internal;	/* isids are handed out in order */
	sec = grow(is->secs, is->nsecs, sizeof(*sec));
	if (sec == NULL)
		return -pte_nomem;
	is->secs = sec;
	sec = &is->secs[is->nsecs];
	sec->file = image_keep(is, file);
	if (sec->file == NULL)
		return -pte_nomem;
	sec->off = off;
	sec->size = size;
	sec->vaddr = vaddr;
	sec->code = image_code(is, sec->file, off, size);
	is->nsecs++;
	return isid;
}

/*
 * Add section @isid, mapped at @time (0: always), to process @p's image
 * and to its log.
 */
static int
image_proc_add(struct image_set *is, struct image_proc *p, int isid,
    uint64_t time)
{
	int *n = grow(p->isids, p->nisids, sizeof(*n));
	uint64_t *t;

	if (n == NULL)
		return -MT_E_NOMEM;
	p->isids = n;
	t = grow(p->times, p->nisids, sizeof(*t));
	if (t == NULL)
		return -MT_E_NOMEM;
	p->times = t;
	p->times[p->nisids] = time;
	p->isids[p->nisids++] = isid;
	p->ep_built = 0;
	return pt_image_add_cached(p->img, is->isc, isid, NULL) < 0 ?
	    -MT_E_IPT : 0;
}


/*
 * Add section @isid, mapped at @time (0: always), to @pid's image, or to
 * every image if @pid is 0.
 */
static int
image_map(struct image_set *is, uint32_t pid, int isid, uint64_t time)
{
	struct image_proc *p;
	size_t i;
	int rc;

	if (pid == 0) {
		struct image_global *g = grow(is->glob, is->nglob, sizeof(*g));

		if (g == NULL)
			return -MT_E_NOMEM;
		is->glob = g;
		is->glob[is->nglob++].isid = isid;
		for (i = 0; i < is->nprocs; i++) {
			rc = image_proc_add(is, &is->procs[i], isid, 0);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	p = image_proc(is, pid);
	return p == NULL ? -MT_E_NOMEM : image_proc_add(is, p, isid, time);
}

/* The process @pid, made on first use with the global sections. */
struct image_proc *
image_proc(struct image_set *is, uint32_t pid)
{
	struct image_proc *p;
	size_t i;

	for (i = 0; i < is->nprocs; i++)
		if (is->procs[i].pid == pid)
			return &is->procs[i];
	p = grow(is->procs, is->nprocs, sizeof(*p));
	if (p == NULL)
		return NULL;
	is->procs = p;
	p = &is->procs[is->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->img = pt_image_alloc(NULL);
	if (p->img == NULL)
		return NULL;
	is->nprocs++;
	/* (A section libipt refuses here is refused in every view too.) */
	for (i = 0; i < is->nglob; i++)
		if (image_proc_add(is, p, is->glob[i].isid, 0) == -MT_E_NOMEM)
			return NULL;
	return p;
}

struct pt_image *
image_set_image(struct image_set *is, uint32_t pid)
{
	struct image_proc *p = image_proc(is, pid);

	return p != NULL ? p->img : NULL;
}

/* Build the epochs of @p's log with the sections of cache @isc. */
int
image_epochs(struct image_set *is, const struct image_proc *p,
    struct pt_image_section_cache *isc, struct epochs *ep)
{
	struct epoch_sec *es;
	size_t i;
	int rc;

	es = malloc((p->nisids + 1) * sizeof(*es));
	if (es == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < p->nisids; i++) {
		const struct image_sec *sec = &is->secs[p->isids[i] - 1];

		es[i].isid = p->isids[i];
		es[i].time = p->times[i];
		es[i].vaddr = sec->vaddr;
		es[i].size = sec->size;
	}
	rc = epochs_build(ep, es, p->nisids, isc);
	free(es);
	return rc;
}

struct pt_image *
image_set_image_at(struct image_set *is, uint32_t pid, uint64_t time,
    uint64_t *next)
{
	struct image_proc *p = image_proc(is, pid);
	struct pt_image *img;

	*next = UINT64_MAX;
	if (p == NULL)
		return NULL;
	if (!p->ep_built) {
		epochs_release(&p->ep);
		if (image_epochs(is, p, is->isc, &p->ep) < 0)
			return NULL;
		p->ep_built = 1;
	}
	if (epochs_at(&p->ep, time, next, &img) < 0)
		return NULL;
	return img != NULL ? img : p->img;
}

int
image_set_section_at(struct image_set *is, uint32_t pid, uint64_t ip,
    int *isid, uint64_t *lo, uint64_t *hi)
{
	struct image_proc *p = image_proc(is, pid);
	const struct image_sec *s, *o;
	size_t i, j;

	if (p == NULL)
		return -1;
	for (i = 0; i < p->nisids; i++) {
		s = &is->secs[p->isids[i] - 1];
		if (ip < s->vaddr || ip - s->vaddr >= s->size)
			continue;
		for (j = 0; j < p->nisids; j++) {
			/* the same section added again (a mapping seen
			 * again after an exec) replaces itself in libipt's
			 * image: one section */
			if (p->isids[j] == p->isids[i])
				continue;
			o = &is->secs[p->isids[j] - 1];
			if (o->vaddr < s->vaddr + s->size &&
			    s->vaddr < o->vaddr + o->size)
				return -1;
		}
		*isid = p->isids[i];
		*lo = s->vaddr;
		*hi = s->vaddr + s->size;
		return 0;
	}
	return -1;
}

/*
 * A [uprobes] mapping of @pid at [@start, @start + @len), mapped at @time:
 * its bytes cannot be read (/proc/PID/mem gives EIO for it: the kernel's
 * special mapping has no VM_READ), so it gets one-byte NOPs.  The
 * decoder then walks the probed instruction's slot up to the trap that
 * ends its single step (FUP + TIP.PGD, or TIP to the kernel) instead of
 * failing at the slot, and image_set_in_xol() lets it say what ran there.
 * A probed ret or indirect branch needs its own bytes in the slot to
 * consume its TIP: the decoder maps them over the NOPs while it runs
 * (xol.h).
 */
static int
image_add_xol(struct image_set *is, uint32_t pid, uint64_t start,
    uint64_t len, uint64_t time)
{
	uint8_t nop[256];
	struct image_xol *x;
	uint64_t off;
	int isid, rc;

	if (is->nopfd < 0) {
		is->nopfd = memfd_create("mt-decode-xol", MFD_CLOEXEC);
		if (is->nopfd < 0)
			return -MT_E_IO;
		snprintf(is->noppath, sizeof(is->noppath), "/proc/self/fd/%d",
		    is->nopfd);
		memset(nop, 0x90, sizeof(nop));
		for (off = 0; off < IMAGE_XOL_MAX; off += sizeof(nop))
			if (pwrite(is->nopfd, nop, sizeof(nop), (off_t)off) !=
			    (ssize_t)sizeof(nop))
				return -MT_E_IO;
	}
	x = grow(is->xol, is->nxol, sizeof(*x));
	if (x == NULL)
		return -MT_E_NOMEM;
	is->xol = x;
	x = &is->xol[is->nxol++];
	x->pid = pid;
	x->lo = start;
	x->hi = start + (len < IMAGE_XOL_MAX ? len : IMAGE_XOL_MAX);
	isid = image_add_file(is, is->noppath, 0, x->hi - x->lo, start);
	if (isid < 0)
		return -MT_E_IPT;
	rc = image_map(is, pid, isid, time);
	return rc < 0 ? rc : 0;
}

int
image_set_insn_at(struct image_set *is, uint32_t pid, uint64_t ip,
    uint8_t raw[16], struct ild_insn *in)
{
	uint64_t lo, hi;
	int isid, n;

	if (image_set_section_at(is, pid, ip, &isid, &lo, &hi) < 0)
		return -1;
	n = pt_iscache_read(is->isc, raw, hi - ip < 16 ? hi - ip : 16, isid,
	    ip);
	return n > 0 && ild_decode(raw, (size_t)n, ip, 64, in) == 0 ? 0 : -1;
}

/* Note the instruction of @pid at @ip as probed (once). */
static int
note_probe(struct image_set *is, uint32_t pid, uint64_t ip)
{
	struct image_probe *p;
	uint8_t raw[16];
	size_t j;

	for (j = 0; j < is->nprobes; j++)
		if (is->probes[j].pid == pid && is->probes[j].ip == ip)
			return 0;
	if (ip == 0)
		return 0;
	if ((p = grow(is->probes, is->nprobes, sizeof(*p))) == NULL)
		return -MT_E_NOMEM;
	is->probes = p;
	p = &is->probes[is->nprobes++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ip = ip;
	p->known = image_set_insn_at(is, p->pid, p->ip, raw, &p->in) == 0;
	return 0;
}

int
image_set_read_probes(struct image_set *is)
{
	const struct mt_snap *s = is->snap;
	size_t i;
	int rc;

	for (i = 0; i < s->ntriggers; i++)
		if ((rc = note_probe(is, s->triggers[i].pid,
		    s->triggers[i].ip)) < 0)
			return rc;
	/* Every uprobe site mt-capture listed (snapshot 1.2): also
	 * another tool's, and triggers whose hits were dropped. */
	for (i = 0; i < s->nprobes; i++)
		if ((rc = note_probe(is, s->probes[i].pid,
		    s->probes[i].addr)) < 0)
			return rc;
	return 0;
}

int
image_set_probe(const struct image_set *is, uint32_t pid, uint64_t ip,
    int *cls, uint64_t *len, uint64_t *target)
{
	size_t i;

	for (i = 0; i < is->nprobes; i++)
		if (is->probes[i].pid == pid && is->probes[i].ip == ip &&
		    is->probes[i].known) {
			*cls = is->probes[i].in.cls;
			*len = is->probes[i].in.len;
			*target = is->probes[i].in.rel ?
			    is->probes[i].in.target : 0;
			return 0;
		}
	return -1;
}

int
image_set_in_xol(const struct image_set *is, uint32_t pid, uint64_t ip)
{
	uint64_t lo, hi;

	return image_set_xol_page(is, pid, ip, &lo, &hi) == 0;
}

int
image_set_xol_page(const struct image_set *is, uint32_t pid, uint64_t ip,
    uint64_t *lo, uint64_t *hi)
{
	size_t i;

	for (i = 0; i < is->nxol; i++)
		if ((is->xol[i].pid == pid || is->xol[i].pid == 0) &&
		    is->xol[i].lo <= ip && ip < is->xol[i].hi) {
			*lo = is->xol[i].lo;
			*hi = is->xol[i].hi;
			return 0;
		}
	return -1;
}

const char *
image_set_xol_file(const struct image_set *is)
{
	return is->noppath;
}

/*
 * 1 if anonymous memory of @pid at [@start, @start + @len) holds code a
 * BLOB of the snapshot has (JIT code, recorded by the page it ran from):
 * the BLOB maps it, and no file is to be looked for.
 */
static int
image_anon_in_blobs(const struct image_set *is, uint32_t pid,
    uint64_t start, uint64_t len)
{
	const struct mt_snap *s = is->snap;
	size_t i;

	for (i = 0; i < s->nblobs; i++) {
		const struct mt_snap_blob *b = &s->blobs[i];

		if (b->pid == pid && b->len > 0 && b->addr < start + len &&
		    start < b->addr + b->len)
			return 1;
	}
	return 0;
}

int
image_set_add_mapping(struct image_set *is, uint32_t pid, uint64_t start,
    uint64_t len, uint64_t pgoff, const uint8_t *buildid, size_t bidlen,
    const char *path, uint64_t time)
{
	char buf[4096];
	const char *file;
	struct mt_elf *e;
	struct image_mod *m;
	uint64_t base;
	int rc, isid;

	m = image_new_mod(is);
	if (m == NULL)
		return -MT_E_NOMEM;
	m->pid = pid;
	m->start = start;
	m->end = start + len;
	m->pgoff = pgoff;
	m->time = time;
	hex(m->buildid, buildid, bidlen);
	m->path = image_keep(is, path ? path : "");
	if (m->path == NULL)
		return -MT_E_NOMEM;
	if (bidlen == 0 && path != NULL && path[0] == '[')
		image_blob_buildid(is, m);
	if (path != NULL && strcmp(path, "[uprobes]") == 0 && len > 0)
		return image_add_xol(is, pid, start, len, time);
	if (path == NULL || path[0] == '[' || len == 0)
		return 0;	/* special mappings come as BLOBs */
	/* Anonymous: "" in /proc/PID/maps, "//anon" in MMAP2 records. */
	if (path[0] == '\0' || strcmp(path, "//anon") == 0) {
		if (image_anon_in_blobs(is, pid, start, len))
			return 0;
		return image_warn(is, "no bytes for anonymous memory at "
		    "0x%llx-0x%llx of process %u: its code is not decoded",
		    (unsigned long long)start,
		    (unsigned long long)(start + len), pid);
	}
	rc = image_find(is, buildid, bidlen, path, &e, &file, &base, buf,
	    sizeof(buf));
	if (rc <= 0)
		return rc;
	isid = image_add_file(is, file, base + pgoff, len, start);
	if (isid < 0 || image_map(is, pid, isid, time) < 0)
		return image_warn(is, "cannot map '%s' at 0x%llx", path,
		    (unsigned long long)start);
	m->loaded = 1;
	return image_add_fns_once(is, e, path, start, start + len, pgoff);
}

/*
 * A vDSO blob is a whole ELF image: its build-id names the module (so
 * mt-symbolize finds the image in the build-id cache, where mt-decode
 * stores it) and its symbols give function ranges, as a file's do.
 */
static int
image_blob_elf(struct image_set *is, const struct mt_snap_blob *b,
    struct image_mod *m)
{
	struct mt_elf *e;

	/* The snapshot outlives the set: read in place, no copy. */
	if (b->kind != MT_SNAP_BLOB_VDSO || b->data == NULL ||
	    mt_elf_open_ref(&e, b->data, (size_t)b->len) < 0)
		return 0;
	mt_elf_build_id_hex(e, m->buildid);
	return image_keep_elf(is, e, image_add_fns(is, e, "[vdso]", b->addr,
	    b->addr + b->len, 0));
}

static int
image_add_blobs(struct image_set *is)
{
	const struct mt_snap *s = is->snap;
	size_t i;
	int rc;

	for (i = 0; i < s->nblobs; i++) {
		const struct mt_snap_blob *b = &s->blobs[i];
		struct image_mod *m;
		int isid;

		if (b->len == 0)
			continue;
		isid = image_add_file(is, is->codepath, is->blob_off[i],
		    b->len, b->addr);
		if (isid < 0)
			return -MT_E_IPT;
		/* JIT code written over other code: from its time on */
		rc = image_map(is, b->pid, isid, b->time);
		if (rc < 0)
			return rc;
		/* Adjacent pieces of one named blob make one module. */
		if (is->nmods > 0) {
			m = &is->mods[is->nmods - 1];
			if (m->pid == b->pid && m->end == b->addr &&
			    m->time == b->time && m->loaded &&
			    m->path != NULL &&
			    strcmp(m->path, b->name ? b->name : "") == 0) {
				m->end = b->addr + b->len;
				continue;
			}
		}
		m = image_new_mod(is);
		if (m == NULL)
			return -MT_E_NOMEM;
		m->pid = b->pid;
		m->start = b->addr;
		m->end = b->addr + b->len;
		m->path = b->name ? b->name : "";
		m->loaded = 1;
		m->time = b->time;
		rc = image_blob_elf(is, b, m);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The offset of the @len bytes at @p in the snapshot's mapping. */
static int
image_map_off(const struct mt_snap *s, const uint8_t *p, uint64_t len,
    uint64_t *off)
{
	uintptr_t a = (uintptr_t)p, m = (uintptr_t)s->map;

	*off = 0;
	if (len == 0)
		return 0;
	if (p == NULL || a < m || a - m > s->maplen ||
	    len > s->maplen - (a - m))
		return -1;
	*off = a - m;
	return 0;
}

/*
 * The file offset of every BLOB's and ELF chunk's bytes in the snapshot
 * file, from where mt_snap_map_fd() left them in its mapping of that
 * file: libipt reads them from the file and image_code from that
 * mapping, so nothing is copied or mapped again.  Returns 0, or -1 when
 * the snapshot was read, not mapped (then the caller copies the bytes
 * into a memfd).
 */
static int
image_locate(struct image_set *is)
{
	const struct mt_snap *s = is->snap;
	size_t i;

	if (s->map == NULL || is->o.snap_path == NULL)
		return -1;
	for (i = 0; i < s->nblobs; i++)
		if (image_map_off(s, s->blobs[i].data, s->blobs[i].len,
		    &is->blob_off[i]) < 0)
			return -1;
	for (i = 0; i < s->nelfs; i++)
		if (image_map_off(s, s->elfs[i].data, s->elfs[i].len,
		    &is->elf_off[i]) < 0)
			return -1;
	return 0;
}

int
image_set_new(struct image_set **out, const struct mt_snap *s,
    const struct image_opts *o)
{
	struct image_set *is = calloc(1, sizeof(*is));
	size_t i;
	int rc;

	*out = NULL;
	if (is == NULL)
		return -MT_E_NOMEM;
	is->snap = s;
	is->o = *o;
	is->memfd = -1;
	is->nopfd = -1;
	is->isc = pt_iscache_alloc(NULL);
	if (is->isc == NULL) {
		free(is);
		return -MT_E_NOMEM;
	}
	is->blob_off = calloc(s->nblobs + 1, sizeof(uint64_t));
	is->elf_off = calloc(s->nelfs + 1, sizeof(uint64_t));
	is->bundled = calloc(s->nelfs + 1, sizeof(*is->bundled));
	rc = is->blob_off && is->elf_off && is->bundled ? 0 : -MT_E_NOMEM;
	if (rc >= 0 && image_locate(is) == 0) {
		is->codepath = o->snap_path;
	} else {
		/*
		 * libipt refuses a section whose file changed size after
		 * it was added (-pte_bad_image), so every bundled byte goes
		 * into the memfd before the first section is added.
		 */
		for (i = 0; rc >= 0 && i < s->nblobs; i++)
			rc = image_mem_put(is, s->blobs[i].data,
			    s->blobs[i].len, &is->blob_off[i]);
		for (i = 0; rc >= 0 && i < s->nelfs; i++)
			rc = image_mem_put(is, s->elfs[i].data,
			    s->elfs[i].len, &is->elf_off[i]);
		is->codepath = is->mempath;
	}
	if (rc >= 0)
		rc = image_add_blobs(is);
	for (i = 0; rc >= 0 && i < s->nmmaps; i++) {
		const struct mt_snap_mmap *m = &s->mmaps[i];

		if (!(m->prot & PROT_EXEC) || m->end <= m->start)
			continue;
		rc = image_set_add_mapping(is, m->pid, m->start,
		    m->end - m->start, m->pgoff, m->build_id, m->build_id_len,
		    m->path, 0);
	}
	if (rc < 0) {
		image_set_free(is);
		return rc;
	}
	*out = is;
	return 0;
}

void
image_set_free(struct image_set *is)
{
	size_t i;

	if (is == NULL)
		return;
	for (i = 0; i < is->nprocs; i++) {
		pt_image_free(is->procs[i].img);
		free(is->procs[i].isids);
		free(is->procs[i].times);
		epochs_release(&is->procs[i].ep);
	}
	pt_iscache_free(is->isc);
	for (i = 0; i < is->nelfs; i++)
		mt_elf_free(is->elfs[i]);
	for (i = 0; i < is->npaths; i++)
		free(is->paths[i]);
	for (i = 0; i < is->nwarn; i++)
		free(is->warn[i]);
	if (is->memfd >= 0)
		close(is->memfd);
	if (is->nopfd >= 0)
		close(is->nopfd);
	for (i = 0; i < is->ncmaps; i++)
		if (is->cmaps[i].base != NULL)
			munmap(is->cmaps[i].base, is->cmaps[i].len);
	free(is->cmaps);
	free(is->xol);
	free(is->probes);
	free(is->procs);
	free(is->glob);
	free(is->secs);
	free(is->mods);
	free(is->paths);
	free(is->fns);
	mt_fde_tab_release(&is->fdes);
	free(is->fnmaps);
	for (i = 0; i < is->nefdes; i++)
		mt_fde_tab_release(&is->efdes[i].t);
	free(is->efdes);
	free(is->warn);
	free(is->elfs);
	free(is->bundled);
	free(is->files);
	free(is->ranges);
	free(is->blob_off);
	free(is->elf_off);
	free(is);
}

