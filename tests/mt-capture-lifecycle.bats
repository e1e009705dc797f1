#!/usr/bin/env bats
# mt-capture run/attach lifecycles with the emulate backend standing in
# for Intel PT: target exit, Ctrl+C, target killed, attach and detach,
# attach noticing the target's death, --duration, --ready-fd, -o -.
# Every case checks the snapshot's reason and that no target is left
# stopped or traced.

load helpers/mt-capture-targets

setup_file() {
	build_targets
}

teardown() {
	[ -n "${TPID:-}" ] && kill -KILL "$TPID" 2>/dev/null || true
	[ -n "${CAP_PID:-}" ] && kill -KILL "$CAP_PID" 2>/dev/null || true
	true
}

# info SNAP: mt-decode's summary of SNAP into $output
info() {
	run mt-decode --info "$1"
	[ "$status" -eq 0 ]
}

@test "mt-capture run: target exit writes a 0600 snapshot with reason exit" {
	run mt-capture run -q -b emulate --start-at main -o "$T/exit.snap" \
	    -- "$T/worker"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "hits 1" ]
	[ "$(stat -c %a "$T/exit.snap")" = "600" ]
	info "$T/exit.snap"
	[[ "$output" == *"meta: reason = exit"* ]]
	[[ "$output" == *"meta: backend-name = emulate"* ]]
	[[ "$output" == *"pt buffer 0: thread "* ]]
	[[ "$output" == *"bundled elf $T/worker"* ]]
	# no temporary file is left behind
	run ls -A "$T"
	[[ "$output" != *".exit.snap."* ]]
}

@test "mt-capture run: Ctrl+C snapshots, passes SIGINT on and reaps the target" {
	start_capture run -q -b emulate --start-at main -o "$T/int.snap" -- "$T/loop"
	wait_pid_line
	kill -INT "$CAP_PID"
	wait_capture
	[ "$CAP_STATUS" -eq 0 ]
	run kill -0 "$TPID"
	[ "$status" -ne 0 ]
	info "$T/int.snap"
	[[ "$output" == *"meta: reason = sigint"* ]]
	[[ "$output" == *"pt buffer 0: thread $TPID,"* ]]
}

@test "mt-capture run: a target killed mid-recording still gets its snapshot" {
	start_capture run -q -b emulate --start-at main -o "$T/kill.snap" -- "$T/loop"
	wait_pid_line
	kill -KILL "$TPID"
	wait_capture
	[ "$CAP_STATUS" -eq 0 ]
	info "$T/kill.snap"
	[[ "$output" == *"meta: reason = exit"* ]]
	[[ "$output" == *"process $TPID "* ]]
}

@test "mt-capture attach: Ctrl+C snapshots and leaves the target running untraced" {
	"$T/loop" > "$T/loop.out" &
	TPID=$!
	start_capture attach -q -b emulate -o "$T/att.snap" -p "$TPID"
	kill -INT "$CAP_PID"
	wait_capture
	[ "$CAP_STATUS" -eq 0 ]
	kill -0 "$TPID"
	not_stopped_nor_traced "$TPID"
	info "$T/att.snap"
	[[ "$output" == *"meta: reason = sigint"* ]]
	[[ "$output" == *"process $TPID "* ]]
	# the target keeps working after the detach
	a=$(awk '/^State:/ {print $2}' "/proc/$TPID/status")
	[ "$a" = "S" ] || [ "$a" = "R" ]
}

@test "mt-capture attach: the target's death ends the recording with a snapshot" {
	"$T/loop" > /dev/null &
	TPID=$!
	start_capture attach -q -b emulate -o "$T/death.snap" -p "$TPID"
	kill -KILL "$TPID"
	wait_capture
	[ "$CAP_STATUS" -eq 0 ]
	info "$T/death.snap"
	[[ "$output" == *"meta: reason = exit"* ]]
}

@test "mt-capture attach: --duration snapshots, detaches and exits" {
	"$T/loop" > /dev/null &
	TPID=$!
	run mt-capture attach -q -b emulate --duration 0.5 -o "$T/dur.snap" -p "$TPID"
	[ "$status" -eq 0 ]
	kill -0 "$TPID"
	not_stopped_nor_traced "$TPID"
	info "$T/dur.snap"
	[[ "$output" == *"meta: reason = duration"* ]]
}

@test "mt-capture run: --duration snapshots and then ends the target" {
	run mt-capture run -q -b emulate --start-at main --duration 0.5 \
	    -o "$T/rdur.snap" -- "$T/loop"
	[ "$status" -eq 0 ]
	TPID=${lines[0]}
	run kill -0 "$TPID"
	[ "$status" -ne 0 ]
	info "$T/rdur.snap"
	[[ "$output" == *"meta: reason = duration"* ]]
}

@test "mt-capture run: -o - streams the snapshot to stdout" {
	mt-capture run -q -b emulate --start-at main --no-bundle -o - \
	    -- "$T/worker" > "$T/stream.snap" 2> "$T/stream.err"
	# the program's own output went to stderr
	[ "$(cat "$T/stream.err")" = "hits 1" ]
	run mt-decode --info - < "$T/stream.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"meta: reason = exit"* ]]
	[[ "$output" != *"bundled elf"* ]]
}

@test "mt-capture attach: several pids record each one" {
	"$T/loop" > /dev/null &
	TPID=$!
	"$T/loop" > /dev/null &
	TPID2=$!
	run mt-capture attach -q -b emulate --duration 0.5 -o "$T/two.snap" \
	    -p "$TPID,$TPID2"
	kill -KILL "$TPID2"
	[ "$status" -eq 0 ]
	info "$T/two.snap"
	[[ "$output" == *"process $TPID "* ]]
	[[ "$output" == *"process $TPID2 "* ]]
}

@test "mt-capture run: --all-threads records threads created later, each in its ring" {
	run mt-capture run -q -a -b emulate --start-at main -o "$T/all.snap" \
	    -- "$T/worker"
	[ "$status" -eq 0 ]
	info "$T/all.snap"
	[[ "$output" =~ pt\ buffer\ 0:\ thread\ ([0-9]+), ]]
	main=${BASH_REMATCH[1]}
	[[ "$output" =~ pt\ buffer\ 1:\ thread\ ([0-9]+), ]]
	worker=${BASH_REMATCH[1]}
	[ "$main" != "$worker" ]
	[[ "$output" == *"thread $main/$worker "* ]]
}

@test "mt-capture attach: a process the user may not ptrace is refused with the reason" {
	if [ "$(id -u)" -ne 0 ] || ! command -v setpriv > /dev/null; then
		skip "needs root and setpriv to act as another user"
	fi
	"$T/loop" > /dev/null &
	TPID=$!
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
	    "$MT_BUILD/bin/mt-capture" attach -b emulate -o /tmp/mt-never.snap -p "$TPID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot record process $TPID: permission denied"*"CAP_SYS_PTRACE"* ]]
	[ ! -e /tmp/mt-never.snap ]
	not_stopped_nor_traced "$TPID"
}
