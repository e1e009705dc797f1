#!/usr/bin/env bats
# mt-decode under faults: a reader that goes away early, a full disk, a
# device as the output, and a snapshot from a newer major format version.
# The snapshots are the real traces of $MT_SHARED/testdata/real-pt imported
# with mt-capture import-raw (mruby decodes to 3.3 MB of events: more than
# a pipe holds, so an early reader exit is seen while writing).

load helpers/faults
load helpers/real-pt

setup_file() {
	[ -f "$RP/unzip/trace" ] && [ -f "$RP/mruby/trace" ] || return 0
	T="$BATS_FILE_TMPDIR"
	real_pt_snap unzip "$T/unzip.snap"
	real_pt_snap mruby "$T/mruby.snap"
}

setup() {
	T="$BATS_FILE_TMPDIR"
	M="$BATS_TEST_TMPDIR/mnt"
	[ -f "$RP/unzip/trace" ] && [ -f "$RP/mruby/trace" ] ||
		skip "needs the real traces in $RP (unzip, mruby)"
}

teardown() {
	tiny_fs_done "$M"
}

@test "mt-decode: a reader that exits early (| head -1) stops it quietly by SIGPIPE" {
	pipe_head mt-decode "$T/mruby.snap"
	[ "$pout" = "mt-events 1.2" ]
	[ "$perr" = "" ]
	[ "$pstatus" -eq 141 ]
}

@test "mt-decode: with SIGPIPE ignored by its parent, an early reader exit is still quiet" {
	pipe_head_ign mt-decode "$T/mruby.snap"
	[ "$pout" = "mt-events 1.2" ]
	[ "$perr" = "" ]
	[ "$pstatus" -eq 141 ]
}

@test "mt-decode: standard output on a full device exits 1 naming the error" {
	run bash -c 'mt-decode "$1" > /dev/full' _ "$T/unzip.snap"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-decode: cannot write '-': No space left on device" ]
}

@test "mt-decode: -o onto a full device writes into it, exits 1 and leaves the device in place" {
	device_node "$BATS_TEST_TMPDIR/full"
	run mt-decode -o "$BATS_TEST_TMPDIR/full" "$T/unzip.snap"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-decode: cannot write '$BATS_TEST_TMPDIR/full': No space left on device" ]
	[ -c "$BATS_TEST_TMPDIR/full" ]
	run ls "$BATS_TEST_TMPDIR"
	[ "$output" = "full" ]
}

@test "mt-decode: -o onto a null device decodes into it and leaves it a device" {
	# Never /dev/null itself: a regression would replace the system's.
	mknod "$BATS_TEST_TMPDIR/null" c 1 3
	run mt-decode -o "$BATS_TEST_TMPDIR/null" "$T/unzip.snap"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ -c "$BATS_TEST_TMPDIR/null" ]
}

@test "mt-decode: a disk that fills up exits 1, and nothing is left under the output name" {
	tiny_fs "$M" 64k
	run mt-decode -o "$M/mruby.ev" "$T/mruby.snap"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-decode: cannot write '$M/mruby.ev': No space left on device" ]
	run ls -A "$M"
	[ "$output" = "" ]
}

@test "mt-decode: a full disk does not touch an existing output file" {
	tiny_fs "$M" 64k
	echo previous > "$M/mruby.ev"
	run mt-decode -o "$M/mruby.ev" "$T/mruby.snap"
	[ "$status" -eq 1 ]
	[ "$(cat "$M/mruby.ev")" = previous ]
	run ls -A "$M"
	[ "$output" = "mruby.ev" ]
}

@test "mt-decode: a snapshot of a newer major version is refused with a clear error" {
	newer_major "$T/unzip.snap" 2 "$BATS_TEST_TMPDIR/v2.snap"
	run mt-decode -o "$BATS_TEST_TMPDIR/out.ev" "$BATS_TEST_TMPDIR/v2.snap"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-decode: '$BATS_TEST_TMPDIR/v2.snap': snapshot format version 2.0 at offset 8 is not supported (this reader: 1.x)" ]
	[ ! -e "$BATS_TEST_TMPDIR/out.ev" ]
}

@test "mt-decode: a snapshot cut short is refused with its byte offset" {
	head -c 100000 "$T/unzip.snap" > "$BATS_TEST_TMPDIR/cut.snap"
	run mt-decode -o "$BATS_TEST_TMPDIR/out.ev" "$BATS_TEST_TMPDIR/cut.snap"
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-decode: '$BATS_TEST_TMPDIR/cut.snap': truncated "*" at offset "[0-9]* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out.ev" ]
}
