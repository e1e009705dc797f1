/* SPDX-License-Identifier: MIT */
/*
 * The guest's code mappings as the qemu backend's plugin logs them
 * (mt-capture/qemu/qmaps.h: DIR/maps, one "TICK" and /proc/PID/maps line
 * per file mapping that held code, TICK 0 for those QEMU mapped itself):
 * the maps text the snapshot describes, and the timed MMAP2 records that
 * tell the decoder which of two libraries mapped at the same addresses
 * (dlclose, dlopen) held the code at which time.
 */
#ifndef MT_CAPTURE_QEMU_MAPS_H
#define MT_CAPTURE_QEMU_MAPS_H

#include <stddef.h>
#include <sys/types.h>

struct mt_snap;

/*
 * The /proc/PID/maps lines of log @log (@len bytes), each once, without
 * the ticks, into *@out (malloc'd, NUL-terminated, *@outlen bytes); an
 * incomplete last line is left out.  Returns 0 or -MT_E_NOMEM.
 */
int mt_qemu_maps_text(const char *log, size_t len, char **out,
    size_t *outlen);

/*
 * Add to @s one SIDEBAND chunk with an MMAP2 record of process @pid for
 * each mapping of @log (@len bytes) with a tick, its sample_id time the
 * tick converted with s->timeconv (so set that first), its build-id that
 * of the MMAP chunk describing the same mapping.  No chunk when there is
 * none.  Returns 0 or -MT_E_NOMEM.
 */
int mt_qemu_maps_sideband(struct mt_snap *s, pid_t pid, const char *log,
    size_t len);

#endif /* MT_CAPTURE_QEMU_MAPS_H */
