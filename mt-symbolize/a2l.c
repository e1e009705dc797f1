/* SPDX-License-Identifier: MIT */
/*
 * addr2line-compatible output (a2l.h).  The layout follows binutils
 * addr2line 2.40: with -a "0x" and 16 hex digits; per frame, innermost
 * first, the function name (-f) then "FILE:LINE", "??" for an unknown
 * name or file, "?" for an unknown line, "??:0" for an address nothing is
 * known of; -p joins them with " at " and " (inlined by) ".  Addresses
 * are parsed like bfd_scan_vma(..., 16): optional 0x, hex digits up to the
 * first other character, 0 when there are none.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2l.h"
#include "demangle.h"
#include "dso.h"
#include "err.h"

static uint64_t
scan_hex(const char *s)
{
	uint64_t v = 0;

	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; isxdigit((unsigned char)*s); s++)
		v = v << 4 | (uint64_t)(isdigit((unsigned char)*s) ? *s - '0' :
		    (tolower((unsigned char)*s) - 'a' + 10));
	return v;
}

static void
put_name(const struct sym_a2l_opts *o, const char *name, FILE *out)
{
	char *d = NULL;

	if (name == NULL || name[0] == '\0') {
		fputs("??", out);
		return;
	}
	if (o->demangle)
		d = sym_demangle(name, 0);
	fputs(d ? d : name, out);
	free(d);
}

static void
put_loc(const struct sym_a2l_opts *o, const struct sym_frame *f,
    uint32_t disc, FILE *out)
{
	const char *file = f->file;

	if (file != NULL && o->basenames && strrchr(file, '/') != NULL)
		file = strrchr(file, '/') + 1;
	fprintf(out, "%s:", file ? file : "??");
	if (f->line == 0)
		fputs("?", out);
	else if (disc != 0)
		fprintf(out, "%u (discriminator %u)", f->line, disc);
	else
		fprintf(out, "%u", f->line);
	fputc('\n', out);
}

static void
translate(const struct sym_a2l_opts *o, struct sym_dso *d, uint64_t pc,
    FILE *out)
{
	struct sym_frame fr[SYM_MAX_FRAMES];
	uint32_t disc;
	int n = 0, i;

	if (o->addresses)
		fprintf(out, "0x%016llx%s", (unsigned long long)pc,
		    o->pretty ? ": " : "\n");
	if (d != NULL)
		n = sym_dso_lookup(d, pc, o->elfutils ? SYM_RULES_ELFUTILS :
		    SYM_RULES_A2L, fr, SYM_MAX_FRAMES);
	if (n == 0) {
		if (o->functions)
			fputs(o->pretty ? "?? " : "??\n", out);
		fputs("??:0\n", out);
		return;
	}
	/* addr2line keeps the innermost line's discriminator for all. */
	disc = fr[n - 1].disc;
	for (i = n - 1; i >= 0; i--) {
		if (o->functions) {
			put_name(o, fr[i].name, out);
			fputs(o->pretty ? " at " : "\n", out);
		}
		put_loc(o, &fr[i], disc, out);
		if (!o->inlines)
			break;
		if (o->pretty && i > 0)
			fputs(" (inlined by) ", out);
	}
}

int
sym_a2l_run(const struct sym_a2l_opts *o, const struct sym_dso_opts *dopts,
    char *const *addrs, int naddrs, FILE *in, FILE *out,
    char *msg, size_t msglen)
{
	struct sym_dso *d = NULL;
	char *line = NULL;
	size_t cap = 0;
	int rc, i;

	rc = sym_dso_open_file(&d, o->exe, dopts);
	if (rc < 0)
		return rc;
	if (!sym_dso_ok(d)) {
		snprintf(msg, msglen, "%s", sym_dso_warning(d));
		sym_dso_free(d);
		return -MT_E_NOTFOUND;
	}
	if (sym_dso_warning(d) != NULL && o->warn != NULL)
		o->warn(o->warn_ctx, sym_dso_warning(d));
	if (naddrs > 0) {
		for (i = 0; i < naddrs; i++)
			translate(o, d, scan_hex(addrs[i]), out);
	} else {
		while (getline(&line, &cap, in) > 0) {
			translate(o, d, scan_hex(line), out);
			if (fflush(out) != 0)
				break;
		}
		free(line);
	}
	sym_dso_free(d);
	errno = 0;
	if (fflush(out) != 0 || ferror(out)) {
		if (errno == 0)
			errno = EIO;	/* failed in an earlier flush */
		return -MT_E_IO;
	}
	return 0;
}
