#!/usr/bin/env bats
# The whole pipeline against programs that count themselves: the small
# programs of tests/data/groundtruth/ count the calls of their functions
# and the deepest nesting of them (gt.h) and print the counts.  Each runs
# under a software PT backend (qemu when installed, from the first
# instruction; else the ptrace one from main) with a ring that holds the
# whole run; then
#   - mt-decode's call records into each counted function (mt-symbolize
#     names the targets) must number what the program counted, and
#   - the frames of mt-fxt's reconstruction (--format json; counted by
#     tests/helpers/gt-frames, which reads it as a stream) must number the
#     program's calls, nest as deep as it counted and no deeper.
# Signals, longjmp, exceptions, threads, code without symbols and the Go
# scheduler are where a reconstruction goes wrong (issue 17).

setup_file() {
	export G="$BATS_FILE_TMPDIR"
	local s="$MT_ROOT/tests/data/groundtruth" f
	local cf="-O1 -g -fno-optimize-sibling-calls -fno-inline-functions-called-once"
	for f in signal sigjmp longjmp sigbranch; do
		cc $cf -o "$G/$f" "$s/$f.c"
	done
	cc $cf -pthread -o "$G/thread" "$s/thread.c"
	c++ $cf -o "$G/except" "$s/except.cpp"
	# main stays in .dynsym (for --start-at); the rest has no symbol
	cc -O2 -g0 -rdynamic -o "$G/stripped" "$s/stripped.c"
	strip "$G/stripped"
	GOCACHE="$G/gocache" GO111MODULE=off go build -o "$G/goroutines" \
	    "$s/goroutines.go"
	# the same programs, captured with the ptrace backend
	cp "$G/goroutines" "$G/goroutines-ptrace"
	cp "$G/signal" "$G/signal-ptrace"
}

# capture NAME [mt-capture options]: run $G/NAME from main under the
# software backend (its counts in $G/NAME.truth), decode it without
# errors into $G/NAME.sym (symbolized) and $G/NAME.json (mt-fxt).
# Done once per file: later tests of the same program reuse it.
# GT_EMULATE=1: the ptrace backend even where QEMU is installed.
capture() {
	local p=$1 start=main
	shift
	[ -s "$G/$p.json" ] && return 0
	[[ "$p" == goroutines* ]] && start=main.main
	# the qemu backend records the whole run fast; the ptrace backend
	# where QEMU is not installed, from main
	local bk=(-b emulate --start-at "$start")
	command -v qemu-x86_64 > /dev/null && [ -z "${GT_EMULATE:-}" ] &&
	    bk=(-b qemu)
	run mt-capture run -q "${bk[@]}" -s 64M \
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
	# functions without symbols: named as mt-symbolize names them
	if grep -q '^addr ' "$G/$p.truth"; then
		mv "$G/$p.truth" "$G/$p.printed"
		"$MT_ROOT/tests/helpers/gt-stacks" rename "$G/$p.sym" \
		    "$G/$p.printed" > "$G/$p.truth"
	fi
	mt-fxt --format json -o "$G/$p.json" "$G/$p.sym"
	# python's parser on what it reads in seconds (the timer signal
	# program under QEMU writes 110 MB: gt-frames checks its nesting)
	[ "$(stat -c %s "$G/$p.json")" -gt $((20 << 20)) ] ||
	    "$MT_ROOT/tests/helpers/json-check" "$G/$p.json"
}

# decoded_calls NAME SKIP...: mt-decode's calls into each counted function
# but the SKIPped ones (entered otherwise: main, a signal handler) must
# be the program's counts.
decoded_calls() {
	local p=$1 want=()
	shift
	awk -v skip=" $* " '$1 == "calls" {
	    n = substr($0, 7, length($0) - 7 - length($NF))
	    if (!index(skip, " " n " ")) print }' "$G/$p.truth" > "$G/$p.want"
	mapfile -t want < <(sed -E 's/^calls (.*) [0-9]+$/\1/' "$G/$p.want")
	[ "${#want[@]}" -gt 0 ]
	"$MT_ROOT/tests/helpers/gt-stacks" calls "$G/$p.sym" "${want[@]}" > "$G/$p.got"
	diff -u "$G/$p.want" "$G/$p.got"
}

# frames NAME: mt-fxt's frames of the counted functions number the
# program's calls and nest as deep as it counted (gt-frames output in
# $G/NAME.frames).
frames() {
	local p=$1 want=()
	mapfile -t want < <(sed -nE 's/^calls (.*) [0-9]+$/\1/p' "$G/$p.truth")
	"$MT_ROOT/tests/helpers/gt-frames" "$G/$p.json" "${want[@]}" \
	    > "$G/$p.frames"
	diff -u <(grep -E '^(calls|depth) ' "$G/$p.truth") \
	    <(grep -E '^(calls|depth) ' "$G/$p.frames")
}

# The timer signal program, under the qemu backend (where installed)
# from its first instruction: its loop runs some 40,000 times in its
# 0.3 s, 200,000 frames in a 67 MB JSON, which gt-frames reads as a
# stream; and under the ptrace backend from main.
@test "ground truth: a timer signal's handler: mt-decode's calls are the program's" {
	capture signal
	decoded_calls signal main handler
}

@test "ground truth: a timer signal's handler (ptrace backend): mt-decode's calls are the program's" {
	GT_EMULATE=1 capture signal-ptrace
	decoded_calls signal-ptrace main handler
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

@test "ground truth: code without symbols, with tail calls: mt-decode's calls and jumps are the program's" {
	capture stripped
	decoded_calls stripped main
}

@test "ground truth: a timer signal's handler: mt-fxt's frames are the program's; handlers never nest" {
	capture signal
	frames signal
	grep -qx 'nest handler 1' "$G/signal.frames"
}

@test "ground truth: a timer signal's handler (ptrace backend): mt-fxt's frames are the program's; handlers never nest" {
	GT_EMULATE=1 capture signal-ptrace
	frames signal-ptrace
	grep -qx 'nest handler 1' "$G/signal-ptrace.frames"
}

# The qemu backend learns where a signal interrupted a block that ended
# in a conditional or indirect branch or a return only when the handler
# returns (docs/emulate.md, "Signals"): sigbranch takes its signals in a
# loop of such blocks.
@test "ground truth: signals right after returns and indirect jumps and calls (qemu): mt-decode's calls are the program's" {
	command -v qemu-x86_64 > /dev/null ||
	    skip "needs qemu-x86_64 (Debian package qemu-user)"
	capture sigbranch --ground-truth "$G/sigbranch.gt"
	decoded_calls sigbranch main handler
	# the plugin's log: a signal landed after each kind, FUP at the
	# branch's target (the handler nests above the interrupted frame)
	awk '$2 == "async" && p[4] == $3 { n[p[2]]++ }
	    { split($0, p) }
	    END { print n["ret"] + 0, n["icall"] + 0, n["ijmp"] + 0 }' \
	    "$G/sigbranch.gt" > "$G/sigbranch.kinds"
	read -r r c j < "$G/sigbranch.kinds"
	echo "signals after a ret $r, an indirect call $c, an indirect jump $j"
	[ "$r" -gt 0 ] && [ "$c" -gt 0 ] && [ "$j" -gt 0 ]
}

@test "ground truth: signals right after returns and indirect jumps and calls (qemu): mt-fxt's frames are the program's" {
	command -v qemu-x86_64 > /dev/null ||
	    skip "needs qemu-x86_64 (Debian package qemu-user)"
	capture sigbranch --ground-truth "$G/sigbranch.gt"
	frames sigbranch
	grep -qx 'nest handler 1' "$G/sigbranch.frames"
}

# perf's own decoder (perf script, which shares no code with libipt) on
# the same capture: the calls, returns and asynchronous exits it decodes
# are those the plugin logged.
@test "ground truth: signals right after returns and indirect jumps and calls (qemu): perf script decodes the plugin's branches" {
	command -v qemu-x86_64 > /dev/null ||
	    skip "needs qemu-x86_64 (Debian package qemu-user)"
	command -v perf > /dev/null && perf version > /dev/null 2>&1 ||
	    skip "needs perf (Debian linux-perf) as the independent decoder"
	capture sigbranch --ground-truth "$G/sigbranch.gt"
	rm -rf "$G/sb.data" "$G/sb.data.files"
	mt-capture export-perf -o "$G/sb.data" "$G/sigbranch.snap"
	perf script -i "$G/sb.data" --itrace=be -F flags,ip,addr \
	    > "$G/sb.perf" 2>&1
	run grep -c 'instruction trace error' "$G/sb.perf"
	[ "$output" -eq 0 ]
	awk '$2 == "call" || $2 == "icall" || $2 == "ret" {
		print ($2 == "ret" ? "ret" : "call"), $3, $4 }
	    $2 == "async" { print "async", $3 }' "$G/sigbranch.gt" \
	    > "$G/sb.want"
	awk '$1 == "call" { print "call", "0x" $2, "0x" $4 }
	    $1 == "return" { print "ret", "0x" $2, "0x" $4 }
	    /tr end  async/ { print "async", "0x" $(NF - 2) }' "$G/sb.perf" \
	    > "$G/sb.got"
	grep -q '^async ' "$G/sb.want"
	diff -u "$G/sb.want" "$G/sb.got"
}

@test "ground truth: a signal handler that siglongjmps out: mt-fxt's frames are the program's" {
	capture sigjmp
	frames sigjmp
	grep -qx 'nest handler 1' "$G/sigjmp.frames"
}

@test "ground truth: setjmp/longjmp out of nested calls: mt-fxt's frames are the program's" {
	capture longjmp
	frames longjmp
}

@test "ground truth: a C++ throw-and-catch loop: mt-fxt's frames are the program's" {
	capture except
	frames except
}

@test "ground truth: code without symbols, with tail calls: mt-fxt's frames are the program's" {
	capture stripped
	frames stripped
}

# goroutines NAME: the Go program's frames are its counts, each
# goroutine on a track of its own: main.main and main.ping on one,
# main.pong and main.work (the goroutine it started) on another.
goroutines() {
	local p=$1
	frames "$p"
	jq -r '[.traceEvents[] | select(.ph == "B") |
	    select(.name | test("^main\\.(main|ping|pong|work)$")) |
	    "\(.name) \(.tid)"] | unique | .[]' "$G/$p.json" > "$G/$p.tracks"
	cat "$G/$p.tracks"
	[ "$(wc -l < "$G/$p.tracks")" -eq 4 ]
	[ "$(awk '/^main\.(main|ping) /{print $2}' "$G/$p.tracks" | sort -u | wc -l)" -eq 1 ]
	[ "$(awk '/^main\.(pong|work) /{print $2}' "$G/$p.tracks" | sort -u | wc -l)" -eq 1 ]
	[ "$(awk '{print $2}' "$G/$p.tracks" | sort -u | wc -l)" -eq 2 ]
}

@test "ground truth: goroutines taking turns (qemu backend): mt-fxt's frames are the program's, each goroutine whole on its track" {
	command -v qemu-x86_64 > /dev/null ||
	    skip "needs qemu-x86_64 (Debian qemu-user) for the qemu backend"
	GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 capture goroutines --all-threads
	goroutines goroutines
}

@test "ground truth: goroutines taking turns (ptrace backend): mt-fxt's frames are the program's, each goroutine whole on its track" {
	GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 GT_EMULATE=1 \
	    capture goroutines-ptrace --all-threads
	goroutines goroutines-ptrace
}

@test "ground truth: a thread started mid-run: mt-fxt's frames are the program's; the thread begins after pthread_create" {
	capture thread --all-threads
	frames thread
	grep -qx 'threads 2' "$G/thread.frames"
	local created wtid begins
	created=$(jq '[.traceEvents[] | select(.ph == "B" and
	    (.name | startswith("pthread_create")))][0].ts' "$G/thread.json")
	wtid=$(jq '[.traceEvents[] | select(.ph == "B" and .name == "worker")][0].tid' \
	    "$G/thread.json")
	begins=$(jq "[.traceEvents[] | select(.ph == \"B\" and .tid == $wtid) | .ts] | min" \
	    "$G/thread.json")
	echo "pthread_create at $created, thread $wtid's first frame at $begins"
	awk -v c="$created" -v b="$begins" 'BEGIN { exit !(c + 0 > 0 && b + 0 > c + 0) }'
}
