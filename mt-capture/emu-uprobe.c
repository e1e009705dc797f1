/* SPDX-License-Identifier: MIT */
/*
 * Uprobes as the software PT backend's stepper meets them: the original
 * bytes under a probe, the [uprobes] page, whose SIGTRAP a stop is (see
 * emu-uprobe.h).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>

#include "emu-uprobe.h"
#include "err.h"
#include "proc.h"

static int
holds_addr(const struct mt_proc_map *m, void *arg)
{
	uint64_t addr = *(const uint64_t *)arg;

	return addr >= m->start && addr < m->end;
}

int
mt_emu_uprobe_file_byte(pid_t pid, uint64_t addr, uint8_t *out)
{
	char path[96], file[600];
	struct mt_proc_map m;
	int fd, rc = -MT_E_NOTFOUND;

	if (mt_proc_find_map(pid, holds_addr, &addr, &m) < 0 ||
	    m.path[0] != '/')
		return rc;
	/* The mapped file itself, even when its name was replaced since. */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
	    (unsigned long long)m.start, (unsigned long long)m.end);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		mt_proc_target_file(pid, m.path, m.maj, m.min, m.ino, file,
		    sizeof(file));
		fd = open(file, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return rc;
	if (pread(fd, out, 1, (off_t)(m.pgoff + (addr - m.start))) == 1)
		rc = 0;
	close(fd);
	return rc;
}

static int
is_uprobes_page(const struct mt_proc_map *m, void *arg)
{
	(void)arg;
	return strcmp(m->path, "[uprobes]") == 0;
}

int
mt_emu_uprobe_page(pid_t pid, uint64_t *lo, uint64_t *hi)
{
	struct mt_proc_map m;

	if (mt_proc_find_map(pid, is_uprobes_page, NULL, &m) < 0)
		return -MT_E_NOTFOUND;
	*lo = m.start;
	*hi = m.end;
	return 0;
}

int
mt_emu_uprobe_own_trap(pid_t tid)
{
	siginfo_t si;

	return ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0 &&
	    si.si_signo == SIGTRAP && si.si_code == SI_KERNEL;
}
