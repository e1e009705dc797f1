#!/usr/bin/env bats
# Robustness: random well-formed streams (every event kind, undefined and
# zero loc ids, inlined chains, repeated and backward times, errors, kernel
# addresses) always give a valid trace in every format, and streams cut at
# any line give a valid trace or a line-numbered error, never a crash.

CHK="$MT_ROOT/tests/helpers/fxt-check"
JCHK="$MT_ROOT/tests/helpers/json-check"
RND="$MT_ROOT/tests/helpers/gen-random-events"

@test "mt-fxt: 60 random streams give valid FXT and JSON, and all formats exit 0" {
	for seed in $(seq 1 60); do
		"$RND" "$seed" > "$BATS_TEST_TMPDIR/r.events"
		run mt-fxt -q -o "$BATS_TEST_TMPDIR/r.fxt" "$BATS_TEST_TMPDIR/r.events"
		[ "$status" -eq 0 ] || { echo "seed $seed: $output"; false; }
		run "$CHK" "$BATS_TEST_TMPDIR/r.fxt"
		[ "$status" -eq 0 ] || { echo "seed $seed: $output"; false; }
		run mt-fxt -q -F json -o "$BATS_TEST_TMPDIR/r.json" "$BATS_TEST_TMPDIR/r.events"
		[ "$status" -eq 0 ]
		run "$JCHK" "$BATS_TEST_TMPDIR/r.json"
		[ "$status" -eq 0 ] || { echo "seed $seed: $output"; false; }
		run mt-fxt -q -F summary --function f1 --min-duration 5 "$BATS_TEST_TMPDIR/r.events"
		[ "$status" -eq 0 ]
		run mt-fxt -q -F folded --max-depth 2 --between f1,f2 "$BATS_TEST_TMPDIR/r.events"
		[ "$status" -eq 0 ] || [ "$output" = "mt-fxt: $BATS_TEST_TMPDIR/r.events: --between: 'f1' is never called: the output is empty" ]
		run mt-fxt -q --time 10,200 --min-duration 3 -o "$BATS_TEST_TMPDIR/t.fxt" "$BATS_TEST_TMPDIR/r.events"
		[ "$status" -eq 0 ]
		run "$CHK" "$BATS_TEST_TMPDIR/t.fxt"
		[ "$status" -eq 0 ] || { echo "seed $seed (--time): $output"; false; }
	done
}

@test "mt-fxt: a stream cut after any line gives a valid trace" {
	"$RND" 7 > "$BATS_TEST_TMPDIR/full.events"
	total=$(wc -l < "$BATS_TEST_TMPDIR/full.events")
	for n in $(seq 1 3 "$total"); do
		head -n "$n" "$BATS_TEST_TMPDIR/full.events" > "$BATS_TEST_TMPDIR/cut.events"
		run mt-fxt -q -o "$BATS_TEST_TMPDIR/cut.fxt" "$BATS_TEST_TMPDIR/cut.events"
		[ "$status" -eq 0 ] || { echo "cut at $n: $output"; false; }
		run "$CHK" "$BATS_TEST_TMPDIR/cut.fxt"
		[ "$status" -eq 0 ]
	done
}

@test "mt-fxt: a stream cut inside a line is valid or a line-numbered error" {
	"$RND" 3 > "$BATS_TEST_TMPDIR/full.events"
	size=$(stat -c %s "$BATS_TEST_TMPDIR/full.events")
	for n in $(seq 20 97 "$size"); do
		head -c "$n" "$BATS_TEST_TMPDIR/full.events" > "$BATS_TEST_TMPDIR/cut.events"
		run mt-fxt -q -o "$BATS_TEST_TMPDIR/cut.fxt" "$BATS_TEST_TMPDIR/cut.events"
		if [ "$status" -eq 1 ]; then
			[[ "$output" == *": line "* ]]
		else
			[ "$status" -eq 0 ]
		fi
	done
}

@test "mt-fxt: newlines and ';' in names cannot break folded or summary lines" {
	printf '%s\n' 'mt-events 1.0' 'info symbolized 1' 'proc 1 p ./p' \
	    'thread 1 1 t%0ax;y' 'fn 1 0x1000 /p a%0ab;c%20d%7f' 'file 1 /x.c' \
	    'loc 1 0x1000 1:1:3' 'call 1 1 0x1000 0x1000 @1 @1' \
	    'trigger 2 1 0x1000 w%0dz' 'end 5 1' > "$BATS_TEST_TMPDIR/ctl.ev"
	run mt-fxt -F folded "$BATS_TEST_TMPDIR/ctl.ev"
	[ "$status" -eq 0 ]
	[ "$output" = "t_x_y [tid=1];a_b_c d_;a_b_c d_ 4" ]
	run mt-fxt -F summary "$BATS_TEST_TMPDIR/ctl.ev"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "trigger 1 at 2 ns on t_x_y [tid=1]: w_z" ]
	[ "${lines[2]}" = "  a_b;c d_" ]
	[ "${lines[3]}" = "  a_b;c d_" ]
	[ "${lines[6]}" = "             4              4          2  a_b;c d_" ]
	[ "${#lines[@]}" -eq 10 ]
}
