/* SPDX-License-Identifier: MIT */
/*
 * Raw perf sideband records: the bytes the kernel writes into a perf data
 * ring (struct perf_event_header + body + sample_id trailer), as they sit in
 * a snapshot's SIDEBAND chunk and in the data section of a perf.data file.
 * One module reads them (mt_sb_next) and writes them (mt_sb_write), so
 * mt-decode, mt-capture's import/export and the tests share one layout.
 *
 * Layout (uapi linux/perf_event.h, kernel 6.1), all little-endian:
 *
 *   u32 type; u16 misc; u16 size;	header; size counts all of the record
 *   body					depends on type (below)
 *   sample_id				only with attr.sample_id_all, and not on
 *					SAMPLE records: the fields whose bit is
 *					set in attr.sample_type, in this order:
 *					TID {u32 pid, tid}, TIME u64, ID u64,
 *					STREAM_ID u64, CPU {u32 cpu, res},
 *					IDENTIFIER u64
 *
 * The trailer sits at the END of the record (the body may be padded), so it
 * is parsed backwards from size.  Bodies known here:
 *
 *   MMAP (1)		u32 pid, tid; u64 addr, len, pgoff; char filename[]
 *   LOST (2)		u64 id, lost
 *   COMM (3)		u32 pid, tid; char comm[]; misc MT_SB_MISC_COMM_EXEC
 *   EXIT (4), FORK (7)	u32 pid, ppid, tid, ptid; u64 time
 *   MMAP2 (10)		u32 pid, tid; u64 addr, len, pgoff;
 *			{u32 maj, min; u64 ino, ino_generation} or, with misc
 *			MT_SB_MISC_MMAP_BUILD_ID, {u8 build_id_size; u8, u16
 *			reserved; u8 build_id[20]}; u32 prot, flags;
 *			char filename[]
 *   AUX (11)		u64 aux_offset, aux_size, flags (MT_SB_AUX_*)
 *   ITRACE_START (12)	u32 pid, tid
 *   LOST_SAMPLES (13)	u64 lost
 *   SWITCH (14)	no body; misc MT_SB_MISC_SWITCH_OUT(_PREEMPT); the
 *			thread is the sample_id's pid/tid
 *   SWITCH_CPU_WIDE (15) u32 next_prev_pid, next_prev_tid
 *
 * Strings are NUL-terminated and padded with NULs to a multiple of 8.  Other
 * types (THROTTLE, SAMPLE, NAMESPACES, KSYMBOL, TEXT_POKE, ...) are returned
 * with their raw body and, except SAMPLE, their parsed trailer.
 *
 * Records never own memory: strings and raw bodies point into the bytes
 * given to mt_sb_reader_init, which must stay valid while records are used.
 */
#ifndef MT_SIDEBAND_H
#define MT_SIDEBAND_H

#include <stddef.h>
#include <stdint.h>

struct mt_wbuf;

/* perf_event_header.type values (PERF_RECORD_*). */
enum mt_sb_type {
	MT_SB_MMAP = 1,
	MT_SB_LOST = 2,
	MT_SB_COMM = 3,
	MT_SB_EXIT = 4,
	MT_SB_THROTTLE = 5,
	MT_SB_UNTHROTTLE = 6,
	MT_SB_FORK = 7,
	MT_SB_READ = 8,
	MT_SB_SAMPLE = 9,
	MT_SB_MMAP2 = 10,
	MT_SB_AUX = 11,
	MT_SB_ITRACE_START = 12,
	MT_SB_LOST_SAMPLES = 13,
	MT_SB_SWITCH = 14,
	MT_SB_SWITCH_CPU_WIDE = 15,
	MT_SB_NAMESPACES = 16,
	MT_SB_KSYMBOL = 17,
	MT_SB_BPF_EVENT = 18,
	MT_SB_CGROUP = 19,
	MT_SB_TEXT_POKE = 20,
	MT_SB_AUX_OUTPUT_HW_ID = 21,
	MT_SB_KERNEL_MAX = 64	/* types >= 64 are perf tool records */
};

/* perf_event_header.misc bits. */
#define MT_SB_MISC_CPUMODE_MASK		0x7u
#define MT_SB_MISC_KERNEL		0x1u
#define MT_SB_MISC_USER			0x2u
#define MT_SB_MISC_MMAP_DATA		(1u << 13)	/* MMAP*: not exec */
#define MT_SB_MISC_COMM_EXEC		(1u << 13)	/* COMM: from exec */
#define MT_SB_MISC_SWITCH_OUT		(1u << 13)	/* SWITCH*: out */
#define MT_SB_MISC_SWITCH_OUT_PREEMPT	(1u << 14)	/* SWITCH*: preempted */
#define MT_SB_MISC_MMAP_BUILD_ID	(1u << 14)	/* MMAP2: build-id form */

/* AUX record flags (PERF_AUX_FLAG_*). */
#define MT_SB_AUX_TRUNCATED	0x01u
#define MT_SB_AUX_OVERWRITE	0x02u
#define MT_SB_AUX_PARTIAL	0x04u
#define MT_SB_AUX_COLLISION	0x08u

/* attr.sample_type bits that matter for records (PERF_SAMPLE_*). */
#define MT_SB_ST_IP		(1ull << 0)
#define MT_SB_ST_TID		(1ull << 1)
#define MT_SB_ST_TIME		(1ull << 2)
#define MT_SB_ST_ADDR		(1ull << 3)
#define MT_SB_ST_ID		(1ull << 6)
#define MT_SB_ST_CPU		(1ull << 7)
#define MT_SB_ST_PERIOD		(1ull << 8)
#define MT_SB_ST_STREAM_ID	(1ull << 9)
#define MT_SB_ST_IDENTIFIER	(1ull << 16)

#define MT_SB_BUILD_ID_MAX	20	/* MMAP2 build_id[] */

/* The sample_id trailer.  Fields whose bit was not set are 0. */
struct mt_sb_id {
	uint32_t pid;		/* TID: process */
	uint32_t tid;		/* TID: thread */
	uint64_t time;		/* TIME: perf clock ns */
	uint64_t id;		/* ID, or IDENTIFIER when that is set */
	uint64_t stream_id;	/* STREAM_ID */
	uint32_t cpu;		/* CPU */
	uint32_t cpu_res;	/* CPU: reserved half */
};

struct mt_sb_mmap {		/* MMAP and MMAP2 */
	uint32_t pid, tid;
	uint64_t addr;		/* first address */
	uint64_t len;		/* bytes mapped */
	uint64_t pgoff;		/* file offset of addr */
	/* MMAP2 only: */
	uint32_t maj, min;	/* device (not with build-id form) */
	uint64_t ino, ino_generation;
	uint8_t build_id_len;	/* with MT_SB_MISC_MMAP_BUILD_ID: 0..20 */
	uint8_t build_id[MT_SB_BUILD_ID_MAX];
	uint32_t prot;		/* PROT_* */
	uint32_t flags;		/* MAP_* */
	const char *filename;	/* NUL-terminated; not owned */
};

struct mt_sb_comm {		/* COMM */
	uint32_t pid, tid;
	const char *comm;	/* NUL-terminated; not owned */
};

struct mt_sb_task {		/* FORK and EXIT */
	uint32_t pid, ppid;	/* process and parent process */
	uint32_t tid, ptid;	/* thread and parent thread */
	uint64_t time;		/* perf clock ns */
};

struct mt_sb_aux {		/* AUX */
	uint64_t aux_offset;	/* ring offset where new data ends... */
	uint64_t aux_size;	/* ...and its size; see docs/perf.md */
	uint64_t flags;		/* MT_SB_AUX_* */
};

struct mt_sb_lost {		/* LOST (id, lost) and LOST_SAMPLES (lost) */
	uint64_t id;
	uint64_t lost;
};

struct mt_sb_rec {
	uint32_t type;		/* enum mt_sb_type */
	uint16_t misc;		/* MT_SB_MISC_* */
	uint16_t size;		/* bytes in the whole record */
	uint64_t off;		/* offset of the header in the input */
	int has_id;		/* 1 if @id was parsed (not SAMPLE) */
	struct mt_sb_id id;	/* the sample_id trailer */
	/*
	 * Type-specific body.  ITRACE_START uses task.pid/tid;
	 * SWITCH_CPU_WIDE uses task.pid/tid for next_prev_pid/tid.
	 */
	union {
		struct mt_sb_mmap mmap;
		struct mt_sb_comm comm;
		struct mt_sb_task task;
		struct mt_sb_aux aux;
		struct mt_sb_lost lost;
	} u;
	/*
	 * The body between header and trailer, for every type (the only
	 * content of types not listed above).  Not owned.  For mt_sb_write,
	 * used only for types this module does not know.
	 */
	const uint8_t *body;
	size_t body_len;
};

/* A cursor over records.  Plain struct: the caller owns it. */
struct mt_sb_reader {
	const uint8_t *p;	/* the records; not owned */
	size_t len;		/* bytes in p */
	size_t pos;		/* offset of the next record */
	uint64_t base;		/* added to offsets in rec.off and errors */
	uint64_t sample_type;	/* fixes the trailer layout */
	int sample_id_all;	/* 0: records have no trailer */
	uint64_t err_off;	/* after an error: where it was found */
	const char *err_msg;	/* after an error: what was wrong (static) */
};

/*
 * Start reading the records in @p[0..@len).  @sample_type is the attr's
 * sample_type (the snapshot SIDEBAND chunk's field); @sample_id_all says
 * whether records carry the trailer (always 1 in snapshots).  @base is
 * added to every reported offset (e.g. the data's offset in its file).
 */
void mt_sb_reader_init(struct mt_sb_reader *r, const void *p, size_t len,
    uint64_t sample_type, int sample_id_all, uint64_t base);

/*
 * Parse the next record into @rec and advance past it.
 * Returns 0, or MT_EOS at the end of the bytes.
 * Returns -MT_E_TRUNC if the header or the record runs past the end,
 * -MT_E_CORRUPT if size < 8, or a known body or the trailer does not fit
 * in size, or a string has no NUL; then r->err_off and r->err_msg say
 * where and what, and the reader stays at the bad record.
 */
int mt_sb_next(struct mt_sb_reader *r, struct mt_sb_rec *rec);

/* Bytes of the sample_id trailer for @sample_type. */
size_t mt_sb_id_size(uint64_t sample_type);

/*
 * Append @rec to @w as the kernel would write it with @sample_type and
 * sample_id_all set: body, strings NUL-padded to 8, then the trailer from
 * rec->id.  rec->size and rec->off are ignored (size is computed).
 * Returns the record's size, or -MT_E_LIMIT if it exceeds 65535 bytes,
 * -MT_E_INVAL for SAMPLE records or a NULL string, or -MT_E_NOMEM.
 */
int mt_sb_write(struct mt_wbuf *w, const struct mt_sb_rec *rec,
    uint64_t sample_type);

/*
 * Replace, in place, the sample_id time of each record of @p[0..@len)
 * that has one (a trailer, and TIME in @sample_type) by @fn(@arg, time).
 * Returns the number of records changed, or the reader's error at the
 * first bad record (those before it are changed).
 */
int mt_sb_retime(uint8_t *p, size_t len, uint64_t sample_type,
    uint64_t (*fn)(void *arg, uint64_t time), void *arg);

/* Name of a record type, e.g. "MMAP2"; "unknown" for others. */
const char *mt_sb_type_name(uint32_t type);

#endif /* MT_SIDEBAND_H */
