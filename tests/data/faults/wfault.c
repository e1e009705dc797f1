/* SPDX-License-Identifier: MIT */
/*
 * An LD_PRELOAD shim for the fault-injection tests: it wraps write(2) on
 * the descriptors whose path contains $MT_FAULT_MATCH (a substring of the
 * /proc/self/fd link, e.g. ".snap." for mt-capture's temporary snapshot,
 * "pipe:" for a pipe) and, as the environment asks:
 *
 *   MT_FAULT_DELAY_US=N   sleeps N microseconds before each such write
 *   MT_FAULT_SHORT=1      writes at most half the bytes asked (at least 1):
 *                         short writes, which callers must continue
 *   MT_FAULT_ERRNO=E      fails with errno E once MT_FAULT_AFTER bytes
 *                         (default 0) went through
 *
 * Build: cc -shared -fPIC -o wfault.so wfault.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

ssize_t write(int fd, const void *p, size_t n);

static unsigned long long passed;	/* bytes let through so far */

static int
matches(int fd)
{
	const char *m = getenv("MT_FAULT_MATCH");
	char link[64], path[PATH_MAX];
	ssize_t k;

	if (m == NULL || *m == '\0')
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	k = readlink(link, path, sizeof(path) - 1);
	if (k < 0)
		return 0;
	path[k] = '\0';
	return strstr(path, m) != NULL;
}

ssize_t
write(int fd, const void *p, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	const char *e;
	ssize_t r;

	if (real == NULL)
		real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT,
		    "write");
	if (n == 0 || !matches(fd))
		return real(fd, p, n);
	if ((e = getenv("MT_FAULT_DELAY_US")) != NULL) {
		long us = atol(e);
		struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	if ((e = getenv("MT_FAULT_ERRNO")) != NULL) {
		const char *a = getenv("MT_FAULT_AFTER");
		unsigned long long after = a ? strtoull(a, NULL, 10) : 0;

		if (passed >= after) {
			errno = atoi(e);
			return -1;
		}
		if (n > after - passed)
			n = (size_t)(after - passed);
	}
	if (getenv("MT_FAULT_SHORT") != NULL && n > 1)
		n /= 2;
	r = real(fd, p, n);
	if (r > 0)
		passed += (unsigned long long)r;
	return r;
}
