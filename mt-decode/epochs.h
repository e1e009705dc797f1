/* SPDX-License-Identifier: MIT */
/*
 * The images of one process over time.  A library unloaded (dlclose,
 * munmap) and another mapped at the same address, or JIT code replaced,
 * leave two sections over the same addresses: the sideband's MMAP/MMAP2
 * records say when each appeared.  Each such replacement starts an epoch;
 * the image of an epoch holds every section that appeared before the
 * next replacement (a later one overlapping nothing is harmless, code not
 * yet mapped never runs), added in time order so newer sections replace
 * older ones where they overlap.  A decoder picks the image for the time
 * it has reached and picks again when that time passes the epoch's end.
 * Sections of time 0 (mappings of the snapshot's MMAP chunks, BLOBs, or
 * records without a time) come first and start no epoch.  An epoch's
 * image is made the first time it is asked for: a JIT may replace code
 * thousands of times, and a snapshot's trace spans few of those epochs.
 */
#ifndef MT_DECODE_EPOCHS_H
#define MT_DECODE_EPOCHS_H

#include <stddef.h>
#include <stdint.h>

struct pt_image;
struct pt_image_section_cache;

/* One section added to a process, as image.c logs them. */
struct epoch_sec {
	int isid;		/* in the section cache */
	uint64_t time;		/* perf ns when it was mapped, 0: always */
	uint64_t vaddr, size;	/* where it lies: [vaddr, vaddr + size) */
};

struct epochs {
	size_t n;		/* epochs; 0: one image serves all time */
	uint64_t *start;	/* epoch i covers [start[i], start[i + 1]) */
	struct pt_image **img;	/* its image, NULL until asked for; owned */
	struct epoch_sec *sec;	/* the sections in time order; owned */
	uint8_t *repl;		/* 1: sec[i] replaces code before it */
	size_t nsec;
	struct pt_image_section_cache *isc;	/* holds them; not owned */
};

/*
 * Build the epochs of the @n sections @secs (in the order they were
 * added) with sections of cache @isc (which must outlive @ep).  With no
 * replacement, ep->n is 0 and the caller's single image serves.
 * Returns 0 or -MT_E_NOMEM.
 */
int epochs_build(struct epochs *ep, const struct epoch_sec *secs, size_t n,
    struct pt_image_section_cache *isc);
/*
 * The image for @time in *@img (NULL when ep->n is 0), made on first use;
 * *@next gets the time at which another image takes over (UINT64_MAX:
 * none).  Returns 0 or -MT_E_NOMEM.
 */
int epochs_at(struct epochs *ep, uint64_t time, uint64_t *next,
    struct pt_image **img);
void epochs_release(struct epochs *ep);

#endif /* MT_DECODE_EPOCHS_H */
