/* SPDX-License-Identifier: MIT */
/*
 * The capture framework's snapshots (capture.h): each target described
 * (process, threads, maps, bundled files), the rings, sideband and
 * trigger hits assembled, and the file written atomically.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "sideband.h"
#include "proc.h"
#include "sbevent.h"
#include "snapout.h"
#include "trigev.h"
#include "version.h"
#include "capture.h"

static void
swap_elfs(struct mt_snap *a, struct mt_snap *b)
{
	struct mt_snap_elf *e = a->elfs;
	size_t n = a->nelfs;

	a->elfs = b->elfs;
	a->nelfs = b->nelfs;
	b->elfs = e;
	b->nelfs = n;
}

/* Drop the ELF chunks of @s that no MMAP chunk of @s names any more. */
static void
prune_elfs(struct mt_snap *s)
{
	size_t i, j, k = 0;

	for (i = 0; i < s->nelfs; i++) {
		struct mt_snap_elf *e = &s->elfs[i];

		for (j = 0; j < s->nmmaps; j++)
			if (s->mmaps[j].build_id_len == e->build_id_len &&
			    memcmp(s->mmaps[j].build_id, e->build_id,
			    e->build_id_len) == 0)
				break;
		if (j == s->nmmaps) {
			free(e->path);
			free(e->data);
			continue;
		}
		s->elfs[k++] = *e;
	}
	s->nelfs = k;
}

/*
 * (Re)read target @i's process, threads, maps and files.  The files
 * bundled by the previous description are reused by build-id instead of
 * being read again (--multi-snapshot: every snapshot describes again).
 */
void
mt_cap_describe(struct mt_cap *c, size_t i)
{
	struct mt_snap *s = calloc(1, sizeof(*s));
	size_t skipped = 0;

	if (s == NULL)
		return;
	mt_snap_init(s);
	if (c->desc[i] != NULL)
		swap_elfs(s, c->desc[i]);	/* known build-ids: not read */
	if ((c->ops->describe != NULL ? c->ops->describe(c, c->targets[i], s) :
	    mt_proc_describe(s, c->targets[i], c->o->all_threads,
	    c->o->bundle, MT_CAP_MAX_BUNDLE, &skipped)) < 0 || s->nmmaps == 0) {
		/* Gone, or a zombie without maps: keep the older one. */
		if (c->desc[i] != NULL)
			swap_elfs(s, c->desc[i]);
		mt_snap_release(s);
		free(s);
		return;
	}
	prune_elfs(s);
	if (c->desc[i] != NULL) {
		mt_snap_release(c->desc[i]);
		free(c->desc[i]);
	}
	c->desc[i] = s;
}

void
mt_cap_note_exiting(struct mt_cap *c, pid_t pid)
{
	int i = mt_cap_target_index(c, pid);

	if (i >= 0)
		mt_cap_describe(c, (size_t)i);
}

/* ---- snapshots ---- */

static void
copy_desc(struct mt_snap *s, const struct mt_snap *d)
{
	size_t i;

	for (i = 0; i < d->nprocs; i++)
		(void)mt_snap_add_process(s, &d->procs[i]);
	for (i = 0; i < d->nthreads; i++)
		(void)mt_snap_add_thread(s, &d->threads[i]);
	for (i = 0; i < d->nmmaps; i++)
		(void)mt_snap_add_mmap(s, &d->mmaps[i]);
	for (i = 0; i < d->ntexts; i++)
		(void)mt_snap_add_text(s, &d->texts[i]);
	for (i = 0; i < d->nblobs; i++)
		(void)mt_snap_add_blob(s, &d->blobs[i]);
	for (i = 0; i < d->nelfs; i++) {
		size_t j;

		for (j = 0; j < s->nelfs; j++)
			if (s->elfs[j].build_id_len == d->elfs[i].build_id_len &&
			    memcmp(s->elfs[j].build_id, d->elfs[i].build_id,
			    d->elfs[i].build_id_len) == 0)
				break;
		if (j == s->nelfs)
			(void)mt_snap_add_elf(s, &d->elfs[i]);
	}
}

/* A THREAD chunk for every traced thread (also those gone by now). */
static void
add_buf_threads(struct mt_cap *c, struct mt_snap *s)
{
	size_t i, j;

	for (i = 0; i < c->nbufs; i++) {
		struct mt_cap_buf *b = c->bufs[i];
		struct mt_snap_thread t;
		char path[64], name[64] = "";
		FILE *fp;

		if (b->tid < 0)
			continue;
		for (j = 0; j < s->nthreads; j++)
			if (s->threads[j].tid == (uint32_t)b->tid)
				break;
		if (j < s->nthreads)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm",
		    (int)b->pid, (int)b->tid);
		if ((fp = fopen(path, "re")) != NULL) {
			if (fgets(name, sizeof(name), fp) == NULL)
				name[0] = '\0';
			name[strcspn(name, "\n")] = '\0';
			fclose(fp);
		}
		memset(&t, 0, sizeof(t));
		t.pid = (uint32_t)b->pid;
		t.tid = (uint32_t)b->tid;
		t.comm = name;
		(void)mt_snap_add_thread(s, &t);
	}
}

void
mt_cap_sb_mmaps(struct mt_cap *c, void (*fn)(void *arg,
    const struct mt_sb_rec *rec), void *arg)
{
	size_t r;

	for (r = 0; c->sb != NULL && r < mt_sbev_nrings(c->sb); r++) {
		const struct mt_wbuf *w = mt_sbev_data(c->sb, r, NULL);
		struct mt_sb_reader rd;
		struct mt_sb_rec rec;

		mt_sb_reader_init(&rd, w->p, w->len,
		    mt_sbev_sample_type(c->sb), 1, 0);
		while (mt_sb_next(&rd, &rec) == 0)
			if (rec.type == MT_SB_MMAP2 && (rec.u.mmap.prot & 4) &&
			    mt_cap_target_index(c,
			    (pid_t)rec.u.mmap.pid) >= 0)
				fn(arg, &rec);
	}
}

/* Bundle the file of @rec (a file mapped later: dlopen) into @arg's
 * snapshot, unless its build-id is there. */
static void
bundle_mmap2(void *arg, const struct mt_sb_rec *rec)
{
	struct mt_snap *s = arg;
	const struct mt_sb_mmap *m = &rec->u.mmap;
	struct mt_snap_elf e;
	struct stat st;
	uint8_t *data;
	ssize_t got;
	size_t j;
	int fd;

	if (!(rec->misc & MT_SB_MISC_MMAP_BUILD_ID) || m->build_id_len == 0)
		return;
	for (j = 0; j < s->nelfs; j++)
		if (s->elfs[j].build_id_len >= m->build_id_len &&
		    memcmp(s->elfs[j].build_id, m->build_id,
		    m->build_id_len) == 0)
			return;
	fd = open(m->filename, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size > MT_CAP_MAX_BUNDLE ||
	    (data = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return;
	}
	got = pread(fd, data, (size_t)st.st_size, 0);
	close(fd);
	if (got == (ssize_t)st.st_size) {
		memset(&e, 0, sizeof(e));
		e.build_id_len = m->build_id_len;
		memcpy(e.build_id, m->build_id, m->build_id_len);
		e.path = (char *)(uintptr_t)m->filename;
		e.len = (uint64_t)got;
		e.data = data;
		(void)mt_snap_add_elf(s, &e);
	}
	free(data);
}

/* FILE, FILE-1.snap / FILE.1 for later snapshots. */
static void
snapshot_path(const char *out, unsigned index, char *buf, size_t sz)
{
	const char *dot;
	size_t n = strlen(out);

	if (index == 0) {
		snprintf(buf, sz, "%s", out);
		return;
	}
	dot = strrchr(out, '.');
	if (dot != NULL && strchr(dot, '/') == NULL && dot != out)
		snprintf(buf, sz, "%.*s-%u%s", (int)(dot - out), out, index,
		    dot);
	else
		snprintf(buf, sz, "%.*s.%u", (int)n, out, index);
}

/* Write @s to @path (snapout.h), saying why when that fails. */
static int
write_atomic(const struct mt_snap *s, const char *path)
{
	int rc = mt_cap_write_snapshot(s, path);

	if (rc < 0)
		warnx("cannot write snapshot '%s': %s; nothing was left under "
		    "that name", path, rc == -MT_E_IO ? strerror(errno) :
		    mt_strerror(rc));
	return rc;
}

/*
 * The RTIT_ADDRn ranges the hardware used: each --filter range at its
 * run-time address in the first target that maps it.
 */
struct filtwalk {
	pid_t pid;
	const struct mt_trig_site *st;
};

/* The mapping of @arg's pid that holds the --filter site's file offset. */
static int
holds_filter(const struct mt_proc_map *m, void *arg)
{
	const struct filtwalk *w = arg;
	char file[PATH_MAX];

	(void)mt_proc_target_file(w->pid, m->path, m->maj, m->min, m->ino,
	    file, sizeof(file));
	return strcmp(file, w->st->path) == 0 && w->st->offset >= m->pgoff &&
	    w->st->offset - m->pgoff < m->end - m->start;
}

static void
filters_to_ptcfg(const struct mt_cap *c, struct mt_snap_ptcfg *p)
{
	size_t f, t;

	p->nfilters = 0;
	for (f = 0; f < c->nfsites && p->nfilters < MT_SNAP_MAX_FILTERS; f++)
		for (t = 0; t < c->ntargets; t++) {
			struct filtwalk w = { c->targets[t], &c->fsites[f] };
			struct mt_snap_filter *sf;
			struct mt_proc_map m;

			if (mt_proc_find_map(w.pid, holds_filter, &w, &m) < 0)
				continue;
			sf = &p->filters[p->nfilters++];
			sf->a = m.start + (w.st->offset - m.pgoff);
			sf->b = sf->a + w.st->size - 1;
			sf->cfg = 1;
			break;
		}
}

static const char *
reason_name(int ev)
{
	switch (ev) {
	case MT_CAP_EV_TRIGGER:
		return "trigger";
	case MT_CAP_EV_DURATION:
		return "duration";
	case MT_CAP_EV_EXIT:
		return "exit";
	case MT_CAP_EV_SIGNAL:
		return mt_cap_signal() == SIGINT ? "sigint" : mt_cap_signal() == SIGTERM ?
		    "sigterm" : "sighup";
	default:
		return "unknown";
	}
}

/* Copy every ring's valid bytes into @s (AUX chunks). */
static int
add_rings(struct mt_cap *c, struct mt_snap *s, uint64_t *ptbytes)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < c->nbufs; i++) {
		struct mt_cap_buf *b = c->bufs[i];
		struct mt_snap_aux a;

		if (b->ring.base == NULL)
			continue;
		memset(&a, 0, sizeof(a));
		rc = mt_ring_extract(b->ring.base, b->ring.size, b->ring.head,
		    &b->wrap, &a);
		if (rc < 0) {
			warnx("cannot extract ring of thread %d: %s",
			    (int)b->tid, mt_strerror(rc));
			continue;
		}
		a.tid = b->tid >= 0 ? (uint32_t)b->tid : MT_SNAP_NONE;
		a.cpu = b->cpu >= 0 ? (uint32_t)b->cpu : MT_SNAP_NONE;
		a.index = c->nsnapshots;
		*ptbytes += a.len;
		rc = mt_snap_add_aux(s, &a);
		free(a.data);
		if (rc < 0)
			break;
	}
	return rc;
}

/*
 * Resume recording (and the triggers, dropping the hits queued meanwhile)
 * after a snapshot, for --multi-snapshot.
 */
static int
resume_recording(struct mt_cap *c)
{
	int rc;

	if ((rc = c->ops->resume(c)) < 0 ||
	    (rc = mt_trig_enable(c->trig, 1, 1)) < 0)
		warnx("cannot resume: %s", mt_strerror(rc));
	return rc;
}

/*
 * --kernel: kallsyms, kernel and module text again, as they are now
 * (modules loaded and code patched since the start).  Keeps the older
 * copy when that fails.
 */
static void
refresh_kernel(struct mt_cap *c)
{
	struct mt_snap *k = calloc(1, sizeof(*k));
	char msg[512];

	if (k == NULL)
		return;
	struct mt_proc_krange jit[256];
	size_t njit = mt_sbev_ksyms(c->sb, jit, 256);

	mt_snap_init(k);
	if (mt_proc_kernel(k, jit, njit, msg, sizeof(msg)) < 0 ||
	    k->ntexts == 0) {
		mt_snap_release(k);
		free(k);
		return;
	}
	mt_snap_release(c->kdesc);
	free(c->kdesc);
	c->kdesc = k;
}

/*
 * Write a snapshot; with @more (--multi-snapshot continues), recording
 * resumes afterwards.  The live PT backend resumes as soon as the rings
 * are copied, before the slow part (maps, bundled files, writing), so
 * the time nothing is recorded is the copy only (issue 19).
 */
int
mt_cap_take_snapshot(struct mt_cap *c, int ev, int more)
{
	struct mt_snap s;
	struct mt_snap_host h;
	char path[PATH_MAX + 32], num[32], when[64];
	uint64_t ptbytes = 0;
	time_t now = time(NULL);
	struct tm tm;
	size_t i;
	int rc;

	rc = c->ops->stop(c);
	if (rc < 0) {
		warnx("cannot stop recording: %s", mt_strerror(rc));
		return rc;
	}
	/* No hits while the snapshot is written (re-enabled on resume). */
	(void)mt_trig_enable(c->trig, 0, 0);
	mt_snap_init(&s);
	rc = add_rings(c, &s, &ptbytes);
	if (rc == 0 && more && c->ops == &mt_cap_backend_pt) {
		if ((rc = resume_recording(c)) < 0) {
			mt_snap_release(&s);
			return rc;
		}
		more = 0;
	}
	if (c->sb != NULL)
		(void)mt_sbev_drain(c->sb);
	snprintf(num, sizeof(num), "%u", c->nsnapshots);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	(void)mt_snap_add_meta(&s, "mt-version", MT_VERSION);
	(void)mt_snap_add_meta(&s, "reason", reason_name(ev));
	(void)mt_snap_add_meta(&s, "backend-name", c->ops->name);
	(void)mt_snap_add_meta(&s, "time", when);
	(void)mt_snap_add_meta(&s, "snapshot-index", num);
	for (i = 0; i < c->o->ntriggers; i++)
		(void)mt_snap_add_meta(&s, "trigger", c->o->triggers[i]);
	mt_proc_host(&h, c->max_nonturbo_ratio);
	(void)mt_snap_set_host(&s, &h);
	free(h.kernel);
	free(h.hostname);
	s.has_host = 1;
	s.ptcfg = c->ptcfg;
	filters_to_ptcfg(c, &s.ptcfg);
	s.has_ptcfg = 1;
	if (c->sb != NULL)
		(void)mt_sbev_timeconv(c->sb, &c->timeconv);
	s.timeconv = c->timeconv;
	s.has_timeconv = 1;
	for (i = 0; i < c->ntargets; i++) {
		if (c->alive[i])
			mt_cap_describe(c, i);
		if (c->desc[i] != NULL)
			copy_desc(&s, c->desc[i]);
	}
	add_buf_threads(c, &s);
	if (c->kdesc != NULL)
		refresh_kernel(c);
	if (c->kdesc != NULL)
		copy_desc(&s, c->kdesc);
	/* Files mapped later (dlopen), from the sideband's MMAP2 records */
	if (c->o->bundle)
		mt_cap_sb_mmaps(c, bundle_mmap2, &s);
	for (i = 0; c->sb != NULL && i < mt_sbev_nrings(c->sb); i++) {
		struct mt_snap_sideband sb;
		const struct mt_wbuf *w;
		int cpu;

		w = mt_sbev_data(c->sb, i, &cpu);
		memset(&sb, 0, sizeof(sb));
		sb.cpu = cpu < 0 ? MT_SNAP_NONE : (uint32_t)cpu;
		sb.tid = mt_sbev_tid(c->sb, i) < 0 ? MT_SNAP_NONE :
		    (uint32_t)mt_sbev_tid(c->sb, i);
		sb.sample_type = mt_sbev_sample_type(c->sb);
		sb.len = w->len;
		sb.data = w->p;
		(void)mt_snap_add_sideband(&s, &sb);
	}
	/* Every uprobe site: a probed branch the kernel emulates decodes
	 * as one, whether a hit names it or not (issue 19 item 14). */
	if (c->ops == &mt_cap_backend_pt)
		mt_cap_add_probes(c, &s);
	/* The hits since the previous snapshot: the ones that caused this
	 * one (a hot function can fire thousands of times meanwhile). */
	if (c->nhits > 0) {
		char nh[32];

		snprintf(nh, sizeof(nh), "%zu", c->nhits + c->hits_dropped);
		(void)mt_snap_add_meta(&s, "trigger-hits", nh);
	}
	for (i = 0; i < c->nhits; i++) {
		struct mt_snap_trigger t;
		struct mt_cap_hit *hh = &c->hits[i];

		memset(&t, 0, sizeof(t));
		t.time = hh->time;
		t.pid = (uint32_t)hh->pid;
		t.tid = (uint32_t)hh->tid;
		t.ip = hh->ip;
		t.index = c->nsnapshots;
		t.what = (char *)(uintptr_t)c->o->triggers[hh->trigger];
		(void)mt_snap_add_trigger(&s, &t);
	}
	c->nhits = c->hits_seen = c->hits_dropped = 0;
	if (rc == 0 && c->ops->annotate != NULL)
		rc = c->ops->annotate(c, &s);
	if (rc < 0) {
		warnx("cannot assemble the snapshot: %s", mt_strerror(rc));
		mt_snap_release(&s);
		return rc;
	}
	snapshot_path(c->o->output, c->nsnapshots, path, sizeof(path));
	rc = write_atomic(&s, path);
	mt_snap_release(&s);
	if (rc < 0)
		return rc;
	if (more && (rc = resume_recording(c)) < 0)
		return rc;
	if (!c->o->quiet)
		fprintf(stderr, "mt-capture: wrote snapshot %u (%s): '%s', "
		    "%llu bytes of trace in %zu buffer%s\n", c->nsnapshots,
		    reason_name(ev), path, (unsigned long long)ptbytes,
		    c->nbufs, c->nbufs == 1 ? "" : "s");
	c->nsnapshots++;
	return 0;
}
