/* SPDX-License-Identifier: MIT */
/*
 * A probed instruction stepped out of line, for one decoder.
 *
 * When a uprobe fires and PT is not paused at it, the kernel copies the
 * probed instruction into a free slot of the process's [uprobes] page
 * before each single step (xol_get_insn_slot and arch_uprobe_copy_ixol in
 * kernel/events/uprobes.c; 128-byte slots, UPROBE_XOL_SLOT_BYTES, slot 0
 * the uretprobe trampoline) and steps it there.  Which instruction a slot
 * holds changes from one step to the next, and no snapshot has the page
 * (/proc/PID/mem refuses it), so the image maps NOPs there (image.h).
 * Enough for an instruction that does not branch; a ret or an indirect
 * call or jmp must consume its TIP in the slot.  The trace says which
 * instruction it is: the trap that started the step (FUP + TIP.PGD) is
 * at the probed instruction, whose bytes the image has (the file's, not
 * the int3).  A view gives the decoder, for that one step, its process's
 * image with those bytes in every slot of the page, whatever tool put
 * the probe there and however many probes there are.
 */
#ifndef MT_DECODE_XOL_H
#define MT_DECODE_XOL_H

#include <stddef.h>
#include <stdint.h>

struct image_set;
struct pt_image;
struct xol_view;

/* A view with no page yet.  Returns 0 or -MT_E_NOMEM. */
int xol_view_new(struct xol_view **out);
void xol_view_free(struct xol_view *v);

/*
 * The image @base of @pid with the [uprobes] page holding @slot (an
 * address in it, image_set_xol_page) made of NOPs and, in every slot but
 * slot 0, the @len bytes @raw of a probed instruction.  Owned by @v, valid
 * until the next call or xol_view_free: give the decoder another image
 * first.  NULL: @slot is in no [uprobes] page, or out of memory or I/O.
 */
struct pt_image *xol_view_image(struct xol_view *v,
    const struct image_set *is, const struct pt_image *base, uint32_t pid,
    uint64_t slot, const uint8_t *raw, size_t len);

#endif /* MT_DECODE_XOL_H */
