/* SPDX-License-Identifier: MIT */
/*
 * The sideband event: a dummy software event (PERF_TYPE_SOFTWARE,
 * PERF_COUNT_SW_DUMMY) that records MMAP2 (with build-ids), COMM, FORK,
 * EXIT and context SWITCH records for the targets, as perf opens next to
 * intel_pt (docs/capture.md).  Both backends use it: it does not need
 * PT hardware.
 *
 * One event per (thread, CPU) with inherit, so threads and children created
 * later are covered (or, when descriptors are short, one per thread:
 * mt_sbev_open); the events of one CPU share the first one's data ring
 * (PERF_EVENT_IOC_SET_OUTPUT).  The kernel refuses mmap of an inherited
 * event bound to cpu -1, hence per CPU.  mt_sbev_drain copies new records
 * out of each ring (advancing data_tail, so the kernel never overwrites
 * unread records; when the ring is full it writes LOST records instead)
 * into a growing buffer per CPU that holds every record since the start.
 *
 * Kernels before 5.12 refuse attr.build_id (EINVAL): the open is retried
 * once without it, and mt_sbev_drain then rewrites each MMAP2 record into
 * the build-id form from the file it names, when that file's device and
 * inode still match the record's.
 *
 * The first data page also gives the perf clock to TSC conversion
 * (perf_event_mmap_page time_zero, time_mult, time_shift).  Never prints.
 */
#ifndef MT_CAPTURE_SBEVENT_H
#define MT_CAPTURE_SBEVENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mt_sbev;
struct mt_snap_timeconv;
struct mt_wbuf;
struct perf_event_mmap_page;

/*
 * Open the dummy events for threads @tids on every online CPU, with
 * @data_pages (a power of two) data pages per CPU ring.  @kernel: also
 * kernel records (else exclude_kernel, as unprivileged users need).
 * @switches: context-switch records too.  @per_thread: instead, one
 * event per thread (pid = tid, cpu = -1, no inherit), each with a ring of
 * @data_pages: threads x 1 descriptors instead of threads x CPUs, but a
 * thread created later has no event until mt_sbev_add_thread.
 * Returns 0, or -MT_E_PERM / -MT_E_SYS / -MT_E_NOMEM with errno set and a
 * one-line reason in @msg.
 */
int mt_sbev_open(struct mt_sbev **out, const pid_t *tids, size_t ntids,
    size_t data_pages, int kernel, int switches, int per_thread, char *msg,
    size_t msgsz);
/*
 * Per-thread events: open one for thread @tid too (a no-op if it has one,
 * if it has exited, or for per-CPU events, which inherit).  Returns as
 * mt_sbev_open.
 */
int mt_sbev_add_thread(struct mt_sbev *s, pid_t tid, char *msg,
    size_t msgsz);
/*
 * With @kernel, mt_sbev_open also opens one CPU-wide event per CPU for
 * TEXT_POKE, KSYMBOL and BPF_EVENT records (only CPU-wide events get
 * those of other tasks).  The errno that refused them (EACCES: needs
 * CAP_PERFMON or perf_event_paranoid <= 0), or 0.
 */
int mt_sbev_kernel_err(const struct mt_sbev *s);
/* Close the events and free the buffers.  NULL is fine. */
void mt_sbev_free(struct mt_sbev *s);

/* Copy new records of every ring.  Returns 0 or -MT_E_NOMEM. */
int mt_sbev_drain(struct mt_sbev *s);
/*
 * Copy the records between data_tail and data_head of the perf data ring
 * with control page @pg and @size (a power of two) bytes of data at
 * @data into @out, then free them (data_tail = data_head).  An error
 * of @out stays in out->err.
 */
void mt_sbev_copy_ring(struct perf_event_mmap_page *pg, const uint8_t *data,
    uint64_t size, struct mt_wbuf *out);
/* Number of rings (CPUs) and, for ring @i, its CPU and its records. */
size_t mt_sbev_nrings(const struct mt_sbev *s);
const struct mt_wbuf *mt_sbev_data(const struct mt_sbev *s, size_t i,
    int *cpu);
/* The thread of ring @i (per-thread events), or -1 (a CPU's ring). */
pid_t mt_sbev_tid(const struct mt_sbev *s, size_t i);
/* attr.sample_type of the events (the sample_id layout). */
uint64_t mt_sbev_sample_type(const struct mt_sbev *s);
/* Put the rings' fds (for poll) into @fds; returns how many (<= @max). */
size_t mt_sbev_fds(const struct mt_sbev *s, int *fds, size_t max);
/*
 * Keep memory bounded while waiting for a rare trigger: drop the context
 * switch records (SWITCH, SWITCH_CPU_WIDE, by far the most) older than
 * perf time @before from every ring's copy, except each thread's last
 * one before it (where it was then); every other record (maps, COMM,
 * FORK/EXIT: the map and thread state) is kept.  Returns the bytes
 * dropped.  Offsets into mt_sbev_data() buffers are invalid afterwards.
 */
size_t mt_sbev_trim(struct mt_sbev *s, uint64_t before);

/*
 * The same on @len bytes of records at @p with @sample_type (kept records
 * are moved to the front), AUX records (the PT events' own rings) counted
 * with the switches.  Stops at a malformed record, keeping the rest.
 * Returns the new length.
 */
size_t mt_sbev_trim_buf(uint8_t *p, size_t len, uint64_t sample_type,
    uint64_t before);

struct mt_proc_krange;

/*
 * The kernel code ranges the KSYMBOL records of @nbufs record buffers
 * @bufs (@sample_type: their sample_id layout) leave registered, in time
 * order across the buffers: each registration (PERF_RECORD_KSYMBOL:
 * u64 addr, u32 len, u16 ksym_type, u16 flags, char name[]) adds its
 * range, one with PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER removes the range
 * at its address.  At most @max into @out; returns how many.
 */
size_t mt_sbev_ksyms_of(const struct mt_wbuf *bufs, size_t nbufs,
    uint64_t sample_type, struct mt_proc_krange *out, size_t max);
/* The same over every ring's records drained so far. */
size_t mt_sbev_ksyms(const struct mt_sbev *s, struct mt_proc_krange *out,
    size_t max);

/*
 * Time conversion from the first ring's mmap page; cap_user_time_zero
 * is 0 when the kernel offers none.  Returns 0, or -MT_E_INVAL.
 */
int mt_sbev_timeconv(const struct mt_sbev *s, struct mt_snap_timeconv *tc);

#endif /* MT_CAPTURE_SBEVENT_H */
