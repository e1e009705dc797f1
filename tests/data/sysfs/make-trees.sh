#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerate the fake sysfs trees used by tests/unit/test-sysfs.c,
# test-ptattr.c and tests/mt-capture-pmu.bats (run from this directory).
# Values follow a Skylake-class part's /sys/bus/event_source/devices/intel_pt.
set -eu
D=sys/bus/event_source/devices

pt() {	# pt TREE PSB_CYC MTC
	t=$1/$D/intel_pt
	rm -rf "$1"
	mkdir -p "$t/format" "$t/caps" "$1/$D/uprobe/format"
	echo 8 > "$t/type"
	echo 2 > "$t/nr_addr_filters"
	echo 24 > "$t/max_nonturbo_ratio"
	echo "2 168" > "$t/tsc_art_ratio"
	for f in pt:0 cyc:1 pwr_evt:4 fup_on_ptw:5 mtc:9 tsc:10 noretcomp:11 \
	    ptw:12 branch:13 mtc_period:14-17 cyc_thresh:19-22 \
	    psb_period:24-27; do
		echo "config:${f#*:}" > "$t/format/${f%%:*}"
	done
	echo "$2" > "$t/caps/psb_cyc"
	echo "$3" > "$t/caps/mtc"
	echo 249 > "$t/caps/mtc_periods"
	echo 3fff > "$t/caps/cycle_thresholds"
	echo 3f > "$t/caps/psb_periods"
	echo 1 > "$t/caps/ip_filtering"
	echo 2 > "$t/caps/num_address_ranges"
	echo 0 > "$t/caps/ptwrite"
	echo 9 > "$1/$D/uprobe/type"
	echo config:0 > "$1/$D/uprobe/format/retprobe"
	echo config:32-63 > "$1/$D/uprobe/format/ref_ctr_offset"
}

pt full 1 1
pt nocyc 0 0
pt badformat 1 1
echo "config:x" > badformat/$D/intel_pt/format/cyc
pt multirange 1 1
echo "config:0-3,8-11" > multirange/$D/intel_pt/format/mtc_period
rm -rf none
mkdir -p none/$D/software
echo 1 > none/$D/software/type
# A host with CPUs 2, 3, 6 and 7 offline (of 8): online CPUs are counted
# from the online list, not the configured ones.
pt offline 1 1
mkdir -p offline/sys/devices/system/cpu
echo 0-1,4-5 > offline/sys/devices/system/cpu/online
echo 0-7 > offline/sys/devices/system/cpu/possible
# A part whose caps refuse perf's default periods: mtc_period only 1 or 2,
# psb_period only 0, cyc_thresh only 1; and one whose mtc_periods is empty.
pt oddcaps 1 1
echo 6 > oddcaps/$D/intel_pt/caps/mtc_periods
echo 1 > oddcaps/$D/intel_pt/caps/psb_periods
echo 2 > oddcaps/$D/intel_pt/caps/cycle_thresholds
pt nomtcperiods 1 1
echo 0 > nomtcperiods/$D/intel_pt/caps/mtc_periods
