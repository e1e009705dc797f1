#!/usr/bin/env bats
# Least privilege: mt-capture gives nobody more access than they had.  As
# the unprivileged user nobody (setpriv, no capabilities): no attach to a
# process nobody could not ptrace, no kernel tracing without CAP_PERFMON
# (the live path, up to perf_event_open, against the fake intel_pt PMU of
# tests/data/sysfs/full), and snapshot files (memory contents, bundled
# binaries) created mode 0600 whatever the umask.

load helpers/faults
load helpers/fakept

AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all)

setup_file() {
	fault_tools "$BATS_FILE_TMPDIR"
	fakept_tools "$BATS_FILE_TMPDIR"
}

setup() {
	F="$BATS_FILE_TMPDIR"
	# A directory nobody can write, reachable from /.
	W=$(mktemp -d /tmp/mt-priv.XXXXXX)
	chmod 1777 "$W"
	tpid=
}

teardown() {
	if [ -n "$tpid" ]; then kill -9 "$tpid" 2>/dev/null || true; fi
	rm -rf "$W"
}

@test "mt-capture as nobody: attach to a root process is refused, and the process is untouched" {
	"$F/spin" &
	tpid=$!
	run "${AS_NOBODY[@]}" mt-capture attach -b emulate -q -p "$tpid" -o "$W/s.snap"
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-capture: cannot record process $tpid: permission denied"* ]]
	[ ! -e "$W/s.snap" ]
	run grep -E '^(State|TracerPid):' "/proc/$tpid/status"
	[ "${lines[0]}" = "State:	R (running)" ]
	[ "${lines[1]}" = "TracerPid:	0" ]
}

@test "mt-capture as nobody: kernel tracing without CAP_PERFMON is refused before the command runs" {
	run "${AS_NOBODY[@]}" env MT_SYSFS_ROOT="$MT_ROOT/tests/data/sysfs/full" \
	    mt-capture run --backend pt --kernel -o "$W/s.snap" -- touch "$W/ran"
	[ "$status" -eq 1 ]
	[[ "$output" == *"CAP_PERFMON"* ]]
	[ ! -e "$W/ran" ]
	[ ! -e "$W/s.snap" ]
}

@test "mt-capture as nobody: its own program is recorded, the snapshot is nobody's and mode 0600" {
	cp "$F/spin" "$W/spin"	# $F is root's, closed to nobody
	run "${AS_NOBODY[@]}" bash -c 'umask 000; exec "$@"' _ \
	    mt-capture run -b emulate -q --start-at main --no-bundle \
	    -o "$W/s.snap" -- "$W/spin" 100
	[ "$status" -eq 0 ]
	[ "$(stat -c '%U %a' "$W/s.snap")" = "nobody 600" ]
}

@test "mt-capture: snapshots are mode 0600 even with umask 000 (run, and -o into an existing file)" {
	run bash -c 'umask 000; exec "$@"' _ mt-capture run -b emulate -q \
	    --start-at main --no-bundle -o "$W/s.snap" -- "$F/spin" 100
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$W/s.snap")" = 600 ]
	chmod 644 "$W/s.snap"
	run bash -c 'umask 000; exec "$@"' _ mt-capture run -b emulate -q \
	    --start-at main --no-bundle -o "$W/s.snap" -- "$F/spin" 100
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$W/s.snap")" = 600 ]
}

@test "mt-capture import-raw: a snapshot holding memory pages is mode 0600" {
	printf '\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82' > "$W/pt"
	head -c 4096 /dev/zero > "$W/code.bin"
	(cd "$W" && umask 022 && mt-capture import-raw --pt pt code.bin@0x400000 -o raw.snap)
	[ "$(stat -c %a "$W/raw.snap")" = 600 ]
}

@test "mt-capture as nobody: a refused uprobe trigger names the capabilities" {
	cp "$F/spin" "$W/spin"
	run "${AS_NOBODY[@]}" mt-capture run -b emulate -q --trigger main \
	    -o "$W/s.snap" -- "$W/spin" 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot open the uprobe for trigger "*"uprobe triggers need root or CAP_SYS_ADMIN (CAP_PERFMON suffices on kernels 5.8+"* ]]
	[ ! -e "$W/s.snap" ]
}

@test "mt-capture: CAP_PERFMON without root is privileged: the default ring is 4 MiB, as perf's" {
	# the live PT path through the fakept shim (helpers/fakept.bash),
	# copied where nobody can read it
	cp "$F/fakept.so" "$W/"
	cp -r "$F/sys" "$W/sys"
	chmod -R a+rX "$W"
	for caps in -all +perfmon; do
		run setpriv --reuid=nobody --regid=nogroup --clear-groups \
		    --inh-caps="$caps" --ambient-caps="$caps" \
		    env LD_PRELOAD="$W/fakept.so" FAKEPT_TYPE=4242 \
		    FAKEPT_LOG="$W/log$caps" MT_SYSFS_ROOT="$W/sys" \
		    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		    mt-capture run -q --backend pt -o "$W/s.snap" -- true
		[ "$status" -eq 0 ]
	done
	run grep -c '^mmap aux .* len=262144 ' "$W/log-all"
	[ "$output" -eq 1 ]
	run grep -c '^mmap aux .* len=4194304 ' "$W/log+perfmon"
	[ "$output" -eq 1 ]
}
