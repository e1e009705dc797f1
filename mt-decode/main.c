/* SPDX-License-Identifier: MIT */
/*
 * mt-decode: read a snapshot (docs/formats/snapshot.md), decode its Intel
 * PT buffers with libipt and write the event stream
 * (docs/formats/events.md).  This file parses options, opens the input and
 * the output, and calls decode_run() or info_print(); see docs/decode.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <intel-pt.h>

#include "cache.h"
#include "decode.h"
#include "err.h"
#include "events.h"
#include "info.h"
#include "outfile.h"
#include "snap.h"
#include "version.h"


struct main_opts {
	const char *in;		/* snapshot path, "-" for stdin */
	const char *out;	/* output path, "-" for stdout */
	int info;		/* --info: describe, do not decode */
	int stats;		/* --stats: counters to stderr */
	int force;		/* -f: read a snapshot from a terminal */
	int quiet;		/* -q: no warnings, no progress */
	struct decode_opts d;
};

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: mt-decode [-afhiqsV] [--no-cache] [-d debug-dir] "
	    "[-j jobs] [-o outfile] [-r root] [snapshot]\n");
	if (fp != stdout)
		return;
	fprintf(fp,
	    "  -a, --all-branches   also report branches inside a function\n"
	    "  -d, --debug-dir DIR  build-id cache: DIR/.build-id/xx/rest\n"
	    "  -f, --force          read a snapshot from a terminal\n"
	    "  -h, --help           this text\n"
	    "  -i, --info           describe the snapshot instead\n"
	    "  -j, --jobs N         decoding threads (default: online CPUs,\n"
	    "                       one per 8 MiB of PT at most)\n"
	    "  --no-cache           decode with libipt's block decoder only\n"
	    "  -o, --output FILE    write the events to FILE (default stdout)\n"
	    "  -q, --quiet          no warnings, no progress line\n"
	    "  -r, --root DIR       look for recorded paths under DIR\n"
	    "  -s, --stats          print decode counters to stderr\n"
	    "  -V, --version        print the version\n"
	    "A missing snapshot operand or '-' reads standard input.\n");
}

static void
warn_cb(void *arg, const char *msg)
{
	const struct main_opts *o = arg;

	if (!o->quiet)
		fprintf(stderr, "mt-decode: warning: %s\n", msg);
}

static int
parse_args(struct main_opts *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "all-branches", no_argument, NULL, 'a' },
		{ "debug-dir", required_argument, NULL, 'd' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "info", no_argument, NULL, 'i' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "no-cache", no_argument, NULL, 'C' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "root", required_argument, NULL, 'r' },
		{ "stats", no_argument, NULL, 's' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	long jobs;
	int c;

	while ((c = getopt_long(argc, argv, "ad:fhij:o:qr:sV", lo, NULL)) != -1) {
		switch (c) {
		case 'C': o->d.no_cache = 1; break;	/* cfg.h */
		case 'a': o->d.all_branches = 1; break;
		case 'd': o->d.img.debug_dir = optarg; break;
		case 'f': o->force = 1; break;
		case 'h': usage(stdout); exit(0);
		case 'i': o->info = 1; break;
		case 'j':	/* parallel decode, mt-decode/parallel.c */
			errno = 0;
			jobs = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    jobs < 1 || jobs > 1024) {
				fprintf(stderr, "mt-decode: bad --jobs argument "
				    "'%s' (1 to 1024)\n", optarg);
				usage(stderr);
				return 2;
			}
			o->d.jobs = (int)jobs;
			o->d.jobs_auto = 0;
			break;
		case 'o': o->out = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'r': o->d.img.root = optarg; break;
		case 's': o->stats = 1; break;
		case 'V': printf("mt-decode %s\n", MT_VERSION); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "mt-decode: unexpected argument '%s'\n",
		    argv[optind + 1]);
		usage(stderr);
		return 2;
	}
	if (optind < argc)
		o->in = argv[optind];
	return 0;
}

static int
run(struct main_opts *o, struct mt_snap *s)
{
	struct decode_stats st;
	struct decode_diag d = { 0, NULL };
	struct decode_progress prog;
	struct mt_outfile of;
	struct mt_evw *w = NULL;
	int rc;

	if (o->info)
		return info_print(stdout, s, o->in) < 0 ? 1 : 0;
	if (decode_cache_bundled(s) == -MT_E_IO && !o->quiet)
		fprintf(stderr, "mt-decode: warning: cannot store the bundled "
		    "files in the build-id cache: %s\n", strerror(errno));
	/* A temporary name renamed when complete; devices in place. */
	if ((rc = mt_outfile_open(&of, o->out, 0666, 0)) < 0) {
		if (rc == -MT_E_ISDIR)
			fprintf(stderr, "mt-decode: '%s' is a directory (-o "
			    "names the output file)\n", o->out);
		else
			fprintf(stderr, "mt-decode: cannot create '%s': %s\n",
			    o->out, strerror(errno));
		mt_outfile_abort(&of);
		return 1;
	}
	memset(&st, 0, sizeof(st));
	/* Progress only for a person watching: stderr a terminal, no -q. */
	if (!o->quiet && isatty(STDERR_FILENO)) {
		decode_progress_start(&prog, s, STDERR_FILENO);
		o->d.progress = &prog;
	}
	o->d.out_fd = of.fd;	/* -j writes the buffers' streams here */
	o->d.out_private = of.tmp != NULL;
	rc = mt_evw_new(&w, of.fd);
	if (rc >= 0)
		rc = decode_run(&o->d, s, w, &st, &d);
	if (rc >= 0)
		rc = mt_evw_free(w);
	else
		mt_evw_free(w);
	if (rc >= 0)
		rc = mt_outfile_commit(&of);	/* removes it on failure */
	else
		mt_outfile_abort(&of);
	if (o->d.progress != NULL)
		decode_progress_end(&prog);
	if (rc < 0) {
		if (d.msg != NULL)
			fprintf(stderr, "mt-decode: '%s': corrupt sideband at "
			    "offset %" PRIu64 ": %s\n", o->in, d.off, d.msg);
		else if (rc == -MT_E_IO)
			fprintf(stderr, "mt-decode: cannot write '%s': %s\n",
			    o->out, strerror(errno));
		else
			fprintf(stderr, "mt-decode: '%s': %s\n", o->in,
			    mt_strerror(rc));
		return 1;
	}
	if (o->stats)
		info_print_stats(stderr, &st);
	return 0;
}

/*
 * Read the snapshot on @fd: a file is mapped and its trace and code are
 * used in place, each chunk's pages unmapped once checked (no copy:
 * only the pages used again count in the peak RSS, bench/RESULTS.md);
 * a pipe is read.
 */
static int
read_snapshot(int fd, struct mt_snap *s, struct mt_snap_diag *d)
{
	return mt_snap_map_fd(s, fd, d);
}

/* SIGINT, SIGTERM, SIGHUP: remove the unfinished output, die by the signal */
static void
on_signal(int sig)
{
	mt_outfile_unlink_pending();
	signal(sig, SIG_DFL);
	raise(sig);
}

int
main(int argc, char **argv)
{
	struct main_opts o = { .in = "-", .out = "-" };
	struct mt_snap s;
	struct mt_snap_diag d;
	int fd, rc;

	/* A reader that exits early ends us quietly, even if our parent
	 * ignored SIGPIPE (we would otherwise report EPIPE). */
	signal(SIGPIPE, SIG_DFL);
	mt_outfile_trap(on_signal);
	o.d.warn = warn_cb;
	o.d.warn_arg = &o;
	/*
	 * The snapshot's large payloads are allocated, copied and freed
	 * once each; serving them from the heap instead of fresh mmaps
	 * saves a page fault per 4 KiB, which costs more than the copy.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	o.d.jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);	/* -j default */
	o.d.jobs_auto = 1;
	if (parse_args(&o, argc, argv) != 0)
		return 2;
	o.d.source = o.in;
	if (strcmp(o.in, "-") != 0)
		o.d.img.snap_path = o.in;
	if (strcmp(o.in, "-") == 0) {
		fd = STDIN_FILENO;
		if (isatty(fd) && !o.force) {
			fprintf(stderr, "mt-decode: standard input is a "
			    "terminal (use -f to read it anyway)\n");
			return 2;
		}
	} else if ((fd = open(o.in, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "mt-decode: cannot open '%s': %s\n", o.in,
		    strerror(errno));
		return 1;
	}
	mt_snap_init(&s);
	rc = read_snapshot(fd, &s, &d);
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc < 0) {
		fprintf(stderr, "mt-decode: '%s': %s\n", o.in, d.msg);
		mt_snap_release(&s);
		return 1;
	}
	rc = run(&o, &s);
	mt_snap_release(&s);
	return rc;
}
