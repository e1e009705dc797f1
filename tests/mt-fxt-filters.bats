#!/usr/bin/env bats
# mt-fxt's filters and level of detail (--between, --tid, --time,
# --around-trigger, --max-depth, --min-duration, --max-size) on the
# hand-written tests/data/fxt/filter.events: each option set in
# tests/data/fxt/filters.list has its exact expected timeline.

D="$MT_ROOT/tests/data/fxt"
CHK="$MT_ROOT/tests/helpers/fxt-check"
GEN="$MT_ROOT/tests/helpers/gen-events"

# maxrss CMD...: run CMD (stdout discarded), print its peak RSS in KiB.
maxrss() {
	python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
if r.returncode == 0:
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}

# filtered NAME: the line "NAME OPTIONS" of filters.list gives NAME.expected.
filtered() {
	local n=$1 opts
	opts=$(awk -v n="$n" '$1 == n { $1 = ""; print }' "$D/filters.list")
	[ -n "$opts" ]
	# shellcheck disable=SC2086
	run mt-fxt -q $opts -o "$BATS_TEST_TMPDIR/$n.fxt" "$D/filter.events"
	[ "$status" -eq 0 ]
	run "$CHK" --dump "$BATS_TEST_TMPDIR/$n.fxt"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/$n.dump"
	diff -u "$D/$n.expected" "$BATS_TEST_TMPDIR/$n.dump"
}

@test "mt-fxt --between: START..next STOP per thread, open stack re-shown as inferred" {
	filtered filter-between
	# START's caller (step) is inferred at the region start, STOP not shown
	grep -qx '110   +step {address=0x2000, inferred_start_time=true}' "$D/filter-between.expected"
	run grep -c '+stop' "$D/filter-between.expected"
	[ "$output" = 0 ]
}

@test "mt-fxt --between composes with --time" {
	filtered filter-between-time
}

@test "mt-fxt --between with a START never called says so and exits 1 (the trace is empty)" {
	run mt-fxt --between nosuch,stop -o "$BATS_TEST_TMPDIR/e.fxt" "$D/filter.events"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: $D/filter.events: --between: 'nosuch' is never called: the output is empty" ]
	run "$CHK" --dump "$BATS_TEST_TMPDIR/e.fxt"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	run mt-fxt -F summary --between nosuch,stop "$D/filter.events"
	[ "$status" -eq 1 ]
	# read from a pipe, the input is named as the other errors name it
	run sh -c 'mt-fxt -F summary --between nosuch,stop < "$1"' _ "$D/filter.events"
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "mt-fxt: <stdin>: --between: 'nosuch' is never called: the output is empty" ]
}

@test "mt-fxt --tid naming no thread of the stream warns; exit 1 only when nothing is left" {
	run mt-fxt --tid 4242 -o "$BATS_TEST_TMPDIR/t.fxt" "$D/filter.events"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: $D/filter.events: --tid 4242: no such thread in the stream: the output is empty" ]
	# one of two found: a warning, the trace of that thread, exit 0
	run mt-fxt -F folded --tid 4242,50,4343 "$D/filter.events"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "mt-fxt: $D/filter.events: --tid 4242,4343: no such thread in the stream" ]
	[[ "$output" == *"f [tid=50];main"* ]]
	# a big stream through the fast path: the same
	"$GEN" --events 20000 --threads 2 > "$BATS_TEST_TMPDIR/big.ev"
	run mt-fxt --tid 999 -o "$BATS_TEST_TMPDIR/big.fxt" "$BATS_TEST_TMPDIR/big.ev"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: $BATS_TEST_TMPDIR/big.ev: --tid 999: no such thread in the stream: the output is empty" ]
	run mt-fxt --tid 1001 -o "$BATS_TEST_TMPDIR/big.fxt" "$BATS_TEST_TMPDIR/big.ev"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
}

@test "mt-fxt --tid keeps the listed threads" {
	filtered filter-tid
	filtered filter-tids
}

@test "mt-fxt --time FROM,TO keeps that window, frames open at FROM inferred" {
	filtered filter-time
}

@test "mt-fxt --around-trigger BEFORE,AFTER keeps the window around the first hit" {
	filtered filter-around
}

@test "mt-fxt --around-trigger needs a seekable input and a hit" {
	run bash -c "cat '$D/filter.events' | mt-fxt --around-trigger 10,10 -o '$BATS_TEST_TMPDIR/x.fxt'"
	[ "$status" -eq 1 ]
	[[ "$output" == *"needs a file"* ]]
	run mt-fxt --around-trigger 10,10 -o "$BATS_TEST_TMPDIR/x.fxt" "$D/basic.events"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no trigger hit"* ]]
}

@test "mt-fxt --max-depth folds deeper frames into their ancestor" {
	filtered filter-depth
}

@test "mt-fxt --min-duration drops short frames, their time stays in the parent" {
	filtered filter-mindur
	filtered filter-mindur-depth
	run grep -c '+short' "$D/filter-mindur.expected"
	[ "$output" = 0 ]
}

@test "mt-fxt --min-duration: the summary reports dropped frames and time" {
	run mt-fxt -F summary --min-duration 10 "$D/filter.events"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "frames dropped by --min-duration 10: 2, holding 10 ns" ]
	run mt-fxt -F folded --min-duration 10 --tid 50 "$D/filter.events"
	[ "$status" -eq 0 ]
	# short's 5 ns per call stay in work (60 + 5 per step)
	[[ "$output" == *"f [tid=50];main;step;work 140"* ]]
}

@test "mt-fxt --max-size splits the trace into numbered files, each valid" {
	"$GEN" --events 20000 --functions 50 --threads 3 > "$BATS_TEST_TMPDIR/s.events"
	run mt-fxt --max-size 100k -o "$BATS_TEST_TMPDIR/t.fxt" "$BATS_TEST_TMPDIR/s.events"
	[ "$status" -eq 0 ]
	[[ "$output" == "mt-fxt: the trace was split into "*" files (--max-size)" ]]
	[ ! -e "$BATS_TEST_TMPDIR/t.fxt" ]
	n=0 total=0
	for f in "$BATS_TEST_TMPDIR"/t.*.fxt; do
		run "$CHK" --stats "$f"
		[ "$status" -eq 0 ]
		[ "$(stat -c %s "$f")" -le 102400 ]
		n=$((n + 1))
	done
	[ "$n" -ge 3 ]
	[ -e "$BATS_TEST_TMPDIR/t.$n.fxt" ]
	[ -e "$BATS_TEST_TMPDIR/t.1.fxt" ]
	run mt-fxt -o "$BATS_TEST_TMPDIR/whole.fxt" "$BATS_TEST_TMPDIR/s.events"
	[ "$status" -eq 0 ]
	[ -e "$BATS_TEST_TMPDIR/whole.fxt" ]
}

@test "mt-fxt --max-size: a bad line after a split leaves no part of the trace, exit 1" {
	"$GEN" --events 20000 --functions 50 --threads 3 > "$BATS_TEST_TMPDIR/s.events"
	n=$(wc -l < "$BATS_TEST_TMPDIR/s.events")
	echo "call zz 1 0x1 0x2" >> "$BATS_TEST_TMPDIR/s.events"
	mkdir "$BATS_TEST_TMPDIR/out"
	run mt-fxt --max-size 100k -o "$BATS_TEST_TMPDIR/out/t.fxt" "$BATS_TEST_TMPDIR/s.events"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: $BATS_TEST_TMPDIR/s.events: line $((n + 1)): field 1: bad time 'zz'" ]
	run ls -A "$BATS_TEST_TMPDIR/out"
	[ -z "$output" ]
}

@test "mt-fxt --max-size with another format or standard output is a usage error" {
	for f in json folded summary; do
		run mt-fxt -F "$f" --max-size 100k -o "$BATS_TEST_TMPDIR/t.$f" "$D/filter.events"
		[ "$status" -eq 2 ]
		[ "${lines[0]}" = "mt-fxt: --max-size goes with -F fxt" ]
		[ ! -e "$BATS_TEST_TMPDIR/t.$f" ]
	done
	run mt-fxt --max-size 100k -f "$D/filter.events"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "mt-fxt: --max-size needs -o FILE (standard output is not split)" ]
	run mt-fxt --max-size 100k -f -o - "$D/filter.events"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "mt-fxt: --max-size needs -o FILE (standard output is not split)" ]
	# Without --max-size both still work.
	run mt-fxt -F json -o "$BATS_TEST_TMPDIR/t.json" "$D/filter.events"
	[ "$status" -eq 0 ]
	run mt-fxt -f -o - "$D/filter.events"
	[ "$status" -eq 0 ]
}

@test "mt-fxt --min-duration keeps memory constant as the stream grows" {
	"$GEN" --events 100000 --functions 500 --max-depth 30 > "$BATS_TEST_TMPDIR/a.events"
	"$GEN" --events 1000000 --functions 500 --max-depth 30 > "$BATS_TEST_TMPDIR/b.events"
	a=$(maxrss mt-fxt --min-duration 200 -o - "$BATS_TEST_TMPDIR/a.events")
	b=$(maxrss mt-fxt --min-duration 200 -o - "$BATS_TEST_TMPDIR/b.events")
	[ -n "$a" ] && [ -n "$b" ]
	echo "max RSS: $a KiB for 100k events, $b KiB for 1M events"
	# ten times the events, at most 2 MiB more memory
	[ "$b" -le $((a + 2048)) ]
}
