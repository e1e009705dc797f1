/* SPDX-License-Identifier: MIT */
/*
 * The memory images mt-decode decodes against, built from a snapshot.
 *
 * One libipt image-section cache holds every section and its block cache;
 * each process gets a pt_image made of cached sections.  Views (below)
 * hold the same sections in caches of their own.  Code bytes carried
 * in the snapshot (BLOB and ELF chunks) are read by libipt from the
 * snapshot file, or, when it came through a pipe, from one memfd they
 * are copied into (/proc/self/fd/N), so libipt caches blocks for them as
 * for files on disk; the set reads them where the snapshot holds them.
 * ELF files of MMAP chunks and MMAP/MMAP2 sideband records
 * are looked up by build-id: bundled ELF chunks first, then
 * DEBUG_DIR/.build-id/xx/rest, then ROOT/path, then path; a file whose
 * build-id differs is refused with a warning.  Each ELF is opened once
 * (bundled ones read in place), however many mappings reach it.
 */
#ifndef MT_DECODE_IMAGE_H
#define MT_DECODE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct mt_snap;
struct pt_image;
struct pt_image_section_cache;

struct image_opts {
	const char *debug_dir;	/* build-id cache directory, or NULL */
	const char *root;	/* prefix for recorded paths, or NULL */
	const char *snap_path;	/* the snapshot's file, or NULL for a pipe:
				 * when the snapshot is mapped from it
				 * (mt_snap_map_fd), libipt reads the
				 * bundled code from this file and the
				 * set from that mapping */
};

/* One mapping a decoder may see, also written as a `mod` record. */
struct image_mod {
	uint32_t pid;		/* 0: all processes */
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	char buildid[2 * 64 + 1];	/* lowercase hex, "" unknown */
	const char *path;	/* recorded path or blob name; borrowed
				 * from the snapshot */
	int loaded;		/* 1 if its bytes are in the images */
	uint64_t time;		/* perf ns from which it holds the code at
				 * [start, end) (epochs.h), 0: always */
};

struct image_set;

/*
 * Build the images of @s (which must outlive the set).  Warnings (missing
 * or mismatched files) are kept for the caller: image_set_warning().
 * Returns 0, -MT_E_NOMEM, -MT_E_IO (memfd) or -MT_E_IPT.
 */
int image_set_new(struct image_set **out, const struct mt_snap *s,
    const struct image_opts *o);
void image_set_free(struct image_set *is);

/*
 * Add a mapping seen in the sideband (MMAP/MMAP2) for @pid at @time (perf
 * ns; 0: unknown, mapped from the start).  @path and @buildid (binary,
 * @bidlen bytes, 0 unknown) are copied.  A mapping over other code
 * mapped before it replaces that code from @time on (epochs.h).
 */
int image_set_add_mapping(struct image_set *is, uint32_t pid,
    uint64_t start, uint64_t len, uint64_t pgoff, const uint8_t *buildid,
    size_t bidlen, const char *path, uint64_t time);

/*
 * Is @ip inside a [uprobes] mapping of @pid (the kernel's out-of-line
 * slots for probed instructions)?  Such a mapping decodes as NOPs.
 */
int image_set_in_xol(const struct image_set *is, uint32_t pid, uint64_t ip);
/*
 * Once every mapping is added (before decoding): read the instruction
 * at each trigger hit's ip and each PROBE chunk's address (a probed
 * instruction), for image_set_probe.  Returns 0 or -MT_E_NOMEM.
 */
int image_set_read_probes(struct image_set *is);
/*
 * The instruction of @pid at @ip, as its image has it (a file's bytes:
 * a uprobe's int3 is not there): up to 16 bytes into @raw, decoded into
 * @in.  Returns 0, or -1 when no section has it or it does not decode.
 */
struct ild_insn;
int image_set_insn_at(struct image_set *is, uint32_t pid, uint64_t ip,
    uint8_t raw[16], struct ild_insn *in);
/*
 * The [uprobes] mapping of @pid holding @ip: [*@lo, *@hi).  Returns 0, or
 * -1 when @ip is in none.  Its NOPs are mapped from the file named by
 * image_set_xol_file ("" before any).
 */
int image_set_xol_page(const struct image_set *is, uint32_t pid,
    uint64_t ip, uint64_t *lo, uint64_t *hi);
const char *image_set_xol_file(const struct image_set *is);
/*
 * The probed instruction of @pid at @ip (a trigger hit's or a PROBE's; read by
 * image_set_read_probes): its enum ild_class, length and direct target (0:
 * none).  Returns 0, or -1 when @ip is no probe of @pid or unreadable.
 */
int image_set_probe(const struct image_set *is, uint32_t pid, uint64_t ip,
    int *cls, uint64_t *len, uint64_t *target);

/*
 * The image of @pid (created on first use with the global sections):
 * every mapping, the latest where they overlap.
 */
struct pt_image *image_set_image(struct image_set *is, uint32_t pid);
/*
 * The image of @pid at @time: the code mapped then (epochs.h); *@next
 * gets the time from which another image applies (UINT64_MAX: none).
 * NULL: out of memory.
 */
struct pt_image *image_set_image_at(struct image_set *is, uint32_t pid,
    uint64_t time, uint64_t *next);
struct pt_image_section_cache *image_set_iscache(struct image_set *is);

/* Mappings, in the order added. */
size_t image_set_nmods(const struct image_set *is);
const struct image_mod *image_set_mod(const struct image_set *is, size_t i);

/* Warnings collected while loading: NULL past the last. */
const char *image_set_warning(const struct image_set *is, size_t i);

/*
 * A view of the set: the same sections (same isids) added anew to a
 * section cache of its own, so decoders using it start with cold block
 * caches whatever other decoders did before.  libipt ends blocks at
 * different places with a warm cache than with a cold one, and with MTC
 * or CYC timing a block's end decides the time of the events in it; a
 * buffer decoded through a fresh view gets the same times however many
 * buffers were decoded before it, in whichever order (parallel.h).
 * image_view_new and image_view_image read the set: callers serialize
 * them with other users of the set.
 */
struct image_view;

int image_view_new(struct image_view **out, struct image_set *is);
/* The image of @pid in @v, made as the set's; NULL: out of memory. */
struct pt_image *image_view_image(struct image_view *v, uint32_t pid);
/* The image of @pid at @time in @v, as image_set_image_at(). */
struct pt_image *image_view_image_at(struct image_view *v, uint32_t pid,
    uint64_t time, uint64_t *next);
void image_view_free(struct image_view *v);

/*
 * The section of @pid's image that holds @ip, when no other section of
 * that image overlaps it: its isid and its addresses [*lo, *hi).
 * Returns 0, or -1 (no such section, or an overlapped one).
 */
int image_set_section_at(struct image_set *is, uint32_t pid, uint64_t ip,
    int *isid, uint64_t *lo, uint64_t *hi);

/*
 * Function range lookup for walk.h (0: unknown): the ELF symbol covering
 * @addr, else the FDE (.eh_frame, .debug_frame) holding it, so that code
 * without symbols (stripped programs, ld.so) has bounds too.
 */
int image_set_fn_lookup(void *is, uint64_t addr, uint64_t *lo, uint64_t *hi);
/*
 * The first lookup makes the tables (the files' symbols are read then,
 * not while the set is built): call it once before threads share the
 * set.  1 if making them ran out of memory (lookups then find nothing:
 * the run must fail), else 0.
 */
int image_set_fns_failed(const struct image_set *is);
/*
 * The bytes of section @isid in memory (walk_code_fn): *@code holds
 * *@size bytes from address *@vaddr, the same bytes libipt's section cache
 * reads (its file mapped when the section was added).  Returns 0, or -1
 * when the section has none (read it through the cache).  Any thread may
 * call it while buffers are decoded: the set does not change then.
 */
int image_set_code(void *is, int isid, const uint8_t **code, uint64_t *vaddr,
    uint64_t *size);
/*
 * Decode the instruction at @ip of section @isid in mode @bits (16, 32,
 * 64) into @in, from the bytes image_set_code gives, else through the
 * cache.  Returns 0, or -1 when @ip is not in the section or its bytes
 * do not decode.
 */
struct ild_insn;
int image_set_decode(struct image_set *is, int isid, uint64_t ip, int bits,
    struct ild_insn *in);
/*
 * The first section of @is with @isid's file, offset and size: libipt's
 * section cache shares one section, and so its block cache, between the
 * isids of one file range mapped at different addresses.  Returns that
 * isid (@isid itself when it is the first), or -1 for an unknown isid.
 */
int image_set_section_base(const struct image_set *is, int isid);
/*
 * ELF images the set holds: each bundled ELF chunk and each file on disk
 * once, however many mappings (processes, segments, sideband records)
 * reach it, and the vDSO blobs.
 */
size_t image_set_nelfs(const struct image_set *is);

#endif /* MT_DECODE_IMAGE_H */
