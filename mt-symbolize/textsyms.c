/* SPDX-License-Identifier: MIT */
/*
 * perf map and kallsyms readers (textsyms.h).  Lines are parsed with
 * strtoull and an end-pointer check; a table is sorted once after
 * loading and searched by binary search.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "textsyms.h"

struct sym_textsyms {
	struct sym_textsym *v;	/* sorted by start; owned */
	size_t n, cap;		/* used and allocated entries */
};

static int
cmp_sym(const void *a, const void *b)
{
	const struct sym_textsym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int
add(struct sym_textsyms *t, uint64_t start, uint64_t end, const char *name,
    size_t namelen)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct sym_textsym *v = realloc(t->v, cap * sizeof(*v));

		if (v == NULL)
			return -MT_E_NOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n].start = start;
	t->v[t->n].end = end;
	t->v[t->n].name = strndup(name, namelen);
	if (t->v[t->n].name == NULL)
		return -MT_E_NOMEM;
	t->n++;
	return 0;
}

static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static int
hex_field(const char **pp, uint64_t *v)
{
	const char *p = skip_ws(*pp);
	char *end;

	if (*p == '\0' || *p == '-')
		return -1;
	errno = 0;
	*v = strtoull(p, &end, 16);
	if (errno != 0 || end == p || strchr(" \t\r\n", *end) == NULL)
		return -1;
	*pp = end;
	return 0;
}

static size_t
trim_len(const char *p)
{
	size_t n = strlen(p);

	while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r' ||
	    p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	return n;
}

static int
parse_line(struct sym_textsyms *t, const char *line, int kallsyms,
    const char **why)
{
	const char *p = line, *name;
	uint64_t a, size;
	size_t len;

	if (hex_field(&p, &a) != 0) {
		*why = "bad address";
		return -MT_E_SYNTAX;
	}
	if (!kallsyms) {
		if (hex_field(&p, &size) != 0 ||
		    (size ? size : 1) > UINT64_MAX - a) {
			*why = "bad size";
			return -MT_E_SYNTAX;
		}
		name = skip_ws(p);
		len = trim_len(name);
		if (len == 0) {
			*why = "missing name";
			return -MT_E_SYNTAX;
		}
		return add(t, a, a + (size ? size : 1), name, len);
	}
	p = skip_ws(p);
	/* (strchr() finds the terminating NUL too: "" matches) */
	if (strchr(" \t\r\n", p[0]) != NULL ||
	    (p[1] != '\0' && strchr(" \t\r\n", p[1]) == NULL)) {
		*why = "bad symbol type";
		return -MT_E_SYNTAX;
	}
	if (strchr("tTwW", p[0]) == NULL || a == 0)
		return 0;
	name = skip_ws(p + 1);
	len = strcspn(name, " \t\r\n");
	if (len == 0) {
		*why = "missing name";
		return -MT_E_SYNTAX;
	}
	return add(t, a, 0, name, len);
}

int
sym_textsyms_load(struct sym_textsyms **tp, const char *path, int kallsyms,
    char *msg, size_t msglen)
{
	struct sym_textsyms *t;
	FILE *f;
	char *line = NULL;
	size_t cap = 0, lineno = 0, i;
	const char *why = NULL;
	unsigned long long off = 0;
	ssize_t n;
	int rc = 0;

	*tp = NULL;
	f = fopen(path, "r");
	if (f == NULL)
		return -MT_E_SYS;
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		fclose(f);
		return -MT_E_NOMEM;
	}
	while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
		lineno++;
		off += (unsigned long long)n;
		if (trim_len(line) == 0 || line[0] == '#')
			continue;
		rc = parse_line(t, line, kallsyms, &why);
	}
	if (rc == 0 && ferror(f)) {
		/* A directory opens, and fails here (EISDIR). */
		snprintf(msg, msglen, "read error at offset %llu: %s", off,
		    strerror(errno));
		rc = -MT_E_IO;
	}
	if (rc == -MT_E_SYNTAX)
		snprintf(msg, msglen, "line %zu: %s", lineno, why);
	free(line);
	fclose(f);
	if (rc < 0) {
		sym_textsyms_free(t);
		return rc;
	}
	if (t->n > 0)
		qsort(t->v, t->n, sizeof(*t->v), cmp_sym);
	/* A kallsyms symbol ends at the next; the last gets a page. */
	for (i = 0; kallsyms && i < t->n; i++)
		t->v[i].end = i + 1 < t->n ? t->v[i + 1].start :
		    t->v[i].start + 4096;
	for (i = 0; kallsyms && i < t->n; i++)
		if (t->v[i].end <= t->v[i].start)
			t->v[i].end = t->v[i].start + 1;
	*tp = t;
	return 0;
}

void
sym_textsyms_free(struct sym_textsyms *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		free((char *)(uintptr_t)t->v[i].name);
	free(t->v);
	free(t);
}

const struct sym_textsym *
sym_textsyms_find(const struct sym_textsyms *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* An earlier, longer entry may cover it (perf maps overlap). */
	for (hi = lo; lo > 0 && hi - lo < 16; ) {
		const struct sym_textsym *s = &t->v[--lo];

		if (addr < s->end)
			return s;
	}
	return NULL;
}
