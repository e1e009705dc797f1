/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-capture/ptattr.c: intel_pt attr.config built from the
 * format and caps files of fake sysfs trees (tests/data/sysfs), timing
 * levels as magic-trace's -timer-resolution, explicit terms checked
 * against caps, and the perf_event_attr as perf opens intel_pt.
 */
#include <stdint.h>
#include <string.h>

#include <linux/perf_event.h>

#include "tap.h"
#include "err.h"
#include "../../mt-capture/ptattr.h"
#include "../../mt-capture/sysfs.h"

#define T "tests/data/sysfs/"
#define B(n) (1ull << (n))

static uint64_t
config_for(const char *tree, const char *timing, int *rc, char *warn,
    char *msg)
{
	struct mt_pmu p;
	struct mt_cap_terms terms = { 0 };
	enum mt_cap_timing level = MT_CAP_TIMING_NORMAL;
	uint64_t cfg = 0;

	*rc = mt_pmu_read(&p, tree, "intel_pt", msg, 256);
	if (*rc < 0)
		return 0;
	*rc = mt_ptattr_parse_timing(timing, &level, &terms, msg, 256);
	if (*rc < 0)
		return 0;
	*rc = mt_ptattr_config(&p, level, &terms, &cfg, warn, 512, msg, 256);
	return cfg;
}

static void
levels_on_full_caps(void)
{
	char w[512], m[256];
	int rc;
	uint64_t c;

	/* low: pt, branch, tsc, mtc with mtc_period=3, psb_period=3 */
	c = config_for(T "full", "low", &rc, w, m);
	CHECK(rc == 0);
	CHECK_EQ_U64(c, B(0) | B(13) | B(10) | B(9) | 3ull << 14 |
	    3ull << 24);
	CHECK_STR(w, "");
	/* normal: + cyc, cyc_thresh=1, mtc_period=0 */
	c = config_for(T "full", "normal", &rc, w, m);
	CHECK(rc == 0);
	CHECK_EQ_U64(c, B(0) | B(13) | B(10) | B(9) | B(1) | 1ull << 19 |
	    3ull << 24);
	/* high: + noretcomp */
	c = config_for(T "full", "high", &rc, w, m);
	CHECK(rc == 0);
	CHECK_EQ_U64(c, B(0) | B(13) | B(10) | B(9) | B(1) | 1ull << 19 |
	    3ull << 24 | B(11));
}

static void
explicit_terms_override(void)
{
	char w[512], m[256];
	int rc;
	uint64_t c;

	c = config_for(T "full", "low,psb_period=5,mtc_period=6,noretcomp=1",
	    &rc, w, m);
	CHECK(rc == 0);
	CHECK_EQ_U64(c, B(0) | B(13) | B(10) | B(9) | 6ull << 14 |
	    5ull << 24 | B(11));
	c = config_for(T "full", "cyc=1,cyc_thresh=13,tsc=0", &rc, w, m);
	CHECK(rc == 0);
	CHECK_EQ_U64(c & (B(1) | 0xfull << 19 | B(10)), B(1) | 13ull << 19);
}

static void
terms_checked_against_caps(void)
{
	char w[512], m[256];
	int rc;

	/* mtc_periods = 0x249: bits 0, 3, 6, 9 */
	(void)config_for(T "full", "mtc_period=2", &rc, w, m);
	CHECK(rc == -MT_E_UNSUPP);
	CHECK(strstr(m, "caps/mtc_periods") != NULL);
	(void)config_for(T "full", "psb_period=6", &rc, w, m);
	CHECK(rc == -MT_E_UNSUPP);
	CHECK(strstr(m, "caps/psb_periods") != NULL);
	(void)config_for(T "nocyc", "low,cyc=1", &rc, w, m);
	CHECK(rc == -MT_E_UNSUPP);
	CHECK(strstr(m, "caps/psb_cyc") != NULL);
}

static void
no_cyc_falls_back_to_low(void)
{
	char w[512], m[256];
	int rc;
	uint64_t c;

	/* No psb_cyc, no mtc: normal is low, with a warning; no mtc,
	 * no psb_period. */
	c = config_for(T "nocyc", "normal", &rc, w, m);
	CHECK(rc == 0);
	CHECK_EQ_U64(c, B(0) | B(13) | B(10));
	CHECK(strstr(w, "~1us") != NULL);
}

static void
timing_syntax_errors(void)
{
	enum mt_cap_timing level = MT_CAP_TIMING_NORMAL;
	struct mt_cap_terms t = { 0 };
	char m[256];

	CHECK(mt_ptattr_parse_timing("medium", &level, &t, m, sizeof(m)) ==
	    -MT_E_SYNTAX);
	CHECK(strstr(m, "'medium'") != NULL);
	CHECK(mt_ptattr_parse_timing("cyc=2", &level, &t, m, sizeof(m)) ==
	    -MT_E_SYNTAX);
	CHECK(mt_ptattr_parse_timing("mtc_period=", &level, &t, m,
	    sizeof(m)) == -MT_E_SYNTAX);
	CHECK(mt_ptattr_parse_timing("high,psb_period=0x3", &level, &t, m,
	    sizeof(m)) == 0);
	CHECK(level == MT_CAP_TIMING_HIGH);
	CHECK(t.set == MT_CAP_TERM_PSB_PERIOD && t.psb_period == 3);
}

static void
canonical_pmu_matches_sysfs_layout(void)
{
	struct mt_pmu real, canon;
	struct mt_cap_terms t = { 0 };
	char w[512], m[256];
	uint64_t c1, c2;
	size_t i;

	CHECK(mt_pmu_read(&real, T "full", "intel_pt", m, sizeof(m)) == 0);
	mt_pmu_canonical_pt(&canon);
	CHECK_EQ_U64(canon.nfmt, real.nfmt);
	for (i = 0; i < canon.nfmt && i < real.nfmt; i++) {
		CHECK_STR(canon.fmt[i].name, real.fmt[i].name);
		CHECK_EQ_U64(canon.fmt[i].lo, real.fmt[i].lo);
		CHECK_EQ_U64(canon.fmt[i].hi, real.fmt[i].hi);
	}
	CHECK(mt_ptattr_config(&real, MT_CAP_TIMING_HIGH, &t, &c1, w,
	    sizeof(w), m, sizeof(m)) == 0);
	CHECK(mt_ptattr_config(&canon, MT_CAP_TIMING_HIGH, &t, &c2, w,
	    sizeof(w), m, sizeof(m)) == 0);
	CHECK_EQ_U64(c1, c2);
}

static void
attr_as_perf_opens_it(void)
{
	struct perf_event_attr a;
	struct mt_ptattr_mode md = { .kernel = 0, .enable_on_exec = 1 };

	mt_ptattr_fill(&a, 8, 0x400, &md);
	CHECK_EQ_U64(a.type, 8);
	CHECK_EQ_U64(a.config, 0x400);
	CHECK_EQ_U64(a.size, sizeof(a));
	CHECK_EQ_U64(a.sample_period, 1);
	CHECK_EQ_U64(a.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TID |
	    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER);
	CHECK(a.disabled && a.exclude_kernel && a.exclude_hv);
	CHECK(a.enable_on_exec && a.sample_id_all && !a.inherit);
	md.kernel = 1;
	md.enable_on_exec = 0;
	md.inherit = 1;
	mt_ptattr_fill(&a, 8, 0x400, &md);
	CHECK(!a.exclude_kernel && !a.enable_on_exec && a.inherit);
}

static void
aux_action_at_its_abi_offset(void)
{
	struct perf_event_attr a;
	const uint8_t *b = (const uint8_t *)&a;
	size_t i;

	memset(&a, 0, sizeof(a));
	a.aux_sample_size = 0xffffffffu;
	a.sig_data = ~0ull;
	mt_ptattr_set_aux_action(&a, MT_PTATTR_AUX_PAUSE);
	/* bytes 116..119: the u32 2, little-endian on x86 */
	CHECK_EQ_U64(b[116], 2);
	CHECK_EQ_U64(b[117] | b[118] | b[119], 0);
	/* the neighbours are untouched */
	CHECK_EQ_U64(a.aux_sample_size, 0xffffffffu);
	CHECK_EQ_U64(a.sig_data, ~0ull);
	for (i = 0; i < 112; i++)
		if (b[i] != 0)
			break;
	CHECK_EQ_U64(i, 112);
}

static void
nearest_allowed_value(void)
{
	/* 0x249: 0, 3, 6, 9 */
	CHECK(mt_ptattr_pick(0x249, 3) == 3);
	CHECK(mt_ptattr_pick(0x249, 5) == 3);
	CHECK(mt_ptattr_pick(0x249, 15) == 9);
	/* nothing at or below: the smallest above */
	CHECK(mt_ptattr_pick(0x6, 0) == 1);
	CHECK(mt_ptattr_pick(0x6, 3) == 2);
	CHECK(mt_ptattr_pick(0x1, 3) == 0);
	CHECK(mt_ptattr_pick(0, 3) == -1);
}

static void
level_values_fitted_to_caps(void)
{
	char w[512], m[256];
	int rc;
	uint64_t c;

	/* oddcaps: mtc_periods 0x6, psb_periods 0x1, cycle_thresholds 0x2 */
	c = config_for(T "oddcaps", "low", &rc, w, m);
	CHECK(rc == 0);
	/* mtc_period 3 -> 2, psb_period 3 -> 0 */
	CHECK_EQ_U64(c, B(0) | B(13) | B(10) | B(9) | 2ull << 14);
	CHECK(strstr(w, "mtc_period=3 is not allowed by intel_pt/caps/"
	    "mtc_periods (0x6): using 2") != NULL);
	CHECK(strstr(w, "psb_period=3 is not allowed by intel_pt/caps/"
	    "psb_periods (0x1): using 0") != NULL);
	/* normal: mtc_period 0 with MTC on is checked too: 0 -> 1 */
	c = config_for(T "oddcaps", "normal", &rc, w, m);
	CHECK(rc == 0);
	CHECK_EQ_U64(c, B(0) | B(13) | B(10) | B(9) | 1ull << 14 | B(1) |
	    1ull << 19);
	CHECK(strstr(w, "mtc_period=0 is not allowed") != NULL);
	/* what the user gives is not fitted: refused */
	(void)config_for(T "oddcaps", "low,mtc_period=3", &rc, w, m);
	CHECK(rc == -MT_E_UNSUPP);
	CHECK(strstr(m, "mtc_period=3 is not allowed by intel_pt/caps/"
	    "mtc_periods (0x6)") != NULL);
	(void)config_for(T "oddcaps", "cyc_thresh=3", &rc, w, m);
	CHECK(rc == -MT_E_UNSUPP);
	/* ... nor is mtc_period=0 once MTC is on */
	(void)config_for(T "oddcaps", "low,mtc_period=0", &rc, w, m);
	CHECK(rc == -MT_E_UNSUPP);
	/* an empty mtc_periods: no MTC, as perf */
	c = config_for(T "nomtcperiods", "low", &rc, w, m);
	CHECK(rc == 0);
	CHECK_EQ_U64(c & (B(9) | 0xfull << 14), 0);
	CHECK(strstr(w, "so no MTC packets") != NULL);
	/* full caps: nothing to fit, nothing said */
	(void)config_for(T "full", "low", &rc, w, m);
	CHECK(rc == 0 && w[0] == '\0');
}

int
main(void)
{
	TEST(levels_on_full_caps);
	TEST(explicit_terms_override);
	TEST(terms_checked_against_caps);
	TEST(no_cyc_falls_back_to_low);
	TEST(timing_syntax_errors);
	TEST(canonical_pmu_matches_sysfs_layout);
	TEST(attr_as_perf_opens_it);
	TEST(aux_action_at_its_abi_offset);
	TEST(nearest_allowed_value);
	TEST(level_values_fitted_to_caps);
	return tap_done();
}
