/* SPDX-License-Identifier: MIT */
/*
 * Candidate debug-file paths checked before libdw's standard search opens
 * them (see dbgpath.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dbgpath.h"

struct check {
	char *bad;		/* where to put the offending path */
	size_t badlen;
	int found;		/* 1 once one is found */
	int nomem;		/* 1 if asprintf() failed */
};

/* Look at "@a@b@c" (no separator added) unless already found. */
static void
look(struct check *c, const char *a, const char *b, const char *d)
{
	struct stat st;
	char *p;

	if (c->found || c->nomem)
		return;
	if (asprintf(&p, "%s%s%s", a, b, d) < 0) {
		c->nomem = 1;
		return;
	}
	if (stat(p, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode)) {
		snprintf(c->bad, c->badlen, "%s", p);
		c->found = 1;
	}
	free(p);
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

/* Every directory @entry of the path gives, for a file in @fdir. */
static void
look_entry(struct check *c, const char *entry, const char *fdir,
    const char *name)
{
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
		free(sub);
		return;
	}
	look(c, entry, "/", name);
	look(c, entry, "/.dwz/", name);
	if (fdir[0] == '/') {
		if (asprintf(&sub, "%s%s", entry, fdir) < 0) {
			c->nomem = 1;
			return;
		}
		look_in(c, sub, name);
		free(sub);
	}
}

/* The debuglink candidates for the main file at @file. */
static void
look_file(struct check *c, const char *dipath, const char *file,
    const char *debuglink)
{
	const char *slash = strrchr(file, '/'), *e, *next, *base;
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
		look_entry(c, entry, fdir, debuglink);
		look_entry(c, entry, fdir, base);
		free(entry);
		if (*next == '\0')
			break;
	}
	free(own);
	free(fdir);
}

int
sym_dbgpath_unsafe(const char *dipath, const char *file_name,
    const char *debuglink, const char *hex, char *bad, size_t badlen)
{
	struct check c = { .bad = bad, .badlen = badlen };
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
