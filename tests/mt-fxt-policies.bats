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

# go_begins NAME: $lines, the frames of main.* begun in NAME.events
# (--format json), "NAME TID" sorted.
go_begins() {
	run mt-fxt -q -F json "$D/$1.events"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/$1.json"
	run jq -r '[.traceEvents[] | select(.ph == "B" and
	    (.name | startswith("main."))) | "\(.name) \(.tid)"] | sort | .[]' \
	    "$BATS_TEST_TMPDIR/$1.json"
}

# go_once NAME: in NAME.events, main.main and main.ping begin once on
# thread 10, main.main.func1 and main.pong once on the first goroutine
# track (json tid 2^22 + 1).
go_once() {
	go_begins "$1"
	[ "${#lines[@]}" -eq 4 ]
	[ "${lines[0]}" = "main.main 10" ]
	[ "${lines[1]}" = "main.main.func1 4194305" ]
	[ "${lines[2]}" = "main.ping 10" ]
	[ "${lines[3]}" = "main.pong 4194305" ]
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

@test "mt-fxt: a signal handler nests above the interrupted frame and ends when it resumes" {
	policy signal
	grep -qx '30     +handler {address=0x3000}' "$D/signal.expected"
	grep -qx '80     -__restore_rt' "$D/signal.expected"
	grep -qx '90   -work' "$D/signal.expected"
}

@test "mt-fxt: a signal through the traced kernel (irq, iret to the handler, sigreturn)" {
	policy signal-kernel
	grep -qx '30     +handler {address=0x3000}' "$D/signal-kernel.expected"
	grep -qx '60     -__restore_rt' "$D/signal-kernel.expected"
}

@test "mt-fxt: a signal handler that longjmps out ends with the interrupted frame" {
	policy signal-longjmp
	grep -qx '50   -work' "$D/signal-longjmp.expected"
	grep -qx '60   +leaf {address=0x5000}' "$D/signal-longjmp.expected"
}

@test "mt-fxt: a throw caught in an older frame ends the frames above it; depth stays constant" {
	policy throw
	# the second throw nests exactly as deep as the first
	run grep -c '^[0-9]*         +_Unwind_RaiseException' "$D/throw.expected"
	[ "$output" -eq 2 ]
	grep -qx '140   -f' "$D/throw.expected"
}

@test "mt-fxt: same-timestamp time goes to every frame that begins (PLT jumps, replacements, gaps)" {
	policy spread-frames
	grep -qx '5   +f {address=0x3000}' "$D/spread-frames.expected"
	grep -qx '25   +\[syscall\] {address=0x5020}' "$D/spread-frames.expected"
}

@test "mt-fxt: br records change no frame's time" {
	policy spread-br
	diff -u "$D/spread-frames.expected" "$D/spread-br.expected"
}

@test "mt-fxt: tracing resuming after a syscall keeps the frame whatever the symbol there" {
	policy resume
	grep -qx '40   -__write' "$D/resume.expected"
}

@test "mt-fxt: identity checks only for code with an identity ([unknown fn], not [unknown @])" {
	policy unknown-fn
	grep -qx '40   -\[unknown @ 0x5000 (x.so)\]' "$D/unknown-fn.expected"
	grep -qx '70   -\[unknown fn 0x6000 (x.so)\]' "$D/unknown-fn.expected"
}

@test "mt-fxt: sysret with no kernel entry seen ends the kernel frames, infers the user function" {
	policy kernel-nocall
	grep -qx '10 +main {address=0x1012, inferred_start_time=true}' "$D/kernel-nocall.expected"
	grep -qx '30   -entry_SYSCALL_64' "$D/kernel-nocall.expected"
}

@test "mt-fxt: Go's gogo back into the one goroutine parked there resumes its frames; after newstack it unwinds to morestack" {
	policy go
	# the goroutine parked, its mcall ends at the jump, main.main goes on
	grep -qx '80     -runtime.mcall' "$D/go.expected"
	grep -qx '90   -runtime.gopark' "$D/go.expected"
	run grep -c 'main.main' "$D/go.expected"
	[ "$output" = 2 ]
	# newstack resumes the goroutine that grew its stack: main.main goes on
	grep -qx '120   -runtime.morestack.abi0' "$D/go.expected"
	grep -qx '150 -main.main' "$D/go.expected"
}

@test "mt-fxt: Go goroutines parked in the same place are told apart by the returns that follow, each on its track" {
	policy go-two
	grep -qx '== \[pid=10\] / g goroutine #2 \[tid=10\]' "$D/go-two.expected"
	grep -qx '180         -runtime.mcall' "$D/go-two.expected"
	grep -qx '220     -runtime.chansend' "$D/go-two.expected"
	# the other stays parked, its frames open, until the end
	grep -qx '240         -runtime.mcall' "$D/go-two.expected"
	# JSON and the summary agree: one more track, with a tid of its own
	run mt-fxt -q -F json "$D/go-two.events"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/go-two.json"
	"$MT_ROOT/tests/helpers/json-check" "$BATS_TEST_TMPDIR/go-two.json"
	run jq -r '[.traceEvents[] | select(.ph == "B" and (.name == "main.ping"
	    or .name == "main.pong")) | "\(.name) \(.tid)"] | unique | .[]' \
	    "$BATS_TEST_TMPDIR/go-two.json"
	[ "${lines[0]}" = "main.ping 10" ]
	[ "${lines[1]}" = "main.pong 4194305" ]
	run jq -r '.traceEvents[] | select(.ph == "M" and .tid == 4194305) |
	    .args.name' "$BATS_TEST_TMPDIR/go-two.json"
	[ "$output" = "g goroutine #2 [tid=10]" ]
	run mt-fxt -q -F summary "$D/go-two.events"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "threads 1, "* ]]
	[ "${lines[1]}" = "goroutine tracks: 1" ]
}

@test "mt-fxt: Go goroutines the returns never tell apart: the stretch runs on a track of its own, callers inferred" {
	policy go-same
	grep -qx '== \[pid=10\] / g goroutine #3 \[tid=10\]' "$D/go-same.expected"
	grep -qx '170 +main.worker {address=0x1415, inferred_start_time=true}' \
	    "$D/go-same.expected"
}

@test "mt-fxt: a Go goroutine preempted again where it resumed, before any return tells which: the parked ones stay as they were" {
	policy go-again
	# the stretch on a track of its own, its frames ending as it leaves
	grep -qx '== \[pid=10\] / g goroutine #3 \[tid=10\]' "$D/go-again.expected"
	grep -qx '220 -runtime.chansend' "$D/go-again.expected"
	# then main's goroutine goes on on its track: each function once
	grep -qx '220       -runtime.morestack.abi0' "$D/go-again.expected"
	grep -qx '250 -main.main' "$D/go-again.expected"
	go_once go-again
}

@test "mt-fxt: a Go goroutine that blocks deeper before a return tells which it is: followed until one does" {
	policy go-deeper
	# the first stretch (gopark from 170) on main's track, the second
	# on the other's, each parked there at 300 until it goes on
	grep -qx '170         +runtime.gopark {address=0x3000}' "$D/go-deeper.expected"
	grep -qx '240         +runtime.gopark {address=0x3000}' "$D/go-deeper.expected"
	grep -qx '340   -main.ping' "$D/go-deeper.expected"
	go_once go-deeper
}

@test "mt-fxt: a Go goroutine parked on one thread resumes on another, the threads' events in runs of their own" {
	policy go-moved
	# main's goroutine goes on on thread 11 (260), on its track
	grep -qx '270         -runtime.gopark' "$D/go-moved.expected"
	# taken from thread 11 asleep in the scheduler by thread 10 (580);
	# thread 11 goes on on a track with nothing open
	grep -qx '580                 -runtime.findRunnable' "$D/go-moved.expected"
	grep -qx '580 +runtime.schedule {address=0x6025, inferred_start_time=true}' \
	    "$D/go-moved.expected"
	# main.ping twice, the others once, each goroutine on one track
	go_begins go-moved
	[ "${#lines[@]}" -eq 5 ]
	[ "${lines[0]}" = "main.main 10" ]
	[ "${lines[1]}" = "main.main.func1 4194306" ]
	[ "${lines[2]}" = "main.ping 10" ]
	[ "${lines[3]}" = "main.ping 10" ]
	[ "${lines[4]}" = "main.pong 4194306" ]
}

@test "mt-fxt: Go's gogo into a goroutine parked before the trace is not taken for the one seen parking there" {
	policy go-unseen
	# its first return agrees with the one seen, its second does not
	grep -qx '90   +runtime.chansend {address=0x2015, inferred_start_time=true}' \
	    "$D/go-unseen.expected"
	grep -qx '90 +main.pong {address=0x1225, inferred_start_time=true}' \
	    "$D/go-unseen.expected"
	grep -qx '120 -main.main' "$D/go-unseen.expected"
}

@test "mt-fxt: a TSX abort ends the frames entered since the transaction began" {
	policy tsx
	grep -qx '50     -g' "$D/tsx.expected"
	grep -qx '60     +fallback_work {address=0x5000}' "$D/tsx.expected"
}

@test "mt-fxt: a return through untraced code or a call from an older frame ends the frames above" {
	policy untraced-return
	grep -qx '30   -printf@plt' "$D/untraced-return.expected"
	grep -qx '60     -g' "$D/untraced-return.expected"
}

@test "mt-fxt: a return from another function than the top one replaces it (a tail call not seen)" {
	policy tailcall-unseen
	run grep -c '+\[unknown fn 0x6200 (s)\]' "$D/tailcall-unseen.expected"
	[ "$output" -eq 2 ]
}

@test "mt-fxt: an irq with its handler untraced enters a signal handler as an asynchronous stop does" {
	policy signal-irq
	diff -u "$D/signal.expected" "$D/signal-irq.expected"
}

@test "mt-fxt: a return to a function's entry enters it above the caller, unless it is the call's return address" {
	policy ret-entry
	grep -qx '20   +f {address=0x3000}' "$D/ret-entry.expected"
	grep -qx '50 +after_call {address=0x1025}' "$D/ret-entry.expected"
}
