#!/usr/bin/env bats
# mt-fxt's call-stack reconstruction policies, one hand-written stream each
# (tests/data/fxt/NAME.events, with the policy in its comment).  The FXT
# output is read back by the independent checker (tests/helpers/fxt-check)
# and its timeline compared exactly with NAME.expected; the folded output
# with NAME.folded.  Regenerate with tests/data/fxt/regen and review.

D="$MT_ROOT/tests/data/fxt"
CHK="$MT_ROOT/tests/helpers/fxt-check"

# policy NAME: FXT timeline and folded stacks match the expected files.
policy() {
	local n=$1 t="$BATS_TEST_TMPDIR"
	run mt-fxt -q -o "$t/$n.fxt" "$D/$n.events"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	run "$CHK" --dump "$t/$n.fxt"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$t/$n.dump"
	diff -u "$D/$n.expected" "$t/$n.dump"
	run mt-fxt -q -F folded "$D/$n.events"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$t/$n.fold"
	diff -u "$D/$n.folded" "$t/$n.fold"
}

@test "mt-fxt: a call pushes a frame and a return pops it" {
	policy basic
}

@test "mt-fxt: a jmp leaving the function replaces the frame (tail call, PLT stub)" {
	policy tailcall
}

@test "mt-fxt: a return into another function than the caller replaces the frame" {
	policy wrongret
}

@test "mt-fxt: returns past the oldest frame infer callers from the window start" {
	policy unwind
}

@test "mt-fxt: unsymbolized stream: frames named by address, [unknown] span" {
	policy unknown
}

@test "mt-fxt: trace gaps show as [syscall] and [untraced] frames" {
	policy gaps
}

@test "mt-fxt: with the kernel traced a syscall gets its own stack, ended by sysret" {
	policy kernel
}

@test "mt-fxt: a decode error is a zero-length span, then the stack resets" {
	policy error
}

@test "mt-fxt: same-timestamp calls spread: 1,1 then 100 gives 1, 50" {
	policy spread1
	grep -qx '1   +a {address=0x2000}' "$D/spread1.expected"
	grep -qx '50     +b {address=0x3000}' "$D/spread1.expected"
}

@test "mt-fxt: same-timestamp calls spread: four at 100 then 103 gives 100, 100, 101, 102" {
	policy spread2
	run grep -E '^[0-9]+ +\+(a|b) ' "$D/spread2.expected"
	[ "$status" -eq 0 ]
	[ "${lines[0]%% *}" = 100 ]
	[ "${lines[1]%% *}" = 100 ]
	[ "${lines[2]%% *}" = 101 ]
	[ "${lines[3]%% *}" = 102 ]
}

@test "mt-fxt: inlined frames from loc records nest and are marked inlined" {
	policy inline
}

@test "mt-fxt: trigger hits go to their own track" {
	policy trigger
}

@test "mt-fxt: a return with no frame is never an error" {
	printf 'mt-events 1.0\nret 10 1 0x10 0x20\nret 20 1 0x30 0x40\n' > "$BATS_TEST_TMPDIR/r.events"
	run mt-fxt -o "$BATS_TEST_TMPDIR/r.fxt" "$BATS_TEST_TMPDIR/r.events"
	[ "$status" -eq 0 ]
	run "$CHK" "$BATS_TEST_TMPDIR/r.fxt"
	[ "$status" -eq 0 ]
}

@test "mt-fxt: an overflow ends every frame at its own time, not at the next event" {
	policy error-time
	grep -qx '21   +x {address=0x2000}' "$D/error-time.expected"
	grep -qx '21   -x' "$D/error-time.expected"
}

@test "mt-fxt: a thread that appears mid-window starts at its first event" {
	policy thread-start
	grep -qx '500 +start_thread {address=0x3010, inferred_start_time=true}' \
	    "$D/thread-start.expected"
}
