/* SPDX-License-Identifier: MIT */
/*
 * perf.data writer (see perfdata.h and docs/formats/perfdata.md); the
 * reader is perfdata.c.  Records are kept in memory in file order and
 * written front to back by mt_pd_writer_finish(), in file mode (header,
 * attrs, data, feature sections with the HEADER_AUXTRACE index) or pipe
 * mode (16-byte header, HEADER_ATTR and HEADER_FEATURE records first).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "perfdata.h"
#include "perfdata-int.h"
#include "sideband.h"

struct mt_pd_writer {
	int pipe;
	int started;			/* a record was added */
	struct mt_pd_attr *attrs;	/* ids owned */
	size_t nattrs;
	struct mt_wbuf data;		/* the data section */
	uint64_t *auxidx;		/* data offsets of AUXTRACE records */
	size_t nauxidx;
	struct mt_wbuf bids;		/* build-id records, back to back */
	char *cpuid;
	int has_nrcpus;
	uint32_t nr_avail, nr_online;
};

int
mt_pd_writer_new(struct mt_pd_writer **wp, int pipe)
{
	struct mt_pd_writer *w = calloc(1, sizeof(*w));

	*wp = w;
	if (w == NULL)
		return -MT_E_NOMEM;
	w->pipe = pipe;
	mt_wbuf_init(&w->data);
	mt_wbuf_init(&w->bids);
	return 0;
}

void
mt_pd_writer_free(struct mt_pd_writer *w)
{
	size_t i;

	if (w == NULL)
		return;
	for (i = 0; i < w->nattrs; i++)
		free(w->attrs[i].ids);
	free(w->attrs);
	mt_wbuf_release(&w->data);
	mt_wbuf_release(&w->bids);
	free(w->auxidx);
	free(w->cpuid);
	free(w);
}

int
mt_pd_writer_attr(struct mt_pd_writer *w, const struct mt_pd_attr *a)
{
	struct mt_pd_attr *n;

	if (w->started || (a->nids > 0 && a->ids == NULL))
		return -MT_E_INVAL;
	n = mt_pd_grow(&w->attrs, &w->nattrs, sizeof(*n));
	if (n == NULL)
		return -MT_E_NOMEM;
	*n = *a;
	n->size = MT_PD_ATTR_SIZE;
	n->ids = NULL;
	if (a->nids > 0) {
		n->ids = malloc(a->nids * 8);
		if (n->ids == NULL) {
			w->nattrs--;
			return -MT_E_NOMEM;
		}
		memcpy(n->ids, a->ids, a->nids * 8);
	}
	return 0;
}

static void
put_attr(struct mt_wbuf *b, const struct mt_pd_attr *a)
{
	static const uint8_t zeros[MT_PD_ATTR_SIZE];

	mt_wbuf_u32le(b, a->type);
	mt_wbuf_u32le(b, MT_PD_ATTR_SIZE);
	mt_wbuf_u64le(b, a->config);
	mt_wbuf_u64le(b, a->sample_period);
	mt_wbuf_u64le(b, a->sample_type);
	mt_wbuf_u64le(b, a->read_format);
	mt_wbuf_u64le(b, a->flags);
	mt_wbuf_u32le(b, a->wakeup_events);
	mt_wbuf_u32le(b, 0);			/* bp_type */
	mt_wbuf_u64le(b, a->config1);
	mt_wbuf_u64le(b, a->config2);
	mt_wbuf_put(b, zeros, 104 - 72);	/* branch_sample_type.. */
	mt_wbuf_u32le(b, a->aux_watermark);
	mt_wbuf_put(b, zeros, MT_PD_ATTR_SIZE - 108);
}

static void
put_hdr(struct mt_wbuf *b, uint32_t type, uint16_t misc, uint16_t size)
{
	mt_wbuf_u32le(b, type);
	mt_wbuf_u16le(b, misc);
	mt_wbuf_u16le(b, size);
}

int
mt_pd_writer_auxtrace_info(struct mt_pd_writer *w, uint32_t type,
    const uint64_t *priv, size_t npriv)
{
	size_t i;

	if (npriv > (65535 - 16) / 8)
		return -MT_E_INVAL;
	w->started = 1;
	put_hdr(&w->data, MT_PD_AUXTRACE_INFO, 0, (uint16_t)(16 + 8 * npriv));
	mt_wbuf_u32le(&w->data, type);
	mt_wbuf_u32le(&w->data, 0);
	for (i = 0; i < npriv; i++)
		mt_wbuf_u64le(&w->data, priv[i]);
	return w->data.err;
}

int
mt_pd_writer_time_conv(struct mt_pd_writer *w,
    const struct mt_pd_time_conv *tc)
{
	static const uint8_t zeros[6];

	w->started = 1;
	put_hdr(&w->data, MT_PD_TIME_CONV, 0, REC_HDR + 48);
	mt_wbuf_u64le(&w->data, tc->time_shift);
	mt_wbuf_u64le(&w->data, tc->time_mult);
	mt_wbuf_u64le(&w->data, tc->time_zero);
	mt_wbuf_u64le(&w->data, tc->time_cycles);
	mt_wbuf_u64le(&w->data, tc->time_mask);
	mt_wbuf_u8(&w->data, tc->cap_user_time_zero);
	mt_wbuf_u8(&w->data, tc->cap_user_time_short);
	mt_wbuf_put(&w->data, zeros, 6);
	return w->data.err;
}

int
mt_pd_writer_record(struct mt_pd_writer *w, const void *rec, size_t len)
{
	const uint8_t *p = rec;

	if (len < REC_HDR || mt_le16(p + 6) != len ||
	    mt_le32(p) == MT_PD_AUXTRACE)
		return -MT_E_INVAL;
	w->started = 1;
	mt_wbuf_put(&w->data, rec, len);
	return w->data.err;
}

int
mt_pd_writer_auxtrace(struct mt_pd_writer *w,
    const struct mt_pd_auxtrace *a)
{
	static const uint8_t zeros[8];
	uint64_t *ni;
	size_t pad = (size_t)((8 - (a->size & 7)) & 7);

	if (a->size > 0 && a->data == NULL)
		return -MT_E_INVAL;
	if ((w->nauxidx & (w->nauxidx + 1)) == 0) {
		ni = realloc(w->auxidx, (w->nauxidx + 1) * 2 * 8);
		if (ni == NULL)
			return -MT_E_NOMEM;
		w->auxidx = ni;
	}
	w->started = 1;
	w->auxidx[w->nauxidx++] = w->data.len;
	put_hdr(&w->data, MT_PD_AUXTRACE, 0, MT_PD_AUXTRACE_HDR);
	mt_wbuf_u64le(&w->data, a->size + pad);
	mt_wbuf_u64le(&w->data, a->offset);
	mt_wbuf_u64le(&w->data, a->reference);
	mt_wbuf_u32le(&w->data, a->idx);
	mt_wbuf_u32le(&w->data, a->tid);
	mt_wbuf_u32le(&w->data, a->cpu);
	mt_wbuf_u32le(&w->data, 0);
	if (a->size > 0)
		mt_wbuf_put(&w->data, a->data, (size_t)a->size);
	mt_wbuf_put(&w->data, zeros, pad);
	return w->data.err;
}

int
mt_pd_writer_finished_round(struct mt_pd_writer *w)
{
	w->started = 1;
	put_hdr(&w->data, MT_PD_FINISHED_ROUND, 0, REC_HDR);
	return w->data.err;
}

/* Bytes a name takes in perf: with NUL, padded to NAME_ALIGN. */
static size_t
name_size(const char *s)
{
	return (strlen(s) + 1 + NAME_ALIGN - 1) & ~(size_t)(NAME_ALIGN - 1);
}

static void
put_padded(struct mt_wbuf *b, const char *s, size_t n)
{
	static const uint8_t zeros[NAME_ALIGN];
	size_t len = strlen(s);

	mt_wbuf_put(b, s, len);
	mt_wbuf_put(b, zeros, n - len);
}

int
mt_pd_writer_build_id(struct mt_pd_writer *w,
    const struct mt_pd_build_id *b)
{
	size_t n;

	if (b->filename == NULL || b->len > 20 ||
	    strlen(b->filename) > 4000)
		return -MT_E_INVAL;
	n = name_size(b->filename);
	put_hdr(&w->bids, MT_PD_HEADER_BUILD_ID,
	    (uint16_t)((b->misc & MT_SB_MISC_CPUMODE_MASK) |
	    BUILD_ID_SIZE_MISC), (uint16_t)(36 + n));
	mt_wbuf_u32le(&w->bids, (uint32_t)b->pid);
	mt_wbuf_put(&w->bids, b->id, 20);
	mt_wbuf_u8(&w->bids, b->len);
	mt_wbuf_put(&w->bids, "\0\0", 3);
	put_padded(&w->bids, b->filename, n);
	return w->bids.err;
}

int
mt_pd_writer_cpuid(struct mt_pd_writer *w, const char *cpuid)
{
	char *s = strdup(cpuid);

	if (s == NULL)
		return -MT_E_NOMEM;
	free(w->cpuid);
	w->cpuid = s;
	return 0;
}

int
mt_pd_writer_nr_cpus(struct mt_pd_writer *w, uint32_t avail,
    uint32_t online)
{
	w->has_nrcpus = 1;
	w->nr_avail = avail;
	w->nr_online = online;
	return 0;
}

static int
write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	ssize_t k;

	while (n > 0) {
		k = write(fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -MT_E_IO;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

/* A feature body into @b. */
static void
put_feature(const struct mt_pd_writer *w, struct mt_wbuf *b, unsigned feat,
    uint64_t data_off)
{
	size_t i;

	switch (feat) {
	case MT_PD_FEAT_BUILD_ID:
		mt_wbuf_put(b, w->bids.p, w->bids.len);
		break;
	case MT_PD_FEAT_NRCPUS:
		mt_wbuf_u32le(b, w->nr_avail);
		mt_wbuf_u32le(b, w->nr_online);
		break;
	case MT_PD_FEAT_CPUID:
		mt_wbuf_u32le(b, (uint32_t)name_size(w->cpuid));
		put_padded(b, w->cpuid, name_size(w->cpuid));
		break;
	case MT_PD_FEAT_AUXTRACE:
		mt_wbuf_u64le(b, w->nauxidx);
		for (i = 0; i < w->nauxidx; i++) {
			mt_wbuf_u64le(b, data_off + w->auxidx[i]);
			mt_wbuf_u64le(b, MT_PD_AUXTRACE_HDR);
		}
		break;
	}
}

static int
finish_pipe(struct mt_pd_writer *w, struct mt_wbuf *h)
{
	static const unsigned feats[] = { MT_PD_FEAT_NRCPUS, MT_PD_FEAT_CPUID };
	struct mt_wbuf f;
	size_t i;

	mt_wbuf_u64le(h, MT_PD_MAGIC);
	mt_wbuf_u64le(h, MT_PD_PIPE_HDR_SIZE);
	for (i = 0; i < w->nattrs; i++) {
		put_hdr(h, MT_PD_HEADER_ATTR, 0,
		    (uint16_t)(REC_HDR + MT_PD_ATTR_SIZE + 8 * w->attrs[i].nids));
		put_attr(h, &w->attrs[i]);
		for (size_t j = 0; j < w->attrs[i].nids; j++)
			mt_wbuf_u64le(h, w->attrs[i].ids[j]);
	}
	for (i = 0; i < sizeof(feats) / sizeof(feats[0]); i++) {
		if ((feats[i] == MT_PD_FEAT_NRCPUS && !w->has_nrcpus) ||
		    (feats[i] == MT_PD_FEAT_CPUID && w->cpuid == NULL))
			continue;
		mt_wbuf_init(&f);
		put_feature(w, &f, feats[i], 0);
		put_hdr(h, MT_PD_HEADER_FEATURE, 0, (uint16_t)(16 + f.len));
		mt_wbuf_u64le(h, feats[i]);
		mt_wbuf_put(h, f.p, f.len);
		if (f.err)
			h->err = f.err;
		mt_wbuf_release(&f);
	}
	return h->err;
}

static int
finish_file(struct mt_pd_writer *w, struct mt_wbuf *h, struct mt_wbuf *t)
{
	uint64_t feats[4] = { 0, 0, 0, 0 };
	uint64_t ids_off, ids_size = 0, data_off, tab_off, body_off;
	struct mt_wbuf bodies;
	unsigned feat;
	size_t i, j, nfeat = 0;

	for (i = 0; i < w->nattrs; i++)
		ids_size += 8 * w->attrs[i].nids;
	ids_off = MT_PD_FILE_HDR_SIZE + w->nattrs * (MT_PD_ATTR_SIZE + 16);
	data_off = ids_off + ids_size;
	if (w->bids.len > 0)
		feats[0] |= 1ull << MT_PD_FEAT_BUILD_ID;
	if (w->has_nrcpus)
		feats[0] |= 1ull << MT_PD_FEAT_NRCPUS;
	if (w->cpuid != NULL)
		feats[0] |= 1ull << MT_PD_FEAT_CPUID;
	if (w->nauxidx > 0)
		feats[0] |= 1ull << MT_PD_FEAT_AUXTRACE;
	for (feat = 0; feat < 64; feat++)
		if (feats[0] >> feat & 1)
			nfeat++;

	mt_wbuf_u64le(h, MT_PD_MAGIC);
	mt_wbuf_u64le(h, MT_PD_FILE_HDR_SIZE);
	mt_wbuf_u64le(h, MT_PD_ATTR_SIZE + 16);
	mt_wbuf_u64le(h, MT_PD_FILE_HDR_SIZE);
	mt_wbuf_u64le(h, w->nattrs * (MT_PD_ATTR_SIZE + 16));
	mt_wbuf_u64le(h, data_off);
	mt_wbuf_u64le(h, w->data.len);
	mt_wbuf_u64le(h, 0);		/* event_types */
	mt_wbuf_u64le(h, 0);
	for (i = 0; i < 4; i++)
		mt_wbuf_u64le(h, feats[i]);
	for (i = 0, j = ids_off; i < w->nattrs; i++) {
		put_attr(h, &w->attrs[i]);
		mt_wbuf_u64le(h, j);
		mt_wbuf_u64le(h, 8 * w->attrs[i].nids);
		j += 8 * w->attrs[i].nids;
	}
	for (i = 0; i < w->nattrs; i++)
		for (j = 0; j < w->attrs[i].nids; j++)
			mt_wbuf_u64le(h, w->attrs[i].ids[j]);

	/* Feature table then bodies, after the data section. */
	tab_off = data_off + w->data.len;
	body_off = tab_off + 16 * nfeat;
	mt_wbuf_init(&bodies);
	for (feat = 0; feat < 64; feat++) {
		size_t before = bodies.len;

		if (!(feats[0] >> feat & 1))
			continue;
		put_feature(w, &bodies, feat, data_off);
		mt_wbuf_u64le(t, body_off + before);
		mt_wbuf_u64le(t, bodies.len - before);
	}
	mt_wbuf_put(t, bodies.p, bodies.len);
	if (bodies.err)
		t->err = bodies.err;
	mt_wbuf_release(&bodies);
	return h->err ? h->err : t->err;
}

int
mt_pd_writer_finish(struct mt_pd_writer *w, int fd)
{
	struct mt_wbuf h, t;
	int rc;

	if (w->data.err || w->bids.err)
		return -MT_E_NOMEM;
	mt_wbuf_init(&h);
	mt_wbuf_init(&t);
	if (w->pipe) {
		rc = finish_pipe(w, &h);
		mt_wbuf_put(&t, w->bids.p, w->bids.len);
		if (t.err)
			rc = t.err;
	} else {
		rc = finish_file(w, &h, &t);
	}
	if (rc == 0)
		rc = write_all(fd, h.p, h.len);
	if (rc == 0)
		rc = write_all(fd, w->data.p, w->data.len);
	if (rc == 0)
		rc = write_all(fd, t.p, t.len);
	mt_wbuf_release(&h);
	mt_wbuf_release(&t);
	return rc;
}
