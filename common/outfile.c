/* SPDX-License-Identifier: MIT */
/*
 * Output files written to a temporary name and renamed when complete, so
 * an interrupted or failed run never leaves a partial file under the
 * final name (see outfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "outfile.h"

#define PENDING_MAX 16

/*
 * The temporary names of the open outputs, read by signal handlers:
 * atomic pointers (lock-free on x86-64), cleared before the name is freed.
 */
static _Atomic(char *) pending[PENDING_MAX];

static void
pending_add(char *tmp)
{
	for (int i = 0; i < PENDING_MAX; i++) {
		char *none = NULL;

		if (atomic_compare_exchange_strong(&pending[i], &none, tmp))
			return;
	}
}

static void
pending_del(const char *tmp)
{
	for (int i = 0; i < PENDING_MAX; i++)
		if (tmp != NULL && atomic_load(&pending[i]) == tmp)
			atomic_store(&pending[i], NULL);
}

void
mt_outfile_unlink_pending(void)
{
	int e = errno;

	for (int i = 0; i < PENDING_MAX; i++) {
		char *tmp = atomic_load(&pending[i]);

		if (tmp != NULL)
			unlink(tmp);
	}
	errno = e;
}

void
mt_outfile_trap(void (*handler)(int))
{
	static const int sigs[] = { SIGHUP, SIGINT, SIGTERM };
	struct sigaction sa;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (sigaction(sigs[i], NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = handler;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

int
mt_outfile_open(struct mt_outfile *o, const char *path, mode_t mode,
    unsigned flags)
{
	const char *slash = strrchr(path, '/');
	struct stat sb;
	mode_t mask;
	int n;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->sync = (flags & MT_OUTFILE_SYNC) != 0;
	o->path = strdup(path);
	if (o->path == NULL)
		return -MT_E_NOMEM;
	if (strcmp(path, "-") == 0) {
		o->fd = STDOUT_FILENO;
		o->in_place = 1;
		return 0;
	}
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		if (S_ISDIR(sb.st_mode)) {
			errno = EISDIR;
			return -MT_E_ISDIR;
		}
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		o->in_place = 1;
		return o->fd < 0 ? -MT_E_IO : 0;
	}
	if (slash != NULL)
		n = asprintf(&o->tmp, "%.*s/.%s.tmpXXXXXX",
		    (int)(slash - path), path, slash + 1);
	else
		n = asprintf(&o->tmp, ".%s.tmpXXXXXX", path);
	if (n < 0) {
		o->tmp = NULL;
		return -MT_E_NOMEM;
	}
	/* Known to the signal handlers before the file exists: mkostemp()
	 * fills in the name before it creates the file. */
	pending_add(o->tmp);
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		int e = errno;

		pending_del(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		errno = e;
		return -MT_E_IO;
	}
	mask = umask(0);
	umask(mask);
	(void)fchmod(o->fd, mode & ~mask);
	return 0;
}

/* Drop the names of @o, its temporary file done with (renamed or gone). */
static void
forget(struct mt_outfile *o)
{
	pending_del(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
}

int
mt_outfile_commit(struct mt_outfile *o)
{
	int rc = 0, e;

	if (o->in_place) {
		if (o->fd != STDOUT_FILENO && o->fd >= 0 && close(o->fd) < 0)
			rc = -MT_E_IO;
		o->fd = -1;
		free(o->path);
		o->path = NULL;
		return rc;
	}
	if (o->sync && fsync(o->fd) < 0 && errno != EINVAL)
		rc = -MT_E_IO;
	if (close(o->fd) < 0 && rc == 0)
		rc = -MT_E_IO;
	o->fd = -1;
	if (rc == 0 && rename(o->tmp, o->path) < 0)
		rc = -MT_E_IO;
	e = errno;
	if (rc < 0)
		unlink(o->tmp);
	forget(o);
	errno = e;
	return rc;
}

void
mt_outfile_abort(struct mt_outfile *o)
{
	int e = errno;

	if (o->fd >= 0 && o->fd != STDOUT_FILENO)
		close(o->fd);
	o->fd = -1;
	if (o->tmp != NULL)
		unlink(o->tmp);
	forget(o);
	errno = e;
}
