#!/usr/bin/env bats
# mt-capture run / attach: command-line handling (no target is started).

@test "mt-capture run: --help prints the options and exits 0" {
	run mt-capture run --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "usage: mt-capture run "* ]]
	[[ "$output" == *"--multi-snapshot"* ]]
	[[ "$output" == *"--ready-fd"* ]]
	[[ "$output" == *"Exit status: 0 a snapshot was written (also when the target failed or was killed"* ]]
}

@test "mt-capture attach: --help exits 0" {
	run mt-capture attach --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "usage: mt-capture attach "* ]]
}

@test "mt-capture run: no command is a usage error" {
	run mt-capture run -o x.snap
	[ "$status" -eq 2 ]
	[[ "$output" == *"run needs a command"* ]]
}

@test "mt-capture attach: no -p is a usage error" {
	run mt-capture attach
	[ "$status" -eq 2 ]
	[[ "$output" == *"attach needs -p PID"* ]]
}

@test "mt-capture attach: a bad or repeated pid list is a usage error" {
	run mt-capture attach -p 12,x
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad pid list '12,x'"* ]]
	# an empty element, last or not, or an empty list
	for l in 12, ,12 12,,13 "" " 12" +12 0; do
		run mt-capture attach -p "$l"
		[ "$status" -eq 2 ]
		[[ "$output" == *"bad pid list '$l'"* ]]
	done
	run mt-capture attach -p 12,12
	[ "$status" -eq 2 ]
	[[ "$output" == *"pid 12 given twice"* ]]
}

@test "mt-capture run: a bad --timing names the item" {
	run mt-capture run --timing fast -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown --timing item 'fast'"* ]]
	run mt-capture run --timing cyc_thresh=16 -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"cyc_thresh=16"* ]]
}

@test "mt-capture run: bad sizes, durations and backends are usage errors" {
	run mt-capture run --snapshot-size 4Q -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad --snapshot-size '4Q'"* ]]
	run mt-capture run --duration -1 -- true
	[ "$status" -eq 2 ]
	run mt-capture run --backend gpu -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown backend 'gpu'"* ]]
}

@test "mt-capture run: --multi-snapshot needs a trigger" {
	run mt-capture run --multi-snapshot -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--multi-snapshot needs --trigger"* ]]
}

@test "mt-capture run: --multi-snapshot with -o - is a usage error, nothing runs" {
	run mt-capture run -m -t main -o - -- touch "$BATS_TEST_TMPDIR/ran"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--multi-snapshot writes one file per snapshot"*"not -o -"* ]]
	run mt-capture attach --max-snapshots 2 -t main -o - -p $$
	[ "$status" -eq 2 ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "mt-capture run: a malformed or empty trigger is a usage error" {
	for t in addr:zz addr: addr:0x12g '' hw: hw:addr:q symbol: libm.so.6:; do
		run mt-capture run -b emulate -t "$t" \
		    -o "$BATS_TEST_TMPDIR/x.snap" -- touch "$BATS_TEST_TMPDIR/ran"
		[ "$status" -eq 2 ]
		[[ "$output" == *"--trigger '$t': "* ]]
		[[ "$output" == *"usage: mt-capture run"* ]]
	done
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	[ ! -e "$BATS_TEST_TMPDIR/x.snap" ]
}

@test "mt-capture run: an unknown program fails with exit 1" {
	run mt-capture run -q -o "$BATS_TEST_TMPDIR/x.snap" -- /nonexistent/prog
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot find program '/nonexistent/prog'"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/x.snap" ]
}

@test "mt-capture attach: a pid that does not exist fails with exit 1" {
	run mt-capture attach -q -o "$BATS_TEST_TMPDIR/x.snap" -p 1073741822
	[ "$status" -eq 1 ]
	[[ "$output" == *"no process 1073741822"* ]]
}
