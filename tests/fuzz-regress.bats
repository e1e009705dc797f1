#!/usr/bin/env bats
# Every input that once crashed a fuzz target (tests/fuzz/regress/<target>/)
# and every hand-written seed (tests/fuzz/seeds/<target>/) is replayed
# through the target, built as a plain program against this build's
# libraries (with its sanitizers).  The target checks the same invariants
# as under libFuzzer, so a crash or a broken invariant fails the test.

setup_file() {
	export FZ="$BATS_FILE_TMPDIR"
	for t in snap events sideband elf perfdata fxt fde decode qmaps qjit timed; do
		"$MT_ROOT/tests/helpers/fuzz-standalone" "$t" "$FZ/fuzz-$t"
	done
}

# replay TARGET: run the target on its regression inputs and seeds.
replay() {
	local t=$1 files=()
	for f in "$MT_ROOT/tests/fuzz/regress/$t"/* "$MT_ROOT/tests/fuzz/seeds/$t"/*; do
		[ -f "$f" ] && files+=("$f")
	done
	[ "${#files[@]}" -gt 0 ]
	run "$FZ/fuzz-$t" "${files[@]}"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq "${#files[@]}" ]
}

@test "fuzz regress: snapshot reader handles every kept input" {
	replay snap
}

@test "fuzz regress: event stream reader handles every kept input" {
	replay events
}

@test "fuzz regress: sideband parser handles every kept input" {
	replay sideband
}

@test "fuzz regress: ELF loader handles every kept input" {
	replay elf
}

@test "fuzz regress: FDE reader handles every kept input" {
	replay fde
}

@test "fuzz regress: perf.data reader handles every kept input" {
	replay perfdata
}

@test "fuzz regress: mt-fxt's run handles every kept input" {
	replay fxt
}

@test "fuzz regress: mt-decode's decode of a snapshot handles every kept input" {
	replay decode
}

# fuzz-timed: the cached decoder's stream is --no-cache's on the timed
# seeds (tests/helpers/ptretime.c) and on every kept input
@test "fuzz regress: the cached decoder and --no-cache agree on every kept timed input" {
	replay timed
}

@test "fuzz regress: the qemu backend's maps log reader handles every kept input" {
	replay qmaps
}

@test "fuzz regress: the qemu backend's JIT code log reader handles every kept input" {
	replay qjit
}

@test "fuzz regress: ELF symbol with a size that wraps past 2^64 ends at 2^64-1" {
	run "$FZ/fuzz-elf" "$MT_ROOT/tests/fuzz/regress/elf/sym-size-wraps-end"
	[ "$status" -eq 0 ]
	[ "$output" = "ok $MT_ROOT/tests/fuzz/regress/elf/sym-size-wraps-end" ]
}

@test "fuzz regress: import-perf refuses a perf.data whose time_shift is over 63" {
	f="$MT_ROOT/tests/fuzz/regress/perfdata/time-shift-over-63"
	run mt-capture import-perf "$f" -o "$BATS_TEST_TMPDIR/s.snap"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: '$f': AUXTRACE_INFO time_shift 2560 is over 63 at offset 468" ]
	[ ! -e "$BATS_TEST_TMPDIR/s.snap" ]
}

@test "fuzz regress: a trace that runs on into code looping on direct jumps ends in an error record, not a hang" {
	f="$MT_ROOT/tests/fuzz/regress/decode/jmp-self-at-trace-end"
	for o in -j1 -j2 --no-cache; do
		run timeout 120 mt-decode -q "$o" -o "$BATS_TEST_TMPDIR/e.ev" "$f"
		[ "$status" -eq 0 ]
		grep -qx 'error [0-9]* [0-9]* 0x401cde 48 never-ending%20loop' \
		    "$BATS_TEST_TMPDIR/e.ev"
		[ "$(tail -1 "$BATS_TEST_TMPDIR/e.ev" | cut -d' ' -f1)" = end ]
	done
}

# (-j1 and --no-cache decode in the main thread, whose stack limit
# mt-decode raises to 65 MiB; a hard limit below that gets the decode a
# thread with its own 64 MiB stack; the 8 MiB it is without segfaults)
@test "fuzz regress: a direct-jump loop that libipt's block cache walks 65535 deep decodes on its big stack, then ends in an error record" {
	f="$MT_ROOT/tests/fuzz/regress/decode/jmp-loop-deep-libipt-recursion"
	for lim in "" "ulimit -Ss 8192" "ulimit -Ss 8192; ulimit -Hs 8192"; do
		for o in -j1 -j2 --no-cache; do
			rm -f "$BATS_TEST_TMPDIR/e.ev"
			run timeout 120 bash -c "$lim"'
			    exec mt-decode -q "$@"' _ "$o" \
			    -o "$BATS_TEST_TMPDIR/e.ev" "$f"
			[ "$status" -eq 0 ]
			grep -qx 'error [0-9]* [0-9]* 0x40106a 52 never-ending%20loop' \
			    "$BATS_TEST_TMPDIR/e.ev"
		done
	done
}

@test "fuzz regress: a loop whose blocks the walk cache cannot explain ends when no packet is read for 2^24 instructions" {
	f="$MT_ROOT/tests/fuzz/regress/decode/loop-the-walk-cannot-explain"
	for o in -j1 -j2 --no-cache; do
		run timeout 120 mt-decode -q "$o" -o "$BATS_TEST_TMPDIR/e.ev" "$f"
		[ "$status" -eq 0 ]
		grep -qx 'error [0-9]* [0-9]* 0x401f2c 48 never-ending%20loop' \
		    "$BATS_TEST_TMPDIR/e.ev"
	done
}
