#!/usr/bin/env bats
# The README's command lines, run exactly as written: each is read from
# README.md at test time (tests/helpers/readme-line), so the two cannot
# drift, and run in a directory laid out as the README assumes (./demo,
# snaps/, $PID a running target, the hosts target, host1 and host2 an
# sshd on this machine).  mt-capture picks its backend as for a user (the
# qemu backend on a machine without Intel PT).  The end-to-end properties
# of issue 8 are checked on the results: the demo's stack at the trigger
# is main -> cos, both cos calls appear, frames nest, outputs are valid.
#
# One change is made: mt-capture attach refuses to single-step a process
# unasked where there is no Intel PT, so on such machines the attach lines
# run with "--backend emulate" added, as the README says for them.
#
# README lines not run here, and why:
#   make demo, make check     this test is part of make check
#   flamegraph.pl, speedscope not Debian packages (run when installed)
#   scp target:prod.snap .    scp runs /usr/bin/ssh, not the test's hosts;
#                             the decode on the same line is run
#   parallel --nonall ... rm -rf '~/.cache/mt'   would empty this machine's
#                             own cache

load helpers/sshd.bash
load helpers/faults
load helpers/mt-capture-targets

RL="$MT_ROOT/tests/helpers/readme-line"

setup_file() {
	export W="$BATS_FILE_TMPDIR"
	[ -x "$MT_ROOT/demo/demo" ] || make -C "$MT_ROOT" demo/demo >/dev/null
	[ -x "$MT_ROOT/demo/threads" ] ||
	    make -C "$MT_ROOT" demo/threads >/dev/null
	# the attach workflows' target (target_start)
	cc -O1 -g -o "$W/loop" "$MT_ROOT/tests/data/capture/loop.c"
	cd "$W"
	ln -s "$MT_ROOT/demo" demo
	bash -c "$("$RL" 'mt-capture run --trigger libm.so.6:cos -o demo.snap')"
	bash -c "$("$RL" 'mt-decode demo.snap | mt-symbolize > demo.events')"
}

teardown() {
	[ -n "${CPID:-}" ] && kill -TERM "$CPID" 2>/dev/null
	[ -n "${TPID:-}" ] && kill -KILL "$TPID" 2>/dev/null
	[ -n "${EFD:-}" ] && exec {EFD}<&-
	[ -n "${TFD:-}" ] && exec {TFD}<&-
	[ -n "${SSHD_DIR:-}" ] && sshd_stop "$SSHD_DIR"
	true
}

# readme TEXT: run the README line containing TEXT with bash, in the
# current directory ($status, $output as bats's run).
readme() {
	local l
	l=$("$RL" "$1") || return 1
	l=$(no_pt_attach "$l")
	echo "README: $l"
	run bash -c "$l"
}

# no_pt_attach LINE: LINE, with --backend emulate after "mt-capture attach"
# on a machine without Intel PT
no_pt_attach() {
	if [ -e /sys/bus/event_source/devices/intel_pt ]; then
		echo "$1"
	else
		echo "${1//mt-capture attach /mt-capture attach --backend emulate }"
	fi
}

# target_start [PROGRAM]: a copy of tests/data/capture/loop.c (default
# $W/loop), running until killed, its pid in PID and TPID; returns once
# the program runs main, whose first act is to print its pid (read here
# from a fifo).  From there on it calls work() and sleeps in a loop, so
# that wherever an attach stops it, the next few instructions return to
# main.  (The demo started in the background and attached at once was
# taken, on a loaded machine, before it reached main: still the shell
# before exec, or ld.so, which a 1-second capture of the ptrace backend,
# some 10,000 instructions, never got out of, and "+main" was missing.)
target_start() {
	local fifo="$BATS_TEST_TMPDIR/target.fifo" line
	rm -f "$fifo"
	mkfifo "$fifo"
	"${1:-$W/loop}" > "$fifo" &
	TPID=$!
	export PID=$TPID
	exec {TFD}< "$fifo"
	read -r line <&"$TFD"
	[ "$line" = "$TPID" ]
}

# reads_of PID: the read system calls PID made so far (/proc/PID/io).
reads_of() {
	awk '/^syscr:/ {print $2}' "/proc/$1/io"
}

# reads_past PID N: PID made more than N read system calls.
reads_past() {
	[ "$(reads_of "$1")" -gt "$2" ]
}

# The frames of the stack at the first trigger, from the text summary.
trigger_stack() {
	awk '/^trigger 1 /{on=1; next} on && /^  /{print $1; next} on{exit}'
}

@test "README: run with a trigger in a dlopen'ed library: the stack at the trigger is main -> cos" {
	cd "$W"
	readme 'mt-decode demo.snap | mt-symbolize | mt-fxt -o trace.fxt.gz'
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" trace.fxt.gz
	[ "$status" -eq 0 ]
	mt-fxt --format summary < demo.events > summary.txt
	run trigger_stack < summary.txt
	[ "$status" -eq 0 ]
	# ... main, then the implementation the cos IFUNC picked (__cos_fma,
	# __cos_avx, ...), possibly over the gap the trap makes.
	local s=" ${lines[*]} "
	s=${s% \[untraced\] }
	s=${s% }
	echo "stack:$s"
	[[ "$s" == *" main __cos"* ]]
	[[ "${s##* }" == __cos* ]]
}

@test "a snapshot at exit holds both cos calls, nested in main (emulate)" {
	cd "$W"
	run mt-capture run --backend emulate --start-at main -q -o exit.snap \
	    -- ./demo/demo 1
	[ "$status" -eq 0 ]
	mt-decode exit.snap | mt-symbolize | mt-fxt --format json -o exit.json
	# cos is an IFUNC: the calls land in the implementation glibc picked
	# for this CPU (__cos_fma, __cos_avx, ...); "cos" itself names the
	# resolver the loader calls once.
	run jq -r '[.traceEvents[] | select(.ph == "B" and
	    (.name | startswith("__cos")))] | length' exit.json
	[ "$status" -eq 0 ]
	[ "$output" -eq 2 ]
	run "$MT_ROOT/tests/helpers/json-check" exit.json
	[ "$status" -eq 0 ]
	mt-decode exit.snap | mt-symbolize | mt-fxt --format folded > exit.folded
	run grep -c ';main;' exit.folded
	[ "$output" -gt 0 ]
}

@test "README: attach to a running process, Ctrl+C snapshots and detaches" {
	cd "$W"
	# The two lines in one shell (the second uses the first's $!), the
	# capture in the background so the test can press Ctrl+C: exec'ed by
	# a subshell that first writes its pid, mt-capture's, and with its
	# stderr a fifo the test reads as it comes.
	rm -f attach.fifo attach.err target.pid cap.pid
	mkfifo attach.fifo
	cat > attach.sh <<-EOF
	$("$RL" './demo/demo 0 &')
	echo \$! > target.pid
	(
	echo \$BASHPID > cap.pid
	exec $(no_pt_attach "$("$RL" 'mt-capture attach -p $! -o live.snap')")
	) 2> attach.fifo &
	wait \$!
	EOF
	bash attach.sh &
	local sh=$! line syscr0
	exec {EFD}< attach.fifo
	# Recording runs once mt-capture says so (or it failed: EOF).
	while read -r -t 120 line <&"$EFD"; do
		printf '%s\n' "$line" >> attach.err
		[[ "$line" == *"Press Ctrl-C"* ]] && break
	done
	TPID=$(cat target.pid)
	CPID=$(cat cap.pid)
	cat attach.err
	grep -q 'Ctrl-C' attach.err
	# Then the target goes on recorded until it reads a file (dlopen of
	# libm each round of its loop; ld.so's reads if attached before main).
	syscr0=$(reads_of "$TPID")
	wait_for reads_past "$TPID" "$syscr0"
	echo "read calls while recorded: $syscr0 -> $(reads_of "$TPID")"
	kill -INT "$CPID"
	# The rest of its stderr, up to its exit.
	cat <&"$EFD" >> attach.err
	exec {EFD}<&-
	wait "$sh"
	CPID=
	cat attach.err
	[ -f live.snap ]
	# The target runs on, neither stopped nor traced.
	kill -0 "$TPID"
	not_stopped_nor_traced "$TPID"
	run mt-decode --stats -o /dev/null live.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
}

@test "README: the qemu backend records every thread, and stops at a trigger" {
	command -v qemu-x86_64 > /dev/null ||
	    skip "needs qemu-x86_64 (Debian package qemu-user)"
	cd "$W"
	readme 'mt-capture run --backend qemu --all-threads -o threads.snap'
	[ "$status" -eq 0 ]
	readme 'mt-decode threads.snap | mt-symbolize | mt-fxt --format summary'
	[ "$status" -eq 0 ]
	# the main thread and its four workers, with no decode error
	[[ "$output" == *"threads 5, "*"decode errors 0"* ]]
	[[ "$output" == *" leaf"* ]]
	readme 'mt-capture run --backend qemu --all-threads --trigger leaf'
	[ "$status" -eq 0 ]
	mt-decode t.snap | mt-symbolize | mt-fxt --format summary > t.txt
	# a worker from its first instruction, stopped at the trigger
	run trigger_stack < t.txt
	[[ "${lines[*]}" == "__clone start_thread worker work leaf"* ]]
}

@test "README: --multi-snapshot --max-snapshots 3 writes three snapshots" {
	cd "$W"
	readme 'mt-capture run --multi-snapshot --max-snapshots 3'
	printf '%s\n' "${lines[@]}" | grep '^mt-capture' || true
	[ "$status" -eq 0 ]
	readme 'ls many*.snap'
	[ "$status" -eq 0 ]
	echo "ls: ${lines[*]}"
	[ "$(printf '%s\n' "${lines[@]}" | LC_ALL=C sort | tr '\n' ' ')" = \
	    "many-1.snap many-2.snap many.snap " ]
	for f in many.snap many-1.snap many-2.snap; do
		run mt-decode --stats -o /dev/null "$f"
		[ "$status" -eq 0 ]
		[[ "$output" == *"errors: 0"* ]]
	done
}

@test "README: summary, JSON, folded stacks and a latency histogram from one stream" {
	cd "$W"
	readme 'mt-fxt --format summary < demo.events'
	[ "$status" -eq 0 ]
	[[ "$output" == *"top functions by self time"* ]]
	readme 'mt-fxt --format json -o demo.json < demo.events'
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/json-check" demo.json
	[ "$status" -eq 0 ]
	# flamegraph.pl is not packaged: its line runs where it is installed
	if command -v flamegraph.pl > /dev/null; then
		readme 'flamegraph.pl > demo.svg'
		[ "$status" -eq 0 ]
		grep -q '<svg' demo.svg
	fi
	run mt-fxt --format folded < demo.events
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^.+\ [0-9]+$ ]]
	readme 'mt-fxt --format summary --function dlopen < demo.events'
	[ "$status" -eq 0 ]
	[[ "$output" == *"latency of dlopen: "[1-9]*" calls"* ]]
}

@test "README: symbols only: one frame per address, no file:line, the default's outermost names" {
	cd "$W"
	readme 'mt-symbolize --no-lines --no-inline > syms.events'
	[ "$status" -eq 0 ]
	run grep -c '^file ' syms.events
	[ "$output" = 0 ]
	run awk '$1 == "loc" && (NF != 4 || $4 !~ /:0:0$/)' syms.events
	[ -z "$output" ]
	# each loc's one fn: the default stream's outermost fn of that address
	diff <(awk '$1 == "fn" { n[$2] = $5 } $1 == "loc" { split($4, f, ":"); print $3, n[f[1]] }' demo.events | sort) \
	    <(awk '$1 == "fn" { n[$2] = $5 } $1 == "loc" { split($4, f, ":"); print $3, n[f[1]] }' syms.events | sort)
	run mt-fxt --format summary < syms.events
	[ "$status" -eq 0 ]
	[[ "$output" == *"top functions by self time"* ]]
}

@test "README: --between, --min-duration and --tid keep a readable, valid trace" {
	cd "$W"
	readme 'mt-fxt --between dlopen,dlclose -o focus.fxt.gz < demo.events'
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" --dump focus.fxt.gz
	[ "$status" -eq 0 ]
	[[ "$output" == *"+dlopen "* ]]
	[[ "$output" != *"+_dl_start "* ]]
	readme 'mt-fxt --min-duration 1us --format summary < demo.events'
	[ "$status" -eq 0 ]
	[[ "$output" == *dropped* ]]
	readme 'mt-fxt --min-duration 1us -o coarse.fxt.gz < demo.events'
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" coarse.fxt.gz
	[ "$status" -eq 0 ]
	mt-fxt -o full.fxt.gz < demo.events
	[ "$(stat -c %s coarse.fxt.gz)" -lt "$(stat -c %s full.fxt.gz)" ]
	readme 'mt-fxt --tid "$(awk'
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" --dump t.fxt.gz
	[ "$status" -eq 0 ]
	[[ "$output" == *"+main "* ]]
}

@test "README: a snapshot decodes on another host from its bundled files" {
	cd "$W"
	mkdir -p host/bin
	cp "$W/loop" host/bin/loop
	target_start host/bin/loop
	readme 'mt-capture attach -p $PID --duration 1 -o prod.snap'
	[ "$status" -eq 0 ]
	kill -KILL "$TPID"
	# "Another host": the program is no longer where it ran.
	rm -r host
	l=$("$RL" 'mt-decode prod.snap | mt-symbolize | mt-fxt -o prod.fxt.gz')
	# (its scp part needs the real host "target")
	export MT_CACHE_DIR="$W/cache"
	run bash -c "${l#*&& }"
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" --dump prod.fxt.gz
	[ "$status" -eq 0 ]
	# mt-decode put the bundled files in the build-id cache, where
	# mt-symbolize found them although the program is gone.
	[[ "$output" == *"+main "* ]]
	[ -d "$MT_CACHE_DIR/.build-id" ]
}

@test "README: --no-bundle, then mt-decode --root and mt-symbolize --root name the functions" {
	cd "$W"
	mkdir -p app/bin
	cp "$W/loop" app/bin/loop
	target_start app/bin/loop
	readme 'mt-capture attach -p $PID --duration 1 --no-bundle -o thin.snap'
	[ "$status" -eq 0 ]
	kill -KILL "$TPID"
	# The target's files under target-copy/, under their own paths; the
	# program is gone from where it ran, and no build-id cache has it.
	mkdir -p "target-copy$W"
	mv app "target-copy$W/"
	export MT_CACHE_DIR="$W/empty-cache"
	readme 'mt-decode --root target-copy thin.snap'
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" --dump thin.fxt.gz
	[ "$status" -eq 0 ]
	[[ "$output" == *"+main "* ]]
	# nothing bundled went into the cache: the program is not there, at
	# most the vDSO image every snapshot carries is (beside the inflated
	# debug files mt-symbolize keeps there, *.debug.mt-inflated)
	id=$(readelf -n "target-copy$W/app/bin/loop" | awk '/Build ID/ { print $3 }')
	[ -n "$id" ]
	[ ! -e "$MT_CACHE_DIR/.build-id/${id:0:2}/${id:2}" ]
	[ "$(find "$MT_CACHE_DIR" -type f ! -name '*.debug.mt-inflated' | wc -l)" -le 1 ]
}

@test "README: a snapshot streamed over ssh with -o - decodes" {
	SSHD_DIR="$W/sshd"
	sshd_start "$SSHD_DIR"
	export PATH="$SSHD_DIR/bin:$PATH"
	cd "$W"
	target_start
	readme 'ssh target mt-capture attach -p $PID --duration 1 -o - > prod.snap'
	[ "$status" -eq 0 ]
	run mt-decode --stats -o /dev/null prod.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	readme 'ssh target mt-capture attach -p $PID --duration 1 -o - | mt-decode'
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" prod.fxt.gz
	[ "$status" -eq 0 ]
}

@test "README: batch reprocessing with GNU parallel, locally and with --sshlogin, and with xargs -P" {
	cd "$W"
	mkdir -p snaps
	# names of this run: the remote side works in the shared home
	local n="readme-$$-"
	for f in a b c; do
		cp demo.snap "snaps/$n$f.snap"
	done
	readme "ls snaps/*.snap | parallel 'mt-decode {} | mt-symbolize"
	[ "$status" -eq 0 ]
	for f in a b c; do
		"$MT_ROOT/tests/helpers/fxt-check" "snaps/$n$f.fxt.gz"
	done
	rm snaps/*.fxt.gz
	readme 'ls snaps/*.snap | xargs -P 4'
	[ "$status" -eq 0 ]
	for f in a b c; do
		"$MT_ROOT/tests/helpers/fxt-check" "snaps/$n$f.fxt.gz"
	done
	rm snaps/*.fxt.gz
	SSHD_DIR="$W/sshd2"
	sshd_start "$SSHD_DIR"
	export PATH="$SSHD_DIR/bin:$PATH"
	readme 'parallel --sshlogin 8/host1,8/host2 --transferfile'
	[ "$status" -eq 0 ]
	for f in a b c; do
		"$MT_ROOT/tests/helpers/fxt-check" "snaps/$n$f.fxt.gz"
		# --cleanup removed the remote copies
		[ ! -e "$HOME/snaps/$n$f.snap" ]
		[ ! -e "$HOME/snaps/$n$f.fxt.gz" ]
	done
	grep -q 'Accepted publickey' "$SSHD_DIR/sshd.log"
}

@test "README: export-perf gives a file perf's own decoder reads, import-perf reads it back" {
	cd "$W"
	readme 'mt-capture export-perf demo.snap -o perf.data'
	[ "$status" -eq 0 ]
	readme 'perf script -i perf.data --itrace=cr'
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -gt 100 ]
	readme 'mt-capture import-perf perf.data -o p.snap'
	[ "$status" -eq 0 ]
	run mt-decode --stats -o /dev/null p.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
}

@test "README: import-raw of a KVM-PT trace (trace, addr, dump) decodes" {
	local rp="$MT_SHARED/testdata/real-pt/unzip"
	[ -f "$rp/trace" ] || skip "needs the real traces in $rp"
	cd "$W"
	cp "$rp/trace" "$rp/addr" "$rp/dump" .
	readme 'mt-capture import-raw --pt trace --pages addr,dump'
	[ "$status" -eq 0 ]
	run mt-decode --stats -o /dev/null raw.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"instructions: 149576"* ]]
	[[ "$output" == *"errors: 0"* ]]
}
