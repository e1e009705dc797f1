/* SPDX-License-Identifier: MIT */
/*
 * Parallel decode (parallel.h): the buffers, and large buffers cut into
 * segments at PSBs, are units of work; worker threads claim units in
 * order, decode each into a temporary file with a fork of the run, and
 * the calling thread copies the files to the output in order as they
 * complete, joining a buffer's segments where they meet (from the mark of
 * the segment the one before joined, with relative times shifted by the
 * instructions before it).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <intel-pt.h>

#include "decode.h"
#include "err.h"
#include "events.h"
#include "image.h"
#include "parallel.h"
#include "runs.h"
#include "snap.h"

#define PAR_COPY (1u << 20)	/* bytes copied at once */
#define PAR_MIN_SEG (1u << 20)	/* smallest segment of a split buffer */
#define PAR_TIMED_JOBS 16	/* timed traces: segments sized for 16 */

/* One unit's result. */
struct par_slot {
	int fd;			/* its stream (after hdr bytes), -1 none */
	uint64_t hdr;		/* header bytes the private writer wrote */
	int rc;			/* dec_fork_unit's result */
	int done;
	struct decode_stats st;
	struct dec_unit_res res;
};

struct par {
	struct dec_run *r;
	struct image_set *is;
	const struct mt_snap *s;
	size_t nbuf;		/* buffers */
	size_t n;		/* units */
	struct dec_unit *unit;
	struct dec_sig *sig;	/* unit i (seg > 0): sig[i], its first event */
	size_t window;		/* units decoded ahead of the output */
	uint32_t *tids;		/* distinct tids in order of first buffer */
	size_t *nseen;		/* buffer i: tids[0..nseen[i]) came before */
	struct par_slot *slot;
	pthread_mutex_t mu;	/* everything below, and image_set_image */
	pthread_cond_t cv;
	size_t next;		/* next buffer to claim */
	size_t written;		/* buffers copied to the output */
	int abort;
	int timed;		/* par_timed(): every unit gets a fresh view */
	int split;		/* untimed buffers may be cut (par_decode) */
	struct decode_stats wst;	/* workers' walk counters */
};

/* A worker's copies of the images it has needed. */
struct par_worker {
	struct par *p;
	const void **srcs;	/* the set image each img copies */
	struct pt_image **img;
	size_t nimg;
	struct image_view *view;	/* timed: the current unit's */
	int nomem;
};

static struct pt_image *
par_image(void *arg, uint32_t pid, uint64_t time, uint64_t *next)
{
	struct par_worker *wk = arg;
	struct pt_image *src, *img, **ni;
	const void **np;
	size_t i;

	pthread_mutex_lock(&wk->p->mu);
	if (wk->view != NULL) {
		img = image_view_image_at(wk->view, pid, time, next);
		pthread_mutex_unlock(&wk->p->mu);
		if (img == NULL)
			wk->nomem = 1;
		return img;
	}
	/* The worker's copy of the set's image for that time. */
	src = image_set_image_at(wk->p->is, pid, time, next);
	pthread_mutex_unlock(&wk->p->mu);
	if (src == NULL) {
		wk->nomem = 1;
		return NULL;
	}
	for (i = 0; i < wk->nimg; i++)
		if (wk->srcs[i] == src)
			return wk->img[i];
	np = realloc(wk->srcs, (wk->nimg + 1) * sizeof(*np));
	if (np != NULL)
		wk->srcs = np;
	ni = realloc(wk->img, (wk->nimg + 1) * sizeof(*ni));
	if (ni != NULL)
		wk->img = ni;
	img = pt_image_alloc(NULL);
	if (np == NULL || ni == NULL || img == NULL) {
		pt_image_free(img);
		wk->nomem = 1;
		return NULL;
	}
	pthread_mutex_lock(&wk->p->mu);
	pt_image_copy(img, src);
	pthread_mutex_unlock(&wk->p->mu);
	wk->srcs[wk->nimg] = src;
	wk->img[wk->nimg++] = img;
	return img;
}

int
par_tmpfile(void)
{
	const char *dir = getenv("TMPDIR");
	int fd = open(dir && *dir ? dir : "/tmp",
	    O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0)
		fd = memfd_create("mt-decode-j", MFD_CLOEXEC);
	return fd;
}

/* Decode unit @i into slot @i. */
static void
par_one(struct par *p, struct dec_run *c, size_t i)
{
	struct par_slot *sl = &p->slot[i];
	struct dec_unit *u = &p->unit[i];
	struct mt_evw *w = NULL;
	off_t hdr;
	int rc;

	sl->fd = par_tmpfile();
	if (sl->fd < 0) {
		sl->rc = -MT_E_IO;
		return;
	}
	rc = mt_evw_new(&w, sl->fd);
	if (rc >= 0)
		rc = mt_evw_flush(w);
	hdr = lseek(sl->fd, 0, SEEK_CUR);
	if (rc >= 0 && hdr < 0)
		rc = -MT_E_IO;
	sl->hdr = hdr < 0 ? 0 : (uint64_t)hdr;
	u->fd = sl->fd;
	if (rc >= 0)
		rc = dec_fork_unit(c, u, &sl->res, w, &sl->st, p->tids,
		    p->nseen[u->buf]);
	if (rc >= 0)
		rc = mt_evw_free(w);
	else
		mt_evw_free(w);
	sl->rc = rc;
}

static void *
par_worker(void *arg)
{
	struct par_worker *wk = arg;
	struct par *p = wk->p;
	struct dec_run *c = dec_fork(p->r, par_image, wk);
	struct decode_stats st;
	size_t i;
	int rc;

	memset(&st, 0, sizeof(st));
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->abort && p->next < p->n &&
		    p->next - p->written >= p->window)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->abort || p->next >= p->n) {
			pthread_mutex_unlock(&p->mu);
			break;
		}
		i = p->next++;
		rc = p->timed ? image_view_new(&wk->view, p->is) : 0;
		pthread_mutex_unlock(&p->mu);
		if (c == NULL || wk->nomem)
			p->slot[i].rc = -MT_E_NOMEM;
		else if (rc < 0)
			p->slot[i].rc = rc;
		else
			par_one(p, c, i);
		if (wk->nomem && p->slot[i].rc >= 0)
			p->slot[i].rc = -MT_E_NOMEM;
		image_view_free(wk->view);
		wk->view = NULL;
		pthread_mutex_lock(&p->mu);
		p->slot[i].done = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	dec_fork_free(c, &st);
	pthread_mutex_lock(&p->mu);
	p->wst.walks += st.walks;
	p->wst.walk_insns += st.walk_insns;
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Write all of @buf to @fd. */
static int
par_write(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, buf, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -MT_E_IO;
		buf += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Copy @fd from @off to its end to @out. */
static int
par_copy(int fd, uint64_t off, int out, uint8_t *buf)
{
	for (;;) {
		ssize_t n = pread(fd, buf, PAR_COPY, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -MT_E_IO;
		if (n == 0)
			return 0;
		off += (uint64_t)n;
		if (par_write(out, (const char *)buf, (size_t)n) < 0)
			return -MT_E_IO;
	}
}

size_t
par_shift_line(const char *line, size_t len, uint64_t base, char *out)
{
	const char *sp = memchr(line, ' ', len), *e;
	uint64_t t = 0;
	size_t head;
	char dig[20];
	int k;

	if (sp == NULL || (len >= 7 && memcmp(line, "thread ", 7) == 0)) {
		memcpy(out, line, len);
		return len;
	}
	for (e = sp + 1; e < line + len && *e >= '0' && *e <= '9'; e++)
		t = t * 10 + (uint64_t)(*e - '0');
	if (e == sp + 1) {	/* no time field */
		memcpy(out, line, len);
		return len;
	}
	head = (size_t)(sp + 1 - line);
	memcpy(out, line, head);
	/* t + base in decimal (sprintf was a fifth of -j N's CPU) */
	t += base;
	k = 20;
	do {
		dig[--k] = (char)('0' + t % 10);
		t /= 10;
	} while (t != 0);
	memcpy(out + head, dig + k, (size_t)(20 - k));
	k = 20 - k;
	memcpy(out + head + (size_t)k, e, (size_t)(line + len - e));
	return head + (size_t)k + (size_t)(line + len - e);
}

/*
 * Copy @fd from @off to its end to @out, adding @base to the time of
 * each event record (relative times of a later segment).
 */
static int
par_copy_shift(int fd, uint64_t off, int out, uint8_t *buf, uint64_t base)
{
	off_t end = lseek(fd, 0, SEEK_END);
	const char *m, *l, *nl, *stop;
	void *map;
	size_t used = 0, len;
	int rc = 0;

	if (end < 0)
		return -MT_E_IO;
	if ((uint64_t)end <= off)
		return 0;
	map = mmap(NULL, (size_t)end, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -MT_E_IO;
	m = map;
	stop = m + end;
	for (l = m + off; rc == 0 && l < stop; l = nl) {
		nl = memchr(l, '\n', (size_t)(stop - l));
		nl = nl != NULL ? nl + 1 : stop;
		len = (size_t)(nl - l);
		if (used + len + 24 > PAR_COPY) {
			rc = par_write(out, (const char *)buf, used);
			used = 0;
		}
		if (rc == 0 && len + 24 > PAR_COPY) {
			rc = par_write(out, l, len);	/* unshifted: none */
			continue;
		}
		used += par_shift_line(l, len, base, (char *)buf + used);
	}
	if (rc == 0 && used > 0)
		rc = par_write(out, (const char *)buf, used);
	munmap(map, (size_t)end);
	return rc;
}

int
par_stitch(struct par_stitch *ps, size_t i, size_t seg,
    const struct dec_unit_res *res, uint64_t hdr, uint64_t *from,
    uint64_t *base)
{
	int kept;

	if (seg == 0) {		/* a buffer's first unit: from its start */
		ps->want = i;
		ps->from_mark = 0;
		ps->base = 0;
	}
	if (i != ps->want)
		return 0;	/* jumped over by the unit before */
	if (ps->from_mark && !res->marked) {
		ps->want = SIZE_MAX;	/* no block: cannot have been joined */
		return 0;
	}
	*from = ps->from_mark ? res->mark : hdr;
	*base = ps->base;
	kept = ps->from_mark ? 2 : 1;
	if (res->joined >= 0) {
		ps->want = i + 1 + (size_t)res->joined;
		ps->from_mark = 1;
		ps->base += res->stop_icount;
	} else {
		ps->want = SIZE_MAX;	/* it decoded the rest of the buffer */
	}
	return kept;
}

/* PT bytes of unit @i (for progress). */
static uint64_t
par_unit_bytes(const struct par *p, size_t i)
{
	const struct dec_unit *u = &p->unit[i];
	uint64_t end = p->s->aux[u->buf].len;

	if (i + 1 < p->n && p->unit[i + 1].buf == u->buf)
		end = p->unit[i + 1].start;
	return end - u->start;
}

/*
 * Wait until slot @i is done (p->mu held), showing progress on @prog
 * every interval meanwhile: the bytes and events of the units done.
 */
static void
par_wait(struct par *p, size_t i, struct decode_progress *prog)
{
	uint64_t ns, done, events;
	struct timespec ts;
	size_t k;

	while (!p->slot[i].done) {
		if (prog == NULL) {
			pthread_cond_wait(&p->cv, &p->mu);
			continue;
		}
		ns = prog->p.interval_ns ? prog->p.interval_ns : 1000000;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec += (long)(ns % 1000000000u);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&p->cv, &p->mu, &ts) != ETIMEDOUT)
			continue;
		done = events = 0;
		for (k = 0; k < p->n; k++)
			if (p->slot[k].done) {
				done += par_unit_bytes(p, k);
				events += p->slot[k].st.events;
			}
		decode_progress_show(prog, done, events);
	}
}

static void
par_add_stats(struct decode_stats *to, const struct decode_stats *from,
    int sign)
{
	uint64_t *t = (uint64_t *)to;
	const uint64_t *f = (const uint64_t *)from;
	size_t i;

	_Static_assert(sizeof(struct decode_stats) % sizeof(uint64_t) == 0,
	    "decode_stats holds only u64 counters");
	for (i = 0; i < sizeof(*to) / sizeof(uint64_t); i++)
		t[i] += sign > 0 ? f[i] : -f[i];
}

/* Segment size: MT_DECODE_SEGMENT_BYTES (tests), else 1 MiB at least. */
static uint64_t
par_seg_size(uint64_t total, int jobs)
{
	const char *e = getenv("MT_DECODE_SEGMENT_BYTES");
	uint64_t min = PAR_MIN_SEG, want;
	char *end;

	if (e != NULL && *e != '\0') {
		errno = 0;
		want = strtoull(e, &end, 10);
		if (errno == 0 && *end == '\0' && want >= 64)
			min = want;
	}
	want = total / (4 * (uint64_t)jobs);
	return want > min ? want : min;
}

/*
 * PSB offsets that cut buffer @b into segments of about @seg bytes, each
 * with the event its decoder reports first (units and sigs appended).
 */
static int
par_split(struct par *p, size_t b, uint64_t seg)
{
	const struct mt_snap_aux *a = &p->s->aux[b];
	struct pt_packet_decoder *pd;
	struct pt_config cfg;
	uint64_t x, psb, after, last = 0;
	int tries;

	pt_config_init(&cfg);
	cfg.begin = a->data;
	cfg.end = a->data + a->len;
	pd = pt_pkt_alloc_decoder(&cfg);
	if (pd == NULL)
		return -MT_E_NOMEM;
	for (x = seg; x + seg / 2 < a->len; x += seg) {
		if (x <= last)
			continue;
		if (pt_pkt_sync_set(pd, x) < 0)
			break;
		for (tries = 0; tries < 16; tries++) {
			if (pt_pkt_sync_forward(pd) < 0 ||
			    pt_pkt_get_sync_offset(pd, &psb) < 0)
				goto done;
			if (psb <= last || psb >= a->len)
				goto done;
			/*
			 * Timed: the segment's output starts at the PSB
			 * after its own, once its decoder has calibrated
			 * the cycle counter as the one before has (see
			 * struct dec_unit).
			 */
			after = 0;
			if (p->timed && (pt_pkt_sync_forward(pd) < 0 ||
			    pt_pkt_get_sync_offset(pd, &after) < 0))
				goto done;
			if (dec_seg_sig(p->r, b, psb, after,
			    &p->sig[p->n]) == 0)
				break;
		}
		if (tries == 16)
			continue;
		p->unit[p->n].buf = b;
		p->unit[p->n].seg = p->unit[p->n - 1].seg + 1;
		p->unit[p->n].start = psb;
		if (p->timed)
			p->unit[p->n].self = &p->sig[p->n];
		/* The next cut starts past this one's first event. */
		last = p->timed ? p->sig[p->n].off : psb;
		p->n++;
	}
done:
	pt_pkt_free_decoder(pd);
	return 0;
}

/* Known threads of every buffer, in buffer order; 0 if one is not. */
static int
par_plan(struct par *p, int jobs)
{
	size_t i, j, k, nt = 0, cap;
	uint64_t total = 0, seg;
	uint32_t pid, tid;
	int rc;

	p->tids = calloc(p->nbuf + 1, sizeof(*p->tids));
	p->nseen = calloc(p->nbuf + 1, sizeof(*p->nseen));
	if (p->tids == NULL || p->nseen == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < p->nbuf; i++) {
		if (!dec_static_tid(p->r, i, &pid, &tid))
			return 0;
		p->nseen[i] = nt;
		for (j = 0; j < nt && p->tids[j] != tid; j++)
			;
		if (j == nt)
			p->tids[nt++] = tid;
		/* Images are created here, not by racing workers. */
		if (image_set_image(p->is, pid) == NULL)
			return -MT_E_NOMEM;
		total += p->s->aux[i].len;
	}
	/* Timed: the same segments whatever -j (see par_timed). */
	if (p->timed)
		jobs = PAR_TIMED_JOBS;
	seg = jobs > 1 && (p->timed || p->split) ?
	    par_seg_size(total, jobs) : UINT64_MAX;
	for (cap = p->nbuf, i = 0; i < p->nbuf; i++)
		if (p->s->aux[i].len >= 2 * seg)
			cap += p->s->aux[i].len / seg + 1;
	p->unit = calloc(cap + 1, sizeof(*p->unit));
	p->sig = calloc(cap + 1, sizeof(*p->sig));
	p->slot = calloc(cap + 1, sizeof(*p->slot));
	if (p->unit == NULL || p->sig == NULL || p->slot == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < p->nbuf; i++) {
		k = p->n;
		p->unit[p->n++].buf = i;
		if (p->s->aux[i].len >= 2 * seg) {
			rc = par_split(p, i, seg);
			if (rc < 0)
				return rc;
		}
		for (j = k; j < p->n; j++) {
			p->unit[j].next = &p->sig[j + 1];
			p->unit[j].nnext = p->n - j - 1;
		}
	}
	for (i = 0; i < p->n; i++)
		p->slot[i].fd = -1;
	return 1;
}

int
par_timed(const struct mt_snap *s)
{
	return s->has_ptcfg &&
	    (s->ptcfg.config & (MT_PT_CFG_CYC | MT_PT_CFG_MTC)) != 0;
}

/* Start up to @jobs workers on @p (mutex and condition set up). */
static int
par_start(struct par *p, int jobs, pthread_t **th, struct par_worker **wk,
    size_t *nth)
{
	size_t k;

	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	*nth = 0;
	*th = calloc((size_t)jobs, sizeof(**th));
	*wk = calloc((size_t)jobs, sizeof(**wk));
	if (*th == NULL || *wk == NULL)
		return -MT_E_NOMEM;
	for (k = 0; k < (size_t)jobs; k++) {
		(*wk)[k].p = p;
		if (decode_thread_start(&(*th)[k], par_worker, &(*wk)[k]) != 0)
			break;
		(*nth)++;
	}
	return *nth == 0 ? -MT_E_NOMEM : 0;
}

/* Stop the workers of par_start and free their images. */
static void
par_stop(struct par *p, int jobs, pthread_t *th, struct par_worker *wk,
    size_t nth)
{
	size_t i, k;

	pthread_mutex_lock(&p->mu);
	p->abort = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (k = 0; k < nth; k++)
		pthread_join(th[k], NULL);
	for (k = 0; wk != NULL && k < (size_t)jobs; k++) {
		for (i = 0; i < wk[k].nimg; i++)
			pt_image_free(wk[k].img[i]);
		free(wk[k].img);
		free(wk[k].srcs);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(th);
	free(wk);
}

int
par_decode(struct dec_run *r, const struct mt_snap *s, struct image_set *is,
    struct decode_stats *st, int jobs, int split, int out_fd,
    struct mt_evw *w, struct decode_progress *prog)
{
	struct par p;
	struct par_worker *wk = NULL;
	struct par_slot *sl;
	pthread_t *th = NULL;
	uint8_t *buf = NULL;
	struct par_stitch ps = { 0, 0, 0 };
	uint64_t lo, hi, base, from;
	size_t i, nth = 0;
	int rc, used, shift = !dec_perf_clock(r);

	memset(&p, 0, sizeof(p));
	p.r = r;
	p.is = is;
	p.s = s;
	p.nbuf = s->naux;
	p.timed = par_timed(s);
	p.split = split;
	if (p.nbuf < 1 || (jobs < 2 && !p.timed))
		return PAR_SEQUENTIAL;
	rc = par_plan(&p, jobs);
	/*
	 * One unit: nothing to share.  Timed with -j 1 and whole buffers:
	 * the sequential loop gives the same bytes (a view per buffer);
	 * split buffers need the joins (one worker).
	 */
	if (rc == 1 && (p.n < 2 || (jobs < 2 && p.n == p.nbuf)))
		rc = 0;
	if (rc <= 0) {
		/* (PAR_SEQUENTIAL is 1 too: not par_plan's "planned") */
		rc = rc == 0 ? PAR_SEQUENTIAL : rc;
		goto out;
	}
	rc = 0;
	/* The function tables are made on first use: now, not in workers. */
	(void)image_set_fn_lookup(is, 0, &lo, &hi);
	if ((size_t)jobs > p.n)
		jobs = (int)p.n;
	p.window = 2 * (size_t)jobs;
	rc = mt_evw_flush(w);
	if (rc < 0)
		goto out;
	buf = malloc(PAR_COPY);
	if (buf == NULL) {
		rc = -MT_E_NOMEM;
		goto out;
	}
	rc = par_start(&p, jobs, &th, &wk, &nth);
	/*
	 * Write the units in order as they complete: a buffer's first
	 * unit from its start, then from the unit it joined on (from its
	 * mark), skipping the ones jumped over.
	 */
	for (i = 0; rc == 0 && i < p.n; i++) {
		sl = &p.slot[i];
		pthread_mutex_lock(&p.mu);
		par_wait(&p, i, prog);
		pthread_mutex_unlock(&p.mu);
		used = par_stitch(&ps, i, p.unit[i].seg, &sl->res, sl->hdr,
		    &from, &base);
		if (used && sl->rc >= 0) {
			if (shift && base > 0)
				rc = par_copy_shift(sl->fd, from, out_fd, buf,
				    base);
			else
				rc = par_copy(sl->fd, from, out_fd, buf);
			par_add_stats(st, &sl->st, 1);
			if (used == 2) {
				par_add_stats(st, &sl->res.mark_st, -1);
				st->seg_joins++;
			}
		}
		if (rc == 0 && used && sl->rc < 0)
			rc = sl->rc;
		if (sl->fd >= 0)
			close(sl->fd);
		sl->fd = -1;
		if (prog != NULL) {
			prog->done += par_unit_bytes(&p, i);
			/* MT_PROGRESS_INTERVAL_MS=0: a line per unit. */
			if (prog->p.interval_ns == 0)
				decode_progress_show(prog, prog->done,
				    st->events);
		}
		pthread_mutex_lock(&p.mu);
		p.written = i + 1;
		pthread_cond_broadcast(&p.cv);
		pthread_mutex_unlock(&p.mu);
	}
	par_stop(&p, jobs, th, wk, nth);
	for (i = 0; i < p.n; i++)
		if (p.slot[i].fd >= 0 && p.slot[i].done)
			close(p.slot[i].fd);
	st->walks += p.wst.walks;
	st->walk_insns += p.wst.walk_insns;
out:
	free(buf);
	free(p.tids);
	free(p.nseen);
	free(p.slot);
	free(p.unit);
	free(p.sig);
	return rc;
}

int
par_decode_runs(struct dec_run *r, const struct mt_snap *s,
    struct image_set *is, struct decode_stats *st, int jobs, struct runs *rs,
    struct decode_progress *prog)
{
	struct par p;
	struct par_worker *wk = NULL;
	pthread_t *th = NULL;
	uint64_t lo, hi;
	size_t i, nth = 0;
	int rc;

	if (s->naux < 2 || jobs < 2)
		return PAR_SEQUENTIAL;
	memset(&p, 0, sizeof(p));
	p.timed = par_timed(s);
	p.r = r;
	p.is = is;
	p.s = s;
	p.nbuf = p.n = s->naux;
	p.window = p.n;		/* nothing is written before the merge */
	p.unit = calloc(p.n, sizeof(*p.unit));
	p.slot = calloc(p.n, sizeof(*p.slot));
	p.nseen = calloc(p.n, sizeof(*p.nseen));
	if (p.unit == NULL || p.slot == NULL || p.nseen == NULL) {
		rc = -MT_E_NOMEM;
		goto out;
	}
	for (i = 0; i < p.n; i++) {
		p.unit[i].buf = i;
		p.unit[i].runs = &rs[i];
		p.slot[i].fd = -1;
	}
	/* The function tables are made on first use: now, not in workers. */
	(void)image_set_fn_lookup(is, 0, &lo, &hi);
	if ((size_t)jobs > p.n)
		jobs = (int)p.n;
	rc = par_start(&p, jobs, &th, &wk, &nth);
	for (i = 0; rc == 0 && i < p.n; i++) {
		pthread_mutex_lock(&p.mu);
		par_wait(&p, i, prog);
		pthread_mutex_unlock(&p.mu);
		rs[i].fd = p.slot[i].fd;	/* rs owns it now */
		p.slot[i].fd = -1;
		rc = p.slot[i].rc < 0 ? p.slot[i].rc : 0;
		par_add_stats(st, &p.slot[i].st, 1);
		if (prog != NULL)
			prog->done += s->aux[i].len;
	}
	par_stop(&p, jobs, th, wk, nth);
	for (i = 0; i < p.n; i++)
		if (p.slot[i].fd >= 0 && p.slot[i].done)
			close(p.slot[i].fd);
	st->walks += p.wst.walks;
	st->walk_insns += p.wst.walk_insns;
out:
	free(p.unit);
	free(p.slot);
	free(p.nseen);
	return rc;
}
