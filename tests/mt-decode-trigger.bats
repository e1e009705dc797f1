#!/usr/bin/env bats
# Where a trigger hit goes in the event stream.  The hit stops the thread
# at the probed instruction (a uprobe's trap; the software backend stops
# it for the snapshot), and that stop is the gap a `disable` record starts:
# the hit belongs to the stack the thread reached, so at the same time it
# comes before the disable, and the stack mt-fxt shows at the hit ends in
# the probed function, not in a [untraced] gap frame.

setup_file() {
	export D="$BATS_FILE_TMPDIR"
	cc -O2 -g -o "$D/demo" "$MT_ROOT/demo/demo.c" -ldl
	mt-capture run -q -b emulate --trigger libm.so.6:cos -o "$D/cos.snap" \
	    -- "$D/demo" > /dev/null
	mt-decode -o "$D/cos.ev" "$D/cos.snap"
	mt-symbolize -q -o "$D/cos.sym" "$D/cos.ev"
}

@test "mt-decode: a trigger hit at the time tracing stops comes before the disable" {
	run awk '$1 == "trigger" { print prev; getline; print $1 } { prev = $1 }' "$D/cos.ev"
	[ "${lines[0]}" = call ]
	[ "${lines[1]}" = disable ]
}

@test "mt-fxt: the stack at a trigger hit ends in the function the probe is in" {
	local loc fn want
	loc=$(awk '$1 == "trigger" { sub(/^@/, "", $NF); print $NF }' "$D/cos.sym")
	fn=$(awk -v l="$loc" '$1 == "loc" && $2 == l { split($4, a, ":"); print a[1] }' "$D/cos.sym")
	want=$(awk -v f="$fn" '$1 == "fn" && $2 == f { print $5 }' "$D/cos.sym")
	[[ "$want" == *cos* ]]
	run mt-fxt --format summary "$D/cos.sym"
	[ "$status" -eq 0 ]
	run awk '/^trigger 1 /{on=1; next} on && /^  /{last=$1; next} on{exit} END{print last}' <<< "$output"
	[ "$output" = "$want" ]
}
