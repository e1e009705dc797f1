#!/usr/bin/env bats
# SIGINT, SIGTERM and SIGHUP during mt-decode, mt-symbolize and mt-fxt
# with -o FILE: the unfinished output's temporary file (.NAME.tmpXXXXXX,
# common/outfile) is removed, nothing appears under the final name, and the
# program dies by the signal (status 128 + signal in the shell).
# mt-symbolize and mt-fxt read a FIFO the test holds open, so they are
# blocked in read(2) with the output open when the signal comes; mt-decode
# reads its whole snapshot first, so it gets a snapshot that takes seconds
# to decode and is signalled once its temporary file is there.

load helpers/gen-synth

setup_file() {
	T="$BATS_FILE_TMPDIR"
	gen_synth_build "$T" 7
	"$T/gen-synth" snap -C -S 7 -t 1 -m 16 -e "$T/prog" -o "$T/big.snap"
	"$MT_ROOT/tests/helpers/gen-events" --events 20000 --unsymbolized \
		> "$T/unsym.ev"
	"$MT_ROOT/tests/helpers/gen-events" --events 20000 > "$T/sym.ev"
}

setup() {
	T="$BATS_FILE_TMPDIR"
	D="$BATS_TEST_TMPDIR"
	mkdir "$D/out"
}

# wait_tmp: wait until the temporary output is in $D/out (the program has
# opened it), at most 120 s; fails if the program ended first.
wait_tmp() {
	local i
	for ((i = 0; i < 12000; i++)); do
		compgen -G "$D/out/.*.tmp*" > /dev/null && return 0
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.01
	done
	echo "no temporary output appeared while the program ran"
	return 1
}

# feed_fifo FILE: start a writer that sends the first half of FILE into
# $D/in and keeps the FIFO open until $D/release exists.
feed_fifo() {
	mkfifo "$D/in"
	local n=$(($(wc -l < "$1") / 2))
	( head -n "$n" "$1"; while [ ! -e "$D/release" ]; do sleep 0.05; done ) \
		> "$D/in" &
	feeder=$!
}

# interrupt SIG STATUS: send SIG to $pid, check its status and that the
# output directory is empty afterwards.  A program still running 120 s
# later (it ignores SIG) is killed and the test fails: it never hangs.
interrupt() {
	wait_tmp
	kill -s "$1" "$pid"
	local st=0 i
	for ((i = 0; i < 12000; i++)); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.01
	done
	if kill -0 "$pid" 2> /dev/null; then
		echo "still running 120 s after SIG$1"
		kill -s KILL "$pid"
	fi
	wait "$pid" || st=$?
	touch "$D/release"
	[ -n "${feeder:-}" ] && wait "$feeder" 2> /dev/null || true
	echo "status $st"
	[ "$st" -eq "$2" ]
	run ls -A "$D/out"
	echo "left: $output"
	[ "$output" = "" ]
}

@test "mt-fxt -o FILE: SIGINT removes the temporary output, status 130" {
	feed_fifo "$T/sym.ev"
	env --default-signal=INT mt-fxt -o "$D/out/t.fxt.gz" "$D/in" &
	pid=$!
	interrupt INT 130
}

@test "mt-fxt -o FILE: SIGTERM removes the temporary output, status 143" {
	feed_fifo "$T/sym.ev"
	mt-fxt --format json -o "$D/out/t.json" "$D/in" &
	pid=$!
	interrupt TERM 143
}

@test "mt-symbolize -o FILE: SIGINT removes the temporary output, status 130" {
	feed_fifo "$T/unsym.ev"
	env --default-signal=INT mt-symbolize -o "$D/out/s.ev" "$D/in" &
	pid=$!
	interrupt INT 130
}

# With SIGHUP ignored where the suite runs (started under nohup), the
# program would inherit that and rightly keep ignoring it: reset it.
@test "mt-symbolize -o FILE: SIGHUP removes the temporary output, status 129" {
	feed_fifo "$T/unsym.ev"
	env --default-signal=HUP mt-symbolize -o "$D/out/s.ev" "$D/in" &
	pid=$!
	interrupt HUP 129
}

@test "mt-decode -o FILE: SIGTERM during the decode removes the temporary output, status 143" {
	mt-decode -j 1 -o "$D/out/big.ev" "$T/big.snap" &
	pid=$!
	interrupt TERM 143
}

@test "mt-decode -o FILE: SIGINT during the decode removes the temporary output, status 130" {
	env --default-signal=INT mt-decode -j 2 -o "$D/out/big.ev" "$T/big.snap" &
	pid=$!
	interrupt INT 130
}

@test "mt-fxt started with SIGINT ignored (as nohup does) keeps ignoring it" {
	feed_fifo "$T/sym.ev"
	env --ignore-signal=INT mt-fxt --format summary -o "$D/out/sum.txt" "$D/in" &
	pid=$!
	wait_tmp
	kill -s INT "$pid"
	touch "$D/release"
	wait "$feeder"
	local st=0
	wait "$pid" || st=$?
	[ "$st" -eq 0 ]
	[ -s "$D/out/sum.txt" ]
}
