/* SPDX-License-Identifier: MIT */
/*
 * mt-capture's subcommands.  main.c dispatches on argv[1] and calls one of
 * these with the remaining arguments (argv[0] is "mt-capture NAME", which
 * getopt's messages begin with).
 * Each returns the process exit status: 0, 1 (runtime or data error) or
 * 2 (usage).
 */
#ifndef MT_CAPTURE_CMDS_H
#define MT_CAPTURE_CMDS_H

int cmd_run(int argc, char **argv);		/* run [opts] -- CMD ... */
int cmd_attach(int argc, char **argv);		/* attach [opts] -p PID */
int cmd_import_raw(int argc, char **argv);	/* import-raw --pt FILE ... */
int cmd_import_perf(int argc, char **argv);	/* import-perf perf.data */
int cmd_export_perf(int argc, char **argv);	/* export-perf SNAP */

#endif /* MT_CAPTURE_CMDS_H */
