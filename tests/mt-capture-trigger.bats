#!/usr/bin/env bats
# Uprobe triggers against real processes (the uprobe PMU works here, as
# root): a trigger in a worker thread, in a library the target dlopen()s
# later, by FILE:LINE and by address; multi-snapshot; the hits recorded
# with time, pid, tid and ip.  The emulate backend records the trace.

load helpers/mt-capture-targets

setup_file() {
	build_targets
}

setup() {
	if [ ! -e /sys/bus/event_source/devices/uprobe/type ]; then
		skip "needs the uprobe PMU (CONFIG_UPROBE_EVENTS)"
	fi
	if [ "$(id -u)" -ne 0 ]; then
		skip "needs root: uprobe events need CAP_SYS_ADMIN"
	fi
}

info() {
	run mt-decode --info "$1"
	[ "$status" -eq 0 ]
}

@test "mt-capture: a trigger fires in a worker thread, not only the main one" {
	run mt-capture run -b emulate --start-at main --trigger mt_test_hit \
	    -o "$T/worker.snap" -- "$T/worker" 200
	[ "$status" -eq 0 ]
	[[ "$output" == *"trigger 'mt_test_hit' is mt_test_hit in $T/worker+0x"* ]]
	[[ "$output" == *"wrote snapshot 0 (trigger)"* ]]
	info "$T/worker.snap"
	[[ "$output" == *"meta: reason = trigger"* ]]
	# the hit names the worker thread: tid != pid
	hit=$(printf '%s\n' "$output" | grep '^trigger mt_test_hit ')
	[[ "$hit" =~ thread\ ([0-9]+)/([0-9]+)\ snapshot\ 0 ]]
	[ "${BASH_REMATCH[1]}" != "${BASH_REMATCH[2]}" ]
	# the address is mt_test_hit's in the running PIE
	[[ "$hit" =~ at\ 0x([0-9a-f]+) ]]
	off=$(nm "$T/worker" | awk '$3 == "mt_test_hit" {print $1}')
	[ $(( 0x${BASH_REMATCH[1]} % 4096 )) -eq $(( 0x$off % 4096 )) ]
}

@test "mt-capture: a trigger in a library the target dlopen()s later (libm.so.6:cos)" {
	run mt-capture run -b emulate --start-at call_it \
	    --trigger libm.so.6:cos -o "$T/dl.snap" -- "$T/dl"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "1.878" ]
	[[ "$output" == *"trigger 'libm.so.6:cos' is cos"*"libm.so.6+0x"* ]]
	info "$T/dl.snap"
	[[ "$output" == *"meta: reason = trigger"* ]]
	[[ "$output" == *"trigger libm.so.6:cos at 0x"* ]]
	# the library arrived after the start: bundled from the sideband
	[[ "$output" == *"bundled elf "*"/libm.so.6, "* ]]
}

@test "mt-capture: the sideband event records the dlopen'ed library with its build-id" {
	run mt-capture run -q -b emulate --start-at call_it --no-bundle \
	    -o "$T/sb.snap" -- "$T/dl"
	[ "$status" -eq 0 ]
	run mt-decode "$T/sb.snap"
	[ "$status" -eq 0 ]
	id=$(readelf -n "$(realpath /lib/x86_64-linux-gnu/libm.so.6)" |
	    awk '/Build ID/ {print $3}')
	[ -n "$id" ]
	[[ "$output" == *" $id "*"libm.so.6"* ]]
}

@test "mt-capture: FILE:LINE and addr: triggers resolve in the executable" {
	run mt-capture run -b emulate --start-at main \
	    --trigger worker.c:17 -o "$T/line.snap" -- "$T/worker"
	[ "$status" -eq 0 ]
	[[ "$output" == *"trigger 'worker.c:17' is worker.c:17 in $T/worker+0x"* ]]
	[[ "$output" == *"wrote snapshot 0 (trigger)"* ]]
	off=$(nm "$T/worker" | awk '$3 == "mt_test_hit" {print $1}')
	run mt-capture run -b emulate --start-at main \
	    --trigger "addr:0x$off" -o "$T/addr.snap" -- "$T/worker"
	[ "$status" -eq 0 ]
	[[ "$output" == *"wrote snapshot 0 (trigger)"* ]]
}

@test "mt-capture: --multi-snapshot writes one snapshot per hit, up to --max-snapshots" {
	run mt-capture attach -b emulate --trigger work --max-snapshots 2 \
	    -o "$T/multi.snap" -p "$("$T/loop" > "$T/loop.pid" & echo $!)"
	TPID=$(head -1 "$T/loop.pid")
	kill -KILL "$TPID"
	[ "$status" -eq 0 ]
	[[ "$output" == *"wrote snapshot 0 (trigger): '$T/multi.snap'"* ]]
	[[ "$output" == *"wrote snapshot 1 (trigger): '$T/multi-1.snap'"* ]]
	[ ! -e "$T/multi-2.snap" ]
	info "$T/multi-1.snap"
	[[ "$output" == *"meta: snapshot-index = 1"* ]]
	[[ "$output" == *"meta: trigger-hits = "* ]]
	# each snapshot holds the hits that caused it
	[[ "$output" == *"trigger work at 0x"*" snapshot 1"* ]]
	[[ "$output" != *" snapshot 0"* ]]
}

# site TRIGGER: where mt-capture resolves TRIGGER in demo/cxxdemo (the
# "is ... in FILE+0xOFF" line), into $site
site() {
	run mt-capture run -b emulate --start-at main -t "$1" \
	    -o "$T/cxx.snap" -- "$MT_ROOT/demo/cxxdemo"
	[ "$status" -eq 0 ]
	[[ "$output" =~ trigger\ .*\ in\ ([^ ]*cxxdemo\+0x[0-9a-f]+) ]]
	site=${BASH_REMATCH[1]}
	run mt-decode --info "$T/cxx.snap"
	[[ "$output" == *"meta: reason = trigger"* ]]
}

@test "mt-capture: a C++ trigger by its demangled name, whole or without types" {
	site _Z11sum_squaresIiET_RKSt6vectorIS0_SaIS0_EE
	mangled=$site
	# the symbol's address as nm prints it (its file offset here)
	a=$(nm "$MT_ROOT/demo/cxxdemo" | awk '$3 == "_Z11sum_squaresIiET_RKSt6vectorIS0_SaIS0_EE" {print $1}')
	[ "$mangled" = "$MT_ROOT/demo/cxxdemo+0x$(printf %x $((16#$a)))" ]
	site 'int sum_squares<int>(std::vector<int, std::allocator<int> > const&)'
	[ "$site" = "$mangled" ]
	site 'sum_squares<int>'
	[ "$site" = "$mangled" ]
	# a clone (GCC's .constprop) by the name the trace shows, or without it
	site 'level2(int)'
	l2=$site
	site level2
	[ "$site" = "$l2" ]
	# a name that fits two instances is refused, naming both
	run mt-capture run -b emulate -t sum_squares -o "$T/cxx2.snap" \
	    -- "$MT_ROOT/demo/cxxdemo"
	[ "$status" -eq 1 ]
	[[ "$output" == *"'sum_squares' names more than one function"*"sum_squares<double>"*"sum_squares<int>"* ]]
}

@test "mt-capture: an unknown trigger symbol or library is an error before the target runs" {
	run mt-capture run -b emulate --trigger no_such_function \
	    -o "$T/x.snap" -- touch "$T/ran"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no function 'no_such_function' in '"* ]]
	[ ! -e "$T/ran" ]
	run mt-capture run -b emulate --trigger libnothere.so.9:f \
	    -o "$T/x.snap" -- touch "$T/ran"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot find library 'libnothere.so.9'"* ]]
	[ ! -e "$T/ran" ]
}

@test "mt-capture: a hw: trigger needs its code mapped when recording starts" {
	run mt-capture run -b emulate --start-at main \
	    --trigger hw:libm.so.6:cos -o "$T/hw.snap" -- "$T/dl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"--trigger 'hw:libm.so.6:cos': "*"libm.so.6 is not mapped in process "*" yet"* ]]
	[ ! -e "$T/hw.snap" ]
}

@test "mt-capture: a uprobe trigger breaks only into the traced process, not others mapping the file" {
	local lib="$BATS_TEST_TMPDIR/lib"
	rm -f "$T/go"
	mkfifo "$T/go"
	# a copy of libm of this test's own: another run's uprobe on the
	# system's libm cannot put an int3 into it
	private_libm "$lib"
	LD_LIBRARY_PATH="$lib" start_capture run -b emulate \
	    --start-at call_it --trigger libm.so.6:cos -o "$T/own.snap" -- \
	    "$T/fifocos" "$T/go"
	# an unrelated process reads cos's first byte in its own map of it
	peek=$(LD_LIBRARY_PATH="$lib" "$T/peekcode" cos || echo failed)
	# then the traced process calls cos: its trigger still fires
	echo x > "$T/go"
	wait_capture
	[ "$CAP_STATUS" -eq 0 ]
	[ "$(tail -1 "$T/cap.out")" = "1.878" ]
	grep -q "wrote snapshot 0 (trigger)" "$T/cap.err"
	peek_is_original "$T/cap.err" "$lib/libm.so.6" "$peek"
	info "$T/own.snap"
	[[ "$output" == *"trigger libm.so.6:cos at 0x"* ]]
}
