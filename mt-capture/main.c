/* SPDX-License-Identifier: MIT */
/*
 * mt-capture: record Intel PT (or its software stand-in) from a process and
 * write a snapshot; also import and export other trace files.  This file
 * only dispatches to the subcommands in cmds.h.
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "version.h"


static const struct {
	const char *name;
	int (*fn)(int, char **);
} cmds[] = {
	{ "attach", cmd_attach },
	{ "export-perf", cmd_export_perf },
	{ "import-perf", cmd_import_perf },
	{ "import-raw", cmd_import_raw },
	{ "run", cmd_run },
};

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: mt-capture run [options] -- command [argument ...]\n"
	    "       mt-capture attach [options] -p pid[,pid...]\n"
	    "       mt-capture import-raw --pt file [options] -o snapshot\n"
	    "       mt-capture import-perf perf.data [-o snapshot]\n"
	    "       mt-capture export-perf snapshot [-o perf.data]\n"
	    "'mt-capture SUBCOMMAND --help' describes each.\n");
}

int
main(int argc, char **argv)
{
	static char name[32];
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("mt-capture %s\n", MT_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[1], cmds[i].name) == 0) {
			/* getopt names argv[0] in its messages: "mt-capture
			 * run: unrecognized option '--bogus'" */
			snprintf(name, sizeof(name), "mt-capture %s",
			    cmds[i].name);
			argv[1] = name;
			return cmds[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "mt-capture: unknown subcommand '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
