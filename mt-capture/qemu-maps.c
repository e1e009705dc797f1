/* SPDX-License-Identifier: MIT */
/*
 * The plugin's maps log into maps text and timed MMAP2 records
 * (qemu-maps.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "buf.h"
#include "err.h"
#include "proc.h"
#include "qemu-maps.h"
#include "sideband.h"
#include "snap.h"

#define SB_TYPE	(MT_SB_ST_TID | MT_SB_ST_TIME)

/*
 * The decimal number [@p, @end) into *@v: digits only (strtoull would
 * take blanks, a sign and an overflow).  Returns 1, or 0 if it is not.
 */
static int
tick_value(const char *p, const char *end, uint64_t *v)
{
	uint64_t x = 0;
	unsigned d;

	if (p == end)
		return 0;
	for (; p < end; p++) {
		d = (unsigned)(*p - '0');
		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return 0;
		x = x * 10 + d;
	}
	*v = x;
	return 1;
}

/*
 * The next whole line of @log[*@pos..@len): its tick in *@tick and its
 * maps part in @line.  A line without a tick is skipped.  Returns 1, or
 * 0 at the end.
 */
static int
next_line(const char *log, size_t len, size_t *pos, uint64_t *tick,
    const char **line, size_t *n)
{
	const char *p = log + *pos, *nl, *sp;

	while (*pos < len) {
		p = log + *pos;
		nl = memchr(p, '\n', len - *pos);
		if (nl == NULL)
			return 0;	/* being written */
		*pos += (size_t)(nl - p) + 1;
		sp = memchr(p, ' ', (size_t)(nl - p));
		if (sp == NULL)
			continue;
		if (!tick_value(p, sp, tick))
			continue;
		*line = sp + 1;
		*n = (size_t)(nl - sp);	/* with the newline */
		return 1;
	}
	return 0;
}

int
mt_qemu_maps_text(const char *log, size_t len, char **out, size_t *outlen)
{
	char *text = malloc(len + 1);
	size_t pos = 0, n, k = 0;
	const char *line;
	uint64_t tick;

	*out = NULL;
	*outlen = 0;
	if (text == NULL)
		return -MT_E_NOMEM;
	text[0] = '\0';
	while (next_line(log, len, &pos, &tick, &line, &n)) {
		char *at = text, *hit = NULL;

		/* A library loaded again is logged again: describe once. */
		while (hit == NULL && at < text + k) {
			if ((size_t)(text + k - at) >= n &&
			    memcmp(at, line, n) == 0)
				hit = at;
			at = memchr(at, '\n', (size_t)(text + k - at));
			at = at != NULL ? at + 1 : text + k;
		}
		if (hit == NULL) {
			memcpy(text + k, line, n);
			k += n;
			text[k] = '\0';
		}
	}
	*out = text;
	*outlen = k;
	return 0;
}

/* The build-id of the MMAP chunk of @s for mapping @m of @pid. */
static void
find_build_id(const struct mt_snap *s, pid_t pid, const struct mt_proc_map *m,
    struct mt_sb_mmap *mm)
{
	size_t i;

	for (i = 0; i < s->nmmaps; i++) {
		const struct mt_snap_mmap *x = &s->mmaps[i];

		if (x->pid == (uint32_t)pid && x->start == m->start &&
		    x->end == m->end && x->pgoff == m->pgoff &&
		    x->build_id_len > 0 && strcmp(x->path, m->path) == 0) {
			mm->build_id_len = x->build_id_len;
			memcpy(mm->build_id, x->build_id, x->build_id_len);
			return;
		}
	}
}

int
mt_qemu_maps_sideband(struct mt_snap *s, pid_t pid, const char *log,
    size_t len)
{
	struct mt_snap_sideband sb;
	struct mt_proc_map m;
	struct mt_sb_rec rec;
	struct mt_wbuf w;
	size_t pos = 0, n;
	const char *line;
	uint64_t tick;
	int rc = 0;

	mt_wbuf_init(&w);
	while (rc >= 0 && next_line(log, len, &pos, &tick, &line, &n)) {
		if (tick == 0 || mt_proc_parse_maps_line(line, &m) < 0 ||
		    m.path[0] != '/')
			continue;
		memset(&rec, 0, sizeof(rec));
		rec.type = MT_SB_MMAP2;
		rec.misc = MT_SB_MISC_USER;
		rec.u.mmap.pid = rec.u.mmap.tid = (uint32_t)pid;
		rec.u.mmap.addr = m.start;
		rec.u.mmap.len = m.end - m.start;
		rec.u.mmap.pgoff = m.pgoff;
		rec.u.mmap.prot = m.prot;
		rec.u.mmap.flags = m.flags;
		rec.u.mmap.filename = m.path;
		find_build_id(s, pid, &m, &rec.u.mmap);
		if (rec.u.mmap.build_id_len > 0)
			rec.misc |= MT_SB_MISC_MMAP_BUILD_ID;
		rec.has_id = 1;
		rec.id.pid = rec.id.tid = (uint32_t)pid;
		rec.id.time = mt_snap_tsc_to_ns(&s->timeconv, tick);
		rc = mt_sb_write(&w, &rec, SB_TYPE);
	}
	if (rc >= 0 && w.len > 0) {
		memset(&sb, 0, sizeof(sb));
		sb.cpu = MT_SNAP_NONE;
		sb.tid = MT_SNAP_NONE;
		sb.sample_type = SB_TYPE;
		sb.len = w.len;
		sb.data = w.p;
		rc = mt_snap_add_sideband(s, &sb);
	}
	mt_wbuf_release(&w);
	return rc < 0 ? rc : 0;
}
