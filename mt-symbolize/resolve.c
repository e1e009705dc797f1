/* SPDX-License-Identifier: MIT */
/*
 * The resolver (resolve.h).  Three open-addressing hash tables: the
 * address cache ((pid, generation, epoch, address) -> loc id), and two
 * string tables interning fn keys (dso, start, name) and source paths.  A
 * process's generation changes when a mod record replaces part of an
 * earlier mapping (dlclose then dlopen of another file at the same
 * place), so cached ids never outlive what they describe.
 *
 * Mod records with a time (events 1.2) say when each mapping appeared:
 * a timed mapping over other code mapped before it (in the order below)
 * replaces that code from its time on.  As mt-decode's images
 * (mt-decode/epochs.h): the mappings are ordered untimed ones first, in
 * arrival order, then timed ones by time (ties in arrival order); the
 * times of the replacing ones cut the process's time into epochs; at a
 * time in epoch e, an address belongs to the last mapping in that order
 * that covers it and is not a replacing one of a later epoch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "dso.h"
#include "err.h"
#include "events.h"
#include "pages.h"
#include "resolve.h"
#include "textsyms.h"

#define KERNEL_START 0xffff800000000000ull
#define KERNEL_PID UINT32_MAX

/* A binary named by mod records; opened on first use. */
struct dso_ent {
	char *path;		/* as recorded; owned */
	char *build_id;		/* hex or ""; owned */
	struct sym_dso *dso;	/* owned; NULL until opened */
	int opened;		/* 1 once sym_dso_open() ran */
};

struct mapping {
	uint64_t start, end;	/* [start, end) in the process */
	uint64_t pgoff;		/* file offset of start */
	size_t dso;		/* index into r->dsos */
	uint64_t time;		/* perf ns it appeared, 0: from the start */
	int repl;		/* timed, over other code before it: holds
				 * the addresses only from its time on */
};

struct proc {
	uint32_t pid;
	uint32_t gen;		/* bumped when a mapping is replaced */
	struct mapping *maps;	/* in arrival order; owned */
	size_t nmaps, cap;
	uint64_t *ep;		/* times of the replacing mappings,
				 * ascending, distinct: epoch e starts at
				 * ep[e - 1]; owned */
	size_t nep;
	int ep_stale;		/* maps changed since ep was made */
};

struct addr_slot {
	uint64_t addr;
	uint32_t pid;
	uint32_t gen;
	uint32_t ep;		/* epoch of the process */
	uint32_t loc;		/* 0: empty slot */
};

/* 16 bytes: the hash is computed again when the table grows */
struct str_slot {
	char *key;		/* owned; NULL: empty */
	uint32_t len;		/* key bytes (may hold NULs) */
	uint32_t id;
};

struct strtab {
	struct str_slot *v;	/* owned */
	size_t cap, n;		/* cap is a power of two */
};

struct sym_res {
	const struct sym_res_opts *o;
	struct dso_ent *dsos;	/* owned */
	size_t ndsos, capdsos;
	struct proc *procs;	/* owned */
	size_t nprocs, capprocs;
	size_t last_proc;	/* index of the last process looked up */
	struct addr_slot *cache;	/* owned */
	size_t cache_cap, cache_n;
	struct strtab fns, files;
	struct strtab dsonames;	/* paths in fns keys, by id: not emitted */
	uint32_t next_loc;	/* last loc id given */
	struct sym_res_stats st;
};

static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static uint64_t
hash_bytes(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ull;
	}
	return mix64(h);
}

/* Finds or adds @key; *@isnew says which.  Returns the id or 0 (ENOMEM). */
static uint32_t
strtab_intern(struct strtab *t, const char *key, size_t len, int *isnew)
{
	uint64_t h = hash_bytes(key, len);
	size_t i;

	*isnew = 0;
	if (len > UINT32_MAX)
		return 0;
	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024, j;
		struct str_slot *v = calloc(cap, sizeof(*v));

		if (v == NULL)
			return 0;
		for (j = 0; j < t->cap; j++) {
			if (t->v[j].key == NULL)
				continue;
			for (i = hash_bytes(t->v[j].key, t->v[j].len) &
			    (cap - 1); v[i].key != NULL;
			    i = (i + 1) & (cap - 1))
				;
			v[i] = t->v[j];
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
	}
	for (i = h & (t->cap - 1); t->v[i].key != NULL;
	    i = (i + 1) & (t->cap - 1)) {
		if (t->v[i].len == len &&
		    memcmp(t->v[i].key, key, len) == 0)
			return t->v[i].id;
	}
	t->v[i].key = malloc(len + 1);
	if (t->v[i].key == NULL)
		return 0;
	memcpy(t->v[i].key, key, len);
	t->v[i].key[len] = '\0';
	t->v[i].len = (uint32_t)len;
	t->v[i].id = (uint32_t)++t->n;
	*isnew = 1;
	return t->v[i].id;
}

static void
strtab_release(struct strtab *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->v[i].key);
	free(t->v);
}

int
sym_res_new(struct sym_res **rp, const struct sym_res_opts *o)
{
	struct sym_res *r = calloc(1, sizeof(*r));

	*rp = NULL;
	if (r == NULL)
		return -MT_E_NOMEM;
	r->o = o;
	r->cache_cap = 1 << 10;	/* grows at half full */
	r->cache = sym_pages_new(r->cache_cap * sizeof(*r->cache));
	if (r->cache == NULL) {
		free(r);
		return -MT_E_NOMEM;
	}
	*rp = r;
	return 0;
}

void
sym_res_free(struct sym_res *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->ndsos; i++) {
		sym_dso_free(r->dsos[i].dso);
		free(r->dsos[i].path);
		free(r->dsos[i].build_id);
	}
	free(r->dsos);
	for (i = 0; i < r->nprocs; i++) {
		free(r->procs[i].maps);
		free(r->procs[i].ep);
	}
	free(r->procs);
	sym_pages_free(r->cache, r->cache_cap * sizeof(*r->cache));
	strtab_release(&r->fns);
	strtab_release(&r->files);
	strtab_release(&r->dsonames);
	free(r);
}

void
sym_res_stats(const struct sym_res *r, struct sym_res_stats *s)
{
	*s = r->st;
}

static int
grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	p = realloc(*v, c * size);
	if (p == NULL)
		return -MT_E_NOMEM;
	*v = p;
	*cap = c;
	return 0;
}

static struct proc *
find_proc(struct sym_res *r, uint32_t pid, int create)
{
	struct proc *p;
	size_t i;

	if (r->last_proc < r->nprocs && r->procs[r->last_proc].pid == pid)
		return &r->procs[r->last_proc];
	for (i = 0; i < r->nprocs; i++) {
		if (r->procs[i].pid == pid) {
			r->last_proc = i;
			return &r->procs[i];
		}
	}
	if (!create || grow((void **)&r->procs, &r->capprocs, r->nprocs,
	    sizeof(*r->procs)) < 0)
		return NULL;
	p = &r->procs[r->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	r->last_proc = r->nprocs++;
	return p;
}

static int
find_dso(struct sym_res *r, const char *path, const char *build_id,
    size_t *idx)
{
	struct dso_ent *d;
	size_t i;

	for (i = 0; i < r->ndsos; i++) {
		if (strcmp(r->dsos[i].path, path) == 0 &&
		    strcmp(r->dsos[i].build_id, build_id) == 0) {
			*idx = i;
			return 0;
		}
	}
	if (grow((void **)&r->dsos, &r->capdsos, r->ndsos,
	    sizeof(*r->dsos)) < 0)
		return -MT_E_NOMEM;
	d = &r->dsos[r->ndsos];
	memset(d, 0, sizeof(*d));
	d->path = strdup(path);
	d->build_id = strdup(build_id);
	if (d->path == NULL || d->build_id == NULL) {
		free(d->path);
		free(d->build_id);
		return -MT_E_NOMEM;
	}
	*idx = r->ndsos++;
	return 0;
}

int
sym_res_add_mod(struct sym_res *r, uint32_t pid, uint64_t start,
    uint64_t end, uint64_t pgoff, const char *build_id, const char *path,
    uint64_t time)
{
	struct proc *p = find_proc(r, pid, 1);
	struct mapping *m;
	size_t idx, i;
	int rc;

	if (p == NULL)
		return -MT_E_NOMEM;
	rc = find_dso(r, path ? path : "", build_id ? build_id : "", &idx);
	if (rc < 0)
		return rc;
	for (i = 0; i < p->nmaps; i++) {
		m = &p->maps[i];
		if (m->start < end && start < m->end && (m->dso != idx ||
		    m->start - m->pgoff != start - pgoff)) {
			p->gen++;
			break;
		}
	}
	if (grow((void **)&p->maps, &p->cap, p->nmaps, sizeof(*p->maps)) < 0)
		return -MT_E_NOMEM;
	m = &p->maps[p->nmaps++];
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->dso = idx;
	m->time = time;
	m->repl = 0;
	p->ep_stale = 1;
	return 0;
}

/* Is @a before @b in the order of the file comment? */
static int
map_before(const struct proc *p, size_t a, size_t b)
{
	const struct mapping *x = &p->maps[a], *y = &p->maps[b];

	return x->time != y->time ? x->time < y->time : a < b;
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Mark @p's replacing mappings and list their times.  Returns 0 or
 * -MT_E_NOMEM. */
static int
make_epochs(struct proc *p)
{
	size_t i, j, n = 0;

	free(p->ep);
	p->ep = NULL;
	p->nep = 0;
	for (i = 0; i < p->nmaps; i++) {
		struct mapping *m = &p->maps[i];

		m->repl = 0;
		for (j = 0; m->time != 0 && j < p->nmaps && !m->repl; j++) {
			const struct mapping *o = &p->maps[j];

			if (j != i && map_before(p, j, i) &&
			    o->start < m->end && m->start < o->end &&
			    (o->dso != m->dso ||
			    o->start - o->pgoff != m->start - m->pgoff))
				m->repl = 1;
		}
		n += (size_t)m->repl;
	}
	if (n > 0 && (p->ep = malloc(n * sizeof(*p->ep))) == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].repl)
			p->ep[p->nep++] = p->maps[i].time;
	if (p->nep > 1)
		qsort(p->ep, p->nep, sizeof(*p->ep), u64_cmp);
	for (i = j = 0; i < p->nep; i++)
		if (j == 0 || p->ep[j - 1] != p->ep[i])
			p->ep[j++] = p->ep[i];
	p->nep = j;
	p->ep_stale = 0;
	return 0;
}

/* The epoch of @p at @time in *@ep.  Returns 0 or -MT_E_NOMEM. */
static int
proc_epoch(struct proc *p, uint64_t time, uint32_t *ep)
{
	size_t lo = 0, hi;
	int rc;

	*ep = 0;
	if (p == NULL)
		return 0;
	if (p->ep_stale && (rc = make_epochs(p)) < 0)
		return rc;
	for (hi = p->nep; lo < hi;) {	/* how many start at or before */
		size_t mid = lo + (hi - lo) / 2;

		if (p->ep[mid] <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	*ep = (uint32_t)lo;
	return 0;
}

int
sym_res_epoch(struct sym_res *r, uint32_t pid, uint64_t time, uint32_t *ep)
{
	return proc_epoch(find_proc(r, pid, 0), time, ep);
}

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s && s[1] ? s + 1 : p;
}

/* A resolved frame before interning. */
struct rframe {
	const char *name;	/* raw name, or NULL */
	uint64_t start;		/* process address, 0 inlined/unknown; with
				 * a NULL name the FDE's start, 0 none */
	const char *file;	/* source path or NULL */
	uint32_t line;
	const char *ifunc;	/* the IFUNC that may pick this function
				 * (sym_dso_ifunc), or NULL */
};

static int
intern_fn(struct sym_res *r, const char *dso, const struct rframe *f,
    uint64_t addr, uint32_t *id)
{
	char unknown[64 + 4096], *dem = NULL, *key;
	const char *name = f->name;
	size_t nl, len;
	uint64_t start = f->start;
	uint32_t dsoid;
	int isnew, rc = 0;
	struct mt_ev ev;

	if ((name == NULL || name[0] == '\0') && start != 0) {
		/* No symbol, but an FDE: one identity for its whole range. */
		snprintf(unknown, sizeof(unknown), "[unknown fn 0x%llx (%s)]",
		    (unsigned long long)start, base_name(dso));
		name = unknown;
	} else if (name == NULL || name[0] == '\0') {
		snprintf(unknown, sizeof(unknown), "[unknown @ 0x%llx (%s)]",
		    (unsigned long long)addr, dso[0] ? base_name(dso) :
		    "unmapped");
		name = unknown;
		start = addr;
	} else if (r->o->demangle && (dem = sym_demangle(name, 1)) != NULL) {
		name = dem;
	}
	/* The key: (the DSO's path, start, name), the path by its id, so
	 * that a trace's thousands of unnamed addresses in one long path
	 * do not each hold a copy of it. */
	dsoid = strtab_intern(&r->dsonames, dso, strlen(dso), &isnew);
	nl = strlen(name);
	len = sizeof(dsoid) + sizeof(start) + nl;
	key = dsoid != 0 ? malloc(len) : NULL;
	if (key == NULL) {
		free(dem);
		return -MT_E_NOMEM;
	}
	memcpy(key, &dsoid, sizeof(dsoid));
	memcpy(key + sizeof(dsoid), &start, sizeof(start));
	memcpy(key + sizeof(dsoid) + sizeof(start), name, nl);
	*id = strtab_intern(&r->fns, key, len, &isnew);
	free(key);
	if (*id == 0)
		rc = -MT_E_NOMEM;
	else if (isnew) {
		memset(&ev, 0, sizeof(ev));
		ev.kind = MT_EV_FN;
		ev.id = *id;
		ev.addr[0] = start;
		ev.str[0] = dso;
		ev.str[1] = name;
		ev.str[2] = f->ifunc;
		rc = r->o->emit(r->o->emit_ctx, &ev);
	}
	free(dem);
	return rc;
}

static int
intern_file(struct sym_res *r, const char *path, uint32_t *id)
{
	struct mt_ev ev;
	int isnew;

	*id = 0;
	if (path == NULL || path[0] == '\0')
		return 0;
	*id = strtab_intern(&r->files, path, strlen(path), &isnew);
	if (*id == 0)
		return -MT_E_NOMEM;
	if (!isnew)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.kind = MT_EV_FILE;
	ev.id = *id;
	ev.str[0] = path;
	return r->o->emit(r->o->emit_ctx, &ev);
}

/* The mapping of @addr in @p in epoch @ep (see the file comment). */
static const struct mapping *
find_mapping(const struct proc *p, uint64_t addr, uint32_t ep)
{
	const struct mapping *best = NULL, *m;
	uint64_t end = p != NULL && ep < p->nep ? p->ep[ep] : UINT64_MAX;
	size_t i;

	/* Nothing replaced at a time: the last one covering it. */
	for (i = p != NULL && p->nep == 0 ? p->nmaps : 0; i > 0; i--)
		if (addr >= p->maps[i - 1].start && addr < p->maps[i - 1].end)
			return &p->maps[i - 1];
	for (i = 0; p != NULL && p->nep > 0 && i < p->nmaps; i++) {
		m = &p->maps[i];
		if (addr < m->start || addr >= m->end ||
		    (m->repl && m->time >= end))
			continue;
		if (best == NULL || m->time >= best->time)
			best = m;
	}
	return best;
}

/* Frames from the binary behind @m; returns the count. */
static int
from_dso(struct sym_res *r, const struct mapping *m, uint64_t addr,
    struct rframe *rf)
{
	struct sym_frame fr[SYM_MAX_FRAMES];
	struct dso_ent *d = &r->dsos[m->dso];
	uint64_t vaddr;
	int n, i;

	if (d->path[0] != '/' && d->build_id[0] == '\0')
		return 0;	/* [vdso], anonymous memory without a file */
	if (!d->opened) {
		d->opened = 1;
		if (sym_dso_open(&d->dso, d->path, d->build_id,
		    r->o->dso) < 0)
			return -MT_E_NOMEM;
		/* "[vdso]" and the like are often absent: no noise. */
		if (sym_dso_warning(d->dso) != NULL && d->path[0] == '/')
			r->o->warn(r->o->warn_ctx, sym_dso_warning(d->dso));
	}
	if (d->dso == NULL || !sym_dso_ok(d->dso) ||
	    sym_dso_off_to_vaddr(d->dso, addr - m->start + m->pgoff,
	    &vaddr) != 0)
		return 0;
	n = sym_dso_lookup(d->dso, vaddr, SYM_RULES_TRACE, fr,
	    MT_EV_MAX_FRAMES);
	for (i = 0; i < n; i++) {
		rf[i].name = fr[i].name;
		rf[i].start = i == 0 && fr[i].start != 0 ?
		    fr[i].start - vaddr + addr : 0;
		rf[i].file = fr[i].file;
		rf[i].line = fr[i].line;
		rf[i].ifunc = i == 0 && fr[i].start != 0 ?
		    sym_dso_ifunc(d->dso, fr[i].start) : NULL;
	}
	return n;
}

static int
from_text(const struct sym_textsyms *t, uint64_t addr, struct rframe *rf)
{
	const struct sym_textsym *s = t ? sym_textsyms_find(t, addr) : NULL;

	if (s == NULL)
		return 0;
	rf->name = s->name;
	rf->start = s->start;
	rf->file = NULL;
	rf->line = 0;
	rf->ifunc = NULL;
	return 1;
}

static int
resolve(struct sym_res *r, uint32_t pid, uint64_t addr, uint32_t ep,
    uint32_t *loc)
{
	struct rframe rf[MT_EV_MAX_FRAMES];
	const struct mapping *m = NULL;
	const char *dso = "";
	struct mt_ev ev;
	int n = 0, i, rc;
	size_t k;

	if (addr >= KERNEL_START) {
		dso = "[kernel.kallsyms]";
		n = from_text(r->o->kallsyms, addr, rf);
	} else {
		m = find_mapping(find_proc(r, pid, 0), addr, ep);
		if (m != NULL) {
			dso = r->dsos[m->dso].path;
			n = from_dso(r, m, addr, rf);
			if (n < 0)
				return n;
		}
		for (k = 0; n == 0 && k < r->o->nmaps; k++) {
			if (r->o->maps[k].pid != 0 && r->o->maps[k].pid != pid)
				continue;
			n = from_text(r->o->maps[k].syms, addr, rf);
			if (n > 0)
				dso = r->o->maps[k].path;
		}
	}
	r->st.resolved++;
	if (n == 0) {
		r->st.unknown++;
		rf[0].name = NULL;
		rf[0].start = 0;	/* intern_fn: [unknown @ addr] */
		rf[0].file = NULL;
		rf[0].line = 0;
		rf[0].ifunc = NULL;
		n = 1;
	}
	memset(&ev, 0, sizeof(ev));
	ev.kind = MT_EV_LOC;
	ev.addr[0] = addr;
	ev.nframes = (uint32_t)n;
	for (i = 0; i < n; i++) {
		rc = intern_fn(r, dso, &rf[i], addr, &ev.frames[i].fn);
		if (rc == 0)
			rc = intern_file(r, rf[i].file, &ev.frames[i].file);
		if (rc < 0)
			return rc;
		ev.frames[i].line = rf[i].file ? rf[i].line : 0;
	}
	ev.id = *loc = ++r->next_loc;
	return r->o->emit(r->o->emit_ctx, &ev);
}

static uint64_t
slot_hash(uint64_t addr, uint32_t pid, uint32_t gen, uint32_t ep)
{
	return mix64(addr ^ ((uint64_t)pid << 32 | gen) ^
	    (uint64_t)ep << 48);
}

/*
 * Doubles the address cache.  Its entries (at most half the old table)
 * are set aside and the old table given back before the new one is
 * filled, so the two tables are never resident together; the entries go
 * in in the old table's order, as a rehash from it would put them.
 * Returns 0, or -MT_E_NOMEM (the cache is then empty, cache_cap 0, and
 * the resolver only fit to be freed).
 */
static int
cache_grow(struct sym_res *r)
{
	size_t cap = r->cache_cap * 2, i, j, n = 0;
	struct addr_slot *keep, *v;

	keep = sym_pages_new(r->cache_n * sizeof(*keep));
	if (keep == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < r->cache_cap; i++)
		if (r->cache[i].loc != 0)
			keep[n++] = r->cache[i];
	sym_pages_free(r->cache, r->cache_cap * sizeof(*r->cache));
	r->cache = v = sym_pages_new(cap * sizeof(*v));
	r->cache_cap = v != NULL ? cap : 0;
	for (i = 0; v != NULL && i < n; i++) {
		const struct addr_slot *s = &keep[i];

		for (j = slot_hash(s->addr, s->pid, s->gen, s->ep) &
		    (cap - 1); v[j].loc != 0; j = (j + 1) & (cap - 1))
			;
		v[j] = *s;
	}
	sym_pages_free(keep, r->cache_n * sizeof(*keep));
	return v != NULL ? 0 : -MT_E_NOMEM;
}

int
sym_res_addr(struct sym_res *r, uint32_t pid, uint64_t addr, uint64_t time,
    uint32_t *loc)
{
	struct addr_slot *s;
	uint32_t gen = 0, ep = 0;
	size_t i;
	int rc;

	r->st.lookups++;
	if (addr == 0) {
		*loc = 0;
		return 0;
	}
	if (addr >= KERNEL_START) {
		pid = KERNEL_PID;
	} else {
		struct proc *p = find_proc(r, pid, 0);

		gen = p ? p->gen : 0;
		if ((rc = proc_epoch(p, time, &ep)) < 0)
			return rc;
	}
	for (i = slot_hash(addr, pid, gen, ep) & (r->cache_cap - 1);
	    r->cache[i].loc != 0; i = (i + 1) & (r->cache_cap - 1)) {
		s = &r->cache[i];
		if (s->addr == addr && s->pid == pid && s->gen == gen &&
		    s->ep == ep) {
			*loc = s->loc;
			return 0;
		}
	}
	rc = resolve(r, pid, addr, ep, loc);
	if (rc < 0)
		return rc;
	s = &r->cache[i];
	s->addr = addr;
	s->pid = pid;
	s->gen = gen;
	s->ep = ep;
	s->loc = *loc;
	if (2 * ++r->cache_n > r->cache_cap)
		return cache_grow(r);
	return 0;
}
