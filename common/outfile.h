/* SPDX-License-Identifier: MIT */
/*
 * Output files that appear under their final name only when complete.
 * mt_outfile_open() creates a temporary file beside the final name;
 * mt_outfile_commit() renames it into place, after flushing it to disk
 * when opened with MT_OUTFILE_SYNC; mt_outfile_abort() removes it.  "-" is standard output, and an existing
 * path that is not a regular file (/dev/null, a FIFO, a terminal) is
 * written in place, since renaming over it would replace the device.
 */
#ifndef MT_OUTFILE_H
#define MT_OUTFILE_H

#include <sys/types.h>

struct mt_outfile {
	int fd;			/* write here */
	char *tmp;		/* temporary name, NULL when in place; owned */
	char *path;		/* final name; owned */
	int in_place;		/* stdout or a device: no rename */
	int sync;		/* fsync before the rename (MT_OUTFILE_SYNC) */
};

/*
 * mt_outfile_open() flag: fsync the file before it is renamed, so that
 * after a crash or power loss the final name holds the whole file or
 * what it held before.  For files that cannot be made again (snapshots,
 * the build-id cache's copies).  Without it the rename still keeps an
 * interrupted run's partial file away from the final name, but a power
 * loss soon after may leave the new name with an empty or partial file
 * (as any program's output that is not synced); the filters' outputs,
 * made again from the snapshot by running the command again, are written
 * so, as gzip and perf write theirs (fsync costs about 1.3 ms per file
 * here, more than a small trace's whole mt-fxt).
 */
#define MT_OUTFILE_SYNC 1

/*
 * Open @path for writing with permission bits @mode (before umask);
 * @flags: 0 or MT_OUTFILE_SYNC.  Returns 0, or -MT_E_IO / -MT_E_NOMEM
 * with errno set.
 * Returns -MT_E_ISDIR (errno EISDIR) if @path is a directory.
 */
int mt_outfile_open(struct mt_outfile *o, const char *path, mode_t mode,
    unsigned flags);
/*
 * Finish: close a temporary file (fsync'ed first with MT_OUTFILE_SYNC)
 * and rename it to the final name (stdout is left open).  On failure the
 * temporary file is removed.  Returns 0, or -MT_E_IO with errno set.
 */
int mt_outfile_commit(struct mt_outfile *o);
/* Give up: close and remove the temporary file.  Keeps errno. */
void mt_outfile_abort(struct mt_outfile *o);

/*
 * Remove the temporary files of every output still open (opened and not
 * yet committed or aborted): for a signal handler, so an interrupted run
 * leaves nothing behind.  Async-signal-safe: it only reads stored names
 * and calls unlink(2).  Keeps errno.  Tracks up to 16 open outputs at a
 * time; further ones are not removed by it.
 */
void mt_outfile_unlink_pending(void);
/*
 * Install @handler for SIGHUP, SIGINT and SIGTERM, except those the
 * process was started with ignored (nohup, a background job).  The
 * handler is main's: it calls mt_outfile_unlink_pending(), then ends the
 * process by the signal.
 */
void mt_outfile_trap(void (*handler)(int));

#endif /* MT_OUTFILE_H */
