/* SPDX-License-Identifier: MIT */
/*
 * Parallel decode across buffers (parallel.h): worker threads claim
 * buffers in index order, decode each into a temporary file with a fork of
 * the run, and the calling thread copies the files to the output in index
 * order as they complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
#include "snap.h"

#define PAR_COPY (1u << 20)	/* bytes copied at once */

/* One buffer's result. */
struct par_slot {
	int fd;			/* its stream (after hdr bytes), -1 none */
	uint64_t hdr;		/* header bytes the private writer wrote */
	int rc;			/* dec_fork_buffer's result */
	int done;
	struct decode_stats st;
};

struct par {
	struct dec_run *r;
	struct image_set *is;
	size_t n;		/* buffers */
	size_t window;		/* buffers decoded ahead of the output */
	uint32_t *tids;		/* distinct tids in order of first buffer */
	size_t *nseen;		/* buffer i: tids[0..nseen[i]) came before */
	struct par_slot *slot;
	pthread_mutex_t mu;	/* everything below, and image_set_image */
	pthread_cond_t cv;
	size_t next;		/* next buffer to claim */
	size_t written;		/* buffers copied to the output */
	int abort;
	struct decode_stats wst;	/* workers' walk counters */
};

/* A worker's copies of the images it has needed. */
struct par_worker {
	struct par *p;
	uint32_t *pids;
	struct pt_image **img;
	size_t nimg;
	int nomem;
};

static struct pt_image *
par_image(void *arg, uint32_t pid)
{
	struct par_worker *wk = arg;
	struct pt_image *src, *img, **ni;
	uint32_t *np;
	size_t i;

	for (i = 0; i < wk->nimg; i++)
		if (wk->pids[i] == pid)
			return wk->img[i];
	np = realloc(wk->pids, (wk->nimg + 1) * sizeof(*np));
	if (np != NULL)
		wk->pids = np;
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
	src = image_set_image(wk->p->is, pid);
	if (src != NULL)
		pt_image_copy(img, src);
	pthread_mutex_unlock(&wk->p->mu);
	wk->pids[wk->nimg] = pid;
	wk->img[wk->nimg++] = img;
	return img;
}

/* An anonymous temporary file: O_TMPFILE in $TMPDIR or /tmp, or a memfd. */
static int
par_tmpfile(void)
{
	const char *dir = getenv("TMPDIR");
	int fd = open(dir && *dir ? dir : "/tmp",
	    O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0)
		fd = memfd_create("mt-decode-j", MFD_CLOEXEC);
	return fd;
}

/* Decode buffer @i into slot @i. */
static void
par_one(struct par *p, struct dec_run *c, size_t i)
{
	struct par_slot *sl = &p->slot[i];
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
	if (rc >= 0)
		rc = dec_fork_buffer(c, i, w, &sl->st, p->tids, p->nseen[i]);
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
		pthread_mutex_unlock(&p->mu);
		if (c == NULL || wk->nomem)
			p->slot[i].rc = -MT_E_NOMEM;
		else
			par_one(p, c, i);
		if (wk->nomem && p->slot[i].rc >= 0)
			p->slot[i].rc = -MT_E_NOMEM;
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

/* Copy @fd from @off to its end to @out. */
static int
par_copy(int fd, uint64_t off, int out, uint8_t *buf)
{
	for (;;) {
		ssize_t n = pread(fd, buf, PAR_COPY, (off_t)off), m, k;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -MT_E_IO;
		if (n == 0)
			return 0;
		off += (uint64_t)n;
		for (m = 0; m < n; m += k) {
			k = write(out, buf + m, (size_t)(n - m));
			if (k < 0 && errno == EINTR) {
				k = 0;
				continue;
			}
			if (k <= 0)
				return -MT_E_IO;
		}
	}
}

/*
 * Wait until slot @i is done (p->mu held), showing progress on @prog
 * every interval meanwhile: the bytes and events of the buffers done.
 */
static void
par_wait(struct par *p, size_t i, const struct mt_snap *s,
    struct decode_progress *prog)
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
				done += s->aux[k].len;
				events += p->slot[k].st.events;
			}
		decode_progress_show(prog, done, events);
	}
}

static void
par_add_stats(struct decode_stats *to, const struct decode_stats *from)
{
	uint64_t *t = (uint64_t *)to;
	const uint64_t *f = (const uint64_t *)from;
	size_t i;

	_Static_assert(sizeof(struct decode_stats) % sizeof(uint64_t) == 0,
	    "decode_stats holds only u64 counters");
	for (i = 0; i < sizeof(*to) / sizeof(uint64_t); i++)
		t[i] += f[i];
}

/* Known threads of every buffer, in buffer order; 0 if one is not. */
static int
par_plan(struct par *p)
{
	size_t i, j, nt = 0;
	uint32_t pid, tid;

	p->tids = calloc(p->n + 1, sizeof(*p->tids));
	p->nseen = calloc(p->n + 1, sizeof(*p->nseen));
	p->slot = calloc(p->n + 1, sizeof(*p->slot));
	if (p->tids == NULL || p->nseen == NULL || p->slot == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < p->n; i++) {
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
		p->slot[i].fd = -1;
	}
	return 1;
}

int
par_decode(struct dec_run *r, const struct mt_snap *s, struct image_set *is,
    struct decode_stats *st, int jobs, int out_fd, struct mt_evw *w,
    struct decode_progress *prog)
{
	struct par p;
	struct par_worker *wk = NULL;
	pthread_t *th = NULL;
	uint8_t *buf = NULL;
	uint64_t lo, hi;
	size_t i, k, nth = 0;
	int rc;

	memset(&p, 0, sizeof(p));
	p.r = r;
	p.is = is;
	p.n = s->naux;
	if (p.n < 2 || jobs < 2)
		return PAR_SEQUENTIAL;
	/*
	 * With MTC or CYC, times change between branches, and the time
	 * of an event depends on where libipt ended the block before it,
	 * which depends on the block cache its sections share across
	 * decoders (warm or cold): parallel output would differ from run
	 * to run.  TSC-only and relative times do not depend on it.
	 */
	if (s->has_ptcfg && (s->ptcfg.config & (MT_PT_CFG_CYC | MT_PT_CFG_MTC)))
		return PAR_SEQUENTIAL;
	rc = par_plan(&p);
	if (rc == 0)
		rc = PAR_SEQUENTIAL;
	if (rc != 1)
		goto out;
	rc = 0;
	/* The function table is sorted on first use: do it now. */
	(void)image_set_fn_lookup(is, 0, &lo, &hi);
	if ((size_t)jobs > p.n)
		jobs = (int)p.n;
	p.window = 2 * (size_t)jobs;
	rc = mt_evw_flush(w);
	if (rc < 0)
		goto out;
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	th = calloc((size_t)jobs, sizeof(*th));
	wk = calloc((size_t)jobs, sizeof(*wk));
	buf = malloc(PAR_COPY);
	rc = th && wk && buf ? 0 : -MT_E_NOMEM;
	for (k = 0; rc == 0 && k < (size_t)jobs; k++) {
		wk[k].p = &p;
		if (pthread_create(&th[k], NULL, par_worker, &wk[k]) != 0)
			break;
		nth++;
	}
	if (rc == 0 && nth == 0)
		rc = -MT_E_NOMEM;
	/* Write the buffers in order as they complete. */
	for (i = 0; rc == 0 && i < p.n; i++) {
		pthread_mutex_lock(&p.mu);
		par_wait(&p, i, s, prog);
		pthread_mutex_unlock(&p.mu);
		if (p.slot[i].fd >= 0)
			rc = par_copy(p.slot[i].fd, p.slot[i].hdr, out_fd, buf);
		par_add_stats(st, &p.slot[i].st);
		if (prog != NULL) {
			prog->done += s->aux[i].len;
			/* MT_PROGRESS_INTERVAL_MS=0: a line per buffer. */
			if (prog->p.interval_ns == 0)
				decode_progress_show(prog, prog->done,
				    st->events);
		}
		if (rc == 0 && p.slot[i].rc < 0)
			rc = p.slot[i].rc;
		if (p.slot[i].fd >= 0)
			close(p.slot[i].fd);
		p.slot[i].fd = -1;
		pthread_mutex_lock(&p.mu);
		p.written = i + 1;
		pthread_cond_broadcast(&p.cv);
		pthread_mutex_unlock(&p.mu);
	}
	pthread_mutex_lock(&p.mu);
	p.abort = 1;
	pthread_cond_broadcast(&p.cv);
	pthread_mutex_unlock(&p.mu);
	for (k = 0; k < nth; k++)
		pthread_join(th[k], NULL);
	for (k = 0; wk != NULL && k < (size_t)jobs; k++) {
		for (i = 0; i < wk[k].nimg; i++)
			pt_image_free(wk[k].img[i]);
		free(wk[k].img);
		free(wk[k].pids);
	}
	for (i = 0; i < p.n; i++)
		if (p.slot[i].fd >= 0 && p.slot[i].done)
			close(p.slot[i].fd);
	st->walks += p.wst.walks;
	st->walk_insns += p.wst.walk_insns;
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.mu);
out:
	free(buf);
	free(th);
	free(wk);
	free(p.tids);
	free(p.nseen);
	free(p.slot);
	return rc;
}
