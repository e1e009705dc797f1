/* SPDX-License-Identifier: MIT */
/* The ground-truth logs, at most ground-truth-max bytes (qgt.h). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdio_ext.h>

#include "qemu-ipc.h"
#include "qgt.h"
#include "qthread.h"

static const char *g_dir;
static struct mtq_ctl *g_ctl;
static uint64_t g_max;

void
qg_init(const char *dir, struct mtq_ctl *ctl, uint64_t max)
{
	g_dir = dir;
	g_ctl = ctl;
	g_max = max;
}

void
qg_open(struct vst *v, int idx)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/gt.%d", g_dir, idx);
	v->gt = fopen(path, "we");
}

void
qg_close(struct vst *v, int drop)
{
	if (v->gt == NULL)
		return;
	if (drop)
		__fpurge(v->gt);
	fclose(v->gt);
	v->gt = NULL;
	qt_set_slow(v);
}

void
qt_gt(struct vst *v, const char *kind, uint64_t from, uint64_t to)
{
	char line[96];
	int n;

	if (v->gt == NULL)
		return;
	n = snprintf(line, sizeof(line), "%d %s 0x%llx 0x%llx\n",
	    (int)v->hdr->tid, kind, (unsigned long long)from,
	    (unsigned long long)to);
	if (n <= 0 || (size_t)n >= sizeof(line) ||
	    atomic_fetch_add(&g_ctl->gt_bytes, (uint64_t)n) + (uint64_t)n >
	    g_max) {
		atomic_store(&g_ctl->gt_full, 1);
		qg_close(v, 0);
		return;
	}
	fwrite(line, 1, (size_t)n, v->gt);
}
