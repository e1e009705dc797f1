/* SPDX-License-Identifier: MIT */
/*
 * The import-perf and export-perf subcommands: options, files, messages.
 * The work is in perf-import.c and perf-export.c; this file only wires
 * them to the command line (docs/perf.md, docs/man/mt-capture.1).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"
#include "err.h"
#include "outfile.h"
#include "perf.h"
#include "perfdata.h"
#include "snap.h"

/*
 * err(3)-style messages with the program name.  (<err.h> is out of reach:
 * -Icommon makes it name common/err.h.)
 */
static void __attribute__((format(printf, 2, 0)))
vmsg(int errnum, const char *fmt, va_list ap)
{
	fprintf(stderr, "mt-capture: ");
	vfprintf(stderr, fmt, ap);
	if (errnum != 0)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
}

static void __attribute__((format(printf, 1, 2)))
warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(0, fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 1, 2)))
warn(const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vmsg(e, fmt, ap);
	va_end(ap);
}

static void
warn_cb(void *arg, const char *msg)
{
	warnx("'%s': %s", (const char *)arg, msg);
}

/*
 * Open @out ("-": stdout) through common/outfile: a temporary name renamed
 * by close_out() when complete, a device written in place.  Mode 0600:
 * both files hold memory contents.  @flags: MT_OUTFILE_SYNC for a
 * snapshot (import-perf), 0 for perf.data made from one (export-perf).
 * Returns the fd, or -1 once it said why.
 */
static int
open_out(const char *out, struct mt_outfile *of, unsigned flags)
{
	int rc = mt_outfile_open(of, out, 0600, flags);

	if (rc == -MT_E_ISDIR)
		warnx("'%s' is a directory (-o names the output file)", out);
	else if (rc < 0)
		warn("cannot create '%s'", out);
	if (rc < 0) {
		mt_outfile_abort(of);
		return -1;
	}
	return of->fd;
}

/* Rename into place (rc == 0) or remove the temporary file. */
static int
close_out(struct mt_outfile *of, const char *out, int rc)
{
	if (rc != 0) {
		mt_outfile_abort(of);
		return rc;
	}
	if (mt_outfile_commit(of) < 0) {
		warn("cannot write '%s'", out);
		return 1;
	}
	return 0;
}

/*
 * After a failed export: remove the files directory export-perf created
 * (it holds only the code files it wrote, no subdirectory).
 */
static void
remove_files_dir(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			(void)unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	(void)rmdir(dir);
}

static int
same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return strcmp(a, "-") != 0 && strcmp(b, "-") != 0 &&
	    stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void
import_usage(FILE *fp)
{
	fprintf(fp,
	    "usage: mt-capture import-perf [-fh] [--debug-dir dir] "
	    "[--no-bundle] [-o snapshot] [perf.data]\n");
	if (fp == stderr)
		return;
	fprintf(fp,
	    "Convert a perf.data recorded with 'perf record -e intel_pt//'\n"
	    "(file or pipe mode; '-' or no operand reads stdin) into an mt\n"
	    "snapshot.\n"
	    "  -o, --output FILE  snapshot to write (default: INPUT.snap;\n"
	    "                     stdout when reading stdin; '-' stdout)\n"
	    "  --debug-dir DIR    perf's build-id cache (default ~/.debug)\n"
	    "  --no-bundle        do not copy ELF files into the snapshot\n"
	    "  -f, --force        write binary data to a terminal\n"
	    "  -h, --help         this help\n");
}

int
cmd_import_perf(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "no-bundle", no_argument, NULL, 'B' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	struct perf_import_opts o = { .bundle = 1, .warn = warn_cb };
	const char *in = "-", *out = NULL, *home = getenv("HOME");
	char debug_dir[PATH_MAX], flat_dir[PATH_MAX], *defout = NULL;
	struct mt_outfile of;
	struct mt_pd pd;
	struct mt_pd_diag pdd;
	struct perf_diag d;
	struct mt_snap s;
	int c, force = 0, fd, ofd, rc;

	debug_dir[0] = 0;
	if (home != NULL)
		snprintf(debug_dir, sizeof(debug_dir), "%s/.debug", home);
	o.debug_dir = debug_dir[0] ? debug_dir : NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "fho:", lopts, NULL)) != -1) {
		switch (c) {
		case 'B':
			o.bundle = 0;
			break;
		case 'D':
			o.debug_dir = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'h':
			import_usage(stdout);
			return 0;
		case 'o':
			out = optarg;
			break;
		default:
			import_usage(stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		warnx("unexpected argument '%s'", argv[optind + 1]);
		import_usage(stderr);
		return 2;
	}
	if (argc - optind == 1)
		in = argv[optind];
	if (out == NULL) {
		if (strcmp(in, "-") == 0) {
			out = "-";
		} else {
			defout = malloc(strlen(in) + 6);
			if (defout == NULL) {
				warnx("out of memory");
				return 1;
			}
			sprintf(defout, "%s.snap", in);
			out = defout;
		}
	}
	if (same_file(in, out)) {
		warnx("refusing to overwrite the input '%s'", in);
		free(defout);
		return 2;
	}
	if (strcmp(out, "-") == 0 && !force && isatty(STDOUT_FILENO)) {
		warnx("refusing to write a snapshot to a terminal (use -f)");
		free(defout);
		return 2;
	}
	o.source = in;
	o.warn_arg = (void *)(uintptr_t)in;
	/* Flat code files are bundled from the input's directory only. */
	if (strcmp(in, "-") == 0 ? getcwd(flat_dir, sizeof(flat_dir)) != NULL :
	    realpath(in, flat_dir) != NULL) {
		char *slash = strrchr(flat_dir, '/');

		if (strcmp(in, "-") != 0 && slash != NULL)
			*(slash == flat_dir ? slash + 1 : slash) = 0;
		o.flat_dir = flat_dir;
	}

	fd = strcmp(in, "-") == 0 ? STDIN_FILENO : open(in, O_RDONLY);
	if (fd < 0) {
		warn("cannot open '%s'", in);
		free(defout);
		return 1;
	}
	mt_pd_init(&pd);
	mt_snap_init(&s);
	rc = mt_pd_read_fd(&pd, fd, 0, &pdd);
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc < 0) {
		if (rc == -MT_E_IO || rc == -MT_E_NOMEM || rc == -MT_E_LIMIT)
			warnx("cannot read '%s': %s", in, pdd.msg[0] ?
			    pdd.msg : mt_strerror(rc));
		else
			warnx("'%s': %s at offset %llu", in, pdd.msg,
			    (unsigned long long)pdd.off);
		rc = 1;
		goto done;
	}
	rc = perf_import(&o, &pd, &s, &d);
	if (rc < 0) {
		if (d.has_off)
			warnx("'%s': %s at offset %llu", in, d.msg,
			    (unsigned long long)d.off);
		else
			warnx("'%s': %s", in, d.msg[0] ? d.msg :
			    mt_strerror(rc));
		rc = 1;
		goto done;
	}
	ofd = open_out(out, &of, MT_OUTFILE_SYNC);
	if (ofd < 0) {
		rc = 1;
		goto done;
	}
	rc = mt_snap_write_fd(&s, ofd);
	if (rc < 0) {
		warnx("cannot write '%s': %s", out, rc == -MT_E_IO ?
		    strerror(errno) : mt_strerror(rc));
		rc = 1;
	}
	rc = close_out(&of, out, rc);
done:
	mt_snap_release(&s);
	mt_pd_release(&pd);
	free(defout);
	return rc;
}

static void
export_usage(FILE *fp)
{
	fprintf(fp,
	    "usage: mt-capture export-perf [-fh] [--files-dir dir] "
	    "[--guest-as-host] [--pipe]\n"
	    "                              [--timeless] [-o perf.data] "
	    "[snapshot]\n");
	if (fp == stderr)
		return;
	fprintf(fp,
	    "Write a snapshot ('-' or no operand: stdin) as a perf.data that\n"
	    "'perf script --itrace=...' decodes with perf's own decoder.\n"
	    "  -o, --output FILE  perf.data to write (default perf.data; '-'\n"
	    "                     stdout)\n"
	    "  --files-dir DIR    where the code bytes carried by the snapshot\n"
	    "                     are written for perf (default OUTPUT.files,\n"
	    "                     or ./perf.data.files for stdout or a\n"
	    "                     device); removed when the export fails\n"
	    "  --guest-as-host    clear PIP.NR in the PT data, so perf decodes\n"
	    "                     a guest (VMX non-root) trace as host code\n"
	    "  --pipe             pipe-mode perf.data (feed it to perf through\n"
	    "                     stdin: perf script -i - < FILE)\n"
	    "  --timeless         no time conversion: perf decodes without\n"
	    "                     timestamps\n"
	    "  -f, --force        write binary data to a terminal\n"
	    "  -h, --help         this help\n");
}

int
cmd_export_perf(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "files-dir", required_argument, NULL, 'F' },
		{ "force", no_argument, NULL, 'f' },
		{ "guest-as-host", no_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		{ "pipe", no_argument, NULL, 'P' },
		{ "timeless", no_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	struct perf_export_opts o = { .warn = warn_cb };
	const char *in = "-", *out = "perf.data", *files = NULL;
	char files_abs[PATH_MAX + 64], cwd[PATH_MAX];
	struct mt_outfile of;
	struct mt_snap_diag sd;
	struct perf_diag d;
	struct mt_snap s;
	struct stat st;
	int c, force = 0, fd, ofd, rc, n, dev, files_new;

	optind = 1;
	while ((c = getopt_long(argc, argv, "fho:", lopts, NULL)) != -1) {
		switch (c) {
		case 'F':
			files = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'G':
			o.pip_as_host = 1;
			break;
		case 'h':
			export_usage(stdout);
			return 0;
		case 'o':
			out = optarg;
			break;
		case 'P':
			o.pipe = 1;
			break;
		case 'T':
			o.timeless = 1;
			break;
		default:
			export_usage(stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		warnx("unexpected argument '%s'", argv[optind + 1]);
		export_usage(stderr);
		return 2;
	}
	if (argc - optind == 1)
		in = argv[optind];
	if (same_file(in, out)) {
		warnx("refusing to overwrite the input '%s'", in);
		return 2;
	}
	if (strcmp(out, "-") == 0 && !force && isatty(STDOUT_FILENO)) {
		warnx("refusing to write perf.data to a terminal (use -f)");
		return 2;
	}
	/* perf opens the files by the paths in the MMAP2 records: make
	 * them absolute. */
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		warn("getcwd");
		return 1;
	}
	/* Never beside a device or FIFO (/dev/full.files): as for stdout. */
	dev = strcmp(out, "-") == 0 || (stat(out, &st) == 0 &&
	    !S_ISREG(st.st_mode));
	if (files == NULL)
		n = snprintf(files_abs, sizeof(files_abs), "%s%s%s.files",
		    dev || out[0] != '/' ? cwd : "",
		    dev || out[0] != '/' ? "/" : "",
		    dev ? "perf.data" : out);
	else
		n = snprintf(files_abs, sizeof(files_abs), "%s%s%s",
		    files[0] == '/' ? "" : cwd, files[0] == '/' ? "" : "/",
		    files);
	if (n < 0 || (size_t)n >= sizeof(files_abs)) {
		warnx("path of the files directory too long");
		return 2;
	}
	o.files_dir = files_abs;
	o.warn_arg = (void *)(uintptr_t)in;
	files_new = stat(files_abs, &st) != 0;

	fd = strcmp(in, "-") == 0 ? STDIN_FILENO : open(in, O_RDONLY);
	if (fd < 0) {
		warn("cannot open '%s'", in);
		return 1;
	}
	mt_snap_init(&s);
	rc = mt_snap_read_fd(&s, fd, &sd);
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc < 0) {
		warnx("'%s': %s", in, sd.msg);
		mt_snap_release(&s);
		return 1;
	}
	ofd = open_out(out, &of, 0);
	if (ofd < 0) {
		mt_snap_release(&s);
		return 1;
	}
	rc = perf_export(&o, &s, ofd, &d);
	if (rc < 0) {
		if (d.has_off)
			warnx("'%s': %s at offset %llu", in, d.msg,
			    (unsigned long long)d.off);
		else
			warnx("'%s': %s", strcmp(d.msg, "") == 0 ||
			    rc != -MT_E_IO ? in : out, d.msg[0] ? d.msg :
			    mt_strerror(rc));
		rc = 1;
	}
	rc = close_out(&of, out, rc);
	if (rc != 0 && files_new)
		remove_files_dir(files_abs);
	mt_snap_release(&s);
	return rc;
}
