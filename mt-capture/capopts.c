/* SPDX-License-Identifier: MIT */
/*
 * Options of `mt-capture run` and `mt-capture attach` (docs/man/
 * mt-capture.1): parsed into a struct mt_cap_opts, then handed to
 * mt_cap_main().
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "backend.h"
#include "cmds.h"
#include "perfenv.h"
#include "ptattr.h"
#include "ring.h"
#include "trigger.h"

#define DEFAULT_OUTPUT "trace.snap"
#define DEFAULT_GT_MAX (1ull << 30)	/* --ground-truth-max: 1 GiB */

enum {
	OPT_MAX_SNAPSHOTS = 256, OPT_TIMING, OPT_FILTER, OPT_BUNDLE,
	OPT_NO_BUNDLE, OPT_READY_FD, OPT_START_AT, OPT_GROUND_TRUTH,
	OPT_CLOCK, OPT_GROUND_TRUTH_MAX,
};

static const struct option longopts[] = {
	{ "all-threads", no_argument, NULL, 'a' },
	{ "backend", required_argument, NULL, 'b' },
	{ "bundle", no_argument, NULL, OPT_BUNDLE },
	{ "clock", required_argument, NULL, OPT_CLOCK },
	{ "duration", required_argument, NULL, 'd' },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "ground-truth", required_argument, NULL, OPT_GROUND_TRUTH },
	{ "ground-truth-max", required_argument, NULL, OPT_GROUND_TRUTH_MAX },
	{ "help", no_argument, NULL, 'h' },
	{ "kernel", no_argument, NULL, 'k' },
	{ "max-snapshots", required_argument, NULL, OPT_MAX_SNAPSHOTS },
	{ "multi-snapshot", no_argument, NULL, 'm' },
	{ "no-bundle", no_argument, NULL, OPT_NO_BUNDLE },
	{ "output", required_argument, NULL, 'o' },
	{ "pid", required_argument, NULL, 'p' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "ready-fd", required_argument, NULL, OPT_READY_FD },
	{ "snapshot-size", required_argument, NULL, 's' },
	{ "start-at", required_argument, NULL, OPT_START_AT },
	{ "timing", required_argument, NULL, OPT_TIMING },
	{ "trigger", required_argument, NULL, 't' },
	{ "verbose", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *fp, int attach, int full)
{
	if (attach)
		fprintf(fp, "usage: mt-capture attach [-akmqv] [-b backend] "
		    "[-d seconds] [-o file] [-s bytes]\n"
		    "                         [-t trigger] [options] "
		    "-p pid[,pid...]\n");
	else
		fprintf(fp, "usage: mt-capture run [-akmqv] [-b backend] "
		    "[-d seconds] [-o file] [-s bytes]\n"
		    "                      [-t trigger] [options] -- "
		    "command [argument ...]\n");
	if (!full)
		return;
	fprintf(fp,
	    "Record Intel PT (or its software stand-in) and write a "
	    "snapshot.\n"
	    "  -o, --output FILE        snapshot file (default "
	    DEFAULT_OUTPUT "; - for stdout)\n"
	    "  -t, --trigger SEL        snapshot when SEL runs: [DSO:]SYMBOL,"
	    " addr:0xADDR,\n"
	    "                           FILE:LINE (repeatable); hw:SEL: a "
	    "hardware\n"
	    "                           breakpoint instead of a uprobe\n"
	    "  -m, --multi-snapshot     a snapshot at every trigger hit "
	    "(FILE-1.snap...; not -o -)\n"
	    "      --max-snapshots N    stop after N snapshots\n"
	    "  -s, --snapshot-size B    ring bytes per buffer (K/M/G; "
	    "default 4M privileged, 256K otherwise)\n"
	    "      --timing SPEC        low|normal|high and/or cyc=,"
	    "cyc_thresh=,mtc=,mtc_period=,\n"
	    "                           noretcomp=,psb_period=,tsc= "
	    "(default normal)\n"
	    "  -k, --kernel             trace the kernel too (root or "
	    "CAP_PERFMON)\n"
	    "      --filter SEL         trace only [DSO:]SYMBOL or DSO "
	    "(live PT, up to 4)\n"
	    "  -a, --all-threads        every thread, present and future "
	    "(default: main thread),\n"
	    "                           and child processes (fork; pt and "
	    "emulate, not qemu;\n"
	    "                           pt follows their main threads "
	    "anyway)\n"
	    "      --bundle, --no-bundle  copy mapped ELF files into the "
	    "snapshot (default on)\n"
	    "  -d, --duration SECONDS   snapshot after SECONDS and stop\n"
	    "      --ready-fd N         write one byte to fd N once "
	    "recording runs\n"
	    "  -b, --backend NAME       pt, emulate, qemu (run only) or auto "
	    "(default: pt if\n"
	    "                           the intel_pt PMU exists, else qemu "
	    "for run, else emulate)\n"
	    "      --start-at SYMBOL    emulate: run natively until SYMBOL\n"
	    "      --ground-truth FILE  emulate, qemu: write every executed "
	    "branch to FILE\n"
	    "      --ground-truth-max B at most B bytes of it (K/M/G; default "
	    "1G), then no more\n"
	    "      --clock virtual|host qemu: one tick per instruction "
	    "(default), or host time\n"
	    "  -q, --quiet              no progress messages\n"
	    "  -v, --verbose            say which kernel mechanisms are used "
	    "(e.g. for triggers)\n"
	    "  -p, --pid PID[,PID...]   attach: the processes to record\n"
	    "Environment: MT_SYSFS_ROOT replaces / in front of "
	    "/sys/bus/event_source.\n"
	    "Exit status: 0 a snapshot was written (also when the target "
	    "failed or was killed\n"
	    "by a signal: stderr says how it ended), 1 an error, 2 a usage "
	    "error.\n");
}

/* "4M", "256K", "65536": bytes.  Returns 0 or -1. */
static int
parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long n;
	int shift = 0;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (end == s || errno != 0 || *s == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end == 'i' && shift)
		end++;
	if ((*end == 'b' || *end == 'B') && (end[1] == '\0'))
		end++;
	if (*end != '\0' || n == 0 || n > (1ull << 36) >> shift)
		return -1;
	*v = (uint64_t)n << shift;
	return 0;
}

static int
parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return end == s || *end != '\0' || errno != 0 || *v > max ||
	    *s == '-' ? -1 : 0;
}

static int
parse_pids(struct mt_cap_opts *o, const char *arg)
{
	const char *p = arg;

	/* PID[,PID]...: no empty element, not even a last one ("1,") */
	for (;;) {
		char *end = NULL;
		long v;
		size_t i;

		errno = 0;
		v = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : 0;
		if (v == 0 || errno != 0 || v > 0x3fffffff ||
		    (*end != ',' && *end != '\0')) {
			warnx("bad pid list '%s'", arg);
			return -1;
		}
		for (i = 0; i < o->npids; i++)
			if (o->pids[i] == (pid_t)v) {
				warnx("pid %ld given twice", v);
				return -1;
			}
		if (o->npids == MT_CAP_MAX_PIDS) {
			warnx("too many pids (at most %d)", MT_CAP_MAX_PIDS);
			return -1;
		}
		o->pids[o->npids++] = (pid_t)v;
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
}

static int
parse(struct mt_cap_opts *o, int attach, int argc, char **argv)
{
	char msg[256];
	unsigned long u;
	char *end;
	int ch, size_given = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, attach ? "+ab:d:hkmo:p:qs:t:v" :
	    "+ab:d:hkmo:qs:t:v", longopts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			o->all_threads = 1;
			break;
		case 'b':
			if (strcmp(optarg, "pt") == 0)
				o->backend = MT_CAP_BK_PT;
			else if (strcmp(optarg, "emulate") == 0)
				o->backend = MT_CAP_BK_EMULATE;
			else if (strcmp(optarg, "qemu") == 0)
				o->backend = MT_CAP_BK_QEMU;
			else if (strcmp(optarg, "auto") == 0)
				o->backend = MT_CAP_BK_AUTO;
			else {
				warnx("unknown backend '%s' (pt, emulate, "
				    "qemu, auto)", optarg);
				return -1;
			}
			break;
		case 'd':
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (end == optarg || *end != '\0' || errno != 0 ||
			    !(o->duration > 0) || o->duration > 1e7) {
				warnx("bad --duration '%s'", optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout, attach, 1);
			exit(0);
		case 'k':
			o->kernel = 1;
			break;
		case 'm':
			o->multi_snapshot = 1;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'p':
			if (parse_pids(o, optarg) < 0)
				return -1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 's':
			if (parse_size(optarg, &o->snapshot_size) < 0) {
				warnx("bad --snapshot-size '%s'", optarg);
				return -1;
			}
			size_given = 1;
			break;
		case 't':
			if (o->ntriggers == MT_CAP_MAX_TRIGGERS) {
				warnx("too many triggers (at most %d)",
				    MT_CAP_MAX_TRIGGERS);
				return -1;
			}
			if (mt_trig_check(optarg, msg, sizeof(msg)) < 0) {
				warnx("--trigger '%s': %s", optarg, msg);
				return -1;
			}
			o->triggers[o->ntriggers++] = optarg;
			break;
		case OPT_BUNDLE:
			o->bundle = 1;
			break;
		case OPT_NO_BUNDLE:
			o->bundle = 0;
			break;
		case OPT_FILTER:
			if (o->nfilters == MT_CAP_MAX_FILTERS) {
				warnx("too many filters (at most %d)",
				    MT_CAP_MAX_FILTERS);
				return -1;
			}
			o->filters[o->nfilters++] = optarg;
			break;
		case OPT_GROUND_TRUTH:
			o->ground_truth = optarg;
			break;
		case OPT_GROUND_TRUTH_MAX:
			if (parse_size(optarg, &o->ground_truth_max) < 0) {
				warnx("bad --ground-truth-max '%s'", optarg);
				return -1;
			}
			break;
		case OPT_CLOCK:
			if (strcmp(optarg, "virtual") == 0)
				o->host_clock = 0;
			else if (strcmp(optarg, "host") == 0)
				o->host_clock = 1;
			else {
				warnx("unknown --clock '%s' (virtual, host)",
				    optarg);
				return -1;
			}
			break;
		case OPT_MAX_SNAPSHOTS:
			if (parse_uint(optarg, 1000000, &u) < 0 || u == 0) {
				warnx("bad --max-snapshots '%s'", optarg);
				return -1;
			}
			o->max_snapshots = (unsigned)u;
			break;
		case OPT_READY_FD:
			if (parse_uint(optarg, 1 << 20, &u) < 0) {
				warnx("bad --ready-fd '%s'", optarg);
				return -1;
			}
			o->ready_fd = (int)u;
			break;
		case OPT_START_AT:
			o->start_at = optarg;
			break;
		case OPT_TIMING:
			if (mt_ptattr_parse_timing(optarg, &o->timing,
			    &o->terms, msg, sizeof(msg)) < 0) {
				warnx("%s", msg);
				return -1;
			}
			break;
		default:
			return -1;
		}
	}
	if (attach && o->backend == MT_CAP_BK_QEMU) {
		warnx("QEMU cannot attach to a running process: use "
		    "--backend emulate (ptrace) with attach, or start the "
		    "program with 'mt-capture run --backend qemu'");
		return -1;
	}
	if (attach) {
		if (o->npids == 0 || optind != argc) {
			warnx(o->npids == 0 ? "attach needs -p PID" :
			    "unexpected argument '%s'", argv[optind]);
			return -1;
		}
	} else {
		if (optind >= argc) {
			warnx("run needs a command after --");
			return -1;
		}
		o->argv = argv + optind;
	}
	if (!size_given) {
		struct mt_perfenv pe;

		/* perf's default: 4 MiB privileged, else 256 KiB. */
		mt_perfenv_read(&pe, "");
		o->snapshot_size = mt_perfenv_privileged(&pe) ? 4u << 20 :
		    256u << 10;
	}
	{
		uint64_t r = mt_ring_round_size(o->snapshot_size, 4096);

		if (r != o->snapshot_size && size_given && !o->quiet)
			warnx("--snapshot-size rounded up to %llu bytes (a "
			    "power of two pages)", (unsigned long long)r);
		o->snapshot_size = r;
	}
	if (o->max_snapshots > 0 && !o->multi_snapshot)
		o->multi_snapshot = 1;
	if (o->multi_snapshot && o->ntriggers == 0) {
		warnx("--multi-snapshot needs --trigger");
		return -1;
	}
	if (o->multi_snapshot && strcmp(o->output, "-") == 0) {
		warnx("--multi-snapshot writes one file per snapshot: give -o "
		    "FILE, not -o -");
		return -1;
	}
	if (strcmp(o->output, "-") == 0 && isatty(STDOUT_FILENO)) {
		warnx("not writing a binary snapshot to a terminal (use -o "
		    "FILE or a pipe)");
		return -1;
	}
	if (o->ready_fd >= 0 && o->ready_fd <= 2) {
		warnx("--ready-fd must not be 0, 1 or 2");
		return -1;
	}
	return 0;
}

static int
cmd_capture(int argc, char **argv, int attach)
{
	struct mt_cap_opts o = {
		.attach = attach,
		.output = DEFAULT_OUTPUT,
		.timing = MT_CAP_TIMING_NORMAL,
		.bundle = 1,
		.ready_fd = -1,
		.ground_truth_max = DEFAULT_GT_MAX,
		.backend = MT_CAP_BK_AUTO,
		.sysfs_root = "",
	};
	const char *root = getenv("MT_SYSFS_ROOT");

	if (root != NULL)
		o.sysfs_root = root;
	if (parse(&o, attach, argc, argv) < 0) {
		usage(stderr, attach, 0);
		return 2;
	}
	return mt_cap_main(&o);
}

int
cmd_run(int argc, char **argv)
{
	return cmd_capture(argc, argv, 0);
}

int
cmd_attach(int argc, char **argv)
{
	return cmd_capture(argc, argv, 1);
}
