#!/usr/bin/env bats
# mt-fxt within Perfetto's importer limits: string and thread table slots
# reused beyond 32,767 strings and 255 threads, depth capped below 512 with
# the fold shown, long strings truncated.  Every output passes fxt-check.

GEN="$MT_ROOT/tests/helpers/gen-events"
CHK="$MT_ROOT/tests/helpers/fxt-check"

@test "mt-fxt: 100,000 distinct functions on 1,000 threads give a valid trace" {
	"$GEN" --events 220000 --functions 100000 --threads 1000 > "$BATS_TEST_TMPDIR/big.events"
	run mt-fxt -o "$BATS_TEST_TMPDIR/big.fxt" "$BATS_TEST_TMPDIR/big.events"
	[ "$status" -eq 0 ]
	run "$CHK" --stats "$BATS_TEST_TMPDIR/big.fxt"
	[ "$status" -eq 0 ]
	# every thread has events; all 32,767 string slots were used
	[[ "$output" == *" threads 1000 strings-slots 32767" ]]
	run mt-fxt -F folded "$BATS_TEST_TMPDIR/big.events"
	[ "$status" -eq 0 ]
	run grep -c ';fn_100000 ' <(printf '%s\n' "$output")
	[ "$output" -ge 1 ]
}

@test "mt-fxt: tiny string and thread tables give the same timeline as full ones" {
	"$GEN" --events 3000 --functions 300 --threads 12 > "$BATS_TEST_TMPDIR/s.events"
	run mt-fxt -o "$BATS_TEST_TMPDIR/full.fxt" "$BATS_TEST_TMPDIR/s.events"
	[ "$status" -eq 0 ]
	run mt-fxt --string-slots 40 --thread-slots 2 -o "$BATS_TEST_TMPDIR/tiny.fxt" "$BATS_TEST_TMPDIR/s.events"
	[ "$status" -eq 0 ]
	"$CHK" --dump "$BATS_TEST_TMPDIR/full.fxt" > "$BATS_TEST_TMPDIR/full.dump"
	"$CHK" --dump "$BATS_TEST_TMPDIR/tiny.fxt" > "$BATS_TEST_TMPDIR/tiny.dump"
	[ -s "$BATS_TEST_TMPDIR/full.dump" ]
	diff -u "$BATS_TEST_TMPDIR/full.dump" "$BATS_TEST_TMPDIR/tiny.dump"
	# the tiny tables really were reused: more records than with full ones
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/tiny.fxt")" -gt "$(stat -c %s "$BATS_TEST_TMPDIR/full.fxt")" ]
}

@test "mt-fxt: 600 nested calls are folded below depth 512, the fold shown" {
	"$GEN" --chain 600 --functions 50 > "$BATS_TEST_TMPDIR/deep.events"
	run mt-fxt -o "$BATS_TEST_TMPDIR/deep.fxt" "$BATS_TEST_TMPDIR/deep.events"
	[ "$status" -eq 0 ]
	run "$CHK" --dump "$BATS_TEST_TMPDIR/deep.fxt"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/deep.dump"
	# 501 frames shown (fn_1 and 500 calls), the 501st is the fold marker
	[ "$(grep -c ' +' "$BATS_TEST_TMPDIR/deep.dump")" -eq 501 ]
	run grep -n '+\[deeper frames folded\]' "$BATS_TEST_TMPDIR/deep.dump"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	run mt-fxt -F summary "$BATS_TEST_TMPDIR/deep.events"
	[ "$status" -eq 0 ]
	[[ "$output" == *"frames folded below the depth limit: 101"* ]]
}

@test "mt-fxt: 40,000-byte names and a 100,000-byte cmdline are truncated, not fatal" {
	"$GEN" --events 20 --functions 3 --name-len 40000 --cmdline-len 100000 > "$BATS_TEST_TMPDIR/long.events"
	run mt-fxt -o "$BATS_TEST_TMPDIR/long.fxt" "$BATS_TEST_TMPDIR/long.events"
	[ "$status" -eq 0 ]
	run "$CHK" "$BATS_TEST_TMPDIR/long.fxt"
	[ "$status" -eq 0 ]
}

# depth_capped NAME [OPTIONS] [-- FXT-OPTIONS]: mt-fxt OPTIONS on
# NAME.events writes a trace fxt-check accepts (never more than 512 nested
# slices, as Perfetto needs) and folds frames to stay below the cap; the
# FXT-OPTIONS (--max-size) go to the FXT run only.
depth_capped() {
	local n=$1 t="$BATS_TEST_TMPDIR" both=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		both+=("$1")
		shift
	done
	[ $# -eq 0 ] || shift
	run mt-fxt "${both[@]}" "$@" -o "$t/$n.fxt" "$t/$n.events"
	[ "$status" -eq 0 ]
	run "$CHK" --dump "$t/$n.fxt"
	echo "$output" | tail -3
	[ "$status" -eq 0 ]
	run mt-fxt "${both[@]}" -F summary "$t/$n.events"
	[ "$status" -eq 0 ]
	[[ "$output" == *"frames folded below the depth limit: "[1-9]* ]]
}

@test "mt-fxt: 600 returns past the oldest frame (outer inferred frames) stay below depth 512" {
	{ printf 'mt-events 1.1\nthread 1 1 a\n'
	  for i in $(seq 0 599); do
		printf 'ret %d 1 0x%x 0x%x\n' $((10 + i)) $((0x100000 + 16 * i)) \
		    $((0x200000 + 16 * i))
	  done
	  printf 'end 700 1\n'; } > "$BATS_TEST_TMPDIR/outer.events"
	depth_capped outer
}

@test "mt-fxt: outer frames inside a kernel entry on a deep stack stay below depth 512" {
	{ printf 'mt-events 1.1\nthread 1 1 a\n'
	  for i in $(seq 0 399); do
		printf 'call %d 1 0x%x 0x%x\n' $((10 + i)) $((0x100000 + 16 * i)) \
		    $((0x100010 + 16 * i))
	  done
	  printf 'syscall 500 1 0x200000 0xffffffff81000000\n'
	  for i in $(seq 0 199); do
		printf 'ret %d 1 0x%x 0x%x\n' $((510 + i)) \
		    $((0xffffffff81100000 + 16 * i)) $((0xffffffff81200000 + 16 * i))
	  done
	  printf 'end 800 1\n'; } > "$BATS_TEST_TMPDIR/kout.events"
	depth_capped kout
}

@test "mt-fxt: a kernel entry and a --time region opening on 600 frames stay below depth 512" {
	{ printf 'mt-events 1.1\nthread 1 1 a\n'
	  for i in $(seq 0 299); do
		printf 'call %d 1 0x%x 0x%x\n' $((10 + i)) $((0x100000 + 16 * i)) \
		    $((0x100010 + 16 * i))
	  done
	  printf 'syscall 400 1 0x200000 0xffffffff81000000\n'
	  for i in $(seq 0 299); do
		printf 'call %d 1 0x%x 0x%x\n' $((410 + i)) \
		    $((0xffffffff81100000 + 16 * i)) $((0xffffffff81100010 + 16 * i))
	  done
	  printf 'call 1500 1 0xffffffff82000000 0xffffffff82000010\n'
	  printf 'end 2500 1\n'; } > "$BATS_TEST_TMPDIR/kdeep.events"
	depth_capped kdeep
	depth_capped kdeep --time 1000,2000
	depth_capped kdeep -- --max-size 20000
}
