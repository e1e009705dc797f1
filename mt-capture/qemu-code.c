/* SPDX-License-Identifier: MIT */
/*
 * The plugin's code log into JIT BLOBs (qemu-code.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "qemu-code.h"
#include "qemu-ipc.h"
#include "snap.h"

struct coderec {
	uint64_t addr;		/* guest address */
	uint32_t len;		/* bytes */
	size_t off;		/* of the bytes in the log */
	uint64_t since;		/* tick from which they are the code there */
};

static int
cmp_rec(const void *a, const void *b)
{
	const struct coderec *x = a, *y = b;

	if (x->since != y->since)
		return x->since < y->since ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int
cmp_off(const void *a, const void *b)
{
	const struct coderec *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * The records of @log into *@recs (malloc'd), *@n of them.  The log is
 * written by mt's own plugin on this host: host byte order.
 */
static int
read_recs(const uint8_t *log, size_t len, struct coderec **recs, size_t *n)
{
	struct coderec *r = NULL, *nr;
	size_t off = 0, cap = 0, k = 0;
	struct mtq_code h;

	while (len - off >= sizeof(h)) {
		memcpy(&h, log + off, sizeof(h));
		if (h.len > len - off - sizeof(h))
			break;
		off += sizeof(h);
		if (h.len == 0 || h.addr > UINT64_MAX - h.len) {
			off += h.len;	/* nothing, or past the end of memory */
			continue;
		}
		if (k == cap) {
			cap = cap ? 2 * cap : 64;
			if ((nr = realloc(r, cap * sizeof(*r))) == NULL) {
				free(r);
				return -MT_E_NOMEM;
			}
			r = nr;
		}
		r[k].addr = h.addr;
		r[k].len = h.len;
		r[k].off = off;
		r[k].since = h.since;
		k++;
		off += h.len;
	}
	*recs = r;
	*n = k;
	return 0;
}

int
mt_qemu_code_blobs(struct mt_snap *s, pid_t pid, const uint8_t *log,
    size_t len)
{
	struct coderec *recs;
	struct mt_snap_blob b;
	size_t n, i, j, k;
	int rc;

	rc = read_recs(log, len, &recs, &n);
	if (rc < 0)
		return rc;
	if (n > 0)
		qsort(recs, n, sizeof(*recs), cmp_rec);
	for (i = 0; i < n && rc == 0; i = j) {
		uint64_t end = recs[i].addr + recs[i].len;

		for (j = i + 1; j < n && recs[j].since == recs[i].since &&
		    recs[j].addr <= end; j++)
			if (recs[j].addr + recs[j].len > end)
				end = recs[j].addr + recs[j].len;
		memset(&b, 0, sizeof(b));
		b.pid = (uint32_t)pid;
		b.kind = MT_SNAP_BLOB_JIT;
		b.addr = recs[i].addr;
		b.name = (char *)(uintptr_t)"[jit]";
		b.len = end - b.addr;
		b.time = recs[i].since;
		if ((b.data = calloc(1, (size_t)b.len)) == NULL) {
			rc = -MT_E_NOMEM;
			break;
		}
		/* In translation order, so later bytes overwrite. */
		qsort(recs + i, j - i, sizeof(*recs), cmp_off);
		for (k = i; k < j; k++)
			memcpy(b.data + (recs[k].addr - b.addr),
			    log + recs[k].off, recs[k].len);
		rc = mt_snap_add_blob(s, &b);
		free(b.data);
	}
	free(recs);
	return rc;
}
