#!/usr/bin/env bats
# The software PT backend end to end: programs run under
# `mt-capture --backend emulate --ground-truth FILE`, the snapshot goes
# through mt-decode, and the call/return sequence mt-decode reports must
# equal the one that executed, with zero decode errors.  The small
# programs are built from tests/data/emu at test time.

load helpers/gt-calls

setup_file() {
	export E="$BATS_FILE_TMPDIR"
	local f
	for f in recurse fnptr switch longjmp signal threads; do
		cc -O2 -g -pthread -o "$E/$f" "$MT_ROOT/tests/data/emu/$f.c"
	done
	c++ -O2 -g -o "$E/except" "$MT_ROOT/tests/data/emu/except.cpp"
	cc -O2 -g -o "$E/demo" "$MT_ROOT/demo/demo.c" -ldl
	cc -O2 -g -pthread -o "$E/dthreads" "$MT_ROOT/demo/threads.c" -lm
	c++ -O2 -g -o "$E/dcxx" "$MT_ROOT/demo/cxxdemo.cpp"
}

teardown() {
	[ -n "${TPID:-}" ] && kill -KILL "$TPID" 2>/dev/null || true
	true
}

# capture_and_compare NAME SUBCOMMAND ARGS...: record, decode, compare.
capture_and_compare() {
	local name=$1 cmd=$2
	shift 2
	run mt-capture "$cmd" -q -b emulate --ground-truth "$E/$name.gt" \
	    -o "$E/$name.snap" "$@"
	[ "$status" -eq 0 ]
	decodes_to_gt "$E/$name"
}

@test "emulate: the demo up to its first cos call decodes into exactly the calls that ran" {
	capture_and_compare demo run --trigger libm.so.6:cos -- "$E/demo"
	# the trace ends in cos, reached through the pointer dlsym returned
	run tail -1 "$E/demo.want"
	[[ "$output" == "call "* ]]
	run mt-decode "$E/demo.snap"
	[ "$status" -eq 0 ]
	# the hit, then the stop for the snapshot (a gap), then the end
	[[ "${lines[-3]}" == "trigger "*" libm.so.6:cos" ]]
	[[ "${lines[-2]}" == "disable "* ]]
	run mt-decode --info "$E/demo.snap"
	[[ "$output" == *"meta: backend-name = emulate"* ]]
	[[ "$output" == *"meta: reason = trigger"* ]]
}

@test "emulate: the multi-threaded demo, every thread, decodes into exactly the calls that ran" {
	capture_and_compare dthreads run --all-threads --start-at main -- \
	    "$E/dthreads"
	run sh -c "cut -d' ' -f2 '$E/dthreads.want' | sort -u | wc -l"
	[ "$output" -eq 3 ]
}

@test "emulate: the C++ demo with its exception decodes into exactly the calls that ran" {
	capture_and_compare dcxx run --start-at main -- "$E/dcxx"
	grep -q _Unwind_RaiseException <(mt-symbolize < "$E/dcxx.ev")
}

@test "emulate: deep recursion past the 64-entry return stack" {
	capture_and_compare recurse run --start-at main -- "$E/recurse"
	run grep -c '^call ' "$E/recurse.got"
	[ "$output" -ge 200 ]
}

@test "emulate: calls through function pointers" {
	capture_and_compare fnptr run --start-at main -- "$E/fnptr"
}

@test "emulate: a switch compiled to a jump table" {
	capture_and_compare switch run --start-at main -- "$E/switch"
	grep -q ' ijmp ' "$E/switch.gt"
}

@test "emulate: setjmp/longjmp out of nested calls" {
	capture_and_compare longjmp run --start-at main -- "$E/longjmp"
}

@test "emulate: a signal handler is entered asynchronously and returns" {
	capture_and_compare signal run --start-at main -- "$E/signal"
	run grep -c ' signal ' "$E/signal.gt"
	[ "$output" -eq 2 ]
	run grep -c '^disable .* async$' "$E/signal.ev"
	[ "$output" -ge 2 ]
}

@test "emulate: two threads, each decoded from its own buffer" {
	capture_and_compare threads run --all-threads --start-at main -- "$E/threads"
	run sh -c "cut -d' ' -f2 '$E/threads.want' | sort -u | wc -l"
	[ "$output" -eq 2 ]
}

@test "emulate: a C++ exception unwinds through three frames" {
	capture_and_compare except run --start-at main -- "$E/except"
	grep -q _Unwind_RaiseException <(mt-symbolize < "$E/except.ev")
}

@test "emulate: --multi-snapshot: each snapshot holds the calls up to its trigger hit" {
	run mt-capture run -q -b emulate --start-at main --trigger apply \
	    --multi-snapshot --max-snapshots 3 --ground-truth "$E/ms.gt" \
	    -o "$E/ms.snap" -- "$E/fnptr"
	[ "$status" -eq 0 ]
	local i f
	for i in 0 1 2; do
		f="$E/ms.snap"
		[ "$i" -gt 0 ] && f="$E/ms-$i.snap"
		run mt-decode --stats -o "$E/ms$i.ev" "$f"
		[ "$status" -eq 0 ]
		[[ "$output" == *"errors: 0"* ]]
		gt_calls "$E/ms.gt" "$i" > "$E/ms$i.want"
		ev_calls "$E/ms$i.ev" > "$E/ms$i.got"
		diff -u "$E/ms$i.want" "$E/ms$i.got"
		# the last call entered the probed function
		run tail -1 "$E/ms$i.got"
		[[ "$output" == "call "* ]]
	done
	[ "$(wc -l < "$E/ms2.got")" -gt "$(wc -l < "$E/ms1.got")" ]
}

@test "emulate: a ring that wrapped decodes from its first PSB into the tail of the calls" {
	run mt-capture run -q -b emulate --ground-truth "$E/wrap.gt" \
	    --snapshot-size 4096 --timing psb_period=0 -o "$E/wrap.snap" \
	    --start-at main -- "$E/except"
	[ "$status" -eq 0 ]
	run mt-decode --info "$E/wrap.snap"
	[[ "$output" == *"wrapped"* ]]
	decodes_to_gt_tail "$E/wrap"
}

@test "emulate: attach steps a running process, then leaves it running untraced" {
	"$E/demo" 0 > /dev/null &
	TPID=$!
	disown "$TPID"
	sleep 0.3
	capture_and_compare attach attach -p "$TPID" --duration 1
	kill -0 "$TPID"
	[ "$(awk '/^TracerPid:/ {print $2}' "/proc/$TPID/status")" = "0" ]
	st=$(awk '/^State:/ {print $2}' "/proc/$TPID/status")
	[ "$st" != "T" ] && [ "$st" != "t" ]
}

@test "emulate: --duration fires while the target runs natively before --start-at" {
	"$E/demo" 0 > /dev/null &
	TPID=$!
	disown "$TPID"
	sleep 0.3
	# main never runs again: nothing is stepped, the snapshot still comes
	run timeout 30 mt-capture attach -q -b emulate --start-at main \
	    -p "$TPID" --duration 0.5 -o "$E/native.snap"
	[ "$status" -eq 0 ]
	run mt-decode --info "$E/native.snap"
	[[ "$output" == *"meta: reason = duration"* ]]
	kill -0 "$TPID"
	[ "$(awk '/^TracerPid:/ {print $2}' "/proc/$TPID/status")" = "0" ]
}

@test "emulate: without --all-threads only the main thread is stepped" {
	capture_and_compare main1 run --start-at main -- "$E/threads"
	run sh -c "cut -d' ' -f2 '$E/main1.want' | sort -u | wc -l"
	[ "$output" -eq 1 ]
	run mt-decode --info "$E/main1.snap"
	[[ "$output" == *"pt buffer 0: "* ]]
	[[ "$output" != *"pt buffer 1: "* ]]
}

@test "emulate: --ground-truth to a full device fails with exit 1 and leaves the device alone" {
	run mt-capture run -q -b emulate --start-at main --ground-truth /dev/full \
	    -o "$E/full.snap" -- "$E/fnptr"
	[ "$status" -eq 1 ]
	[[ "$output" == *"/dev/full"* ]]
	[ -c /dev/full ]
}

@test "emulate: --ground-truth-max: the log stops at its cap with one message, the snapshot decodes" {
	run mt-capture run -q -b emulate --start-at main --ground-truth "$E/cap.gt" \
	    --ground-truth-max 4K -o "$E/cap.snap" -- "$E/recurse"
	[ "$status" -eq 0 ]
	run grep -c "ground truth '$E/cap.gt' reached its cap of 4096 bytes (--ground-truth-max)" <<< "$output"
	[ "$output" -eq 1 ]
	local size
	size=$(stat -c %s "$E/cap.gt")
	[ "$size" -le 4096 ] && [ "$size" -gt 3900 ]
	run grep -cvE '^[0-9]+ [a-z-]+ 0x[0-9a-f]+ 0x[0-9a-f]+$' "$E/cap.gt"
	[ "$output" -eq 0 ]
	decode_gt "$E/cap"
	# the log is the start of the calls, which went on past it
	[ -s "$E/cap.want" ]
	[ "$(wc -l < "$E/cap.got")" -gt "$(wc -l < "$E/cap.want")" ]
	head -n "$(wc -l < "$E/cap.want")" "$E/cap.got" | diff -u "$E/cap.want" -
}

@test "emulate: --ground-truth is written under a temporary name, then renamed" {
	run mt-capture run -q -b emulate --start-at main --ground-truth "$E/rn.gt" \
	    -o "$E/rn.snap" -- "$E/fnptr"
	[ "$status" -eq 0 ]
	[ -s "$E/rn.gt" ]
	run sh -c "ls '$E' | grep -c 'rn.gt.tmp'"
	[ "$output" = "0" ]
	run tail -1 "$E/rn.gt"
	[ "$output" = "snapshot 0" ]
}

@test "emulate: --start-at an unknown symbol fails with a message" {
	run mt-capture run -q -b emulate --start-at no_such_function \
	    -o "$E/bad.snap" -- "$E/fnptr"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no_such_function"* ]]
}
