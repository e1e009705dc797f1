#!/usr/bin/env bats
# mt-decode's command line: operands, stdin, -o, --info, and clean one-line
# errors with a byte offset for truncated or corrupt snapshots.

setup() {
	D="$BATS_FILE_TMPDIR"
	if [ ! -f "$D/calls.snap" ]; then
		"$MT_ROOT/tests/helpers/ptgen-run" "$D" calls > /dev/null
	fi
}

@test "mt-decode: '-' and no operand read stdin, like the file operand" {
	run mt-decode "$D/calls.snap"
	[ "$status" -eq 0 ]
	local byfile=$output
	run sh -c 'mt-decode - < "$1"' _ "$D/calls.snap"
	[ "$status" -eq 0 ]
	[ "${output/info source %2D/info source $D/calls.snap}" = "$byfile" ]
	run sh -c 'mt-decode < "$1"' _ "$D/calls.snap"
	[ "$status" -eq 0 ]
	[ "${output/info source %2D/info source $D/calls.snap}" = "$byfile" ]
}

@test "mt-decode: -o writes the stream to a file and nothing to stdout" {
	run mt-decode -o "$D/out.ev" "$D/calls.snap"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run head -n 1 "$D/out.ev"
	[ "$output" = "mt-events 1.2" ]
	run grep -c '^call ' "$D/out.ev"
	[ "$output" = 5 ]
}

@test "mt-decode: a truncated snapshot is one error line with the offset, exit 1" {
	head -c 300 "$D/calls.snap" > "$D/trunc.snap"
	run mt-decode -o "$D/trunc.ev" "$D/trunc.snap"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "mt-decode: '$D/trunc.snap': truncated in "*" chunk at offset 258"* ]]
	[ ! -e "$D/trunc.ev" ]
}

@test "mt-decode: a snapshot cut inside its AUX chunk fails, also from stdin" {
	size=$(stat -c %s "$D/calls.snap")
	head -c $((size - 40)) "$D/calls.snap" > "$D/cut.snap"
	run sh -c 'mt-decode < "$1"' _ "$D/cut.snap"
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-decode: '-': truncated in AUX chunk at offset "* ]]
}

@test "mt-decode: a flipped byte is a checksum error naming the chunk, exit 1" {
	cp "$D/calls.snap" "$D/flip.snap"
	printf '\377' | dd of="$D/flip.snap" bs=1 seek=300 conv=notrunc 2>/dev/null
	run mt-decode "$D/flip.snap"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-decode: '$D/flip.snap': checksum mismatch in BLOB chunk at offset 258" ]
}

@test "mt-decode: a file that is no snapshot is refused, exit 1" {
	echo "hello" > "$D/hello.txt"
	run mt-decode "$D/hello.txt"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-decode: '$D/hello.txt': not an mt snapshot (bad magic at offset 0)" ]
}

@test "mt-decode: a directory as the snapshot is one error naming it and the reason, exit 1" {
	mkdir -p "$BATS_TEST_TMPDIR/dir"
	run mt-decode "$BATS_TEST_TMPDIR/dir"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-decode: '$BATS_TEST_TMPDIR/dir': read error at offset 0: Is a directory" ]
	run sh -c 'mt-decode < "$1"' _ "$BATS_TEST_TMPDIR/dir"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-decode: '-': read error at offset 0: Is a directory" ]
}

@test "mt-decode: a directory as -o is one error saying so, exit 1, nothing written into it" {
	mkdir -p "$BATS_TEST_TMPDIR/out"
	run mt-decode -o "$BATS_TEST_TMPDIR/out" "$D/calls.snap"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-decode: '$BATS_TEST_TMPDIR/out' is a directory (-o names the output file)" ]
	run ls -A "$BATS_TEST_TMPDIR/out"
	[ -z "$output" ]
}

@test "mt-decode: a missing file is exit 1, bad usage exit 2, --help exit 0" {
	run mt-decode "$D/nonexistent.snap"
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-decode: cannot open '$D/nonexistent.snap': "* ]]
	run mt-decode a b
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "mt-decode: unexpected argument 'b'" ]
	[[ "${lines[1]}" == "usage: mt-decode "* ]]
	run mt-decode --no-such-option
	[ "$status" -eq 2 ]
	run mt-decode --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "usage: mt-decode "* ]]
}

@test "mt-decode: --info lists the chunks and the key facts" {
	run mt-decode --info "$D/calls.snap"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "snapshot format 1.2, 8 chunks" ]
	[[ "$output" == *"  chunk AUX      offset 430 length 97"* ]]
	[[ "$output" == *"pt: backend raw, config 0x2000 "* ]]
	[[ "$output" == *"timing: no time conversion: times are relative"* ]]
	[[ "$output" == *"pt buffer 0: thread 0, snapshot 0, 57 bytes of a 57-byte ring"* ]]
	[[ "$output" == *"  blob kind 3 pid 0 0x400000 112 bytes code.bin"* ]]
}

@test "mt-decode: --stats goes to stderr as key: value lines" {
	run sh -c 'mt-decode --stats "$1" 2>&1 >/dev/null' _ "$D/calls.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"instructions: 19"* ]]
	[[ "$output" == *"errors: 0"* ]]
	[[ "$output" == *"bytes-before-sync: 0"* ]]
	for l in "${lines[@]}"; do
		[[ "$l" =~ ^[a-z-]+:\ [0-9]+$ ]]
	done
}
