/* SPDX-License-Identifier: MIT */
/*
 * The decode of a snapshot (decode.h): each buffer's configuration and
 * header records, which decoder decodes a buffer, the per-CPU runs, -j's
 * choice, and the hooks parallel.c forks workers with.  The loop over
 * one buffer's blocks is block.c; its records are record.c; the cached
 * decoder's buffers are cached.c (decbuf.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include <intel-pt.h>

#include "cfg.h"
#include "decode.h"
#include "err.h"
#include "events.h"
#include "fill.h"
#include "ild.h"
#include "image.h"
#include "parallel.h"
#include "runs.h"
#include "snap.h"
#include "threads.h"
#include "walk.h"
#include "xol.h"

#include "decbuf.h"


static int
dec_config(const struct mt_snap *s, const struct mt_snap_aux *a,
    struct pt_config *cfg)
{
	const struct mt_snap_ptcfg *p = &s->ptcfg;
	uint64_t *ab[4][2];
	size_t i;

	pt_config_init(cfg);
	cfg->begin = a->data;
	cfg->end = a->data + a->len;
	if (s->has_host && strcmp(s->host.vendor, "GenuineIntel") == 0) {
		cfg->cpu.vendor = pcv_intel;
		cfg->cpu.family = s->host.family;
		cfg->cpu.model = s->host.model;
		cfg->cpu.stepping = s->host.stepping;
		/* Unknown CPUs (-pte_bad_cpu) get no workarounds. */
		(void)pt_cpu_errata(&cfg->errata, &cfg->cpu);
	}
	/*
	 * The timing parameters hold whatever the vendor: the software
	 * backend records its virtual clock's on any host (an AMD one too),
	 * and without them libipt ignores MTC and CYC.
	 */
	if (s->has_host) {
		cfg->nom_freq = (uint8_t)s->host.max_nonturbo_ratio;
		cfg->cpuid_0x15_eax = s->host.cpuid_15[0];
		cfg->cpuid_0x15_ebx = s->host.cpuid_15[1];
	}
	if (!s->has_ptcfg)
		return 0;
	cfg->mtc_freq = (uint8_t)MT_PT_CFG_MTC_PERIOD(p->config);
	ab[0][0] = &cfg->addr_filter.addr0_a;
	ab[0][1] = &cfg->addr_filter.addr0_b;
	ab[1][0] = &cfg->addr_filter.addr1_a;
	ab[1][1] = &cfg->addr_filter.addr1_b;
	ab[2][0] = &cfg->addr_filter.addr2_a;
	ab[2][1] = &cfg->addr_filter.addr2_b;
	ab[3][0] = &cfg->addr_filter.addr3_a;
	ab[3][1] = &cfg->addr_filter.addr3_b;
	for (i = 0; i < p->nfilters && i < 4; i++) {
		*ab[i][0] = p->filters[i].a;
		*ab[i][1] = p->filters[i].b;
		cfg->addr_filter.config.addr_cfg |=
		    (uint64_t)(p->filters[i].cfg & 0xf) << (4 * i);
	}
	return 0;
}

/*
 * Decode buffer @a, or with @u the segment of it @u describes (results in
 * @res): the segment starts at its PSB (seg > 0: no thread record, no
 * bytes before sync) and ends where it joins a later segment's decode,
 * or at the end of the buffer.
 */
int
dec_buffer(struct dec_run *r, const struct mt_snap_aux *a,
    const struct dec_unit *u, struct dec_unit_res *res, struct runs *runs)
{
	struct dec_buf b;
	struct pt_config cfg;
	uint64_t off = 0, last_sync = 0, err_off = 0;
	int st, rc = 0, first = 1, later = u != NULL && u->seg > 0;

	memset(&b, 0, sizeof(b));
	b.r = r;
	b.all = r->o->all_branches;
	b.aux = a;
	b.u = u;
	b.res = res;
	b.runs = runs;
	if (u != NULL && u->runs != NULL) {
		b.runs = u->runs;
		b.runs->fd = u->fd;
	}
	if (res != NULL) {
		memset(res, 0, sizeof(*res));
		res->joined = -1;
	}
	if (!later) {
		r->st->buffers++;
		r->st->pt_bytes += a->len;
	}
	if (a->tid != MT_SNAP_NONE) {
		b.tid = a->tid;
		b.pid = thr_pid(&r->ts, a->tid);
	} else if (a->cpu != MT_SNAP_NONE && r->perf_clock) {
		b.cpu = thr_cpu(&r->ts, a->cpu);
	}
	if (b.cpu != NULL && b.cpu->nsw > 0) {
		b.tid = b.cpu->sw[0].tid;
		b.pid = b.cpu->sw[0].pid;
	}
	dec_config(r->s, a, &cfg);
	if (r->cfg) {
		uint64_t next = UINT64_MAX;

		/* Code replaced at a time (epochs.h) changes libipt's
		 * image, and with it its block cache: not modelled.  Asked
		 * through dec_image: under -j a worker's view or copy, with
		 * the set's lazily built epochs behind par's lock. */
		if (r->perf_clock && (r->fill == NULL ||
		    dec_image(r, b.pid, 0, &next) == NULL ||
		    next != UINT64_MAX)) {
			rc = CFG_ABORT;
			goto out;
		}
		b.cfg = cfg_new(&cfg, r->is, b.pid, r->wc, r->cfg == 2,
		    r->perf_clock ? r->fill : NULL);
		if (b.cfg == NULL)
			return -MT_E_NOMEM;
		/* MT_DECODE_NO_PATHS: for comparisons (bench/RESULTS.md) */
		cfg_paths(b.cfg, !b.all &&
		    getenv("MT_DECODE_NO_PATHS") == NULL);
	} else {
		b.dec = pt_blk_alloc_decoder(&cfg);
		if (b.dec == NULL)
			return -MT_E_NOMEM;
		if (dec_set_image(&b) < 0) {
			rc = -MT_E_IPT;
			goto out;
		}
	}
	if (b.runs != NULL)
		rc = dec_run_open(&b, b.cpu != NULL && b.cpu->nsw > 0 ?
		    b.cpu->sw[0].time : UINT64_MAX);
	else if (!later)
		rc = dec_thread(&b);
	if (rc < 0)
		goto out;
	for (;;) {
		if (later && first) {
			/* parallel.c checked that it syncs */
			st = b.cfg ? cfg_sync_set(b.cfg, u->start) :
			    pt_blk_sync_set(b.dec, u->start);
			if (st == CFG_ABORT) {
				rc = CFG_ABORT;
				goto out;
			}
			if (st < 0) {
				rc = -MT_E_IPT;
				goto out;
			}
			off = u->start;
		} else {
			st = b.cfg ? cfg_sync_forward(b.cfg) :
			    pt_blk_sync_forward(b.dec);
			if (st == CFG_ABORT) {
				rc = CFG_ABORT;
				goto out;
			}
			if (st < 0) {
				if (first)
					r->st->bytes_before_sync += a->len;
				else if (err_off < a->len)
					r->st->bytes_skipped +=
					    a->len - err_off;
				break;
			}
			if (b.cfg)
				cfg_get_sync_offset(b.cfg, &off);
			else
				pt_blk_get_sync_offset(b.dec, &off);
			if (first)
				r->st->bytes_before_sync += off;
			else if (off > err_off)
				r->st->bytes_skipped += off - err_off;
			if (!first && off <= last_sync)
				break;
		}
		first = 0;
		last_sync = off;
		if (r->perf_clock)
			dec_clock(&b);
		st = dec_stretch(&b, st);
		if (st == -pte_eos)
			break;
		if (st == DEC_JOINED)
			goto out;	/* the later segment goes on */
		if (st == CFG_ABORT) {
			rc = CFG_ABORT;
			goto out;
		}
		if (st == -pte_nomem || st == DEC_IOERR) {
			rc = st == DEC_IOERR ? -MT_E_IO : -MT_E_NOMEM;
			goto out;
		}
		dec_error(&b, st);
		dec_offset(&b, &err_off);
		b.xol = 0;
		dec_xol_end(&b);
		b.gap_at = 0;
	}
	if (res != NULL)
		res->joined = -1;	/* decoded to the end of the buffer */
	if (r->perf_clock)
		dec_triggers(&b, UINT64_MAX);
	else
		for (; b.trigi < r->s->ntriggers; b.trigi++)
			if (r->s->triggers[b.trigi].tid == b.tid)
				dec_emit_str(&b, MT_EV_TRIGGER, dec_time(&b, 0),
				    r->s->triggers[b.trigi].ip, 0,
				    r->s->triggers[b.trigi].what);
	if (b.run != NULL)	/* (a trigger may be later than the trace) */
		rc = dec_run_close(&b, dec_time(&b, 0) > b.last_t ?
		    dec_time(&b, 0) : b.last_t);
	else
		dec_emit(&b, MT_EV_END, dec_time(&b, 0), 0, 0);
	if (r->prog != NULL)
		r->prog->done += a->len;
	if (res != NULL)
		res->stop_icount = b.icount;
out:
	pt_blk_free_decoder(b.dec);
	xol_view_free(b.xv);
	r->cfg_full = cfg_full(b.cfg);
	r->cfg_pq = cfg_pq_refused(b.cfg);
	cfg_free(b.cfg);
	return rc;
}

/* Smallest perf time in the trace: the first TSC of each buffer. */
static uint64_t
dec_time_base(const struct mt_snap *s)
{
	uint64_t best = UINT64_MAX;
	size_t i;

	for (i = 0; i < s->naux; i++) {
		struct pt_config cfg;
		struct pt_packet_decoder *pd;
		struct pt_packet pkt;
		int n;

		dec_config(s, &s->aux[i], &cfg);
		pd = pt_pkt_alloc_decoder(&cfg);
		if (pd == NULL)
			continue;
		if (pt_pkt_sync_forward(pd) >= 0) {
			for (n = 0; n < 4096; n++) {
				if (pt_pkt_next(pd, &pkt, sizeof(pkt)) < 0)
					break;
				if (pkt.type != ppt_tsc)
					continue;
				uint64_t t = dec_tsc_ns(&s->timeconv,
				    pkt.payload.tsc.tsc);
				if (t < best)
					best = t;
				break;
			}
		}
		pt_pkt_free_decoder(pd);
	}
	for (i = 0; i < s->ntriggers; i++)
		if (s->triggers[i].time < best)
			best = s->triggers[i].time;
	return best == UINT64_MAX ? 0 : best;
}

static void
dec_info(struct dec_run *r, const char *key, const char *value)
{
	struct mt_ev ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = MT_EV_INFO;
	ev.str[0] = key;
	ev.str[1] = value;
	mt_evw_write(r->w, &ev);
}

static int
dec_header(struct dec_run *r)
{
	static const char *const backends[] = { "intel_pt", "emulate", "raw",
	    "perf" };
	const struct mt_snap *s = r->s;
	struct mt_ev ev;
	char num[32], *cmd;
	size_t i, j;

	dec_info(r, "source", r->o->source ? r->o->source : "-");
	dec_info(r, "clock", r->perf_clock ? "perf" : "relative");
	snprintf(num, sizeof(num), "%llu", r->perf_clock ?
	    (unsigned long long)dec_time_base(s) : 0ull);
	dec_info(r, "time-base", num);
	if (s->has_ptcfg && s->ptcfg.backend < 4)
		dec_info(r, "backend", backends[s->ptcfg.backend]);
	dec_info(r, "branches", r->o->all_branches ? "all" : "calls");
	for (i = 0; i < s->nprocs; i++) {
		const struct mt_snap_process *p = &s->procs[i];

		cmd = malloc(p->cmdline_len + 1);
		if (cmd == NULL)
			return -MT_E_NOMEM;
		memcpy(cmd, p->cmdline, p->cmdline_len);
		cmd[p->cmdline_len] = '\0';
		for (j = 0; j < p->cmdline_len; j++)
			if (cmd[j] == '\0')
				cmd[j] = j + 1 == p->cmdline_len ? '\0' : ' ';
		memset(&ev, 0, sizeof(ev));
		ev.kind = MT_EV_PROC;
		ev.pid = p->pid;
		ev.str[0] = p->comm;
		ev.str[1] = cmd;
		mt_evw_write(r->w, &ev);
		free(cmd);
	}
	for (i = 0; i < image_set_nmods(r->is); i++) {
		const struct image_mod *m = image_set_mod(r->is, i);

		memset(&ev, 0, sizeof(ev));
		ev.kind = MT_EV_MOD;
		ev.pid = m->pid;
		ev.addr[0] = m->start;
		ev.addr[1] = m->end;
		ev.num = m->pgoff;
		ev.str[0] = m->buildid;
		ev.str[1] = m->path;
		/* mapped then (dlopen, JIT); no use against relative times */
		ev.time = r->perf_clock ? m->time : 0;
		mt_evw_write(r->w, &ev);
	}
	return 0;
}

/* Is a buffer per-CPU with context switches (decoded into runs)? */
static int
dec_has_switches(const struct dec_run *r)
{
	uint32_t pid, tid;
	size_t i;

	for (i = 0; i < r->s->naux; i++)
		if (!dec_static_tid(r, i, &pid, &tid))
			return 1;
	return 0;
}

struct pt_image *
dec_view_image(void *arg, uint32_t pid, uint64_t time, uint64_t *next)
{
	return image_view_image_at(arg, pid, time, next);
}


/*
 * Buffer @i in the sequential loop (into runs @rs, or NULL).  A buffer
 * of one thread goes through the cached decoder unless --no-cache
 * (cfg.h); with perf time it ends its blocks where libipt's would
 * (fill.h): a model per buffer with MTC or CYC, whose buffers each get
 * a fresh image view (as under -j N, parallel.h), one for all of them
 * with TSC only, when one job decodes them (dec_seq_shared).
 */
static int
dec_seq_buffer(struct dec_run *r, size_t i, struct runs *rs)
{
	struct image_view *v = NULL;
	uint32_t pid, tid;
	int rc, cached = !r->o->no_cache && rs == NULL &&
	    dec_static_tid(r, i, &pid, &tid);

	if (cached && !r->perf_clock)
		return dec_cfg_buffer(r, &r->s->aux[i]);
	if (!par_timed(r->s)) {
		if (cached && r->sh_ok)
			return dec_seq_shared(r, i);
		/* (libipt's cache must hold what the model held) */
		if (r->sh_fill != NULL && !r->sh_off &&
		    (rc = dec_shared_back(r, i)) < 0)
			return rc;
		return dec_buffer(r, &r->s->aux[i], NULL, NULL, rs);
	}
	rc = image_view_new(&v, r->is);
	if (rc < 0)
		return rc;
	r->image = dec_view_image;
	r->image_arg = v;
	if (cached) {
		r->fill = fill_new(r->is);
		rc = r->fill == NULL ? -MT_E_NOMEM :
		    dec_cfg_buffer(r, &r->s->aux[i]);
		fill_free(r->fill);
		r->fill = NULL;
	} else {
		rc = dec_buffer(r, &r->s->aux[i], NULL, NULL, rs);
	}
	r->image = NULL;
	r->image_arg = NULL;
	image_view_free(v);
	return rc;
}

/*
 * Per-CPU buffers with switches: each buffer's stream into its own
 * temporary file, in runs (by -j N workers, or here one after the
 * other: the same bytes), then the runs of all buffers merged by start
 * time into the output (runs.h).
 */
static int
dec_runs_one(struct dec_run *r, size_t i, struct runs *rs)
{
	struct mt_evw *out = r->w, *w = NULL;
	int rc;

	rs->fd = par_tmpfile();
	rc = rs->fd < 0 ? -MT_E_IO : mt_evw_new(&w, rs->fd);
	if (rc >= 0) {
		r->w = w;
		rc = dec_seq_buffer(r, i, rs);
		r->w = out;
	}
	if (rc >= 0)
		return mt_evw_free(w);
	mt_evw_free(w);
	return rc;
}

static int
dec_runs_decode(struct dec_run *r, const struct mt_snap *s, int jobs)
{
	struct runs *rs = calloc(s->naux, sizeof(*rs));
	struct mt_evw *out = r->w;
	size_t i;
	int rc = PAR_SEQUENTIAL;

	if (rs == NULL)
		return -MT_E_NOMEM;
	for (i = 0; i < s->naux; i++) {
		runs_init(&rs[i]);
		rs[i].cpu = s->aux[i].cpu;
	}
	if (jobs > 1)
		rc = par_decode_runs(r, s, r->is, r->st, jobs, rs, r->prog);
	if (rc == PAR_SEQUENTIAL)
		for (rc = 0, i = 0; rc >= 0 && i < s->naux; i++)
			rc = dec_runs_one(r, i, &rs[i]);
	if (rc >= 0)
		rc = runs_merge(rs, s->naux, out);
	for (i = 0; i < s->naux; i++)
		runs_release(&rs[i]);
	free(rs);
	return rc;
}

/*
 * PT bytes that make a worker worth its cost when -j is not given: each
 * worker walks its code anew, copies the images, and on the 2-CPU
 * machines the bench runs on a second thread costs CPU (bench/RESULTS.md).
 */
#define DEC_AUTO_BYTES	(8u << 20)

/* Workers for @s: o->jobs, fewer on little work when -j was not given. */
static int
dec_jobs(const struct decode_opts *o, const struct mt_snap *s)
{
	uint64_t pt = 0;
	size_t i;

	if (!o->jobs_auto)
		return o->jobs;
	for (i = 0; i < s->naux; i++)
		pt += s->aux[i].len;
	pt /= DEC_AUTO_BYTES;	/* workers the work is worth */
	return pt < 1 ? 1 : pt < (uint64_t)o->jobs ? (int)pt : o->jobs;
}

/*
 * Walks read code in place (image_set_code) where the cached decoder
 * runs.  With perf time libipt's block decoder decodes every buffer and
 * maps each section's file itself, so walks read through its cache
 * instead of mapping the same pages a second time (demo-emu's peak RSS
 * 8.7 -> 7.5 MiB for 2% more instructions, bench/RESULTS.md, session 9).
 * (--no-cache keeps reading in place: it is the cached decoder's
 * yardstick.)
 */
static void
dec_set_code(const struct dec_run *r, struct walk_cache *wc)
{
	if (!r->perf_clock)
		walk_cache_set_code(wc, image_set_code, r->is);
}

static int
dec_all(const struct decode_opts *o, const struct mt_snap *s,
    struct mt_evw *w, struct decode_stats *st, struct decode_diag *d)
{
	struct dec_run r;
	const char *msg;
	size_t i;
	int rc;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.s = s;
	r.w = w;
	r.st = st;
	r.prog = o->progress;
	r.perf_clock = s->has_timeconv && s->timeconv.cap_user_time_zero &&
	    s->has_ptcfg && (s->ptcfg.config & MT_PT_CFG_TSC);
	rc = image_set_new(&r.is, s, &o->img);
	if (rc < 0)
		return rc;
	rc = thr_set_build(&r.ts, s, r.is, &d->off, &d->msg);
	if (rc >= 0)
		rc = image_set_read_probes(r.is);	/* every mapping is in */
	if (rc < 0)
		goto out;
	for (i = 0; (msg = image_set_warning(r.is, i)) != NULL; i++) {
		st->no_image++;
		if (o->warn != NULL)
			o->warn(o->warn_arg, msg);
	}
	r.wc = walk_cache_new(image_set_iscache(r.is), image_set_fn_lookup,
	    r.is);
	if (r.wc == NULL) {
		rc = -MT_E_NOMEM;
		goto out;
	}
	dec_set_code(&r, r.wc);
	rc = dec_header(&r);
	if (rc >= 0 && dec_has_switches(&r)) {
		rc = dec_runs_decode(&r, s, dec_jobs(o, s));
		goto out;
	}
	/*
	 * -j N: buffers decoded by parallel.c's workers (same output); it
	 * also takes timed traces with split buffers under -j 1.
	 */
	/*
	 * TSC only: one model of libipt's block caches for all buffers,
	 * which libipt's decoders of -j N would fill in any order (and
	 * par_decode's plan fills when it looks for where to cut).
	 */
	r.sh_ok = dec_jobs(o, s) < 2;
	if (rc >= 0)
		rc = par_decode(&r, s, r.is, st, dec_jobs(o, s),
		    !o->jobs_auto, o->out_fd, w, r.prog);
	if (rc == PAR_SEQUENTIAL)
		for (rc = 0, i = 0; rc >= 0 && i < s->naux; i++)
			rc = dec_seq_buffer(&r, i, NULL);
out:
	/* Function bounds that could not be made: the stream is wrong. */
	if (rc >= 0 && image_set_fns_failed(r.is))
		rc = -MT_E_NOMEM;
	if (r.wc != NULL) {
		uint64_t nw, ni;

		walk_cache_counts(r.wc, &nw, &ni);
		st->walks += nw;	/* workers added theirs */
		st->walk_insns += ni;
	}
	walk_cache_free(r.wc);
	fill_free(r.sh_fill);
	image_view_free(r.sh_view);
	thr_set_release(&r.ts);
	image_set_free(r.is);
	free(r.seen);
	return rc;
}

int
decode_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	int rc = pthread_attr_init(&a);

	if (rc != 0)
		return rc;
	rc = pthread_attr_setstacksize(&a, DECODE_STACK);
	if (rc == 0)
		rc = pthread_create(th, &a, fn, arg);
	pthread_attr_destroy(&a);
	return rc;
}

/* decode_run's arguments and result, for its thread. */
struct dec_call {
	const struct decode_opts *o;
	const struct mt_snap *s;
	struct mt_evw *w;
	struct decode_stats *st;
	struct decode_diag *d;
	int rc;			/* dec_all's status */
	int err;		/* its errno (-MT_E_IO) */
};

static void *
dec_call_main(void *arg)
{
	struct dec_call *c = arg;

	c->rc = dec_all(c->o, c->s, c->w, c->st, c->d);
	c->err = errno;
	return NULL;
}

/*
 * Can this thread run libipt's block decoder on its own stack?  The main
 * thread's stack grows on demand up to RLIMIT_STACK, which the kernel
 * reads at each growth: raised to DECODE_STACK (and a MiB for what
 * main() already holds), it takes the decode itself, without the
 * thread, its stack mapping and its malloc arena (whose callocs clear
 * every page where the main heap's fresh pages are known zero:
 * bench/RESULTS.md, session 10).  Other threads' stacks are fixed.
 */
static int
dec_stack_here(void)
{
	const rlim_t want = (rlim_t)DECODE_STACK + (1u << 20);
	struct rlimit rl;

	if (gettid() != getpid() || getrlimit(RLIMIT_STACK, &rl) != 0)
		return 0;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return 1;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
		return 0;
	rl.rlim_cur = want;
	return setrlimit(RLIMIT_STACK, &rl) == 0;
}

int
decode_run(const struct decode_opts *o, const struct mt_snap *s,
    struct mt_evw *w, struct decode_stats *st, struct decode_diag *d)
{
	struct dec_call c = { o, s, w, st, d, 0, 0 };
	pthread_t th;

	if (dec_stack_here())
		return dec_all(o, s, w, st, d);
	if (decode_thread_start(&th, dec_call_main, &c) != 0)
		return -MT_E_NOMEM;
	pthread_join(th, NULL);
	errno = c.err;
	return c.rc;
}

/*
 * Hooks for parallel.c (-j N, issue 10): a worker is a copy of the run
 * with its own walk cache, images, output and counters, decoding whole
 * buffers with dec_buffer() exactly as the sequential loop does.
 */
struct dec_run *
dec_fork(const struct dec_run *r, struct pt_image *(*image)(void *,
    uint32_t, uint64_t, uint64_t *), void *image_arg)
{
	struct dec_run *c = malloc(sizeof(*c));

	if (c == NULL)
		return NULL;
	*c = *r;
	c->seen = NULL;
	c->nseen = 0;
	c->prog = NULL;		/* the writing thread shows progress */
	c->image = image;
	c->image_arg = image_arg;
	c->sh_fill = NULL;
	c->sh_view = NULL;
	c->sh_ok = 0;
	c->wc = walk_cache_new(image_set_iscache(r->is), image_set_fn_lookup,
	    r->is);
	if (c->wc == NULL) {
		free(c);
		return NULL;
	}
	dec_set_code(c, c->wc);
	return c;
}

int
dec_fork_unit(struct dec_run *c, const struct dec_unit *u,
    struct dec_unit_res *res, struct mt_evw *w, struct decode_stats *st,
    const uint32_t *seen, size_t nseen)
{
	size_t cap = 8;
	int rc;

	while (cap < nseen + 1)
		cap *= 2;
	free(c->seen);
	c->seen = malloc(cap * sizeof(*c->seen));
	if (c->seen == NULL)
		return -MT_E_NOMEM;
	if (nseen > 0)
		memcpy(c->seen, seen, nseen * sizeof(*seen));
	c->nseen = nseen;	/* cap > nseen: dec_thread's growth holds */
	c->w = w;
	c->st = st;
	if (c->o->no_cache || u->runs != NULL ||
	    (c->perf_clock && !par_timed(c->s)))
		return dec_buffer(c, &c->s->aux[u->buf], u, res, NULL);
	if (!c->perf_clock)
		return dec_cfg_unit(c, u, res, w, st, nseen);
	/* MTC or CYC: the unit has a fresh view (par_worker), so a fresh
	 * model of its block caches */
	c->fill = fill_new(c->is);
	rc = c->fill == NULL ? -MT_E_NOMEM :
	    dec_cfg_unit(c, u, res, w, st, nseen);
	fill_free(c->fill);
	c->fill = NULL;
	return rc;
}

int
dec_seg_sig(const struct dec_run *r, size_t i, uint64_t psb, uint64_t after,
    struct dec_sig *sig)
{
	const struct mt_snap_aux *a = &r->s->aux[i];
	struct pt_block_decoder *dec;
	struct pt_config cfg;
	struct pt_event ev;
	struct pt_block blk;
	struct dec_buf b;
	uint32_t pid, tid;
	uint64_t blocks;
	int st, found = 0, rc = -1;

	if (!dec_static_tid(r, i, &pid, &tid))
		return -1;
	dec_config(r->s, a, &cfg);
	dec = pt_blk_alloc_decoder(&cfg);
	if (dec == NULL)
		return -1;
	memset(&b, 0, sizeof(b));
	b.dec = dec;
	st = pt_blk_set_image(dec, dec_image(r, pid, 0, &b.img_next));
	if (st >= 0)
		st = pt_blk_sync_set(dec, psb);
	if (st < 0 || (after == 0 && !(st & pts_event_pending)))
		goto out;
	/*
	 * The first event past @after, then on to the next block; no error
	 * on the way (a resync would skip code the decoders of the segment
	 * before do not).  A bound on the blocks keeps a PSB-less stretch
	 * from costing a whole decode.
	 */
	for (blocks = 0; blocks < (after ? 1u << 20 : 64); blocks++) {
		while (st & pts_event_pending) {
			st = pt_blk_event(dec, &ev, sizeof(ev));
			if (st < 0)
				goto out;
			if (!found) {
				dec_sig_of(&b, &ev, sig);
				found = sig->off > after;
			}
		}
		pt_blk_get_offset(dec, &sig->blk_off);
		st = pt_blk_next(dec, &blk, sizeof(blk));
		if (found && blk.ninsn > 0) {
			sig->blk_ip = blk.ip;
			rc = 0;
			break;
		}
		if (st < 0)
			break;
	}
out:
	pt_blk_free_decoder(dec);
	return rc;
}

int
dec_perf_clock(const struct dec_run *r)
{
	return r->perf_clock;
}

void
dec_fork_free(struct dec_run *c, struct decode_stats *st)
{
	uint64_t nw, ni;

	if (c == NULL)
		return;
	walk_cache_counts(c->wc, &nw, &ni);
	st->walks += nw;
	st->walk_insns += ni;
	walk_cache_free(c->wc);
	free(c->seen);
	free(c);
}

int
dec_static_tid(const struct dec_run *r, size_t i, uint32_t *pid,
    uint32_t *tid)
{
	const struct mt_snap_aux *a = &r->s->aux[i];
	const struct thr_cpu *cpu = NULL;

	/* The same choice as dec_buffer's. */
	if (a->tid != MT_SNAP_NONE) {
		*tid = a->tid;
		*pid = thr_pid(&r->ts, a->tid);
		return 1;
	}
	if (a->cpu != MT_SNAP_NONE && r->perf_clock)
		cpu = thr_cpu(&r->ts, a->cpu);
	if (cpu != NULL && cpu->nsw > 0)
		return 0;	/* switches: threads known only by decoding */
	*tid = 0;
	*pid = 0;
	return 1;
}

void
decode_progress_start(struct decode_progress *dp, const struct mt_snap *s,
    int fd)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < s->naux; i++)
		total += s->aux[i].len;
	mt_progress_init(&dp->p, "mt-decode", total,
	    mt_progress_interval_ms());
	dp->fd = fd;
	dp->done = 0;
}

/* Write all of @buf to @fd; a progress line that cannot be shown is lost. */
static void
dec_progress_write(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, buf, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		buf += k;
		n -= (size_t)k;
	}
}

void
decode_progress_show(struct decode_progress *dp, uint64_t done,
    uint64_t events)
{
	char line[160];
	size_t n = mt_progress_format(&dp->p, line, sizeof(line), done, events,
	    "events");
	int saved = errno;

	dec_progress_write(dp->fd, line, n);
	errno = saved;
}

void
decode_progress_end(struct decode_progress *dp)
{
	char line[16];
	size_t n = mt_progress_clear(&dp->p, line, sizeof(line));
	int saved = errno;

	dec_progress_write(dp->fd, line, n);
	errno = saved;
}

