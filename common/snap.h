/* SPDX-License-Identifier: MIT */
/*
 * The snapshot file (docs/formats/snapshot.md): what mt-capture writes and
 * mt-decode reads.  One module holds the reader and the writer.
 *
 * A snapshot is read whole into a struct mt_snap, whose arrays own every
 * string and byte payload.  Writers fill a struct mt_snap with the mt_snap_add_*
 * helpers (which copy their arguments) and call mt_snap_write(), which emits
 * the file front to back (it never seeks, so it can write to a pipe).
 */
#ifndef MT_SNAP_H
#define MT_SNAP_H

#include <stddef.h>
#include <stdint.h>

#define MT_SNAP_MAGIC		"MTSNAP\r\n"	/* 8 bytes */
#define MT_SNAP_MAJOR		1
#define MT_SNAP_MINOR		2
#define MT_SNAP_HDR_SIZE	32
#define MT_SNAP_BUILD_ID_MAX	64
#define MT_SNAP_MAX_FILTERS	4
#define MT_SNAP_NONE		0xffffffffu	/* tid or cpu not applicable */

/* Chunk types (u32).  Flag MT_SNAP_CF_REQUIRED: readers that do not know
 * the type must refuse the file instead of skipping the chunk. */
enum mt_snap_chunk_type {
	MT_SNAP_END = 0,	/* last chunk: u64 number of chunks before it */
	MT_SNAP_META = 1,	/* key/value facts about the capture */
	MT_SNAP_HOST = 2,	/* CPU identity and host */
	MT_SNAP_PTCFG = 3,	/* PT configuration used and IP filters */
	MT_SNAP_TIMECONV = 4,	/* perf time <-> TSC conversion */
	MT_SNAP_PROCESS = 5,	/* a traced process */
	MT_SNAP_THREAD = 6,	/* a traced thread */
	MT_SNAP_MMAP = 7,	/* a mapping at attach time, with build-id */
	MT_SNAP_AUX = 8,	/* one PT buffer, oldest byte first */
	MT_SNAP_SIDEBAND = 9,	/* raw perf records of one data ring */
	MT_SNAP_TRIGGER = 10,	/* a trigger hit */
	MT_SNAP_BLOB = 11,	/* code bytes at an address (vDSO, JIT, ...) */
	MT_SNAP_ELF = 12,	/* an ELF file bundled by build-id */
	MT_SNAP_TEXT = 13,	/* a text file: kallsyms, perf-PID.map */
	MT_SNAP_PROBE = 14,	/* a uprobe site in a traced process (1.2) */
	MT_SNAP_NTYPES
};
#define MT_SNAP_CF_REQUIRED 0x1u

/* PTCFG backends: where the PT bytes came from. */
enum mt_snap_backend {
	MT_SNAP_BK_INTEL_PT = 0,	/* live Intel PT through perf_event_open */
	MT_SNAP_BK_EMULATE = 1,		/* mt-capture's software backend */
	MT_SNAP_BK_RAW = 2,		/* mt-capture import-raw */
	MT_SNAP_BK_PERF = 3,		/* mt-capture import-perf */
};

/* BLOB kinds. */
enum mt_snap_blob_kind {
	MT_SNAP_BLOB_VDSO = 1,
	MT_SNAP_BLOB_JIT = 2,
	MT_SNAP_BLOB_MEMORY = 3,	/* raw memory image (e.g. page dumps) */
	MT_SNAP_BLOB_KERNEL = 4,	/* kernel text from /proc/kcore */
};

/* TEXT kinds. */
enum mt_snap_text_kind {
	MT_SNAP_TEXT_KALLSYMS = 1,
	MT_SNAP_TEXT_PERFMAP = 2,	/* perf-PID.map of pid */
	MT_SNAP_TEXT_MAPS = 3,		/* /proc/PID/maps as read */
};

struct mt_snap_meta {
	char *key;		/* e.g. "reason", "mt-version"; owned */
	char *value;		/* owned */
};

struct mt_snap_host {
	char vendor[13];	/* CPUID.0 vendor string, NUL-terminated */
	uint16_t family;	/* display family (CPUID.1 with extended) */
	uint8_t model;		/* display model */
	uint8_t stepping;
	uint32_t cpuid_14[2][4];	/* CPUID.14H subleaf 0 and 1: eax..edx */
	uint32_t cpuid_15[3];	/* CPUID.15H eax (den), ebx (num), ecx (Hz) */
	uint32_t max_nonturbo_ratio;	/* sysfs intel_pt/max_nonturbo_ratio */
	uint32_t nr_cpus;	/* online CPUs */
	char *kernel;		/* uname release; owned, may be NULL */
	char *hostname;		/* owned, may be NULL */
};

struct mt_snap_filter {
	uint64_t a;		/* RTIT_ADDRn_A: first address */
	uint64_t b;		/* RTIT_ADDRn_B: last address (inclusive) */
	uint32_t cfg;		/* ADDRn_CFG: 1 filter, 2 TraceStop */
};

struct mt_snap_ptcfg {
	uint32_t backend;	/* enum mt_snap_backend */
	uint32_t pmu_type;	/* perf attr.type of intel_pt (0 if none) */
	uint64_t config;	/* perf attr.config (IA32_RTIT_CTL bit layout) */
	uint8_t user;		/* user space traced */
	uint8_t kernel;		/* kernel traced */
	uint8_t per_cpu;	/* buffers are per CPU (else per thread) */
	uint8_t nfilters;	/* entries used in filters[] */
	struct mt_snap_filter filters[MT_SNAP_MAX_FILTERS];
};

/* Fields of ptcfg.config (perf's intel_pt format = RTIT_CTL bits). */
#define MT_PT_CFG_CYC		(1ull << 1)
#define MT_PT_CFG_MTC		(1ull << 9)
#define MT_PT_CFG_TSC		(1ull << 10)
#define MT_PT_CFG_NORETCOMP	(1ull << 11)
#define MT_PT_CFG_BRANCH	(1ull << 13)
#define MT_PT_CFG_MTC_PERIOD(c)	(((c) >> 14) & 0xf)
#define MT_PT_CFG_CYC_THRESH(c)	(((c) >> 19) & 0xf)
#define MT_PT_CFG_PSB_PERIOD(c)	(((c) >> 24) & 0xf)

struct mt_snap_timeconv {
	uint64_t time_zero;	/* perf_event_mmap_page fields */
	uint32_t time_mult;
	uint16_t time_shift;
	uint8_t cap_user_time_zero;	/* 0: no conversion, times relative */
	uint8_t cap_user_time_short;
	uint64_t time_cycles;
	uint64_t time_mask;
};

struct mt_snap_process {
	uint32_t pid;
	uint32_t ppid;
	char *comm;		/* owned */
	char *exe;		/* realpath of /proc/PID/exe; owned */
	char *cmdline;		/* arguments, each NUL-terminated; owned */
	uint32_t cmdline_len;	/* bytes in cmdline */
};

struct mt_snap_thread {
	uint32_t pid;
	uint32_t tid;
	char *comm;		/* owned */
};

struct mt_snap_mmap {
	uint32_t pid;
	uint64_t start;		/* first address */
	uint64_t end;		/* one past the last address */
	uint64_t pgoff;		/* file offset of start */
	uint32_t prot;		/* PROT_* */
	uint32_t flags;		/* MAP_* */
	uint8_t build_id_len;	/* 0: unknown */
	uint8_t build_id[MT_SNAP_BUILD_ID_MAX];
	char *path;		/* owned; "[vdso]" etc. for special maps */
};

struct mt_snap_aux {
	uint32_t tid;		/* thread, or MT_SNAP_NONE for per-CPU */
	uint32_t cpu;		/* CPU, or MT_SNAP_NONE for per-thread */
	uint32_t index;		/* snapshot number (multi-snapshot) */
	uint32_t flags;		/* MT_SNAP_AUX_* */
	uint64_t ring_size;	/* bytes in the AUX ring */
	uint64_t head;		/* ring offset one past the newest byte */
	uint64_t len;		/* bytes in data */
	uint8_t *data;		/* oldest byte first; owned */
};
#define MT_SNAP_AUX_WRAPPED	0x1u	/* the ring had wrapped: data may
					 * begin mid-packet */
#define MT_SNAP_AUX_TRUNCATED	0x2u	/* the kernel reported lost data */

struct mt_snap_sideband {
	uint32_t cpu;		/* ring's CPU, or MT_SNAP_NONE */
	uint32_t tid;		/* ring's thread, or MT_SNAP_NONE */
	uint64_t sample_type;	/* attr.sample_type: sample_id layout */
	uint64_t len;		/* bytes in data */
	uint8_t *data;		/* perf_event_header records; owned */
};

struct mt_snap_trigger {
	uint64_t time;		/* perf clock ns */
	uint32_t pid;
	uint32_t tid;
	uint64_t ip;		/* address that fired */
	uint32_t index;		/* snapshot this hit caused */
	char *what;		/* selector as given, e.g. "libm.so.6:cos" */
};

struct mt_snap_blob {
	uint32_t pid;		/* 0: all processes (kernel) */
	uint32_t kind;		/* enum mt_snap_blob_kind */
	uint64_t addr;		/* virtual address of data[0] */
	char *name;		/* e.g. "[vdso]"; owned */
	uint64_t len;
	uint8_t *data;		/* owned */
	uint64_t time;		/* perf ns from which these bytes are the
				 * code at addr (JIT code written over
				 * other code); 0: always (format 1.1) */
};

struct mt_snap_elf {
	uint8_t build_id_len;
	uint8_t build_id[MT_SNAP_BUILD_ID_MAX];
	char *path;		/* path on the capture host; owned */
	uint64_t len;
	uint8_t *data;		/* the whole file; owned */
};

struct mt_snap_text {
	uint32_t kind;		/* enum mt_snap_text_kind */
	uint32_t pid;		/* 0 when not per process */
	uint64_t len;
	char *data;		/* owned; NUL-terminated beyond len */
};

/* PROBE origins: who registered the uprobe. */
enum mt_snap_probe_origin {
	MT_SNAP_PROBE_TRIGGER = 1,	/* mt-capture's own --trigger */
	MT_SNAP_PROBE_OTHER = 2,	/* another tool's (tracefs uprobe_events) */
};

struct mt_snap_probe {
	uint32_t pid;		/* the process it traps in */
	uint32_t origin;	/* enum mt_snap_probe_origin */
	uint64_t addr;		/* run-time address of the probed instruction */
	uint64_t offset;	/* its offset in the file */
	char *path;		/* the file, as mt-capture opened it; owned */
	char *what;		/* the --trigger selector, or the probe's
				 * uprobe_events name; owned */
};

/* Where each chunk sat in the file, for mt-decode --info. */
struct mt_snap_chunkinfo {
	uint32_t type;
	uint32_t flags;
	uint64_t off;		/* file offset of the chunk header */
	uint64_t len;		/* payload bytes */
};

struct mt_snap {
	uint16_t major, minor;	/* version read (or to write) */
	int has_host, has_ptcfg, has_timeconv;
	struct mt_snap_host host;
	struct mt_snap_ptcfg ptcfg;
	struct mt_snap_timeconv timeconv;
	/* Arrays: pointer, count; owned. */
	struct mt_snap_meta *meta;		size_t nmeta;
	struct mt_snap_process *procs;		size_t nprocs;
	struct mt_snap_thread *threads;		size_t nthreads;
	struct mt_snap_mmap *mmaps;		size_t nmmaps;
	struct mt_snap_aux *aux;		size_t naux;
	struct mt_snap_sideband *sideband;	size_t nsideband;
	struct mt_snap_trigger *triggers;	size_t ntriggers;
	struct mt_snap_blob *blobs;		size_t nblobs;
	struct mt_snap_elf *elfs;		size_t nelfs;
	struct mt_snap_text *texts;		size_t ntexts;
	struct mt_snap_probe *probes;		size_t nprobes;
	struct mt_snap_chunkinfo *chunks;	size_t nchunks; /* read only */
	uint64_t skipped;	/* unknown optional chunks skipped by read */
	/* mt_snap_map_fd(): the file's private mapping, which the AUX,
	 * BLOB and ELF data point into (not freed one by one); owned */
	uint8_t *map;
	size_t maplen;
};

/*
 * Where and why reading failed.  @msg names @off once ("at offset N"):
 * print it after the file's name as it is, adding no offset.
 */
struct mt_snap_diag {
	uint64_t off;		/* byte offset of the problem: the chunk's
				 * header, or the header field at fault */
	uint32_t type;		/* chunk type, or MT_SNAP_NONE for the header */
	char msg[160];		/* e.g. "checksum mismatch in AUX chunk at
				 * offset 32" */
};

void mt_snap_init(struct mt_snap *s);
void mt_snap_release(struct mt_snap *s);
/* Name of a chunk type, e.g. "AUX"; "unknown" for others. */
const char *mt_snap_type_name(uint32_t type);

/*
 * Read a snapshot from @fd (a file or a pipe) into @s, which must be
 * initialised.  On failure @d says where and why; @s holds what was read.
 * Returns 0, -MT_E_MAGIC, -MT_E_VERSION, -MT_E_TRUNC, -MT_E_CHECKSUM,
 * -MT_E_CORRUPT, -MT_E_UNSUPP, -MT_E_IO (errno set) or -MT_E_NOMEM.
 */
int mt_snap_read_fd(struct mt_snap *s, int fd, struct mt_snap_diag *d);
/* The same over bytes in memory (not kept after return). */
int mt_snap_read_mem(struct mt_snap *s, const void *p, size_t len,
    struct mt_snap_diag *d);
/*
 * The same as mt_snap_read_fd() for a regular file, without copying the
 * large payloads: the file is mapped (private, read-only) and the AUX,
 * BLOB and ELF data of @s point into the mapping,
 * which mt_snap_release() unmaps; those data then have no NUL after
 * them and must not be written (the other chunk types are copied as by
 * mt_snap_read_fd()).  Each chunk is checked a window at a time and
 * its pages unmapped once checked (they come back, from the page cache,
 * when read), so only what is used counts in the process's memory.  A file that cannot be
 * mapped (a pipe, an empty file) is read instead, as is one whose
 * descriptor does not stand at its start (read from where it stands).  The file must not
 * shrink while @s holds it.
 */
int mt_snap_map_fd(struct mt_snap *s, int fd, struct mt_snap_diag *d);
/*
 * Unmap the pages of the @len bytes at @p, data of @s in mt_snap_map_fd's
 * mapping (the first page from its start, the last whole), once they are
 * read: they no longer count in the process's memory, and come back from
 * the file when read again.  Data that are not in the mapping (a pipe's
 * copies) are left alone.
 */
void mt_snap_drop(const struct mt_snap *s, const void *p, uint64_t len);

/*
 * Write @s to @fd front to back: header, META, HOST, PTCFG, TIMECONV,
 * PROCESS, THREAD, MMAP, TEXT, BLOB, ELF, SIDEBAND, TRIGGER, PROBE, AUX,
 * END.
 * Returns 0, -MT_E_IO (errno set) or -MT_E_NOMEM.
 */
int mt_snap_write_fd(const struct mt_snap *s, int fd);

/* Appenders: copy their arguments.  Return 0 or -MT_E_NOMEM. */
int mt_snap_add_meta(struct mt_snap *s, const char *key, const char *value);
int mt_snap_add_process(struct mt_snap *s, const struct mt_snap_process *p);
int mt_snap_add_thread(struct mt_snap *s, const struct mt_snap_thread *t);
int mt_snap_add_mmap(struct mt_snap *s, const struct mt_snap_mmap *m);
int mt_snap_add_aux(struct mt_snap *s, const struct mt_snap_aux *a);
int mt_snap_add_sideband(struct mt_snap *s, const struct mt_snap_sideband *b);
int mt_snap_add_trigger(struct mt_snap *s, const struct mt_snap_trigger *t);
int mt_snap_add_blob(struct mt_snap *s, const struct mt_snap_blob *b);
int mt_snap_add_elf(struct mt_snap *s, const struct mt_snap_elf *e);
int mt_snap_add_text(struct mt_snap *s, const struct mt_snap_text *t);
int mt_snap_add_probe(struct mt_snap *s, const struct mt_snap_probe *p);
/* Set the host's strings (copied). */
int mt_snap_set_host(struct mt_snap *s, const struct mt_snap_host *h);

/* Value of META key @key, or NULL. */
const char *mt_snap_meta_get(const struct mt_snap *s, const char *key);

/*
 * TSC @tsc in perf time (ns) with TIMECONV @tc (snapshot.md): time_zero +
 * (tsc >> shift) * mult + ((tsc & (2^shift - 1)) * mult >> shift), as
 * perf_event_mmap_page documents it.  Meaningful only when
 * tc->cap_user_time_zero is set.
 */
uint64_t mt_snap_tsc_to_ns(const struct mt_snap_timeconv *tc, uint64_t tsc);

#endif /* MT_SNAP_H */
