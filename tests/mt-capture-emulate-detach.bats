#!/usr/bin/env bats
# The emulate backend detaching from a multi-threaded process attached with
# --all-threads.  The target (tests/data/capture/worker.c) has a main thread
# blocked in pthread_join and a worker sleeping in nanosleep, so both are in
# system calls the stepper interrupts on detach.  Afterwards the target must
# be alive, neither stopped nor traced, and must later exit normally: a
# single-step SIGTRAP left queued at detach used to kill it (status 133).

setup_file() {
	export E="$BATS_FILE_TMPDIR"
	cc -O2 -g -pthread -o "$E/worker" "$MT_ROOT/tests/data/capture/worker.c"
}

teardown() {
	[ -n "${TPID:-}" ] && kill -KILL "$TPID" 2>/dev/null || true
	true
}

# start_worker MS: run the worker in the background, its pid in TPID.
start_worker() {
	"$E/worker" "$1" > "$BATS_TEST_TMPDIR/out" 3>&- &
	TPID=$!
}

# wait_threads N: until the target has N threads (at most 5 s).
wait_threads() {
	local i
	for i in $(seq 500); do
		[ "$(ls "/proc/$TPID/task" | wc -l)" -ge "$1" ] && return 0
		sleep 0.01
	done
	return 1
}

# attach_detach_check: attach -a for 0.5 s, then check the target's state
# and its normal exit.
attach_detach_check() {
	local st=0
	run timeout 20 mt-capture attach -q -a -b emulate --duration 0.5 \
	    -o "$BATS_TEST_TMPDIR/a.snap" -p "$TPID"
	[ "$status" -eq 0 ]
	[ -s "$BATS_TEST_TMPDIR/a.snap" ]
	# alive, not stopped, not traced
	kill -0 "$TPID"
	run awk '$1 == "State:" { print $2 }' "/proc/$TPID/status"
	[ "$output" = "S" ]
	run awk '$1 == "TracerPid:" { print $2 }' "/proc/$TPID/status"
	[ "$output" = "0" ]
	for t in /proc/"$TPID"/task/*; do
		run awk '$1 == "State:" { print $2 } $1 == "TracerPid:" { print $2 }' "$t/status"
		[ "${lines[0]}" = "S" ]
		[ "${lines[1]}" = "0" ]
	done
	# and it finishes its work and exits 0 (not 133: SIGTRAP)
	wait "$TPID" || st=$?
	TPID=
	[ "$st" -eq 0 ]
	run cat "$BATS_TEST_TMPDIR/out"
	[ "$output" = "hits 1" ]
}

@test "emulate detach: -a on threads blocked in system calls leaves the process running untraced" {
	start_worker 4000
	wait_threads 2
	sleep 0.1	# both threads inside their blocking calls
	attach_detach_check
}

@test "emulate detach: -a right after the start (threads being stepped) leaves the process running untraced" {
	start_worker 4000
	attach_detach_check
}
