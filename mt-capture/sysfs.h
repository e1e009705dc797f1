/* SPDX-License-Identifier: MIT */
/*
 * PMU discovery in sysfs: the files type, nr_addr_filters,
 * max_nonturbo_ratio and the directories format/ and caps/ of
 * /sys/bus/event_source/devices/NAME (docs/capture.md).
 *
 * The sysfs root is a parameter (mt-capture passes $MT_SYSFS_ROOT, "" for
 * the real /sys) so tests run on fake trees under tests/data/sysfs/.
 * Format files read "config:LO-HI" or "config1:BIT" (one range; perf allows
 * several, no PT or uprobe field uses that, so several ranges are refused).
 * Caps files hold hex numbers (bitmaps for mtc_periods, cycle_thresholds,
 * psb_periods).  Never prints.
 */
#ifndef MT_CAPTURE_SYSFS_H
#define MT_CAPTURE_SYSFS_H

#include <stddef.h>
#include <stdint.h>

#define MT_PMU_MAX_FORMATS 48

/* One format term: the bits a term occupies in attr.config{,1,2}. */
struct mt_pmu_format {
	char name[32];		/* term name, e.g. "mtc_period" */
	uint8_t field;		/* 0 config, 1 config1, 2 config2 */
	uint8_t lo, hi;		/* bit range, inclusive */
};

struct mt_pmu {
	char name[32];		/* e.g. "intel_pt" */
	char dir[512];		/* ROOT/sys/bus/event_source/devices/NAME */
	uint32_t type;		/* attr.type */
	struct mt_pmu_format fmt[MT_PMU_MAX_FORMATS];
	size_t nfmt;
	int canonical;		/* built in (no sysfs): every cap present */
};

/*
 * Read PMU @name under @root ("" for the real sysfs) into @p.
 * Returns 0, -MT_E_NOPMU when the PMU directory does not exist,
 * -MT_E_CORRUPT (a type or format file is malformed; @msg names it),
 * -MT_E_UNSUPP (several bit ranges in a format), -MT_E_SYS (errno).
 */
int mt_pmu_read(struct mt_pmu *p, const char *root, const char *name,
    char *msg, size_t msgsz);

/* 1 if PMU @name exists under @root, else 0. */
int mt_pmu_exists(const char *root, const char *name);

/*
 * An intel_pt PMU as documented (the IA32_RTIT_CTL layout of the
 * Intel SDM) with every capability present: used to compute the PT
 * configuration the emulate backend records when there is no sysfs.
 */
void mt_pmu_canonical_pt(struct mt_pmu *p);

/* The format term @name, or NULL. */
const struct mt_pmu_format *mt_pmu_format(const struct mt_pmu *p,
    const char *name);

/*
 * Read caps/@cap (hex) or, with @cap containing no '/', a file in the PMU
 * directory itself (decimal, e.g. "max_nonturbo_ratio").  A canonical PMU
 * answers 1 for caps and all-ones for bitmaps.
 * Returns 0, -MT_E_NOTFOUND (no such file), -MT_E_CORRUPT (not a number).
 */
int mt_pmu_cap(const struct mt_pmu *p, const char *cap, uint64_t *v);

/*
 * Put @value into term @f of the config words cfg[3].
 * Returns 0, or -MT_E_LIMIT if @value does not fit the term's bits.
 */
int mt_pmu_format_set(const struct mt_pmu_format *f, uint64_t cfg[3],
    uint64_t value);

#endif /* MT_CAPTURE_SYSFS_H */
