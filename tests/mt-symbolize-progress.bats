#!/usr/bin/env bats
# mt-symbolize's progress line (issue 8 item 5): shown on stderr only when
# stderr is a terminal and -q is not given, never on stdout, erased at the
# end and before a warning.  A terminal comes from script(1);
# MT_PROGRESS_INTERVAL_MS=0 makes a line due every 4,096 events.

setup() {
	D="$BATS_TEST_TMPDIR"
	export MT_PROGRESS_INTERVAL_MS=0
	"$MT_ROOT/tests/data/symbolize/gen-events" 7 20000 300 > "$D/s.ev"
	mt-symbolize -o "$D/plain.out" "$D/s.ev" 2> "$D/plain.err"
}

# Runs $1 under a pseudo-terminal; its terminal output lands in $D/tty.
on_tty() {
	script -qec "$1" /dev/null > "$D/tty"
}

@test "mt-symbolize: a progress line on a terminal, the same output as without" {
	on_tty "mt-symbolize -o '$D/tty.out' '$D/s.ev'"
	cmp "$D/plain.out" "$D/tty.out"
	# A regular file as input: the share of it and the events done.
	run cat "$D/tty"
	[[ "$output" == *$'\r'"mt-symbolize: "*"% of "*" KiB, "*" events"$'\033[K'* ]]
	# Erased at the end.
	[[ "$output" == *$'\r\033[K' ]]
	# stdout on the terminal too: the events and the progress share it,
	# the events unchanged.
	on_tty "mt-symbolize < '$D/s.ev' 2> /dev/null > '$D/tty2.out'"
	cmp "$D/plain.out" "$D/tty2.out"
}

@test "mt-symbolize: reading a pipe shows no progress (the first program of a pipeline does)" {
	on_tty "cat '$D/s.ev' | mt-symbolize > '$D/tty.out'"
	cmp "$D/plain.out" "$D/tty.out"
	[ ! -s "$D/tty" ]
	# a FIFO named as the input is a pipe too
	mkfifo "$D/fifo"
	on_tty "cat '$D/s.ev' > '$D/fifo' & mt-symbolize -o '$D/fifo.out' '$D/fifo'; wait"
	cmp "$D/plain.out" "$D/fifo.out"
	[ ! -s "$D/tty" ]
}

@test "mt-symbolize: no progress when stderr is not a terminal or with -q" {
	# Not a terminal (the setup's run): nothing on stderr.
	[ ! -s "$D/plain.err" ]
	# stdin and stdout on a terminal, stderr to a file: still nothing.
	on_tty "mt-symbolize '$D/s.ev' 2> '$D/err' > '$D/out'"
	[ ! -s "$D/err" ]
	cmp "$D/plain.out" "$D/out"
	# -q and --quiet on a terminal: nothing at all.
	on_tty "mt-symbolize -q -o '$D/q.out' '$D/s.ev'"
	[ ! -s "$D/tty" ]
	cmp "$D/plain.out" "$D/q.out"
	on_tty "mt-symbolize --quiet -o '$D/q.out' '$D/s.ev'"
	[ ! -s "$D/tty" ]
}

@test "mt-symbolize: a warning erases the progress line first" {
	# 20,000 events in libc, then one in a mapping whose file is missing.
	{
		cat "$D/s.ev"
		printf 'mod 1000 0x7e0000000000 0x7e0000001000 0 - /nonexistent/libx.so\n'
		printf 'call 999999 1001 0x7e0000000010 0x7e0000000020\n'
	} > "$D/w.ev"
	on_tty "mt-symbolize -o '$D/w.out' '$D/w.ev'"
	run cat "$D/tty"
	[[ "$output" == *"events"$'\033[K\r\033[K'"mt-symbolize: warning: "*"libx.so"* ]]
}

@test "mt-symbolize: MT_PROGRESS_INTERVAL_MS that is not a number falls back to the default" {
	# 250 ms: no line on a run this short, but no failure either.
	MT_PROGRESS_INTERVAL_MS=soon on_tty "mt-symbolize -o '$D/x.out' '$D/s.ev'"
	cmp "$D/plain.out" "$D/x.out"
}
