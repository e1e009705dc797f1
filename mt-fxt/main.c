/* SPDX-License-Identifier: MIT */
/*
 * mt-fxt: read the symbolized event stream (docs/formats/events.md) and
 * write the call-stack timeline as a Fuchsia trace for Perfetto (default),
 * Chrome JSON, folded stacks or a text summary (docs/man/mt-fxt.1).
 * This file only parses options, opens the input and reports; run.c does
 * the work.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "numarg.h"
#include "opts.h"
#include "outfile.h"
#include "out.h"
#include "progress.h"
#include "run.h"
#include "version.h"

enum {
	OPT_FUNCTION = 256, OPT_BETWEEN, OPT_TID, OPT_TIME, OPT_AROUND,
	OPT_MAX_DEPTH, OPT_MIN_DURATION, OPT_MAX_SIZE, OPT_STRING_SLOTS,
	OPT_THREAD_SLOTS,
};

static const struct option longopts[] = {
	{ "format", required_argument, NULL, 'F' },
	{ "force", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "level", required_argument, NULL, 'l' },
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "version", no_argument, NULL, 'V' },
	{ "function", required_argument, NULL, OPT_FUNCTION },
	{ "between", required_argument, NULL, OPT_BETWEEN },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "around-trigger", required_argument, NULL, OPT_AROUND },
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
	{ "min-duration", required_argument, NULL, OPT_MIN_DURATION },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "string-slots", required_argument, NULL, OPT_STRING_SLOTS },
	{ "thread-slots", required_argument, NULL, OPT_THREAD_SLOTS },
	{ NULL, 0, NULL, 0 },
};

static const char synopsis[] =
    "usage: mt-fxt [-fhqV] [-F fxt|json|folded|summary] [-l level] "
    "[-o outfile]\n"
    "              [--function name] [--between start,stop] [--tid list]\n"
    "              [--time from,to] [--around-trigger before,after]\n"
    "              [--max-depth n] [--min-duration ns] [--max-size bytes]"
    " [file]\n";

static void
usage(FILE *f)
{
	fputs(synopsis, f);
	if (f == stderr)
		return;
	fputs("\n"
	    "  -F, --format F       fxt (default), json, folded or summary\n"
	    "  -f, --force          write binary output to a terminal\n"
	    "  -h, --help           this text\n"
	    "  -l, --level N        gzip level 0-9 (default: 2 for *.gz "
	    "and FXT on stdout)\n"
	    "  -o, --output FILE    output file, '-' standard output "
	    "(default)\n"
	    "  -q, --quiet          no warnings, no progress line\n"
	    "  -V, --version        print the version\n"
	    "  --function NAME      summary: latency histogram of NAME\n"
	    "  --between START,STOP keep calls of START up to the next call "
	    "of STOP\n"
	    "  --tid LIST           keep these thread ids (comma-separated)\n"
	    "  --time FROM,TO       keep [FROM, TO] ns from the window start\n"
	    "  --around-trigger B,A keep B ns before to A ns after the first "
	    "trigger hit\n"
	    "  --max-depth N        fold frames deeper than N into their "
	    "ancestor\n"
	    "  --min-duration NS    drop frames shorter than NS (suffix ns, "
	    "us, ms, s)\n"
	    "  --max-size BYTES     split FXT output above BYTES (suffix k, "
	    "m, g)\n"
	    "  --string-slots N, --thread-slots N\n"
	    "                       fewer FXT table slots (tests of slot "
	    "reuse)\n", f);
}

/* say(3) without <err.h>, which -Icommon shadows with common/err.h. */
static void __attribute__((format(printf, 1, 2)))
say(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("mt-fxt: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Progress lines go to the terminal on stderr (run.c formats them). */
static void
show(const char *text, size_t n)
{
	ssize_t w;

	while (n > 0 && (w = write(STDERR_FILENO, text, n)) > 0) {
		text += w;
		n -= (size_t)w;
	}
}

static int
bad(const char *opt, const char *arg)
{
	say("bad %s argument '%s'", opt, arg);
	fputs(synopsis, stderr);
	return 2;
}

static int
parse_args(struct fxt_opts *o, int argc, char **argv)
{
	int max_size_given = 0;
	uint64_t x;
	char *tok;
	int c;

	while ((c = getopt_long(argc, argv, "F:fhl:o:qV", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'F':
			if ((o->format = out_find(optarg)) == NULL)
				return bad("--format", optarg);
			break;
		case 'f': o->force = 1; break;
		case 'h': usage(stdout); exit(0);
		case 'l':
			if (numarg(optarg, &x, NUMARG_PLAIN) < 0 || x > 9)
				return bad("--level", optarg);
			o->level = (int)x;
			break;
		case 'o': o->out = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'V': printf("mt-fxt %s\n", MT_VERSION); exit(0);
		case OPT_FUNCTION: o->function = optarg; break;
		case OPT_BETWEEN:
			tok = strchr(optarg, ',');
			if (tok == NULL || tok == optarg || tok[1] == '\0')
				return bad("--between", optarg);
			*tok = '\0';
			o->between_start = optarg;
			o->between_stop = tok + 1;
			break;
		case OPT_TID:
			if (numarg_list(optarg, o->tids, FXT_MAX_TIDS,
			    &o->ntids) < 0)
				return bad("--tid", optarg);
			break;
		case OPT_TIME:
			if (numarg_pair(optarg, &o->time_from, &o->time_to,
			    NUMARG_TIME) < 0 ||
			    o->time_from > o->time_to)
				return bad("--time", optarg);
			o->have_time = 1;
			break;
		case OPT_AROUND:
			if (numarg_pair(optarg, &o->around_before,
			    &o->around_after, NUMARG_TIME) < 0)
				return bad("--around-trigger", optarg);
			o->have_around = 1;
			break;
		case OPT_MAX_DEPTH:
			if (numarg(optarg, &x, NUMARG_PLAIN) < 0 || x == 0 ||
			    x > UINT32_MAX)
				return bad("--max-depth", optarg);
			o->max_depth = (uint32_t)x;
			break;
		case OPT_MIN_DURATION:
			if (numarg(optarg, &o->min_duration, NUMARG_TIME) < 0)
				return bad("--min-duration", optarg);
			break;
		case OPT_MAX_SIZE:
			if (numarg(optarg, &o->max_size, NUMARG_SIZE) < 0 ||
			    o->max_size < 4096)
				return bad("--max-size", optarg);
			max_size_given = 1;
			break;
		case OPT_STRING_SLOTS:
		case OPT_THREAD_SLOTS:
			if (numarg(optarg, &x, NUMARG_PLAIN) < 0 ||
			    x > (c == OPT_STRING_SLOTS ? 32767 : 255) ||
			    (c == OPT_STRING_SLOTS && x < 40) || x == 0)
				return bad(c == OPT_STRING_SLOTS ?
				    "--string-slots" : "--thread-slots", optarg);
			if (c == OPT_STRING_SLOTS)
				o->string_slots = (uint32_t)x;
			else
				o->thread_slots = (uint32_t)x;
			break;
		default:
			fputs(synopsis, stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		say("unexpected argument '%s'", argv[optind + 1]);
		fputs(synopsis, stderr);
		return 2;
	}
	if (o->function != NULL && o->format != &out_summary_ops) {
		say("--function goes with -F summary");
		fputs(synopsis, stderr);
		return 2;
	}
	/* Only FXT output splits, and only a file it can rename. */
	if (max_size_given && (o->format->split == NULL ||
	    strcmp(o->out, "-") == 0)) {
		say(o->format->split == NULL ? "--max-size goes with -F fxt" :
		    "--max-size needs -o FILE (standard output is not split)");
		fputs(synopsis, stderr);
		return 2;
	}
	if (argc - optind == 1)
		o->in = argv[optind];
	return 0;
}

/* Refuse what would be a mistake: binary to a terminal, output = input. */
static int
check_files(const struct fxt_opts *o)
{
	struct stat si, so;
	int to_tty = strcmp(o->out, "-") == 0 && isatty(STDOUT_FILENO);

	if (to_tty && !o->force && (o->format->binary || o->level > 0)) {
		say("refusing to write binary data to a terminal "
		    "(use -o FILE, or -f)");
		return 2;
	}
	if (strcmp(o->in, "-") != 0 && strcmp(o->out, "-") != 0 &&
	    stat(o->in, &si) == 0 && stat(o->out, &so) == 0 &&
	    si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
		say("'%s' is both the input and the output", o->in);
		return 2;
	}
	return 0;
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
	struct fxt_opts o = {
		.in = "-", .out = "-",
		.format = &out_fxt_ops,
		.level = -1,
		.max_size = 1ull << 30,
		.progress_ms = -1,
	};
	struct fxt_stats st;
	char msg[1024];
	int fd = STDIN_FILENO, rc;

	signal(SIGPIPE, SIG_DFL);	/* a reader gone early: die quietly */
	mt_outfile_trap(on_signal);
	if ((rc = parse_args(&o, argc, argv)) != 0 ||
	    (rc = check_files(&o)) != 0)
		return rc;
	if (mt_progress_wanted(o.quiet, o.in)) {
		o.progress_ms = (int)mt_progress_interval_ms();
		o.show = show;
	}
	if (strcmp(o.in, "-") != 0 && (fd = open(o.in, O_RDONLY)) < 0) {
		say("cannot open '%s': %s", o.in, strerror(errno));
		return 1;
	}
	rc = fxt_run(&o, fd, &st, msg, sizeof(msg));
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc == -MT_E_ISDIR) {
		/* Only the output is opened through mt_outfile_open. */
		say("'%s' is a directory (-o names the output file)", o.out);
		return 1;
	}
	if (rc < 0) {
		say("%s", msg);
		return 1;
	}
	if (fxt_unmatched(&o, &st, msg, sizeof(msg)))
		say("%s%s", msg, st.written ? "" : ": the output is empty");
	if (!o.quiet && st.errors)
		say("%" PRIu64 " decode errors in the stream (shown as "
		    "[decode error] frames)", st.errors);
	if (!o.quiet && st.files > 1)
		say("the trace was split into %" PRIu64 " files (--max-size)",
		    st.files);
	/* 1: --tid or --between matched nothing, and nothing is left */
	return msg[0] != '\0' && st.written == 0;
}
