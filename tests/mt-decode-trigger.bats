#!/usr/bin/env bats
# Where a trigger hit goes in the event stream.  The hit stops the thread
# at the probed instruction (a uprobe's trap; a software backend stops it
# for the snapshot), and that stop is the gap a `disable` record starts:
# the hit belongs to the stack the thread reached, so it comes before the
# disable (at the disable's time when it was recorded a little later at
# the IP where tracing stopped, as the qemu backend records it), and the
# stack mt-fxt shows at the hit ends in the probed function, not in a
# [untraced] gap frame.

setup_file() {
	export D="$BATS_FILE_TMPDIR"
	cc -O2 -g -o "$D/demo" "$MT_ROOT/demo/demo.c" -ldl
}

# cos BACKEND: capture the demo up to cos with BACKEND into $D/BACKEND.ev
# and $D/BACKEND.sym.
cos() {
	run mt-capture run -q -b "$1" --trigger libm.so.6:cos \
	    -o "$D/$1.snap" -- "$D/demo"
	[ "$status" -eq 0 ]
	mt-decode -o "$D/$1.ev" "$D/$1.snap"
	mt-symbolize -q -o "$D/$1.sym" "$D/$1.ev"
}

# hit_before_disable BACKEND: the record before the hit is the call that
# reached it, the one after it the disable of the stop.
hit_before_disable() {
	run awk '$1 == "trigger" { print prev; getline; print $1 } { prev = $1 }' "$D/$1.ev"
	[ "${lines[0]}" = call ]
	[ "${lines[1]}" = disable ]
}

# stack_ends_in_probe BACKEND: the last frame of the stack at the hit is
# the function the hit's address is in.
stack_ends_in_probe() {
	local loc fn want
	loc=$(awk '$1 == "trigger" { sub(/^@/, "", $NF); print $NF }' "$D/$1.sym")
	fn=$(awk -v l="$loc" '$1 == "loc" && $2 == l { split($4, a, ":"); print a[1] }' "$D/$1.sym")
	want=$(awk -v f="$fn" '$1 == "fn" && $2 == f { print $5 }' "$D/$1.sym")
	[[ "$want" == *cos* ]]
	run mt-fxt --format summary "$D/$1.sym"
	[ "$status" -eq 0 ]
	run awk '/^trigger 1 /{on=1; next} on && /^  /{last=$1; next} on{exit} END{print last}' <<< "$output"
	[ "$output" = "$want" ]
}

@test "mt-decode: a trigger hit at the time tracing stops comes before the disable (emulate)" {
	cos emulate
	hit_before_disable emulate
}

@test "mt-fxt: the stack at a trigger hit ends in the function the probe is in (emulate)" {
	[ -s "$D/emulate.sym" ] || cos emulate
	stack_ends_in_probe emulate
}

@test "mt-decode: a trigger hit recorded after the stop at its address comes before the disable (qemu)" {
	command -v qemu-x86_64 > /dev/null || skip "needs qemu-x86_64 (qemu-user)"
	cos qemu
	hit_before_disable qemu
	# at the disable's time, so the thread's events stay in time order
	run awk '$1 == "trigger" { t = $2; getline; print (t == $2) }' "$D/qemu.ev"
	[ "$output" = 1 ]
}

@test "mt-fxt: the stack at a trigger hit ends in the function the probe is in (qemu)" {
	command -v qemu-x86_64 > /dev/null || skip "needs qemu-x86_64 (qemu-user)"
	[ -s "$D/qemu.sym" ] || cos qemu
	stack_ends_in_probe qemu
}
