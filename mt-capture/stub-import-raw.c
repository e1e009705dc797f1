/* SPDX-License-Identifier: MIT */
/* Placeholder until import-raw lands (issue 3). */
#include <stdio.h>

#include "cmds.h"

int
cmd_import_raw(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "mt-capture: '%s' is not implemented yet\n", argv[0]);
	return 1;
}
