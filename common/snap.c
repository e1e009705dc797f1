/* SPDX-License-Identifier: MIT */
/*
 * Reader and writer of the snapshot file (docs/formats/snapshot.md).
 * The reader takes the whole stream into memory chunk by chunk, checking
 * every length against what remains before it allocates, and every
 * checksum before it parses a payload.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "buf.h"
#include "err.h"
#include "snap.h"

#define PIPE_CHUNK_LIMIT (16ull << 30)	/* largest payload from a pipe */

static const char *const type_names[MT_SNAP_NTYPES] = {
	"END", "META", "HOST", "PTCFG", "TIMECONV", "PROCESS", "THREAD",
	"MMAP", "AUX", "SIDEBAND", "TRIGGER", "BLOB", "ELF", "TEXT",
	"PROBE",
};

const char *
mt_snap_type_name(uint32_t type)
{
	return type < MT_SNAP_NTYPES ? type_names[type] : "unknown";
}

void
mt_snap_init(struct mt_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->major = MT_SNAP_MAJOR;
	s->minor = MT_SNAP_MINOR;
}

/* Does @p point into the mapping of mt_snap_map_fd()? */
static int
in_map(const struct mt_snap *s, const void *p)
{
	const uint8_t *q = p;

	return s->map != NULL && q >= s->map && q < s->map + s->maplen;
}

void
mt_snap_drop(const struct mt_snap *s, const void *p, uint64_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a, b;

	if (len == 0 || !in_map(s, p) ||
	    len > (uint64_t)(s->map + s->maplen - (const uint8_t *)p))
		return;
	a = (uintptr_t)p & ~(pg - 1);
	b = (uintptr_t)p + (uintptr_t)len;
	(void)madvise((void *)a, b - a, MADV_DONTNEED);
}

void
mt_snap_release(struct mt_snap *s)
{
	size_t i;

	for (i = 0; i < s->nmeta; i++) {
		free(s->meta[i].key);
		free(s->meta[i].value);
	}
	free(s->meta);
	free(s->host.kernel);
	free(s->host.hostname);
	for (i = 0; i < s->nprocs; i++) {
		free(s->procs[i].comm);
		free(s->procs[i].exe);
		free(s->procs[i].cmdline);
	}
	free(s->procs);
	for (i = 0; i < s->nthreads; i++)
		free(s->threads[i].comm);
	free(s->threads);
	for (i = 0; i < s->nmmaps; i++)
		free(s->mmaps[i].path);
	free(s->mmaps);
	for (i = 0; i < s->naux; i++)
		if (!in_map(s, s->aux[i].data))
			free(s->aux[i].data);
	free(s->aux);
	for (i = 0; i < s->nsideband; i++)
		free(s->sideband[i].data);
	free(s->sideband);
	for (i = 0; i < s->ntriggers; i++)
		free(s->triggers[i].what);
	free(s->triggers);
	for (i = 0; i < s->nprobes; i++) {
		free(s->probes[i].path);
		free(s->probes[i].what);
	}
	free(s->probes);
	for (i = 0; i < s->nblobs; i++) {
		free(s->blobs[i].name);
		if (!in_map(s, s->blobs[i].data))
			free(s->blobs[i].data);
	}
	free(s->blobs);
	for (i = 0; i < s->nelfs; i++) {
		free(s->elfs[i].path);
		if (!in_map(s, s->elfs[i].data))
			free(s->elfs[i].data);
	}
	free(s->elfs);
	for (i = 0; i < s->ntexts; i++)
		free(s->texts[i].data);
	free(s->texts);
	free(s->chunks);
	if (s->map != NULL)
		munmap(s->map, s->maplen);
	mt_snap_init(s);
}

/* Grow array *@arr of *@n elements of @size by one; return the new slot. */
static void *
grow(void *arrp, size_t *n, size_t size)
{
	void **arr = arrp;
	void *p;

	if (*n >= SIZE_MAX / size - 1)
		return NULL;
	p = realloc(*arr, (*n + 1) * size);
	if (p == NULL)
		return NULL;
	*arr = p;
	memset((char *)p + *n * size, 0, size);
	return (char *)p + (*n)++ * size;
}

/* Copy @len bytes (plus a NUL) or return NULL.  NULL @p gives NULL. */
static void *
dupmem(const void *p, uint64_t len)
{
	char *d;

	if (p == NULL && len == 0)
		return NULL;
	if (len >= SIZE_MAX)
		return NULL;
	d = malloc((size_t)len + 1);
	if (d == NULL)
		return NULL;
	if (len)
		memcpy(d, p, (size_t)len);
	d[len] = '\0';
	return d;
}

static char *
dupstr(const char *p)
{
	return p ? dupmem(p, strlen(p)) : NULL;
}

int
mt_snap_add_meta(struct mt_snap *s, const char *key, const char *value)
{
	struct mt_snap_meta *m = grow(&s->meta, &s->nmeta, sizeof(*m));

	if (m == NULL)
		return -MT_E_NOMEM;
	m->key = dupstr(key);
	m->value = dupstr(value ? value : "");
	if (m->key == NULL || m->value == NULL)
		return -MT_E_NOMEM;
	return 0;
}

int
mt_snap_set_host(struct mt_snap *s, const struct mt_snap_host *h)
{
	free(s->host.kernel);
	free(s->host.hostname);
	s->host = *h;
	s->host.vendor[12] = '\0';
	s->host.kernel = dupstr(h->kernel);
	s->host.hostname = dupstr(h->hostname);
	s->has_host = 1;
	if ((h->kernel && !s->host.kernel) ||
	    (h->hostname && !s->host.hostname))
		return -MT_E_NOMEM;
	return 0;
}

int
mt_snap_add_process(struct mt_snap *s, const struct mt_snap_process *p)
{
	struct mt_snap_process *d = grow(&s->procs, &s->nprocs, sizeof(*d));

	if (d == NULL)
		return -MT_E_NOMEM;
	*d = *p;
	d->comm = dupstr(p->comm);
	d->exe = dupstr(p->exe);
	d->cmdline = dupmem(p->cmdline, p->cmdline_len);
	if ((p->comm && !d->comm) || (p->exe && !d->exe) ||
	    (p->cmdline_len && !d->cmdline))
		return -MT_E_NOMEM;
	return 0;
}

int
mt_snap_add_thread(struct mt_snap *s, const struct mt_snap_thread *t)
{
	struct mt_snap_thread *d = grow(&s->threads, &s->nthreads,
	    sizeof(*d));

	if (d == NULL)
		return -MT_E_NOMEM;
	*d = *t;
	d->comm = dupstr(t->comm);
	return t->comm && !d->comm ? -MT_E_NOMEM : 0;
}

int
mt_snap_add_mmap(struct mt_snap *s, const struct mt_snap_mmap *m)
{
	struct mt_snap_mmap *d = grow(&s->mmaps, &s->nmmaps, sizeof(*d));

	if (d == NULL)
		return -MT_E_NOMEM;
	*d = *m;
	if (d->build_id_len > MT_SNAP_BUILD_ID_MAX)
		d->build_id_len = MT_SNAP_BUILD_ID_MAX;
	d->path = dupstr(m->path);
	return m->path && !d->path ? -MT_E_NOMEM : 0;
}

int
mt_snap_add_aux(struct mt_snap *s, const struct mt_snap_aux *a)
{
	struct mt_snap_aux *d = grow(&s->aux, &s->naux, sizeof(*d));

	if (d == NULL)
		return -MT_E_NOMEM;
	*d = *a;
	d->data = dupmem(a->data, a->len);
	return a->len && !d->data ? -MT_E_NOMEM : 0;
}

int
mt_snap_add_sideband(struct mt_snap *s, const struct mt_snap_sideband *b)
{
	struct mt_snap_sideband *d = grow(&s->sideband, &s->nsideband,
	    sizeof(*d));

	if (d == NULL)
		return -MT_E_NOMEM;
	*d = *b;
	d->data = dupmem(b->data, b->len);
	return b->len && !d->data ? -MT_E_NOMEM : 0;
}

int
mt_snap_add_trigger(struct mt_snap *s, const struct mt_snap_trigger *t)
{
	struct mt_snap_trigger *d = grow(&s->triggers, &s->ntriggers,
	    sizeof(*d));

	if (d == NULL)
		return -MT_E_NOMEM;
	*d = *t;
	d->what = dupstr(t->what);
	return t->what && !d->what ? -MT_E_NOMEM : 0;
}

int
mt_snap_add_probe(struct mt_snap *s, const struct mt_snap_probe *p)
{
	struct mt_snap_probe *d = grow(&s->probes, &s->nprobes, sizeof(*d));

	if (d == NULL)
		return -MT_E_NOMEM;
	*d = *p;
	d->path = dupstr(p->path);
	d->what = dupstr(p->what);
	return (p->path && !d->path) || (p->what && !d->what) ?
	    -MT_E_NOMEM : 0;
}

int
mt_snap_add_blob(struct mt_snap *s, const struct mt_snap_blob *b)
{
	struct mt_snap_blob *d = grow(&s->blobs, &s->nblobs, sizeof(*d));

	if (d == NULL)
		return -MT_E_NOMEM;
	*d = *b;
	d->name = dupstr(b->name);
	d->data = dupmem(b->data, b->len);
	if ((b->name && !d->name) || (b->len && !d->data))
		return -MT_E_NOMEM;
	return 0;
}

int
mt_snap_add_elf(struct mt_snap *s, const struct mt_snap_elf *e)
{
	struct mt_snap_elf *d = grow(&s->elfs, &s->nelfs, sizeof(*d));

	if (d == NULL)
		return -MT_E_NOMEM;
	*d = *e;
	if (d->build_id_len > MT_SNAP_BUILD_ID_MAX)
		d->build_id_len = MT_SNAP_BUILD_ID_MAX;
	d->path = dupstr(e->path);
	d->data = dupmem(e->data, e->len);
	if ((e->path && !d->path) || (e->len && !d->data))
		return -MT_E_NOMEM;
	return 0;
}

int
mt_snap_add_text(struct mt_snap *s, const struct mt_snap_text *t)
{
	struct mt_snap_text *d = grow(&s->texts, &s->ntexts, sizeof(*d));

	if (d == NULL)
		return -MT_E_NOMEM;
	*d = *t;
	d->data = dupmem(t->data, t->len);
	if (d->data == NULL && (d->data = dupmem("", 0)) == NULL)
		return -MT_E_NOMEM;
	return 0;
}

uint64_t
mt_snap_tsc_to_ns(const struct mt_snap_timeconv *tc, uint64_t tsc)
{
	uint64_t quot, rem;

	if (tc->time_shift >= 64)
		return tc->time_zero;
	quot = tsc >> tc->time_shift;
	rem = tsc & ((1ull << tc->time_shift) - 1);
	return tc->time_zero + quot * tc->time_mult +
	    ((rem * tc->time_mult) >> tc->time_shift);
}

const char *
mt_snap_meta_get(const struct mt_snap *s, const char *key)
{
	size_t i;

	for (i = s->nmeta; i-- > 0;)
		if (strcmp(s->meta[i].key, key) == 0)
			return s->meta[i].value;
	return NULL;
}

/*
 * Writing.
 */

struct writer {
	int fd;
	uint64_t nchunks;
	struct mt_wbuf pay;	/* payload of the chunk being built */
};

static int
write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n > 0) {
		ssize_t w = write(fd, b, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -MT_E_IO;
		}
		if (w == 0) {
			errno = EIO;
			return -MT_E_IO;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static void
put_str(struct mt_wbuf *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	mt_wbuf_u32le(w, (uint32_t)n);
	mt_wbuf_put(w, s, n);
}

static void
put_bytes(struct mt_wbuf *w, const void *p, uint64_t n)
{
	mt_wbuf_u64le(w, n);
	mt_wbuf_put(w, p, (size_t)n);
}

static void
put_buildid(struct mt_wbuf *w, const uint8_t *id, uint8_t len)
{
	if (len > MT_SNAP_BUILD_ID_MAX)
		len = MT_SNAP_BUILD_ID_MAX;
	mt_wbuf_u8(w, len);
	mt_wbuf_put(w, id, len);
}

/* Write the chunk whose payload is in wr->pay, then empty it. */
static int
flush_chunk(struct writer *wr, uint32_t type)
{
	uint8_t hdr[16], sum[8];
	XXH3_state_t *st;
	int rc;

	if (wr->pay.err)
		return wr->pay.err;
	mt_put_le32(hdr, type);
	mt_put_le32(hdr + 4, 0);
	mt_put_le64(hdr + 8, wr->pay.len);
	st = XXH3_createState();
	if (st == NULL)
		return -MT_E_NOMEM;
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, hdr, sizeof(hdr));
	XXH3_64bits_update(st, wr->pay.p, wr->pay.len);
	mt_put_le64(sum, XXH3_64bits_digest(st));
	XXH3_freeState(st);
	rc = write_all(wr->fd, hdr, sizeof(hdr));
	if (rc == 0)
		rc = write_all(wr->fd, wr->pay.p, wr->pay.len);
	if (rc == 0)
		rc = write_all(wr->fd, sum, sizeof(sum));
	wr->pay.len = 0;
	wr->nchunks++;
	return rc;
}

static int
write_header(int fd)
{
	uint8_t h[MT_SNAP_HDR_SIZE];

	memcpy(h, MT_SNAP_MAGIC, 8);
	mt_put_le16(h + 8, MT_SNAP_MAJOR);
	mt_put_le16(h + 10, MT_SNAP_MINOR);
	mt_put_le32(h + 12, MT_SNAP_HDR_SIZE);
	mt_put_le64(h + 16, 0);
	mt_put_le64(h + 24, XXH3_64bits(h, 24));
	return write_all(fd, h, sizeof(h));
}

static void
enc_host(struct mt_wbuf *w, const struct mt_snap_host *h)
{
	uint8_t vendor[12] = { 0 };
	int i, j;

	memcpy(vendor, h->vendor, strnlen(h->vendor, 12));
	mt_wbuf_put(w, vendor, 12);
	mt_wbuf_u16le(w, h->family);
	mt_wbuf_u8(w, h->model);
	mt_wbuf_u8(w, h->stepping);
	for (i = 0; i < 2; i++)
		for (j = 0; j < 4; j++)
			mt_wbuf_u32le(w, h->cpuid_14[i][j]);
	for (i = 0; i < 3; i++)
		mt_wbuf_u32le(w, h->cpuid_15[i]);
	mt_wbuf_u32le(w, h->max_nonturbo_ratio);
	mt_wbuf_u32le(w, h->nr_cpus);
	put_str(w, h->kernel);
	put_str(w, h->hostname);
}

static void
enc_ptcfg(struct mt_wbuf *w, const struct mt_snap_ptcfg *c)
{
	unsigned i, n = c->nfilters;

	if (n > MT_SNAP_MAX_FILTERS)
		n = MT_SNAP_MAX_FILTERS;
	mt_wbuf_u32le(w, c->backend);
	mt_wbuf_u32le(w, c->pmu_type);
	mt_wbuf_u64le(w, c->config);
	mt_wbuf_u8(w, c->user);
	mt_wbuf_u8(w, c->kernel);
	mt_wbuf_u8(w, c->per_cpu);
	mt_wbuf_u8(w, (uint8_t)n);
	for (i = 0; i < n; i++) {
		mt_wbuf_u64le(w, c->filters[i].a);
		mt_wbuf_u64le(w, c->filters[i].b);
		mt_wbuf_u32le(w, c->filters[i].cfg);
	}
}

static void
enc_timeconv(struct mt_wbuf *w, const struct mt_snap_timeconv *t)
{
	mt_wbuf_u64le(w, t->time_zero);
	mt_wbuf_u32le(w, t->time_mult);
	mt_wbuf_u16le(w, t->time_shift);
	mt_wbuf_u8(w, t->cap_user_time_zero);
	mt_wbuf_u8(w, t->cap_user_time_short);
	mt_wbuf_u64le(w, t->time_cycles);
	mt_wbuf_u64le(w, t->time_mask);
}

int
mt_snap_write_fd(const struct mt_snap *s, int fd)
{
	struct writer wr = { .fd = fd };
	struct mt_wbuf *w = &wr.pay;
	size_t i;
	int rc;

	mt_wbuf_init(w);
	rc = write_header(fd);
	if (rc < 0)
		goto out;
#define CHUNK(type) do { rc = flush_chunk(&wr, (type)); \
	if (rc < 0) goto out; } while (0)
	for (i = 0; i < s->nmeta; i++) {
		put_str(w, s->meta[i].key);
		put_str(w, s->meta[i].value);
		CHUNK(MT_SNAP_META);
	}
	if (s->has_host) {
		enc_host(w, &s->host);
		CHUNK(MT_SNAP_HOST);
	}
	if (s->has_ptcfg) {
		enc_ptcfg(w, &s->ptcfg);
		CHUNK(MT_SNAP_PTCFG);
	}
	if (s->has_timeconv) {
		enc_timeconv(w, &s->timeconv);
		CHUNK(MT_SNAP_TIMECONV);
	}
	for (i = 0; i < s->nprocs; i++) {
		const struct mt_snap_process *p = &s->procs[i];

		mt_wbuf_u32le(w, p->pid);
		mt_wbuf_u32le(w, p->ppid);
		put_str(w, p->comm);
		put_str(w, p->exe);
		mt_wbuf_u32le(w, p->cmdline_len);
		mt_wbuf_put(w, p->cmdline, p->cmdline_len);
		CHUNK(MT_SNAP_PROCESS);
	}
	for (i = 0; i < s->nthreads; i++) {
		mt_wbuf_u32le(w, s->threads[i].pid);
		mt_wbuf_u32le(w, s->threads[i].tid);
		put_str(w, s->threads[i].comm);
		CHUNK(MT_SNAP_THREAD);
	}
	for (i = 0; i < s->nmmaps; i++) {
		const struct mt_snap_mmap *m = &s->mmaps[i];

		mt_wbuf_u32le(w, m->pid);
		mt_wbuf_u64le(w, m->start);
		mt_wbuf_u64le(w, m->end);
		mt_wbuf_u64le(w, m->pgoff);
		mt_wbuf_u32le(w, m->prot);
		mt_wbuf_u32le(w, m->flags);
		put_buildid(w, m->build_id, m->build_id_len);
		put_str(w, m->path);
		CHUNK(MT_SNAP_MMAP);
	}
	for (i = 0; i < s->ntexts; i++) {
		mt_wbuf_u32le(w, s->texts[i].kind);
		mt_wbuf_u32le(w, s->texts[i].pid);
		put_bytes(w, s->texts[i].data, s->texts[i].len);
		CHUNK(MT_SNAP_TEXT);
	}
	for (i = 0; i < s->nblobs; i++) {
		const struct mt_snap_blob *b = &s->blobs[i];

		mt_wbuf_u32le(w, b->pid);
		mt_wbuf_u32le(w, b->kind);
		mt_wbuf_u64le(w, b->addr);
		put_str(w, b->name);
		put_bytes(w, b->data, b->len);
		if (b->time != 0)	/* 1.1: absent means 0 */
			mt_wbuf_u64le(w, b->time);
		CHUNK(MT_SNAP_BLOB);
	}
	for (i = 0; i < s->nelfs; i++) {
		const struct mt_snap_elf *e = &s->elfs[i];

		put_buildid(w, e->build_id, e->build_id_len);
		put_str(w, e->path);
		put_bytes(w, e->data, e->len);
		CHUNK(MT_SNAP_ELF);
	}
	for (i = 0; i < s->nsideband; i++) {
		const struct mt_snap_sideband *b = &s->sideband[i];

		mt_wbuf_u32le(w, b->cpu);
		mt_wbuf_u32le(w, b->tid);
		mt_wbuf_u64le(w, b->sample_type);
		put_bytes(w, b->data, b->len);
		CHUNK(MT_SNAP_SIDEBAND);
	}
	for (i = 0; i < s->ntriggers; i++) {
		const struct mt_snap_trigger *t = &s->triggers[i];

		mt_wbuf_u64le(w, t->time);
		mt_wbuf_u32le(w, t->pid);
		mt_wbuf_u32le(w, t->tid);
		mt_wbuf_u64le(w, t->ip);
		mt_wbuf_u32le(w, t->index);
		put_str(w, t->what);
		CHUNK(MT_SNAP_TRIGGER);
	}
	for (i = 0; i < s->nprobes; i++) {
		const struct mt_snap_probe *p = &s->probes[i];

		mt_wbuf_u32le(w, p->pid);
		mt_wbuf_u32le(w, p->origin);
		mt_wbuf_u64le(w, p->addr);
		mt_wbuf_u64le(w, p->offset);
		put_str(w, p->path);
		put_str(w, p->what);
		CHUNK(MT_SNAP_PROBE);
	}
	for (i = 0; i < s->naux; i++) {
		const struct mt_snap_aux *a = &s->aux[i];

		mt_wbuf_u32le(w, a->tid);
		mt_wbuf_u32le(w, a->cpu);
		mt_wbuf_u32le(w, a->index);
		mt_wbuf_u32le(w, a->flags);
		mt_wbuf_u64le(w, a->ring_size);
		mt_wbuf_u64le(w, a->head);
		put_bytes(w, a->data, a->len);
		CHUNK(MT_SNAP_AUX);
	}
	mt_wbuf_u64le(w, wr.nchunks);
	CHUNK(MT_SNAP_END);
#undef CHUNK
out:
	mt_wbuf_release(w);
	return rc;
}

/*
 * Reading.
 */

/* A byte source: memory, or a file descriptor read sequentially. */
struct src {
	const uint8_t *mem;	/* memory input, or NULL */
	size_t memlen;
	int fd;
	uint64_t off;		/* bytes consumed */
	int eof;		/* fd input: a read returned 0 */
	uint8_t *borrow;	/* mem, when payloads point into it */
};

/* Read exactly @n bytes into @p.  Returns 0, -MT_E_TRUNC or -MT_E_IO. */
static int
src_read(struct src *in, void *p, size_t n)
{
	uint8_t *b = p;

	if (in->mem) {
		if (n > in->memlen - in->off) {
			in->off = in->memlen;	/* consumed, as by read(2) */
			return -MT_E_TRUNC;
		}
		memcpy(p, in->mem + in->off, n);
		in->off += n;
		return 0;
	}
	while (n > 0) {
		ssize_t r = read(in->fd, b, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -MT_E_IO;
		}
		if (r == 0) {
			in->eof = 1;
			return -MT_E_TRUNC;
		}
		b += r;
		n -= (size_t)r;
		in->off += (uint64_t)r;
	}
	return 0;
}

/*
 * Read a payload of @len bytes into a new buffer *@pay.  From a pipe the
 * buffer grows with the bytes that actually arrive, so a hostile length
 * costs no more memory than the input really holds.
 * Returns 0, -MT_E_TRUNC, -MT_E_IO or -MT_E_NOMEM (*@pay is then freed or
 * left for the caller to free).
 */
static int
read_payload(struct src *in, size_t len, uint8_t **pay)
{
	size_t have = 0, cap;
	uint8_t *p;
	int rc;

	if (in->borrow) {
		if (len > in->memlen - in->off)
			return -MT_E_TRUNC;
		*pay = in->borrow + in->off;
		in->off += len;
		return 0;
	}
	cap = in->mem || len < (1u << 20) ? len : (1u << 20);
	*pay = p = malloc(cap ? cap : 1);
	if (p == NULL)
		return -MT_E_NOMEM;
	for (;;) {
		rc = src_read(in, p + have, cap - have);
		if (rc < 0)
			return rc;
		have = cap;
		if (have == len)
			return 0;
		cap = len - cap < cap ? len : cap * 2;
		p = realloc(*pay, cap);
		if (p == NULL)
			return -MT_E_NOMEM;
		*pay = p;
	}
}

/*
 * A mapped file (mt_snap_map_fd): once a chunk is checked and parsed,
 * unmap its pages from [@start, in->off) (the page it ends in, where
 * the next chunk begins, is left: that chunk unmaps it; the file's data
 * stays in the page cache), so that only the pages used later (the
 * trace as it is decoded) count in the process's memory, not every
 * page the checksum read.  A page read again is mapped again.
 */
static void
drop_pages(const struct src *in, uint64_t start)
{
	uintptr_t a = (uintptr_t)in->borrow + (uintptr_t)start;
	uintptr_t b = (uintptr_t)in->borrow + (uintptr_t)in->off;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);

	a &= ~(pg - 1);
	b &= ~(pg - 1);		/* the next chunk begins in its last page */
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_DONTNEED);
}

/*
 * Hash @len bytes of payload at @p into @st.  In a mapped file a window
 * of HASH_WINDOW bytes at a time, the whole pages of each unmapped once
 * hashed (drop_pages unmaps the rest when the chunk is parsed): checking
 * a chunk maps a window of it at a time, not all of it (the file is not
 * populated whole either), so the largest chunk does not set the peak
 * RSS (bench/RESULTS.md, session 10).
 */
#define HASH_WINDOW	(256u << 10)

static void
hash_payload(const struct src *in, XXH3_state_t *st, const uint8_t *p,
    size_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a, b;
	size_t n;

	while (len > 0) {
		n = in->borrow == NULL || len < HASH_WINDOW ? len : HASH_WINDOW;
		XXH3_64bits_update(st, p, n);
		p += n;
		len -= n;
		if (in->borrow == NULL || len == 0)
			continue;
		a = ((uintptr_t)p - n) & ~(pg - 1);
		b = (uintptr_t)p & ~(pg - 1);
		if (b > a)
			(void)madvise((void *)a, b - a, MADV_DONTNEED);
	}
}

/* Can @n more bytes possibly exist?  Memory knows; a pipe gets a limit. */
static int
src_room(const struct src *in, uint64_t n)
{
	if (in->mem)
		return n <= in->memlen - in->off;
	return n <= PIPE_CHUNK_LIMIT;
}

/*
 * Record a reading error in @d and return @rc.  Every message names @off
 * once, as "at offset N", so that a program prints it after the file's
 * name and nothing else (mt-decode: 'x.snap': truncated in AUX chunk at
 * offset 32); a chunk's errors give the offset of its header.
 */
static int
diag(struct mt_snap_diag *d, int rc, uint64_t off, uint32_t type,
    const char *fmt, ...)
{
	va_list ap;

	if (d) {
		d->off = off;
		d->type = type;
		va_start(ap, fmt);
		vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* A failed read(2) of @in: its offset and errno's text ("Is a directory") */
static int
read_error(struct mt_snap_diag *d, const struct src *in)
{
	return diag(d, -MT_E_IO, in->off, MT_SNAP_NONE,
	    "read error at offset %llu: %s", (unsigned long long)in->off,
	    strerror(errno));
}

static int
get_str(struct mt_buf *b, char **out)
{
	uint32_t n;
	const uint8_t *p;

	if (mt_buf_get_u32le(b, &n) < 0 || mt_buf_get_bytes(b, n, &p) < 0)
		return -MT_E_CORRUPT;
	if (memchr(p, '\0', n) != NULL)
		return -MT_E_CORRUPT;
	*out = dupmem(p, n);
	return *out ? 0 : -MT_E_NOMEM;
}

/*
 * A blob field: its bytes (plus a NUL) in a new buffer.  A large blob that
 * ends the chunk is moved to the front of the chunk's payload buffer
 * *@pay, which then becomes the blob's (*@pay is set to NULL): a 64 MiB
 * AUX chunk is then held once, not twice, while the snapshot is read.
 */
#define BLOB_STEAL_MIN (64u << 10)
/*
 * The BLOB's u64 time after its data (format 1.1; absent: 0), read ahead
 * of the data: @b then ends with the data, so that get_blob can take a
 * large blob over from the payload.  Bytes after the time (a later
 * minor's fields) are left out likewise.  Returns 0, or -MT_E_CORRUPT
 * when the data's length is cut short.
 */
static int
get_blob_time(struct mt_buf *b, uint64_t *time)
{
	uint64_t n;

	*time = 0;
	if (b->len < 8)
		return -MT_E_CORRUPT;
	n = mt_le64(b->p);
	if (n > b->len - 8)
		return -MT_E_CORRUPT;
	if (b->len - 8 - n >= 8) {
		*time = mt_le64(b->p + 8 + n);
		b->len = 8 + (size_t)n;
	}
	return 0;
}

static int
get_blob(struct mt_buf *b, uint8_t **out, uint64_t *len, uint8_t **pay)
{
	uint64_t n;
	const uint8_t *p;
	uint8_t *q;

	if (mt_buf_get_u64le(b, &n) < 0 || n > b->len ||
	    mt_buf_get_bytes(b, (size_t)n, &p) < 0)
		return -MT_E_CORRUPT;
	*len = n;
	if (pay != NULL && *pay != NULL && n >= BLOB_STEAL_MIN &&
	    b->len == 0 && p > *pay) {
		/* the blob header came first, so there is room for a NUL */
		memmove(*pay, p, (size_t)n);
		(*pay)[n] = 0;
		q = realloc(*pay, (size_t)n + 1);
		*out = q != NULL ? q : *pay;
		*pay = NULL;
		return 0;
	}
	*out = dupmem(p, n);
	return *out ? 0 : -MT_E_NOMEM;
}

/*
 * A blob's data as get_blob(), left in place when @s reads a mapping
 * (mt_snap_map_fd(): the payload is part of s->map).
 */
static int
get_data(struct mt_snap *s, struct mt_buf *b, uint8_t **out, uint64_t *len,
    uint8_t **pay)
{
	uint64_t n;
	const uint8_t *p;

	if (s->map == NULL)
		return get_blob(b, out, len, pay);
	if (mt_buf_get_u64le(b, &n) < 0 || n > b->len ||
	    mt_buf_get_bytes(b, (size_t)n, &p) < 0)
		return -MT_E_CORRUPT;
	*len = n;
	*out = s->map + (p - s->map);
	return 0;
}

static int
get_buildid(struct mt_buf *b, uint8_t *id, uint8_t *len)
{
	const uint8_t *p;

	if (mt_buf_get_u8(b, len) < 0 || *len > MT_SNAP_BUILD_ID_MAX ||
	    mt_buf_get_bytes(b, *len, &p) < 0)
		return -MT_E_CORRUPT;
	memcpy(id, p, *len);
	return 0;
}

#define GET(call) do { if ((call) < 0) return -MT_E_CORRUPT; } while (0)
#define GETA(call) do { int r_ = (call); if (r_ < 0) return r_; } while (0)

static int
parse_host(struct mt_snap *s, struct mt_buf *b)
{
	struct mt_snap_host *h = &s->host;
	const uint8_t *v;
	int i, j;

	if (s->has_host)
		return -MT_E_CORRUPT;
	s->has_host = 1;
	GET(mt_buf_get_bytes(b, 12, &v));
	memcpy(h->vendor, v, 12);
	h->vendor[12] = '\0';
	GET(mt_buf_get_u16le(b, &h->family));
	GET(mt_buf_get_u8(b, &h->model));
	GET(mt_buf_get_u8(b, &h->stepping));
	for (i = 0; i < 2; i++)
		for (j = 0; j < 4; j++)
			GET(mt_buf_get_u32le(b, &h->cpuid_14[i][j]));
	for (i = 0; i < 3; i++)
		GET(mt_buf_get_u32le(b, &h->cpuid_15[i]));
	GET(mt_buf_get_u32le(b, &h->max_nonturbo_ratio));
	GET(mt_buf_get_u32le(b, &h->nr_cpus));
	GETA(get_str(b, &h->kernel));
	GETA(get_str(b, &h->hostname));
	return 0;
}

static int
parse_ptcfg(struct mt_snap *s, struct mt_buf *b)
{
	struct mt_snap_ptcfg *c = &s->ptcfg;
	unsigned i;

	if (s->has_ptcfg)
		return -MT_E_CORRUPT;
	s->has_ptcfg = 1;
	GET(mt_buf_get_u32le(b, &c->backend));
	GET(mt_buf_get_u32le(b, &c->pmu_type));
	GET(mt_buf_get_u64le(b, &c->config));
	GET(mt_buf_get_u8(b, &c->user));
	GET(mt_buf_get_u8(b, &c->kernel));
	GET(mt_buf_get_u8(b, &c->per_cpu));
	GET(mt_buf_get_u8(b, &c->nfilters));
	if (c->nfilters > MT_SNAP_MAX_FILTERS)
		return -MT_E_CORRUPT;
	for (i = 0; i < c->nfilters; i++) {
		GET(mt_buf_get_u64le(b, &c->filters[i].a));
		GET(mt_buf_get_u64le(b, &c->filters[i].b));
		GET(mt_buf_get_u32le(b, &c->filters[i].cfg));
	}
	return 0;
}

static int
parse_timeconv(struct mt_snap *s, struct mt_buf *b)
{
	struct mt_snap_timeconv *t = &s->timeconv;

	if (s->has_timeconv)
		return -MT_E_CORRUPT;
	s->has_timeconv = 1;
	GET(mt_buf_get_u64le(b, &t->time_zero));
	GET(mt_buf_get_u32le(b, &t->time_mult));
	GET(mt_buf_get_u16le(b, &t->time_shift));
	GET(mt_buf_get_u8(b, &t->cap_user_time_zero));
	GET(mt_buf_get_u8(b, &t->cap_user_time_short));
	GET(mt_buf_get_u64le(b, &t->time_cycles));
	GET(mt_buf_get_u64le(b, &t->time_mask));
	if (t->time_shift > 63)
		return -MT_E_CORRUPT;
	return 0;
}

/* Parse one payload of @type into @s; a blob may take over *@pay. */
static int
parse_chunk(struct mt_snap *s, uint32_t type, struct mt_buf *b,
    uint8_t **pay)
{
	const uint8_t *p;

	switch (type) {
	case MT_SNAP_META: {
		struct mt_snap_meta *m = grow(&s->meta, &s->nmeta,
		    sizeof(*m));

		if (m == NULL)
			return -MT_E_NOMEM;
		GETA(get_str(b, &m->key));
		GETA(get_str(b, &m->value));
		return 0;
	}
	case MT_SNAP_HOST:
		return parse_host(s, b);
	case MT_SNAP_PTCFG:
		return parse_ptcfg(s, b);
	case MT_SNAP_TIMECONV:
		return parse_timeconv(s, b);
	case MT_SNAP_PROCESS: {
		struct mt_snap_process *d = grow(&s->procs, &s->nprocs,
		    sizeof(*d));

		if (d == NULL)
			return -MT_E_NOMEM;
		GET(mt_buf_get_u32le(b, &d->pid));
		GET(mt_buf_get_u32le(b, &d->ppid));
		GETA(get_str(b, &d->comm));
		GETA(get_str(b, &d->exe));
		GET(mt_buf_get_u32le(b, &d->cmdline_len));
		GET(mt_buf_get_bytes(b, d->cmdline_len, &p));
		d->cmdline = dupmem(p, d->cmdline_len);
		return d->cmdline ? 0 : -MT_E_NOMEM;
	}
	case MT_SNAP_THREAD: {
		struct mt_snap_thread *d = grow(&s->threads, &s->nthreads,
		    sizeof(*d));

		if (d == NULL)
			return -MT_E_NOMEM;
		GET(mt_buf_get_u32le(b, &d->pid));
		GET(mt_buf_get_u32le(b, &d->tid));
		return get_str(b, &d->comm);
	}
	case MT_SNAP_MMAP: {
		struct mt_snap_mmap *d = grow(&s->mmaps, &s->nmmaps,
		    sizeof(*d));

		if (d == NULL)
			return -MT_E_NOMEM;
		GET(mt_buf_get_u32le(b, &d->pid));
		GET(mt_buf_get_u64le(b, &d->start));
		GET(mt_buf_get_u64le(b, &d->end));
		GET(mt_buf_get_u64le(b, &d->pgoff));
		GET(mt_buf_get_u32le(b, &d->prot));
		GET(mt_buf_get_u32le(b, &d->flags));
		GETA(get_buildid(b, d->build_id, &d->build_id_len));
		GETA(get_str(b, &d->path));
		return d->end < d->start ? -MT_E_CORRUPT : 0;
	}
	case MT_SNAP_AUX: {
		struct mt_snap_aux *d = grow(&s->aux, &s->naux, sizeof(*d));

		if (d == NULL)
			return -MT_E_NOMEM;
		GET(mt_buf_get_u32le(b, &d->tid));
		GET(mt_buf_get_u32le(b, &d->cpu));
		GET(mt_buf_get_u32le(b, &d->index));
		GET(mt_buf_get_u32le(b, &d->flags));
		GET(mt_buf_get_u64le(b, &d->ring_size));
		GET(mt_buf_get_u64le(b, &d->head));
		return get_data(s, b, &d->data, &d->len, pay);
	}
	case MT_SNAP_SIDEBAND: {
		struct mt_snap_sideband *d = grow(&s->sideband, &s->nsideband,
		    sizeof(*d));

		if (d == NULL)
			return -MT_E_NOMEM;
		GET(mt_buf_get_u32le(b, &d->cpu));
		GET(mt_buf_get_u32le(b, &d->tid));
		GET(mt_buf_get_u64le(b, &d->sample_type));
		return get_blob(b, &d->data, &d->len, pay);
	}
	case MT_SNAP_TRIGGER: {
		struct mt_snap_trigger *d = grow(&s->triggers, &s->ntriggers,
		    sizeof(*d));

		if (d == NULL)
			return -MT_E_NOMEM;
		GET(mt_buf_get_u64le(b, &d->time));
		GET(mt_buf_get_u32le(b, &d->pid));
		GET(mt_buf_get_u32le(b, &d->tid));
		GET(mt_buf_get_u64le(b, &d->ip));
		GET(mt_buf_get_u32le(b, &d->index));
		return get_str(b, &d->what);
	}
	case MT_SNAP_PROBE: {
		struct mt_snap_probe *d = grow(&s->probes, &s->nprobes,
		    sizeof(*d));

		if (d == NULL)
			return -MT_E_NOMEM;
		GET(mt_buf_get_u32le(b, &d->pid));
		GET(mt_buf_get_u32le(b, &d->origin));
		GET(mt_buf_get_u64le(b, &d->addr));
		GET(mt_buf_get_u64le(b, &d->offset));
		GETA(get_str(b, &d->path));
		return get_str(b, &d->what);
	}
	case MT_SNAP_BLOB: {
		struct mt_snap_blob *d = grow(&s->blobs, &s->nblobs,
		    sizeof(*d));

		if (d == NULL)
			return -MT_E_NOMEM;
		GET(mt_buf_get_u32le(b, &d->pid));
		GET(mt_buf_get_u32le(b, &d->kind));
		GET(mt_buf_get_u64le(b, &d->addr));
		GETA(get_str(b, &d->name));
		GET(get_blob_time(b, &d->time));
		return get_data(s, b, &d->data, &d->len, pay);
	}
	case MT_SNAP_ELF: {
		struct mt_snap_elf *d = grow(&s->elfs, &s->nelfs, sizeof(*d));

		if (d == NULL)
			return -MT_E_NOMEM;
		GETA(get_buildid(b, d->build_id, &d->build_id_len));
		GETA(get_str(b, &d->path));
		return get_data(s, b, &d->data, &d->len, pay);
	}
	case MT_SNAP_TEXT: {
		struct mt_snap_text *d = grow(&s->texts, &s->ntexts,
		    sizeof(*d));
		uint8_t *data;

		if (d == NULL)
			return -MT_E_NOMEM;
		GET(mt_buf_get_u32le(b, &d->kind));
		GET(mt_buf_get_u32le(b, &d->pid));
		GETA(get_blob(b, &data, &d->len, pay));
		d->data = (char *)data;
		return 0;
	}
	}
	return 0;
}

static int
read_header(struct src *in, struct mt_snap *s, struct mt_snap_diag *d)
{
	uint8_t h[MT_SNAP_HDR_SIZE], extra[256];
	uint32_t hsize;
	uint64_t features, sum;
	XXH3_state_t *st;
	int rc;

	rc = src_read(in, h, 8);
	if (rc == -MT_E_IO)
		return read_error(d, in);
	if (rc < 0 || memcmp(h, MT_SNAP_MAGIC, 8) != 0)
		return diag(d, -MT_E_MAGIC, 0, MT_SNAP_NONE,
		    "not an mt snapshot (bad magic at offset 0)");
	rc = src_read(in, h + 8, MT_SNAP_HDR_SIZE - 8);
	if (rc < 0)
		return rc == -MT_E_IO ? read_error(d, in) : diag(d, rc,
		    0, MT_SNAP_NONE, "truncated file header at offset 0");
	s->major = mt_le16(h + 8);
	s->minor = mt_le16(h + 10);
	if (s->major != MT_SNAP_MAJOR)
		return diag(d, -MT_E_VERSION, 8, MT_SNAP_NONE,
		    "snapshot format version %u.%u at offset 8 is not "
		    "supported (this reader: %u.x)", s->major, s->minor,
		    MT_SNAP_MAJOR);
	hsize = mt_le32(h + 12);
	features = mt_le64(h + 16);
	if (hsize < MT_SNAP_HDR_SIZE || hsize > MT_SNAP_HDR_SIZE + 256)
		return diag(d, -MT_E_CORRUPT, 12, MT_SNAP_NONE,
		    "bad header size %u at offset 12", hsize);
	st = XXH3_createState();
	if (st == NULL)
		return diag(d, -MT_E_NOMEM, 0, MT_SNAP_NONE,
		    "out of memory for the file header at offset 0");
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, h, 24);
	rc = src_read(in, extra, hsize - MT_SNAP_HDR_SIZE);
	XXH3_64bits_update(st, extra, hsize - MT_SNAP_HDR_SIZE);
	sum = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	if (rc < 0)
		return rc == -MT_E_IO ? read_error(d, in) : diag(d, rc,
		    0, MT_SNAP_NONE, "truncated file header at offset 0");
	if (sum != mt_le64(h + 24))
		return diag(d, -MT_E_CHECKSUM, 0, MT_SNAP_NONE,
		    "checksum mismatch in file header at offset 0");
	if (features != 0)
		return diag(d, -MT_E_UNSUPP, 16, MT_SNAP_NONE,
		    "unsupported required features 0x%llx at offset 16",
		    (unsigned long long)features);
	return 0;
}

static int
read_all(struct src *in, struct mt_snap *s, struct mt_snap_diag *d)
{
	uint8_t hdr[16], sum[8];
	uint8_t *pay = NULL;
	int rc;

	rc = read_header(in, s, d);
	if (rc < 0)
		return rc;
	for (;;) {
		uint64_t start = in->off, len, n;
		uint32_t type, flags;
		const char *tn;
		struct mt_snap_chunkinfo *ci;
		struct mt_buf b;

		rc = src_read(in, hdr, sizeof(hdr));
		if (rc == -MT_E_IO)
			goto ioerr;
		if (rc < 0) {
			if (in->off == start)
				rc = diag(d, -MT_E_TRUNC, start, MT_SNAP_NONE,
				    "truncated at offset %llu: no END chunk",
				    (unsigned long long)start);
			else
				rc = diag(d, -MT_E_TRUNC, start, MT_SNAP_NONE,
				    "truncated chunk header at offset %llu",
				    (unsigned long long)start);
			goto out;
		}
		type = mt_le32(hdr);
		flags = mt_le32(hdr + 4);
		len = mt_le64(hdr + 8);
		tn = mt_snap_type_name(type);
		/* (memory knows before reading, a pipe when it ends) */
		if (!src_room(in, len) || len > SIZE_MAX - 1)
			rc = -MT_E_TRUNC;
		else
			rc = read_payload(in, (size_t)len, &pay);
		if (rc == -MT_E_NOMEM) {
			rc = diag(d, -MT_E_NOMEM, start, type,
			    "out of memory for %s chunk at offset %llu "
			    "(%llu bytes)", tn, (unsigned long long)start,
			    (unsigned long long)len);
			goto out;
		}
		if (rc == -MT_E_TRUNC) {
			rc = diag(d, -MT_E_TRUNC, start, type,
			    "truncated in %s chunk at offset %llu: length "
			    "%llu exceeds the input", tn,
			    (unsigned long long)start,
			    (unsigned long long)len);
			goto out;
		}
		if (rc == 0)
			rc = src_read(in, sum, sizeof(sum));
		if (rc == -MT_E_IO)
			goto ioerr;
		if (rc < 0) {
			rc = diag(d, -MT_E_TRUNC, start, type,
			    "truncated in %s chunk at offset %llu", tn,
			    (unsigned long long)start);
			goto out;
		}
		{
			XXH3_state_t *st = XXH3_createState();
			uint64_t v;

			if (st == NULL) {
				rc = diag(d, -MT_E_NOMEM, start, type,
				    "out of memory for %s chunk at offset "
				    "%llu", tn, (unsigned long long)start);
				goto out;
			}
			XXH3_64bits_reset(st);
			XXH3_64bits_update(st, hdr, sizeof(hdr));
			hash_payload(in, st, pay, (size_t)len);
			v = XXH3_64bits_digest(st);
			XXH3_freeState(st);
			if (v != mt_le64(sum)) {
				rc = diag(d, -MT_E_CHECKSUM, start, type,
				    "checksum mismatch in %s chunk at offset "
				    "%llu", tn, (unsigned long long)start);
				goto out;
			}
		}
		if ((flags & ~MT_SNAP_CF_REQUIRED) != 0) {
			rc = diag(d, -MT_E_CORRUPT, start, type,
			    "corrupt %s chunk at offset %llu: unknown flags "
			    "0x%x", tn, (unsigned long long)start, flags);
			goto out;
		}
		ci = grow(&s->chunks, &s->nchunks, sizeof(*ci));
		if (ci == NULL) {
			rc = diag(d, -MT_E_NOMEM, start, type,
			    "out of memory for %s chunk at offset %llu", tn,
			    (unsigned long long)start);
			goto out;
		}
		ci->type = type;
		ci->flags = flags;
		ci->off = start;
		ci->len = len;
		mt_buf_init(&b, pay, (size_t)len);
		if (type == MT_SNAP_END) {
			if (mt_buf_get_u64le(&b, &n) < 0 ||
			    n != s->nchunks - 1) {
				rc = diag(d, -MT_E_CORRUPT, start, type,
				    "corrupt END chunk at offset %llu: chunk "
				    "count does not match",
				    (unsigned long long)start);
				goto out;
			}
			rc = 0;
			goto out;
		}
		if (type >= MT_SNAP_NTYPES) {
			if (flags & MT_SNAP_CF_REQUIRED) {
				rc = diag(d, -MT_E_UNSUPP, start, type,
				    "unknown required chunk type %u at offset "
				    "%llu", type, (unsigned long long)start);
				goto out;
			}
			s->skipped++;
		} else {
			rc = parse_chunk(s, type, &b, in->borrow ? NULL : &pay);
			if (rc < 0) {
				rc = diag(d, rc, start, type,
				    rc == -MT_E_NOMEM ? "out of memory in %s "
				    "chunk at offset %llu" : "corrupt %s chunk "
				    "at offset %llu", tn,
				    (unsigned long long)start);
				goto out;
			}
		}
		if (!in->borrow)
			free(pay);
		else
			drop_pages(in, start);
		pay = NULL;
	}
ioerr:
	rc = read_error(d, in);
out:
	if (!in->borrow)
		free(pay);
	return rc;
}

int
mt_snap_read_fd(struct mt_snap *s, int fd, struct mt_snap_diag *d)
{
	struct src in = { .fd = fd };

	return read_all(&in, s, d);
}

int
mt_snap_map_fd(struct mt_snap *s, int fd, struct mt_snap_diag *d)
{
	struct src in = { 0 };
	struct stat sb;
	void *m;

	/* (a file read from where its descriptor stands, e.g. a shell's
	 * stdin after another program read part of it, is read) */
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
	    (uint64_t)sb.st_size > SIZE_MAX || lseek(fd, 0, SEEK_CUR) != 0)
		return mt_snap_read_fd(s, fd, d);
	/* Read-only: the pages stay the page cache's, not copies.  Not
	 * populated: the chunks are checked a window at a time. */
	m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return mt_snap_read_fd(s, fd, d);
	s->map = m;
	s->maplen = (size_t)sb.st_size;
	in.mem = in.borrow = m;
	in.memlen = s->maplen;
	return read_all(&in, s, d);
}

int
mt_snap_read_mem(struct mt_snap *s, const void *p, size_t len,
    struct mt_snap_diag *d)
{
	static const uint8_t empty[1];
	struct src in = { .mem = p ? p : empty, .memlen = p ? len : 0 };

	return read_all(&in, s, d);
}
