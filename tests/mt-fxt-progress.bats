#!/usr/bin/env bats
# mt-fxt progress lines (issue 8): shown on stderr only when it is a
# terminal and -q is not given, erased at the end, never changing the
# output.  The terminal is a pty from script(1); the environment variable
# MT_PROGRESS_INTERVAL_MS=0 makes a line come every 4096 records, so the
# tests do not depend on timing.

setup_file() {
	T="$BATS_FILE_TMPDIR"
	"$MT_ROOT/tests/helpers/gen-events" --events 20000 --functions 50 \
		--threads 2 --max-depth 12 > "$T/s.events"
	mt-fxt -o "$T/ref.fxt.gz" "$T/s.events"
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

@test "mt-fxt on a terminal shows the share of the input and the events, then erases the line" {
	pty "mt-fxt -o '$T/tty.fxt.gz' '$T/s.events'"
	[ "$status" -eq 0 ]
	[[ "$output" =~ mt-fxt:\ [0-9]+%\ of\ [0-9.]+\ [KM]iB,\ [0-9]+\ events\ read,\ [0-9]+\ written ]]
	# the last thing written erases the line
	[ "${output: -4}" = $'\r\033[K' ]
	# the trace is the one written without a terminal
	cmp "$T/ref.fxt.gz" "$T/tty.fxt.gz"
}

@test "mt-fxt reading a pipe on a terminal shows no progress (the first program of a pipeline does)" {
	pty "cat '$T/s.events' | mt-fxt -o '$T/pipe.fxt.gz'"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	cmp "$T/ref.fxt.gz" "$T/pipe.fxt.gz"
}

@test "mt-fxt with --around-trigger on a terminal: progress, same trace" {
	{ cat "$T/s.events"; echo "trigger 30000 1000 0x1000 t"; } > "$T/trig.events"
	mt-fxt --around-trigger 1000000,1000000 -o "$T/trig-ref.fxt" "$T/trig.events"
	pty "mt-fxt --around-trigger 1000000,1000000 -o '$T/trig.fxt' '$T/trig.events'"
	[ "$status" -eq 0 ]
	[[ "$output" =~ mt-fxt:\ [0-9]+%\ of ]]
	cmp "$T/trig-ref.fxt" "$T/trig.fxt"
}

@test "mt-fxt with stderr not a terminal writes nothing to it" {
	run mt-fxt -o "$T/f.fxt.gz" "$T/s.events"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	pty "mt-fxt -o '$T/f2.fxt.gz' '$T/s.events' 2> '$T/err'"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ ! -s "$T/err" ]
	cmp "$T/ref.fxt.gz" "$T/f2.fxt.gz"
}

@test "mt-fxt -q on a terminal shows no progress" {
	pty "mt-fxt -q -o '$T/q.fxt.gz' '$T/s.events'"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	pty "mt-fxt --quiet -o '$T/q2.fxt.gz' '$T/s.events'"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	cmp "$T/ref.fxt.gz" "$T/q.fxt.gz"
}

@test "mt-fxt: an error on a terminal erases the progress line before the message" {
	{ cat "$T/s.events"; echo "call 99999999 1000 0xzz 0x10"; } > "$T/bad.events"
	pty "mt-fxt -o '$T/bad.fxt' '$T/bad.events'"
	[ "$status" -eq 1 ]
	[[ "$output" =~ mt-fxt:\ [0-9]+%\ of ]]
	[[ "$output" == *$'\r\033[Kmt-fxt: '"$T/bad.events: line "*": field 3: bad address '0xzz'"* ]]
	[ ! -e "$T/bad.fxt" ]
}

@test "mt-fxt --help mentions that -q also hides the progress line" {
	run mt-fxt --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"-q, --quiet          no warnings, no progress line"* ]]
}
