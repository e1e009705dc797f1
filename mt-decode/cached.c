/* SPDX-License-Identifier: MIT */
/*
 * The cached decoder's buffers (decbuf.h): a buffer or a -j unit decoded
 * through cfg.h, its stream staged in a temporary file or written in
 * place and cut back, and given back to libipt's block decoder when the
 * cached decoder cannot decode it; with TSC only, the model of libipt's
 * block cache all buffers share (fill.h) and what a buffer given back
 * needs first.  What goes through the cached decoder is decided in
 * decode.c (dec_seq_buffer, dec_fork_unit).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <intel-pt.h>

#include "cfg.h"
#include "decode.h"
#include "err.h"
#include "events.h"
#include "fill.h"
#include "image.h"
#include "parallel.h"
#include "snap.h"

#include "decbuf.h"

static int dec_cfg_cut(struct dec_run *c, const struct mt_snap_aux *a,
    const struct dec_unit *u, struct dec_unit_res *res, struct mt_evw *w,
    int fd, struct decode_stats *st, size_t nseen);

/*
 * Buffer @a (unit @u, or NULL) given back by the cached decoder, decoded
 * by libipt's block decoder; with the model shared by the buffers (TSC
 * only), libipt's block cache first gets what it would hold without
 * the cache (dec_shared_back).
 */
static int
dec_given_back(struct dec_run *r, const struct mt_snap_aux *a,
    const struct dec_unit *u, struct dec_unit_res *res)
{
	int rc;

	if (r->fill != NULL && r->fill == r->sh_fill) {
		rc = dec_shared_back(r, (size_t)(a - r->s->aux));
		if (rc < 0)
			return rc;
	}
	return dec_buffer(r, a, u, res, NULL);
}

/* Is @fd the null device (what is written there is never read)? */
static int
dec_fd_null(int fd)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 && S_ISCHR(sb.st_mode) &&
	    sb.st_rdev == makedev(1, 3);
}

/*
 * Buffer @a through the cached decoder (cfg.h) into a temporary file,
 * copied to the output when it decoded all of it; when it could not
 * (CFG_ABORT), the file and the counters of the attempt are dropped and
 * libipt's block decoder decodes the buffer.  An output file no one sees
 * before the end (-o: renamed when complete) takes the stream directly
 * and is cut back instead: no copy through the kernel twice.  So does
 * the null device, where nothing needs cutting back.
 */
int
dec_cfg_buffer(struct dec_run *r, const struct mt_snap_aux *a)
{
	struct decode_stats saved = *r->st;
	struct mt_evw *out = r->w, *tw = NULL;
	size_t nseen = r->nseen;
	char buf[65536];
	off_t hdr;
	ssize_t n;
	int fd, rc;

	if (r->o->out_fd >= 0 && (r->o->out_private ||
	    dec_fd_null(r->o->out_fd)))
		return dec_cfg_cut(r, a, NULL, NULL, out, r->o->out_fd, r->st,
		    nseen);
	fd = par_tmpfile();
	if (fd < 0)
		return -MT_E_IO;
	rc = mt_evw_new(&tw, fd);
	if (rc >= 0)
		rc = mt_evw_flush(tw);
	hdr = lseek(fd, 0, SEEK_CUR);	/* after the header line */
	if (rc >= 0 && hdr < 0)
		rc = -MT_E_IO;
	if (rc >= 0) {
		r->w = tw;
		/* timing packets: pq.h would refuse them (PQ_ABORT) */
		r->cfg = r->perf_clock ? 1 : 2;
		rc = dec_buffer(r, a, NULL, NULL, NULL);
		if (rc == CFG_ABORT && r->cfg_pq) {
			/* mt's query layer refused it: libipt's */
			*r->st = saved;
			r->nseen = nseen;
			r->st->cfg_pq_refused++;
			rc = mt_evw_flush(tw);
			if (rc >= 0 && (ftruncate(fd, hdr) < 0 ||
			    lseek(fd, hdr, SEEK_SET) < 0))
				rc = -MT_E_IO;
			r->cfg = 1;
			if (rc >= 0)
				rc = dec_buffer(r, a, NULL, NULL, NULL);
		}
		r->cfg = 0;
		r->w = out;
	}
	if (rc == CFG_ABORT) {
		uint64_t pqr = r->st->cfg_pq_refused - saved.cfg_pq_refused;

		*r->st = saved;
		r->nseen = nseen;
		r->st->cfg_fallbacks++;
		r->st->cfg_pq_refused += pqr;
		if (r->cfg_full)
			r->st->cfg_full++;
		mt_evw_free(tw);
		close(fd);
		return dec_given_back(r, a, NULL, NULL);
	}
	if (rc >= 0)
		rc = mt_evw_flush(tw);
	if (rc >= 0 && lseek(fd, hdr, SEEK_SET) < 0)
		rc = -MT_E_IO;
	/* The kernel copies (no read into and write from here), when it can. */
	if (rc >= 0 && r->o->out_fd >= 0)
		rc = mt_evw_flush(out);
	while (rc >= 0 && r->o->out_fd >= 0 &&
	    (n = sendfile(r->o->out_fd, fd, NULL, 1 << 30)) != 0) {
		if (n < 0 && errno != EINTR) {
			if (errno != EINVAL && errno != ENOSYS)
				rc = -MT_E_IO;
			break;	/* not with this output: read and write */
		}
	}
	while (rc >= 0 && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0)
			rc = -MT_E_IO;
		else
			rc = mt_evw_raw(out, buf, (size_t)n);
	}
	if (rc >= 0)
		r->st->cfg_buffers++;
	mt_evw_free(tw);
	close(fd);
	return rc;
}

/* Cut what @w wrote to @fd since @start off again (the null device: no
 * need). */
static int
dec_cut_back(struct mt_evw *w, int fd, off_t start)
{
	if (mt_evw_flush(w) < 0)
		return -1;
	if (dec_fd_null(fd))
		return 0;
	return ftruncate(fd, start) < 0 || lseek(fd, start, SEEK_SET) < 0 ?
	    -1 : 0;
}

/*
 * Buffer @a (unit @u of a -j N worker, or NULL) through the cached
 * decoder (cfg.h) straight into @w, whose file @fd no one reads before
 * the end; when it gives the buffer back, what it wrote is cut off the
 * file and libipt's block decoder decodes the buffer.
 */
static int
dec_cfg_cut(struct dec_run *c, const struct mt_snap_aux *a,
    const struct dec_unit *u, struct dec_unit_res *res, struct mt_evw *w,
    int fd, struct decode_stats *st, size_t nseen)
{
	struct decode_stats saved = *st;
	uint64_t pqr;
	off_t start;
	int rc;

	if (mt_evw_flush(w) < 0 || (start = lseek(fd, 0, SEEK_CUR)) < 0)
		return -MT_E_IO;
	c->cfg = c->perf_clock ? 1 : 2;
	rc = dec_buffer(c, a, u, res, NULL);
	if (rc == CFG_ABORT && c->cfg_pq) {
		/* mt's query layer refused it: libipt's */
		*st = saved;
		c->nseen = nseen;
		st->cfg_pq_refused++;
		if (dec_cut_back(w, fd, start) < 0)
			return -MT_E_IO;
		c->cfg = 1;
		rc = dec_buffer(c, a, u, res, NULL);
	}
	c->cfg = 0;
	if (rc != CFG_ABORT) {
		if (rc >= 0)
			st->cfg_buffers++;
		return rc;
	}
	pqr = st->cfg_pq_refused - saved.cfg_pq_refused;
	*st = saved;
	c->nseen = nseen;
	st->cfg_fallbacks++;
	st->cfg_pq_refused += pqr;
	if (c->cfg_full)
		st->cfg_full++;
	if (dec_cut_back(w, fd, start) < 0)
		return -MT_E_IO;
	return dec_given_back(c, a, u, res);
}

/* Unit @u of a -j N worker into the unit's temporary file (dec_cfg_cut). */
int
dec_cfg_unit(struct dec_run *c, const struct dec_unit *u,
    struct dec_unit_res *res, struct mt_evw *w, struct decode_stats *st,
    size_t nseen)
{
	return dec_cfg_cut(c, &c->s->aux[u->buf], u, res, w, u->fd, st,
	    nseen);
}

/*
 * TSC only (no fresh view per buffer): buffer @i given back by the
 * cached decoder.  libipt's block decoder decodes it and every buffer
 * after it (the model no longer knows what libipt's block cache holds).
 * The buffers before it that the cached decoder decoded never reached
 * libipt's cache, so a fresh view's is filled first: libipt decodes
 * buffers 0 to @i - 1 again into it, their records dropped, and the
 * cache then holds what it would hold without the cached decoder.
 */
int
dec_shared_back(struct dec_run *r, size_t i)
{
	struct decode_stats saved = *r->st;
	struct decode_progress *prog = r->prog;
	struct mt_evw *out = r->w, *nw = NULL;
	size_t nseen = r->nseen, j;
	int fd, rc;

	r->sh_off = 1;
	if (r->sh_cached == 0)
		return 0;	/* libipt decoded every buffer before */
	rc = image_view_new(&r->sh_view, r->is);
	if (rc < 0)
		return rc;
	r->image = dec_view_image;
	r->image_arg = r->sh_view;
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -MT_E_IO;
	rc = mt_evw_new(&nw, fd);
	r->w = nw;
	r->prog = NULL;
	for (j = 0; rc >= 0 && j < i; j++)
		rc = dec_buffer(r, &r->s->aux[j], NULL, NULL, NULL);
	r->w = out;
	r->prog = prog;
	*r->st = saved;
	r->nseen = nseen;
	mt_evw_free(nw);
	close(fd);
	return rc;
}

/*
 * TSC only, one job: buffer @i through the cached decoder with the
 * model all buffers share (the run's images, whose block caches libipt
 * keeps from buffer to buffer), until one goes back to libipt.
 */
int
dec_seq_shared(struct dec_run *r, size_t i)
{
	int rc;

	if (r->sh_off)
		return dec_buffer(r, &r->s->aux[i], NULL, NULL, NULL);
	if (r->sh_fill == NULL && (r->sh_fill = fill_new(r->is)) == NULL)
		return -MT_E_NOMEM;
	r->fill = r->sh_fill;
	rc = dec_cfg_buffer(r, &r->s->aux[i]);
	r->fill = NULL;
	if (rc >= 0 && !r->sh_off)
		r->sh_cached++;
	return rc;
}
