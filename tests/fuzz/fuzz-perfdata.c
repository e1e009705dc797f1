/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the perf.data reader (common/perfdata.c), the parser of
 * `mt-capture import-perf`, over hostile files in both file and pipe mode.
 *
 * The input is read with mt_pd_read_mem(); when it reads, every kernel
 * record is walked with the sideband parser under its attr's sample_type
 * (as the importer does), and the whole content is written back with the
 * perf.data writer in file mode and in pipe mode and read again: the
 * attrs, AUXTRACE_INFO, AUXTRACE buffers, records and header features
 * must survive both.  Then mt-capture's importer (mt-capture/perf-import.c,
 * perf_import) turns it into a snapshot, without bundling files: when it
 * succeeds the snapshot must write and read back.
 */
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "perfdata.h"
#include "sideband.h"
#include "snap.h"
#include "../../mt-capture/perf.h"
#include "fuzz.h"

static void
walk_events(const struct mt_pd *pd, const uint8_t *base, size_t n)
{
	size_t i;

	for (i = 0; i < pd->nevents; i++) {
		const struct mt_pd_event *ev = &pd->events[i];
		struct mt_sb_reader r;
		struct mt_sb_rec rec;
		uint64_t st = 0;
		int all = 1;

		if (base != NULL)
			FUZZ_CHECK(ev->p >= base && ev->size <= n &&
			    (size_t)(ev->p - base) <= n - ev->size);
		if (ev->attr < pd->nattrs) {
			st = pd->attrs[ev->attr].sample_type;
			all = !!(pd->attrs[ev->attr].flags &
			    MT_PD_ATTR_SAMPLE_ID_ALL);
		}
		mt_sb_reader_init(&r, ev->p, ev->size, st, all, ev->off);
		while (mt_sb_next(&r, &rec) == 0)
			;
	}
	for (i = 0; i < pd->naux && base != NULL; i++) {
		const struct mt_pd_auxtrace *a = &pd->aux[i];

		FUZZ_CHECK(a->size <= n);
		FUZZ_CHECK(a->size == 0 || (a->data >= base &&
		    (size_t)(a->data - base) <= n - a->size));
	}
}

static uint8_t *
rewrite(const struct mt_pd *pd, int pipe, size_t *n)
{
	struct mt_pd_writer *w;
	int fd = fuzz_memfd("", 0);
	uint8_t *p;
	size_t i;

	FUZZ_CHECK(mt_pd_writer_new(&w, pipe) == 0);
	for (i = 0; i < pd->nattrs; i++)
		FUZZ_CHECK(mt_pd_writer_attr(w, &pd->attrs[i]) == 0);
	if (pd->cpuid)
		FUZZ_CHECK(mt_pd_writer_cpuid(w, pd->cpuid) == 0);
	FUZZ_CHECK(mt_pd_writer_nr_cpus(w, pd->nr_cpus_avail,
	    pd->nr_cpus_online) == 0);
	if (pd->has_auxtrace_info)
		FUZZ_CHECK(mt_pd_writer_auxtrace_info(w, pd->auxtrace_type,
		    pd->priv, pd->npriv) == 0);
	if (pd->has_time_conv)
		FUZZ_CHECK(mt_pd_writer_time_conv(w, &pd->time_conv) == 0);
	for (i = 0; i < pd->nevents; i++)
		FUZZ_CHECK(mt_pd_writer_record(w, pd->events[i].p,
		    pd->events[i].size) == 0);
	for (i = 0; i < pd->naux; i++)
		FUZZ_CHECK(mt_pd_writer_auxtrace(w, &pd->aux[i]) == 0);
	for (i = 0; i < pd->nbuild_ids; i++)
		FUZZ_CHECK(mt_pd_writer_build_id(w, &pd->build_ids[i]) == 0);
	FUZZ_CHECK(mt_pd_writer_finish(w, fd) == 0);
	mt_pd_writer_free(w);
	p = fuzz_slurp(fd, n);
	close(fd);
	return p;
}

static void
same(const struct mt_pd *a, const struct mt_pd *b)
{
	size_t i;

	FUZZ_CHECK(a->nattrs == b->nattrs);
	for (i = 0; i < a->nattrs; i++) {
		const struct mt_pd_attr *x = &a->attrs[i], *y = &b->attrs[i];

		FUZZ_CHECK(x->type == y->type && x->config == y->config);
		FUZZ_CHECK(x->sample_type == y->sample_type);
		FUZZ_CHECK(x->flags == y->flags);
		FUZZ_CHECK(x->nids == y->nids);
		FUZZ_CHECK(x->nids == 0 ||
		    memcmp(x->ids, y->ids, x->nids * 8) == 0);
	}
	FUZZ_CHECK(a->has_auxtrace_info == b->has_auxtrace_info);
	FUZZ_CHECK(a->npriv == b->npriv);
	FUZZ_CHECK(a->npriv == 0 || memcmp(a->priv, b->priv,
	    a->npriv * 8) == 0);
	FUZZ_CHECK(a->has_time_conv == b->has_time_conv);
	if (a->has_time_conv) {
		FUZZ_CHECK(a->time_conv.time_shift == b->time_conv.time_shift);
		FUZZ_CHECK(a->time_conv.time_mult == b->time_conv.time_mult);
		FUZZ_CHECK(a->time_conv.time_zero == b->time_conv.time_zero);
	}
	FUZZ_CHECK(a->nevents == b->nevents);
	for (i = 0; i < a->nevents; i++) {
		FUZZ_CHECK(a->events[i].size == b->events[i].size);
		FUZZ_CHECK(memcmp(a->events[i].p, b->events[i].p,
		    a->events[i].size) == 0);
	}
	FUZZ_CHECK(a->naux == b->naux);
	for (i = 0; i < a->naux; i++) {
		const struct mt_pd_auxtrace *x = &a->aux[i], *y = &b->aux[i];

		/* The writer pads the data to 8 bytes. */
		FUZZ_CHECK(y->size >= x->size && y->size - x->size < 8);
		FUZZ_CHECK(x->size == 0 ||
		    memcmp(x->data, y->data, (size_t)x->size) == 0);
		FUZZ_CHECK(x->offset == y->offset && x->idx == y->idx);
		FUZZ_CHECK(x->tid == y->tid && x->cpu == y->cpu);
	}
	FUZZ_CHECK(a->nbuild_ids == b->nbuild_ids);
	for (i = 0; i < a->nbuild_ids; i++) {
		const struct mt_pd_build_id *x = &a->build_ids[i],
		    *y = &b->build_ids[i];

		FUZZ_CHECK(x->pid == y->pid && x->len == y->len);
		FUZZ_CHECK(memcmp(x->id, y->id, x->len) == 0);
		FUZZ_CHECK(strcmp(x->filename, y->filename) == 0);
	}
	FUZZ_CHECK((a->cpuid == NULL) == (b->cpuid == NULL));
	FUZZ_CHECK(a->cpuid == NULL || strcmp(a->cpuid, b->cpuid) == 0);
}

static void
import(const struct mt_pd *pd)
{
	struct perf_import_opts o;
	struct perf_diag d;
	struct mt_snap s, back;
	struct mt_snap_diag sd;
	uint8_t *p;
	size_t n;
	int rc, fd;

	memset(&o, 0, sizeof(o));
	o.source = "fuzz";
	memset(&d, 0, sizeof(d));
	mt_snap_init(&s);
	rc = perf_import(&o, pd, &s, &d);
	if (rc < 0) {
		FUZZ_CHECK(memchr(d.msg, '\0', sizeof(d.msg)) != NULL);
	} else {
		fd = fuzz_memfd("", 0);
		FUZZ_CHECK(mt_snap_write_fd(&s, fd) == 0);
		p = fuzz_slurp(fd, &n);
		close(fd);
		mt_snap_init(&back);
		rc = mt_snap_read_mem(&back, p, n, &sd);
		if (rc != 0)
			fprintf(stderr, "imported snapshot does not read "
			    "back: %s\n", sd.msg);
		FUZZ_CHECK(rc == 0);
		mt_snap_release(&back);
		free(p);
	}
	mt_snap_release(&s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_pd pd, back;
	struct mt_pd_diag d;
	int rc, pipe;

	mt_pd_init(&pd);
	memset(&d, 0, sizeof(d));
	rc = mt_pd_read_mem(&pd, data, size, &d);
	if (rc < 0) {
		FUZZ_CHECK(memchr(d.msg, '\0', sizeof(d.msg)) != NULL);
		FUZZ_CHECK(d.msg[0] != '\0');
		FUZZ_CHECK(d.off <= size);
		mt_pd_release(&pd);
		return 0;
	}
	FUZZ_CHECK(rc == 0);
	walk_events(&pd, data, size);
	import(&pd);
	for (pipe = 0; pipe < 2; pipe++) {
		size_t n;
		uint8_t *p = rewrite(&pd, pipe, &n);

		mt_pd_init(&back);
		rc = mt_pd_read_mem(&back, p, n, &d);
		if (rc != 0)
			fprintf(stderr, "re-read (pipe %d) failed at %llu: "
			    "%s\n", pipe, (unsigned long long)d.off, d.msg);
		FUZZ_CHECK(rc == 0);
		same(&pd, &back);
		mt_pd_release(&back);
		free(p);
	}
	mt_pd_release(&pd);
	return 0;
}
