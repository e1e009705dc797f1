/* SPDX-License-Identifier: MIT */
/* Array growth shared by mt-fxt's modules (see grow.h). */
#include <stdlib.h>

#include "err.h"
#include "grow.h"

int
fxt_grow_to(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > UINT32_MAX / 2)
			return -MT_E_NOMEM;
		ncap *= 2;
	}
	if ((size_t)ncap > SIZE_MAX / elem)
		return -MT_E_NOMEM;
	np = realloc(*p, (size_t)ncap * elem);
	if (np == NULL)
		return -MT_E_NOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}
