/* SPDX-License-Identifier: MIT */
/*
 * The ptrace stepper's --start-at (emu-trace-int.h): the symbol's address
 * in the main executable, loaded, an int3 planted there while the target
 * runs natively, and stepping from the thread that hits it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "elffile.h"
#include "emu-trace-int.h"
#include "err.h"
#include "proc.h"

/* The file address of the symbol @sym of @e. */
static int
start_sym(struct mt_elf *e, const char *sym, uint64_t *addr)
{
	const struct mt_elf_sym *syms;
	size_t n, i;
	int rc;

	if ((rc = mt_elf_syms(e, &syms, &n)) < 0)
		return rc;
	for (i = 0; i < n; i++)
		if (strcmp(syms[i].name, sym) == 0) {
			*addr = syms[i].start;
			return 0;
		}
	return -MT_E_NOTFOUND;
}

int
mt_emu_trace_check_start(const char *exe, const char *sym, char *msg,
    size_t msgsz)
{
	struct mt_elf *e;
	uint64_t addr;
	int rc;

	if ((rc = mt_elf_open(&e, exe)) < 0) {
		snprintf(msg, msgsz, "--start-at: cannot read ELF file '%s': "
		    "%s", exe, mt_strerror(rc));
		return rc;
	}
	rc = start_sym(e, sym, &addr);
	if (rc < 0)
		snprintf(msg, msgsz, "--start-at: no symbol '%s' in '%s'%s",
		    sym, exe, mt_elf_has_symtab(e) ? "" :
		    " (it has no .symtab: only exported names)");
	mt_elf_free(e);
	return rc;
}

/* The mapping of file offset 0 of @arg, the executable's path. */
static int
is_exe_start(const struct mt_proc_map *m, void *arg)
{
	return m->pgoff == 0 && strcmp(m->path, arg) == 0;
}

/* The address of @sym in the main executable of @pid, loaded. */
static int
resolve_start(pid_t pid, const char *sym, uint64_t *addr)
{
	char exe[4096], path[64];
	const struct mt_elf_seg *segs;
	struct mt_proc_map m;
	struct mt_elf *e = NULL;
	uint64_t minv = ~0ull;
	size_t i, nseg;
	ssize_t len;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	if (len <= 0)
		return -MT_E_SYS;
	exe[len] = '\0';
	if ((rc = mt_elf_open(&e, exe)) < 0)
		return rc;
	rc = start_sym(e, sym, addr);
	if (rc < 0 || mt_elf_type(e) != MT_ELF_DYN)
		goto out;
	/* PIE: the load bias is where the file's lowest segment landed. */
	nseg = mt_elf_segs(e, &segs);
	for (i = 0; i < nseg; i++)
		if (segs[i].vaddr < minv)
			minv = segs[i].vaddr & ~0xfffull;
	if ((rc = mt_proc_find_map(pid, is_exe_start, exe, &m)) == 0)
		*addr += m.start - minv;
out:
	mt_elf_free(e);
	return rc;
}

/* Run natively to start_at: plant an int3 there (th is stopped). */
int
et_plant_start(struct mt_emu_trace *t, struct thr *th)
{
	uint64_t addr;
	long word;
	int rc;

	rc = resolve_start(th->pid, t->o.start_at, &addr);
	if (rc < 0) {
		snprintf(t->msg, t->msgsz, "--start-at: cannot find '%s' in "
		    "the main executable of process %d: %s", t->o.start_at,
		    (int)th->pid, mt_strerror(rc));
		return rc;
	}
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, th->tid, (void *)(uintptr_t)addr, NULL);
	if (errno != 0 || ptrace(PTRACE_POKETEXT, th->tid,
	    (void *)(uintptr_t)addr, (void *)((word & ~0xffL) | 0xcc)) != 0) {
		snprintf(t->msg, t->msgsz, "--start-at: cannot write a "
		    "breakpoint at 0x%llx: %s", (unsigned long long)addr,
		    strerror(errno));
		return -MT_E_SYS;
	}
	t->bp_addr = addr;
	t->bp_orig = word;
	t->bp_pid = th->pid;
	t->phase = PH_WAIT_START;
	return 0;
}

void
et_unplant(struct mt_emu_trace *t, pid_t tid)
{
	if (t->bp_addr == 0)
		return;
	ptrace(PTRACE_POKETEXT, tid, (void *)(uintptr_t)t->bp_addr,
	    (void *)t->bp_orig);
	t->bp_addr = 0;
}

/* The thread stopped at the start-at int3: step from here on. */
int
et_hit_start(struct mt_emu_trace *t, struct thr *th,
    struct user_regs_struct *r)
{
	size_t i;
	int rc;

	r->rip = t->bp_addr;
	et_unplant(t, th->tid);
	if (ptrace(PTRACE_SETREGS, th->tid, NULL, r) != 0)
		return -MT_E_SYS;
	t->phase = PH_STEP;
	rc = et_start_step(t, th, r->rip);
	/* Other threads ran natively: stop them to step or let them go. */
	for (i = 0; i < t->nthr; i++) {
		struct thr *o = &t->thr[i];

		if (o == th || o->gone)
			continue;
		if (o->running)
			ptrace(PTRACE_INTERRUPT, o->tid, NULL, NULL);
	}
	return rc;
}
