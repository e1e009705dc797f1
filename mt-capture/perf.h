/* SPDX-License-Identifier: MIT */
/*
 * perf.data interop for mt-capture (docs/perf.md): export a snapshot as a
 * perf.data that perf's own Intel PT decoder reads, and import what
 * `perf record -e intel_pt//` wrote into a snapshot.  The format itself
 * lives in common/perfdata; these modules map between it and common/snap.
 * Neither prints: problems go back in struct perf_diag, warnings through
 * the callback.
 */
#ifndef MT_CAPTURE_PERF_H
#define MT_CAPTURE_PERF_H

#include <stdint.h>

struct mt_snap;
struct mt_pd;
struct mt_wbuf;

struct perf_diag {
	uint64_t off;		/* byte offset in the input, when known */
	int has_off;		/* 1 if off means something */
	char msg[256];		/* what went wrong */
};

struct perf_export_opts {
	int pipe;		/* 1: pipe-mode perf.data (feed it to perf
				 * through stdin) */
	int timeless;		/* 1: cap_user_time_zero = 0, so perf decodes
				 * without timestamps */
	int pip_as_host;	/* 1: clear PIP.NR so perf decodes a guest
				 * trace against the host maps */
	const char *files_dir;	/* absolute directory for the code files
				 * (BLOB and ELF chunks) the MMAP2 records
				 * name; created when needed */
	/* Called with each warning; may be NULL. */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
};

/* Intel PT attr.type written when the snapshot has none (emulated, raw). */
#define PERF_EXPORT_DEFAULT_PMU 8
/* Thread written for AUX buffers of thread 0 (perf's idle task). */
#define PERF_EXPORT_TID0 4194303

/*
 * Write @s as perf.data to @fd (front to back: pipes work).
 * Returns 0, -MT_E_UNSUPP (nothing perf can decode), -MT_E_IO (errno
 * set; @d says which file), -MT_E_LIMIT or -MT_E_NOMEM.
 */
int perf_export(const struct perf_export_opts *o, const struct mt_snap *s,
    int fd, struct perf_diag *d);

/*
 * PT bytes as export-perf writes them (perf-ptscan.c): the PIP packets
 * with NR set in @len bytes, their NR bit cleared in @copy when given;
 * a copy with every such bit cleared (NULL when out of memory); the
 * largest TSC packet value, or 0.
 */
uint64_t perf_pip_nr_scan(const uint8_t *data, uint64_t len, uint8_t *copy);
uint8_t *perf_pip_as_host(const uint8_t *data, uint64_t len);
uint64_t perf_max_tsc(const uint8_t *data, uint64_t len);

/*
 * Append to @out an ELF executable perf reads with --vmlinux: the @len
 * bytes of kernel code @code at @addr, and the kallsyms TEXT chunks' text
 * symbols of @s inside them (perf-vmlinux.c).  Returns 0 or -MT_E_NOMEM.
 */
int perf_vmlinux(struct mt_wbuf *out, const struct mt_snap *s,
    uint64_t addr, const uint8_t *code, uint64_t len);

struct perf_import_opts {
	const char *debug_dir;	/* perf's build-id cache, e.g. ~/.debug;
				 * NULL: not used */
	int bundle;		/* 1: bundle ELF files whose build-id
				 * matches into the snapshot */
	const char *source;	/* input name for META */
	const char *flat_dir;	/* absolute directory: flat (non-ELF) code
				 * files are bundled only from under it;
				 * NULL: never */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
};

/*
 * Fill @s (initialised, empty) from @pd.
 * Returns 0, -MT_E_UNSUPP (no Intel PT data in it), -MT_E_CORRUPT (a
 * record that does not parse; @d has its offset) or -MT_E_NOMEM.
 */
int perf_import(const struct perf_import_opts *o, const struct mt_pd *pd,
    struct mt_snap *s, struct perf_diag *d);

#endif /* MT_CAPTURE_PERF_H */
