/* SPDX-License-Identifier: MIT */
/* Unit tests for common/bidcache.c: directory choice, layout, store once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "bidcache.h"
#include "err.h"

static void
dir_from_environment(void)
{
	char b[256];

	setenv("MT_CACHE_DIR", "/x/y", 1);
	CHECK(mt_bidcache_dir(b, sizeof(b)) == 0);
	CHECK_STR(b, "/x/y");
	unsetenv("MT_CACHE_DIR");
	setenv("XDG_CACHE_HOME", "/c", 1);
	CHECK(mt_bidcache_dir(b, sizeof(b)) == 0);
	CHECK_STR(b, "/c/mt");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	CHECK(mt_bidcache_dir(b, sizeof(b)) == 0);
	CHECK_STR(b, "/home/u/.cache/mt");
	CHECK(mt_bidcache_dir(b, 5) == -MT_E_LIMIT);
}

static void
path_layout(void)
{
	static const uint8_t id[] = { 0xab, 0x01, 0xff };
	char b[64];

	CHECK(mt_bidcache_path("/d", id, 3, b, sizeof(b)) == 0);
	CHECK_STR(b, "/d/.build-id/ab/01ff");
	CHECK(mt_bidcache_path("/d", id, 0, b, sizeof(b)) == -MT_E_INVAL);
	CHECK(mt_bidcache_path("/d", id, 3, b, 18) == -MT_E_LIMIT);
}

static void
store_once(void)
{
	static const uint8_t id[] = { 0x12, 0x34 };
	char dir[] = "/tmp/mt-test-bidcache-XXXXXX", p[256], c[8] = { 0 };
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(mt_bidcache_store(dir, id, 2, "first", 5) == 1);
	CHECK(mt_bidcache_store(dir, id, 2, "other", 5) == 0);
	snprintf(p, sizeof(p), "%s/.build-id/12/34", dir);
	f = fopen(p, "r");
	CHECK(f != NULL && fread(c, 1, 7, f) == 5);
	CHECK_STR(c, "first");
	if (f)
		fclose(f);
	unlink(p);
	snprintf(p, sizeof(p), "%s/.build-id/12", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/.build-id", dir);
	rmdir(p);
	CHECK(rmdir(dir) == 0);
}

int
main(void)
{
	TEST(dir_from_environment);
	TEST(path_layout);
	TEST(store_once);
	return tap_done();
}
