/* SPDX-License-Identifier: MIT */
/*
 * The JIT code the qemu backend's plugin logs (mt-capture/qemu-ipc.h:
 * DIR/code, a struct mtq_code and its bytes per block translated outside
 * file mappings) as the snapshot's JIT BLOBs.
 */
#ifndef MT_CAPTURE_QEMU_CODE_H
#define MT_CAPTURE_QEMU_CODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mt_snap;

/*
 * Add to @s the JIT BLOBs of process @pid from the code log @log (@len
 * bytes): one per time (qemu/qcode.h: JIT code written over other code
 * has a time from which it is the code there, the rest 0) and run of
 * touching or overlapping blocks of that time; where blocks overlap, the
 * bytes of the block logged last win.  A BLOB's time is still a tick
 * (the caller converts it).  A record cut short ends the log (it was
 * being written); a block with no bytes or one that would run past the
 * end of the address space is left out.  Returns 0 or -MT_E_NOMEM.
 */
int mt_qemu_code_blobs(struct mt_snap *s, pid_t pid, const uint8_t *log,
    size_t len);

#endif /* MT_CAPTURE_QEMU_CODE_H */
