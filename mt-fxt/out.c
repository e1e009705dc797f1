/* SPDX-License-Identifier: MIT */
/* The table of output formats (out.h). */
#include <string.h>

#include "out.h"

static const struct out_ops *const formats[] = {
	&out_fxt_ops,
	&out_json_ops,
	&out_folded_ops,
	&out_summary_ops,
};

const struct out_ops *
out_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(formats[i]->name, name) == 0)
			return formats[i];
	return NULL;
}
