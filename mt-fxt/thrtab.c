/* SPDX-License-Identifier: MIT */
/* Per-thread blocks indexed by thread index (see thrtab.h). */
#include <stdlib.h>

#include "thrtab.h"

void *
thrtab_add(struct thrtab *t, uint32_t index, size_t size, int *fresh)
{
	*fresh = 0;
	if (index >= t->n) {
		uint32_t n = t->n ? t->n : 8, i;
		void **np;

		while (n <= index && n < UINT32_MAX / 2)
			n *= 2;
		if (n <= index)
			return NULL;
		np = realloc(t->p, (size_t)n * sizeof(*np));
		if (np == NULL)
			return NULL;
		for (i = t->n; i < n; i++)
			np[i] = NULL;
		t->p = np;
		t->n = n;
	}
	if (t->p[index] == NULL) {
		if ((t->p[index] = calloc(1, size)) == NULL)
			return NULL;
		*fresh = 1;
	}
	return t->p[index];
}

void
thrtab_free(struct thrtab *t, void (*fini)(void *block))
{
	uint32_t i;

	for (i = 0; i < t->n; i++) {
		if (t->p[i] == NULL)
			continue;
		if (fini != NULL)
			fini(t->p[i]);
		free(t->p[i]);
	}
	free(t->p);
	t->p = NULL;
	t->n = 0;
}
