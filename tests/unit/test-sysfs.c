/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for mt-capture/sysfs.c: PMU type, format terms and caps read
 * from the fake sysfs trees in tests/data/sysfs (make-trees.sh).
 */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "err.h"
#include "../../mt-capture/sysfs.h"

#define T "tests/data/sysfs/"

static void
read_full_tree(void)
{
	struct mt_pmu p;
	const struct mt_pmu_format *f;
	char msg[256];
	uint64_t v;

	CHECK(mt_pmu_read(&p, T "full", "intel_pt", msg, sizeof(msg)) == 0);
	CHECK_EQ_U64(p.type, 8);
	CHECK_EQ_U64(p.nfmt, 12);
	f = mt_pmu_format(&p, "mtc_period");
	CHECK(f != NULL);
	if (f != NULL) {
		CHECK_EQ_U64(f->field, 0);
		CHECK_EQ_U64(f->lo, 14);
		CHECK_EQ_U64(f->hi, 17);
	}
	f = mt_pmu_format(&p, "cyc");
	CHECK(f != NULL && f->lo == 1 && f->hi == 1);
	CHECK(mt_pmu_format(&p, "nosuch") == NULL);
	CHECK(mt_pmu_cap(&p, "caps/mtc_periods", &v) == 0);
	CHECK_EQ_U64(v, 0x249);
	CHECK(mt_pmu_cap(&p, "caps/cycle_thresholds", &v) == 0);
	CHECK_EQ_U64(v, 0x3fff);
	CHECK(mt_pmu_cap(&p, "max_nonturbo_ratio", &v) == 0);
	CHECK_EQ_U64(v, 24);
	CHECK(mt_pmu_cap(&p, "caps/nosuch", &v) == -MT_E_NOTFOUND);
}

static void
read_uprobe_config_fields(void)
{
	struct mt_pmu p;
	const struct mt_pmu_format *f;
	char msg[256];

	CHECK(mt_pmu_read(&p, T "full", "uprobe", msg, sizeof(msg)) == 0);
	CHECK_EQ_U64(p.type, 9);
	f = mt_pmu_format(&p, "ref_ctr_offset");
	CHECK(f != NULL && f->lo == 32 && f->hi == 63);
}

static void
missing_pmu(void)
{
	struct mt_pmu p;
	char msg[256];

	CHECK(!mt_pmu_exists(T "none", "intel_pt"));
	CHECK(mt_pmu_exists(T "full", "intel_pt"));
	CHECK(mt_pmu_read(&p, T "none", "intel_pt", msg, sizeof(msg)) ==
	    -MT_E_NOPMU);
	CHECK(strstr(msg, "no 'intel_pt' PMU") != NULL);
}

static void
malformed_format_named(void)
{
	struct mt_pmu p;
	char msg[256];

	CHECK(mt_pmu_read(&p, T "badformat", "intel_pt", msg, sizeof(msg)) ==
	    -MT_E_CORRUPT);
	CHECK(strstr(msg, "format/cyc") != NULL);
	CHECK(strstr(msg, "config:x") != NULL);
	CHECK(mt_pmu_read(&p, T "multirange", "intel_pt", msg,
	    sizeof(msg)) == -MT_E_UNSUPP);
	CHECK(strstr(msg, "format/mtc_period") != NULL);
}

static void
format_set_places_bits(void)
{
	struct mt_pmu_format f = { "x", 1, 32, 63 };
	struct mt_pmu_format g = { "y", 0, 14, 17 };
	uint64_t cfg[3] = { 0, 0, 0 };

	CHECK(mt_pmu_format_set(&f, cfg, 0x1234) == 0);
	CHECK_EQ_U64(cfg[1], 0x1234ull << 32);
	CHECK(mt_pmu_format_set(&g, cfg, 15) == 0);
	CHECK_EQ_U64(cfg[0], 15ull << 14);
	CHECK(mt_pmu_format_set(&g, cfg, 16) == -MT_E_LIMIT);
	CHECK(mt_pmu_format_set(&g, cfg, 2) == 0);
	CHECK_EQ_U64(cfg[0], 2ull << 14);
}

int
main(void)
{
	TEST(read_full_tree);
	TEST(read_uprobe_config_fields);
	TEST(missing_pmu);
	TEST(malformed_format_named);
	TEST(format_set_places_bits);
	return tap_done();
}
