/* SPDX-License-Identifier: MIT */
/*
 * Views of an image set (image.h, imageset.h): a worker's own section
 * cache and images.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <intel-pt.h>

#include "buf.h"
#include "elffile.h"
#include "epochs.h"
#include "err.h"
#include "fde.h"
#include "ild.h"
#include "image.h"
#include "snap.h"
#include "imageset.h"

/*
 * A view (image.h): its own cache holding the set's sections in the order
 * they were added, so with the same isids, and an image per process made
 * as the set's was.
 */
struct image_view {
	struct image_set *is;
	struct pt_image_section_cache *isc;
	uint32_t *pids;
	struct pt_image **img;
	struct epochs *ep;	/* img[i] over time, built on first use */
	uint8_t *ep_built;
	size_t nimg;
};

/* Room for one more epochs entry in @v (zeroed: not built). */
static int
view_grow_epochs(struct image_view *v)
{
	struct epochs *ep = grow(v->ep, v->nimg, sizeof(*ep));
	uint8_t *b;

	if (ep == NULL)
		return -MT_E_NOMEM;
	v->ep = ep;
	memset(&v->ep[v->nimg], 0, sizeof(*ep));
	b = grow(v->ep_built, v->nimg, sizeof(*b));
	if (b == NULL)
		return -MT_E_NOMEM;
	v->ep_built = b;
	v->ep_built[v->nimg] = 0;
	return 0;
}

int
image_view_new(struct image_view **out, struct image_set *is)
{
	struct image_view *v = calloc(1, sizeof(*v));
	size_t i;
	int isid;

	*out = NULL;
	if (v == NULL)
		return -MT_E_NOMEM;
	v->is = is;
	v->isc = pt_iscache_alloc(NULL);
	if (v->isc == NULL) {
		free(v);
		return -MT_E_NOMEM;
	}
	for (i = 0; i < is->nsecs; i++) {
		isid = pt_iscache_add_file(v->isc, is->secs[i].file,
		    is->secs[i].off, is->secs[i].size, is->secs[i].vaddr);
		if (isid != (int)i + 1) {
			/* The file changed since the set was made. */
			image_view_free(v);
			return isid == -pte_nomem ? -MT_E_NOMEM : -MT_E_IPT;
		}
	}
	*out = v;
	return 0;
}

struct pt_image *
image_view_image(struct image_view *v, uint32_t pid)
{
	const struct image_proc *p;
	struct pt_image *img, **ni;
	uint32_t *np;
	size_t i;

	for (i = 0; i < v->nimg; i++)
		if (v->pids[i] == pid)
			return v->img[i];
	p = image_proc(v->is, pid);
	if (p == NULL)
		return NULL;
	np = grow(v->pids, v->nimg, sizeof(*np));
	if (np == NULL)
		return NULL;
	v->pids = np;
	ni = grow(v->img, v->nimg, sizeof(*ni));
	if (ni == NULL)
		return NULL;
	v->img = ni;
	if (view_grow_epochs(v) < 0)
		return NULL;
	img = pt_image_alloc(NULL);
	if (img == NULL)
		return NULL;
	/* Refused sections are refused again: same result as the set's. */
	for (i = 0; i < p->nisids; i++)
		(void)pt_image_add_cached(img, v->isc, p->isids[i], NULL);
	v->pids[v->nimg] = pid;
	v->img[v->nimg++] = img;
	return img;
}

struct pt_image *
image_view_image_at(struct image_view *v, uint32_t pid, uint64_t time,
    uint64_t *next)
{
	struct pt_image *img = image_view_image(v, pid), *e;
	size_t i;

	*next = UINT64_MAX;
	if (img == NULL)
		return NULL;
	for (i = 0; v->pids[i] != pid; i++)
		;
	if (!v->ep_built[i]) {
		if (image_epochs(v->is, image_proc(v->is, pid), v->isc,
		    &v->ep[i]) < 0)
			return NULL;
		v->ep_built[i] = 1;
	}
	if (epochs_at(&v->ep[i], time, next, &e) < 0)
		return NULL;
	return e != NULL ? e : img;
}

void
image_view_free(struct image_view *v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < v->nimg; i++) {
		pt_image_free(v->img[i]);
		epochs_release(&v->ep[i]);
	}
	free(v->ep);
	free(v->ep_built);
	pt_iscache_free(v->isc);
	free(v->pids);
	free(v->img);
	free(v);
}

