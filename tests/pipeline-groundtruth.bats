#!/usr/bin/env bats
# The whole pipeline against programs that count themselves: the small
# programs of tests/data/groundtruth/ count the calls of their functions
# and the deepest nesting of them (gt.h) and print the counts.  Each runs
# under the software PT backend from main with a ring that holds the
# whole run; then
#   - mt-decode's call records into each counted function (mt-symbolize
#     names the targets) must number what the program counted, and
#   - the frames of mt-fxt's reconstruction (--format json; counted by
#     tests/helpers/gt-stacks) must number the program's calls, nest as
#     deep as it counted and no deeper.
# Signals, longjmp, exceptions, threads, code without symbols and the Go
# scheduler are where a reconstruction goes wrong (issue 17).

setup_file() {
	export G="$BATS_FILE_TMPDIR"
	local s="$MT_ROOT/tests/data/groundtruth" f
	local cf="-O1 -g -fno-optimize-sibling-calls -fno-inline-functions-called-once"
	for f in signal sigjmp longjmp; do
		cc $cf -o "$G/$f" "$s/$f.c"
	done
	cc $cf -pthread -o "$G/thread" "$s/thread.c"
	c++ $cf -o "$G/except" "$s/except.cpp"
	# main stays in .dynsym (for --start-at); the rest has no symbol
	cc -O2 -g0 -rdynamic -o "$G/stripped" "$s/stripped.c"
	strip "$G/stripped"
	GOCACHE="$G/gocache" GO111MODULE=off go build -o "$G/goroutines" \
	    "$s/goroutines.go"
}

# capture NAME [mt-capture options]: run $G/NAME from main under the
# software backend (its counts in $G/NAME.truth), decode it without
# errors into $G/NAME.sym (symbolized) and $G/NAME.json (mt-fxt).
capture() {
	local p=$1 start=main
	shift
	[ "$p" = goroutines ] && start=main.main
	run mt-capture run -q -b emulate --start-at "$start" -s 64M \
	    -o "$G/$p.snap" "$@" -- "$G/$p"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$G/$p.truth"
	grep -q '^depth ' "$G/$p.truth"
	run mt-decode --info "$G/$p.snap"
	[[ "$output" != *"wrapped"* ]]
	run mt-decode --stats -o "$G/$p.ev" "$G/$p.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	mt-symbolize -q -o "$G/$p.sym" "$G/$p.ev"
	mt-fxt --format json -o "$G/$p.json" "$G/$p.sym"
	"$MT_ROOT/tests/helpers/json-check" "$G/$p.json"
}

# decoded_calls NAME SKIP...: mt-decode's calls into each counted function
# but the SKIPped ones (entered otherwise: main, a signal handler) must
# be the program's counts.
decoded_calls() {
	local p=$1 want=()
	shift
	awk -v skip=" $* " '$1 == "calls" && !index(skip, " " $2 " ")' \
	    "$G/$p.truth" > "$G/$p.want"
	mapfile -t want < <(awk '{ print $2 }' "$G/$p.want")
	[ "${#want[@]}" -gt 0 ]
	"$MT_ROOT/tests/helpers/gt-stacks" calls "$G/$p.sym" "${want[@]}" > "$G/$p.got"
	diff -u "$G/$p.want" "$G/$p.got"
}

@test "ground truth: a timer signal's handler: mt-decode's calls are the program's" {
	capture signal
	decoded_calls signal main handler
}

@test "ground truth: a signal handler that siglongjmps out: mt-decode's calls are the program's" {
	capture sigjmp
	decoded_calls sigjmp main handler
}

@test "ground truth: setjmp/longjmp out of nested calls: mt-decode's calls are the program's" {
	capture longjmp
	decoded_calls longjmp main
}

@test "ground truth: a C++ throw-and-catch loop: mt-decode's calls are the program's" {
	capture except
	decoded_calls except main
}

@test "ground truth: a thread started mid-run: mt-decode's calls are the program's" {
	capture thread --all-threads
	decoded_calls thread main
}

@test "ground truth: goroutines taking turns: mt-decode's calls are the program's" {
	GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 capture goroutines --all-threads
	decoded_calls goroutines main.main
}
