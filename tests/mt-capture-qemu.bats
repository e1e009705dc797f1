#!/usr/bin/env bats
# The qemu backend end to end: programs run under
# `mt-capture run --backend qemu`, the snapshot goes through mt-decode and
# the call/return sequence it reports must equal, per thread, the branch
# log the plugin writes (--ground-truth) and, after symbolization, the
# one the ptrace backend (--backend emulate) records of the same program,
# with zero decode errors.  Needs qemu-x86_64 (Debian's qemu-user).

load helpers/gt-calls

setup_file() {
	export E="$BATS_FILE_TMPDIR"
	command -v qemu-x86_64 > /dev/null || return 0
	local f
	for f in recurse fnptr switch longjmp signal threads; do
		cc -O2 -g -pthread -o "$E/$f" "$MT_ROOT/tests/data/emu/$f.c"
	done
	c++ -O2 -g -o "$E/except" "$MT_ROOT/tests/data/emu/except.cpp"
	cc -O2 -g -o "$E/demo" "$MT_ROOT/demo/demo.c" -ldl
	cc -O2 -g -pthread -o "$E/dthreads" "$MT_ROOT/demo/threads.c" -lm
	c++ -O2 -g -o "$E/dcxx" "$MT_ROOT/demo/cxxdemo.cpp"
	# runs until killed, without libm: a capture with a trigger on cos
	# elsewhere on the machine (a system-wide uprobe) would put an int3
	# into the guest's copy of cos
	cc -O1 -g -o "$E/loop" "$MT_ROOT/tests/data/capture/loop.c"
	cc -O2 -g -o "$E/dlsin" "$MT_ROOT/tests/data/qemu/dlsin.c" -ldl
	cc -O2 -g -o "$E/fork" "$MT_ROOT/tests/data/qemu/fork.c"
	cc -O2 -g -o "$E/jit" "$MT_ROOT/tests/data/qemu/jit.c"
	cc -O2 -g -o "$E/reprot" "$MT_ROOT/tests/data/qemu/reprot.c"
	cc -O2 -g -o "$E/sigfix" "$MT_ROOT/tests/data/qemu/sigfix.c"
}

setup() {
	command -v qemu-x86_64 > /dev/null ||
	    skip "needs qemu-x86_64 (Debian package qemu-user)"
}

teardown() {
	[ -n "${TPID:-}" ] && kill -KILL "$TPID" 2>/dev/null || true
	true
}

# names EVENTS PROG [MAIN]: after mt-symbolize, each thread's calls into
# and returns from functions of PROG, as "call:NAME" / "ret:NAME", one
# thread per line, the lines sorted (thread ids differ between runs);
# with MAIN, the main thread's from main's first instruction on.
names() {
	mt-symbolize < "$1" | awk -v prog="$2" -v main="${3:-}" '
	    $1 == "fn" { path[$2] = $4; name[$2] = $5 }
	    $1 == "loc" { split($4, a, ":"); fn[$2] = a[1] }
	    $1 == "call" || $1 == "ret" {
		l = ($1 == "call") ? $7 : $6
		sub("@", "", l)
		f = fn[l]
		if (path[f] != prog) next
		if (main != "" && $3 == first && !inmain) {
			if ($1 == "call" && name[f] == "main") inmain = 1
			next
		}
		seq[$3] = seq[$3] " " $1 ":" name[f]
	    }
	    $1 == "thread" && first == "" { first = $3 }
	    END { for (t in seq) print seq[t] }' | sort
}

# capture NAME ARGS...: record with the qemu backend and its ground truth,
# decode with zero errors, compare the calls and returns.
capture() {
	local name=$1
	shift
	run mt-capture run -q -b qemu --ground-truth "$E/$name.gt" \
	    -o "$E/$name.snap" "$@"
	[ "$status" -eq 0 ]
	decodes_to_gt "$E/$name"
}

# same_as_emulate NAME PROG ARGS...: the emulate backend's capture of the
# same program (from main on, to keep the single-stepping short) has the
# same calls into PROG's functions, by name.
same_as_emulate() {
	local name=$1 prog=$2
	shift 2
	run mt-capture run -q -b emulate --start-at main \
	    -o "$E/$name.emu.snap" "$@" -- "$prog"
	[ "$status" -eq 0 ]
	mt-decode -o "$E/$name.emu.ev" "$E/$name.emu.snap"
	names "$E/$name.emu.ev" "$prog" > "$E/$name.emu.names"
	names "$E/$name.ev" "$prog" main > "$E/$name.qemu.names"
	[ -s "$E/$name.emu.names" ]
	diff -u "$E/$name.emu.names" "$E/$name.qemu.names"
}

@test "qemu: libm loaded three times, captured at exit, decodes into exactly the calls that ran" {
	capture dlsin -- "$E/dlsin" 3
	run mt-decode --info "$E/dlsin.snap"
	[[ "$output" == *"meta: backend-name = qemu"* ]]
	[[ "$output" == *"meta: reason = exit"* ]]
	# the guest's own mappings, at QEMU's guest addresses
	[[ "$output" == *"$E/dlsin"* ]]
	[[ "$output" == *"libm.so.6"* ]]
	[[ "$output" != *"qemu-x86_64"* ]]
	# sin ran three times, from call_it through the pointer dlsym gave
	run sh -c "mt-symbolize < '$E/dlsin.ev' | awk '\$1 == \"fn\" && \$5 ~ /^__sin/ { f[\$2] = 1 }
	    \$1 == \"loc\" { split(\$4, a, \":\"); l[\$2] = a[1] }
	    \$1 == \"call\" { t = \$7; sub(\"@\", \"\", t); if (l[t] in f) n++ }
	    END { print n + 0 }'"
	[ "$output" -eq 3 ]
}

@test "qemu: deep recursion past the 64-entry return stack" {
	capture recurse -- "$E/recurse"
	run grep -c '^call ' "$E/recurse.got"
	[ "$output" -ge 200 ]
	same_as_emulate recurse "$E/recurse"
}

@test "qemu: calls through function pointers, same as the emulate backend" {
	capture fnptr -- "$E/fnptr"
	same_as_emulate fnptr "$E/fnptr"
}

@test "qemu: a switch compiled to a jump table" {
	capture switch -- "$E/switch"
	grep -q ' ijmp ' "$E/switch.gt"
	same_as_emulate switch "$E/switch"
}

@test "qemu: setjmp/longjmp out of nested calls" {
	capture longjmp -- "$E/longjmp"
	same_as_emulate longjmp "$E/longjmp"
}

@test "qemu: a C++ exception unwinds through three frames" {
	capture except -- "$E/except"
	grep -q _Unwind_RaiseException <(mt-symbolize < "$E/except.ev")
	same_as_emulate except "$E/except"
}

@test "qemu: a signal handler entered on the return of raise() decodes" {
	capture signal -- "$E/signal"
	same_as_emulate signal "$E/signal"
}

# sigfix calls through a pointer to an unmapped page: the signal comes
# right after the indirect call, whose target the plugin learns when the
# handler returns (it moves the saved rip to landed()).  A handler that
# returns at once: the call goes to landed(), FUP there; one that makes
# a system call first: FUP at the call, as if it had not run
# (docs/emulate.md, "Signals").
@test "qemu: a signal right after an indirect call is written when the handler returns: the call's TIP to where it resumed, FUP there" {
	capture sigfix -- "$E/sigfix" 6
	# the even rounds (no system call in the handler)
	run awk '$2 == "async" && p[2] == "icall" && p[4] == $3 { n++ }
	    { split($0, p) } END { print n + 0 }' "$E/sigfix.gt"
	[ "$output" -eq 3 ]
	# the odd ones: FUP at the call instruction
	local call
	call=$(awk '$2 == "async" && p[2] == "icall" && p[4] == $3 {
	    print p[3]; exit } { split($0, p) }' "$E/sigfix.gt")
	run awk -v c="$call" '$2 == "async" && $3 == c { n++ }
	    END { print n + 0 }' "$E/sigfix.gt"
	[ "$output" -eq 3 ]
	# and the decoder sees the three calls into landed
	names "$E/sigfix.ev" "$E/sigfix" | tr ' ' '\n' > "$E/sigfix.names"
	run grep -c '^call:landed$' "$E/sigfix.names"
	[ "$output" -eq 3 ]
}

@test "qemu: two threads, each decoded from its own ring (--all-threads)" {
	capture threads --all-threads -- "$E/threads"
	run sh -c "cut -d' ' -f2 '$E/threads.want' | sort -u | wc -l"
	[ "$output" -eq 2 ]
	same_as_emulate threads "$E/threads" --all-threads
}

@test "qemu: the multi-threaded demo, every thread, decodes into exactly the calls that ran" {
	capture dthreads --all-threads -- "$E/dthreads"
	run sh -c "cut -d' ' -f2 '$E/dthreads.want' | sort -u | wc -l"
	[ "$output" -eq 3 ]
}

@test "qemu: without --all-threads only the main thread is recorded" {
	capture main1 -- "$E/threads"
	run sh -c "cut -d' ' -f2 '$E/main1.want' | sort -u | wc -l"
	[ "$output" -eq 1 ]
	run mt-decode --info "$E/main1.snap"
	[[ "$output" == *"pt buffer 0: "* ]]
	[[ "$output" != *"pt buffer 1: "* ]]
}

@test "qemu: a trigger in a dlopen'ed library ends the trace in it, at its guest address" {
	capture trig --trigger libm.so.6:sin -- "$E/dlsin" 2
	# the trace ends in sin, reached through the pointer dlsym returned
	run tail -1 "$E/trig.want"
	[[ "$output" == "call "* ]]
	sin=$(echo "$output" | cut -d' ' -f4)
	run mt-decode "$E/trig.snap"
	# the hit, then the stop at it (a gap), then the end
	[[ "${lines[-3]}" == "trigger "*" $sin libm.so.6:sin" ]]
	[[ "${lines[-2]}" == "disable "* ]]
	run mt-decode --info "$E/trig.snap"
	[[ "$output" == *"meta: reason = trigger"* ]]
}

@test "qemu: --multi-snapshot: each snapshot holds the calls up to its trigger hit" {
	run mt-capture run -q -b qemu --trigger apply --multi-snapshot \
	    --max-snapshots 3 --ground-truth "$E/ms.gt" -o "$E/ms.snap" -- \
	    "$E/fnptr"
	[ "$status" -eq 0 ]
	local i f
	for i in 0 1 2; do
		f="$E/ms.snap"
		[ "$i" -gt 0 ] && f="$E/ms-$i.snap"
		run mt-decode --stats -o "$E/ms$i.ev" "$f"
		[ "$status" -eq 0 ]
		[[ "$output" == *"errors: 0"* ]]
		# the plugin's log marks each stop: the calls up to it
		awk -v n=$((i + 1)) '$2 == "stop" && ++k == n { exit } { print }' \
		    "$E/ms.gt" > "$E/ms$i.gt"
		gt_calls "$E/ms$i.gt" - > "$E/ms$i.want"
		ev_calls "$E/ms$i.ev" > "$E/ms$i.got"
		diff -u "$E/ms$i.want" "$E/ms$i.got"
		run tail -1 "$E/ms$i.got"
		[[ "$output" == "call "* ]]
	done
	[ "$(wc -l < "$E/ms2.got")" -gt "$(wc -l < "$E/ms1.got")" ]
}

@test "qemu: --duration snapshots a program that runs on, and it is stopped" {
	run timeout 60 mt-capture run -q -b qemu --duration 1 \
	    -o "$E/dur.snap" -- "$E/loop"
	[ "$status" -eq 0 ]
	run mt-decode --stats -o "$E/dur.ev" "$E/dur.snap"
	[[ "$output" == *"errors: 0"* ]]
	run mt-decode --info "$E/dur.snap"
	[[ "$output" == *"meta: reason = duration"* ]]
	! pgrep -f "qemu-x86_64 .*$E/loop"
}

@test "qemu: Ctrl+C snapshots, and a killed target still gets its snapshot" {
	run timeout 60 sh -c "mt-capture run -q -b qemu -o '$E/int.snap' -- \
	    '$E/loop' > /dev/null & p=\$!; sleep 1; kill -INT \$p; wait \$p"
	[ "$status" -eq 0 ]
	run mt-decode --info "$E/int.snap"
	[[ "$output" == *"meta: reason = sigint"* ]]
	run mt-decode --stats -o /dev/null "$E/int.snap"
	[[ "$output" == *"errors: 0"* ]]
	run timeout 60 sh -c "mt-capture run -q -b qemu -o '$E/kill.snap' -- \
	    '$E/loop' > /dev/null & sleep 1; pkill -KILL -f 'qemu-x86_64 .*$E/loop'; wait"
	run mt-decode --info "$E/kill.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"meta: reason = exit"* ]]
	[[ "$output" == *"pt buffer 0: "* ]]
}

@test "qemu: mt-capture killed leaves no orphan qemu process" {
	mt-capture run -q -b qemu -o "$E/orphan.snap" -- "$E/loop" \
	    > /dev/null 2>&1 &
	local p=$! i
	sleep 1
	pgrep -f "qemu-x86_64 .*$E/loop"
	kill -KILL "$p"
	for i in $(seq 50); do
		pgrep -f "qemu-x86_64 .*$E/loop" > /dev/null || break
		sleep 0.1
	done
	! pgrep -f "qemu-x86_64 .*$E/loop"
}

# within N CMD...: wait up to N tenths of a second for CMD to succeed
within() {
	local n=$1 i
	shift
	for i in $(seq "$n"); do
		"$@" > /dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

@test "qemu: mt-capture killed leaves no directory in TMPDIR, and no process" {
	local t="$BATS_TEST_TMPDIR/tmp" st=0
	mkdir "$t"
	TMPDIR="$t" mt-capture run -q -b qemu -o "$E/killed.snap" -- \
	    "$E/loop" > /dev/null 2>&1 3>&- &
	TPID=$!
	# recording: the guest's thread has its ring
	within 600 sh -c "ls '$t'/mt-qemu.*/ring.0"
	kill -KILL "$TPID"
	wait "$TPID" || st=$?
	[ "$st" -eq 137 ]
	# QEMU dies with mt-capture, then the directory goes (the keeper)
	within 300 sh -c "! ls -d '$t'/mt-qemu.*"
	run ls -A "$t"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	within 300 sh -c "! pgrep -f '$E/[k]illed.snap'"
	run pgrep -f "qemu-x86_64 .*$E/loop"
	[ "$status" -eq 1 ]
	# a run to its end: the directory goes at once, the keeper too
	run env TMPDIR="$t" mt-capture run -q -b qemu -o "$E/ended.snap" \
	    -- "$E/demo"
	[ "$status" -eq 0 ]
	run ls -A "$t"
	[ "$output" = "" ]
	within 300 sh -c "! pgrep -f '$E/[e]nded.snap'"
}

@test "qemu: clear errors: no qemu, not an x86-64 ELF, setuid, no plugin support, attach" {
	run env MT_QEMU=/nonexistent/qemu-x86_64 mt-capture run -b qemu \
	    -o "$E/x.snap" -- "$E/demo"
	[ "$status" -eq 1 ]
	[[ "$output" == *"qemu-x86_64 not found"*"qemu-user"* ]]
	printf '#!/bin/sh\necho hi\n' > "$E/script.sh"
	chmod +x "$E/script.sh"
	run mt-capture run -b qemu -o "$E/x.snap" -- "$E/script.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"is not an x86-64 ELF program"* ]]
	cp "$E/demo" "$E/suid"
	chmod u+s "$E/suid"
	run mt-capture run -b qemu -o "$E/x.snap" -- "$E/suid"
	[ "$status" -eq 1 ]
	[[ "$output" == *"set-user-ID"* ]]
	# a QEMU without plugin support (qemu-user-static): its -h has no -plugin
	printf '#!/bin/sh\necho "usage: qemu-x86_64 [options] program"\n' \
	    > "$E/oldqemu"
	chmod +x "$E/oldqemu"
	run env MT_QEMU="$E/oldqemu" mt-capture run -b qemu -o "$E/x.snap" \
	    -- "$E/demo"
	[ "$status" -eq 1 ]
	[[ "$output" == *"has no TCG plugin support"*"qemu-user"* ]]
	run mt-capture attach -b qemu -p $$ -o "$E/x.snap"
	[ "$status" -eq 2 ]
	[[ "$output" == *"QEMU cannot attach"*"--backend emulate"* ]]
	[ ! -e "$E/x.snap" ]
	! pgrep -f "qemu-x86_64 .*$E/"
}

@test "qemu: --backend auto for run picks qemu without Intel PT, and says so" {
	[ -d /sys/bus/event_source/devices/intel_pt ] &&
	    skip "this machine has Intel PT: auto picks pt"
	run mt-capture run -o "$E/auto.snap" -- "$E/fnptr"
	[ "$status" -eq 0 ]
	[[ "$output" == *"using the qemu backend"* ]]
	run mt-decode --info "$E/auto.snap"
	[[ "$output" == *"meta: backend-name = qemu"* ]]
}

@test "qemu: fork: the parent's trace, untouched by the child's copy of the plugin" {
	capture fork -- "$E/fork"
	mt-symbolize < "$E/fork.ev" > "$E/fork.sym"
	run grep -c '^call .* @' "$E/fork.sym"
	grep -q ' parent_work$' "$E/fork.sym"
	! grep -q ' child_work$' "$E/fork.sym"
}

@test "qemu: the virtual clock: two captures of the same program give the same calls at the same times" {
	local i
	for i in 1 2; do
		run mt-capture run -q -b qemu -o "$E/det$i.snap" -- "$E/recurse"
		[ "$status" -eq 0 ]
		mt-decode "$E/det$i.snap" | awk '$1 == "enable" && !b { b = $2 }
		    $1 == "call" || $1 == "ret" { print $1, $2 - b, $4, $5 }' \
		    > "$E/det$i.t"
	done
	[ "$(wc -l < "$E/det1.t")" -ge 200 ]
	diff -u "$E/det1.t" "$E/det2.t"
	run mt-decode --info "$E/det1.snap"
	[[ "$output" == *"qemu-clock = virtual"* ]]
}

@test "qemu: --clock host: the host's time, still decodes, stops at a trigger" {
	run mt-capture run -q -b qemu --clock host --all-threads --trigger leaf \
	    -o "$E/host.snap" -- "$MT_ROOT/demo/threads" 4
	[ "$status" -eq 0 ]
	run mt-decode --stats -o "$E/host.ev" "$E/host.snap"
	[[ "$output" == *"errors: 0"* ]]
	run mt-decode --info "$E/host.snap"
	[[ "$output" == *"qemu-clock = host"* ]]
	mt-symbolize < "$E/host.ev" | mt-fxt --format summary > "$E/host.txt"
	run awk '/^trigger 1 /{on=1; next} on && /^  /{print $1; next} on{exit}' \
	    "$E/host.txt"
	[[ "${lines[*]}" == "__clone start_thread worker work leaf"* ]]
	run mt-capture run -b qemu --clock sundial -o "$E/x.snap" -- "$E/fnptr"
	[ "$status" -eq 2 ]
}

@test "qemu: a static program: QEMU loads it, its calls decode" {
	cc -O2 -g -static -o "$E/static" "$MT_ROOT/tests/data/emu/fnptr.c" ||
	    skip "no static libc to link with"
	capture static -- "$E/static"
	grep -q ' apply$' <(mt-symbolize < "$E/static.ev")
}

@test "qemu: code generated at run time, and rewritten, decodes from its recorded bytes" {
	capture jit -- "$E/jit"
	run mt-decode --info "$E/jit.snap"
	[[ "$output" == *"blob kind 2 "*" [jit]"* ]]
	# six calls from the generated code into callback
	run sh -c "mt-symbolize < '$E/jit.ev' | awk '
	    \$1 == \"fn\" && \$5 == \"callback\" { f[\$2] = 1 }
	    \$1 == \"loc\" { split(\$4, a, \":\"); l[\$2] = a[1] }
	    \$1 == \"call\" { t = \$7; sub(\"@\", \"\", t); if (l[t] in f) n++ }
	    END { print n + 0 }'"
	[ "$output" -eq 6 ]
}

# meta SNAP KEY: the value of the snapshot's meta KEY.
meta() {
	mt-decode --info "$1" | awk -v k="meta: $2" '
	    index($0, k " = ") == 1 { print substr($0, length(k) + 4) }'
}

# calls_to EVENTS NAME: calls into the function NAME.
calls_to() {
	mt-symbolize < "$1" | awk -v want="$2" '
	    $1 == "fn" && $5 == want { f[$2] = 1 }
	    $1 == "loc" { split($4, a, ":"); l[$2] = a[1] }
	    $1 == "call" { t = $7; sub("@", "", t); if (l[t] in f) n++ }
	    END { print n + 0 }'
}

@test "qemu: code translated again and again (mprotect) reuses its block records, and its calls decode exactly" {
	# reprot N: each round QEMU drops and translates again its function
	# hit() and a page of generated code calling callback()
	capture reprot200 -s 16M -- "$E/reprot" 200
	capture reprot2000 -s 16M -- "$E/reprot" 2000
	[ "$(calls_to "$E/reprot200.ev" hit)" -eq 200 ]
	[ "$(calls_to "$E/reprot2000.ev" hit)" -eq 2000 ]
	[ "$(calls_to "$E/reprot2000.ev" callback)" -eq 2000 ]
	t1=$(meta "$E/reprot200.snap" qemu-translated-blocks)
	t2=$(meta "$E/reprot2000.snap" qemu-translated-blocks)
	r1=$(meta "$E/reprot200.snap" qemu-block-records)
	r2=$(meta "$E/reprot2000.snap" qemu-block-records)
	echo "translated $t1 $t2, records $r1 $r2"
	# QEMU translated at least hit, the generated code and callback
	# again in each of the 1800 more rounds...
	[ $((t2 - t1)) -ge $((3 * 1800)) ]
	# ...and the plugin made no record for any of it
	[ "$r1" -gt 0 ]
	[ $((r2 - r1)) -lt 50 ]
}

@test "qemu: the C++ demo decodes into exactly the calls that ran, the same as the emulate backend" {
	capture dcxx -- "$E/dcxx"
	grep -q _Unwind_RaiseException <(mt-symbolize < "$E/dcxx.ev")
	same_as_emulate dcxx "$E/dcxx"
}

# aux SNAP: the PT bytes of SNAP's AUX chunks, after their tid (the
# payload starts 16 bytes into a chunk, docs/formats/snapshot.md).
aux() {
	mt-decode --info "$1" | awk '$1 == "chunk" && $2 == "AUX" { print $4, $6 }' |
	    while read -r off len; do
		tail -c +$((off + 16 + 4 + 1)) "$1" | head -c $((len - 4))
	    done
}

@test "qemu: with and without --ground-truth, the same packets byte for byte (the plugin's inline common cases equal follow())" {
	# A thread that writes the ground truth takes the general path for
	# every block; without it, most blocks take tb_exec's inline cases
	# (a conditional branch, a direct call, a compressed return, a
	# fall-through or direct jump, no packet due).  The virtual clock
	# makes the two captures' packets comparable.
	local spec p
	for spec in recurse fnptr switch longjmp except signal dcxx "dlsin 3" \
	    "sigfix 6"; do
		set -- $spec
		p=$1
		shift
		run mt-capture run -q -b qemu --ground-truth "$E/same-$p.gt" \
		    -o "$E/same-$p.gt.snap" -- "$E/$p" "$@"
		[ "$status" -eq 0 ]
		run mt-capture run -q -b qemu -o "$E/same-$p.snap" -- "$E/$p" "$@"
		[ "$status" -eq 0 ]
		aux "$E/same-$p.gt.snap" > "$E/same-$p.gt.aux"
		aux "$E/same-$p.snap" > "$E/same-$p.aux"
		[ "$(stat -c %s "$E/same-$p.aux")" -gt 1000 ]
		cmp "$E/same-$p.gt.aux" "$E/same-$p.aux"
	done
}

@test "qemu: a ring that wrapped decodes from its first PSB into the tail of the calls" {
	run mt-capture run -q -b qemu --ground-truth "$E/wrap.gt" \
	    --snapshot-size 4096 --timing psb_period=0 -o "$E/wrap.snap" \
	    -- "$E/except"
	[ "$status" -eq 0 ]
	run mt-decode --info "$E/wrap.snap"
	[[ "$output" == *"wrapped"* ]]
	decodes_to_gt_tail "$E/wrap"
}

# A ground-truth log grows with every branch (one run once filled the
# disk at 70 GB): --ground-truth-max caps it at whole lines, says so once,
# and the capture goes on to a snapshot that decodes.
@test "qemu: --ground-truth-max: the log stops at its cap with one message, the capture goes on" {
	run mt-capture run -q -b qemu --all-threads --ground-truth "$E/cap.gt" \
	    --ground-truth-max 48K -o "$E/cap.snap" -- "$E/dthreads"
	[ "$status" -eq 0 ]
	echo "$output"
	run grep -c "ground truth '$E/cap.gt' reached its cap of 49152 bytes (--ground-truth-max)" <<< "$output"
	[ "$output" -eq 1 ]
	# whole lines, at most the cap, not far below it
	local size
	size=$(stat -c %s "$E/cap.gt")
	[ "$size" -le 49152 ] && [ "$size" -gt 45000 ]
	run grep -cvE '^[0-9]+ [a-z-]+ 0x[0-9a-f]+ 0x[0-9a-f]+$' "$E/cap.gt"
	[ "$output" -eq 0 ]
	# the snapshot: every thread, to the exit, zero errors
	run mt-decode --info "$E/cap.snap"
	[[ "$output" == *"meta: reason = exit"* ]]
	decode_gt "$E/cap"
	[ "$(cut -d' ' -f2 "$E/cap.got" | sort -u | wc -l)" -eq 3 ]
	# each thread's log is the start of what it ran, which went on
	[ "$(wc -l < "$E/cap.got")" -gt "$(wc -l < "$E/cap.want")" ]
	local tid
	for tid in $(cut -d' ' -f2 "$E/cap.want" | sort -u); do
		awk -v t="$tid" '$2 == t' "$E/cap.want" > "$E/cap.want.t"
		awk -v t="$tid" '$2 == t' "$E/cap.got" |
		    head -n "$(wc -l < "$E/cap.want.t")" | diff -u "$E/cap.want.t" -
	done
	[ -s "$E/cap.want" ]
	# without the option the same program writes more than that
	run mt-capture run -q -b qemu --all-threads --ground-truth "$E/nocap.gt" \
	    -o "$E/nocap.snap" -- "$E/dthreads"
	[ "$status" -eq 0 ]
	[[ "$output" != *"--ground-truth-max"* ]]
	[ "$(stat -c %s "$E/nocap.gt")" -gt 200000 ]
}

@test "qemu: --ground-truth-max refuses a size it cannot read" {
	run mt-capture run -q -b qemu --ground-truth "$E/bad.gt" \
	    --ground-truth-max 12Q -o "$E/bad.snap" -- "$E/recurse"
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad --ground-truth-max '12Q'"* ]]
}
