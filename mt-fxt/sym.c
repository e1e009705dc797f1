/* SPDX-License-Identifier: MIT */
/*
 * Definition tables for mt-fxt (see sym.h): one string pool with a hash
 * index, and open-addressing maps from stream ids (fn, file, loc, pid,
 * tid) to table entries.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "grow.h"
#include "events.h"
#include "sym.h"

/*
 * Map u64 -> u32 (value 0 means absent).  Small keys, which stream ids
 * are (mt-symbolize numbers locs, fns and files 1, 2, 3...), go to a
 * direct array that grows while the keys stay dense; the others to an
 * open-addressing hash.  A key lives in one of the two.
 */
struct idmap {
	uint32_t *dense;	/* key -> value for key < ndense */
	uint32_t ndense;
	uint64_t *keys;
	uint32_t *vals;
	uint32_t mask;		/* capacity - 1 */
	uint32_t n;		/* entries in the hash */
};

#define IDMAP_DENSE_MIN	256u		/* first direct array (1 KiB) */
#define IDMAP_DENSE_MAX	(1u << 24)	/* never larger (64 MiB) */

struct str {
	size_t off;		/* in pool */
	uint32_t len;
};

struct fnent {
	uint32_t name;		/* string handle */
	uint64_t start;
	uint8_t anon;		/* named by address only: no identity */
};

struct locent {
	struct sym_loc l;	/* what sym_loc() returns */
	uint32_t first;		/* index in frames of l.frames[0] */
};

struct sym {
	int err;
	char *pool;
	size_t poollen, poolcap;
	struct str *strs;	/* handle -> bytes; 0 unused */
	uint32_t nstr, capstr;
	struct idmap strmap;	/* FNV hash (probed on collision) -> handle */

	struct idmap files;	/* file id -> string handle */
	struct idmap fns;	/* fn id -> index + 1 in fnv */
	struct idmap ifunc_of;	/* name handle -> its IFUNC's name handle */
	struct fnent *fnv;
	uint32_t nfn, capfn;
	struct idmap locs;	/* loc id -> index + 1 in locv */
	struct locent *locv;
	uint32_t nloc, caploc;
	struct sym_frame *frames;	/* all loc frames */
	uint32_t nframes, capframes;
	struct idmap addrs;	/* address -> "[unknown @ ...]" handle */

	struct idmap pids;	/* pid -> proc index + 1 */
	struct sym_proc **procs;
	uint32_t nproc, capproc;
	struct idmap tids;	/* tid -> thread index + 1 */
	struct sym_thread **threads;
	uint32_t nthr, capthr;
	uint32_t ntracks;	/* of which goroutine tracks (sym_track) */
};

static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int
idmap_grow(struct idmap *m)
{
	uint32_t ncap = m->mask ? (m->mask + 1) * 2 : 256, i;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint32_t *nv = calloc(ncap, sizeof(*nv));

	if (nk == NULL || nv == NULL || ncap == 0) {
		free(nk);
		free(nv);
		return -MT_E_NOMEM;
	}
	for (i = 0; m->mask && i <= m->mask; i++) {
		uint32_t j;

		if (m->vals[i] == 0)
			continue;
		j = (uint32_t)mix64(m->keys[i]) & (ncap - 1);
		while (nv[j] != 0)
			j = (j + 1) & (ncap - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->mask = ncap - 1;
	return 0;
}

static uint32_t
idmap_get(const struct idmap *m, uint64_t key)
{
	uint32_t j;

	if (key < m->ndense && m->dense[key] != 0)
		return m->dense[key];
	if (m->n == 0)
		return 0;
	j = (uint32_t)mix64(key) & m->mask;
	while (m->vals[j] != 0) {
		if (m->keys[j] == key)
			return m->vals[j];
		j = (j + 1) & m->mask;
	}
	return 0;
}

/* Grow the direct array to hold @key, if the keys stay dense. */
static int
idmap_dense(struct idmap *m, uint64_t key)
{
	uint32_t ncap = m->ndense ? m->ndense * 2 : IDMAP_DENSE_MIN;
	uint32_t *nd;

	if (key >= IDMAP_DENSE_MAX || key >= (uint64_t)ncap)
		return 0;
	nd = realloc(m->dense, (size_t)ncap * sizeof(*nd));
	if (nd == NULL)
		return 0;	/* the hash takes it */
	memset(nd + m->ndense, 0, (size_t)(ncap - m->ndense) * sizeof(*nd));
	m->dense = nd;
	m->ndense = ncap;
	return 1;
}

/* Set @key to @val (non-zero), replacing an existing value. */
static int
idmap_put(struct idmap *m, uint64_t key, uint32_t val)
{
	uint32_t j;

	if (m->n > 0) {		/* in the hash already? */
		j = (uint32_t)mix64(key) & m->mask;
		while (m->vals[j] != 0 && m->keys[j] != key)
			j = (j + 1) & m->mask;
		if (m->vals[j] != 0) {
			m->vals[j] = val;
			return 0;
		}
	}
	if (key < m->ndense || idmap_dense(m, key)) {
		m->dense[key] = val;
		return 0;
	}
	if ((m->n + 1) * 2 > m->mask + 1 && idmap_grow(m) < 0)
		return -MT_E_NOMEM;
	j = (uint32_t)mix64(key) & m->mask;
	while (m->vals[j] != 0) {
		if (m->keys[j] == key) {
			m->vals[j] = val;
			return 0;
		}
		j = (j + 1) & m->mask;
	}
	m->keys[j] = key;
	m->vals[j] = val;
	m->n++;
	return 0;
}

static void
idmap_release(struct idmap *m)
{
	free(m->dense);
	free(m->keys);
	free(m->vals);
}

int
sym_new(struct sym **sp)
{
	struct sym *s = calloc(1, sizeof(*s));

	*sp = NULL;
	if (s == NULL)
		return -MT_E_NOMEM;
	s->nstr = 1;
	if (fxt_grow((void **)&s->strs, &s->capstr, 1, sizeof(*s->strs)) < 0) {
		free(s);
		return -MT_E_NOMEM;
	}
	*sp = s;
	return 0;
}

void
sym_free(struct sym *s)
{
	uint32_t i;

	if (s == NULL)
		return;
	free(s->pool);
	free(s->strs);
	idmap_release(&s->strmap);
	idmap_release(&s->files);
	idmap_release(&s->fns);
	idmap_release(&s->ifunc_of);
	free(s->fnv);
	idmap_release(&s->locs);
	free(s->locv);
	free(s->frames);
	idmap_release(&s->addrs);
	idmap_release(&s->pids);
	for (i = 0; i < s->nproc; i++)
		free(s->procs[i]);
	free(s->procs);
	idmap_release(&s->tids);
	for (i = 0; i < s->nthr; i++)
		free(s->threads[i]);
	free(s->threads);
	free(s);
}

static uint64_t
hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a 64 */

	while (n--)
		h = (h ^ (uint8_t)*p++) * 1099511628211ull;
	return h;
}

/*
 * The string map is keyed by the 64-bit hash with linear probing on the
 * hash value itself: a collision of two different strings on all 64 bits
 * is resolved by probing key+1, key+2... until a free or equal entry.
 */
static uint32_t
find_str(const struct sym *s, const char *p, size_t len, uint64_t *keyp)
{
	uint64_t key = hash_bytes(p, len);
	uint32_t h;

	for (;; key++) {
		h = idmap_get(&s->strmap, key);
		if (h == 0)
			break;
		if (s->strs[h].len == len &&
		    memcmp(s->pool + s->strs[h].off, p, len) == 0)
			break;
	}
	*keyp = key;
	return h;
}

uint32_t
sym_lookup(const struct sym *s, const char *p, size_t len)
{
	uint64_t key;

	if (len == 0)
		return 0;
	return find_str(s, p, len, &key);
}

uint32_t
sym_intern(struct sym *s, const char *p, size_t len)
{
	uint64_t key;
	uint32_t h;

	if (len == 0 || s->err)
		return 0;
	if (len > UINT32_MAX / 2)
		len = UINT32_MAX / 2;
	h = find_str(s, p, len, &key);
	if (h != 0)
		return h;
	while (s->poollen + len > s->poolcap) {
		size_t ncap = s->poolcap ? s->poolcap * 2 : 65536;
		char *np = realloc(s->pool, ncap);

		if (np == NULL)
			goto nomem;
		s->pool = np;
		s->poolcap = ncap;
	}
	if (fxt_grow((void **)&s->strs, &s->capstr, s->nstr + 1,
	    sizeof(*s->strs)) < 0)
		goto nomem;
	h = s->nstr;
	if (idmap_put(&s->strmap, key, h) < 0)
		goto nomem;
	s->nstr++;
	memcpy(s->pool + s->poollen, p, len);
	s->strs[h].off = s->poollen;
	s->strs[h].len = (uint32_t)len;
	s->poollen += len;
	return h;
nomem:
	s->err = -MT_E_NOMEM;
	return 0;
}

uint32_t
sym_cintern(struct sym *s, const char *p)
{
	return p ? sym_intern(s, p, strlen(p)) : 0;
}

const char *
sym_str(const struct sym *s, uint32_t h, size_t *len)
{
	if (h == 0 || h >= s->nstr) {
		*len = 0;
		return "";
	}
	*len = s->strs[h].len;
	return s->pool + s->strs[h].off;
}

uint32_t
sym_nstr(const struct sym *s)
{
	return s->nstr;
}

int
sym_error(const struct sym *s)
{
	return s->err;
}

int
sym_add_file(struct sym *s, uint32_t id, const char *path)
{
	uint32_t h = sym_cintern(s, path);

	if (s->err)
		return s->err;
	if (h == 0)
		return 0;
	return idmap_put(&s->files, id, h);
}

int
sym_add_fn(struct sym *s, uint32_t id, uint64_t start, const char *name,
    const char *ifunc)
{
	uint32_t h = sym_cintern(s, name), i, c;

	if (s->err)
		return s->err;
	if (h == 0)
		h = sym_addr_name(s, start);
	if (ifunc != NULL && ifunc[0] != '\0' && h != 0) {
		c = sym_cintern(s, ifunc);
		if (s->err)
			return s->err;
		if (c != 0 && idmap_put(&s->ifunc_of, h, c) < 0)
			return -MT_E_NOMEM;
	}
	i = idmap_get(&s->fns, id);
	if (i == 0) {
		if (fxt_grow((void **)&s->fnv, &s->capfn, s->nfn + 1,
		    sizeof(*s->fnv)) < 0)
			return -MT_E_NOMEM;
		i = ++s->nfn;
		if (idmap_put(&s->fns, id, i) < 0)
			return -MT_E_NOMEM;
	}
	s->fnv[i - 1].name = h;
	s->fnv[i - 1].start = start;
	s->fnv[i - 1].anon = name == NULL || name[0] == '\0' ||
	    strncmp(name, "[unknown @ ", 11) == 0;
	return 0;
}

uint32_t
sym_ifunc_of(const struct sym *s, uint32_t name)
{
	return idmap_get(&s->ifunc_of, name);
}

int
sym_add_loc(struct sym *s, uint32_t id, uint64_t addr,
    const struct mt_ev_frame *f, uint32_t n)
{
	struct sym_frame *was = s->frames;
	uint32_t i, k;

	if (id == 0 || n == 0)
		return -MT_E_CORRUPT;
	for (k = 0; k < n; k++)
		if (idmap_get(&s->fns, f[k].fn) == 0)
			return -MT_E_CORRUPT;
	if (fxt_grow((void **)&s->frames, &s->capframes, s->nframes + n,
	    sizeof(*s->frames)) < 0 ||
	    fxt_grow((void **)&s->locv, &s->caploc, s->nloc + 1,
	    sizeof(*s->locv)) < 0)
		return -MT_E_NOMEM;
	if (s->frames != was)	/* moved: the locs point into it again */
		for (k = 0; k < s->nloc; k++)
			s->locv[k].l.frames = &s->frames[s->locv[k].first];
	i = idmap_get(&s->locs, id);
	if (i == 0) {
		i = ++s->nloc;
		if (idmap_put(&s->locs, id, i) < 0)
			return -MT_E_NOMEM;
	}
	s->locv[i - 1].l.addr = addr;
	s->locv[i - 1].l.nframes = n;
	s->locv[i - 1].l.frames = &s->frames[s->nframes];
	s->locv[i - 1].first = s->nframes;
	for (k = 0; k < n; k++) {
		struct sym_frame *d = &s->frames[s->nframes++];
		const struct fnent *fe = &s->fnv[idmap_get(&s->fns,
		    f[k].fn) - 1];

		d->fn = fe->anon ? 0 : f[k].fn;
		d->start = fe->anon ? 0 : fe->start;
		d->name = fe->name;
		d->file = f[k].file ? idmap_get(&s->files, f[k].file) : 0;
		d->line = f[k].line;
	}
	return 0;
}

const struct sym_loc *
sym_loc(const struct sym *s, uint32_t id)
{
	uint32_t i;

	if (id == 0 || (i = idmap_get(&s->locs, id)) == 0)
		return NULL;
	return &s->locv[i - 1].l;
}

uint32_t
sym_addr_name(struct sym *s, uint64_t addr)
{
	char b[48];
	uint32_t h = idmap_get(&s->addrs, addr);
	int n;

	if (h != 0)
		return h;
	n = snprintf(b, sizeof(b), "[unknown @ 0x%" PRIx64 "]", addr);
	h = sym_intern(s, b, (size_t)n);
	if (h != 0 && idmap_put(&s->addrs, addr, h) < 0)
		s->err = -MT_E_NOMEM;
	return h;
}

static struct sym_proc *
get_proc(struct sym *s, uint32_t pid)
{
	uint32_t i = idmap_get(&s->pids, pid);
	struct sym_proc *p;

	if (i != 0)
		return s->procs[i - 1];
	if (fxt_grow((void **)&s->procs, &s->capproc, s->nproc + 1,
	    sizeof(*s->procs)) < 0 || (p = calloc(1, sizeof(*p))) == NULL) {
		s->err = -MT_E_NOMEM;
		return NULL;
	}
	p->pid = pid;
	p->index = s->nproc;
	s->procs[s->nproc++] = p;
	if (idmap_put(&s->pids, pid, s->nproc) < 0) {
		s->err = -MT_E_NOMEM;
		return NULL;
	}
	return p;
}

int
sym_add_proc(struct sym *s, uint32_t pid, const char *comm,
    const char *cmdline)
{
	struct sym_proc *p = get_proc(s, pid);

	if (p == NULL)
		return s->err;
	p->comm = sym_cintern(s, comm);
	p->cmdline = sym_cintern(s, cmdline);
	return s->err;
}

struct sym_thread *
sym_thread(struct sym *s, uint32_t pid, uint32_t tid)
{
	uint32_t i = idmap_get(&s->tids, tid);
	struct sym_thread *t;
	struct sym_proc *p;

	if (i != 0)
		return s->threads[i - 1];
	if ((p = get_proc(s, pid)) == NULL)
		return NULL;
	if (fxt_grow((void **)&s->threads, &s->capthr, s->nthr + 1,
	    sizeof(*s->threads)) < 0 || (t = calloc(1, sizeof(*t))) == NULL) {
		s->err = -MT_E_NOMEM;
		return NULL;
	}
	t->tid = tid;
	t->pid = pid;
	t->index = s->nthr;
	t->proc = p->index;
	s->threads[s->nthr++] = t;
	if (idmap_put(&s->tids, tid, s->nthr) < 0) {
		s->err = -MT_E_NOMEM;
		return NULL;
	}
	return t;
}

struct sym_thread *
sym_track(struct sym *s, const struct sym_thread *of, uint32_t n)
{
	struct sym_thread *t;
	size_t clen;
	const char *c = sym_str(s, of->comm, &clen);
	char *b;

	if (fxt_grow((void **)&s->threads, &s->capthr, s->nthr + 1,
	    sizeof(*s->threads)) < 0 || (t = calloc(1, sizeof(*t))) == NULL) {
		s->err = -MT_E_NOMEM;
		return NULL;
	}
	*t = *of;
	t->goroutine = n;
	t->index = s->nthr;
	if ((b = malloc(clen + 32)) != NULL) {
		t->comm = sym_intern(s, b, (size_t)snprintf(b, clen + 32,
		    "%.*s%sgoroutine #%" PRIu32, (int)clen, c, clen ? " " : "",
		    n));
		free(b);
	}
	s->threads[s->nthr++] = t;
	s->ntracks++;
	if (b == NULL)
		s->err = -MT_E_NOMEM;
	return t;
}

int
sym_name_thread(struct sym *s, struct sym_thread *t, uint32_t pid,
    const char *comm)
{
	struct sym_proc *p;

	t->comm = sym_cintern(s, comm);
	if (pid != 0 && t->pid == 0 && (p = get_proc(s, pid)) != NULL) {
		t->pid = pid;
		t->proc = p->index;
	}
	return s->err;
}

const struct sym_proc *
sym_proc(const struct sym *s, uint32_t index)
{
	return index < s->nproc ? s->procs[index] : NULL;
}

uint32_t
sym_nthreads(const struct sym *s)
{
	return s->nthr - s->ntracks;
}

uint32_t
sym_ntracks(const struct sym *s)
{
	return s->ntracks;
}

const struct sym_thread *
sym_thread_at(const struct sym *s, uint32_t index)
{
	return index < s->nthr ? s->threads[index] : NULL;
}
