/* SPDX-License-Identifier: MIT */
/*
 * uprobe trace events through tracefs (see tracefs.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "tracefs.h"

/*
 * Into @dir: MT_TRACEFS if set, else the first of tracefs's usual mount
 * points, whose uprobe_events allows @mode (access(2)); -MT_E_NOTFOUND.
 */
static int
find_dir(char *dir, size_t dirsz, int mode)
{
	static const char *const dirs[] = { "/sys/kernel/tracing",
	    "/sys/kernel/debug/tracing" };
	const char *env = getenv("MT_TRACEFS");
	char p[PATH_MAX + 32];
	size_t i, n = sizeof(dirs) / sizeof(dirs[0]);

	for (i = 0; i < (env != NULL ? 1 : n); i++) {
		snprintf(dir, dirsz, "%s", env != NULL ? env : dirs[i]);
		snprintf(p, sizeof(p), "%s/uprobe_events", dir);
		if (access(p, mode) == 0)
			return 0;
	}
	return -MT_E_NOTFOUND;
}

int
mt_tracefs_dir(char *dir, size_t dirsz, char *why, size_t whysz)
{
	const char *env = getenv("MT_TRACEFS");

	if (find_dir(dir, dirsz, W_OK) == 0)
		return 0;
	if (env != NULL)
		snprintf(why, whysz, "no writable uprobe_events in "
		    "MT_TRACEFS=%s", env);
	else
		snprintf(why, whysz, "tracefs is not mounted (mount -t "
		    "tracefs nodev /sys/kernel/tracing) or uprobe_events is "
		    "not writable");
	return -MT_E_NOTFOUND;
}

/* Append the line @cmd to @dir/uprobe_events.  Returns 0 or an errno. */
static int
write_cmd(const char *dir, const char *cmd)
{
	char p[PATH_MAX];
	size_t n = strlen(cmd);
	int fd, err = 0;

	snprintf(p, sizeof(p), "%s/uprobe_events", dir);
	if ((fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0)
		return errno;
	if (write(fd, cmd, n) != (ssize_t)n)
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

int
mt_tracefs_uprobe_add(const char *dir, const char *group, const char *event,
    const char *path, uint64_t offset, uint64_t *id, char *msg, size_t msgsz)
{
	char cmd[PATH_MAX + 128], p[PATH_MAX], buf[32];
	ssize_t n;
	int fd, err;

	if (strpbrk(path, " \t\n") != NULL) {
		snprintf(msg, msgsz, "'%s' holds white space, which "
		    "uprobe_events cannot take", path);
		return -MT_E_UNSUPP;
	}
	snprintf(cmd, sizeof(cmd), "p:%s/%s %s:0x%llx\n", group, event, path,
	    (unsigned long long)offset);
	if ((err = write_cmd(dir, cmd)) != 0) {
		snprintf(msg, msgsz, "cannot define the uprobe %s/%s in "
		    "%s/uprobe_events: %s", group, event, dir, strerror(err));
		return err == EACCES || err == EPERM ? -MT_E_PERM : -MT_E_SYS;
	}
	snprintf(p, sizeof(p), "%s/events/%s/%s/id", dir, group, event);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	err = errno;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		(void)mt_tracefs_uprobe_del(dir, group, event);
		snprintf(msg, msgsz, "cannot read '%s': %s", p,
		    n == 0 ? "empty" : strerror(err));
		return -MT_E_SYS;
	}
	buf[n] = '\0';
	*id = strtoull(buf, NULL, 10);
	return 0;
}

int
mt_tracefs_uprobe_del(const char *dir, const char *group, const char *event)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "-:%s/%s\n", group, event);
	return write_cmd(dir, cmd) == 0 ? 0 : -MT_E_SYS;
}

/* Is @pid an mt-capture that lives? */
static int
capture_lives(long pid)
{
	char p[64], comm[32] = "";
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%ld/comm", pid);
	if ((f = fopen(p, "re")) == NULL)
		return 0;
	if (fgets(comm, sizeof(comm), f) == NULL)
		comm[0] = '\0';
	fclose(f);
	return strncmp(comm, "mt-capture", 10) == 0;
}

int
mt_tracefs_reap(const char *dir)
{
	static const size_t glen = sizeof(MT_TRACEFS_GROUP) - 1;
	char p[PATH_MAX], line[PATH_MAX + 128], group[64], event[64];
	int n = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/uprobe_events", dir);
	if ((f = fopen(p, "re")) == NULL)
		return 0;
	/* "p:GROUP/EVENT PATH:0xOFF" */
	while (fgets(line, sizeof(line), f) != NULL) {
		char *end;
		long pid;

		if (sscanf(line, "%*c:%63[^/]/%63s", group, event) != 2 ||
		    strncmp(group, MT_TRACEFS_GROUP, glen) != 0)
			continue;
		pid = strtol(group + glen, &end, 10);
		if (end == group + glen || *end != '\0' || pid <= 0 ||
		    capture_lives(pid))
			continue;
		if (mt_tracefs_uprobe_del(dir, group, event) == 0)
			n++;
	}
	fclose(f);
	return n;
}

int
mt_tracefs_uprobe_parse(const char *line, char *name, size_t namesz,
    char *path, size_t pathsz, uint64_t *offset)
{
	const char *g, *sp, *colon, *end;
	char *e;
	size_t n;

	/* "p:GROUP/EVENT PATH:0xOFF[(0xREF)] [ARGS]", or "r:" */
	if ((line[0] != 'p' && line[0] != 'r') || line[1] != ':')
		return -MT_E_SYNTAX;
	g = line + 2;
	if ((sp = strchr(g, ' ')) == NULL || strcspn(g, "/") >=
	    (size_t)(sp - g) || (n = (size_t)(sp - g)) >= namesz)
		return -MT_E_SYNTAX;
	memcpy(name, g, n);
	name[n] = '\0';
	sp++;
	end = sp + strcspn(sp, " \t\n(");
	for (colon = end; colon > sp && colon[-1] != ':'; colon--)
		;
	if (colon <= sp + 1 || (size_t)(colon - 1 - sp) >= pathsz)
		return -MT_E_SYNTAX;
	errno = 0;
	*offset = strtoull(colon, &e, 16);
	if (e == colon || e != end || errno != 0)
		return -MT_E_SYNTAX;
	memcpy(path, sp, (size_t)(colon - 1 - sp));
	path[colon - 1 - sp] = '\0';
	return 0;
}

int
mt_tracefs_uprobes(int (*fn)(void *arg, const char *name,
    const char *path, uint64_t offset), void *arg)
{
	char dir[PATH_MAX], p[PATH_MAX + 32], line[PATH_MAX + 256];
	char name[128], path[PATH_MAX];
	uint64_t off;
	FILE *f;
	int n = 0;

	if (find_dir(dir, sizeof(dir), R_OK) < 0)
		return 0;
	snprintf(p, sizeof(p), "%s/uprobe_events", dir);
	if ((f = fopen(p, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (mt_tracefs_uprobe_parse(line, name, sizeof(name), path,
		    sizeof(path), &off) == 0) {
			n++;
			if (fn(arg, name, path, off) != 0)
				break;
		}
	fclose(f);
	return n;
}
