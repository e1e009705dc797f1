/* SPDX-License-Identifier: MIT */
/*
 * mt-symbolize: reads the event stream (docs/formats/events.md) and writes
 * it back with every address resolved to functions, source lines and
 * inlined frames (file, fn and loc records, @LOC fields).  With -e FILE it
 * acts as binutils addr2line instead.  This file only wires: options, then
 * sym_stream_run() or sym_a2l_run().
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a2l.h"
#include "dso.h"
#include "bidcache.h"
#include "err.h"
#include "outfile.h"
#include "progress.h"
#include "stream.h"
#include "version.h"

#define MAX_DIRS 64
#define MAX_MAPS 64

enum { OPT_NO_DEMANGLE = 256, OPT_PERF_MAP, OPT_KALLSYMS, OPT_ELFUTILS,
    OPT_NO_DEBUG_CACHE, OPT_NO_INLINE, OPT_NO_LINES };

/* MT_DEBUG_CACHE_MIB's default: the inflated copies' room in the cache. */
#define DEBUG_CACHE_MIB 512

static const struct option longopts[] = {
	{ "addresses", no_argument, NULL, 'a' },
	{ "demangle", no_argument, NULL, 'C' },
	{ "debug-dir", required_argument, NULL, 'd' },
	{ "exe", required_argument, NULL, 'e' },
	{ "functions", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "inlines", no_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "pretty-print", no_argument, NULL, 'p' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "root", required_argument, NULL, 'r' },
	{ "basenames", no_argument, NULL, 's' },
	{ "version", no_argument, NULL, 'V' },
	{ "no-debug-cache", no_argument, NULL, OPT_NO_DEBUG_CACHE },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "no-lines", no_argument, NULL, OPT_NO_LINES },
	{ "perf-map", required_argument, NULL, OPT_PERF_MAP },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "elfutils", no_argument, NULL, OPT_ELFUTILS },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: mt-symbolize [-hqV] [--no-debug-cache] [--no-demangle] "
	    "[--no-inline]\n"
	    "                    [--no-lines] [-d dir] [--kallsyms file] "
	    "[--perf-map file]\n"
	    "                    [-o outfile] [-r root] [file]\n"
	    "       mt-symbolize -e file [-aCfips] [--elfutils] "
	    "[--no-debug-cache] [-d dir]\n"
	    "                    [address ...]\n");
	if (f != stdout)
		return;
	fprintf(f, "\n"
	    "Resolve the addresses of an mt event stream (file, or stdin):\n"
	    "  -d, --debug-dir DIR  also look for binaries and debug files in\n"
	    "                       DIR (build-id layout); repeatable\n"
	    "      --kallsyms FILE  kernel symbols (/proc/kallsyms format)\n"
	    "      --no-debug-cache neither read nor keep inflated debug\n"
	    "                       files in the mt cache (also\n"
	    "                       MT_DEBUG_CACHE_MIB=0; default room %d MiB)\n"
	    "      --no-demangle    keep mangled names\n"
	    "      --no-inline      no inlined frames: one frame per address,\n"
	    "                       named by its symbol, with the address's\n"
	    "                       own line (perf script's srcline)\n"
	    "      --no-lines       no file:line; with --no-inline, symbols\n"
	    "                       only: the DWARF is not read at all\n"
	    "      --perf-map FILE  JIT symbols (perf-PID.map); repeatable\n"
	    "  -o, --output FILE    write here instead of stdout\n"
	    "  -q, --quiet          no warnings and no progress line (shown\n"
	    "                       only when stderr is a terminal and the\n"
	    "                       input is not a pipe)\n"
	    "  -r, --root DIR       look for recorded paths under DIR first\n"
	    "                       (a copy of the target's files)\n"
	    "addr2line mode: addresses as operands or one per line on "
	    "stdin\n"
	    "  -e, --exe FILE       the ELF file the addresses are in\n"
	    "  -a, --addresses      print each address first\n"
	    "  -C, --demangle       demangle names\n"
	    "  -f, --functions      print function names\n"
	    "  -i, --inlines        print the inlined frames too\n"
	    "  -p, --pretty-print   one line per address\n"
	    "  -s, --basenames      base names of source files only\n"
	    "      --elfutils       names and file names as eu-addr2line "
	    "finds them\n"
	    "  -h, --help           this text\n"
	    "  -V, --version        print the version\n", DEBUG_CACHE_MIB);
}

/* warnx(3) without <err.h>, which -Icommon shadows with common/err.h. */
static void __attribute__((format(printf, 1, 2)))
say(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("mt-symbolize: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void
warn_cb(void *ctx, const char *msg)
{
	if (!*(const int *)ctx)
		say("warning: %s", msg);
}

/* A progress line to the terminal; one that cannot be written is lost. */
static void
show_cb(void *ctx, const char *text, size_t len)
{
	ssize_t n;

	(void)ctx;
	while (len > 0) {
		n = write(STDERR_FILENO, text, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		text += n;
		len -= (size_t)n;
	}
}

/*
 * Options of one mode given in the other would be silently ignored: say
 * which.  Returns 0, or -1 after saying so.
 */
static int
mixed_modes(const struct sym_a2l_opts *a, const struct sym_stream_opts *s)
{
	if (a->exe != NULL && (strcmp(s->out, "-") != 0 ||
	    s->kallsyms != NULL || s->nperf_maps > 0 || !s->demangle ||
	    s->no_lines || s->no_inline)) {
		say("-o, --kallsyms, --perf-map, --no-demangle, --no-inline "
		    "and --no-lines do not go with -e");
		return -1;
	}
	if (a->exe == NULL && (a->addresses || a->demangle ||
	    a->functions || a->inlines || a->pretty || a->basenames ||
	    a->elfutils)) {
		say("-a, -C, -f, -i, -p, -s and --elfutils need -e");
		return -1;
	}
	return 0;
}

/*
 * The room of the cache's inflated debug files, from MT_DEBUG_CACHE_MIB
 * (MiB, 0: none) into *@max in bytes.  Returns 0, or -1 for a value that
 * is not a number of MiB up to 2^32.
 */
static int
debug_cache_max(uint64_t *max)
{
	const char *e = getenv("MT_DEBUG_CACHE_MIB");
	unsigned long long v;
	char *end;

	*max = (uint64_t)DEBUG_CACHE_MIB << 20;
	if (e == NULL || *e == '\0')
		return 0;
	errno = 0;
	v = strtoull(e, &end, 10);
	if (*e < '0' || *e > '9' || *end != '\0' || errno != 0 ||
	    v > (1ull << 32))
		return -1;
	*max = (uint64_t)v << 20;
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
	const char *dirs[MAX_DIRS + 1], *maps[MAX_MAPS];
	char cache[4096];
	struct sym_a2l_opts a = { .exe = NULL, .warn = warn_cb };
	struct sym_stream_opts s = { .demangle = 1, .out = "-", .in = "-",
	    .progress_ms = -1, .show = show_cb };
	struct sym_dso_opts d = { .debug_dirs = dirs };
	char msg[512];
	int c, rc, quiet = 0, no_debug_cache = 0, have_cache;

	signal(SIGPIPE, SIG_DFL);	/* a reader gone early: die quietly */
	mt_outfile_trap(on_signal);
	while ((c = getopt_long(argc, argv, "aCd:e:fhio:pqr:sV", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'a': a.addresses = 1; break;
		case 'C': a.demangle = 1; break;
		case 'd':
			if (d.ndebug_dirs == MAX_DIRS) {
				say("too many --debug-dir options");
				return 2;
			}
			dirs[d.ndebug_dirs++] = optarg;
			break;
		case 'e': a.exe = optarg; break;
		case 'f': a.functions = 1; break;
		case 'h': usage(stdout); return 0;
		case 'i': a.inlines = 1; break;
		case 'o': s.out = optarg; break;
		case 'p': a.pretty = 1; break;
		case 'q': quiet = 1; break;
		case 'r': d.root = optarg; break;
		case 's': a.basenames = 1; break;
		case 'V': printf("mt-symbolize %s\n", MT_VERSION); return 0;
		case OPT_NO_DEMANGLE: s.demangle = 0; break;
		case OPT_PERF_MAP:
			if (s.nperf_maps == MAX_MAPS) {
				say("too many --perf-map options");
				return 2;
			}
			maps[s.nperf_maps++] = optarg;
			break;
		case OPT_KALLSYMS: s.kallsyms = optarg; break;
		case OPT_ELFUTILS: a.elfutils = 1; break;
		case OPT_NO_DEBUG_CACHE: no_debug_cache = 1; break;
		case OPT_NO_INLINE: s.no_inline = d.no_inline = 1; break;
		case OPT_NO_LINES: s.no_lines = d.no_lines = 1; break;
		default: usage(stderr); return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (mixed_modes(&a, &s) != 0) {
		usage(stderr);
		return 2;
	}
	if (debug_cache_max(&d.copy_cache_max) < 0) {
		say("MT_DEBUG_CACHE_MIB must be a number of MiB, not '%s'",
		    getenv("MT_DEBUG_CACHE_MIB"));
		return 2;
	}
	/* The cache mt-decode fills with the ELF files bundled in
	 * snapshots also keeps the inflated debug files (dbgcopy.h). */
	have_cache = mt_bidcache_dir(cache, sizeof(cache)) == 0;
	if (have_cache && !no_debug_cache && d.copy_cache_max > 0)
		d.copy_cache = cache;
	if (a.exe != NULL) {
		a.warn_ctx = &quiet;
		rc = sym_a2l_run(&a, &d, argv, argc, stdin, stdout, msg,
		    sizeof(msg));
		if (rc == -MT_E_NOTFOUND)
			say("%s", msg);
		else if (rc == -MT_E_IO)
			say("cannot write '-': %s", strerror(errno));
		else if (rc < 0)
			say("%s", mt_strerror(rc));
		return rc < 0;
	}
	if (argc > 1) {
		say("unexpected argument '%s'", argv[1]);
		usage(stderr);
		return 2;
	}
	if (argc == 1)
		s.in = argv[0];
	/* After the --debug-dirs: the cache of bundled files. */
	if (have_cache)
		dirs[d.ndebug_dirs++] = cache;
	s.perf_maps = maps;
	s.warn = warn_cb;
	s.warn_ctx = &quiet;
	if (mt_progress_wanted(quiet, s.in))
		s.progress_ms = (int)mt_progress_interval_ms();
	rc = sym_stream_run(&s, &d, msg, sizeof(msg));
	if (rc < 0) {
		say("%s", msg);
		return 1;
	}
	return 0;
}
