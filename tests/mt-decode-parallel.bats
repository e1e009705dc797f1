#!/usr/bin/env bats
# mt-decode -j N (mt-decode/parallel.c): the buffers of a snapshot decode
# on N threads and the event stream is byte for byte the one -j 1 writes.
# Synthetic multi-thread traces come from bench/gen-synth (libipt's
# encoder over a generated program); the real traces have one buffer.

RP="$MT_SHARED/testdata/real-pt"

setup_file() {
	T="$BATS_FILE_TMPDIR"
	# libmtcommon.a of a SANITIZE build needs the sanitizer runtimes
	san=
	if nm "$MT_BUILD/libmtcommon.a" 2>/dev/null | grep -q __asan; then
		san=-fsanitize=address,undefined
	fi
	cc -O2 -std=c11 -D_GNU_SOURCE $san -iquote "$MT_ROOT/common" \
		-o "$T/gen-synth" "$MT_ROOT/bench/gen-synth.c" \
		"$MT_BUILD/libmtcommon.a" -lipt -lxxhash -lz
	"$T/gen-synth" asm -S 7 -o "$T/prog.s"
	cc -nostdlib -static -no-pie -Wl,--build-id -Wl,-Ttext=0x401000 \
		-o "$T/prog" "$T/prog.s"
	# TSC-only timing: decoded in parallel
	"$T/gen-synth" snap -C -S 7 -t 5 -m 1 -e "$T/prog" -o "$T/tsc.snap"
	# CYC timing: -j falls back to the sequential loop
	"$T/gen-synth" snap -S 7 -t 3 -m 1 -e "$T/prog" -o "$T/cyc.snap"
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
	[ "$(grep -v -e '^walk' -e '^blocks' <<<"$output")" = \
	  "$(grep -v -e '^walk' -e '^blocks' <<<"$j1stats")" ]
	# and the stream is not trivial: five threads, thousands of calls
	[ "$(grep -c '^thread ' "$T/j1.ev")" -eq 5 ]
	[ "$(grep -c '^call ' "$T/j1.ev")" -gt 10000 ]
}

@test "mt-decode -j 2 on standard input and to standard output is the same stream" {
	run mt-decode -j 1 -o "$T/a.ev" "$T/tsc.snap"
	[ "$status" -eq 0 ]
	mt-decode -j 2 - < "$T/tsc.snap" > "$T/b.ev"
	# only `info source` names the input
	sed -i '/^info source /d' "$T/a.ev" "$T/b.ev"
	cmp "$T/a.ev" "$T/b.ev"
}

@test "mt-decode -j 2 with CYC timing writes the sequential stream, every run" {
	run mt-decode -j 1 -o "$T/c1.ev" "$T/cyc.snap"
	[ "$status" -eq 0 ]
	for k in 1 2 3; do
		run mt-decode -j 2 -o "$T/c2.ev" "$T/cyc.snap"
		[ "$status" -eq 0 ]
		cmp "$T/c1.ev" "$T/c2.ev"
	done
}

@test "mt-decode -j 2 on the real traces equals -j 1" {
	[ -f "$RP/mruby/trace" ] || skip "needs the real traces in $RP"
	mt-capture import-raw --pt "$RP/unzip/trace" \
		--pages "$RP/unzip/addr,$RP/unzip/dump" \
		--filter 0x400000-0x427000 -o "$T/unzip.snap"
	mt-capture import-raw --pt "$RP/mruby/trace" \
		--pages "$RP/mruby/addr,$RP/mruby/dump" \
		--filter 0x400000-0x4b6000 -o "$T/mruby.snap"
	for t in unzip mruby; do
		run mt-decode -j 1 -o "$T/$t.1" "$T/$t.snap"
		[ "$status" -eq 0 ]
		run mt-decode -j 2 -o "$T/$t.2" "$T/$t.snap"
		[ "$status" -eq 0 ]
		cmp "$T/$t.1" "$T/$t.2"
	done
}

@test "mt-decode -j with a bad count is a usage error, exit 2" {
	run mt-decode -j 0 "$T/tsc.snap"
	[ "$status" -eq 2 ]
	run mt-decode -j x "$T/tsc.snap"
	[ "$status" -eq 2 ]
	run mt-decode -j 5000 "$T/tsc.snap"
	[ "$status" -eq 2 ]
}
