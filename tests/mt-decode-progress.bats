#!/usr/bin/env bats
# mt-decode progress lines (issue 8): shown on stderr only when it is a
# terminal and -q is not given, erased at the end, never mixed into the
# event stream.  The terminal is a pty from script(1); the environment
# variable MT_PROGRESS_INTERVAL_MS=0 makes the lines come as often as the
# decode loop asks (every 4096 blocks, or every buffer under -j), so the
# tests do not depend on timing.

load helpers/gen-synth

setup_file() {
	T="$BATS_FILE_TMPDIR"
	gen_synth_build "$T" 7
	# one thread buffer, and three for -j 2
	"$T/gen-synth" snap -C -S 7 -t 1 -m 1 -e "$T/prog" -o "$T/one.snap"
	"$T/gen-synth" snap -C -S 7 -t 3 -m 1 -e "$T/prog" -o "$T/three.snap"
	mt-decode -j 1 -o "$T/one.ev" "$T/one.snap"
	mt-decode -j 1 -o "$T/three.ev" "$T/three.snap"
}

setup() {
	T="$BATS_FILE_TMPDIR"
	export MT_PROGRESS_INTERVAL_MS=0
}

# pty CMD: run CMD with stdin, stdout and stderr on a pty; $output is
# what appeared on the terminal.
pty() {
	run script -qec "$1" /dev/null
}

@test "mt-decode on a terminal shows the share of PT bytes and the events, then erases the line" {
	pty "mt-decode -j 1 '$T/one.snap' > '$T/tty1.ev'"
	[ "$status" -eq 0 ]
	[[ "$output" =~ mt-decode:\ [0-9]+%\ of\ [0-9.]+\ [KM]iB,\ [0-9]+\ events ]]
	# the last thing written erases the line
	[ "${output: -4}" = $'\r\033[K' ]
	# the event stream is the one written without a terminal
	cmp "$T/one.ev" "$T/tty1.ev"
}

@test "mt-decode -j 2 on a terminal shows progress too, same stream" {
	pty "mt-decode -j 2 '$T/three.snap' > '$T/tty3.ev'"
	[ "$status" -eq 0 ]
	[[ "$output" =~ mt-decode:\ [0-9]+%\ of\ [0-9.]+\ [KM]iB,\ [0-9]+\ events ]]
	cmp "$T/three.ev" "$T/tty3.ev"
}

@test "mt-decode with stderr not a terminal writes nothing to it" {
	run mt-decode -j 1 -o "$T/f.ev" "$T/one.snap"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	pty "mt-decode -j 2 '$T/three.snap' > '$T/f3.ev' 2> '$T/err'"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ ! -s "$T/err" ]
	cmp "$T/three.ev" "$T/f3.ev"
}

@test "mt-decode -q on a terminal shows no progress" {
	pty "mt-decode -q -j 1 '$T/one.snap' > '$T/q.ev'"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	pty "mt-decode --quiet -j 2 '$T/three.snap' > '$T/q3.ev'"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	cmp "$T/one.ev" "$T/q.ev"
}
