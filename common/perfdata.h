/* SPDX-License-Identifier: MIT */
/*
 * perf.data (docs/formats/perfdata.md): the subset that perf record writes
 * for intel_pt, in file mode ("PERFILE2" header, attrs and feature
 * sections) and pipe mode (16-byte header, then HEADER_ATTR and
 * HEADER_FEATURE records).  One module holds the reader and the writer.
 *
 * The reader takes the whole file into memory and indexes it: attrs with
 * their ids, AUXTRACE_INFO, TIME_CONV, AUXTRACE buffers (pointing at their
 * payload in place), kernel records (MMAP, COMM, SWITCH, ...: walk them
 * with common/sideband.h), build-ids, CPUID and NRCPUS.  Everything else
 * perf writes is skipped by size.  It never trusts a size or an offset:
 * every one is checked against the bytes that exist, and a failure names
 * the byte offset.
 *
 * The writer is fed in file order (attrs, then records) and emits the file
 * front to back in mt_pd_writer_finish(), so it can write to a pipe in both
 * modes.  File mode carries the HEADER_AUXTRACE index: perf then queues all
 * AUX buffers before decoding, and perf 6.1 misreads AUXTRACE payloads of
 * pipe-mode data that it reads from a regular file (16 bytes early).
 *
 * Not supported (reported as -MT_E_UNSUPP): big-endian files, version-1
 * "PERFFILE" files, compressed records (perf record -z), directory format
 * (perf record --threads).
 */
#ifndef MT_PERFDATA_H
#define MT_PERFDATA_H

#include <stddef.h>
#include <stdint.h>

#define MT_PD_MAGIC		0x32454c4946524550ull	/* "PERFILE2" LE */
#define MT_PD_FILE_HDR_SIZE	104	/* struct perf_file_header */
#define MT_PD_PIPE_HDR_SIZE	16	/* struct perf_pipe_file_header */
#define MT_PD_ATTR_SIZE		128	/* attr bytes written (ABI VER7) */
#define MT_PD_ATTR_MIN		64	/* smallest attr read (ABI VER0) */
#define MT_PD_AUXTRACE_HDR	48	/* AUXTRACE record without data */
#define MT_PD_NONE		0xffffffffu	/* tid/cpu -1 */

/* perf tool record types (>= 64; kernel types are in sideband.h). */
enum mt_pd_type {
	MT_PD_HEADER_ATTR = 64,
	MT_PD_HEADER_EVENT_TYPE = 65,
	MT_PD_HEADER_TRACING_DATA = 66,	/* followed by u32 size bytes */
	MT_PD_HEADER_BUILD_ID = 67,
	MT_PD_FINISHED_ROUND = 68,
	MT_PD_ID_INDEX = 69,
	MT_PD_AUXTRACE_INFO = 70,
	MT_PD_AUXTRACE = 71,		/* followed by size bytes */
	MT_PD_AUXTRACE_ERROR = 72,
	MT_PD_THREAD_MAP = 73,
	MT_PD_CPU_MAP = 74,
	MT_PD_STAT_CONFIG = 75,
	MT_PD_STAT = 76,
	MT_PD_STAT_ROUND = 77,
	MT_PD_EVENT_UPDATE = 78,
	MT_PD_TIME_CONV = 79,
	MT_PD_HEADER_FEATURE = 80,
	MT_PD_COMPRESSED = 81,
	MT_PD_FINISHED_INIT = 82,
};

/* Feature bits (file header bitmap; pipe-mode HEADER_FEATURE ids). */
enum mt_pd_feat {
	MT_PD_FEAT_BUILD_ID = 2,
	MT_PD_FEAT_HOSTNAME = 3,
	MT_PD_FEAT_OSRELEASE = 4,
	MT_PD_FEAT_NRCPUS = 7,
	MT_PD_FEAT_CPUID = 9,
	MT_PD_FEAT_AUXTRACE = 18,
	MT_PD_FEAT_DIR_FORMAT = 24,
	MT_PD_FEAT_COMPRESSED = 27,
	MT_PD_FEAT_BITS = 256,
};

/* perf_event_attr bit-field word (byte offset 40). */
#define MT_PD_ATTR_DISABLED		(1ull << 0)
#define MT_PD_ATTR_INHERIT		(1ull << 1)
#define MT_PD_ATTR_EXCLUDE_USER		(1ull << 4)
#define MT_PD_ATTR_EXCLUDE_KERNEL	(1ull << 5)
#define MT_PD_ATTR_EXCLUDE_HV		(1ull << 6)
#define MT_PD_ATTR_MMAP			(1ull << 8)
#define MT_PD_ATTR_COMM			(1ull << 9)
#define MT_PD_ATTR_ENABLE_ON_EXEC	(1ull << 12)
#define MT_PD_ATTR_TASK			(1ull << 13)
#define MT_PD_ATTR_SAMPLE_ID_ALL	(1ull << 18)
#define MT_PD_ATTR_MMAP2		(1ull << 23)
#define MT_PD_ATTR_COMM_EXEC		(1ull << 24)
#define MT_PD_ATTR_CONTEXT_SWITCH	(1ull << 26)

/* AUXTRACE_INFO type and Intel PT priv[] indexes (tools/perf intel-pt.h). */
#define MT_PD_AUXTRACE_INTEL_PT	1
enum mt_pd_ipt_priv {
	MT_PD_IPT_PMU_TYPE = 0,		/* must equal the intel_pt attr.type */
	MT_PD_IPT_TIME_SHIFT = 1,
	MT_PD_IPT_TIME_MULT = 2,
	MT_PD_IPT_TIME_ZERO = 3,
	MT_PD_IPT_CAP_USER_TIME_ZERO = 4,
	MT_PD_IPT_TSC_BIT = 5,		/* 0x400 */
	MT_PD_IPT_NORETCOMP_BIT = 6,	/* 0x800 */
	MT_PD_IPT_HAVE_SCHED_SWITCH = 7,
	MT_PD_IPT_SNAPSHOT_MODE = 8,
	MT_PD_IPT_PER_CPU_MMAPS = 9,
	MT_PD_IPT_MTC_BIT = 10,		/* 0x200 */
	MT_PD_IPT_MTC_FREQ_BITS = 11,	/* a MASK: 0x3c000 */
	MT_PD_IPT_TSC_CTC_N = 12,	/* CPUID.15H EBX */
	MT_PD_IPT_TSC_CTC_D = 13,	/* CPUID.15H EAX */
	MT_PD_IPT_CYC_BIT = 14,		/* 0x2 */
	MT_PD_IPT_MAX_NONTURBO_RATIO = 15,
	MT_PD_IPT_FILTER_STR_LEN = 16,	/* then the string, NUL-padded to 8 */
	MT_PD_IPT_NPRIV_MIN = 10,	/* perf 6.1 needs at least these */
};

struct mt_pd_attr {
	uint32_t type;		/* PMU type */
	uint32_t size;		/* attr.size as read; written as 128 */
	uint64_t config;	/* for intel_pt: RTIT_CTL bits */
	uint64_t sample_period;
	uint64_t sample_type;	/* MT_SB_ST_* */
	uint64_t read_format;
	uint64_t flags;		/* MT_PD_ATTR_* bit-field word */
	uint32_t wakeup_events;
	uint64_t config1, config2;
	uint32_t aux_watermark;
	uint64_t *ids;		/* event ids; owned */
	size_t nids;
};

struct mt_pd_time_conv {
	uint64_t time_shift;
	uint64_t time_mult;
	uint64_t time_zero;
	uint64_t time_cycles;	/* extended form only (size >= 56) */
	uint64_t time_mask;
	uint8_t cap_user_time_zero;
	uint8_t cap_user_time_short;
	uint8_t extended;	/* 1: the last four fields were present */
};

/* One AUXTRACE record: a buffer of AUX data. */
struct mt_pd_auxtrace {
	uint64_t off;		/* reader: file offset of the record */
	uint64_t size;		/* bytes of data (a multiple of 8 in perf) */
	uint64_t offset;	/* AUX ring offset of the data's start */
	uint64_t reference;	/* perf: TSC when taken (snapshots) */
	uint32_t idx;		/* mmap index: one per CPU or thread */
	uint32_t tid;		/* thread, MT_PD_NONE for per-CPU */
	uint32_t cpu;		/* CPU, MT_PD_NONE for per-thread */
	const uint8_t *data;	/* size bytes; not owned (reader: in the
				 * pd's memory; writer: copied) */
};

/* A kernel record in the data section (type < 64). */
struct mt_pd_event {
	uint64_t off;		/* file offset of its header */
	const uint8_t *p;	/* the record; in the pd's memory */
	uint16_t size;		/* record bytes */
	uint32_t attr;		/* index in attrs of its event */
};

struct mt_pd_build_id {
	int32_t pid;		/* -1: kernel (perf HOST_KERNEL_ID) */
	uint16_t misc;		/* cpumode (MT_SB_MISC_USER/KERNEL) */
	uint8_t len;		/* bytes in id (20 for SHA-1) */
	uint8_t id[20];
	char *filename;		/* owned */
};

struct mt_pd {
	int pipe;			/* 1: pipe-mode file */
	struct mt_pd_attr *attrs;	size_t nattrs;
	int has_auxtrace_info;
	uint64_t auxtrace_info_off;	/* byte offset of that record; its
					 * value i is at + 16 + 8 * i */
	uint32_t auxtrace_type;		/* MT_PD_AUXTRACE_INTEL_PT */
	uint64_t *priv;			size_t npriv;	/* owned */
	int has_time_conv;
	struct mt_pd_time_conv time_conv;
	struct mt_pd_auxtrace *aux;	size_t naux;
	struct mt_pd_event *events;	size_t nevents;
	struct mt_pd_build_id *build_ids; size_t nbuild_ids;
	char *cpuid;			/* "GenuineIntel,6,85,4"; owned */
	char *hostname, *osrelease;	/* owned, may be NULL */
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t skipped;		/* records of other types skipped */
	uint8_t *mem;			/* the whole file, when read from
					 * an fd; owned */
	size_t memlen;
};

/* Where and why reading failed. */
struct mt_pd_diag {
	uint64_t off;		/* byte offset of the problem */
	char msg[160];		/* e.g. "truncated AUXTRACE record" */
};

void mt_pd_init(struct mt_pd *pd);
void mt_pd_release(struct mt_pd *pd);

/*
 * Read a perf.data file or stream from @fd (read whole, at most @limit
 * bytes; 0 means 16 GiB) into @pd, which must be initialised.
 * Returns 0, or -MT_E_MAGIC (not perf.data), -MT_E_UNSUPP (big-endian,
 * version 1, compressed, directory), -MT_E_TRUNC, -MT_E_CORRUPT,
 * -MT_E_LIMIT, -MT_E_IO (errno set) or -MT_E_NOMEM; then @d says where.
 */
int mt_pd_read_fd(struct mt_pd *pd, int fd, uint64_t limit,
    struct mt_pd_diag *d);
/*
 * The same over @p[0..@len), which is NOT copied: it must outlive @pd
 * (records and AUX data point into it).
 */
int mt_pd_read_mem(struct mt_pd *pd, const void *p, size_t len,
    struct mt_pd_diag *d);

/* The attr of the intel_pt event (type == priv[0]), or NULL. */
const struct mt_pd_attr *mt_pd_pt_attr(const struct mt_pd *pd);
/* priv[@i] of AUXTRACE_INFO, or @dflt when absent. */
uint64_t mt_pd_priv(const struct mt_pd *pd, size_t i, uint64_t dflt);
/* Index of the attr with event id @id, or -1. */
int mt_pd_attr_of_id(const struct mt_pd *pd, uint64_t id);

struct mt_pd_writer;

/*
 * A writer of a file-mode (@pipe 0) or pipe-mode (@pipe 1) perf.data.
 * Returns 0 or -MT_E_NOMEM.  Free with mt_pd_writer_free (NULL is fine).
 */
int mt_pd_writer_new(struct mt_pd_writer **w, int pipe);
void mt_pd_writer_free(struct mt_pd_writer *w);

/*
 * Add an attr (its ids are copied).  All attrs come before the first
 * record.  Returns 0, -MT_E_INVAL after a record, or -MT_E_NOMEM.
 */
int mt_pd_writer_attr(struct mt_pd_writer *w, const struct mt_pd_attr *a);

/* Records, appended to the data section in call order.  Each returns 0,
 * -MT_E_INVAL (bad argument) or -MT_E_NOMEM. */
int mt_pd_writer_auxtrace_info(struct mt_pd_writer *w, uint32_t type,
    const uint64_t *priv, size_t npriv);
/* Writes the extended (56-byte body) form. */
int mt_pd_writer_time_conv(struct mt_pd_writer *w,
    const struct mt_pd_time_conv *tc);
/* A kernel record as bytes (e.g. made by mt_sb_write); size from its
 * header, which must match @len. */
int mt_pd_writer_record(struct mt_pd_writer *w, const void *rec, size_t len);
/* An AUXTRACE record and a->size bytes from a->data, zero-padded to 8
 * (the record's size field counts the padding). */
int mt_pd_writer_auxtrace(struct mt_pd_writer *w,
    const struct mt_pd_auxtrace *a);
int mt_pd_writer_finished_round(struct mt_pd_writer *w);

/* Header features (file mode: feature sections; pipe mode: CPUID and
 * NRCPUS as HEADER_FEATURE records first, build-ids as HEADER_BUILD_ID
 * records at the end).  Strings are copied. */
int mt_pd_writer_build_id(struct mt_pd_writer *w,
    const struct mt_pd_build_id *b);
int mt_pd_writer_cpuid(struct mt_pd_writer *w, const char *cpuid);
int mt_pd_writer_nr_cpus(struct mt_pd_writer *w, uint32_t avail,
    uint32_t online);

/*
 * Write the whole file to @fd front to back.
 * Returns 0, -MT_E_IO (errno set) or -MT_E_NOMEM.
 */
int mt_pd_writer_finish(struct mt_pd_writer *w, int fd);

#endif /* MT_PERFDATA_H */
