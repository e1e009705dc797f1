/* SPDX-License-Identifier: MIT */
/*
 * Triggers: selectors resolved to (ELF file, file offset)
 * (docs/capture.md).
 *
 * Selector syntax (--trigger):
 *   [DSO:]SYMBOL     a function symbol (.symtab or .dynsym) of the main
 *                    executable (then, when attaching, of the objects it
 *                    maps), or of DSO: a path, or a file name resolved as
 *                    the target's loader would (its mappings, its
 *                    LD_LIBRARY_PATH, /etc/ld.so.cache, the default
 *                    directories), so a library the target dlopens later
 *                    can be named: libm.so.6:cos.  C++ names may hold
 *                    "::"; a prefix is a DSO only if it holds '/' or ".so".
 *                    A C++ function: its mangled symbol, its demangled
 *                    name ("int ns::f<int>(int)", a GCC clone suffix
 *                    optional), or that without return type and
 *                    parameters ("ns::f<int>", "ns::f") when it names
 *                    one function.
 *   addr:0xADDR      attach: a run-time address in a file mapping of the
 *                    first target; run: a file address (as nm prints it)
 *                    in the executable, since run-time addresses of a PIE
 *                    are not known before it starts.
 *   FILE:LINE        the lowest address DWARF's line table gives for that
 *                    source line in the main executable (line:FILE:LINE
 *                    too).  symbol:NAME forces a symbol.
 *   hw:SEL           any of the above as a hardware execute breakpoint
 *                    (PERF_TYPE_BREAKPOINT) instead of a
 *                    uprobe: no CAP_SYS_ADMIN needed, but the code must
 *                    be mapped when recording starts, the x86 debug
 *                    registers allow 4 per thread, and the events are
 *                    per thread (inherited by threads created later).
 *
 * The perf events of resolved sites are trigev.h.  Never prints.
 */
#ifndef MT_CAPTURE_TRIGGER_H
#define MT_CAPTURE_TRIGGER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A resolved selector. */
struct mt_trig_site {
	char path[PATH_MAX];	/* ELF file (real path) */
	uint64_t offset;	/* file offset of the instruction */
	uint64_t vaddr;		/* its file virtual address */
	uint8_t orig;		/* the byte at offset (under the int3) */
	uint64_t size;		/* symbol size in bytes (0: unknown, or not
				 * a symbol) */
	int hw;			/* "hw:" selector: a hardware breakpoint */
	char desc[PATH_MAX + 64];	/* e.g. "cos in /usr/lib/.../libm.so.6" */
};

/*
 * Check the syntax of selector @sel (no file is read): not empty, a hex
 * address after "addr:", something after the last ':'.  Returns 0, or
 * -MT_E_SYNTAX with a one-line reason in @msg.
 */
int mt_trig_check(const char *sel, char *msg, size_t msgsz);

/*
 * Resolve selector @sel for process @pid (attach) or, with @pid <= 0,
 * for the program @exe about to be run.  Returns 0, or -MT_E_SYNTAX /
 * -MT_E_NOTFOUND / -MT_E_ELF with a one-line reason in @msg.
 */
int mt_trig_resolve(const char *sel, pid_t pid, const char *exe,
    struct mt_trig_site *site, char *msg, size_t msgsz);

/*
 * Resolve an IP filter for --filter: [DSO:]SYMBOL as for triggers (the
 * range is the symbol's bytes), or a DSO alone (a path, or a name with
 * ".so"): its executable PT_LOAD segment.  Sets site->offset and
 * site->size.  Returns as mt_trig_resolve().
 */
int mt_trig_resolve_range(const char *sel, pid_t pid, const char *exe,
    struct mt_trig_site *site, char *msg, size_t msgsz);

#endif /* MT_CAPTURE_TRIGGER_H */
