#!/usr/bin/env bats
# mt-capture run/attach at the edges of a target's life, with the emulate
# backend: the reader of -o - goes away, the output cannot be written,
# the target is stopped or already traced, the target dies of a signal.
# Every case checks that no target is left stopped or traced.

load helpers/mt-capture-targets

setup_file() {
	build_targets
}

teardown() {
	[ -n "${RPID:-}" ] && kill -KILL "$RPID" 2>/dev/null || true
	[ -n "${TPID:-}" ] && kill -KILL "$TPID" 2>/dev/null || true
	[ -n "${CAP_PID:-}" ] && kill -KILL "$CAP_PID" 2>/dev/null || true
	true
}

# reader: a process that reads nothing from the fifo $T/pipe; RPID.
reader() {
	rm -f "$T/pipe"
	mkfifo "$T/pipe"
	(exec sleep 600 < "$T/pipe") &
	RPID=$!
}

@test "mt-capture attach -o -: the reader going away detaches and exits 1" {
	"$T/loop" > /dev/null &
	TPID=$!
	reader
	CAP_OUT="$T/pipe" start_capture attach -q -b emulate -o - -p "$TPID"
	kill -KILL "$RPID"
	wait_capture
	[ "$CAP_STATUS" -eq 1 ]
	grep -q "nothing reads standard output any more" "$T/cap.err"
	kill -0 "$TPID"
	not_stopped_nor_traced "$TPID"
}

@test "mt-capture run -o -: the reader going away ends the program and exits 1" {
	reader
	CAP_OUT="$T/pipe" start_capture run -q -b emulate --start-at main -o - \
	    -- "$T/loop"
	# with -o - the program's stdout is mt-capture's stderr
	for i in $(seq 300); do
		[ -s "$T/cap.err" ] && break
		sleep 0.1
	done
	TPID=$(head -1 "$T/cap.err")
	[ -n "$TPID" ]
	kill -KILL "$RPID"
	wait_capture
	[ "$CAP_STATUS" -eq 1 ]
	grep -q "nothing reads standard output any more" "$T/cap.err"
	run kill -0 "$TPID"
	[ "$status" -ne 0 ]
}

@test "mt-capture attach -o -: a reader that stops early fails the write, the target runs on" {
	"$T/loop" > /dev/null &
	TPID=$!
	run bash -c "mt-capture attach -q -b emulate --duration 0.5 -o - \
	    -p $TPID | head -c 100 > /dev/null; echo \${PIPESTATUS[0]}"
	[ "${lines[-1]}" = "1" ]
	[[ "$output" == *"cannot write snapshot '-'"* ]]
	kill -0 "$TPID"
	not_stopped_nor_traced "$TPID"
}

@test "mt-capture run -o -: a closed standard output is an error before the program runs" {
	run bash -c "mt-capture run -b emulate -o - -- touch '$T/ran' >&-"
	[ "$status" -eq 1 ]
	[[ "$output" == *"standard output is closed or nobody reads it"* ]]
	[ ! -e "$T/ran" ]
}

@test "mt-capture attach: a target traced by another tracer is refused, naming it" {
	"$T/loop" > /dev/null &
	TPID=$!
	# the other tracer: a first mt-capture
	start_capture attach -q -b emulate -o "$T/first.snap" -p "$TPID"
	run mt-capture attach -q -b emulate -d 0.2 -o "$T/second.snap" -p "$TPID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"process $TPID is already traced by PID $CAP_PID (mt-capture)"* ]]
	[[ "$output" != *"ptrace_scope"* ]]
	[ ! -e "$T/second.snap" ]
	# the first one still records, and detaches cleanly
	kill -INT "$CAP_PID"
	wait_capture
	[ "$CAP_STATUS" -eq 0 ]
	[ -s "$T/first.snap" ]
	not_stopped_nor_traced "$TPID"
}
