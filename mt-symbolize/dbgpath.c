/* SPDX-License-Identifier: MIT */
/*
 * Candidate debug-file paths: checked before libdw's standard search opens
 * them, and searched without libdw (see dbgpath.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dbgpath.h"

struct check {
	/* Called for each candidate that exists; 1 stops the walk. */
	int (*visit)(void *ctx, const char *path, const struct stat *st);
	void *ctx;
	int found;		/* 1 once visit() returned 1 */
	int nomem;		/* 1 if a path could not be made */
};

/*
 * Look at "@a@b@c" (no separator added) unless already found.  A path
 * longer than PATH_MAX names nothing stat(2) could find.
 */
static void
look(struct check *c, const char *a, const char *b, const char *d)
{
	size_t la = strlen(a), lb = strlen(b), ld = strlen(d);
	char p[PATH_MAX];
	struct stat st;

	if (c->found || c->nomem || la + lb + ld >= sizeof(p))
		return;
	memcpy(p, a, la);
	memcpy(p + la, b, lb);
	memcpy(p + la + lb, d, ld + 1);
	if (stat(p, &st) == 0 && c->visit(c->ctx, p, &st) == 1)
		c->found = 1;
}

/* @name in @dir (the file's directory, "" when it has none). */
static void
look_in(struct check *c, const char *dir, const char *name)
{
	if (dir[0] == '\0')
		look(c, name, "", "");
	else
		look(c, dir, "/", name);
}

/*
 * Every directory @entry of the path gives, for a file in @fdir; @own is
 * the file's base name, which libdw also tries there (not in @fdir
 * itself) when the file has no .gnu_debuglink, else NULL.
 */
static void
look_entry(struct check *c, const char *entry, const char *fdir,
    const char *name, const char *own)
{
	const char *t;
	char *sub;

	if (entry[0] == '+' || entry[0] == '-')
		entry++;
	if (entry[0] == '\0') {
		look_in(c, fdir, name);
		return;
	}
	if (entry[0] != '/') {
		if (asprintf(&sub, "%s%s%s", fdir, fdir[0] ? "/" : "",
		    entry) < 0) {
			c->nomem = 1;
			return;
		}
		look_in(c, sub, name);
		if (own != NULL)
			look_in(c, sub, own);
		free(sub);
		return;
	}
	look(c, entry, "/", name);
	look(c, entry, "/.dwz/", name);
	if (own != NULL)
		look(c, entry, "/", own);
	/* ENTRY/a/b/c/name, ENTRY/b/c/name, ENTRY/c/name for /a/b/c */
	for (t = fdir; t != NULL && t[0] == '/'; t = strchr(t + 1, '/')) {
		if (asprintf(&sub, "%s%s", entry, t) < 0) {
			c->nomem = 1;
			return;
		}
		look_in(c, sub, name);
		if (own != NULL)
			look_in(c, sub, own);
		free(sub);
	}
}

/* The debuglink candidates for the main file at @file. */
static void
look_file(struct check *c, const char *dipath, const char *file,
    const char *debuglink)
{
	const char *slash = strrchr(file, '/'), *e, *next, *base;
	const char *fbase = slash ? slash + 1 : file;
	char *fdir, *entry, *own = NULL;

	fdir = slash ? strndup(file, (size_t)(slash - file)) : strdup("");
	if (fdir == NULL) {
		c->nomem = 1;
		return;
	}
	if (debuglink == NULL) {
		if (asprintf(&own, "%s.debug", slash ? slash + 1 : file) < 0) {
			c->nomem = 1;
			free(fdir);
			return;
		}
		debuglink = own;
	}
	base = strrchr(debuglink, '/') ? strrchr(debuglink, '/') + 1 :
	    debuglink;
	if (dipath[0] == '+' || dipath[0] == '-')
		dipath++;
	for (e = dipath; !c->found && !c->nomem; e = next + 1) {
		next = strchr(e, ':');
		if (next == NULL)
			next = e + strlen(e);
		entry = strndup(e, (size_t)(next - e));
		if (entry == NULL) {
			c->nomem = 1;
			break;
		}
		look_entry(c, entry, fdir, debuglink, own ? fbase : NULL);
		if (base != debuglink)
			look_entry(c, entry, fdir, base, NULL);
		free(entry);
		if (*next == '\0')
			break;
	}
	free(own);
	free(fdir);
}

int
sym_dbgpath_each(const char *dipath, const char *file_name,
    const char *debuglink, const char *hex,
    int (*visit)(void *ctx, const char *path, const struct stat *st),
    void *ctx)
{
	struct check c = { .visit = visit, .ctx = ctx };
	const char *e, *next;
	char *real, *entry;

	for (e = dipath; hex[0] != '\0' && hex[1] != '\0' && !c.found;
	    e = next + 1) {
		next = strchr(e, ':');
		if (next == NULL)
			next = e + strlen(e);
		if (*e == '+' || *e == '-')
			e++;
		if (*e == '/' && next > e) {
			entry = strndup(e, (size_t)(next - e));
			if (entry == NULL)
				return -1;
			if (asprintf(&real, "/.build-id/%.2s/%s.debug", hex,
			    hex + 2) < 0) {
				free(entry);
				return -1;
			}
			look(&c, entry, real, "");
			free(real);
			free(entry);
		}
		if (*next == '\0')
			break;
	}
	if (file_name != NULL) {
		look_file(&c, dipath, file_name, debuglink);
		real = realpath(file_name, NULL);
		if (real != NULL && strcmp(real, file_name) != 0)
			look_file(&c, dipath, real, debuglink);
		free(real);
	}
	return c.nomem ? -1 : c.found;
}

/* Where sym_dbgpath_unsafe() puts the offending path. */
struct bad {
	char *buf;
	size_t len;
};

static int
unsafe_visit(void *ctx, const char *path, const struct stat *st)
{
	struct bad *b = ctx;

	if (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode))
		return 0;
	snprintf(b->buf, b->len, "%s", path);
	return 1;
}

int
sym_dbgpath_unsafe(const char *dipath, const char *file_name,
    const char *debuglink, const char *hex, char *bad, size_t badlen)
{
	struct bad b = { .buf = bad, .len = badlen };

	return sym_dbgpath_each(dipath, file_name, debuglink, hex,
	    unsafe_visit, &b);
}
