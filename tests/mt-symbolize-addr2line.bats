#!/usr/bin/env bats
# mt-symbolize -e: prints what binutils addr2line prints, checked on
# thousands of addresses sampled from libc, libm, a C++ -O2 -g program,
# programs with Rust-mangled symbols and the demo; and agrees with
# eu-addr2line once the documented differences are set aside
# (docs/symbolize.md).  Test programs are built at test time.

LIBC=/usr/lib/x86_64-linux-gnu/libc.so.6
LIBM=/usr/lib/x86_64-linux-gnu/libm.so.6

setup_file() {
	# Built once per bats run, shared by the mt-symbolize-*.bats files.
	export PROGS="${BATS_RUN_TMPDIR:-$BATS_FILE_TMPDIR}/symbolize-progs"
	[ -x "$PROGS/rust-names-nodbg" ] ||
		"$MT_ROOT/tests/data/symbolize/build-test-programs" "$PROGS" >/dev/null
}

compare() {
	"$MT_ROOT/tests/data/symbolize/a2l-compare" "$@"
}

# Same output, byte for byte, for one flag set on sampled addresses.
same_output() {
	local bin=$1
	shift
	local a
	{ nm --defined-only "$bin" 2>/dev/null ||:
	  nm -D --defined-only "$bin"; } | awk '$2 ~ /^[tTi]$/ { print $1 }' |
	    head -400 | while read -r a; do
		printf '0x%s\n0x%x\n' "$a" $((0x$a + 3))
	done > "$BATS_TEST_TMPDIR/addrs"
	[ -s "$BATS_TEST_TMPDIR/addrs" ]
	addr2line -e "$bin" "$@" < "$BATS_TEST_TMPDIR/addrs" \
	    > "$BATS_TEST_TMPDIR/ref"
	run mt-symbolize -e "$bin" "$@" < "$BATS_TEST_TMPDIR/addrs"
	[ "$status" -eq 0 ]
	diff -u "$BATS_TEST_TMPDIR/ref" <(printf '%s\n' "$output")
}

@test "mt-symbolize -e: libc agrees with addr2line -f -i -C on 2500 addresses" {
	run compare -n 2500 --min-fn 0.999 --min-line 0.99 --min-same 0.99 "$LIBC"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "mt-symbolize -e: libm agrees with addr2line -f -i -C on 2000 addresses" {
	run compare -n 2000 --seed 2 --min-same 0.99 "$LIBM"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "mt-symbolize -e: C++ templates/lambdas/inlining agree with addr2line -f -i -C" {
	run compare -n 2500 --seed 3 --min-same 0.99 "$PROGS/cxx-templates"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "mt-symbolize -e: Rust-mangled names (legacy, v0) agree with addr2line -C" {
	run compare -n 1000 --seed 4 --min-same 0.999 "$PROGS/rust-names"
	echo "$output"
	[ "$status" -eq 0 ]
	run compare -n 1000 --seed 5 --min-same 0.999 "$PROGS/rust-names-nodbg"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "mt-symbolize -e: the demo agrees with addr2line -f -i -C" {
	[ -x "$PROGS/demo" ] || skip "demo/demo.c not in this tree"
	run compare -n 1000 --seed 6 --min-same 0.999 "$PROGS/demo"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "mt-symbolize -e: identical output to addr2line for each flag set" {
	same_output "$PROGS/cxx-templates"
	same_output "$PROGS/cxx-templates" -f
	same_output "$PROGS/cxx-templates" -a -f -i -C
	same_output "$PROGS/cxx-templates" -a -p -f -i -C
	same_output "$PROGS/cxx-templates" -s -i
	same_output "$PROGS/rust-names-nodbg" -f -C
	same_output "$LIBM" -a -f -i -C -p -s
}

@test "mt-symbolize -e: addresses as operands, 0x optional, junk reads as 0" {
	run mt-symbolize -e "$PROGS/cxx-templates" -a -f 0 zz 0x0
	[ "$status" -eq 0 ]
	expected=$(addr2line -e "$PROGS/cxx-templates" -a -f 0 zz 0x0)
	[ "$output" = "$expected" ]
}

@test "mt-symbolize -e: a missing file is an error naming it, exit 1" {
	run mt-symbolize -e "$BATS_TEST_TMPDIR/nope" 0x10
	[ "$status" -eq 1 ]
	[[ "$output" == *"mt-symbolize: cannot read "*nope*"No such file"* ]]
}

@test "mt-symbolize -e --elfutils: libc and libm agree with eu-addr2line" {
	run compare --eu -n 2000 --seed 8 "$LIBC"
	echo "$output"
	[ "$status" -eq 0 ]
	run compare --eu -n 1000 --seed 9 "$LIBM"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "mt-symbolize -e --elfutils: C++, Rust-named and demo programs agree with eu-addr2line" {
	# crt1's _start has no DWARF; eu-addr2line gives it a line of the
	# CU before it (docs/symbolize.md), hence the lower line rate here.
	run compare --eu -n 2000 --seed 10 --min-line 0.9 "$PROGS/cxx-templates"
	echo "$output"
	[ "$status" -eq 0 ]
	# eu-addr2line's demangler knows no Rust: compare raw names.
	run compare --eu --flags="-f -i" -n 1000 "$PROGS/rust-names"
	echo "$output"
	[ "$status" -eq 0 ]
	if [ -x "$PROGS/demo" ]; then
		run compare --eu -n 1000 "$PROGS/demo"
		echo "$output"
		[ "$status" -eq 0 ]
	fi
}

@test "mt-symbolize -e: standard output on a full device exits 1 with the reason" {
	run bash -c 'mt-symbolize -e "$1" -f 0x26000 > /dev/full' _ "$LIBC"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-symbolize: cannot write '-': No space left on device" ]
}
