#!/usr/bin/env bats
# The qemu backend end to end: programs run under
# `mt-capture run --backend qemu`, the snapshot goes through mt-decode and
# the call/return sequence it reports must equal, per thread, the branch
# log the plugin writes (--ground-truth) and, after symbolization, the
# one the ptrace backend (--backend emulate) records of the same program,
# with zero decode errors.  Needs qemu-x86_64 (Debian's qemu-user).

setup_file() {
	export E="$BATS_FILE_TMPDIR"
	command -v qemu-x86_64 > /dev/null || return 0
	local f
	for f in recurse fnptr switch longjmp signal threads; do
		cc -O2 -g -pthread -o "$E/$f" "$MT_ROOT/tests/data/emu/$f.c"
	done
	c++ -O2 -g -o "$E/except" "$MT_ROOT/tests/data/emu/except.cpp"
	cc -O2 -g -o "$E/demo" "$MT_ROOT/demo/demo.c" -ldl
	cc -O2 -g -pthread -o "$E/dthreads" "$MT_ROOT/demo/threads.c" -lm
	c++ -O2 -g -o "$E/dcxx" "$MT_ROOT/demo/cxxdemo.cpp"
}

setup() {
	command -v qemu-x86_64 > /dev/null ||
	    skip "needs qemu-x86_64 (Debian package qemu-user)"
}

teardown() {
	[ -n "${TPID:-}" ] && kill -KILL "$TPID" 2>/dev/null || true
	true
}

# truth GT SNAPINDEX: the executed calls and returns before snapshot
# SNAPINDEX, as "kind tid from to", per thread in execution order.
truth() {
	awk -v want="$2" '
	    $1 == "snapshot" { if ($2 == want) exit; next }
	    $2 == "call" || $2 == "icall" { print "call", $1, $3, $4 }
	    $2 == "ret" { print "ret", $1, $3, $4 }' "$1" | sort -s -k2,2n
}

# decoded EVENTS: mt-decode's calls and returns the same way.
decoded() {
	awk '$1 == "call" || $1 == "ret" { print $1, $3, $4, $5 }' "$1" |
	    sort -s -k2,2n
}

# names EVENTS PROG [MAIN]: after mt-symbolize, each thread's calls into
# and returns from functions of PROG, as "call:NAME" / "ret:NAME", one
# thread per line, the lines sorted (thread ids differ between runs);
# with MAIN, the main thread's from main's first instruction on.
names() {
	mt-symbolize < "$1" | awk -v prog="$2" -v main="${3:-}" '
	    $1 == "fn" { path[$2] = $4; name[$2] = $5 }
	    $1 == "loc" { split($4, a, ":"); fn[$2] = a[1] }
	    $1 == "call" || $1 == "ret" {
		l = ($1 == "call") ? $7 : $6
		sub("@", "", l)
		f = fn[l]
		if (path[f] != prog) next
		if (main != "" && $3 == first && !inmain) {
			if ($1 == "call" && name[f] == "main") inmain = 1
			next
		}
		seq[$3] = seq[$3] " " $1 ":" name[f]
	    }
	    $1 == "thread" && first == "" { first = $3 }
	    END { for (t in seq) print seq[t] }' | sort
}

# capture NAME ARGS...: record with the qemu backend and its ground truth,
# decode with zero errors, compare the calls and returns.
capture() {
	local name=$1
	shift
	run mt-capture run -q -b qemu --ground-truth "$E/$name.gt" \
	    -o "$E/$name.snap" "$@"
	[ "$status" -eq 0 ]
	run mt-decode --stats -o "$E/$name.ev" "$E/$name.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	truth "$E/$name.gt" 0 > "$E/$name.want"
	decoded "$E/$name.ev" > "$E/$name.got"
	[ -s "$E/$name.want" ]
	diff -u "$E/$name.want" "$E/$name.got"
}

# same_as_emulate NAME PROG ARGS...: the emulate backend's capture of the
# same program (from main on, to keep the single-stepping short) has the
# same calls into PROG's functions, by name.
same_as_emulate() {
	local name=$1 prog=$2
	shift 2
	run mt-capture run -q -b emulate --start-at main \
	    -o "$E/$name.emu.snap" "$@" -- "$prog"
	[ "$status" -eq 0 ]
	mt-decode -o "$E/$name.emu.ev" "$E/$name.emu.snap"
	names "$E/$name.emu.ev" "$prog" > "$E/$name.emu.names"
	names "$E/$name.ev" "$prog" main > "$E/$name.qemu.names"
	[ -s "$E/$name.emu.names" ]
	diff -u "$E/$name.emu.names" "$E/$name.qemu.names"
}

@test "qemu: the demo, captured at exit, decodes into exactly the calls that ran" {
	capture demo -- "$E/demo" 3
	run mt-decode --info "$E/demo.snap"
	[[ "$output" == *"meta: backend-name = qemu"* ]]
	[[ "$output" == *"meta: reason = exit"* ]]
	# the guest's own mappings, at QEMU's guest addresses
	[[ "$output" == *"$E/demo"* ]]
	[[ "$output" == *"libm.so.6"* ]]
	[[ "$output" != *"qemu-x86_64"* ]]
	# cos ran six times, from main through the pointer dlsym returned
	run sh -c "mt-symbolize < '$E/demo.ev' | grep -c '^fn .* cos$'"
	[ "$output" -ge 1 ]
}

@test "qemu: deep recursion past the 64-entry return stack" {
	capture recurse -- "$E/recurse"
	run grep -c '^call ' "$E/recurse.got"
	[ "$output" -ge 200 ]
	same_as_emulate recurse "$E/recurse"
}

@test "qemu: calls through function pointers, same as the emulate backend" {
	capture fnptr -- "$E/fnptr"
	same_as_emulate fnptr "$E/fnptr"
}

@test "qemu: a switch compiled to a jump table" {
	capture switch -- "$E/switch"
	grep -q ' ijmp ' "$E/switch.gt"
	same_as_emulate switch "$E/switch"
}

@test "qemu: setjmp/longjmp out of nested calls" {
	capture longjmp -- "$E/longjmp"
	same_as_emulate longjmp "$E/longjmp"
}

@test "qemu: a C++ exception unwinds through three frames" {
	capture except -- "$E/except"
	grep -q _Unwind_RaiseException <(mt-symbolize < "$E/except.ev")
	same_as_emulate except "$E/except"
}
