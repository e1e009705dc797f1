/* SPDX-License-Identifier: MIT */
/*
 * The intel_pt event's configuration and perf_event_attr, built from the
 * PMU's sysfs format and caps files (docs/capture.md).
 *
 * Timing levels follow magic-trace's -timer-resolution on top of perf's
 * default intel_pt// (pt, branch, tsc; mtc with mtc_period=3 when caps/mtc;
 * psb_period=3 when caps/psb_cyc):
 *   low     perf's defaults;
 *   normal  + cyc=1, cyc_thresh=1, mtc_period=0 (needs caps/psb_cyc: on
 *           parts without CYC it falls back to low with a warning, timing
 *           is then ~1 us instead of ~10 ns);
 *   high    normal + noretcomp=1.
 * Explicit terms override the level's values and are checked against the
 * caps: cyc needs psb_cyc, mtc needs mtc, and mtc_period (whenever MTC is
 * on, 0 included), cyc_thresh (with CYC) and psb_period must be set in the
 * bitmaps mtc_periods, cycle_thresholds and psb_periods.  The level's own
 * values are fitted instead: the nearest allowed value, noted in @warn.  Bits are placed where the format files say, not at fixed
 * positions.  Never prints.
 */
#ifndef MT_CAPTURE_PTATTR_H
#define MT_CAPTURE_PTATTR_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

struct mt_pmu;
struct perf_event_attr;

/*
 * Compute attr.config for @level plus @terms on @pmu into *@config.
 * A non-fatal note (the fallback to low) goes to @warn ("" if none).
 * Returns 0, or -MT_E_UNSUPP with @msg naming the term and the cap or
 * format file that refuses it, or -MT_E_LIMIT (value too wide).
 */
int mt_ptattr_config(const struct mt_pmu *pmu, enum mt_cap_timing level,
    const struct mt_cap_terms *terms, uint64_t *config, char *warn,
    size_t warnsz, char *msg, size_t msgsz);

/*
 * The allowed value nearest @want in a caps bitmap (bit n set: value n
 * allowed): the largest not above @want, else the smallest above it, as
 * perf picks mtc_period and psb_period.  Returns -1 for an empty bitmap.
 */
int mt_ptattr_pick(uint64_t bitmap, unsigned want);

/* How the PT event is opened. */
struct mt_ptattr_mode {
	int kernel;		/* trace the kernel as well as user space */
	int enable_on_exec;	/* run: start disabled, enable at execve */
	int inherit;		/* per-CPU buffers following new threads */
};

/*
 * Fill @a (zeroed first) for the intel_pt event of PMU type @type with
 * @config, as perf 6.1 opens it: sample_period 1, sample_type
 * IP|TID|TIME|CPU|IDENTIFIER, read_format ID, disabled, exclude_hv,
 * exclude_kernel unless @m->kernel, sample_id_all, enable_on_exec and
 * inherit as @m says.
 */
void mt_ptattr_fill(struct perf_event_attr *a, uint32_t type,
    uint64_t config, const struct mt_ptattr_mode *m);

/*
 * aux_action (kernel 6.13+, uapi perf_event.h): the u32 at byte 116 of
 * perf_event_attr, between aux_sample_size (112) and sig_data (120).
 * Headers before 6.13 call it __reserved_3; 6.13+ headers split it into
 * the bits below plus a 29-bit __reserved_3 starting at bit 3, so a field
 * name fits only one header generation.  mt_ptattr_set_aux_action writes
 * the bits at the ABI offset whatever the header (checked at compile
 * time against the offsets of its neighbours).
 */
#define MT_PTATTR_AUX_ACTION_OFF	116
#define MT_PTATTR_AUX_START_PAUSED	0x1u
#define MT_PTATTR_AUX_PAUSE		0x2u
#define MT_PTATTR_AUX_RESUME		0x4u

/* Set attr.aux_action of @a to @bits (MT_PTATTR_AUX_*). */
void mt_ptattr_set_aux_action(struct perf_event_attr *a, uint32_t bits);

/*
 * Parse a --timing argument: a comma-separated list of a level (low,
 * normal, high) and terms NAME=VALUE (cyc, cyc_thresh, mtc, mtc_period,
 * noretcomp, psb_period, tsc).  Fills *@level (default normal) and
 * @terms.  Returns 0, or -MT_E_SYNTAX with @msg naming the bad item.
 */
int mt_ptattr_parse_timing(const char *arg, enum mt_cap_timing *level,
    struct mt_cap_terms *terms, char *msg, size_t msgsz);

#endif /* MT_CAPTURE_PTATTR_H */
