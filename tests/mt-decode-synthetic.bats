#!/usr/bin/env bats
# mt-decode on synthetic traces: tests/helpers/ptgen.c writes Intel PT
# packets with libipt's encoder for a small hand-assembled program whose
# control flow is known (see the comment there), mt-capture import-raw
# maps the code at 0x400000, and the decoded event stream plus --stats
# must equal tests/data/decode/<scenario>.expected exactly.
# Regenerate the expected files (then review them): tests/helpers/ptgen-run --update

setup() {
	D="$BATS_FILE_TMPDIR"
	E="$MT_ROOT/tests/data/decode"
}

check() {	# check SCENARIO [expected-name] [mt-decode options]
	local s=$1 e=${2:-$1}
	shift 2 || shift 1
	"$MT_ROOT/tests/helpers/ptgen-run" "$D" "$s" "$@" > "$D/$e.out"
	run diff -u "$E/$e.expected" "$D/$e.out"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "mt-decode: direct and indirect calls, compressed and TIP returns" {
	check calls
}

@test "mt-decode: --all-branches adds taken conditional and direct jumps as br" {
	check calls calls-all --all-branches
}

@test "mt-decode: TIPs with 16-, 32-, 48-bit, sign-extended and full IPs decode alike" {
	check ipcomp
}

@test "mt-decode: a PSB+ in the middle of the trace is no error" {
	check psb
}

@test "mt-decode: an OVF is an overflow event and decoding resumes at its FUP" {
	check ovf
}

@test "mt-decode: code missing from the image gives one error, then decoding resumes" {
	check nomap
}

@test "mt-decode: a corrupt packet gives one error with its offset, then resync" {
	check corrupt
}

@test "mt-decode: a buffer starting mid-packet syncs at the first PSB" {
	check midpacket
}

@test "mt-decode: a user-only syscall is a disable with reason syscall, then enable" {
	check syscall
}

@test "mt-decode: with the kernel traced, syscall and sysret carry both addresses" {
	check kernel
}

@test "mt-decode: an interrupt is irq from the interrupted IP, iret back" {
	check irq
}

@test "mt-decode: leaving the IP filter is a call then disable filter, enable on return" {
	check filter
}

@test "mt-decode: TSX begin, commit and abort are tx records; the abort's branch is no irq" {
	check tsx
	run grep -c '^tx ' "$D/tsx.out"
	[ "$output" -eq 4 ]
	run grep -c '^irq ' "$D/tsx.out"
	[ "$output" -eq 0 ]
}
