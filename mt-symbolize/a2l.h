/* SPDX-License-Identifier: MIT */
/*
 * addr2line-compatible mode: "mt-symbolize -e FILE [-afipsC] [addr...]"
 * prints what binutils addr2line prints for the same flags, using the
 * same lookups as the stream mode (dso.h) with addr2line's naming rules.
 */
#ifndef MT_SYM_A2L_H
#define MT_SYM_A2L_H

#include <stdio.h>

struct sym_dso_opts;

/* Flags of addr2line that the mode supports. */
struct sym_a2l_opts {
	const char *exe;	/* -e FILE */
	int addresses;		/* -a: print the address first */
	int functions;		/* -f: print function names */
	int inlines;		/* -i: print inlined frames */
	int pretty;		/* -p: one line per address */
	int basenames;		/* -s: strip directories */
	int demangle;		/* -C */
	int elfutils;		/* --elfutils: eu-addr2line's names and
				 * file names instead of binutils' */
	void (*warn)(void *ctx, const char *msg);	/* a file that is
				 * usable but damaged (cut short, bad
				 * .eh_frame); may be NULL */
	void *warn_ctx;		/* passed to warn */
};

/*
 * Translates the @naddrs hex addresses in @addrs, or when @naddrs is 0
 * each line of @in (output flushed after each, as addr2line does), to
 * @out.  Returns 0.
 * Returns -MT_E_NOTFOUND when o->exe cannot be read, with the reason in
 * @msg (@msglen bytes); nothing is printed then.
 * Returns -MT_E_IO (errno set) when writing fails, -MT_E_NOMEM.
 */
int sym_a2l_run(const struct sym_a2l_opts *o, const struct sym_dso_opts *d,
    char *const *addrs, int naddrs, FILE *in, FILE *out, char *msg,
    size_t msglen);

#endif /* MT_SYM_A2L_H */
