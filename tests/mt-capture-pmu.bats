#!/usr/bin/env bats
# Backend choice and Intel PT diagnostics, against fake sysfs trees
# (tests/data/sysfs, MT_SYSFS_ROOT).  This machine has no Intel PT: the
# live path is exercised up to perf_event_open.

setup() {
	S="$MT_ROOT/tests/data/sysfs"
}

@test "mt-capture: --backend pt without an intel_pt PMU points to emulate" {
	MT_SYSFS_ROOT="$S/none" run mt-capture run --backend pt \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"no Intel PT on this machine"* ]]
	[[ "$output" == *"has no intel_pt PMU"* ]]
	[[ "$output" == *"use --backend emulate"* ]]
	[ "${#lines[@]}" -eq 1 ]
	[ ! -e "$BATS_TEST_TMPDIR/x.snap" ]
}

@test "mt-capture: auto without intel_pt or qemu says it uses the emulate backend" {
	# MT_QEMU names no program: the qemu backend is not available
	MT_QEMU=/nonexistent/qemu-x86_64 MT_SYSFS_ROOT="$S/none" \
	    run mt-capture run -o "$BATS_TEST_TMPDIR/x.snap" -- /nonexistent/prog
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == *"no intel_pt PMU: using the emulate backend"* ]]
}

@test "mt-capture: auto with an intel_pt PMU picks pt and says so" {
	MT_SYSFS_ROOT="$S/full" run mt-capture run -o "$BATS_TEST_TMPDIR/x.snap" \
	    -- /nonexistent/prog
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == *"using Intel PT (the intel_pt PMU exists)"* ]]
}

@test "mt-capture: a malformed format file is reported by name" {
	MT_SYSFS_ROOT="$S/badformat" run mt-capture run --backend pt \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"malformed format in '$S/badformat/sys/bus/event_source/devices/intel_pt/format/cyc': 'config:x'"* ]]
}

@test "mt-capture: a timing term the caps refuse is reported with the cap" {
	MT_SYSFS_ROOT="$S/full" run mt-capture run --backend pt \
	    --timing mtc_period=2 -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"mtc_period=2 is not allowed by intel_pt/caps/mtc_periods (0x249)"* ]]
}

@test "mt-capture: normal timing without CYC warns and falls back" {
	MT_SYSFS_ROOT="$S/nocyc" run mt-capture run --backend pt \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- /nonexistent/prog
	[ "$status" -eq 1 ]
	[[ "$output" == *"timing granularity will be ~1us instead of ~10ns"* ]]
}

@test "mt-capture: the fake PMU reaches perf_event_open, which refuses it" {
	# type 8 in the fake tree is not an intel_pt PMU on this kernel
	# (it may be none or another PMU): the open fails with a message,
	# the target never runs, nothing is written.
	MT_SYSFS_ROOT="$S/full" run mt-capture run --backend pt \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- touch "$BATS_TEST_TMPDIR/ran"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot open the intel_pt event"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	[ ! -e "$BATS_TEST_TMPDIR/x.snap" ]
}

@test "mt-capture: --filter ranges resolve to file offsets before PT opens" {
	cc -O1 -o "$BATS_TEST_TMPDIR/worker" -pthread "$MT_ROOT/tests/data/capture/worker.c"
	MT_SYSFS_ROOT="$S/full" run mt-capture run --backend pt \
	    --filter mt_test_hit --filter libc.so.6 \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- "$BATS_TEST_TMPDIR/worker"
	[ "$status" -eq 1 ]
	size=$(nm -S "$BATS_TEST_TMPDIR/worker" | awk '$4 == "mt_test_hit" {print $2}')
	[[ "$output" == *"filter 'mt_test_hit' is mt_test_hit in $BATS_TEST_TMPDIR/worker+0x"*", $((0x$size)) bytes"* ]]
	[[ "$output" == *"filter 'libc.so.6' is the code of /"*"libc.so.6, "* ]]
	[[ "$output" == *"cannot open the intel_pt event"* ]]
	MT_SYSFS_ROOT="$S/full" run mt-capture run --backend pt \
	    --filter no_such_fn -o "$BATS_TEST_TMPDIR/x.snap" -- "$BATS_TEST_TMPDIR/worker"
	[ "$status" -eq 1 ]
	[[ "$output" == *"--filter 'no_such_fn': no function 'no_such_fn'"* ]]
}

@test "mt-capture attach: auto without intel_pt refuses to single-step the process" {
	sleep 30 3>&- &
	tpid=$!
	MT_SYSFS_ROOT="$S/none" run mt-capture attach -p "$tpid" \
	    -o "$BATS_TEST_TMPDIR/x.snap"
	st=$(grep -E '^(State|TracerPid):' "/proc/$tpid/status")
	kill "$tpid"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$output" = "mt-capture: attach: no intel_pt PMU on this machine ($S/none/sys/bus/event_source/devices/intel_pt is missing); the emulate backend would single-step process $tpid with ptrace, about 100000 times slower, so not unasked: use --backend emulate to do that anyway" ]
	[ ! -e "$BATS_TEST_TMPDIR/x.snap" ]
	# never traced
	[[ "$st" == *"TracerPid:	0"* ]]
}

@test "mt-capture attach: --backend emulate without intel_pt is honoured" {
	sleep 30 3>&- &
	tpid=$!
	MT_SYSFS_ROOT="$S/none" run mt-capture attach -b emulate -q \
	    --duration 0.2 -p "$tpid" -o "$BATS_TEST_TMPDIR/x.snap"
	kill "$tpid"
	[ "$status" -eq 0 ]
	[ -s "$BATS_TEST_TMPDIR/x.snap" ]
}
