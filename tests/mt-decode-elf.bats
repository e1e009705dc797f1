#!/usr/bin/env bats
# mt-decode with ELF files: the synthetic program of tests/helpers/ptgen.c
# linked as an ELF with one function symbol per routine.  Its function
# ranges turn a jump from one function into another into a `jmp` event;
# the file is found bundled, in a build-id directory, under --root or at
# its recorded path, and a file with another build-id is refused.

setup() {
	D="$BATS_FILE_TMPDIR"
	if [ ! -f "$D/code.elf" ]; then
		cc -O1 -o "$D/ptgen" "$MT_ROOT/tests/helpers/ptgen.c" -lipt
		"$D/ptgen" asm "$D/code.s"
		cc -nostdlib -static -no-pie -Wl,-Ttext=0x400000 -Wl,--build-id \
			-o "$D/code.elf" "$D/code.s"
		"$D/ptgen" tailcall "$D/tailcall.pt"
		mkdir -p "$D/bin"
		cp "$D/code.elf" "$D/bin/code.elf"
		mt-capture import-raw --pt "$D/tailcall.pt" --elf-ref "$D/bin/code.elf" \
			-o "$D/ref.snap"
	fi
	E="$MT_ROOT/tests/data/decode/tailcall-elf.events"
}

events() {	# the event records of a stream file
	sed -n '/^thread /,$p' "$1" | tail -n +2
}

# decode_bundled PT EXPECTED NAME: import PT with the ELF bundled, decode
# it into $D/NAME.ev without errors, compare its events with EXPECTED.
decode_bundled() {
	mt-capture import-raw --pt "$1" --elf "$D/code.elf" -o "$D/$3.snap"
	run mt-decode --stats -o "$D/$3.ev" "$D/$3.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	run diff -u "$2" <(events "$D/$3.ev")
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "mt-decode: a bundled ELF gives function ranges: the tail call is a jmp" {
	decode_bundled "$D/tailcall.pt" "$E" b
	run grep '^mod ' "$D/b.ev"
	[[ "$output" == "mod 0 0x400000 0x40010c 4096 "[0-9a-f]*" $D/code.elf" ]]
}

@test "mt-decode: a TSX abort from f to its handler in main is a jmp; mt-symbolize names the tx records" {
	"$D/ptgen" tsx "$D/tsx.pt"
	decode_bundled "$D/tsx.pt" "$MT_ROOT/tests/data/decode/tsx-elf.events" tsx
	run mt-symbolize -o "$D/tsx.sym" "$D/tsx.ev"
	[ "$status" -eq 0 ]
	# the abort's loc names f, the function it happened in
	loc=$(awk '$1 == "tx" && $5 == "abort" { print substr($6, 2) }' "$D/tsx.sym")
	fn=$(awk -v l="$loc" '$1 == "loc" && $2 == l { split($4, a, ":"); print a[1] }' "$D/tsx.sym")
	run awk -v f="$fn" '$1 == "fn" && $2 == f { print $5 }' "$D/tsx.sym"
	[ "$output" = "f" ]
	run grep -c '^tx [0-9]* 0 0x[0-9a-f]* \(begin\|commit\|abort\) @[1-9][0-9]*$' "$D/tsx.sym"
	[ "$output" -eq 4 ]
}

@test "mt-decode: without function symbols the same trace has no jmp" {
	"$D/ptgen" code "$D/code.bin"
	mt-capture import-raw --pt "$D/tailcall.pt" "$D/code.bin@0x400000" -o "$D/raw.snap"
	run mt-decode -o "$D/raw.ev" "$D/raw.snap"
	[ "$status" -eq 0 ]
	run diff <(events "$D/raw.ev") <(grep -v '^jmp ' "$E")
	[ "$status" -eq 0 ]
}

@test "mt-decode: a recorded path whose build-id matches is decoded" {
	run mt-decode --stats -o "$D/ref.ev" "$D/ref.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	[[ "$output" == *"missing-images: 0"* ]]
	run diff -u "$E" <(events "$D/ref.ev")
	[ "$status" -eq 0 ]
}

@test "mt-decode: a file with another build-id is refused with one warning" {
	mkdir -p "$D/other"
	{ cat "$D/code.s"; printf '\t.byte 0x90\n'; } > "$D/other.s"
	cc -nostdlib -static -no-pie -Wl,-Ttext=0x400000 -Wl,--build-id \
		-o "$D/other/code.elf" "$D/other.s"
	mkdir -p "$D/wrong$D/bin"
	cp "$D/other/code.elf" "$D/wrong$D/bin/code.elf"
	run mt-decode --stats --root "$D/wrong" -o "$D/wrong.ev" "$D/ref.snap"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'warning' <<< "$output")" -eq 1 ]
	[[ "$output" == *"mt-decode: warning: '$D/wrong$D/bin/code.elf' has build-id "*", the trace needs "*": not decoded against it"* ]]
	[[ "$output" == *"errors-nomap: 1"* ]]
	run grep -c '^error .*no%20memory%20mapped' "$D/wrong.ev"
	[ "$output" = 1 ]
}

@test "mt-decode: --root finds the file under a copy of the target's tree" {
	mkdir -p "$D/root$D/bin"
	cp "$D/code.elf" "$D/root$D/bin/code.elf"
	mv "$D/bin/code.elf" "$D/bin/code.elf.away"
	run mt-decode --stats --root "$D/root" -o "$D/root.ev" "$D/ref.snap"
	mv "$D/bin/code.elf.away" "$D/bin/code.elf"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	run diff -u "$E" <(events "$D/root.ev")
	[ "$status" -eq 0 ]
}

@test "mt-decode: --debug-dir finds the file by build-id" {
	id=$(mt-decode "$D/ref.snap" | awk '$1 == "mod" { print $6 }')
	[ ${#id} -eq 40 ]
	mkdir -p "$D/dbg/.build-id/${id:0:2}"
	cp "$D/code.elf" "$D/dbg/.build-id/${id:0:2}/${id:2}"
	mv "$D/bin/code.elf" "$D/bin/code.elf.away"
	run mt-decode --stats -d "$D/dbg" -o "$D/dbg.ev" "$D/ref.snap"
	mv "$D/bin/code.elf.away" "$D/bin/code.elf"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	run diff -u "$E" <(events "$D/dbg.ev")
	[ "$status" -eq 0 ]
}

@test "mt-decode: a missing file is a warning and a gap, not a failure" {
	mv "$D/bin/code.elf" "$D/bin/code.elf.away"
	run mt-decode --stats -o "$D/miss.ev" "$D/ref.snap"
	mv "$D/bin/code.elf.away" "$D/bin/code.elf"
	[ "$status" -eq 0 ]
	[[ "$output" == *"mt-decode: warning: no file for '$D/bin/code.elf' with build-id "*": its code is not decoded"* ]]
	[[ "$output" == *"missing-images: 1"* ]]
	[[ "$output" == *"errors-nomap: 1"* ]]
	run mt-decode -q -o "$D/miss.ev" "$D/ref.snap"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "mt-decode: a file cut after its code is a warning; its code is still decoded" {
	# readelf: where the section headers end, and where .symtab starts
	end=$(readelf -h "$D/code.elf" | awk -F: '
		/Start of section headers/ { o = $2 + 0 }
		/Size of section headers/ { s = $2 + 0 }
		/Number of section headers/ { n = $2 + 0 }
		END { print o + s * n }')
	off=$(readelf -SW "$D/code.elf" | awk '{ for (i = 1; i < NF; i++)
		if ($i == ".symtab") print $(i + 3) }')
	cut=$((16#$off))
	[ "$cut" -gt 0 ]
	mkdir -p "$D/cut$D/bin"
	head -c "$cut" "$D/code.elf" > "$D/cut$D/bin/code.elf"
	run mt-decode --stats --root "$D/cut" -o "$D/cut.ev" "$D/ref.snap"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'warning' <<< "$output")" -eq 1 ]
	[[ "$output" == *"mt-decode: warning: '$D/cut$D/bin/code.elf': truncated: section headers end at byte $end, file has $cut"* ]]
	[[ "$output" == *"errors: 0"* ]]
	# without its symbols: the events of the raw code, no jmp
	run diff <(events "$D/cut.ev") <(grep -v '^jmp ' "$E")
	[ "$status" -eq 0 ]
}

@test "mt-decode: a bundled ELF file cut short stays out of the build-id cache, a whole one goes in" {
	C="$BATS_TEST_TMPDIR/cache"
	id=$(readelf -n "$D/code.elf" | awk '/Build ID/ { print $3 }')
	[ -n "$id" ]
	size=$(stat -c %s "$D/code.elf")
	head -c $((size - 100)) "$D/code.elf" > "$D/cut.elf"
	mt-capture import-raw --pt "$D/tailcall.pt" --elf "$D/cut.elf" -o "$D/cut.snap"
	MT_CACHE_DIR="$C" run mt-decode -q -o "$D/cut.ev" "$D/cut.snap"
	[ "$status" -eq 0 ]
	[ ! -e "$C/.build-id/${id:0:2}/${id:2}" ]
	mt-capture import-raw --pt "$D/tailcall.pt" --elf "$D/code.elf" -o "$D/whole.snap"
	MT_CACHE_DIR="$C" run mt-decode -q -o "$D/whole.ev" "$D/whole.snap"
	[ "$status" -eq 0 ]
	cmp "$D/code.elf" "$C/.build-id/${id:0:2}/${id:2}"
}
