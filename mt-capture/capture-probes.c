/* SPDX-License-Identifier: MIT */
/*
 * The uprobe sites of a snapshot (PROBE chunks, docs/formats/snapshot.md
 * 1.2): where in each target an int3 of a uprobe may sit while PT
 * records.  When PT is not paused at a uprobe, the kernel emulates a
 * probed direct call, jmp or jcc (branch_emulate_op,
 * arch/x86/kernel/uprobes.c): the trace stops at the branch and resumes
 * at its target, and only a decoder that knows the branch was probed
 * can tell that from a gap (mt-decode's image_set_probe).  A TRIGGER
 * chunk names a site only when a hit of it is in the snapshot; these
 * name every site: mt-capture's own triggers, and the uprobes other
 * tools defined in tracefs (uprobe_events), each (file, offset) placed
 * at its run-time address in every target mapping that file, as the
 * snapshot's MMAP chunks and the sideband's MMAP2 records map it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "sideband.h"
#include "tracefs.h"
#include "capture.h"

#define MAX_SITES	256	/* uprobe sites listed per snapshot */

/* A probed file offset, before it is placed in the targets. */
struct site {
	char path[PATH_MAX];	/* as the trigger or uprobe_events names it */
	uint64_t offset;	/* file offset of the probed instruction */
	uint32_t origin;	/* enum mt_snap_probe_origin */
	const char *what;	/* selector, or GROUP/EVENT; not owned */
	int has_id;		/* dev and ino hold the file's identity */
	dev_t dev;
	ino_t ino;
};

struct sites {
	struct site *v;
	size_t n;
	char names[MAX_SITES][128];	/* the other tools' GROUP/EVENT */
};

static void
add_site(struct sites *ss, const char *path, uint64_t offset,
    uint32_t origin, const char *what)
{
	struct site *s;
	struct stat st;
	size_t i;

	for (i = 0; i < ss->n; i++)
		if (ss->v[i].offset == offset &&
		    strcmp(ss->v[i].path, path) == 0)
			return;
	if (ss->n == MAX_SITES)
		return;
	s = &ss->v[ss->n];
	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->offset = offset;
	s->origin = origin;
	s->what = what;
	if (stat(path, &st) == 0) {
		s->has_id = 1;
		s->dev = st.st_dev;
		s->ino = st.st_ino;
	}
	ss->n++;
}

/* A tracefs uprobe: another tool's, or a trigger of mt-capture's own. */
static int
other_tool(void *arg, const char *name, const char *path, uint64_t offset)
{
	struct sites *ss = arg;

	if (ss->n == MAX_SITES)
		return 1;
	snprintf(ss->names[ss->n], sizeof(ss->names[0]), "%s", name);
	add_site(ss, path, offset, MT_SNAP_PROBE_OTHER, ss->names[ss->n]);
	return 0;
}

/*
 * Is the mapping of @pid that names @mpath (with device @maj:@min and
 * inode @ino when @has_id) @s's file?  The same inode, or (unknown) the
 * same path, or the path as the target sees it (/proc/PID/root, a
 * container) being that inode.
 */
static int
same_file(const struct site *s, pid_t pid, const char *mpath, int has_id,
    uint32_t maj, uint32_t min, uint64_t ino)
{
	char p[PATH_MAX + 32];
	struct stat st;

	if (has_id && s->has_id)
		return major(s->dev) == maj && minor(s->dev) == min &&
		    s->ino == ino;
	if (strcmp(s->path, mpath) == 0)
		return 1;
	if (!s->has_id || mpath[0] != '/')
		return 0;
	snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pid, mpath);
	return (stat(p, &st) == 0 || stat(mpath, &st) == 0) &&
	    st.st_dev == s->dev && st.st_ino == s->ino;
}

/* List @s at @addr in @pid once. */
static void
add_probe(struct mt_snap *out, const struct site *s, pid_t pid,
    uint64_t addr)
{
	struct mt_snap_probe p;
	size_t i;

	for (i = 0; i < out->nprobes; i++)
		if (out->probes[i].pid == (uint32_t)pid &&
		    out->probes[i].addr == addr)
			return;
	memset(&p, 0, sizeof(p));
	p.pid = (uint32_t)pid;
	p.origin = s->origin;
	p.addr = addr;
	p.offset = s->offset;
	p.path = (char *)(uintptr_t)s->path;
	p.what = (char *)(uintptr_t)s->what;
	(void)mt_snap_add_probe(out, &p);
}

/* Place every site in a mapping of @pid: [@start, @start + @len) of the
 * file from @pgoff. */
static void
place(struct mt_snap *out, const struct sites *ss, pid_t pid,
    const char *mpath, int has_id, uint32_t maj, uint32_t min, uint64_t ino,
    uint64_t start, uint64_t len, uint64_t pgoff)
{
	size_t i;

	for (i = 0; i < ss->n; i++) {
		const struct site *s = &ss->v[i];

		if (s->offset < pgoff || s->offset - pgoff >= len ||
		    !same_file(s, pid, mpath, has_id, maj, min, ino))
			continue;
		add_probe(out, s, pid, start + (s->offset - pgoff));
	}
}

struct placing {
	struct mt_snap *out;
	const struct sites *ss;
};

/* Place the sites in the mapping of MMAP2 record @rec. */
static void
place_mmap2(void *arg, const struct mt_sb_rec *rec)
{
	const struct placing *p = arg;
	const struct mt_sb_mmap *m = &rec->u.mmap;

	place(p->out, p->ss, (pid_t)m->pid, m->filename,
	    !(rec->misc & MT_SB_MISC_MMAP_BUILD_ID), m->maj, m->min, m->ino,
	    m->addr, m->len, m->pgoff);
}

void
mt_cap_add_probes(struct mt_cap *c, struct mt_snap *out)
{
	struct sites ss;
	size_t i;

	memset(&ss, 0, sizeof(ss));
	ss.v = calloc(MAX_SITES, sizeof(*ss.v));
	if (ss.v == NULL)
		return;
	for (i = 0; i < c->nsites; i++)
		if (!c->sites[i].hw)
			add_site(&ss, c->sites[i].path, c->sites[i].offset,
			    MT_SNAP_PROBE_TRIGGER, c->o->triggers[i]);
	(void)mt_tracefs_uprobes(other_tool, &ss);
	/* The maps read at the snapshot (live targets) ... */
	for (i = 0; ss.n > 0 && i < out->nmmaps; i++) {
		const struct mt_snap_mmap *m = &out->mmaps[i];

		if (m->pid == 0 || !(m->prot & 4) || m->path == NULL ||
		    mt_cap_target_index(c, (pid_t)m->pid) < 0)
			continue;
		place(out, &ss, (pid_t)m->pid, m->path, 0, 0, 0, 0, m->start,
		    m->end - m->start, m->pgoff);
	}
	/* ... and those the sideband saw (later, and exited targets). */
	if (ss.n > 0) {
		struct placing p = { out, &ss };

		mt_cap_sb_mmaps(c, place_mmap2, &p);
	}
	free(ss.v);
}
