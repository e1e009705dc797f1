/* SPDX-License-Identifier: MIT */
/*
 * The image set's own state, shared by its files (image.c: sections,
 * processes, mappings and blobs; imagefn.c: ELF files, build-ids and
 * function ranges; imageview.c: a worker's view).  Private to them;
 * everyone else uses image.h.
 */
#ifndef MT_IMAGESET_H
#define MT_IMAGESET_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "epochs.h"
#include "fde.h"
#include "ild.h"
#include "image.h"

struct mt_elf;
struct pt_image;
struct pt_image_section_cache;

struct image_proc {
	uint32_t pid;
	struct pt_image *img;
	int *isids;		/* sections added to img, in order */
	uint64_t *times;	/* when each was mapped (perf ns), 0: always */
	size_t nisids;
	struct epochs ep;	/* img over time (epochs.h) */
	int ep_built;		/* ep is up to date */
};

/* A section of the cache: isid i + 1 is secs[i] (image_view_new). */
struct image_sec {
	const char *file;	/* image_keep()'s copy */
	uint64_t off, size, vaddr;
	const uint8_t *code;	/* its bytes in file's mapping (image_code),
				 * NULL: none (read through the cache) */
};

/* A file whose sections' bytes are read in place (image_code). */
struct image_cmap {
	const char *file;	/* image_keep()'s copy */
	uint8_t *base;		/* its mapping, NULL: it could not be mapped */
	size_t len;		/* bytes mapped: the file's size */
};

struct image_fn {
	uint64_t lo, hi;	/* [lo, hi) in the process */
};

/*
 * A [uprobes] mapping (the kernel's execute-out-of-line area, "xol_area"
 * in kernel/events/uprobes.c): the probed instruction runs there, copied
 * into a slot, when a uprobe fires.
 */
struct image_xol {
	uint32_t pid;		/* its process */
	uint64_t lo, hi;	/* [lo, hi) */
};

/* Bytes of NOPs standing in for a [uprobes] page (one page is mapped). */
#define IMAGE_XOL_MAX 4096

/* A probed instruction: a trigger hit's ip or a PROBE's, and what it is. */
struct image_probe {
	uint32_t pid;
	uint64_t ip;
	struct ild_insn in;
	int known;		/* 1: in is read */
};

/* A file opened from disk, opened once whatever maps it. */
struct image_file {
	const char *path;	/* image_keep()'s copy */
	struct mt_elf *e;	/* held in elfs */
};

/* A mapping whose function ranges are in fns, added once. */
struct image_range {
	const struct mt_elf *e;
	uint64_t start, end, pgoff;
};

/* The FDE ranges of one ELF file, read once however often it is mapped. */
struct image_efde {
	struct mt_elf *e;	/* held in elfs */
	struct mt_fde_tab t;	/* mt_fde_read_elf's, sorted; owned */
	int held;		/* t is read (released once in fdes) */
	int rc;			/* its status: < 0 a corrupt section */
	struct mt_fde_diag d;	/* where, when rc < 0 */
};

/*
 * A mapping that gives function ranges (image_add_fns), in the order
 * added: fns and fdes are made from these on first use.
 */
struct image_fnmap {
	struct mt_elf *e;	/* held in elfs (or being kept there) */
	size_t efde;		/* its FDEs: efdes[efde] */
	uint64_t start, end;	/* [start, end) in the process */
	uint64_t bias;		/* process address - file vaddr */
};

struct image_global {
	int isid;		/* section for every process */
};

struct image_set {
	const struct mt_snap *snap;	/* not owned */
	struct image_opts o;
	struct pt_image_section_cache *isc;
	int memfd;		/* bundled bytes, -1 until needed */
	char mempath[32];	/* "/proc/self/fd/N" */
	const char *codepath;	/* file holding blob_off/elf_off: the
				 * snapshot itself or mempath */
	uint64_t memlen;	/* bytes written to memfd */
	struct image_proc *procs;	size_t nprocs;
	struct image_global *glob;	size_t nglob;
	struct image_sec *secs;		size_t nsecs;
	struct image_mod *mods;		size_t nmods;
	char **paths;			size_t npaths;	/* owned strings */
	struct image_fn *fns;		size_t nfns, capfns;
	struct mt_fde_tab fdes;	/* FDE ranges, in the process: function
				 * bounds where no symbol covers code */
	int fns_sorted;		/* fns and fdes are made from fnmaps and
				 * sorted (image_fns_make) */
	int fns_nomem;		/* making them ran out of memory */
	struct image_fnmap *fnmaps;	size_t nfnmaps;
	struct image_efde *efdes;	size_t nefdes;
	char **warn;			size_t nwarn;
	struct mt_elf **elfs;		size_t nelfs;	/* kept for fnmaps */
	struct mt_elf **bundled;	/* ELF chunk i opened, NULL: not yet;
					 * held in elfs */
	struct image_file *files;	size_t nfiles;	/* opened on disk */
	struct image_range *ranges;	size_t nranges;	/* in fns */
	uint64_t *blob_off;	/* codepath offset of each BLOB's bytes */
	uint64_t *elf_off;	/* codepath offset of each ELF's bytes */
	int nopfd;		/* IMAGE_XOL_MAX one-byte NOPs, -1 until
				 * a [uprobes] mapping needs them */
	char noppath[32];	/* "/proc/self/fd/N" of nopfd */
	struct image_xol *xol;		size_t nxol;
	struct image_probe *probes;	size_t nprobes;
	struct image_cmap *cmaps;	size_t ncmaps;	/* files mapped */
};

static inline void *
grow(void *p, size_t n, size_t size)
{
	/* Grow to hold n + 1 elements, doubling at powers of two. */
	if (n == 0 || (n & (n - 1)) == 0)
		return realloc(p, (n ? 2 * n : 4) * size);
	return p;
}

static inline void
hex(char *out, const uint8_t *id, size_t n)
{
	static const char d[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n && i < 64; i++) {
		out[2 * i] = d[id[i] >> 4];
		out[2 * i + 1] = d[id[i] & 15];
	}
	out[2 * i] = '\0';
}

/* image.c */
int image_warn(struct image_set *is, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *image_keep(struct image_set *is, const char *s);
struct image_proc *image_proc(struct image_set *is, uint32_t pid);
int image_epochs(struct image_set *is, const struct image_proc *p,
    struct pt_image_section_cache *isc, struct epochs *ep);

/* imagefn.c */
int image_add_fns(struct image_set *is, struct mt_elf *e, const char *path,
    uint64_t start, uint64_t end, uint64_t pgoff);
int image_keep_elf(struct image_set *is, struct mt_elf *e, int rc);
int image_add_fns_once(struct image_set *is, struct mt_elf *e,
    const char *path, uint64_t start, uint64_t end, uint64_t pgoff);
int image_find(struct image_set *is, const uint8_t *bid, size_t bidlen,
    const char *path, struct mt_elf **ep, const char **file, uint64_t *base,
    char *buf, size_t bufsize);
void image_blob_buildid(struct image_set *is, struct image_mod *m);

#endif
