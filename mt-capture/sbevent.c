/* SPDX-License-Identifier: MIT */
/*
 * The dummy sideband event (see sbevent.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "buf.h"
#include "sideband.h"
#include "elffile.h"
#include "err.h"
#include "snap.h"
#include "perfenv.h"
#include "proc.h"
#include "sbevent.h"

struct sb_ring {
	int cpu;		/* CPU of this ring, -1: a thread's */
	pid_t tid;		/* the thread of a per-thread ring, else -1 */
	int fd;			/* the event whose ring it is */
	int *extra;		/* events redirected into it (other tids) */
	size_t nextra;
	void *map;		/* 1 + data_pages pages */
	size_t map_len;
	struct mt_wbuf out;	/* every record drained so far */
	size_t scanned;		/* out bytes whose MMAP2 records were given
				 * build-ids (no_build_id kernels) */
};

/* A file's build-id, computed once (no_build_id kernels). */
struct sb_bid {
	uint32_t maj, min;	/* device, as MMAP2 gives it */
	uint64_t ino;
	uint8_t len;		/* 0: the file has none */
	uint8_t id[20];
};

struct mt_sbev {
	struct sb_ring *rings;
	size_t nrings, caprings;
	int per_thread;		/* one event per thread, no inherit */
	int kernel;		/* --kernel (for mt_perfenv_hint) */
	struct perf_event_attr attr;	/* as the kernel took it */
	size_t page;		/* page size */
	size_t data_pages;
	uint64_t sample_type;
	int kernel_err;		/* errno refusing the CPU-wide --kernel
				 * events, 0: open (or not asked) */
	int no_build_id;	/* the kernel refused attr.build_id (< 5.12):
				 * build-ids come from the files */
	struct sb_bid *bids;	/* cache of computed build-ids */
	size_t nbids;
};

#define SB_SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

static int
peo(struct perf_event_attr *a, pid_t pid, int cpu, int group,
    unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

static void
fill_attr(struct perf_event_attr *a, int kernel, int switches)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_period = 1;
	a->sample_type = SB_SAMPLE_TYPE;
	a->exclude_kernel = kernel ? 0 : 1;
	a->exclude_hv = 1;
	a->inherit = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->context_switch = switches ? 1 : 0;
	a->sample_id_all = 1;
	a->build_id = 1;	/* MMAP2 with build-ids (5.12+) */
	/* Wake poll only when a quarter of the ring is used: the framework
	 * drains on a timer anyway. */
	a->watermark = 1;
}

/*
 * Kernels refuse a whole attr (EINVAL) for a bit they do not know:
 * build_id before 5.12, text_poke before 5.9, ksymbol and bpf_event
 * before 5.1.  As perf does (evsel__open's missing-feature fallback),
 * retry without the newest bit still set, and keep it off for the
 * following events.  Without build_id the build-ids come from the files
 * (sb_add_build_ids); without text_poke and ksymbol, kernel code patched
 * or loaded while recording is not described (--kernel only).
 */
static int
open_sb(struct mt_sbev *s, struct perf_event_attr *a, pid_t tid, int cpu)
{
	int fd = peo(a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	while (fd < 0 && errno == EINVAL) {
		if (a->build_id) {
			a->build_id = 0;
			s->no_build_id = 1;
		} else if (a->text_poke) {
			a->text_poke = 0;
		} else if (a->ksymbol || a->bpf_event) {
			a->ksymbol = 0;
			a->bpf_event = 0;
		} else {
			break;
		}
		fd = peo(a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return fd;
}

/* Map ring @r of event @fd; on failure @msg says why (errno kept). */
static int
map_ring(struct mt_sbev *s, struct sb_ring *r, int fd, char *msg,
    size_t msgsz)
{
	int err;

	r->fd = fd;
	r->map_len = (1 + s->data_pages) * s->page;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0);
	if (r->map == MAP_FAILED) {
		err = errno;
		r->map = NULL;
		mt_perfenv_hint(err, MT_PERFENV_MAP, "the sideband ring",
		    s->kernel, msg, msgsz);
		errno = err;
		return -MT_E_SYS;
	}
	return 0;
}

/* A refused open: the reason in @msg, the status to return. */
static int
open_failed(struct mt_sbev *s, char *msg, size_t msgsz)
{
	int err = errno;

	mt_perfenv_hint(err, MT_PERFENV_OPEN, "the sideband event", s->kernel,
	    msg, msgsz);
	errno = err;
	return err == EACCES || err == EPERM ? -MT_E_PERM : -MT_E_SYS;
}

/* A new ring (zeroed, fd -1) at the end of s->rings, or NULL. */
static struct sb_ring *
new_ring(struct mt_sbev *s)
{
	struct sb_ring *r;

	if (s->nrings == s->caprings) {
		r = realloc(s->rings, (s->caprings * 2 + 8) * sizeof(*r));
		if (r == NULL)
			return NULL;
		s->rings = r;
		s->caprings = s->caprings * 2 + 8;
	}
	r = &s->rings[s->nrings];
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->tid = -1;
	mt_wbuf_init(&r->out);
	return r;
}

/*
 * --kernel: kernel code that changes while recording, TEXT_POKE (5.9+,
 * jump labels, static calls, ftrace), KSYMBOL (5.1+, BPF JIT code and
 * trampolines) and BPF_EVENT, comes from whichever task loads or patches
 * it, so only CPU-wide events see it: the kernel's is_sb_event() leaves
 * a task's events (PERF_ATTACH_TASK) out of the side-band list that
 * perf_iterate_sb() walks besides the current task's own.  One such
 * event per CPU (pid -1), asking for nothing else (as perf adds a
 * system-wide tracking event next to intel_pt when it records the
 * kernel).  Needs CAP_PERFMON or perf_event_paranoid <= 0.
 */
static void
fill_kernel_attr(struct perf_event_attr *a, const struct perf_event_attr *sb)
{
	*a = *sb;
	a->inherit = 0;
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 0;
	a->context_switch = 0;
	a->build_id = 0;
	a->text_poke = 1;
	a->ksymbol = 1;
	a->bpf_event = 1;
}

/*
 * Open the CPU-wide kernel-code events of --kernel: into CPU @cpu's ring
 * if the events are per CPU, else each into a ring of its own.  Refusals
 * (privilege, or a kernel without any of the three records) leave
 * s->kernel_err set and change nothing else; returns 0, or -MT_E_NOMEM /
 * -MT_E_SYS when a ring cannot be set up.
 */
static int
open_kernel_events(struct mt_sbev *s, const int *cpus, int ncpus, char *msg,
    size_t msgsz)
{
	struct perf_event_attr a;
	int i, fd, rc, *nx;
	size_t r;

	fill_kernel_attr(&a, &s->attr);
	for (i = 0; i < ncpus; i++) {
		fd = open_sb(s, &a, -1, cpus[i]);
		if (fd < 0 && errno == ENODEV)
			continue;
		if (fd < 0 || !(a.text_poke || a.ksymbol || a.bpf_event)) {
			s->kernel_err = fd < 0 ? errno : EINVAL;
			if (fd >= 0)
				close(fd);
			return 0;
		}
		for (r = 0; r < s->nrings && s->rings[r].cpu != cpus[i]; r++)
			;
		if (r < s->nrings) {
			struct sb_ring *rg = &s->rings[r];

			nx = realloc(rg->extra, (rg->nextra + 1) *
			    sizeof(*nx));
			if (nx == NULL) {
				close(fd);
				return -MT_E_NOMEM;
			}
			rg->extra = nx;
			rg->extra[rg->nextra++] = fd;
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rg->fd) < 0) {
				snprintf(msg, msgsz, "cannot share the "
				    "sideband ring: %s", strerror(errno));
				return -MT_E_SYS;
			}
			continue;
		}
		{
			struct sb_ring *rg = new_ring(s);

			if (rg == NULL) {
				close(fd);
				return -MT_E_NOMEM;
			}
			rg->cpu = cpus[i];
			if ((rc = map_ring(s, rg, fd, msg, msgsz)) < 0) {
				close(fd);
				return rc;
			}
			s->nrings++;
		}
	}
	return 0;
}

int
mt_sbev_add_thread(struct mt_sbev *s, pid_t tid, char *msg, size_t msgsz)
{
	struct perf_event_attr a;
	struct sb_ring *r;
	size_t i;
	int fd, rc;

	if (s == NULL || !s->per_thread)
		return 0;
	for (i = 0; i < s->nrings; i++)
		if (s->rings[i].tid == tid)
			return 0;
	a = s->attr;
	fd = open_sb(s, &a, tid, -1);
	if (fd < 0 && errno == ESRCH)
		return 0;	/* the thread exited already */
	if (fd < 0)
		return open_failed(s, msg, msgsz);
	s->attr = a;
	if ((r = new_ring(s)) == NULL) {
		close(fd);
		snprintf(msg, msgsz, "out of memory");
		return -MT_E_NOMEM;
	}
	r->cpu = -1;
	r->tid = tid;
	if ((rc = map_ring(s, r, fd, msg, msgsz)) < 0) {
		close(fd);
		return rc;
	}
	s->nrings++;
	return 0;
}

int
mt_sbev_open(struct mt_sbev **out, const pid_t *tids, size_t ntids,
    size_t data_pages, int kernel, int switches, int per_thread, char *msg,
    size_t msgsz)
{
	struct mt_sbev *s;
	int cpus[1024], ncpus, i, rc = 0, err;
	size_t t;

	*out = NULL;
	if (ntids == 0 || data_pages == 0 ||
	    (data_pages & (data_pages - 1)) != 0)
		return -MT_E_INVAL;
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(msg, msgsz, "out of memory");
		return -MT_E_NOMEM;
	}
	s->page = (size_t)sysconf(_SC_PAGESIZE);
	s->data_pages = data_pages;
	s->sample_type = SB_SAMPLE_TYPE;
	s->kernel = kernel;
	s->per_thread = per_thread;
	fill_attr(&s->attr, kernel, switches);
	/* Offline CPUs would refuse with ENODEV. */
	ncpus = mt_perfenv_online_cpus("", cpus, 1024);
	if (per_thread) {
		/*
		 * One event per thread (pid = tid, cpu = -1) with its own
		 * ring: no inherit (the kernel's perf_mmap refuses an
		 * inherited event of cpu -1), and perf_event_set_output
		 * lets a cpu -1 event write only into a ring of its own
		 * task.  Threads created later: mt_sbev_add_thread.
		 */
		s->attr.inherit = 0;
		for (t = 0; t < ntids; t++)
			if ((rc = mt_sbev_add_thread(s, tids[t], msg,
			    msgsz)) < 0)
				goto fail;
		goto done;
	}
	for (i = 0; i < ncpus; i++) {
		struct sb_ring *r = new_ring(s);
		int fd;

		if (r == NULL) {
			rc = -MT_E_NOMEM;
			snprintf(msg, msgsz, "out of memory");
			goto fail;
		}
		r->cpu = cpus[i];
		fd = open_sb(s, &s->attr, tids[0], cpus[i]);
		if (fd < 0 && errno == ENODEV)
			continue;	/* offline CPU */
		if (fd < 0) {
			rc = open_failed(s, msg, msgsz);
			goto fail;
		}
		s->nrings++;
		if ((rc = map_ring(s, r, fd, msg, msgsz)) < 0)
			goto fail;
		r->extra = calloc(ntids, sizeof(int));
		if (r->extra == NULL) {
			rc = -MT_E_NOMEM;
			snprintf(msg, msgsz, "out of memory");
			goto fail;
		}
		for (t = 1; t < ntids; t++) {
			int fx = open_sb(s, &s->attr, tids[t], cpus[i]);

			if (fx < 0 && errno == ESRCH)
				continue;	/* the thread just exited */
			if (fx < 0 || ioctl(fx, PERF_EVENT_IOC_SET_OUTPUT,
			    fd) < 0) {
				err = errno;
				if (fx >= 0)
					close(fx);
				errno = err;
				rc = open_failed(s, msg, msgsz);
				goto fail;
			}
			r->extra[r->nextra++] = fx;
		}
	}
done:
	if (kernel && s->nrings > 0 &&
	    (rc = open_kernel_events(s, cpus, ncpus, msg, msgsz)) < 0)
		goto fail;
	if (s->nrings == 0) {
		snprintf(msg, msgsz, "no %s accepted the sideband event",
		    per_thread ? "thread" : "online CPU");
		rc = -MT_E_SYS;
		goto fail;
	}
	*out = s;
	return 0;
fail:
	mt_sbev_free(s);
	return rc;
}

void
mt_sbev_free(struct mt_sbev *s)
{
	size_t i, k;

	if (s == NULL)
		return;
	for (i = 0; i < s->nrings; i++) {
		struct sb_ring *r = &s->rings[i];

		for (k = 0; k < r->nextra; k++)
			close(r->extra[k]);
		free(r->extra);
		if (r->map != NULL)
			munmap(r->map, r->map_len);
		if (r->fd >= 0)
			close(r->fd);
		mt_wbuf_release(&r->out);
	}
	free(s->rings);
	free(s->bids);
	free(s);
}

/*
 * The build-id of the file an MMAP2 record of the device/inode form names,
 * if the file at that path is still the one mapped (same device and
 * inode).  Returns the cache entry, or NULL when it cannot be known.
 */
static const struct sb_bid *
file_build_id(struct mt_sbev *s, uint32_t pid, uint32_t maj, uint32_t min,
    uint64_t ino, const char *name)
{
	struct sb_bid b, *nb;
	struct mt_elf *e;
	char path[PATH_MAX + 32];
	const uint8_t *id;
	size_t i, n;

	for (i = 0; i < s->nbids; i++)
		if (s->bids[i].maj == maj && s->bids[i].min == min &&
		    s->bids[i].ino == ino)
			return &s->bids[i];
	/* The file itself, also in a container (proc.h). */
	if (mt_proc_target_file((pid_t)pid, name, maj, min, ino, path,
	    sizeof(path)) < 0)
		return NULL;
	memset(&b, 0, sizeof(b));
	b.maj = maj;
	b.min = min;
	b.ino = ino;
	if (mt_elf_open(&e, path) == 0) {
		n = mt_elf_build_id(e, &id);
		if (n > sizeof(b.id))
			n = sizeof(b.id);
		b.len = (uint8_t)n;
		memcpy(b.id, id, n);
		mt_elf_free(e);
	}
	nb = realloc(s->bids, (s->nbids + 1) * sizeof(*nb));
	if (nb == NULL)
		return NULL;
	s->bids = nb;
	s->bids[s->nbids] = b;
	return &s->bids[s->nbids++];
}

/*
 * Kernels without attr.build_id write MMAP2 records with {u32 maj, min;
 * u64 ino, ino_generation} where 5.12+ write {u8 build_id_size, 3
 * reserved, build_id[20]}: the same 24 bytes at body offset 32
 * (include/uapi/linux/perf_event.h, PERF_RECORD_MMAP2).  Rewrite each new record of a file whose build-id is
 * known into the build-id form (misc bit 14), so the snapshot reads as
 * from a 5.12+ kernel: the bundling and the decoder match files by
 * build-id.  Records whose file changed or is gone keep the inode form
 * (the decoder then looks the file up by path).
 */
static void
sb_add_build_ids(struct mt_sbev *s, struct sb_ring *r)
{
	uint8_t *p = r->out.p;
	size_t off = r->scanned;

	while (r->out.len - off >= 8) {
		uint32_t type = mt_le32(p + off);
		uint16_t misc = mt_le16(p + off + 4);
		uint16_t size = mt_le16(p + off + 6);
		const struct sb_bid *b;
		uint8_t *body = p + off + 8;

		if (size < 8 || size > r->out.len - off)
			break;
		if (type == PERF_RECORD_MMAP2 && size >= 8 + 64 + 2 &&
		    !(misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
			char path[4096];
			size_t n = size - 8 - 64;

			if (n >= sizeof(path))
				n = sizeof(path) - 1;
			memcpy(path, body + 64, n);
			path[n] = '\0';
			b = file_build_id(s, mt_le32(body), mt_le32(body + 32),
			    mt_le32(body + 36), mt_le64(body + 40), path);
			if (b != NULL && b->len > 0) {
				memset(body + 32, 0, 24);
				body[32] = b->len;
				memcpy(body + 36, b->id, b->len);
				mt_put_le16(p + off + 4, (uint16_t)(misc |
				    PERF_RECORD_MISC_MMAP_BUILD_ID));
			}
		}
		off += size;
	}
	r->scanned = off;
}

void
mt_sbev_copy_ring(struct perf_event_mmap_page *pg, const uint8_t *data,
    uint64_t size, struct mt_wbuf *out)
{
	uint64_t head, tail, off, n;

	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;
	if (head - tail > size)	/* cannot happen without overwrite */
		tail = head - size;
	while (tail < head) {
		off = tail & (size - 1);
		n = head - tail;
		if (n > size - off)
			n = size - off;
		mt_wbuf_put(out, data + off, (size_t)n);
		tail += n;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

int
mt_sbev_drain(struct mt_sbev *s)
{
	size_t i;

	for (i = 0; i < s->nrings; i++) {
		struct sb_ring *r = &s->rings[i];
		struct perf_event_mmap_page *pg = r->map;
		const uint8_t *data;
		uint64_t size;

		if (pg == NULL)
			continue;
		data = (const uint8_t *)r->map + s->page;
		size = (uint64_t)s->data_pages * s->page;
		mt_sbev_copy_ring(pg, data, size, &r->out);
		if (r->out.err)
			return r->out.err;
		if (s->no_build_id)
			sb_add_build_ids(s, r);
	}
	return 0;
}

size_t
mt_sbev_nrings(const struct mt_sbev *s)
{
	return s->nrings;
}

pid_t
mt_sbev_tid(const struct mt_sbev *s, size_t i)
{
	return i < s->nrings ? s->rings[i].tid : -1;
}

const struct mt_wbuf *
mt_sbev_data(const struct mt_sbev *s, size_t i, int *cpu)
{
	if (i >= s->nrings)
		return NULL;
	if (cpu != NULL)
		*cpu = s->rings[i].cpu;
	return &s->rings[i].out;
}

uint64_t
mt_sbev_sample_type(const struct mt_sbev *s)
{
	return s->sample_type;
}

size_t
mt_sbev_fds(const struct mt_sbev *s, int *fds, size_t max)
{
	size_t i;

	for (i = 0; i < s->nrings && i < max; i++)
		fds[i] = s->rings[i].fd;
	return i;
}

int
mt_sbev_timeconv(const struct mt_sbev *s, struct mt_snap_timeconv *tc)
{
	const volatile struct perf_event_mmap_page *pg;
	uint32_t seq;
	int tries = 0;

	memset(tc, 0, sizeof(*tc));
	if (s == NULL || s->nrings == 0 || s->rings[0].map == NULL)
		return -MT_E_INVAL;
	pg = s->rings[0].map;
	/* The page is updated under a sequence lock. */
	do {
		seq = pg->lock;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		tc->cap_user_time_zero = pg->cap_user_time_zero;
		tc->cap_user_time_short = pg->cap_user_time_short;
		tc->time_zero = pg->time_zero;
		tc->time_mult = pg->time_mult;
		tc->time_shift = pg->time_shift;
		tc->time_cycles = pg->time_cycles;
		tc->time_mask = pg->time_mask;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (pg->lock != seq && ++tries < 1000);
	return 0;
}

/* A record that only tells what happened then: switches, AUX updates. */
static int
is_old_switch(const struct mt_sb_rec *r, uint64_t before)
{
	return (r->type == MT_SB_SWITCH || r->type == MT_SB_SWITCH_CPU_WIDE ||
	    r->type == MT_SB_AUX) && r->has_id && r->id.time < before;
}

size_t
mt_sbev_trim_buf(uint8_t *p, size_t len, uint64_t sample_type,
    uint64_t before)
{
	struct mt_sb_reader rd;
	struct mt_sb_rec rec;
	struct { uint32_t tid; uint64_t off; } *last = NULL, *nl;
	size_t nlast = 0, out = 0, end = 0, i;

	/* Each thread's last switch before @before: its state then. */
	mt_sb_reader_init(&rd, p, len, sample_type, 1, 0);
	while (mt_sb_next(&rd, &rec) == 0) {
		if (!is_old_switch(&rec, before))
			continue;
		for (i = 0; i < nlast && last[i].tid != rec.id.tid; i++)
			;
		if (i == nlast) {
			nl = realloc(last, (nlast + 1) * sizeof(*last));
			if (nl == NULL) {
				free(last);
				return len;	/* keep everything */
			}
			last = nl;
			last[nlast++].tid = rec.id.tid;
		}
		last[i].off = rec.off;
	}
	mt_sb_reader_init(&rd, p, len, sample_type, 1, 0);
	while (mt_sb_next(&rd, &rec) == 0) {
		end = (size_t)rec.off + rec.size;
		if (is_old_switch(&rec, before)) {
			for (i = 0; i < nlast && last[i].off != rec.off; i++)
				;
			if (i == nlast)
				continue;
		}
		if (out != (size_t)rec.off)
			memmove(p + out, p + rec.off, rec.size);
		out += rec.size;
	}
	free(last);
	/* A record the reader refused, and what follows: kept as it is. */
	if (end < len) {
		memmove(p + out, p + end, len - end);
		out += len - end;
	}
	return out;
}

size_t
mt_sbev_trim(struct mt_sbev *s, uint64_t before)
{
	size_t i, dropped = 0;

	for (i = 0; s != NULL && i < s->nrings; i++) {
		struct sb_ring *r = &s->rings[i];
		size_t n = mt_sbev_trim_buf(r->out.p, r->out.len,
		    s->sample_type, before);

		dropped += r->out.len - n;
		r->out.len = n;
		r->scanned = n;
	}
	return dropped;
}

/* A KSYMBOL record, for the time sort of mt_sbev_ksyms_of. */
struct sb_ksym {
	uint64_t time;
	size_t seq;		/* input order, for equal times */
	struct mt_proc_krange r;
	int unreg;
};

static int
ksym_cmp(const void *a, const void *b)
{
	const struct sb_ksym *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

size_t
mt_sbev_ksyms_of(const struct mt_wbuf *bufs, size_t nbufs,
    uint64_t sample_type, struct mt_proc_krange *out, size_t max)
{
	struct sb_ksym *k = NULL, *nk;
	size_t nk_ = 0, cap = 0, i, j, n = 0;

	for (i = 0; i < nbufs; i++) {
		struct mt_sb_reader rd;
		struct mt_sb_rec rec;

		mt_sb_reader_init(&rd, bufs[i].p, bufs[i].len, sample_type, 1,
		    0);
		while (mt_sb_next(&rd, &rec) == 0) {
			struct sb_ksym *e;
			size_t nl;

			if (rec.type != PERF_RECORD_KSYMBOL || rec.body_len < 17)
				continue;
			if (nk_ == cap) {
				nk = realloc(k, (cap * 2 + 16) * sizeof(*k));
				if (nk == NULL)
					goto out;
				k = nk;
				cap = cap * 2 + 16;
			}
			e = &k[nk_];
			memset(e, 0, sizeof(*e));
			e->time = rec.has_id ? rec.id.time : 0;
			e->seq = nk_++;
			e->r.addr = mt_le64(rec.body);
			e->r.len = mt_le32(rec.body + 8);
			e->r.type = mt_le16(rec.body + 12);
			e->unreg = (mt_le16(rec.body + 14) &
			    PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) != 0;
			nl = strnlen((const char *)rec.body + 16,
			    rec.body_len - 16);
			if (nl >= sizeof(e->r.name))
				nl = sizeof(e->r.name) - 1;
			memcpy(e->r.name, rec.body + 16, nl);
		}
	}
	if (nk_ > 0)
		qsort(k, nk_, sizeof(*k), ksym_cmp);
	for (i = 0; i < nk_; i++) {
		for (j = 0; j < n && out[j].addr != k[i].r.addr; j++)
			;
		if (k[i].unreg) {
			if (j < n)
				out[j] = out[--n];
		} else if (j < n) {
			out[j] = k[i].r;
		} else if (n < max) {
			out[n++] = k[i].r;
		}
	}
out:
	free(k);
	return n;
}

size_t
mt_sbev_ksyms(const struct mt_sbev *s, struct mt_proc_krange *out,
    size_t max)
{
	struct mt_wbuf *b;
	size_t i, n;

	if (s == NULL || s->nrings == 0 ||
	    (b = malloc(s->nrings * sizeof(*b))) == NULL)
		return 0;
	for (i = 0; i < s->nrings; i++)
		b[i] = s->rings[i].out;
	n = mt_sbev_ksyms_of(b, s->nrings, s->sample_type, out, max);
	free(b);
	return n;
}

int
mt_sbev_kernel_err(const struct mt_sbev *s)
{
	return s != NULL ? s->kernel_err : 0;
}
