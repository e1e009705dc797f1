/* SPDX-License-Identifier: MIT */
/*
 * perf.data reader (see perfdata.h and docs/formats/perfdata.md); the
 * writer is perfdata-write.c.
 *
 * The reader works on the whole file in memory: a record walker shared by
 * file mode (over the data section) and pipe mode (over everything after
 * the 16-byte header), plus the file-mode header, attr table and feature
 * sections.  Each offset and size read from the file is checked against
 * the bytes that remain before it is used.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "perfdata.h"
#include "perfdata-int.h"
#include "sideband.h"

#define MAX_ATTRS	4096
#define MAX_ATTR_SIZE	4096
#define DEFAULT_LIMIT	(16ull << 30)

/* Reader state: the bytes and where the diagnostics go. */
struct rd {
	struct mt_pd *pd;
	const uint8_t *p;
	size_t len;
	struct mt_pd_diag *d;
	int all_identifier;	/* every attr has PERF_SAMPLE_IDENTIFIER */
};

static int
diag(struct rd *r, int rc, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	if (r->d != NULL) {
		r->d->off = off;
		va_start(ap, fmt);
		vsnprintf(r->d->msg, sizeof(r->d->msg), fmt, ap);
		va_end(ap);
	}
	return rc;
}

void
mt_pd_init(struct mt_pd *pd)
{
	memset(pd, 0, sizeof(*pd));
}

void
mt_pd_release(struct mt_pd *pd)
{
	size_t i;

	for (i = 0; i < pd->nattrs; i++)
		free(pd->attrs[i].ids);
	free(pd->attrs);
	free(pd->priv);
	free(pd->aux);
	free(pd->events);
	for (i = 0; i < pd->nbuild_ids; i++)
		free(pd->build_ids[i].filename);
	free(pd->build_ids);
	free(pd->cpuid);
	free(pd->hostname);
	free(pd->osrelease);
	free(pd->mem);
	memset(pd, 0, sizeof(*pd));
}

/*
 * Append a zeroed element to *arrp (of *n elements of @sz), growing the
 * array to powers of two from 16; returns the new slot or NULL.
 */
void *
mt_pd_grow(void *arrp, size_t *n, size_t sz)
{
	char *arr, *na;
	size_t cap;

	/* Object pointers share one representation here; memcpy keeps the
	 * access free of type punning. */
	memcpy(&arr, arrp, sizeof(arr));
	if (*n == 0 || (*n >= 16 && (*n & (*n - 1)) == 0)) {
		cap = *n == 0 ? 16 : *n * 2;
		if (cap > SIZE_MAX / sz)
			return NULL;
		na = realloc(arr, cap * sz);
		if (na == NULL)
			return NULL;
		arr = na;
		memcpy(arrp, &arr, sizeof(arr));
	}
	memset(arr + *n * sz, 0, sz);
	return arr + (*n)++ * sz;
}

/* Parse an attr of @n bytes (n >= MT_PD_ATTR_MIN). */
static void
parse_attr(const uint8_t *p, size_t n, struct mt_pd_attr *a)
{
	a->type = mt_le32(p);
	a->size = mt_le32(p + 4);
	a->config = mt_le64(p + 8);
	a->sample_period = mt_le64(p + 16);
	a->sample_type = mt_le64(p + 24);
	a->read_format = mt_le64(p + 32);
	a->flags = mt_le64(p + 40);
	a->wakeup_events = mt_le32(p + 48);
	a->config1 = mt_le64(p + 56);
	if (n >= 72)
		a->config2 = mt_le64(p + 64);
	if (n >= 108)
		a->aux_watermark = mt_le32(p + 104);
}

static int
add_ids(struct rd *r, struct mt_pd_attr *a, const uint8_t *p, size_t n,
    uint64_t off)
{
	size_t i;

	if (n % 8 != 0)
		return diag(r, -MT_E_CORRUPT, off,
		    "id array size %zu is not a multiple of 8", n);
	if (n == 0)
		return 0;
	a->ids = malloc(n);
	if (a->ids == NULL)
		return -MT_E_NOMEM;
	a->nids = n / 8;
	for (i = 0; i < a->nids; i++)
		a->ids[i] = mt_le64(p + 8 * i);
	return 0;
}

/* Copy a string of at most @n bytes (stops at NUL). */
static char *
dup_str(const uint8_t *p, size_t n)
{
	const uint8_t *z = memchr(p, 0, n);
	size_t len = z ? (size_t)(z - p) : n;
	char *s = malloc(len + 1);

	if (s == NULL)
		return NULL;
	memcpy(s, p, len);
	s[len] = 0;
	return s;
}

/* A perf_header_string: u32 len, then len bytes. */
static int
parse_hdr_string(struct rd *r, const uint8_t *p, size_t n, uint64_t off,
    char **out)
{
	uint32_t len;

	if (n < 4)
		return diag(r, -MT_E_TRUNC, off, "truncated header string");
	len = mt_le32(p);
	if (len > n - 4)
		return diag(r, -MT_E_CORRUPT, off,
		    "header string length %u past its section", len);
	free(*out);
	*out = dup_str(p + 4, len);
	return *out ? 0 : -MT_E_NOMEM;
}

/* One build_id record (feature section entry or HEADER_BUILD_ID). */
static int
parse_build_id(struct rd *r, const uint8_t *p, size_t n, uint64_t off)
{
	struct mt_pd_build_id *b;
	uint16_t misc;

	if (n < 36)
		return diag(r, -MT_E_CORRUPT, off, "build-id record too short");
	misc = mt_le16(p + 4);
	b = mt_pd_grow(&r->pd->build_ids, &r->pd->nbuild_ids, sizeof(*b));
	if (b == NULL)
		return -MT_E_NOMEM;
	b->misc = misc & MT_SB_MISC_CPUMODE_MASK;
	b->pid = (int32_t)mt_le32(p + 8);
	memcpy(b->id, p + 12, 20);
	b->len = (misc & BUILD_ID_SIZE_MISC) ? p[32] : 20;
	if (b->len > 20)
		return diag(r, -MT_E_CORRUPT, off + 32,
		    "build-id size %u above 20", b->len);
	b->filename = dup_str(p + 36, n - 36);
	return b->filename ? 0 : -MT_E_NOMEM;
}

/* The BUILD_ID feature: build_id records back to back. */
static int
parse_build_ids(struct rd *r, const uint8_t *p, size_t n, uint64_t off)
{
	size_t pos = 0;
	uint16_t sz;
	int rc;

	while (pos < n) {
		if (n - pos < REC_HDR)
			return diag(r, -MT_E_TRUNC, off + pos,
			    "truncated build-id record");
		sz = mt_le16(p + pos + 6);
		if (sz < REC_HDR || sz > n - pos)
			return diag(r, -MT_E_CORRUPT, off + pos,
			    "build-id record size %u out of range", sz);
		rc = parse_build_id(r, p + pos, sz, off + pos);
		if (rc < 0)
			return rc;
		pos += sz;
	}
	return 0;
}

/* A feature body: file-mode section or pipe-mode HEADER_FEATURE. */
static int
parse_feature(struct rd *r, unsigned feat, const uint8_t *p, size_t n,
    uint64_t off)
{
	switch (feat) {
	case MT_PD_FEAT_BUILD_ID:
		return parse_build_ids(r, p, n, off);
	case MT_PD_FEAT_HOSTNAME:
		return parse_hdr_string(r, p, n, off, &r->pd->hostname);
	case MT_PD_FEAT_OSRELEASE:
		return parse_hdr_string(r, p, n, off, &r->pd->osrelease);
	case MT_PD_FEAT_CPUID:
		return parse_hdr_string(r, p, n, off, &r->pd->cpuid);
	case MT_PD_FEAT_NRCPUS:
		if (n < 8)
			return diag(r, -MT_E_TRUNC, off,
			    "truncated NRCPUS feature");
		r->pd->nr_cpus_avail = mt_le32(p);
		r->pd->nr_cpus_online = mt_le32(p + 4);
		return 0;
	case MT_PD_FEAT_DIR_FORMAT:
		return diag(r, -MT_E_UNSUPP, off,
		    "directory-format perf.data (perf record --threads) is "
		    "not supported");
	case MT_PD_FEAT_COMPRESSED:
		return diag(r, -MT_E_UNSUPP, off,
		    "compressed perf.data (perf record -z) is not supported");
	default:
		return 0;	/* AUXTRACE index and others: not needed */
	}
}

/* Which attr a kernel record belongs to, from its sample id. */
static uint32_t
event_attr(struct rd *r, const uint8_t *p, uint16_t size, uint32_t type)
{
	uint64_t id;
	int i;

	if (r->pd->nattrs <= 1 || !r->all_identifier)
		return 0;
	if (type == MT_SB_SAMPLE) {
		if (size < 16)
			return 0;
		id = mt_le64(p + 8);
	} else {
		if (size < 16)
			return 0;
		id = mt_le64(p + size - 8);
	}
	i = mt_pd_attr_of_id(r->pd, id);
	return i < 0 ? 0 : (uint32_t)i;
}

static int
rec_attr(struct rd *r, const uint8_t *p, size_t n, uint64_t off)
{
	struct mt_pd_attr *a;
	uint32_t asz;

	if (n < REC_HDR + MT_PD_ATTR_MIN)
		return diag(r, -MT_E_CORRUPT, off, "HEADER_ATTR too short");
	asz = mt_le32(p + REC_HDR + 4);
	if (asz == 0)
		asz = MT_PD_ATTR_MIN;
	if (asz < MT_PD_ATTR_MIN || asz > n - REC_HDR)
		return diag(r, -MT_E_CORRUPT, off + REC_HDR + 4,
		    "attr size %u out of range", asz);
	if (r->pd->nattrs >= MAX_ATTRS)
		return diag(r, -MT_E_LIMIT, off, "more than %d attrs",
		    MAX_ATTRS);
	a = mt_pd_grow(&r->pd->attrs, &r->pd->nattrs, sizeof(*a));
	if (a == NULL)
		return -MT_E_NOMEM;
	parse_attr(p + REC_HDR, asz, a);
	return add_ids(r, a, p + REC_HDR + asz, n - REC_HDR - asz, off);
}

static void
update_identifier(struct rd *r)
{
	size_t i;

	r->all_identifier = r->pd->nattrs > 0;
	for (i = 0; i < r->pd->nattrs; i++)
		if (!(r->pd->attrs[i].sample_type & MT_SB_ST_IDENTIFIER))
			r->all_identifier = 0;
}

/*
 * Walk the records in [pos, end).  AUXTRACE and TRACING_DATA records are
 * followed by a payload that their size does not count.
 */
static int
walk(struct rd *r, size_t pos, size_t end)
{
	struct mt_pd *pd = r->pd;
	const uint8_t *p;
	uint32_t type;
	uint16_t size;
	int rc;

	while (pos < end) {
		if (end - pos < REC_HDR)
			return diag(r, -MT_E_TRUNC, pos,
			    "truncated record header");
		p = r->p + pos;
		type = mt_le32(p);
		size = mt_le16(p + 6);
		if (size < REC_HDR)
			return diag(r, -MT_E_CORRUPT, pos,
			    "record size %u below 8 (type %u)", size, type);
		if (size > end - pos)
			return diag(r, -MT_E_TRUNC, pos,
			    "truncated record (type %u, size %u)", type,
			    size);
		if (type < MT_SB_KERNEL_MAX) {
			struct mt_pd_event *ev = mt_pd_grow(&pd->events,
			    &pd->nevents, sizeof(*ev));
			if (ev == NULL)
				return -MT_E_NOMEM;
			ev->off = pos;
			ev->p = p;
			ev->size = size;
			ev->attr = event_attr(r, p, size, type);
			pos += size;
			continue;
		}
		switch (type) {
		case MT_PD_HEADER_ATTR:
			rc = rec_attr(r, p, size, pos);
			if (rc < 0)
				return rc;
			update_identifier(r);
			break;
		case MT_PD_AUXTRACE_INFO:
			if (size < 16)
				return diag(r, -MT_E_CORRUPT, pos,
				    "AUXTRACE_INFO too short");
			pd->has_auxtrace_info = 1;
			pd->auxtrace_info_off = pos;
			pd->auxtrace_type = mt_le32(p + 8);
			free(pd->priv);
			pd->npriv = (size - 16u) / 8;
			pd->priv = calloc(pd->npriv ? pd->npriv : 1, 8);
			if (pd->priv == NULL)
				return -MT_E_NOMEM;
			for (size_t i = 0; i < pd->npriv; i++)
				pd->priv[i] = mt_le64(p + 16 + 8 * i);
			break;
		case MT_PD_AUXTRACE: {
			struct mt_pd_auxtrace *a;
			uint64_t dsz;

			if (size < MT_PD_AUXTRACE_HDR)
				return diag(r, -MT_E_CORRUPT, pos,
				    "AUXTRACE record too short");
			dsz = mt_le64(p + 8);
			if (dsz > end - pos - size)
				return diag(r, -MT_E_TRUNC, pos,
				    "truncated AUXTRACE data (%llu bytes "
				    "announced, %zu left)",
				    (unsigned long long)dsz,
				    end - pos - size);
			a = mt_pd_grow(&pd->aux, &pd->naux, sizeof(*a));
			if (a == NULL)
				return -MT_E_NOMEM;
			a->off = pos;
			a->size = dsz;
			a->offset = mt_le64(p + 16);
			a->reference = mt_le64(p + 24);
			a->idx = mt_le32(p + 32);
			a->tid = mt_le32(p + 36);
			a->cpu = mt_le32(p + 40);
			a->data = p + size;
			pos += (size_t)dsz;
			break;
		}
		case MT_PD_TIME_CONV:
			if (size < REC_HDR + 24)
				return diag(r, -MT_E_CORRUPT, pos,
				    "TIME_CONV too short");
			pd->has_time_conv = 1;
			memset(&pd->time_conv, 0, sizeof(pd->time_conv));
			pd->time_conv.time_shift = mt_le64(p + 8);
			pd->time_conv.time_mult = mt_le64(p + 16);
			pd->time_conv.time_zero = mt_le64(p + 24);
			if (size >= REC_HDR + 42) {
				pd->time_conv.extended = 1;
				pd->time_conv.time_cycles = mt_le64(p + 32);
				pd->time_conv.time_mask = mt_le64(p + 40);
				pd->time_conv.cap_user_time_zero = p[48];
				pd->time_conv.cap_user_time_short = p[49];
			}
			break;
		case MT_PD_HEADER_TRACING_DATA: {
			uint64_t tsz;

			if (size < 12)
				return diag(r, -MT_E_CORRUPT, pos,
				    "TRACING_DATA too short");
			tsz = ((uint64_t)mt_le32(p + 8) + 7) & ~7ull;
			if (tsz > end - pos - size)
				return diag(r, -MT_E_TRUNC, pos,
				    "truncated tracing data");
			pos += (size_t)tsz;
			pd->skipped++;
			break;
		}
		case MT_PD_HEADER_BUILD_ID:
			rc = parse_build_id(r, p, size, pos);
			if (rc < 0)
				return rc;
			break;
		case MT_PD_HEADER_FEATURE:
			if (size < 16)
				return diag(r, -MT_E_CORRUPT, pos,
				    "HEADER_FEATURE too short");
			if (mt_le64(p + 8) < MT_PD_FEAT_BITS) {
				rc = parse_feature(r, (unsigned)mt_le64(p + 8),
				    p + 16, size - 16u, pos + 16);
				if (rc < 0)
					return rc;
			}
			break;
		case MT_PD_COMPRESSED:
			return diag(r, -MT_E_UNSUPP, pos,
			    "compressed perf.data (perf record -z) is not "
			    "supported");
		default:
			pd->skipped++;
			break;
		}
		pos += size;
	}
	return 0;
}

/* Check that [off, off+size) lies inside the file. */
static int
section_ok(const struct rd *r, uint64_t off, uint64_t size)
{
	return off <= r->len && size <= r->len - off;
}

static int
read_file_mode(struct rd *r)
{
	struct mt_pd *pd = r->pd;
	const uint8_t *p = r->p;
	uint64_t hsz, attr_size, aoff, asz, doff, dsz, tab;
	size_t i, n;
	unsigned feat;
	int rc;

	if (r->len < MT_PD_FILE_HDR_SIZE)
		return diag(r, -MT_E_TRUNC, r->len < 16 ? 0 : 16,
		    "truncated file header (%zu of 104 bytes)", r->len);
	hsz = mt_le64(p + 8);
	if (hsz < MT_PD_FILE_HDR_SIZE || hsz > r->len)
		return diag(r, -MT_E_CORRUPT, 8, "header size %llu invalid",
		    (unsigned long long)hsz);
	attr_size = mt_le64(p + 16);
	aoff = mt_le64(p + 24);
	asz = mt_le64(p + 32);
	doff = mt_le64(p + 40);
	dsz = mt_le64(p + 48);
	if (attr_size < MT_PD_ATTR_MIN + 16 || attr_size > MAX_ATTR_SIZE)
		return diag(r, -MT_E_CORRUPT, 16, "attr_size %llu invalid",
		    (unsigned long long)attr_size);
	if (!section_ok(r, aoff, asz))
		return diag(r, -MT_E_TRUNC, 24,
		    "attrs section [%llu, +%llu) past the end of the file",
		    (unsigned long long)aoff, (unsigned long long)asz);
	if (asz % attr_size != 0)
		return diag(r, -MT_E_CORRUPT, 32,
		    "attrs size %llu not a multiple of attr_size %llu",
		    (unsigned long long)asz, (unsigned long long)attr_size);
	n = (size_t)(asz / attr_size);
	if (n > MAX_ATTRS)
		return diag(r, -MT_E_LIMIT, 32, "more than %d attrs",
		    MAX_ATTRS);
	for (i = 0; i < n; i++) {
		const uint8_t *ap = p + aoff + i * attr_size;
		uint64_t ioff = mt_le64(ap + attr_size - 16);
		uint64_t isz = mt_le64(ap + attr_size - 8);
		struct mt_pd_attr *a = mt_pd_grow(&pd->attrs, &pd->nattrs,
		    sizeof(*a));

		if (a == NULL)
			return -MT_E_NOMEM;
		parse_attr(ap, (size_t)attr_size - 16, a);
		if (!section_ok(r, ioff, isz))
			return diag(r, -MT_E_TRUNC,
			    aoff + i * attr_size + attr_size - 16,
			    "id array of attr %zu past the end of the file",
			    i);
		rc = add_ids(r, a, p + ioff, (size_t)isz,
		    aoff + i * attr_size + attr_size - 8);
		if (rc < 0)
			return rc;
	}
	update_identifier(r);
	if (!section_ok(r, doff, dsz))
		return diag(r, -MT_E_TRUNC, 40,
		    "data section [%llu, +%llu) past the end of the file "
		    "(%zu bytes)", (unsigned long long)doff,
		    (unsigned long long)dsz, r->len);
	rc = walk(r, (size_t)doff, (size_t)(doff + dsz));
	if (rc < 0)
		return rc;
	/* Feature sections: a {offset, size} table after the data. */
	tab = doff + dsz;
	for (feat = 1; feat < MT_PD_FEAT_BITS; feat++) {
		uint64_t foff, fsz;

		if (!(mt_le64(p + 72 + 8 * (feat / 64)) >> (feat % 64) & 1))
			continue;
		if (!section_ok(r, tab, 16))
			return diag(r, -MT_E_TRUNC, tab,
			    "truncated feature table (feature %u)", feat);
		foff = mt_le64(p + tab);
		fsz = mt_le64(p + tab + 8);
		if (!section_ok(r, foff, fsz))
			return diag(r, -MT_E_TRUNC, tab,
			    "feature %u section [%llu, +%llu) past the end "
			    "of the file", feat, (unsigned long long)foff,
			    (unsigned long long)fsz);
		rc = parse_feature(r, feat, p + foff, (size_t)fsz, foff);
		if (rc < 0)
			return rc;
		tab += 16;
	}
	return 0;
}

int
mt_pd_read_mem(struct mt_pd *pd, const void *mem, size_t len,
    struct mt_pd_diag *d)
{
	static const uint8_t magic[8] = "PERFILE2";
	struct rd r = { .pd = pd, .p = mem, .len = len, .d = d };
	uint64_t m, hsz;

	if (d != NULL) {
		d->off = 0;
		d->msg[0] = 0;
	}
	if (len < 8) {
		if (memcmp(mem, magic, len) == 0)
			return diag(&r, -MT_E_TRUNC, 0,
			    "truncated file header (%zu bytes)", len);
		return diag(&r, -MT_E_MAGIC, 0, "not a perf.data file");
	}
	m = mt_le64(r.p);
	if (m == __builtin_bswap64(MT_PD_MAGIC))
		return diag(&r, -MT_E_UNSUPP, 0,
		    "big-endian perf.data is not supported");
	if (memcmp(r.p, "PERFFILE", 8) == 0)
		return diag(&r, -MT_E_UNSUPP, 0,
		    "version 1 perf.data (PERFFILE) is not supported");
	if (m != MT_PD_MAGIC)
		return diag(&r, -MT_E_MAGIC, 0, "not a perf.data file");
	if (len < 16)
		return diag(&r, -MT_E_TRUNC, 8, "truncated file header");
	hsz = mt_le64(r.p + 8);
	if (hsz == MT_PD_PIPE_HDR_SIZE) {
		pd->pipe = 1;
		return walk(&r, MT_PD_PIPE_HDR_SIZE, len);
	}
	return read_file_mode(&r);
}

int
mt_pd_read_fd(struct mt_pd *pd, int fd, uint64_t limit,
    struct mt_pd_diag *d)
{
	struct stat st;
	uint8_t *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	ssize_t n;
	int rc;

	if (limit == 0)
		limit = DEFAULT_LIMIT;
	if (d != NULL) {
		d->off = 0;
		d->msg[0] = 0;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		/* One byte more than the file, to see its end in one go. */
		cap = (uint64_t)st.st_size < limit ?
		    (size_t)st.st_size + 1 : (size_t)limit + 1;
		buf = malloc(cap);
		if (buf == NULL)
			return -MT_E_NOMEM;
	}
	for (;;) {
		if (len == cap) {
			/* len <= limit here: one byte past it is enough */
			cap = cap ? cap * 2 : 1 << 20;
			if (limit < SIZE_MAX && cap > limit + 1)
				cap = (size_t)limit + 1;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				return -MT_E_NOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = errno;
			free(buf);
			if (d != NULL) {
				d->off = len;
				snprintf(d->msg, sizeof(d->msg), "%s",
				    strerror(rc));
			}
			errno = rc;
			return -MT_E_IO;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > limit) {
			free(buf);
			if (d != NULL)
				snprintf(d->msg, sizeof(d->msg),
				    "input larger than %llu bytes",
				    (unsigned long long)limit);
			return -MT_E_LIMIT;
		}
	}
	pd->mem = buf;
	pd->memlen = len;
	return mt_pd_read_mem(pd, buf ? buf : (const uint8_t *)"", len, d);
}

const struct mt_pd_attr *
mt_pd_pt_attr(const struct mt_pd *pd)
{
	size_t i;

	if (!pd->has_auxtrace_info || pd->npriv < 1)
		return NULL;
	for (i = 0; i < pd->nattrs; i++)
		if (pd->attrs[i].type == pd->priv[MT_PD_IPT_PMU_TYPE])
			return &pd->attrs[i];
	return NULL;
}

uint64_t
mt_pd_priv(const struct mt_pd *pd, size_t i, uint64_t dflt)
{
	return pd->has_auxtrace_info && i < pd->npriv ? pd->priv[i] : dflt;
}

int
mt_pd_attr_of_id(const struct mt_pd *pd, uint64_t id)
{
	size_t i, j;

	for (i = 0; i < pd->nattrs; i++)
		for (j = 0; j < pd->attrs[i].nids; j++)
			if (pd->attrs[i].ids[j] == id)
				return (int)i;
	return -1;
}
