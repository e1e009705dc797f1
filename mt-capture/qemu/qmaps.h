/* SPDX-License-Identifier: MIT */
/*
 * The plugin's view of the guest's code: which mappings hold translated
 * code (appended to DIR/maps in /proc/PID/maps form, at guest addresses,
 * each with the clock tick from which it is known to hold code, so that a
 * library mapped where another was is told apart from it in time),
 * the code bytes of blocks outside file mappings (DIR/code, for JIT code),
 * and the guest addresses of the triggers, resolved when the mapping that
 * holds them first runs.  Called at translation time only, which QEMU
 * serializes; a mutex guards it all the same.
 */
#ifndef MT_QEMU_QMAPS_H
#define MT_QEMU_QMAPS_H

#include <stddef.h>
#include <stdint.h>

#define QM_MAX_TRIGGERS 16

struct qm_trigger {
	uint64_t offset;	/* file offset of the instruction */
	char *path;		/* the file (realpath); owned */
	uint64_t addr;		/* guest address, 0 until its mapping runs */
};

/*
 * Start: @dir is the shared directory; triggers come from the config.
 * Returns 0 or -1 (errno set).
 */
int qm_init(const char *dir, struct qm_trigger *trig, size_t ntrig);

/*
 * A block at guest address @vaddr, host address @haddr, @len code bytes
 * at @code was translated: learn its mapping (rereading /proc/self/maps
 * when it is new).  *@jit: 1 when the mapping is not a file (JIT code,
 * whose bytes qm_put_code records); *@since: the time from which they
 * are the code there (qcode.h: @version gives the time of a new version;
 * 0 for code in files and for JIT code never replaced).  Returns 1 when
 * the set of mappings changed (triggers may have been resolved), else 0.
 */
int qm_block(uint64_t vaddr, const void *haddr, const uint8_t *code,
    size_t len, uint64_t (*version)(void *), uint64_t *since, int *jit);

/* Record JIT code (DIR/code): @len bytes at @code, at guest address
 * @vaddr, the code there from time @since (qm_block). */
void qm_put_code(uint64_t vaddr, const uint8_t *code, size_t len,
    uint64_t since);

/* The guest's mappings may have changed (mmap, munmap, mprotect, mremap
 * returned at clock tick @tick): the next translation rereads them, and
 * mappings new then are logged from @tick on. */
void qm_changed(uint64_t tick);

/* Trigger @i's guest address, or 0 when not known yet. */
uint64_t qm_trigger_addr(size_t i);

#endif /* MT_QEMU_QMAPS_H */
