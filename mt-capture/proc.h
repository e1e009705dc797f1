/* SPDX-License-Identifier: MIT */
/*
 * What a snapshot records about the target processes and the host, read
 * from /proc and CPUID: PROCESS and THREAD facts, MMAP entries with
 * build-ids, the raw /proc/PID/maps text, the vDSO's bytes (BLOB), the ELF
 * files the process maps (bundled by build-id), and the HOST chunk.
 * Never prints; failures to read one optional item (a vanished file, an
 * unreadable mapping) are skipped, not fatal.
 */
#ifndef MT_CAPTURE_PROC_H
#define MT_CAPTURE_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mt_snap;
struct mt_snap_host;

/* One line of /proc/PID/maps. */
struct mt_proc_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	uint32_t prot;		/* PROT_READ|WRITE|EXEC */
	uint32_t flags;		/* MAP_PRIVATE or MAP_SHARED */
	char path[512];		/* "" for anonymous */
	uint32_t maj, min;	/* device of the file */
	uint64_t ino;		/* its inode; 0 for anonymous */
};

/*
 * The path under which mt-capture opens @path, a file of process @pid as
 * its /proc/PID/maps or exe names it, with device @maj:@min and inode
 * @ino: @path itself when that is the file (same namespace, or a chroot,
 * whose maps read from here show full paths), else /proc/PID/root@path
 * (a container: the path is in its mount namespace, and the same name
 * here may be another file).  Returns 0, or -MT_E_NOTFOUND when neither
 * is that file (then @out is @path).
 */
int mt_proc_target_file(pid_t pid, const char *path, uint32_t maj,
    uint32_t min, uint64_t ino, char *out, size_t outsz);

/*
 * Parse one maps line @line into @m.  Returns 0 or -MT_E_SYNTAX.
 */
int mt_proc_parse_maps_line(const char *line, struct mt_proc_map *m);

/*
 * The first mapping of @pid for which @match(@m, @arg) is nonzero, in @m.
 * Returns 0, -MT_E_NOTFOUND (no such mapping) or -MT_E_SYS (no maps to
 * read: the process is gone or not ours to read).
 */
int mt_proc_find_map(pid_t pid,
    int (*match)(const struct mt_proc_map *, void *), void *arg,
    struct mt_proc_map *m);

/*
 * Likewise in @text, a whole maps file (NUL-terminated; lines are cut in
 * place while parsed and restored).  @match may also visit every mapping
 * by returning 0 each time.
 */
int mt_proc_find_map_in(char *text,
    int (*match)(const struct mt_proc_map *, void *), void *arg,
    struct mt_proc_map *m);

/*
 * Add @pid's PROCESS and THREAD chunks (all threads in /proc/PID/task,
 * or only the main thread when !@all_threads), MMAP chunks with
 * build-ids, the maps TEXT and, when readable, the vDSO BLOB to @s.
 * With @bundle, each executable file mapping with a build-id is added
 * once as an ELF chunk (files over @max_elf bytes are skipped and
 * counted in *@skipped).  Returns 0, -MT_E_NOTFOUND (the process is
 * gone) or -MT_E_NOMEM.
 */
int mt_proc_describe(struct mt_snap *s, pid_t pid, int all_threads,
    int bundle, uint64_t max_elf, size_t *skipped);

/*
 * The maps part of mt_proc_describe from @text (@n bytes of
 * /proc/PID/maps lines, NUL-terminated; tokenized in place): the TEXT
 * chunk, MMAP chunks with build-ids, ELF bundles, the vDSO.  For a
 * backend whose target's maps are not the host process's (qemu).
 */
int mt_proc_describe_maps(struct mt_snap *s, pid_t pid, char *text,
    size_t n, int bundle, uint64_t max_elf, size_t *skipped);

/* The parent process of @pid (/proc/PID/stat), or -1. */
pid_t mt_proc_ppid(pid_t pid);

/* The process thread @tid belongs to (Tgid in /proc/TID/status), or -1. */
pid_t mt_proc_tgid(pid_t tid);

/*
 * List the thread ids of @pid into @tids (at most @max).  Returns the
 * count, or -MT_E_NOTFOUND.
 */
int mt_proc_threads(pid_t pid, pid_t *tids, size_t max);

/*
 * The process tracing @pid (TracerPid in /proc/PID/status; 0: none) and
 * its command name into @comm ("" when unknown).  Returns 0, or
 * -MT_E_NOTFOUND when @pid is gone.
 */
int mt_proc_tracer(pid_t pid, pid_t *tracer, char *comm, size_t commsz);

/*
 * The state letter of @pid from /proc/PID/status ('R', 'S', 'T' stopped,
 * 't' in a ptrace stop...), or 0 when it is gone.
 */
int mt_proc_state(pid_t pid);

/*
 * Fill @h with this CPU's identity from CPUID (vendor, family, model,
 * stepping, leaves 0x14 and 0x15), the number of CPUs, uname release and
 * hostname, and @max_nonturbo_ratio (from sysfs; 0 when unknown).
 * Strings are malloc'd: the caller frees them (or mt_snap_set_host
 * copies them).
 */
void mt_proc_host(struct mt_snap_host *h, uint32_t max_nonturbo_ratio);

/*
 * Resolve the shared-object name @name (a soname like "libm.so.6" or a
 * path) the way @pid's dynamic loader would find it: a path as is; else
 * a mapping of @pid whose file name matches; else LD_LIBRARY_PATH from
 * /proc/PID/environ (ours when @pid <= 0: the child inherits it),
 * /etc/ld.so.cache (glibc's new format), then the default directories.
 * Does not read DT_SONAME, DT_RUNPATH or DT_RPATH.  Writes the real path
 * into @out (at least PATH_MAX bytes); for a target with another mount
 * namespace or root than ours, the paths searched and written are under
 * /proc/PID/root (not resolved: the kernel's lookup jumps into the
 * target's root there).
 * Returns 0 or -MT_E_NOTFOUND.
 */
int mt_proc_find_dso(pid_t pid, const char *name, char *out, size_t outsz);

/* Kernel code the sideband's KSYMBOL records announced (BPF JIT code,
 * trampolines, out-of-line kprobe code), live at a snapshot. */
struct mt_proc_krange {
	uint64_t addr;		/* start */
	uint32_t len;		/* bytes */
	uint16_t type;		/* PERF_RECORD_KSYMBOL_TYPE_* */
	char name[128];		/* its symbol, e.g. bpf_prog_TAG_NAME */
};

/*
 * --kernel: add /proc/kallsyms as a TEXT chunk and the kernel text
 * [_stext, _etext) read from /proc/kcore (as it runs, with its run-time
 * patches) as a BLOB, and each loaded module's memory ([name], from
 * /proc/modules) likewise; then the @njit ranges @jit: as a TEXT chunk
 * of kind perf map (pid 0: "ADDR LEN NAME" in hex, one a line) and, from
 * /proc/kcore, each as a BLOB named by its symbol.  What cannot be read
 * (kptr_restrict, no kcore) is skipped with a note in @warn.  Returns 0
 * or -MT_E_NOMEM.  Called again at each snapshot, so what was loaded or
 * patched meanwhile is there.  The BPF programs loaded now, which no
 * KSYMBOL record announced (loaded before recording started), are added
 * to @jit (kjit.h).
 */
int mt_proc_kernel(struct mt_snap *s, const struct mt_proc_krange *jit,
    size_t njit, char *warn, size_t warnsz);

/* A loaded kernel module (/proc/modules). */
struct mt_proc_module {
	char name[68];		/* "[name]" */
	uint64_t addr;		/* base of its memory */
	uint64_t size;		/* bytes */
};

/*
 * Parse /proc/modules @text (tokenized in place) into @mods (at most
 * @max).  Lines with address 0 (hidden by kptr_restrict) are skipped.
 * Returns the count of modules found (may exceed @max).
 */
size_t mt_proc_parse_modules(char *text, struct mt_proc_module *mods,
    size_t max);

#endif /* MT_CAPTURE_PROC_H */
