#!/usr/bin/env bats
# mt-fxt under faults: a full disk and full or null devices as the output,
# a reader that exits early, an event stream of a newer major version, and
# input that stops early.  The input is a generated stream of 30000
# call/return pairs (tests/helpers/faults.bash big_events): its FXT is
# 1.9 MB, its JSON 4 MB, more than a 64 KiB disk or a pipe holds.

load helpers/faults

setup_file() {
	big_events 30000 > "$BATS_FILE_TMPDIR/big.events"
}

setup() {
	B="$BATS_FILE_TMPDIR/big.events"
	M="$BATS_TEST_TMPDIR/mnt"
}

teardown() {
	tiny_fs_done "$M"
}

@test "mt-fxt: -o onto a full device exits 1 with the reason and leaves the device in place" {
	device_node "$BATS_TEST_TMPDIR/full"
	run mt-fxt -o "$BATS_TEST_TMPDIR/full" "$B"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: cannot write '$BATS_TEST_TMPDIR/full': No space left on device" ]
	[ -c "$BATS_TEST_TMPDIR/full" ]
	run ls "$BATS_TEST_TMPDIR"
	[ "$output" = "full" ]
}

@test "mt-fxt: -o onto a null device writes into it and leaves it a device" {
	# Never /dev/null itself: a regression would replace the system's.
	mknod "$BATS_TEST_TMPDIR/null" c 1 3
	run mt-fxt -o "$BATS_TEST_TMPDIR/null" "$B"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ -c "$BATS_TEST_TMPDIR/null" ]
}

@test "mt-fxt: standard output on a full device exits 1 with the reason" {
	run bash -c 'mt-fxt -F json "$1" > /dev/full' _ "$B"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: cannot write '-': No space left on device" ]
}

@test "mt-fxt: a disk that fills up exits 1, and nothing is left under the output name" {
	tiny_fs "$M" 64k
	run mt-fxt -o "$M/trace.fxt" "$B"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: cannot write '$M/trace.fxt': No space left on device" ]
	run ls -A "$M"
	[ "$output" = "" ]
}

@test "mt-fxt: a disk that fills up while compressing leaves no partial trace.fxt.gz" {
	tiny_fs "$M" 64k
	run mt-fxt -o "$M/trace.fxt.gz" "$B"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: cannot write '$M/trace.fxt.gz': No space left on device" ]
	run ls -A "$M"
	[ "$output" = "" ]
}

@test "mt-fxt: a full disk leaves an existing output file as it was" {
	tiny_fs "$M" 64k
	echo previous > "$M/trace.json"
	run mt-fxt -F json -o "$M/trace.json" "$B"
	[ "$status" -eq 1 ]
	[ "$(cat "$M/trace.json")" = previous ]
	run ls -A "$M"
	[ "$output" = "trace.json" ]
}

@test "mt-fxt: a reader that exits early (| head -1) stops it quietly by SIGPIPE" {
	pipe_head mt-fxt -F json "$B"
	[ "$pout" = '{"displayTimeUnit":"ns","traceEvents":[' ]
	[ "$perr" = "" ]
	[ "$pstatus" -eq 141 ]
}

@test "mt-fxt: with SIGPIPE ignored by its parent, an early reader exit is still quiet" {
	pipe_head_ign mt-fxt -F json "$B"
	[ "$pout" = '{"displayTimeUnit":"ns","traceEvents":[' ]
	[ "$perr" = "" ]
	[ "$pstatus" -eq 141 ]
}

@test "mt-fxt: an event stream of a newer major version is refused with a clear error" {
	printf 'mt-events 2.0\ncall 1 1 0x1 0x2\n' > "$BATS_TEST_TMPDIR/v2.events"
	run mt-fxt -o "$BATS_TEST_TMPDIR/out.fxt" "$BATS_TEST_TMPDIR/v2.events"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: $BATS_TEST_TMPDIR/v2.events: line 1: field 1: unsupported event stream version 2.0 (this reader: 1.x)" ]
	[ ! -e "$BATS_TEST_TMPDIR/out.fxt" ]
}

@test "mt-fxt: a stream cut inside a record is an error naming the line, and no output is left" {
	head -c 100000 "$B" | head -c 99990 > "$BATS_TEST_TMPDIR/cut.events"
	printf 'call 9 42 0x40' >> "$BATS_TEST_TMPDIR/cut.events"
	printf 'zz\n' >> "$BATS_TEST_TMPDIR/cut.events"
	run mt-fxt -o "$BATS_TEST_TMPDIR/out.fxt" "$BATS_TEST_TMPDIR/cut.events"
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-fxt: $BATS_TEST_TMPDIR/cut.events: line "[0-9]*": field "[0-9]*": "* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out.fxt" ]
}

@test "mt-fxt: a stream with no stacks gives empty folded and summary outputs (fuzz: qsort of nothing)" {
	printf 'mt-events 1.0\n' > "$BATS_TEST_TMPDIR/empty.events"
	run mt-fxt -F folded "$BATS_TEST_TMPDIR/empty.events"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	run mt-fxt -F summary -o "$BATS_TEST_TMPDIR/summary" "$BATS_TEST_TMPDIR/empty.events"
	[ "$status" -eq 0 ]
}
