#!/usr/bin/env bats
# mt-capture run/attach at the edges of a target's life, with the emulate
# backend: the reader of -o - goes away, the output cannot be written,
# the target is stopped or already traced, the target dies of a signal.
# Every case checks that no target is left stopped or traced.

load helpers/mt-capture-targets

setup_file() {
	build_targets
	cc -O1 -g -o "$T/fork" "$MT_ROOT/tests/data/capture/fork.c"
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
	wait_pid_line "$T/cap.err"
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

# state PID: the State letter of PID
state() {
	awk '/^State:/ {print $2}' "/proc/$1/status"
}

# switches PID: context switches of PID so far (a stepped or running
# thread switches all the time, a stopped one never)
switches() {
	awk '/ctxt_switches:/ {n += $2} END {print n}' "/proc/$1/status"
}

@test "mt-capture attach: a stopped target stays stopped, and nothing is recorded" {
	"$T/loop" > /dev/null &
	TPID=$!
	kill -STOP "$TPID"
	for i in $(seq 100); do [ "$(state "$TPID")" = "T" ] && break; sleep 0.1; done
	[ "$(state "$TPID")" = "T" ]
	run mt-capture attach -b emulate -d 0.5 -o "$T/stopped.snap" -p "$TPID"
	[ "$status" -eq 0 ]
	[[ "$output" == *"process $TPID is stopped: it stays stopped"* ]]
	[ "$(state "$TPID")" = "T" ]
	not_traced=$(awk '/^TracerPid:/ {print $2}' "/proc/$TPID/status")
	[ "$not_traced" = "0" ]
	run mt-decode --info "$T/stopped.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"meta: emulate-instructions = 0"* ]]
	# and it goes on when continued
	kill -CONT "$TPID"
	for i in $(seq 100); do [ "$(state "$TPID")" != "T" ] && break; sleep 0.1; done
	not_stopped_nor_traced "$TPID"
}

@test "mt-capture attach: a target stopped while recorded stays stopped until SIGCONT" {
	"$T/loop" > /dev/null &
	TPID=$!
	start_capture attach -q -b emulate -o "$T/stop.snap" -p "$TPID"
	kill -STOP "$TPID"
	# stopped means no context switch at all between two looks
	settled=0
	for i in $(seq 30); do
		a=$(switches "$TPID")
		sleep 0.3
		b=$(switches "$TPID")
		if [ "$a" = "$b" ]; then settled=1; break; fi
	done
	[ "$settled" = 1 ]
	# continued, it is stepped again
	kill -CONT "$TPID"
	moved=0
	for i in $(seq 100); do
		[ "$(switches "$TPID")" != "$b" ] && { moved=1; break; }
		sleep 0.1
	done
	[ "$moved" = 1 ]
	kill -INT "$CAP_PID"
	wait_capture
	[ "$CAP_STATUS" -eq 0 ]
	kill -0 "$TPID"
	not_stopped_nor_traced "$TPID"
}

@test "mt-capture run: an unknown --start-at symbol is an error before the program starts" {
	run mt-capture run -b emulate --start-at nosuch --ready-fd 3 \
	    -o "$T/sa.snap" -- "$T/worker" 3> "$T/sa.ready"
	[ "$status" -eq 1 ]
	[[ "$output" == *"--start-at: no symbol 'nosuch' in '$T/worker'"* ]]
	# recording never began: no ready byte, no such message, no output
	[ ! -s "$T/sa.ready" ]
	[[ "$output" != *"recording with"* ]]
	[[ "$output" != *"hits"* ]]
	[ ! -e "$T/sa.snap" ]
}

@test "mt-capture attach: an unknown --start-at symbol is an error before the target is traced" {
	"$T/loop" > /dev/null &
	TPID=$!
	# attached before its exec, it would still be the shell
	for i in $(seq 100); do
		[ "$(readlink "/proc/$TPID/exe")" = "$T/loop" ] && break
		sleep 0.1
	done
	run mt-capture attach -b emulate --start-at nosuch --ready-fd 3 \
	    -o "$T/sa2.snap" -p "$TPID" 3> "$T/sa2.ready"
	[ "$status" -eq 1 ]
	[[ "$output" == *"--start-at: no symbol 'nosuch' in '$T/loop'"* ]]
	[ ! -s "$T/sa2.ready" ]
	not_stopped_nor_traced "$TPID"
}

@test "mt-capture run: an output that cannot be written is an error before the program starts" {
	run mt-capture run -b emulate -o "$T/no/such/dir/x.snap" \
	    -- touch "$T/ran-nodir"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot write snapshot '$T/no/such/dir/x.snap': No such file or directory"* ]]
	[ ! -e "$T/ran-nodir" ]
	mkdir -p "$T/adir"
	run mt-capture run -b emulate -o "$T/adir" -- touch "$T/ran-dir"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: '$T/adir' is a directory (-o names the output file)" ]
	[ ! -e "$T/ran-dir" ]
	# the check leaves nothing behind
	run ls -A "$T/adir"
	[ -z "$output" ]
}

@test "mt-capture run: a program killed by a signal is reported with that signal, status 0" {
	start_capture run -q -b emulate --start-at main -o "$T/sig.snap" -- "$T/loop"
	wait_pid_line
	kill -TERM "$TPID"
	wait_capture
	[ "$CAP_STATUS" -eq 0 ]
	grep -q "process $TPID was killed by signal 15 (SIGTERM: Terminated)" "$T/cap.err"
	run mt-decode --info "$T/sig.snap"
	[[ "$output" == *"meta: reason = exit"* ]]
}

# count KIND TID FILE: records KIND (call, ret) of thread TID in the
# event stream FILE
count() {
	awk -v k="$1" -v t="$2" '$1 == k && $3 == t' "$3" | wc -l
}

# calls_to NAME TID FILE: calls of thread TID into the function NAME in
# the symbolized stream FILE (fn and loc records name the targets)
calls_to() {
	awk -v f="$1" -v t="$2" '
	    $1 == "fn" && $NF == f { fn[$2] = 1 }
	    $1 == "loc" { split($4, a, ":"); if (a[1] in fn) loc["@" $2] = 1 }
	    $1 == "call" && $3 == t && ($NF in loc) { n++ }
	    END { print n + 0 }' "$3"
}

@test "mt-capture run -a: the emulate backend follows a child process, every call as stepped" {
	run mt-capture run -q -a -b emulate --start-at main \
	    --ground-truth "$T/fork.gt" -o "$T/fork.snap" \
	    -- "$T/fork" "$T/child.pid"
	[ "$status" -eq 0 ]
	read -r parent child <<< "${lines[0]}"
	[ "$(cat "$T/child.pid")" = "$child" ]
	run mt-decode --info "$T/fork.snap"
	[[ "$output" == *"process $child (parent $parent)"* ]]
	[[ "$output" == *"thread $child, "* ]]
	run mt-decode --stats -o "$T/fork.ev" "$T/fork.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	# each thread's calls and returns, as the stepper saw them retire
	for t in "$parent" "$child"; do
		gc=$(awk -v t="$t" '$1 == t && ($2 == "call" || $2 == "icall")' "$T/fork.gt" | wc -l)
		gr=$(awk -v t="$t" '$1 == t && $2 == "ret"' "$T/fork.gt" | wc -l)
		[ "$gc" -gt 20 ]
		[ "$(count call "$t" "$T/fork.ev")" -eq "$gc" ]
		[ "$(count ret "$t" "$T/fork.ev")" -eq "$gr" ]
	done
	# the child's own work (fopen) is in the child's trace only
	mt-symbolize < "$T/fork.ev" > "$T/fork.sym"
	[ "$(calls_to fopen@plt "$child" "$T/fork.sym")" -eq 1 ]
	[ "$(calls_to fopen@plt "$parent" "$T/fork.sym")" -eq 0 ]
	run mt-capture run --help
	[[ "$output" == *"and child processes (fork; pt and emulate, not qemu;"* ]]
}

@test "mt-capture run: without -a the emulate backend leaves a child process untraced" {
	run mt-capture run -q -b emulate --start-at main -o "$T/fork1.snap" \
	    -- "$T/fork" "$T/child1.pid"
	[ "$status" -eq 0 ]
	read -r parent child <<< "${lines[0]}"
	# the child ran to its end, natively
	[ "$(cat "$T/child1.pid")" = "$child" ]
	run mt-decode --info "$T/fork1.snap"
	[[ "$output" == *"pt buffer 0: thread $parent,"* ]]
	[[ "$output" != *"thread $child,"* ]]
}

@test "mt-decode: a file missing at decode time is warned about once" {
	mkdir -p "$T/gone"
	cp "$T/worker" "$T/gone/worker"
	run mt-capture run -q -b emulate --start-at main --no-bundle \
	    -o "$T/gone.snap" -- "$T/gone/worker"
	[ "$status" -eq 0 ]
	rm "$T/gone/worker"
	# the snapshot names it twice: its MMAP chunk and the exec's MMAP2
	run mt-decode --stats -o "$T/gone.ev" "$T/gone.snap"
	[ "$status" -eq 0 ]
	n=$(grep -c "warning: no file for '$T/gone/worker'" <<< "$output")
	[ "$n" -eq 1 ]
	[[ "$output" == *"missing-images: 1"* ]]
}
