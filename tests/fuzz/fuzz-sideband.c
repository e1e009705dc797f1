/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the perf sideband record parser (common/sideband.c), which
 * mt-decode runs over a snapshot's SIDEBAND chunks and the perf.data
 * importer over a perf.data data section.
 *
 * Input layout: u64 sample_type (little-endian), u8 flags (bit 0:
 * sample_id_all), then the records.  Every record parsed is written back
 * with mt_sb_write() and parsed again; the fields must survive.
 */
#include <string.h>

#include "buf.h"
#include "err.h"
#include "sideband.h"
#include "fuzz.h"

static void
same_body(const struct mt_sb_rec *a, const struct mt_sb_rec *b)
{
	const struct mt_sb_mmap *ma = &a->u.mmap, *mb = &b->u.mmap;

	switch (a->type) {
	case MT_SB_MMAP:
	case MT_SB_MMAP2:
		FUZZ_CHECK(ma->pid == mb->pid && ma->tid == mb->tid);
		FUZZ_CHECK(ma->addr == mb->addr && ma->len == mb->len);
		FUZZ_CHECK(ma->pgoff == mb->pgoff);
		FUZZ_CHECK(ma->prot == mb->prot && ma->flags == mb->flags);
		FUZZ_CHECK(ma->maj == mb->maj && ma->min == mb->min);
		FUZZ_CHECK(ma->ino == mb->ino);
		FUZZ_CHECK(ma->ino_generation == mb->ino_generation);
		FUZZ_CHECK(ma->build_id_len == mb->build_id_len);
		FUZZ_CHECK(memcmp(ma->build_id, mb->build_id,
		    sizeof(ma->build_id)) == 0);
		FUZZ_CHECK(strcmp(ma->filename, mb->filename) == 0);
		break;
	case MT_SB_COMM:
		FUZZ_CHECK(a->u.comm.pid == b->u.comm.pid);
		FUZZ_CHECK(a->u.comm.tid == b->u.comm.tid);
		FUZZ_CHECK(strcmp(a->u.comm.comm, b->u.comm.comm) == 0);
		break;
	case MT_SB_FORK:
	case MT_SB_EXIT:
	case MT_SB_ITRACE_START:
	case MT_SB_SWITCH_CPU_WIDE:
		FUZZ_CHECK(memcmp(&a->u.task, &b->u.task,
		    sizeof(a->u.task)) == 0);
		break;
	case MT_SB_AUX:
		FUZZ_CHECK(memcmp(&a->u.aux, &b->u.aux,
		    sizeof(a->u.aux)) == 0);
		break;
	case MT_SB_LOST:
	case MT_SB_LOST_SAMPLES:
		FUZZ_CHECK(a->u.lost.id == b->u.lost.id);
		FUZZ_CHECK(a->u.lost.lost == b->u.lost.lost);
		break;
	case MT_SB_SWITCH:
		break;
	default:
		/* Unknown types keep their raw body. */
		FUZZ_CHECK(a->body_len == b->body_len);
		FUZZ_CHECK(a->body_len == 0 ||
		    memcmp(a->body, b->body, a->body_len) == 0);
		break;
	}
}

static void
round_trip(const struct mt_sb_rec *rec, uint64_t st)
{
	struct mt_wbuf w;
	struct mt_sb_reader r;
	struct mt_sb_rec back;
	int n;

	mt_wbuf_init(&w);
	n = mt_sb_write(&w, rec, st);
	if (n == -MT_E_LIMIT || n == -MT_E_INVAL) {
		/* A record that no longer fits 64 KiB (a longer trailer). */
		mt_wbuf_release(&w);
		return;
	}
	FUZZ_CHECK(n > 0 && (size_t)n == w.len);
	mt_sb_reader_init(&r, w.p, w.len, st, 1, 0);
	FUZZ_CHECK(mt_sb_next(&r, &back) == 0);
	FUZZ_CHECK(back.type == rec->type && back.misc == rec->misc);
	if (rec->has_id)
		FUZZ_CHECK(memcmp(&back.id, &rec->id, sizeof(back.id)) == 0);
	same_body(rec, &back);
	FUZZ_CHECK(mt_sb_next(&r, &back) == MT_EOS);
	mt_wbuf_release(&w);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_sb_reader r;
	struct mt_sb_rec rec;
	uint64_t st;
	int all, rc;

	if (size < 9)
		return 0;
	st = mt_le64(data);
	all = data[8] & 1;
	mt_sb_reader_init(&r, data + 9, size - 9, st, all, 9);
	while ((rc = mt_sb_next(&r, &rec)) == 0) {
		FUZZ_CHECK(rec.size >= 8);
		FUZZ_CHECK(rec.off >= 9 && rec.off - 9 + rec.size <= size - 9);
		FUZZ_CHECK(rec.body_len <= rec.size);
		FUZZ_CHECK(mt_sb_type_name(rec.type) != NULL);
		if (rec.type != MT_SB_SAMPLE && rec.type < MT_SB_KERNEL_MAX &&
		    all)
			round_trip(&rec, st);
	}
	if (rc < 0) {
		FUZZ_CHECK(r.err_msg != NULL);
		FUZZ_CHECK(r.err_off >= 9 && r.err_off <= size);
	} else {
		FUZZ_CHECK(rc == MT_EOS);
	}
	return 0;
}
