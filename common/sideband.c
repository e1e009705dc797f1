/* SPDX-License-Identifier: MIT */
/*
 * Reader and writer of raw perf sideband records (see sideband.h for the
 * layout).  Every field is read through bounds checks against the record's
 * own size, so a hostile size can never move a read outside the input.
 */
#include <string.h>

#include "buf.h"
#include "err.h"
#include "sideband.h"

#define HDR_SIZE 8

size_t
mt_sb_id_size(uint64_t st)
{
	size_t n = 0;

	if (st & MT_SB_ST_TID)
		n += 8;
	if (st & MT_SB_ST_TIME)
		n += 8;
	if (st & MT_SB_ST_ID)
		n += 8;
	if (st & MT_SB_ST_STREAM_ID)
		n += 8;
	if (st & MT_SB_ST_CPU)
		n += 8;
	if (st & MT_SB_ST_IDENTIFIER)
		n += 8;
	return n;
}

void
mt_sb_reader_init(struct mt_sb_reader *r, const void *p, size_t len,
    uint64_t sample_type, int sample_id_all, uint64_t base)
{
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->len = len;
	r->base = base;
	r->sample_type = sample_type;
	r->sample_id_all = sample_id_all;
}

const char *
mt_sb_type_name(uint32_t type)
{
	static const char *const names[] = {
		[MT_SB_MMAP] = "MMAP", [MT_SB_LOST] = "LOST",
		[MT_SB_COMM] = "COMM", [MT_SB_EXIT] = "EXIT",
		[MT_SB_THROTTLE] = "THROTTLE",
		[MT_SB_UNTHROTTLE] = "UNTHROTTLE", [MT_SB_FORK] = "FORK",
		[MT_SB_READ] = "READ", [MT_SB_SAMPLE] = "SAMPLE",
		[MT_SB_MMAP2] = "MMAP2", [MT_SB_AUX] = "AUX",
		[MT_SB_ITRACE_START] = "ITRACE_START",
		[MT_SB_LOST_SAMPLES] = "LOST_SAMPLES",
		[MT_SB_SWITCH] = "SWITCH",
		[MT_SB_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[MT_SB_NAMESPACES] = "NAMESPACES",
		[MT_SB_KSYMBOL] = "KSYMBOL", [MT_SB_BPF_EVENT] = "BPF_EVENT",
		[MT_SB_CGROUP] = "CGROUP", [MT_SB_TEXT_POKE] = "TEXT_POKE",
		[MT_SB_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "unknown";
}

/* Does this record type end with a sample_id trailer? */
static int
has_trailer(const struct mt_sb_reader *r, uint32_t type)
{
	return r->sample_id_all && type != MT_SB_SAMPLE &&
	    type < MT_SB_KERNEL_MAX;
}

static void
parse_id(const uint8_t *p, uint64_t st, struct mt_sb_id *id)
{
	memset(id, 0, sizeof(*id));
	if (st & MT_SB_ST_TID) {
		id->pid = mt_le32(p);
		id->tid = mt_le32(p + 4);
		p += 8;
	}
	if (st & MT_SB_ST_TIME) {
		id->time = mt_le64(p);
		p += 8;
	}
	if (st & MT_SB_ST_ID) {
		id->id = mt_le64(p);
		p += 8;
	}
	if (st & MT_SB_ST_STREAM_ID) {
		id->stream_id = mt_le64(p);
		p += 8;
	}
	if (st & MT_SB_ST_CPU) {
		id->cpu = mt_le32(p);
		id->cpu_res = mt_le32(p + 4);
		p += 8;
	}
	if (st & MT_SB_ST_IDENTIFIER)
		id->id = mt_le64(p);
}

/* A NUL-terminated string in p[0..n), or NULL if it has no NUL. */
static const char *
body_str(const uint8_t *p, size_t n)
{
	if (n == 0 || memchr(p, 0, n) == NULL)
		return NULL;
	return (const char *)p;
}

static int
fail(struct mt_sb_reader *r, int rc, size_t at, const char *msg)
{
	r->err_off = r->base + at;
	r->err_msg = msg;
	return rc;
}

/* Parse the body of a known type; returns 0 or a message. */
static const char *
parse_body(struct mt_sb_rec *rec)
{
	const uint8_t *b = rec->body;
	size_t n = rec->body_len;
	struct mt_sb_mmap *m = &rec->u.mmap;
	size_t fixed;

	switch (rec->type) {
	case MT_SB_MMAP:
	case MT_SB_MMAP2:
		fixed = rec->type == MT_SB_MMAP ? 32 : 64;
		if (n < fixed)
			return "body too short";
		m->pid = mt_le32(b);
		m->tid = mt_le32(b + 4);
		m->addr = mt_le64(b + 8);
		m->len = mt_le64(b + 16);
		m->pgoff = mt_le64(b + 24);
		if (rec->type == MT_SB_MMAP2) {
			if (rec->misc & MT_SB_MISC_MMAP_BUILD_ID) {
				m->build_id_len = b[32];
				if (m->build_id_len > MT_SB_BUILD_ID_MAX)
					return "build-id longer than 20 bytes";
				memcpy(m->build_id, b + 36, MT_SB_BUILD_ID_MAX);
			} else {
				m->maj = mt_le32(b + 32);
				m->min = mt_le32(b + 36);
				m->ino = mt_le64(b + 40);
				m->ino_generation = mt_le64(b + 48);
			}
			m->prot = mt_le32(b + 56);
			m->flags = mt_le32(b + 60);
		}
		m->filename = body_str(b + fixed, n - fixed);
		if (m->filename == NULL)
			return "file name not terminated";
		return NULL;
	case MT_SB_COMM:
		if (n < 8)
			return "body too short";
		rec->u.comm.pid = mt_le32(b);
		rec->u.comm.tid = mt_le32(b + 4);
		rec->u.comm.comm = body_str(b + 8, n - 8);
		if (rec->u.comm.comm == NULL)
			return "comm not terminated";
		return NULL;
	case MT_SB_FORK:
	case MT_SB_EXIT:
		if (n < 24)
			return "body too short";
		rec->u.task.pid = mt_le32(b);
		rec->u.task.ppid = mt_le32(b + 4);
		rec->u.task.tid = mt_le32(b + 8);
		rec->u.task.ptid = mt_le32(b + 12);
		rec->u.task.time = mt_le64(b + 16);
		return NULL;
	case MT_SB_ITRACE_START:
	case MT_SB_SWITCH_CPU_WIDE:
		if (n < 8)
			return "body too short";
		rec->u.task.pid = mt_le32(b);
		rec->u.task.tid = mt_le32(b + 4);
		return NULL;
	case MT_SB_AUX:
		if (n < 24)
			return "body too short";
		rec->u.aux.aux_offset = mt_le64(b);
		rec->u.aux.aux_size = mt_le64(b + 8);
		rec->u.aux.flags = mt_le64(b + 16);
		return NULL;
	case MT_SB_LOST:
		if (n < 16)
			return "body too short";
		rec->u.lost.id = mt_le64(b);
		rec->u.lost.lost = mt_le64(b + 8);
		return NULL;
	case MT_SB_LOST_SAMPLES:
		if (n < 8)
			return "body too short";
		rec->u.lost.lost = mt_le64(b);
		return NULL;
	default:
		return NULL;
	}
}

int
mt_sb_next(struct mt_sb_reader *r, struct mt_sb_rec *rec)
{
	const uint8_t *p;
	size_t left, idsz = 0;
	const char *msg;

	memset(rec, 0, sizeof(*rec));
	if (r->pos >= r->len)
		return MT_EOS;
	left = r->len - r->pos;
	p = r->p + r->pos;
	if (left < HDR_SIZE)
		return fail(r, -MT_E_TRUNC, r->pos, "truncated record header");
	rec->type = mt_le32(p);
	rec->misc = mt_le16(p + 4);
	rec->size = mt_le16(p + 6);
	rec->off = r->base + r->pos;
	if (rec->size < HDR_SIZE)
		return fail(r, -MT_E_CORRUPT, r->pos, "record size below 8");
	if (rec->size > left)
		return fail(r, -MT_E_TRUNC, r->pos, "truncated record");
	if (has_trailer(r, rec->type)) {
		idsz = mt_sb_id_size(r->sample_type);
		if (idsz > (size_t)rec->size - HDR_SIZE)
			return fail(r, -MT_E_CORRUPT, r->pos,
			    "record too short for its sample_id");
		parse_id(p + rec->size - idsz, r->sample_type, &rec->id);
		rec->has_id = 1;
	}
	rec->body = p + HDR_SIZE;
	rec->body_len = rec->size - HDR_SIZE - idsz;
	msg = parse_body(rec);
	if (msg != NULL)
		return fail(r, -MT_E_CORRUPT, r->pos, msg);
	r->pos += rec->size;
	return 0;
}

static void
put_id(struct mt_wbuf *w, const struct mt_sb_id *id, uint64_t st)
{
	if (st & MT_SB_ST_TID) {
		mt_wbuf_u32le(w, id->pid);
		mt_wbuf_u32le(w, id->tid);
	}
	if (st & MT_SB_ST_TIME)
		mt_wbuf_u64le(w, id->time);
	if (st & MT_SB_ST_ID)
		mt_wbuf_u64le(w, id->id);
	if (st & MT_SB_ST_STREAM_ID)
		mt_wbuf_u64le(w, id->stream_id);
	if (st & MT_SB_ST_CPU) {
		mt_wbuf_u32le(w, id->cpu);
		mt_wbuf_u32le(w, id->cpu_res);
	}
	if (st & MT_SB_ST_IDENTIFIER)
		mt_wbuf_u64le(w, id->id);
}

/* Bytes a string takes in a record: with its NUL, padded to 8. */
static size_t
str_size(const char *s)
{
	return (strlen(s) + 1 + 7) & ~(size_t)7;
}

static void
put_str(struct mt_wbuf *w, const char *s)
{
	static const uint8_t zeros[8];
	size_t n = strlen(s);

	mt_wbuf_put(w, s, n);
	mt_wbuf_put(w, zeros, str_size(s) - n);
}

/* Body size of @rec, or (size_t)-1 if it cannot be written. */
static size_t
body_size(const struct mt_sb_rec *rec)
{
	switch (rec->type) {
	case MT_SB_MMAP:
	case MT_SB_MMAP2:
		if (rec->u.mmap.filename == NULL)
			return (size_t)-1;
		if (strlen(rec->u.mmap.filename) > 65535)
			return 65536;
		return (rec->type == MT_SB_MMAP ? 32 : 64) +
		    str_size(rec->u.mmap.filename);
	case MT_SB_COMM:
		if (rec->u.comm.comm == NULL)
			return (size_t)-1;
		if (strlen(rec->u.comm.comm) > 65535)
			return 65536;
		return 8 + str_size(rec->u.comm.comm);
	case MT_SB_FORK:
	case MT_SB_EXIT:
	case MT_SB_AUX:
		return 24;
	case MT_SB_ITRACE_START:
	case MT_SB_SWITCH_CPU_WIDE:
	case MT_SB_LOST_SAMPLES:
		return 8;
	case MT_SB_LOST:
		return 16;
	case MT_SB_SWITCH:
		return 0;
	case MT_SB_SAMPLE:
		return (size_t)-1;
	default:
		if (rec->body_len > 0 && rec->body == NULL)
			return (size_t)-1;
		return rec->body_len;
	}
}

int
mt_sb_write(struct mt_wbuf *w, const struct mt_sb_rec *rec,
    uint64_t sample_type)
{
	const struct mt_sb_mmap *m = &rec->u.mmap;
	size_t bsz = body_size(rec), size;

	if (bsz == (size_t)-1)
		return -MT_E_INVAL;
	if (bsz > 65535)
		return -MT_E_LIMIT;
	size = HDR_SIZE + bsz;
	if (rec->type < MT_SB_KERNEL_MAX)
		size += mt_sb_id_size(sample_type);
	if (size > 65535)
		return -MT_E_LIMIT;
	mt_wbuf_u32le(w, rec->type);
	mt_wbuf_u16le(w, rec->misc);
	mt_wbuf_u16le(w, (uint16_t)size);
	switch (rec->type) {
	case MT_SB_MMAP:
	case MT_SB_MMAP2:
		mt_wbuf_u32le(w, m->pid);
		mt_wbuf_u32le(w, m->tid);
		mt_wbuf_u64le(w, m->addr);
		mt_wbuf_u64le(w, m->len);
		mt_wbuf_u64le(w, m->pgoff);
		if (rec->type == MT_SB_MMAP2) {
			if (rec->misc & MT_SB_MISC_MMAP_BUILD_ID) {
				mt_wbuf_u8(w, m->build_id_len);
				mt_wbuf_u8(w, 0);
				mt_wbuf_u16le(w, 0);
				mt_wbuf_put(w, m->build_id,
				    MT_SB_BUILD_ID_MAX);
			} else {
				mt_wbuf_u32le(w, m->maj);
				mt_wbuf_u32le(w, m->min);
				mt_wbuf_u64le(w, m->ino);
				mt_wbuf_u64le(w, m->ino_generation);
			}
			mt_wbuf_u32le(w, m->prot);
			mt_wbuf_u32le(w, m->flags);
		}
		put_str(w, m->filename);
		break;
	case MT_SB_COMM:
		mt_wbuf_u32le(w, rec->u.comm.pid);
		mt_wbuf_u32le(w, rec->u.comm.tid);
		put_str(w, rec->u.comm.comm);
		break;
	case MT_SB_FORK:
	case MT_SB_EXIT:
		mt_wbuf_u32le(w, rec->u.task.pid);
		mt_wbuf_u32le(w, rec->u.task.ppid);
		mt_wbuf_u32le(w, rec->u.task.tid);
		mt_wbuf_u32le(w, rec->u.task.ptid);
		mt_wbuf_u64le(w, rec->u.task.time);
		break;
	case MT_SB_ITRACE_START:
	case MT_SB_SWITCH_CPU_WIDE:
		mt_wbuf_u32le(w, rec->u.task.pid);
		mt_wbuf_u32le(w, rec->u.task.tid);
		break;
	case MT_SB_AUX:
		mt_wbuf_u64le(w, rec->u.aux.aux_offset);
		mt_wbuf_u64le(w, rec->u.aux.aux_size);
		mt_wbuf_u64le(w, rec->u.aux.flags);
		break;
	case MT_SB_LOST:
		mt_wbuf_u64le(w, rec->u.lost.id);
		mt_wbuf_u64le(w, rec->u.lost.lost);
		break;
	case MT_SB_LOST_SAMPLES:
		mt_wbuf_u64le(w, rec->u.lost.lost);
		break;
	case MT_SB_SWITCH:
		break;
	default:
		if (rec->body_len > 0)
			mt_wbuf_put(w, rec->body, rec->body_len);
		break;
	}
	if (rec->type < MT_SB_KERNEL_MAX)
		put_id(w, &rec->id, sample_type);
	if (w->err)
		return w->err;
	return (int)size;
}

int
mt_sb_retime(uint8_t *p, size_t len, uint64_t sample_type,
    uint64_t (*fn)(void *arg, uint64_t time), void *arg)
{
	struct mt_sb_reader r;
	struct mt_sb_rec rec;
	size_t at = (sample_type & MT_SB_ST_TID) ? 8 : 0;
	size_t idsz = mt_sb_id_size(sample_type);
	int rc, n = 0;

	if (!(sample_type & MT_SB_ST_TIME))
		return 0;
	mt_sb_reader_init(&r, p, len, sample_type, 1, 0);
	while ((rc = mt_sb_next(&r, &rec)) == 0) {
		if (!rec.has_id)
			continue;
		/* The trailer ends the record; TIME follows TID in it. */
		mt_put_le64(p + rec.off + rec.size - idsz + at,
		    fn(arg, rec.id.time));
		n++;
	}
	return rc == MT_EOS ? n : rc;
}
