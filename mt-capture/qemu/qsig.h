/* SPDX-License-Identifier: MIT */
/*
 * The signal handlers the guest registered: the handler and restorer
 * addresses of every rt_sigaction(2) that succeeded, read from the
 * guest's struct sigaction (the kernel's layout: handler, flags,
 * restorer, mask).  The plugin takes a block that starts at a handler,
 * reached where the previous block's last instruction could not have
 * gone, or through an indirect branch or a return, for a signal's
 * delivery (plugin.c, "Signals").
 *
 * Addresses are only ever added (a handler replaced since is still
 * recognized, and so is one of another process after fork): a few dozen
 * at most.  Written under a mutex by the thread making the call, read
 * without a lock by every thread's exec callback.
 */
#ifndef MT_QEMU_QSIG_H
#define MT_QEMU_QSIG_H

#include <stdint.h>

#define QS_MAX	64	/* handler (and restorer) addresses kept */

/* Handler addresses known: the exec callback tests this first. */
extern unsigned qs_nhandlers;

/* Guest address @g is at host address @g + @base (qemu-user's
 * guest_base: the host address of a translated instruction minus its
 * guest address).  Set once, at the first translation. */
void qs_set_base(uint64_t base);

/*
 * rt_sigaction(2) returned 0 with the new action at guest address @act
 * (0: none): learn its handler and restorer.  A struct that cannot be
 * read (unmapped since) is ignored.
 */
void qs_sigaction(uint64_t act);

/* 1 when @pc is the first instruction of a registered handler. */
int qs_is_handler(uint64_t pc);

/* 1 when @pc is a registered restorer (where a handler returns). */
int qs_is_restorer(uint64_t pc);

#endif /* MT_QEMU_QSIG_H */
