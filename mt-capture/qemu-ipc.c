/* SPDX-License-Identifier: MIT */
/*
 * The files of the qemu backend's shared directory (qemu-ipc.h), mapped
 * the same way by mt-capture (qemu.c) and by its QEMU plugin
 * (qemu/plugin.c), which links this file into its shared object.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/mman.h>

#include "qemu-ipc.h"

void *
mtq_map(const char *dir, const char *name, size_t len, int create)
{
	char path[PATH_MAX + 32];
	void *p;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return NULL;
	fd = open(path, (create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR) |
	    O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	if (create && ftruncate(fd, (off_t)len) < 0) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}
