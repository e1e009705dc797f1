/* SPDX-License-Identifier: MIT */
/*
 * JIT code for the ptrace backend (see emu-jit.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "emu-jit.h"
#include "err.h"
#include "proc.h"
#include "qemu/qcode.h"

#define PAGE	4096ull

struct range {
	uint64_t start, end;
};

/* A page recorded, and the mapping generation it was recorded in. */
struct pgen {
	uint64_t page;
	unsigned gen;
};

struct mt_emu_jit {
	pid_t pid;
	unsigned gen;			/* mapping changes seen, plus 1 */
	struct pgen *pg;		/* pages recorded */
	size_t npg, cappg, last;	/* last: the one looked up last */
	struct qc *qc;			/* the versions */
	struct range *r;		/* executable memory no file's */
	size_t nr, capr;
	int stale;			/* r must be reread */
	struct mt_emu_jit_copy *c;	/* copies recorded */
	size_t nc, capc;
};

struct mt_emu_jit *
mt_emu_jit_new(pid_t pid)
{
	struct mt_emu_jit *j = calloc(1, sizeof(*j));

	if (j == NULL || (j->qc = qc_new()) == NULL) {
		free(j);
		return NULL;
	}
	j->pid = pid;
	j->stale = 1;
	j->gen = 1;
	return j;
}

void
mt_emu_jit_free(struct mt_emu_jit *j)
{
	size_t i;

	if (j == NULL)
		return;
	for (i = 0; i < j->nc; i++)
		free(j->c[i].data);
	free(j->c);
	free(j->r);
	free(j->pg);
	qc_free(j->qc);
	free(j);
}

void
mt_emu_jit_stale(struct mt_emu_jit *j)
{
	j->stale = 1;
	j->gen++;
}

/* The page @page's entry, made (generation 0) when new; NULL: no memory. */
static struct pgen *
pgen_of(struct mt_emu_jit *j, uint64_t page)
{
	size_t i;

	if (j->last < j->npg && j->pg[j->last].page == page)
		return &j->pg[j->last];
	for (i = 0; i < j->npg; i++)
		if (j->pg[i].page == page) {
			j->last = i;
			return &j->pg[i];
		}
	if (j->npg == j->cappg) {
		size_t cap = j->cappg ? j->cappg * 2 : 16;
		struct pgen *n = realloc(j->pg, cap * sizeof(*n));

		if (n == NULL)
			return NULL;
		j->pg = n;
		j->cappg = cap;
	}
	j->pg[j->npg].page = page;
	j->pg[j->npg].gen = 0;
	j->last = j->npg;
	return &j->pg[j->npg++];
}

/* Is @m executable memory that is no file's (nor the kernel's)? */
static int
is_jit_map(const struct mt_proc_map *m)
{
	return (m->prot & PROT_EXEC) && m->path[0] != '/' &&
	    strcmp(m->path, "[vdso]") != 0 &&
	    strcmp(m->path, "[vsyscall]") != 0 &&
	    strcmp(m->path, "[uprobes]") != 0;
}

/* Keep @m when it is JIT code (never a match: every mapping is seen). */
static int
add_jit_map(const struct mt_proc_map *m, void *arg)
{
	struct mt_emu_jit *j = arg;

	if (!is_jit_map(m))
		return 0;
	if (j->nr == j->capr) {
		size_t cap = j->capr ? j->capr * 2 : 16;
		struct range *r = realloc(j->r, cap * sizeof(*r));

		if (r == NULL)
			return 1;
		j->r = r;
		j->capr = cap;
	}
	j->r[j->nr].start = m->start;
	j->r[j->nr].end = m->end;
	j->nr++;
	return 0;
}

/* Reread the ranges from /proc/PID/maps (none when unreadable). */
static void
reread(struct mt_emu_jit *j)
{
	struct mt_proc_map m;

	j->nr = 0;
	j->stale = 0;
	(void)mt_proc_find_map(j->pid, add_jit_map, j, &m);
}

/* The range holding @ip, or NULL. */
static const struct range *
range_of(struct mt_emu_jit *j, uint64_t ip)
{
	size_t i;

	if (j->stale)
		reread(j);
	for (i = 0; i < j->nr; i++)
		if (ip >= j->r[i].start && ip < j->r[i].end)
			return &j->r[i];
	return NULL;
}

int
mt_emu_jit_is(struct mt_emu_jit *j, uint64_t ip)
{
	return range_of(j, ip) != NULL;
}

static int
keep(struct mt_emu_jit *j, uint64_t addr, const uint8_t *data, size_t len,
    uint64_t time)
{
	struct mt_emu_jit_copy *c;

	if (j->nc == j->capc) {
		size_t cap = j->capc ? j->capc * 2 : 16;

		if ((c = realloc(j->c, cap * sizeof(*c))) == NULL)
			return -MT_E_NOMEM;
		j->c = c;
		j->capc = cap;
	}
	c = &j->c[j->nc];
	if ((c->data = malloc(len)) == NULL)
		return -MT_E_NOMEM;
	memcpy(c->data, data, len);
	c->addr = addr;
	c->len = len;
	c->time = time;
	j->nc++;
	return 0;
}

/*
 * Record the page holding @addr (within its range @r), read through
 * @tid; *@time gets the time of its bytes (qc_block).  A page first
 * recorded, or first since the process's mappings changed, is a new
 * version even where its bytes agree: the sideband's record of the
 * mapping (mmap, mprotect), dated at the call, would otherwise hide the
 * older copy in a decoder from that time on.
 */
static int
record_page(struct mt_emu_jit *j, pid_t tid, const struct range *r,
    uint64_t addr, uint64_t (*version)(void *), void *ctx, uint64_t *time)
{
	uint8_t buf[PAGE];
	uint64_t lo = addr & ~(PAGE - 1), hi = lo + PAGE;
	struct iovec local, remote;
	struct pgen *g = pgen_of(j, addr & ~(PAGE - 1));
	ssize_t n;
	int fresh;

	if (lo < r->start)
		lo = r->start;
	if (hi > r->end)
		hi = r->end;
	local.iov_base = buf;
	local.iov_len = (size_t)(hi - lo);
	remote.iov_base = (void *)(uintptr_t)lo;
	remote.iov_len = local.iov_len;
	n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n <= 0)
		return -MT_E_IO;
	if (g == NULL)
		return -MT_E_NOMEM;
	*time = qc_block(j->qc, lo, buf, (size_t)n, version, ctx,
	    g->gen != j->gen, &fresh);
	g->gen = j->gen;
	return fresh ? keep(j, lo, buf, (size_t)n, *time) : 0;
}

int
mt_emu_jit_insn(struct mt_emu_jit *j, pid_t tid, uint64_t ip,
    const uint8_t *code, size_t len, uint64_t (*version)(void *),
    void *ctx, uint64_t *time)
{
	const struct range *r;
	struct pgen *g;
	uint64_t t, last;
	int rc;

	*time = 0;
	if (len == 0 || ((g = pgen_of(j, ip & ~(PAGE - 1))) != NULL &&
	    g->gen == j->gen && ((ip + len - 1) & ~(PAGE - 1)) ==
	    (ip & ~(PAGE - 1)) && qc_known(j->qc, ip, code, len, time)))
		return 0;
	if ((r = range_of(j, ip)) == NULL)
		return 0;
	if ((rc = record_page(j, tid, r, ip, version, ctx, time)) < 0)
		return rc;
	/* An instruction that runs on into the next page. */
	last = ip + len - 1;
	if ((last & ~(PAGE - 1)) != (ip & ~(PAGE - 1)) &&
	    (r = range_of(j, last)) != NULL) {
		if ((rc = record_page(j, tid, r, last, version, ctx, &t)) < 0)
			return rc;
		if (t > *time)
			*time = t;
	}
	return 0;
}

size_t
mt_emu_jit_copies(const struct mt_emu_jit *j,
    const struct mt_emu_jit_copy **out)
{
	*out = j->c;
	return j->nc;
}
