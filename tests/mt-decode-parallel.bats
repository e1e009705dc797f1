#!/usr/bin/env bats
# mt-decode -j N (mt-decode/parallel.c): the buffers of a snapshot, and
# large buffers cut into segments at PSBs, decode on N threads and the
# event stream is byte for byte the one -j 1 writes.  Synthetic traces come
# from bench/gen-synth (libipt's encoder over a generated program) and
# tests/helpers/ptgen.c (its scenarios one after the other: overflows,
# errors, filter gaps, interrupts, relative time); the real traces have one
# buffer each.  MT_DECODE_SEGMENT_BYTES lowers the smallest segment (1 MiB)
# so that small buffers split into many segments; `segment-joins` in
# --stats counts the borders stitched.  Traces with CYC or MTC timing
# decode every buffer and segment through a fresh image view, in segments
# that do not depend on -j, each kept from the PSB after its own
# (parallel.h): -j 1 is then the same stitched decode.

load helpers/gen-synth
load helpers/real-pt

setup_file() {
	T="$BATS_FILE_TMPDIR"
	gen_synth_build "$T" 7
	# TSC-only timing: decoded in parallel
	"$T/gen-synth" snap -C -S 7 -t 5 -m 1 -e "$T/prog" -o "$T/tsc.snap"
	# CYC timing (calibrated from the TSCs of PSB+)
	"$T/gen-synth" snap -S 7 -t 3 -m 1 -e "$T/prog" -o "$T/cyc.snap"
	# one thread: one buffer of 1 MiB, a PSB+ every 16 KiB, TSC timing
	"$T/gen-synth" snap -C -S 7 -t 1 -m 1 -e "$T/prog" -o "$T/one.snap"
	# ptgen's scenarios 30 times over in one buffer (no timing)
	cc -O1 -o "$T/ptgen" "$MT_ROOT/tests/helpers/ptgen.c" -lipt
	"$T/ptgen" code "$T/code.bin"
	: > "$T/mix.pt"
	for k in $(seq 30); do
		for sc in calls psb ovf ipcomp nomap irq syscall corrupt filter \
		    tailcall; do
			"$T/ptgen" $sc "$T/sc.pt"
			cat "$T/sc.pt" >> "$T/mix.pt"
		done
	done
	mt-capture import-raw --pt "$T/mix.pt" -o "$T/mix.snap" \
		"$T/code.bin@0x400000"
}

# same_as_j1 SNAP JOBS...: -j JOBS writes the -j 1 stream and counters
# (but walks, libipt's block count, see the first test, and the cached
# decoder's counters: -j 1 decodes a trace without perf time with it,
# -j N's workers with libipt); prints the
# segment-joins of the last run to $T/joins
same_as_j1() {
	local snap=$1 j one
	shift
	run mt-decode -j 1 -s -o "$T/s1.ev" "$snap"
	[ "$status" -eq 0 ]
	one=$(grep -v -e '^walk' -e '^blocks' -e '^segment-joins' -e '^cache-' \
	    <<<"$output")
	for j in "$@"; do
		run mt-decode -j $j -s -o "$T/s$j.ev" "$snap"
		[ "$status" -eq 0 ]
		cmp "$T/s1.ev" "$T/s$j.ev"
		[ "$(grep -v -e '^walk' -e '^blocks' -e '^segment-joins' -e '^cache-' \
		    <<<"$output")" = "$one" ]
		grep '^segment-joins: ' <<<"$output" | cut -d' ' -f2 \
			> "$T/joins"
	done
}

setup() {
	T="$BATS_FILE_TMPDIR"
}

@test "mt-decode -j: 5 thread buffers decode to the same bytes with -j 1, 2, 3 and 8" {
	run mt-decode -j 1 -s -o "$T/j1.ev" "$T/tsc.snap"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "buffers: 5" ]
	j1stats=$output
	for j in 2 3 8; do
		run mt-decode -j $j -s -o "$T/j$j.ev" "$T/tsc.snap"
		[ "$status" -eq 0 ]
		cmp "$T/j1.ev" "$T/j$j.ev"
	done
	# the counters agree too, but for walks (each worker walks anew) and
	# libipt's block count (its block cache, warm or cold, splits blocks
	# differently; instructions and events do not change)
	[ "$(grep -v -e '^walk' -e '^blocks' -e '^cache-' <<<"$output")" = \
	  "$(grep -v -e '^walk' -e '^blocks' -e '^cache-' <<<"$j1stats")" ]
	# 1 MiB in all: no buffer is split by default
	[[ "$output" != *segment-joins* ]]
	# and the stream is not trivial: five threads, thousands of calls
	[ "$(grep -c '^thread ' "$T/j1.ev")" -eq 5 ]
	[ "$(grep -c '^call ' "$T/j1.ev")" -gt 10000 ]
}

@test "mt-decode -j 2 on standard input and to standard output is the same stream, split or not" {
	run mt-decode -j 1 -o "$T/a.ev" "$T/tsc.snap"
	[ "$status" -eq 0 ]
	mt-decode -j 2 - < "$T/tsc.snap" > "$T/b.ev"
	MT_DECODE_SEGMENT_BYTES=4096 mt-decode -j 3 - < "$T/tsc.snap" > "$T/c.ev"
	# only `info source` names the input
	sed -i '/^info source /d' "$T/a.ev" "$T/b.ev" "$T/c.ev"
	cmp "$T/a.ev" "$T/b.ev"
	cmp "$T/a.ev" "$T/c.ev"
}

@test "mt-decode -j 2 with CYC timing decodes the buffers in parallel, the -j 1 stream every run" {
	run mt-decode -j 1 -s -o "$T/c1.ev" "$T/cyc.snap"
	[ "$status" -eq 0 ]
	w1=$(sed -n 's/^walks: //p' <<<"$output")
	for k in 1 2 3; do
		run mt-decode -j 2 -s -o "$T/c2.ev" "$T/cyc.snap"
		[ "$status" -eq 0 ]
		cmp "$T/c1.ev" "$T/c2.ev"
	done
	# two workers each walked the program's code: not the sequential loop
	w2=$(sed -n 's/^walks: //p' <<<"$output")
	[ "$w2" -gt "$w1" ]
}

@test "mt-decode -j 2 on the real traces equals -j 1" {
	[ -f "$RP/mruby/trace" ] || skip "needs the real traces in $RP"
	real_pt_snap unzip "$T/unzip.snap"
	real_pt_snap mruby "$T/mruby.snap"
	for t in unzip mruby; do
		run mt-decode -j 1 -o "$T/$t.1" "$T/$t.snap"
		[ "$status" -eq 0 ]
		run mt-decode -j 2 -o "$T/$t.2" "$T/$t.snap"
		[ "$status" -eq 0 ]
		cmp "$T/$t.1" "$T/$t.2"
	done
}

@test "mt-decode -j: one buffer split at PSBs (TSC timing) decodes to the -j 1 bytes" {
	export MT_DECODE_SEGMENT_BYTES=65536
	same_as_j1 "$T/one.snap" 2 3 8
	# -j 8: 1 MiB / 32 is below 64 KiB, so 64 KiB segments: 15 borders
	[ "$(cat "$T/joins")" -ge 12 ]
	# calls and returns of a deep call tree cross the borders
	[ "$(grep -c '^call ' "$T/s1.ev")" -gt 10000 ]
	[ "$(grep -c '^ret ' "$T/s1.ev")" -gt 10000 ]
	[ "$(grep -c '^thread ' "$T/s8.ev")" -eq 1 ]
	[ "$(grep -c '^end ' "$T/s8.ev")" -eq 1 ]
}

@test "mt-decode -j: one buffer with overflows, errors, filter gaps and interrupts, split anywhere" {
	run mt-decode -j 1 -s -o "$T/m.ev" "$T/mix.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"overflows: 30"* ]]
	[[ "$output" == *"errors: 90"* ]]
	[ "$(sed -n 3p "$T/m.ev")" = "info clock relative" ]
	for b in 64 333 1000; do
		export MT_DECODE_SEGMENT_BYTES=$b
		same_as_j1 "$T/mix.snap" 2 3 8
		[ "$(cat "$T/joins")" -ge 4 ]
	done
	# every kind of record came through the borders
	for k in call ret irq iret disable enable overflow error; do
		[ "$(grep -c "^$k " "$T/s8.ev")" -ge 30 ]
	done
}

@test "mt-decode -j: the real traces split at PSBs decode to the -j 1 bytes and counts" {
	[ -f "$RP/mruby/trace" ] || skip "needs the real traces in $RP"
	export MT_DECODE_SEGMENT_BYTES=64
	for t in unzip mruby; do
		[ -f "$T/$t.snap" ] || real_pt_snap "$t" "$T/$t.snap"
		same_as_j1 "$T/$t.snap" 2 3 8
		[ "$(cat "$T/joins")" -ge 10 ]
	done
	run mt-decode -j 8 -s -o /dev/null "$T/mruby.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"instructions: 6334131"* ]]
	[[ "$output" == *"errors: 0"* ]]
	[[ "$output" == *"overflows: 1"* ]]
}

@test "mt-decode -j: 5 thread buffers each split at PSBs equal -j 1" {
	export MT_DECODE_SEGMENT_BYTES=4096
	same_as_j1 "$T/tsc.snap" 2 8
	[ "$(cat "$T/joins")" -ge 5 ]
}

# soft_capture: a software backend's capture of a program that loads
# libm and stops at a trigger in it: the qemu backend when installed
# (fast; sin, not cos, which other captures on the machine may probe),
# else the ptrace backend.
soft_capture() {
	if command -v qemu-x86_64 > /dev/null; then
		[ -x "$T/dlsin" ] || cc -O2 -g -o "$T/dlsin" \
		    "$MT_ROOT/tests/data/qemu/dlsin.c" -ldl
		run mt-capture run -b qemu -t libm.so.6:sin "$@" -- "$T/dlsin"
	else
		[ -x "$T/demo" ] || cc -O2 -g -o "$T/demo" \
		    "$MT_ROOT/demo/demo.c" -ldl
		run mt-capture run -b emulate -t libm.so.6:cos "$@" -- "$T/demo"
	fi
}

@test "mt-decode -j: an emulated capture (TSC only, PSB every 2 KiB, a trigger) split equals -j 1" {
	soft_capture --timing low,mtc=0,psb_period=0 -o "$T/demo.snap"
	[ "$status" -eq 0 ]
	export MT_DECODE_SEGMENT_BYTES=500
	same_as_j1 "$T/demo.snap" 2 8
	[ "$(cat "$T/joins")" -ge 2 ]
	[ "$(sed -n 3p "$T/s8.ev")" = "info clock perf" ]
	[ "$(grep -c '^trigger ' "$T/s8.ev")" -eq 1 ]
}

@test "mt-decode -j: CYC buffers split at PSBs decode to the -j 1 bytes, every run" {
	export MT_DECODE_SEGMENT_BYTES=4096
	same_as_j1 "$T/cyc.snap" 2 8
	[ "$(cat "$T/joins")" -ge 5 ]
	for k in 1 2; do
		run mt-decode -j 8 -o "$T/c8.ev" "$T/cyc.snap"
		[ "$status" -eq 0 ]
		cmp "$T/s1.ev" "$T/c8.ev"
	done
}

@test "mt-decode -j: split CYC buffers keep the unsplit records, times within 100 ns" {
	# unsplit: 1 MiB in 3 buffers is below two 1 MiB segments each
	run mt-decode -j 1 -s -o "$T/whole.ev" "$T/cyc.snap"
	[ "$status" -eq 0 ]
	[[ "$output" != *"segment-joins"* ]]
	MT_DECODE_SEGMENT_BYTES=4096 run mt-decode -j 2 -s -o "$T/cut.ev" \
		"$T/cyc.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"segment-joins: "* ]]
	# A segment's output starts once its decoder has calibrated the
	# cycle counter (the PSB after its own); from its own PSB it would
	# hold times tens of microseconds early.
	cut -d' ' -f1,3- "$T/whole.ev" > "$T/whole.rest"
	cut -d' ' -f1,3- "$T/cut.ev" > "$T/cut.rest"
	cmp "$T/whole.rest" "$T/cut.rest"
	run awk 'NR == FNR { t[FNR] = $2; next }
	    $2 ~ /^[0-9]+$/ { d = $2 - t[FNR]; if (d < 0) d = -d;
	        if (d > m) m = d }
	    END { print m + 0 }' "$T/whole.ev" "$T/cut.ev"
	[ "$status" -eq 0 ]
	[ "$output" -le 100 ]
}

@test "mt-decode -j: an emulated capture (MTC and CYC timing, a trigger) split equals -j 1" {
	soft_capture --timing normal,psb_period=0 -o "$T/demo-cyc.snap"
	[ "$status" -eq 0 ]
	run mt-decode -i "$T/demo-cyc.snap"
	[[ "$output" == *"mtc 1 period 0, cyc 1"* ]]
	export MT_DECODE_SEGMENT_BYTES=500
	same_as_j1 "$T/demo-cyc.snap" 2 8
	[ "$(cat "$T/joins")" -ge 2 ]
	[ "$(grep -c '^trigger ' "$T/s8.ev")" -eq 1 ]
}

# Without -j: a worker per 8 MiB of PT at most, and a buffer without
# timing packets is not cut (its seams and time rewrite cost more CPU than
# they save); -j 2 still cuts it.  A real trace 24 times over: 17 MB.
@test "mt-decode without -j: a long relative-time buffer is not cut into segments, -j 2 cuts it" {
	[ -f "$RP/mruby/trace" ] || skip "needs the real traces in $RP"
	[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] || skip "needs 2 CPUs"
	for i in $(seq 24); do cat "$RP/mruby/trace"; done > "$T/big.pt"
	mt-capture import-raw --pt "$T/big.pt" \
		--pages "$RP/mruby/addr,$RP/mruby/dump" \
		--filter 0x400000-0x4b6000 -o "$T/big.snap"
	run mt-decode -s -o "$T/big.d" "$T/big.snap"
	[ "$status" -eq 0 ]
	[[ "$output" != *segment-joins* ]]
	[[ "$output" == *"cache-buffers: 1"* ]]
	run mt-decode -j 2 -s -o "$T/big.2" "$T/big.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"segment-joins: "* ]]
	cmp "$T/big.d" "$T/big.2"
	# a small trace: one worker whatever the CPUs
	[ -f "$T/mruby.snap" ] || real_pt_snap mruby "$T/mruby.snap"
	MT_DECODE_SEGMENT_BYTES=64 run mt-decode -s -o /dev/null "$T/mruby.snap"
	[ "$status" -eq 0 ]
	[[ "$output" != *segment-joins* ]]
}

@test "mt-decode -j with a bad count is a usage error, exit 2" {
	run mt-decode -j 0 "$T/tsc.snap"
	[ "$status" -eq 2 ]
	run mt-decode -j x "$T/tsc.snap"
	[ "$status" -eq 2 ]
	run mt-decode -j 2x "$T/tsc.snap"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "mt-decode: bad --jobs argument '2x' (1 to 1024)" ]]
	run mt-decode -j '' "$T/tsc.snap"
	[ "$status" -eq 2 ]
	run mt-decode -j 5000 "$T/tsc.snap"
	[ "$status" -eq 2 ]
}

# -j 1 decodes in the main thread (its stack limit raised to the 64 MiB
# libipt's recursion may need, decode.h): no thread, no thread stack, no
# second malloc arena.  A hard stack limit below that gets the decode a
# thread of its own; -j 2 starts its workers.  Threads counted by strace.
@test "mt-decode -j 1 decodes in its main thread unless the stack limit cannot be raised" {
	command -v strace > /dev/null || skip "needs strace (make deps)"
	# (LeakSanitizer cannot run under ptrace: off for the sanitizer build)
	clones() {
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		    strace -f -qq -e trace=clone,clone3 -o "$T/clones" \
		    bash -c "$1"'; exec mt-decode -q "$@"' _ "${@:2}" \
		    -o /dev/null
		grep -Ec '^[0-9]+ +clone3?\(' "$T/clones" || true
	}
	[ "$(clones : -j 1 "$T/mix.snap")" -eq 0 ]
	[ "$(clones : -j 1 "$T/tsc.snap")" -eq 0 ]
	[ "$(clones : -j 1 --no-cache "$T/mix.snap")" -eq 0 ]
	[ "$(clones 'ulimit -Ss 8192' -j 1 "$T/mix.snap")" -eq 0 ]
	[ "$(clones 'ulimit -Ss 8192; ulimit -Hs 8192' -j 1 \
	    "$T/mix.snap")" -eq 1 ]
	[ "$(clones : -j 2 "$T/tsc.snap")" -eq 2 ]
}
