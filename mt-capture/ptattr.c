/* SPDX-License-Identifier: MIT */
/*
 * intel_pt configuration from sysfs formats and caps (see ptattr.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "err.h"
#include "ptattr.h"
#include "sysfs.h"

/* Term table: name, set bit, offset of its value in struct mt_cap_terms,
 * the cap that must be non-zero (or the bitmap the value must be in). */
static const struct term {
	const char *name;
	uint32_t bit;
	size_t off;
	const char *cap;	/* caps/X must be non-zero for value != 0 */
	const char *bitmap;	/* caps/X must have bit (1 << value) set */
	unsigned max;
} terms_tab[] = {
	{ "cyc", MT_CAP_TERM_CYC, offsetof(struct mt_cap_terms, cyc),
	    "caps/psb_cyc", NULL, 1 },
	{ "cyc_thresh", MT_CAP_TERM_CYC_THRESH,
	    offsetof(struct mt_cap_terms, cyc_thresh), NULL,
	    "caps/cycle_thresholds", 15 },
	{ "mtc", MT_CAP_TERM_MTC, offsetof(struct mt_cap_terms, mtc),
	    "caps/mtc", NULL, 1 },
	{ "mtc_period", MT_CAP_TERM_MTC_PERIOD,
	    offsetof(struct mt_cap_terms, mtc_period), NULL,
	    "caps/mtc_periods", 15 },
	{ "noretcomp", MT_CAP_TERM_NORETCOMP,
	    offsetof(struct mt_cap_terms, noretcomp), NULL, NULL, 1 },
	{ "psb_period", MT_CAP_TERM_PSB_PERIOD,
	    offsetof(struct mt_cap_terms, psb_period), NULL,
	    "caps/psb_periods", 15 },
	{ "tsc", MT_CAP_TERM_TSC, offsetof(struct mt_cap_terms, tsc), NULL,
	    NULL, 1 },
};
#define NTERMS (sizeof(terms_tab) / sizeof(terms_tab[0]))

static uint8_t *
term_val(struct mt_cap_terms *t, const struct term *d)
{
	return (uint8_t *)t + d->off;
}

static int
cap_is_set(const struct mt_pmu *pmu, const char *cap)
{
	uint64_t v;

	return mt_pmu_cap(pmu, cap, &v) == 0 && v != 0;
}

/*
 * Whether a bitmap-checked term's value reaches the hardware: mtc_period
 * only with MTC on (then every value, 0 included, must be in
 * caps/mtc_periods, which the kernel checks only for non-zero values),
 * cyc_thresh only with CYC on, psb_period when non-zero or given.
 */
static int
term_in_effect(const struct term *d, const struct mt_cap_terms *v,
    const struct mt_cap_terms *given)
{
	if (d->bit == MT_CAP_TERM_MTC_PERIOD)
		return v->mtc != 0;
	if (d->bit == MT_CAP_TERM_CYC_THRESH)
		return v->cyc != 0;
	return *(const uint8_t *)((const char *)v + d->off) != 0 ||
	    (given->set & d->bit);
}

/*
 * The allowed value nearest @want in @bitmap: the largest not above it,
 * else the smallest above it (perf picks its default mtc_period and
 * psb_period the same way).  -1 when the bitmap is empty.
 */
int
mt_ptattr_pick(uint64_t bitmap, unsigned want)
{
	int pick = -1;
	unsigned b;

	for (b = 0; b < 64; b++) {
		if (!(bitmap & (1ull << b)))
			continue;
		if (b <= want || pick < 0)
			pick = (int)b;
		if (b >= want)
			break;
	}
	return pick;
}

static void
append_note(char *warn, size_t warnsz, const char *text)
{
	size_t n;

	if (warnsz == 0)
		return;
	n = strlen(warn);
	snprintf(warn + n, warnsz - n, "%s%s", n > 0 ? "; " : "", text);
}

/*
 * The level's own values (perf's defaults, normal's cyc_thresh=1 and
 * mtc_period=0) are wishes: where the caps refuse one, take the nearest
 * allowed value and say so in @warn, instead of refusing the capture (a
 * value the user gave is checked strictly later).  An empty mtc_periods
 * bitmap turns MTC off, as perf does.
 */
static void
fit_defaults(const struct mt_pmu *pmu, struct mt_cap_terms *v,
    const struct mt_cap_terms *given, char *warn, size_t warnsz)
{
	size_t i;

	for (i = 0; i < NTERMS; i++) {
		const struct term *d = &terms_tab[i];
		uint8_t *val = term_val(v, d);
		uint64_t bm;
		char t[160];
		int pick;

		if (d->bitmap == NULL || (given->set & d->bit) ||
		    !term_in_effect(d, v, given) ||
		    mt_pmu_cap(pmu, d->bitmap, &bm) < 0 ||
		    (bm & (1ull << *val)))
			continue;
		pick = mt_ptattr_pick(bm, *val);
		if (pick < 0 && d->bit == MT_CAP_TERM_MTC_PERIOD &&
		    !(given->set & MT_CAP_TERM_MTC)) {
			snprintf(t, sizeof(t), "%s=%u: %s/%s is 0x%llx, so "
			    "no MTC packets", d->name, *val, pmu->name,
			    d->bitmap, (unsigned long long)bm);
			append_note(warn, warnsz, t);
			v->mtc = 0;
			*val = 0;
			continue;
		}
		if (pick < 0 || (unsigned)pick > d->max)
			continue;	/* refused with the reason later */
		snprintf(t, sizeof(t), "%s=%u is not allowed by %s/%s "
		    "(0x%llx): using %d", d->name, *val, pmu->name, d->bitmap,
		    (unsigned long long)bm, pick);
		append_note(warn, warnsz, t);
		*val = (uint8_t)pick;
	}
}

int
mt_ptattr_config(const struct mt_pmu *pmu, enum mt_cap_timing level,
    const struct mt_cap_terms *terms, uint64_t *config, char *warn,
    size_t warnsz, char *msg, size_t msgsz)
{
	struct mt_cap_terms v = { 0 };
	uint64_t cfg[3] = { 0, 0, 0 };
	const struct mt_pmu_format *f;
	size_t i;
	int rc;

	if (warnsz > 0)
		warn[0] = '\0';
	/* perf's default intel_pt// */
	v.tsc = 1;
	if (cap_is_set(pmu, "caps/mtc")) {
		v.mtc = 1;
		v.mtc_period = 3;
	}
	if (cap_is_set(pmu, "caps/psb_cyc"))
		v.psb_period = 3;
	if (level != MT_CAP_TIMING_LOW) {
		if (cap_is_set(pmu, "caps/psb_cyc")) {
			v.cyc = 1;
			v.cyc_thresh = 1;
			v.mtc_period = 0;
			if (level == MT_CAP_TIMING_HIGH)
				v.noretcomp = 1;
		} else {
			snprintf(warn, warnsz, "this CPU's PT has no cycle "
			    "counting (caps/psb_cyc is 0): timing granularity "
			    "will be ~1us instead of ~10ns");
		}
	}
	for (i = 0; i < NTERMS; i++) {
		const struct term *d = &terms_tab[i];
		uint8_t val;

		if (!(terms->set & d->bit))
			continue;
		val = *term_val((struct mt_cap_terms *)(uintptr_t)terms, d);
		if (val > d->max) {
			snprintf(msg, msgsz, "%s=%u is out of range (0..%u)",
			    d->name, val, d->max);
			return -MT_E_LIMIT;
		}
		*term_val(&v, d) = val;
	}
	/* Values the level chose, not the user: the nearest the caps allow. */
	fit_defaults(pmu, &v, terms, warn, warnsz);
	/* Check every value against caps, then place it. */
	for (i = 0; i < NTERMS; i++) {
		const struct term *d = &terms_tab[i];
		uint8_t val = *term_val(&v, d);
		uint64_t bm;

		if (d->cap && val != 0 && !cap_is_set(pmu, d->cap)) {
			snprintf(msg, msgsz, "%s=%u needs %s/%s, which this "
			    "PMU does not have", d->name, val, pmu->name,
			    d->cap);
			return -MT_E_UNSUPP;
		}
		if (d->bitmap && term_in_effect(d, &v, terms)) {
			rc = mt_pmu_cap(pmu, d->bitmap, &bm);
			if (rc == 0 && !(bm & (1ull << val))) {
				snprintf(msg, msgsz, "%s=%u is not allowed by "
				    "%s/%s (0x%llx)", d->name, val, pmu->name,
				    d->bitmap, (unsigned long long)bm);
				return -MT_E_UNSUPP;
			}
		}
		f = mt_pmu_format(pmu, d->name);
		if (f == NULL) {
			if (val == 0)
				continue;
			snprintf(msg, msgsz, "%s has no format term '%s'",
			    pmu->name, d->name);
			return -MT_E_UNSUPP;
		}
		if (mt_pmu_format_set(f, cfg, val) < 0) {
			snprintf(msg, msgsz, "%s=%u does not fit format '%s'",
			    d->name, val, d->name);
			return -MT_E_LIMIT;
		}
	}
	/* pt and branch: trace branches (BranchEn). */
	if ((f = mt_pmu_format(pmu, "pt")) != NULL)
		(void)mt_pmu_format_set(f, cfg, 1);
	if ((f = mt_pmu_format(pmu, "branch")) != NULL)
		(void)mt_pmu_format_set(f, cfg, 1);
	*config = cfg[0];
	return 0;
}

void
mt_ptattr_fill(struct perf_event_attr *a, uint32_t type, uint64_t config,
    const struct mt_ptattr_mode *m)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	    PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	a->read_format = PERF_FORMAT_ID;
	a->disabled = 1;
	a->exclude_kernel = m->kernel ? 0 : 1;
	a->exclude_hv = 1;
	a->sample_id_all = 1;
	a->enable_on_exec = m->enable_on_exec ? 1 : 0;
	a->inherit = m->inherit ? 1 : 0;
}

_Static_assert(offsetof(struct perf_event_attr, aux_sample_size) + 4 ==
    MT_PTATTR_AUX_ACTION_OFF, "aux_action follows aux_sample_size");
_Static_assert(offsetof(struct perf_event_attr, sig_data) ==
    MT_PTATTR_AUX_ACTION_OFF + 4, "sig_data follows aux_action");

void
mt_ptattr_set_aux_action(struct perf_event_attr *a, uint32_t bits)
{
	/* Host order, as every attr field (the kernel reads a u32). */
	memcpy((char *)a + MT_PTATTR_AUX_ACTION_OFF, &bits, sizeof(bits));
}

int
mt_ptattr_parse_timing(const char *arg, enum mt_cap_timing *level,
    struct mt_cap_terms *terms, char *msg, size_t msgsz)
{
	char item[64];
	const char *p = arg;

	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		const char *eq;
		size_t i;

		if (n == 0 || n >= sizeof(item)) {
			snprintf(msg, msgsz, "bad --timing item in '%s'", arg);
			return -MT_E_SYNTAX;
		}
		memcpy(item, p, n);
		item[n] = '\0';
		p += n;
		if (*p == ',')
			p++;
		if (strcmp(item, "low") == 0) {
			*level = MT_CAP_TIMING_LOW;
			continue;
		}
		if (strcmp(item, "normal") == 0) {
			*level = MT_CAP_TIMING_NORMAL;
			continue;
		}
		if (strcmp(item, "high") == 0) {
			*level = MT_CAP_TIMING_HIGH;
			continue;
		}
		eq = strchr(item, '=');
		for (i = 0; eq != NULL && i < NTERMS; i++) {
			const struct term *d = &terms_tab[i];
			char *end;
			unsigned long val;

			if (strlen(d->name) != (size_t)(eq - item) ||
			    strncmp(item, d->name, (size_t)(eq - item)) != 0)
				continue;
			errno = 0;
			val = strtoul(eq + 1, &end, 0);
			if (eq[1] == '\0' || *end != '\0' || errno != 0 ||
			    val > d->max) {
				snprintf(msg, msgsz, "bad value in --timing "
				    "term '%s' (0..%u)", item, d->max);
				return -MT_E_SYNTAX;
			}
			*term_val(terms, d) = (uint8_t)val;
			terms->set |= d->bit;
			break;
		}
		if (eq == NULL || i == NTERMS) {
			snprintf(msg, msgsz, "unknown --timing item '%s' "
			    "(low, normal, high, or cyc, cyc_thresh, mtc, "
			    "mtc_period, noretcomp, psb_period, tsc =N)", item);
			return -MT_E_SYNTAX;
		}
	}
	return 0;
}
