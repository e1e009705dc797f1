/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for common/outfile.c: nothing appears under the final name
 * before commit, abort leaves nothing, a device is written in place and
 * never replaced, a full disk is an error that leaves nothing behind, and
 * a directory is an error of its own.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "err.h"
#include "outfile.h"

static char dir[] = "/tmp/mt-test-outfile-XXXXXX";

static int
entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void
commit_renames_into_place(void)
{
	struct mt_outfile o;
	char path[256];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/out.fxt", dir);
	CHECK(mt_outfile_open(&o, path, 0600, MT_OUTFILE_SYNC) == 0);
	CHECK(write(o.fd, "hello", 5) == 5);
	CHECK(stat(path, &sb) < 0 && errno == ENOENT);
	CHECK(entries() == 1);
	CHECK(mt_outfile_commit(&o) == 0);
	CHECK(stat(path, &sb) == 0 && sb.st_size == 5);
	CHECK((sb.st_mode & 0777) == 0600);
	CHECK(entries() == 1);
	unlink(path);
}

static void
abort_leaves_nothing(void)
{
	struct mt_outfile o;
	char path[256];

	snprintf(path, sizeof(path), "%s/x", dir);
	CHECK(mt_outfile_open(&o, path, 0644, 0) == 0);
	CHECK(write(o.fd, "partial", 7) == 7);
	mt_outfile_abort(&o);
	CHECK(entries() == 0);
}

static void
device_is_written_in_place(void)
{
	struct mt_outfile o;
	struct stat sb;

	CHECK(mt_outfile_open(&o, "/dev/null", 0600, 0) == 0);
	CHECK(o.in_place == 1 && o.tmp == NULL);
	CHECK(write(o.fd, "x", 1) == 1);
	CHECK(mt_outfile_commit(&o) == 0);
	CHECK(stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode));
}

static void
full_disk_fails_and_leaves_nothing(void)
{
	struct mt_outfile o;

	/* /dev/full is a device, so it is written in place: the write
	 * fails with ENOSPC, and nothing can be left behind. */
	CHECK(mt_outfile_open(&o, "/dev/full", 0600, MT_OUTFILE_SYNC) == 0);
	CHECK(write(o.fd, "x", 1) < 0 && errno == ENOSPC);
	mt_outfile_abort(&o);
}

static void
missing_directory_is_an_error(void)
{
	struct mt_outfile o;

	CHECK(mt_outfile_open(&o, "/nonexistent-mt-dir/out", 0600, 0) ==
	    -MT_E_IO);
	CHECK(errno == ENOENT);
	mt_outfile_abort(&o);
}

static void
directory_is_its_own_error(void)
{
	struct mt_outfile o;

	CHECK(mt_outfile_open(&o, dir, 0600, 0) == -MT_E_ISDIR);
	CHECK(errno == EISDIR);
	CHECK(o.fd < 0);
	mt_outfile_abort(&o);
	CHECK(entries() == 0);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	TEST(commit_renames_into_place);
	TEST(abort_leaves_nothing);
	TEST(device_is_written_in_place);
	TEST(full_disk_fails_and_leaves_nothing);
	TEST(missing_directory_is_an_error);
	TEST(directory_is_its_own_error);
	rmdir(dir);
	return tap_done();
}
