#!/usr/bin/env bats
# mt-capture import-raw: a snapshot from raw PT bytes plus memory images
# (ptxed-style FILE[:OFFSET[-SIZE]]@ADDR and kAFL/Nyx page dumps).

setup() {
	D="$BATS_FILE_TMPDIR"
	[ -x "$D/ptgen" ] || cc -O1 -o "$D/ptgen" "$MT_ROOT/tests/helpers/ptgen.c" -lipt
	"$D/ptgen" code "$D/code.bin"
	"$D/ptgen" calls "$D/calls.pt"
}

@test "import-raw: image with offset and size, filter and cpu land in the snapshot" {
	# 16 junk bytes, then the code: map 0x70 bytes from offset 16
	{ head -c 16 /dev/zero; cat "$D/code.bin"; } > "$D/padded.bin"
	run mt-capture import-raw --pt "$D/calls.pt" --cpu 6/85/4 \
		--filter 0x400000-0x400fff -o "$D/a.snap" "$D/padded.bin:16-0x70@0x400000"
	[ "$status" -eq 0 ]
	run mt-decode --info "$D/a.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"cpu: GenuineIntel family 6 model 85 stepping 4"* ]]
	[[ "$output" == *"  filter 0: 0x400000-0x400fff filter"* ]]
	[[ "$output" == *"  blob kind 3 pid 0 0x400000 112 bytes $D/padded.bin"* ]]
	run mt-decode --stats -o "$D/a.ev" "$D/a.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"instructions: 19"* ]]
	[[ "$output" == *"errors: 0"* ]]
}

@test "import-raw: --pages maps each page at its address" {
	# two pages: the code at 0x400000, zeros at 0x401000 (listed in reverse)
	{ head -c 4096 /dev/zero; cat "$D/code.bin"; head -c $((4096 - 0x70)) /dev/zero; } > "$D/dump"
	printf '\000\020\100\000\000\000\000\000\000\000\100\000\000\000\000\000' > "$D/addr"
	run mt-capture import-raw --pt "$D/calls.pt" --pages "$D/addr,$D/dump" -o "$D/p.snap"
	[ "$status" -eq 0 ]
	run mt-decode --info "$D/p.snap"
	[[ "$output" == *"code blobs: 2, 8192 bytes"* ]]
	[[ "$output" == *"blob kind 3 pid 0 0x401000 4096 bytes $D/dump"* ]]
	[[ "$output" == *"blob kind 3 pid 0 0x400000 4096 bytes $D/dump"* ]]
	run mt-decode --stats -o "$D/p.ev" "$D/p.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"instructions: 19"* ]]
	run grep '^mod ' "$D/p.ev"
	[ "$output" = "mod 0 0x401000 0x402000 0 - $D/dump
mod 0 0x400000 0x401000 0 - $D/dump" ]
}

@test "import-raw: mt-decode --info lists every one of 12 blobs" {
	# 12 pages one page apart, so none is joined: 0x400000, 0x402000, ...
	{ cat "$D/code.bin"; head -c $((12 * 4096 - 0x70)) /dev/zero; } > "$D/dump12"
	python3 -c 'import struct, sys
sys.stdout.buffer.write(b"".join(struct.pack("<Q", 0x400000 + 2 * i * 4096)
    for i in range(12)))' > "$D/addr12"
	[ "$(stat -c %s "$D/addr12")" -eq 96 ]
	run mt-capture import-raw --pt "$D/calls.pt" --pages "$D/addr12,$D/dump12" -o "$D/p12.snap"
	[ "$status" -eq 0 ]
	run mt-decode --info "$D/p12.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"code blobs: 12, 49152 bytes"* ]]
	[ "$(grep -c '^  blob kind 3 pid 0 0x4[0-9a-f]*000 4096 bytes ' <<< "$output")" -eq 12 ]
	[[ "$output" == *"  blob kind 3 pid 0 0x416000 4096 bytes $D/dump12"* ]]
	[[ "$output" != *"more"* ]]
}

@test "import-raw: --pages joins pages at consecutive addresses into one blob" {
	# the code at 0x400000, zeros at 0x401000 and at 0x403000 (a gap)
	{ cat "$D/code.bin"; head -c $((4096 - 0x70 + 8192)) /dev/zero; } > "$D/dump3"
	printf '\000\000\100\000\000\000\000\000\000\020\100\000\000\000\000\000\000\060\100\000\000\000\000\000' > "$D/addr3"
	run mt-capture import-raw --pt "$D/calls.pt" --pages "$D/addr3,$D/dump3" -o "$D/p3.snap"
	[ "$status" -eq 0 ]
	run mt-decode --info "$D/p3.snap"
	[[ "$output" == *"code blobs: 2, 12288 bytes"* ]]
	[[ "$output" == *"blob kind 3 pid 0 0x400000 8192 bytes $D/dump3"* ]]
	[[ "$output" == *"blob kind 3 pid 0 0x403000 4096 bytes $D/dump3"* ]]
	run mt-decode --stats -o "$D/p3.ev" "$D/p3.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"instructions: 19"* ]]
}

@test "import-raw: a truncated address file or a short dump is an error, exit 1" {
	printf '\000\000\100\000\000' > "$D/badaddr"
	run mt-capture import-raw --pt "$D/calls.pt" --pages "$D/badaddr,$D/code.bin" -o "$D/x.snap"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: '$D/badaddr': truncated address at offset 0" ]
	printf '\000\000\100\000\000\000\000\000' > "$D/oneaddr"
	run mt-capture import-raw --pt "$D/calls.pt" --pages "$D/oneaddr,$D/code.bin" -o "$D/x.snap"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: '$D/code.bin': 1 pages listed but the dump ends at offset 112" ]
	[ ! -e "$D/x.snap" ]
}

@test "import-raw: bad arguments are usage errors, exit 2" {
	run mt-capture import-raw -o "$D/x.snap"
	[ "$status" -eq 2 ]
	run mt-capture import-raw --pt "$D/calls.pt" -o "$D/x.snap" --filter 0x500-0x400
	[ "$status" -eq 2 ]
	[[ "$output" == "mt-capture: bad --filter '0x500-0x400'"* ]]
	run mt-capture import-raw --pt "$D/calls.pt" -o "$D/x.snap" --cpu 6/85
	[ "$status" -eq 2 ]
	run mt-capture import-raw --pt "$D/calls.pt" -o "$D/x.snap" "$D/code.bin"
	[ "$status" -eq 2 ]
	[ "$output" = "mt-capture: bad image '$D/code.bin' (want file[:offset[-size]]@addr)" ]
	[ ! -e "$D/x.snap" ]
}

@test "import-raw: a missing file or an image past its end is exit 1" {
	run mt-capture import-raw --pt "$D/nonexistent" -o "$D/x.snap"
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-capture: cannot read '$D/nonexistent': No such file"* ]]
	run mt-capture import-raw --pt "$D/calls.pt" -o "$D/x.snap" "$D/code.bin:0x60-0x20@0x400000"
	[ "$status" -eq 1 ]
	[[ "$output" == *"past the end of the file (112 bytes)" ]]
	run mt-capture import-raw --pt "$D/calls.pt" -o "$D/x.snap" "$D/code.bin:113@0x400000"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: image '$D/code.bin:113@0x400000': offset 113 past the end of the file (112 bytes)" ]
	[ ! -e "$D/x.snap" ]
}

@test "import-raw: an image or ELF segment past the end of the address space is refused, exit 1" {
	run mt-capture import-raw --pt "$D/calls.pt" -o "$D/x.snap" "$D/code.bin@0xffffffffffffff91"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: image '$D/code.bin@0xffffffffffffff91': 112 bytes at 0xffffffffffffff91 run past the end of the address space" ]
	[ ! -e "$D/x.snap" ]
	# the last byte at 2^64 - 1 fits
	run mt-capture import-raw --pt "$D/calls.pt" -o "$D/fits.snap" "$D/code.bin@0xffffffffffffff90"
	[ "$status" -eq 0 ]
	# a bias (modulo 2^64) that puts the executable segment across 2^64
	cc -o "$D/small" -x c - <<< 'int main(void) { return 0; }'
	vaddr=$(readelf -lW "$D/small" | awk '$1 == "LOAD" && $8 == "E" { print $3; exit }')
	bias=$(printf '0x%x' $(( -(vaddr + 0x10) )))
	run mt-capture import-raw --pt "$D/calls.pt" -o "$D/y.snap" --elf "$D/small@$bias"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: '$D/small': segment at $(printf '0x%x' $((vaddr))) with bias $bias runs past the end of the address space" ]
	[ ! -e "$D/y.snap" ]
}

@test "import-raw: an --elf that is no ELF file or is cut short names the file and offset, exit 1" {
	run mt-capture import-raw --pt "$D/calls.pt" -o "$D/x.snap" --elf "$D/code.bin"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: '$D/code.bin': not a usable ELF file: not an ELF file (bad magic at offset 0)" ]
	head -c 40 "$(command -v mt-decode)" > "$D/cut.elf"
	run mt-capture import-raw --pt "$D/calls.pt" -o "$D/x.snap" --elf "$D/cut.elf"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: '$D/cut.elf': not a usable ELF file: truncated: ELF header ends at byte 64, file has 40" ]
	[ ! -e "$D/x.snap" ]
}

@test "import-raw: -o naming a directory is one line saying so, exit 1" {
	mkdir -p "$D/outdir"
	run mt-capture import-raw --pt "$D/calls.pt" -o "$D/outdir" \
	    "$D/code.bin@0x400000"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: '$D/outdir' is a directory (-o names the output file)" ]
	run ls -A "$D/outdir"
	[ -z "$output" ]
}
