/* SPDX-License-Identifier: MIT */
/* Placeholder until the capture subcommands land (issue 6). */
#include <stdio.h>

#include "cmds.h"

int
cmd_run(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "mt-capture: '%s' is not implemented yet\n", argv[0]);
	return 1;
}

int
cmd_attach(int argc, char **argv)
{
	return cmd_run(argc, argv);
}
