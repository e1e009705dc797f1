#!/usr/bin/env bats
# Every program that reads a snapshot (mt-decode, its --info, and
# mt-capture export-perf) on one cut short or with a changed byte: one
# line, "PROG: 'FILE': WHAT at offset N", the offset named once, exit 1,
# and no output file.  The offsets are those of docs/formats/snapshot.md
# in the synthetic snapshot of tests/helpers/ptgen.c (`mt-decode --info`
# lists its chunks: a 32-byte header, BLOB at 258 of 148 bytes, AUX at
# 430, END at 551, 583 bytes in all).

setup() {
	D="$BATS_FILE_TMPDIR"
	if [ ! -f "$D/calls.snap" ]; then
		"$MT_ROOT/tests/helpers/ptgen-run" "$D" calls > /dev/null
	fi
	O="$BATS_TEST_TMPDIR/out"
	mkdir -p "$O"
}

# cut N: the first N bytes of calls.snap in $D/cut.snap
cut() {
	head -c "$1" "$D/calls.snap" > "$D/cut.snap"
}

# flip N: calls.snap with byte N inverted in $D/cut.snap
flip() {
	cp "$D/calls.snap" "$D/cut.snap"
	local b
	b=$(od -An -tu1 -j "$1" -N1 "$D/calls.snap")
	printf "\\$(printf %03o $((255 - b)))" |
		dd of="$D/cut.snap" bs=1 seek="$1" conv=notrunc 2>/dev/null
}

# refused MESSAGE: each program reading $D/cut.snap prints exactly
# "PROG: '$D/cut.snap': MESSAGE", exits 1 and leaves $O empty.
refused() {
	local f="$D/cut.snap" prog
	for prog in "mt-decode -o $O/out.ev" "mt-decode --info" \
	    "mt-capture export-perf -o $O/out.data"; do
		run $prog "$f"
		echo "$prog: $output"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[ "$output" = "${prog%% *}: '$f': $1" ]
		[ "$(grep -o ' at offset ' <<< "$output" | wc -l)" -eq 1 ]
		run ls -A "$O"
		[ -z "$output" ]
	done
	# from a pipe, the same words
	run sh -c 'cat "$1" | mt-decode -o "$2"' _ "$f" "$O/out.ev"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-decode: '-': $1" ]
	run sh -c 'cat "$1" | mt-capture export-perf -o "$2"' _ "$f" "$O/out.data"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: '-': $1" ]
	run ls -A "$O"
	[ -z "$output" ]
}

@test "bad snapshot: a few bytes of something else: bad magic at offset 0" {
	cut 5
	refused "not an mt snapshot (bad magic at offset 0)"
}

@test "bad snapshot: cut in the file header: truncated file header at offset 0" {
	cut 20
	refused "truncated file header at offset 0"
}

@test "bad snapshot: a changed header field: checksum mismatch in the file header at offset 0" {
	flip 20
	refused "checksum mismatch in file header at offset 0"
}

@test "bad snapshot: cut in a chunk's header: the offset of that header" {
	cut 40
	refused "truncated chunk header at offset 32"
}

@test "bad snapshot: cut in the BLOB chunk: its offset and its length, once" {
	cut 300
	refused "truncated in BLOB chunk at offset 258: length 148 exceeds the input"
}

@test "bad snapshot: cut before the END chunk: where the input ends" {
	cut 551
	refused "truncated at offset 551: no END chunk"
}

@test "bad snapshot: cut in the END chunk's checksum: the END chunk's offset" {
	cut 578
	refused "truncated in END chunk at offset 551"
}

@test "bad snapshot: a changed byte in the BLOB chunk: checksum mismatch at its offset" {
	flip 300
	refused "checksum mismatch in BLOB chunk at offset 258"
}

@test "bad snapshot: a changed byte in the AUX chunk: checksum mismatch at its offset" {
	flip 500
	refused "checksum mismatch in AUX chunk at offset 430"
}
