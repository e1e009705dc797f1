/* SPDX-License-Identifier: MIT */
/* Writing a snapshot file atomically, mode 0600 (see snapout.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "outfile.h"
#include "snap.h"
#include "snapout.h"

int
mt_cap_write_snapshot(const struct mt_snap *s, const char *path)
{
	struct mt_outfile o;
	int rc, e;

	rc = mt_outfile_open(&o, path, 0600, MT_OUTFILE_SYNC);
	if (rc < 0) {
		mt_outfile_abort(&o);
		return rc;
	}
	rc = mt_snap_write_fd(s, o.fd);
	if (rc < 0) {
		e = errno;
		mt_outfile_abort(&o);
		errno = e;
		return rc;
	}
	return mt_outfile_commit(&o);
}

int
mt_cap_check_output(const char *path)
{
	struct mt_outfile o;
	struct stat sb;
	int rc;

	if (strcmp(path, "-") == 0)
		return 0;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		errno = EISDIR;
		return -MT_E_ISDIR;
	}
	/* A FIFO opened and closed would end its reader's input. */
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return 0;
	rc = mt_outfile_open(&o, path, 0600, MT_OUTFILE_SYNC);
	mt_outfile_abort(&o);
	return rc;
}
