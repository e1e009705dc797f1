/* SPDX-License-Identifier: MIT */
/*
 * Demangling (demangle.h).  libiberty's cplus_demangle() with DMGL_AUTO
 * tries Rust (legacy "_ZN...17h<hash>E" and v0 "_R...") before the GNU v3
 * C++ ABI, so one call covers both; DMGL_PARAMS | DMGL_ANSI are the flags
 * addr2line -C passes.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "demangle.h"
#include "events.h"

char *
sym_demangle_ocaml(const char *raw)
{
	const char *p;
	char *out, *o;
	int hi, lo;

	/* Module names are capitalised: "caml" + upper case letter. */
	if (strncmp(raw, "caml", 4) != 0 || !isupper((unsigned char)raw[4]))
		return NULL;
	out = malloc(strlen(raw) + 1);
	if (out == NULL)
		return NULL;
	for (p = raw + 4, o = out; *p != '\0'; p++) {
		if (p[0] == '_' && p[1] == '_' && p[2] != '\0') {
			*o++ = '.';
			p++;
		} else if (p[0] == '$' &&
		    (hi = mt_ev_hexval((unsigned char)p[1])) >= 0 &&
		    (lo = mt_ev_hexval((unsigned char)p[2])) >= 0) {
			*o++ = (char)(hi << 4 | lo);
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

char *
sym_demangle(const char *raw, int ocaml)
{
	const char *at;
	char *base, *d, *out;
	size_t blen;

	if (raw[0] == 'c')
		return ocaml ? sym_demangle_ocaml(raw) : NULL;
	if (raw[0] != '_')
		return NULL;
	at = strchr(raw, '@');
	if (at == NULL)
		return cplus_demangle(raw, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	blen = (size_t)(at - raw);
	base = strndup(raw, blen);
	if (base == NULL)
		return NULL;
	d = cplus_demangle(base, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	free(base);
	if (d == NULL)
		return NULL;
	out = malloc(strlen(d) + strlen(at) + 1);
	if (out != NULL) {
		strcpy(out, d);
		strcat(out, at);
	}
	free(d);
	return out;
}
