/* SPDX-License-Identifier: MIT */
/* Placeholder until perf.data interop lands (issue 9). */
#include <stdio.h>

#include "cmds.h"

int
cmd_import_perf(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "mt-capture: '%s' is not implemented yet\n", argv[0]);
	return 1;
}

int
cmd_export_perf(int argc, char **argv)
{
	return cmd_import_perf(argc, argv);
}
