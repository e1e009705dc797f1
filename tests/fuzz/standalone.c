/* SPDX-License-Identifier: MIT */
/*
 * main() for a fuzz target built without libFuzzer: runs the target once
 * on each file named on the command line and prints "ok FILE".  A crash or
 * a failed invariant aborts, so the exit status tells a regression test
 * whether an old crash input is still handled cleanly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static uint8_t *
read_file(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0;

	if (fp == NULL)
		return NULL;
	for (;;) {
		size_t r;

		if (len == cap) {
			uint8_t *nb;

			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				fclose(fp);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + len, 1, cap - len, fp);
		len += r;
		if (r == 0)
			break;
	}
	if (ferror(fp)) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	*n = len;
	return buf;
}

int
main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s file ...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		size_t n = 0;
		uint8_t *p = read_file(argv[i], &n);

		if (p == NULL) {
			fprintf(stderr, "%s: cannot read '%s': %s\n", argv[0],
			    argv[i], strerror(errno));
			return 1;
		}
		LLVMFuzzerTestOneInput(p, n);
		free(p);
		printf("ok %s\n", argv[i]);
	}
	return 0;
}
