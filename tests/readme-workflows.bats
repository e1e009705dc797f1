#!/usr/bin/env bats
# Every workflow of the README's walkthrough, run as a user would type it
# (with the software PT backend, since no machine here has Intel PT), and
# the end-to-end properties of issue 8: the demo's stack at the trigger is
# main -> cos, both cos calls appear, frames nest, and the outputs are valid.

load helpers/sshd.bash

# The emulate backend starts stepping at main: the loader's start-up is
# not what these workflows are about, and stepping it costs seconds.
CAP="--backend emulate --start-at main -q"

setup_file() {
	export W="$BATS_FILE_TMPDIR"
	export DEMO="$MT_ROOT/demo/demo"
	[ -x "$DEMO" ] || make -C "$MT_ROOT" demo/demo >/dev/null
	cd "$W"
	mt-capture run $CAP --trigger libm.so.6:cos -o demo.snap -- "$DEMO" 2
	mt-decode demo.snap | mt-symbolize > demo.events
}

teardown() {
	[ -n "${TPID:-}" ] && kill -KILL "$TPID" 2>/dev/null
	[ -n "${SSHD_DIR:-}" ] && sshd_stop "$SSHD_DIR"
	true
}

# The frames of the stack at the first trigger, from the text summary.
trigger_stack() {
	awk '/^trigger 1 /{on=1; next} on && /^  /{print $1; next} on{exit}'
}

@test "README: run with a trigger in a dlopen'ed library: the stack at the trigger is main -> cos" {
	cd "$W"
	run mt-fxt -o trace.fxt.gz < demo.events
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" trace.fxt.gz
	[ "$status" -eq 0 ]
	mt-fxt --format summary < demo.events > summary.txt
	run trigger_stack < summary.txt
	[ "$status" -eq 0 ]
	# main, then the implementation the cos IFUNC picked (__cos_fma,
	# __cos_avx, ...), possibly over the gap the uprobe trap makes.
	[ "${lines[0]}" = main ]
	[[ "${lines[1]}" == __cos* || "${lines[1]}" == cos ]]
	[[ "${#lines[@]}" -eq 2 || "${lines[2]}" == "[untraced]" ]]
}

@test "README: a snapshot at exit holds both cos calls, nested in main" {
	cd "$W"
	run mt-capture run $CAP -o exit.snap -- "$DEMO" 1
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
	"$DEMO" 0 > /dev/null &
	TPID=$!
	mt-capture attach --backend emulate -q -p "$TPID" -o live.snap \
	    --ready-fd 3 3> ready.fifo.txt &
	cap=$!
	for i in $(seq 50); do [ -s ready.fifo.txt ] && break; sleep 0.2; done
	[ -s ready.fifo.txt ]
	sleep 0.5
	kill -INT "$cap"
	wait "$cap"
	[ -f live.snap ]
	# The target runs on, neither stopped nor traced.
	kill -0 "$TPID"
	run awk '/^TracerPid:/ {print $2}' "/proc/$TPID/status"
	[ "$output" = 0 ]
	run awk '/^State:/ {print $2}' "/proc/$TPID/status"
	[[ "$output" != [tT] ]]
	run mt-decode --stats -o /dev/null live.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
}

@test "README: the qemu backend records every thread, and stops at a trigger" {
	command -v qemu-x86_64 > /dev/null ||
	    skip "needs qemu-x86_64 (Debian package qemu-user)"
	cd "$W"
	local threads="$MT_ROOT/demo/threads"
	[ -x "$threads" ] || make -C "$MT_ROOT" demo/threads >/dev/null
	run mt-capture run -q --backend qemu --all-threads -o threads.snap \
	    -- "$threads" 4
	[ "$status" -eq 0 ]
	run sh -c "mt-decode threads.snap | mt-symbolize | mt-fxt --format summary"
	[ "$status" -eq 0 ]
	# the main thread and its four workers, with no decode error
	[[ "$output" == *"threads 5, "*"decode errors 0"* ]]
	[[ "$output" == *" leaf"* ]]
	run mt-capture run -q --backend qemu --all-threads --trigger leaf \
	    -o t.snap -- "$threads" 4
	[ "$status" -eq 0 ]
	mt-decode t.snap | mt-symbolize | mt-fxt --format summary > t.txt
	# a worker from its first instruction, stopped at the trigger
	run trigger_stack < t.txt
	[[ "${lines[*]}" == "__clone start_thread worker work leaf"* ]]
}

@test "README: --multi-snapshot --max-snapshots 3 writes three snapshots" {
	cd "$W"
	run mt-capture run $CAP --multi-snapshot --max-snapshots 3 \
	    --trigger libm.so.6:cos -o many.snap -- "$DEMO" 3
	[ "$status" -eq 0 ]
	for f in many.snap many-1.snap many-2.snap; do
		run mt-decode --stats -o /dev/null "$f"
		[ "$status" -eq 0 ]
		[[ "$output" == *"errors: 0"* ]]
	done
	[ ! -e many-3.snap ]
}

@test "README: summary, JSON, folded stacks and a latency histogram from one stream" {
	cd "$W"
	run mt-fxt --format summary < demo.events
	[ "$status" -eq 0 ]
	[[ "$output" == *"top functions by self time"* ]]
	run mt-fxt --format json -o demo.json < demo.events
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/json-check" demo.json
	[ "$status" -eq 0 ]
	run mt-fxt --format folded < demo.events
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^.+\ [0-9]+$ ]]
	run mt-fxt --format summary --function strcmp < demo.events
	[ "$status" -eq 0 ]
	[[ "$output" == *strcmp* ]]
}

@test "README: --between and --min-duration keep a readable, valid trace" {
	cd "$W"
	run mt-fxt --between dlopen,__cos_fma -o between.fxt.gz < demo.events
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" --dump between.fxt.gz
	[ "$status" -eq 0 ]
	[[ "$output" == *"+dlopen "* ]]
	[[ "$output" != *"+_dl_start "* ]]
	run mt-fxt --min-duration 1us --format summary < demo.events
	[ "$status" -eq 0 ]
	[[ "$output" == *dropped* ]]
	run mt-fxt --min-duration 1us -o coarse.fxt.gz < demo.events
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" coarse.fxt.gz
	[ "$status" -eq 0 ]
	[ "$(stat -c %s coarse.fxt.gz)" -lt "$(stat -c %s trace.fxt.gz)" ]
}

@test "README: a snapshot decodes on another host: bundled files, or --root with --no-bundle" {
	cd "$W"
	mkdir -p host/bin
	cp "$DEMO" host/bin/demo
	run mt-capture run $CAP -o bundled.snap -- host/bin/demo 1
	[ "$status" -eq 0 ]
	run mt-capture run $CAP --no-bundle -o thin.snap -- host/bin/demo 1
	[ "$status" -eq 0 ]
	[ "$(stat -c %s thin.snap)" -lt "$(stat -c %s bundled.snap)" ]
	# "Another host": the program is no longer where it ran; a copy of
	# the target's tree sits under copy/.
	mkdir -p "copy$W"
	mv host "copy$W/"
	run mt-decode --stats -o bundled.events bundled.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	run mt-decode --stats -o thin-root.events --root "$W/copy" thin.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	n1=$(grep -c '^call' bundled.events)
	[ "$n1" -gt 100 ]
	# mt-decode put the bundled files in the build-id cache, where
	# mt-symbolize finds them although the program is gone.
	MT_CACHE_DIR="$W/cache" mt-decode -o b2.events bundled.snap
	run mt-symbolize -o b2.sym b2.events
	[ "$status" -eq 1 -o "$status" -eq 0 ]
	run env MT_CACHE_DIR="$W/cache" mt-symbolize -o b2.sym b2.events
	[ "$status" -eq 0 ]
	run grep -c '^fn [0-9]* 0x[0-9a-f]* [^ ]*/demo main$' b2.sym
	[ "$output" -eq 1 ]
}

@test "README: --no-bundle, then mt-decode --root and mt-symbolize --root name the functions" {
	cd "$W"
	mkdir -p app/bin
	cp "$DEMO" app/bin/demo
	run mt-capture run $CAP --no-bundle -o thin.snap -- app/bin/demo 1
	[ "$status" -eq 0 ]
	# The target's files under target-copy/, under their own paths; the
	# program is gone from where it ran, and no build-id cache has it.
	mkdir -p "target-copy$W"
	mv app "target-copy$W/"
	export MT_CACHE_DIR="$W/empty-cache"
	line=$("$MT_ROOT/tests/helpers/readme-line" 'mt-decode --root')
	run bash -c "$line"
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" --dump thin.fxt.gz
	[ "$status" -eq 0 ]
	[[ "$output" == *"+main "* ]]
	[[ "$output" == *"+__cos"* ]]
	[ ! -e "$MT_CACHE_DIR/.build-id" ]
}

@test "README: a snapshot streamed over ssh with -o - decodes" {
	SSHD_DIR="$W/sshd"
	sshd_start "$SSHD_DIR"
	cd "$W"
	"$SSH_WRAP" "$SSH_LOGIN" "cd '$W' && PATH='$MT_BUILD/bin:\$PATH' mt-capture run $CAP -o - -- '$DEMO' 1" > ssh.snap
	run mt-decode --stats -o /dev/null ssh.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	run sh -c "'$SSH_WRAP' '$SSH_LOGIN' \"cat '$W/ssh.snap'\" | mt-decode | mt-symbolize | mt-fxt -o ssh.fxt.gz"
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/fxt-check" ssh.fxt.gz
	[ "$status" -eq 0 ]
}

@test "README: batch reprocessing with GNU parallel, locally and with --sshlogin, and with xargs -P" {
	cd "$W"
	mkdir -p snaps
	cp demo.snap snaps/a.snap
	cp demo.snap snaps/b.snap
	cp demo.snap snaps/c.snap
	run sh -c "ls snaps/*.snap | parallel 'mt-decode {} | mt-symbolize | mt-fxt -o {.}.fxt.gz'"
	[ "$status" -eq 0 ]
	for f in a b c; do
		"$MT_ROOT/tests/helpers/fxt-check" "snaps/$f.fxt.gz"
	done
	rm snaps/*.fxt.gz
	run sh -c "ls snaps/*.snap | xargs -P 4 -I{} sh -c 'mt-decode \"\$1\" | mt-symbolize | mt-fxt -o \"\${1%.snap}.fxt.gz\"' _ {}"
	[ "$status" -eq 0 ]
	for f in a b c; do
		"$MT_ROOT/tests/helpers/fxt-check" "snaps/$f.fxt.gz"
	done
	rm snaps/*.fxt.gz
	SSHD_DIR="$W/sshd2"
	sshd_start "$SSHD_DIR"
	run sh -c "ls snaps/*.snap | parallel --ssh '$SSH_WRAP' --sshlogin 2/$SSH_LOGIN --workdir '$W' \
	    'PATH=$MT_BUILD/bin:\$PATH; mt-decode {} | mt-symbolize | mt-fxt -o {.}.fxt.gz'"
	[ "$status" -eq 0 ]
	for f in a b c; do
		"$MT_ROOT/tests/helpers/fxt-check" "snaps/$f.fxt.gz"
	done
	grep -q 'Accepted publickey' "$SSHD_DIR/sshd.log"
}

@test "README: export-perf gives a file perf's own decoder reads, import-perf reads it back" {
	cd "$W"
	# perf 6.1 crashes on the software backend's virtual TSC: timeless.
	run mt-capture export-perf --timeless demo.snap -o demo.perf.data
	[ "$status" -eq 0 ]
	run perf script -i demo.perf.data --itrace=cr -F ip,addr,flags
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -gt 100 ]
	run mt-capture import-perf demo.perf.data -o back.snap
	[ "$status" -eq 0 ]
	run mt-decode --stats -o /dev/null back.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
}
