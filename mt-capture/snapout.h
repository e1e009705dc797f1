/* SPDX-License-Identifier: MIT */
/*
 * Writing a snapshot file, shared by run/attach, import-raw and
 * import-perf: atomically (common/outfile) and mode 0600, since a
 * snapshot holds memory contents (docs/security.md).
 */
#ifndef MT_CAPTURE_SNAPOUT_H
#define MT_CAPTURE_SNAPOUT_H

struct mt_snap;

/*
 * Write @s to @path ("-" is standard output).  Nothing appears under
 * @path unless the whole snapshot was written.  Prints nothing.
 * Returns 0, or -MT_E_IO (errno set) / -MT_E_NOMEM.
 * Returns -MT_E_ISDIR if @path is a directory.
 */
int mt_cap_write_snapshot(const struct mt_snap *s, const char *path);

/*
 * Could a snapshot be written at @path?  Creates and removes a temporary
 * file beside it (a device or FIFO is not opened).  For checking before
 * the target starts.  Returns 0, or -MT_E_IO (errno set) / -MT_E_NOMEM.
 * Returns -MT_E_ISDIR if @path is a directory.
 */
int mt_cap_check_output(const char *path);

#endif /* MT_CAPTURE_SNAPOUT_H */
