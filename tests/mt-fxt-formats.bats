#!/usr/bin/env bats
# mt-fxt's other formats from the same reconstruction: Chrome JSON (parsed
# by Python's JSON parser, B/E nesting checked), folded stacks (exact, see
# mt-fxt-policies.bats) and the text summary (exact).

D="$MT_ROOT/tests/data/fxt"
CHK="$MT_ROOT/tests/helpers/fxt-check"
JCHK="$MT_ROOT/tests/helpers/json-check"

@test "mt-fxt: --format json parses, nests, and has as many B events as FXT begins" {
	for ev in "$D"/*.events; do
		n=$(basename "$ev" .events)
		run mt-fxt -q -F json -o "$BATS_TEST_TMPDIR/$n.json" "$ev"
		[ "$status" -eq 0 ]
		run "$JCHK" --count "$BATS_TEST_TMPDIR/$n.json"
		[ "$status" -eq 0 ]
		# FXT shows trigger hits as slices, JSON as instants
		[ "$output" = "B $(grep '^[0-9]* *+' "$D/$n.expected" | grep -vc '+hit ')" ]
	done
}

@test "mt-fxt: JSON timestamps are microseconds with nanosecond precision" {
	run mt-fxt -F json "$D/spread1.events"
	[ "$status" -eq 0 ]
	[[ "$output" == *'"name":"b","ph":"B","ts":0.050,'* ]]
	[[ "$output" == *'"name":"thread_name","ph":"M","pid":2,"tid":2,"args":{"name":"s [tid=2]"}'* ]]
}

@test "mt-fxt: json-check rejects a broken nesting (the check can fail)" {
	printf '{"traceEvents":[{"name":"process_name","ph":"M","pid":1,"tid":1,"args":{"name":"p"}},{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"t"}},{"name":"a","ph":"B","ts":1,"pid":1,"tid":1},{"name":"b","ph":"E","ts":2,"pid":1,"tid":1}]}' > "$BATS_TEST_TMPDIR/bad.json"
	run "$JCHK" "$BATS_TEST_TMPDIR/bad.json"
	[ "$status" -eq 1 ]
}

@test "mt-fxt: summary shows the stack at each trigger and top functions" {
	run mt-fxt -F summary "$D/trigger.events"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/s"
	diff -u "$D/trigger.summary" "$BATS_TEST_TMPDIR/s"
}

@test "mt-fxt: summary counts recursion once and draws --function's histogram" {
	run mt-fxt -F summary --function f "$D/recursion.events"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/s"
	diff -u "$D/recursion.summary" "$BATS_TEST_TMPDIR/s"
}

@test "mt-fxt: text formats may go to a terminal, to a file they are plain" {
	run script -qec "mt-fxt -F folded '$D/basic.events'" /dev/null
	[ "$status" -eq 0 ]
	run mt-fxt -F folded -o "$BATS_TEST_TMPDIR/f.txt" "$D/basic.events"
	[ "$status" -eq 0 ]
	diff -u "$D/basic.folded" "$BATS_TEST_TMPDIR/f.txt"
}
