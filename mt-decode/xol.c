/* SPDX-License-Identifier: MIT */
/*
 * A probed instruction stepped out of line, for one decoder (see xol.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <intel-pt.h>

#include "err.h"
#include "image.h"
#include "xol.h"

/* A slot of the page (UPROBE_XOL_SLOT_BYTES, include/linux/uprobes.h). */
#define XOL_SLOT 128
/* The page: one is mapped (xol_add_vma maps PAGE_SIZE). */
#define XOL_PAGE 4096

/* A page written to the view's file: an instruction in every slot. */
struct xol_page {
	uint8_t raw[16];
	size_t len;
	uint64_t off;		/* in the file */
};

struct xol_view {
	int fd;			/* memfd of pages, -1 until the first */
	char path[32];		/* "/proc/self/fd/N" of fd */
	uint64_t end;		/* bytes written to fd */
	struct xol_page *pages;
	size_t npages;
	struct pt_image *img;	/* the last image made, or NULL */
};

int
xol_view_new(struct xol_view **out)
{
	struct xol_view *v = calloc(1, sizeof(*v));

	if (v == NULL)
		return -MT_E_NOMEM;
	v->fd = -1;
	*out = v;
	return 0;
}

void
xol_view_free(struct xol_view *v)
{
	if (v == NULL)
		return;
	if (v->img != NULL)
		pt_image_free(v->img);
	if (v->fd >= 0)
		close(v->fd);
	free(v->pages);
	free(v);
}

/* The offset in v->fd of a page holding @raw in every slot. */
static int
xol_page(struct xol_view *v, const uint8_t *raw, size_t len, uint64_t *off)
{
	uint8_t page[XOL_PAGE];
	struct xol_page *p;
	size_t i, k;

	for (i = 0; i < v->npages; i++)
		if (v->pages[i].len == len && memcmp(v->pages[i].raw, raw,
		    len) == 0) {
			*off = v->pages[i].off;
			return 0;
		}
	if (v->fd < 0) {
		v->fd = memfd_create("mt-decode-xol-view", MFD_CLOEXEC);
		if (v->fd < 0)
			return -MT_E_IO;
		snprintf(v->path, sizeof(v->path), "/proc/self/fd/%d", v->fd);
	}
	memset(page, 0x90, sizeof(page));
	for (k = XOL_SLOT; k + XOL_SLOT <= sizeof(page); k += XOL_SLOT)
		memcpy(page + k, raw, len);
	if (pwrite(v->fd, page, sizeof(page), (off_t)v->end) !=
	    (ssize_t)sizeof(page))
		return -MT_E_IO;
	p = realloc(v->pages, (v->npages + 1) * sizeof(*p));
	if (p == NULL)
		return -MT_E_NOMEM;
	v->pages = p;
	p = &v->pages[v->npages++];
	memcpy(p->raw, raw, len);
	p->len = len;
	p->off = v->end;
	v->end += sizeof(page);
	*off = p->off;
	return 0;
}

struct pt_image *
xol_view_image(struct xol_view *v, const struct image_set *is,
    const struct pt_image *base, uint32_t pid, uint64_t slot,
    const uint8_t *raw, size_t len)
{
	struct pt_image *img;
	uint64_t lo, hi, off;

	if (len == 0 || len > sizeof(v->pages->raw) ||
	    image_set_xol_page(is, pid, slot, &lo, &hi) < 0 ||
	    hi - lo > XOL_PAGE || xol_page(v, raw, len, &off) < 0)
		return NULL;
	img = pt_image_alloc(NULL);
	if (img == NULL)
		return NULL;
	/* The page's section replaces the NOPs (libipt shrinks what it
	 * overlaps). */
	if (pt_image_copy(img, base) < 0 || pt_image_add_file(img, v->path,
	    off, hi - lo, NULL, lo) < 0) {
		pt_image_free(img);
		return NULL;
	}
	if (v->img != NULL)
		pt_image_free(v->img);
	v->img = img;
	return img;
}
