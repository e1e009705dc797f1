/* SPDX-License-Identifier: MIT */
/*
 * Uprobes as the software PT backend's stepper (emu-trace.c) meets them.
 *
 * A uprobe is an int3 the kernel writes over the first byte of the probed
 * instruction in every process that maps the file, system-wide, whoever
 * asked for it: mt-capture's own --trigger, another mt-capture, bpftrace,
 * a USDT agent (kernel/events/uprobes.c).  A thread single-stepped with
 * ptrace that executes one is handled by the kernel: it runs the probe's
 * handler, then the original instruction, emulated (a branch, a push) or
 * copied into the process's [uprobes] page and single-stepped there, puts
 * the IP where the original instruction leaves it and, seeing the trap
 * flag of the tracer's step, sends the thread a SIGTRAP (send_sig:
 * si_code SI_USER) in place of the step trap it consumed
 * (arch/x86/kernel/uprobes.c, arch_uprobe_post_xol and
 * arch_uprobe_skip_sstep); or it finds the probe gone and restarts the
 * instruction in place (an ordinary step trap).  The tracer sees one stop
 * at the next instruction.  An int3 the program wrote itself, with no
 * uprobe there, raises SIGTRAP with si_code SI_KERNEL.
 *
 * A uretprobe points the probed function's return address at the
 * kernel's trampoline in the [uprobes] page (prepare_uretprobe); on 6.11+
 * kernels the trampoline is a few instructions ending in the uretprobe
 * system call, which returns to the real caller.
 */
#ifndef MT_EMU_UPROBE_H
#define MT_EMU_UPROBE_H

#include <stdint.h>
#include <sys/types.h>

/*
 * The byte at @addr of a file mapping of @pid, read from the file itself
 * (/proc/PID/map_files, else the mapped path): the original of a byte a
 * uprobe replaced.  Returns 0, or -MT_E_NOTFOUND (not in a file mapping,
 * file unreadable).
 */
int mt_emu_uprobe_file_byte(pid_t pid, uint64_t addr, uint8_t *out);

/*
 * The [uprobes] page of @pid, [*@lo, *@hi), from /proc/PID/maps; the
 * kernel maps it at the first uprobe hit (VM_IO: never readable through
 * process_vm_readv).  Returns 0, or -MT_E_NOTFOUND.
 */
int mt_emu_uprobe_page(pid_t pid, uint64_t *lo, uint64_t *hi);

/*
 * Thread @tid is in a SIGTRAP stop after stepping an int3 that covers a
 * file's other byte: is that SIGTRAP the program's own (si_code
 * SI_KERNEL: no uprobe there), not the kernel's report of a uprobe?
 * Returns 1 or 0.
 */
int mt_emu_uprobe_own_trap(pid_t tid);

#endif /* MT_EMU_UPROBE_H */
