/* SPDX-License-Identifier: MIT */
/*
 * Threads, processes, sideband mappings and per-CPU switch lists
 * (threads.h), read with common/sideband.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "image.h"
#include "sideband.h"
#include "snap.h"
#include "threads.h"

static int
thr_add(struct thr_set *ts, uint32_t pid, uint32_t tid, const char *comm)
{
	size_t i;
	struct thr_info *t;

	for (i = 0; i < ts->nt; i++) {
		if (ts->t[i].tid != tid)
			continue;
		if (pid != 0)
			ts->t[i].pid = pid;
		if (comm != NULL && comm[0] != '\0')
			ts->t[i].comm = comm;
		return 0;
	}
	if ((ts->nt & (ts->nt - 1)) == 0) {
		t = realloc(ts->t, (ts->nt ? 2 * ts->nt : 8) * sizeof(*t));
		if (t == NULL)
			return -MT_E_NOMEM;
		ts->t = t;
	}
	ts->t[ts->nt].pid = pid;
	ts->t[ts->nt].tid = tid;
	ts->t[ts->nt].comm = comm ? comm : "";
	ts->nt++;
	return 0;
}

static struct thr_cpu *
thr_cpu_get(struct thr_set *ts, uint32_t cpu)
{
	struct thr_cpu *c;
	size_t i;

	for (i = 0; i < ts->ncpus; i++)
		if (ts->cpus[i].cpu == cpu)
			return &ts->cpus[i];
	c = realloc(ts->cpus, (ts->ncpus + 1) * sizeof(*c));
	if (c == NULL)
		return NULL;
	ts->cpus = c;
	c = &ts->cpus[ts->ncpus++];
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	return c;
}

static int
thr_switch_add(struct thr_set *ts, uint32_t cpu, uint64_t time, uint32_t pid,
    uint32_t tid)
{
	struct thr_cpu *c = thr_cpu_get(ts, cpu);
	struct thr_switch *sw;

	if (c == NULL)
		return -MT_E_NOMEM;
	if ((c->nsw & (c->nsw - 1)) == 0) {
		sw = realloc(c->sw, (c->nsw ? 2 * c->nsw : 16) * sizeof(*sw));
		if (sw == NULL)
			return -MT_E_NOMEM;
		c->sw = sw;
	}
	c->sw[c->nsw].time = time;
	c->sw[c->nsw].pid = pid;
	c->sw[c->nsw].tid = tid;
	c->nsw++;
	return 0;
}

static int
sw_cmp(const void *a, const void *b)
{
	const struct thr_switch *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static int
thr_record(struct thr_set *ts, const struct mt_snap_sideband *sb,
    const struct mt_sb_rec *r, struct image_set *is)
{
	uint32_t cpu = sb->cpu;
	int out = (r->misc & MT_SB_MISC_SWITCH_OUT) != 0;

	if (cpu == MT_SNAP_NONE && r->has_id && (sb->sample_type &
	    MT_SB_ST_CPU))
		cpu = r->id.cpu;
	switch (r->type) {
	case MT_SB_MMAP:
	case MT_SB_MMAP2:
		if (r->misc & MT_SB_MISC_MMAP_DATA)
			return 0;
		if (r->type == MT_SB_MMAP2 && !(r->u.mmap.prot & 4))
			return 0;
		return image_set_add_mapping(is, r->u.mmap.pid,
		    r->u.mmap.addr, r->u.mmap.len, r->u.mmap.pgoff,
		    r->u.mmap.build_id, r->u.mmap.build_id_len,
		    r->u.mmap.filename, r->has_id &&
		    (sb->sample_type & MT_SB_ST_TIME) ? r->id.time : 0);
	case MT_SB_COMM:
		return thr_add(ts, r->u.comm.pid, r->u.comm.tid,
		    r->u.comm.comm);
	case MT_SB_FORK:
		return thr_add(ts, r->u.task.pid, r->u.task.tid, NULL);
	case MT_SB_LOST:
	case MT_SB_LOST_SAMPLES:
		ts->sb_lost += r->u.lost.lost;
		return 0;
	case MT_SB_ITRACE_START:
		if (cpu == MT_SNAP_NONE || !r->has_id)
			return thr_add(ts, r->u.task.pid, r->u.task.tid, NULL);
		return thr_switch_add(ts, cpu, r->id.time, r->u.task.pid,
		    r->u.task.tid);
	case MT_SB_SWITCH:
	case MT_SB_SWITCH_CPU_WIDE:
		if (out || cpu == MT_SNAP_NONE || !r->has_id ||
		    !(sb->sample_type & MT_SB_ST_TID))
			return 0;
		return thr_switch_add(ts, cpu, r->id.time, r->id.pid,
		    r->id.tid);
	default:
		return 0;
	}
}

int
thr_set_build(struct thr_set *ts, const struct mt_snap *s,
    struct image_set *is, uint64_t *err_off, const char **err_msg)
{
	size_t i;
	int rc;

	memset(ts, 0, sizeof(*ts));
	for (i = 0; i < s->nprocs; i++) {
		rc = thr_add(ts, s->procs[i].pid, s->procs[i].pid,
		    s->procs[i].comm);
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < s->nthreads; i++) {
		rc = thr_add(ts, s->threads[i].pid, s->threads[i].tid,
		    s->threads[i].comm);
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < s->nsideband; i++) {
		const struct mt_snap_sideband *sb = &s->sideband[i];
		struct mt_sb_reader r;
		struct mt_sb_rec rec;

		mt_sb_reader_init(&r, sb->data, sb->len, sb->sample_type, 1,
		    0);
		while ((rc = mt_sb_next(&r, &rec)) == 0) {
			ts->sb_records++;
			rc = thr_record(ts, sb, &rec, is);
			if (rc < 0)
				return rc;
		}
		if (rc < 0) {
			*err_off = r.err_off;
			*err_msg = r.err_msg;
			return rc;
		}
	}
	for (i = 0; i < ts->ncpus; i++)
		qsort(ts->cpus[i].sw, ts->cpus[i].nsw, sizeof(struct thr_switch),
		    sw_cmp);
	return 0;
}

void
thr_set_release(struct thr_set *ts)
{
	size_t i;

	for (i = 0; i < ts->ncpus; i++)
		free(ts->cpus[i].sw);
	free(ts->cpus);
	free(ts->t);
	memset(ts, 0, sizeof(*ts));
}

uint32_t
thr_pid(const struct thr_set *ts, uint32_t tid)
{
	size_t i;

	for (i = 0; i < ts->nt; i++)
		if (ts->t[i].tid == tid)
			return ts->t[i].pid;
	return 0;
}

const char *
thr_comm(const struct thr_set *ts, uint32_t tid)
{
	size_t i;

	for (i = 0; i < ts->nt; i++)
		if (ts->t[i].tid == tid)
			return ts->t[i].comm;
	return "";
}

const struct thr_cpu *
thr_cpu(const struct thr_set *ts, uint32_t cpu)
{
	size_t i;

	for (i = 0; i < ts->ncpus; i++)
		if (ts->cpus[i].cpu == cpu)
			return &ts->cpus[i];
	return NULL;
}

/* Index of the last switch of @c at or before @time, or -1. */
static long
thr_sw_at(const struct thr_cpu *c, uint64_t time)
{
	size_t lo = 0, hi = c->nsw, mid;

	while (lo < hi) {	/* first switch after @time */
		mid = lo + (hi - lo) / 2;
		if (c->sw[mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

int
thr_on_cpu(const struct thr_set *ts, uint32_t tid, uint64_t time,
    uint32_t *cpu)
{
	uint64_t best = 0, first = UINT64_MAX;
	int found = 0, named = 0;
	size_t i, k;
	long at;

	for (i = 0; i < ts->ncpus; i++) {
		const struct thr_cpu *c = &ts->cpus[i];

		at = thr_sw_at(c, time);
		if (at >= 0 && c->sw[at].tid == tid &&
		    (!found || c->sw[at].time > best)) {
			found = 1;
			best = c->sw[at].time;
			*cpu = c->cpu;
		}
	}
	if (found)
		return 1;
	for (i = 0; i < ts->ncpus; i++)
		for (k = 0; k < ts->cpus[i].nsw; k++)
			if (ts->cpus[i].sw[k].tid == tid &&
			    ts->cpus[i].sw[k].time < first) {
				first = ts->cpus[i].sw[k].time;
				*cpu = ts->cpus[i].cpu;
				named = 1;
				break;
			}
	return named;
}
