#!/usr/bin/env bats
# mt-capture under faults: a full disk, short writes and write errors
# while the snapshot is written (tests/data/faults/wfault.c, preloaded),
# SIGINT and a dying target while it is written, the target killed while
# recording, attach to processes that are gone, and SIGTERM while
# attached.  The target is tests/data/faults/spin.c under the emulate
# backend from main (--start-at main keeps each capture to ~2 s).

load helpers/faults

CAP=(mt-capture run -b emulate -q --start-at main)
ATT=(mt-capture attach -b emulate -q)

setup_file() {
	fault_tools "$BATS_FILE_TMPDIR"
}

setup() {
	F="$BATS_FILE_TMPDIR"
	D="$BATS_TEST_TMPDIR/out"
	M="$BATS_TEST_TMPDIR/mnt"
	mkdir -p "$D"
	tpid=
}

teardown() {
	tiny_fs_done "$M"
	if [ -n "$tpid" ]; then kill -9 "$tpid" 2>/dev/null || true; fi
}

# decodes SNAP: mt-decode reads SNAP whole and the stream has events.
decodes() {
	run mt-decode -o "$BATS_TEST_TMPDIR/ev" "$1"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^call ' "$BATS_TEST_TMPDIR/ev")" -gt 0 ]
}

@test "mt-capture: a disk that fills up while writing exits 1, says so, and leaves nothing" {
	tiny_fs "$M" 64k
	run "${CAP[@]}" -o "$M/s.snap" -- "$F/spin" 1000
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: cannot write snapshot '$M/s.snap': No space left on device; nothing was left under that name" ]
	run ls -A "$M"
	[ "$output" = "" ]
}

@test "mt-capture: -o - on a full device exits 1 with the reason" {
	run bash -c '"$@" > /dev/full' _ "${CAP[@]}" -o - -- "$F/spin" 1000
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: cannot write snapshot '-': No space left on device; nothing was left under that name" ]
}

@test "mt-capture: short writes still give a complete snapshot" {
	run with_wfault MT_FAULT_MATCH=/.s.snap. MT_FAULT_SHORT=1 -- \
	    "${CAP[@]}" --no-bundle -o "$D/s.snap" -- "$F/spin" 1000
	[ "$status" -eq 0 ]
	decodes "$D/s.snap"
}

@test "mt-capture: a write error after 4 KiB exits 1, says so, and leaves nothing" {
	run with_wfault MT_FAULT_MATCH=/.s.snap. MT_FAULT_ERRNO=5 MT_FAULT_AFTER=4096 -- \
	    "${CAP[@]}" -o "$D/s.snap" -- "$F/spin" 1000
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: cannot write snapshot '$D/s.snap': Input/output error; nothing was left under that name" ]
	run ls -A "$D"
	[ "$output" = "" ]
}

@test "mt-capture: a second SIGINT while the snapshot is being written: the snapshot is completed" {
	with_wfault MT_FAULT_MATCH=/.s.snap. MT_FAULT_DELAY_US=30000 -- \
	    "${CAP[@]}" --ready-fd 3 -o "$D/s.snap" -- "$F/spin" 3>"$D/.ready" &
	cpid=$!
	wait_for test -s "$D/.ready"
	tpid=$(pgrep -P "$cpid")
	rm "$D/.ready"
	kill -INT "$cpid"		# Ctrl-C: take the snapshot
	wait_for has_temp "$D"
	kill -INT "$cpid"		# Ctrl-C again, while it is written
	st=0
	wait "$cpid" || st=$?
	[ "$st" -eq 0 ]
	run ls -A "$D"
	[ "$output" = "s.snap" ]
	decodes "$D/s.snap"
}

@test "mt-capture: the target killed while its snapshot is written: the snapshot is completed" {
	with_wfault MT_FAULT_MATCH=/.s.snap. MT_FAULT_DELAY_US=30000 -- \
	    "${CAP[@]}" --ready-fd 3 -o "$D/s.snap" -- "$F/spin" 3>"$D/.ready" &
	cpid=$!
	wait_for test -s "$D/.ready"
	tpid=$(pgrep -P "$cpid")
	rm "$D/.ready"
	kill -INT "$cpid"
	wait_for has_temp "$D"
	kill -9 "$tpid"
	st=0
	wait "$cpid" || st=$?
	[ "$st" -eq 0 ]
	run ls -A "$D"
	[ "$output" = "s.snap" ]
	decodes "$D/s.snap"
}

@test "mt-capture: the target killed while recording (run): what was recorded is written" {
	"${CAP[@]}" --no-bundle --ready-fd 3 -o "$D/s.snap" -- "$F/spin" 3>"$D/.ready" &
	cpid=$!
	wait_for test -s "$D/.ready"
	sleep 0.3
	kill -9 "$(pgrep -P "$cpid")"
	st=0
	wait "$cpid" || st=$?
	[ "$st" -eq 0 ]
	decodes "$D/s.snap"
	[ "$(tail -1 "$BATS_TEST_TMPDIR/ev" | cut -d' ' -f1)" = end ]
}

@test "mt-capture: the target killed while recording (attach): what was recorded is written" {
	"$F/spin" &
	tpid=$!
	"${ATT[@]}" -p "$tpid" --ready-fd 3 -o "$D/s.snap" 3>"$D/.ready" &
	cpid=$!
	wait_for test -s "$D/.ready"
	sleep 0.3
	kill -9 "$tpid"
	st=0
	wait "$cpid" || st=$?
	[ "$st" -eq 0 ]
	decodes "$D/s.snap"
}

@test "mt-capture: SIGTERM while attached writes the snapshot and leaves the target running, untraced" {
	"$F/spin" &
	tpid=$!
	"${ATT[@]}" -p "$tpid" --ready-fd 3 -o "$D/s.snap" 3>"$D/.ready" &
	cpid=$!
	wait_for test -s "$D/.ready"
	sleep 0.3
	kill -TERM "$cpid"
	st=0
	wait "$cpid" || st=$?
	[ "$st" -eq 0 ]
	decodes "$D/s.snap"
	sleep 0.2
	run grep -E '^(State|TracerPid):' "/proc/$tpid/status"
	[ "${lines[0]}" = "State:	R (running)" ]
	[ "${lines[1]}" = "TracerPid:	0" ]
}

@test "mt-capture: attach to a process that is gone exits 1 and writes nothing" {
	"$F/spin" 1 &
	gone=$!
	wait "$gone"
	run "${ATT[@]}" -p "$gone" -o "$D/s.snap"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: no process $gone" ]
	run ls -A "$D"
	[ "$output" = "" ]
}

@test "mt-capture: attach to a zombie exits 1 and writes nothing" {
	# A parent that never reaps its exited child (SIGCHLD default even
	# if our caller ignores it, which would reap automatically).
	python3 -c 'import os, signal, sys, time
signal.signal(signal.SIGCHLD, signal.SIG_DFL)
pid = os.fork()
if pid == 0:
    os._exit(0)
print(pid, flush=True)
time.sleep(30)' > "$D/.zpid" &
	ppid_=$!
	wait_for test -s "$D/.zpid"
	z=$(cat "$D/.zpid")
	rm "$D/.zpid"
	wait_for grep -q '^State:.Z' "/proc/$z/status"
	run "${ATT[@]}" -p "$z" -o "$D/s.snap"
	kill "$ppid_"
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-capture: "*"$z"* ]]
	run ls -A "$D"
	[ "$output" = "" ]
}

@test "mt-capture: a program that does not exist exits 1 and writes nothing" {
	run "${CAP[@]}" -o "$D/s.snap" -- "$D/no-such-program"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: cannot find program '$D/no-such-program'" ]
	run ls -A "$D"
	[ "$output" = "" ]
}

@test "mt-capture: -o - into a reader that exits early reports the lost snapshot and exits 1" {
	pipe_head "${CAP[@]}" -o - -- "$F/spin" 1000
	[ "$pstatus" -eq 1 ]
	[ "$perr" = "mt-capture: cannot write snapshot '-': Broken pipe; nothing was left under that name" ]
}

@test "mt-capture: -o onto a full device exits 1 with the reason and leaves the device in place" {
	device_node "$D/full"
	run "${CAP[@]}" --no-bundle -o "$D/full" -- "$F/spin" 100
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: cannot write snapshot '$D/full': No space left on device; nothing was left under that name" ]
	[ -c "$D/full" ]
	run ls -A "$D"
	[ "$output" = "full" ]
}

@test "mt-capture: -o onto a null device records into it and leaves it a device" {
	# Never /dev/null itself: a regression would replace the system's.
	mknod "$D/null" c 1 3
	run "${CAP[@]}" --no-bundle -o "$D/null" -- "$F/spin" 100
	[ "$status" -eq 0 ]
	[ -c "$D/null" ]
}
