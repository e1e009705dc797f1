#!/usr/bin/env bats
# mt-symbolize stream mode: file/fn/loc records and @LOC fields
# (docs/formats/events.md), checked against addr2line and eu-addr2line on
# sampled addresses, plus PLT stubs, perf maps, kallsyms, build-id caches,
# demangling and the once-per-address and once-per-DSO rules.

LIBC=/usr/lib/x86_64-linux-gnu/libc.so.6
LIBM=/usr/lib/x86_64-linux-gnu/libm.so.6
BASE=0x555555554000

setup_file() {
	# Built once per bats run, shared by the mt-symbolize-*.bats files.
	export PROGS="${BATS_RUN_TMPDIR:-$BATS_FILE_TMPDIR}/symbolize-progs"
	[ -x "$PROGS/rust-names-nodbg" ] ||
		"$MT_ROOT/tests/data/symbolize/build-test-programs" "$PROGS" >/dev/null
}

compare() {
	"$MT_ROOT/tests/data/symbolize/stream-compare" "$@"
}

# Address of symbol $2 in binary $1 (hex, no 0x).
symaddr() {
	nm --defined-only "$1" | awk -v s="$2" '$3 == s { print $1; exit }'
}

# An event stream over the C++ test program mapped at BASE in pid 1000.
stream_head() {
	printf 'mt-events 1.0\ninfo source test\nproc 1000 t t\n'
	printf 'thread 1000 1001 t\n'
	printf 'mod 1000 %s 0x555556554000 0 - %s\n' "$BASE" "$1"
}

@test "mt-symbolize: loc frames and lines agree with eu-addr2line on libc and libm" {
	run compare --eu -n 2000 "$LIBC"
	echo "$output"
	[ "$status" -eq 0 ]
	run compare --eu -n 2000 --seed 2 "$LIBM"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "mt-symbolize: loc frames agree with the tools on the C++, Rust-named and demo programs" {
	# Inlined names: binutils names some innermost inlined C++ frames
	# after the enclosing symbol (docs/symbolize.md).
	run compare -n 2000 --seed 3 --min-name 0.85 "$PROGS/cxx-templates"
	echo "$output"
	[ "$status" -eq 0 ]
	run compare --eu -n 1000 --seed 4 "$PROGS/rust-names"
	echo "$output"
	[ "$status" -eq 0 ]
	if [ -x "$PROGS/demo" ]; then
		run compare --eu -n 1000 --seed 5 "$PROGS/demo"
		echo "$output"
		[ "$status" -eq 0 ]
	fi
}

@test "mt-symbolize: records come before the event that needs them, once per address" {
	local b="$PROGS/cxx-templates" m
	m=$(symaddr "$b" main)
	{
		stream_head "$b"
		printf 'call 10 1001 0x%x 0x%x\n' $((BASE + 0x$m)) $((BASE + 0x$m))
		printf 'call 20 1001 0x%x 0x0\n' $((BASE + 0x$m))
		printf 'end 30 1001\n'
	} > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "mt-events 1.2" ]
	[ "${lines[1]}" = "info symbolized 1" ]
	[ "${lines[2]}" = "info source test" ]
	[ "${lines[6]}" = "$(printf 'fn 1 0x%x %s main' $((BASE + 0x$m)) "$b")" ]
	[ "${lines[7]}" = "file 1 $MT_ROOT/tests/data/symbolize/cxx-templates.cpp" ]
	[[ "${lines[8]}" =~ ^loc\ 1\ 0x[0-9a-f]+\ 1:1:[0-9]+$ ]]
	[ "${lines[9]}" = "$(printf 'call 10 1001 0x%x 0x%x @1 @1' $((BASE + 0x$m)) $((BASE + 0x$m)))" ]
	[ "${lines[10]}" = "$(printf 'call 20 1001 0x%x 0x0 @1 @0' $((BASE + 0x$m)))" ]
	[ "${lines[11]}" = "end 30 1001" ]
	[ "${#lines[@]}" -eq 12 ]
}

@test "mt-symbolize: PLT stubs are named func@plt" {
	local b="$PROGS/cxx-templates" plt
	plt=$(objdump -d -j .plt -j .plt.sec "$b" |
	    awk '/<printf@plt>:/ { print $1; exit }')
	[ -n "$plt" ]
	{
		stream_head "$b"
		printf 'jmp 10 1001 0x%x 0x%x\n' $((BASE + 0x$plt)) $((BASE + 0x$plt + 4))
	} > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ "${lines[6]}" = "$(printf 'fn 1 0x%x %s printf@plt' $((BASE + 0x$plt)) "$b")" ]
	[[ "${lines[7]}" == "loc 1 "*" 1:0:0" ]]
}

@test "mt-symbolize: names are demangled, --no-demangle keeps them raw" {
	local b="$PROGS/rust-names-nodbg" a v c
	a=$(symaddr "$b" _ZN7mycrate4util5parse17h0123456789abcdefE)
	v=$(symaddr "$b" _RNvCs15kBYyAo9fc_7mycrate7example)
	c=$(symaddr "$b" _ZN2ns6Widget4drawEi)
	{
		stream_head "$b"
		printf 'call 10 1001 0x%x 0x%x\n' $((BASE + 0x$a)) $((BASE + 0x$v))
		printf 'call 11 1001 0x%x 0x0\n' $((BASE + 0x$c))
	} > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[[ "$output" == *" mycrate::util::parse"$'\n'* ]]
	[[ "$output" == *" mycrate::example"$'\n'* ]]
	[[ "$output" == *" ns::Widget::draw(int)"$'\n'* ]]
	run mt-symbolize --no-demangle "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[[ "$output" == *" _ZN7mycrate4util5parse17h0123456789abcdefE"$'\n'* ]]
	[[ "$output" == *" _RNvCs15kBYyAo9fc_7mycrate7example"$'\n'* ]]
}

@test "mt-symbolize: perf maps name JIT code of their process, kallsyms the kernel" {
	printf '7f0000001000 40 jit_compiled_fn\n7f0000002000 10 LazyCompile:~foo%%20bar\n' \
	    > "$BATS_TEST_TMPDIR/perf-1000.map"
	printf 'ffffffff81000000 T _stext\nffffffff81000100 t do_syscall_64\nffffffff81000200 D some_data\n' \
	    > "$BATS_TEST_TMPDIR/kallsyms"
	cat > "$BATS_TEST_TMPDIR/in.ev" <<-EOF
	mt-events 1.0
	thread 1000 1000 t
	thread 2000 2000 u
	call 1 1000 0x7f0000001010 0xffffffff81000150
	call 2 2000 0x7f0000001010 0x0
	EOF
	run mt-symbolize -q --perf-map "$BATS_TEST_TMPDIR/perf-1000.map" \
	    --kallsyms "$BATS_TEST_TMPDIR/kallsyms" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ "${lines[4]}" = "fn 1 0x7f0000001000 $BATS_TEST_TMPDIR/perf-1000.map jit_compiled_fn" ]
	[ "${lines[5]}" = "loc 1 0x7f0000001010 1:0:0" ]
	[ "${lines[6]}" = "fn 2 0xffffffff81000100 [kernel.kallsyms] do_syscall_64" ]
	[ "${lines[7]}" = "loc 2 0xffffffff81000150 2:0:0" ]
	[ "${lines[8]}" = "call 1 1000 0x7f0000001010 0xffffffff81000150 @1 @2" ]
	# pid 2000 has no map: the same address is unknown there.
	[ "${lines[9]}" = "fn 3 0x7f0000001010 - [unknown%20@%200x7f0000001010%20(unmapped)]" ]
}

@test "mt-symbolize: a missing binary warns once and gives [unknown @ ...] names" {
	cat > "$BATS_TEST_TMPDIR/in.ev" <<-EOF
	mt-events 1.0
	mod 1 0x400000 0x500000 0 - /nonexistent/libgone.so
	call 1 1 0x400010 0x400020
	call 2 1 0x400030 0x400010
	EOF
	run mt-symbolize -o "$BATS_TEST_TMPDIR/out.ev" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "mt-symbolize: warning: '/nonexistent/libgone.so' not found"* ]]
	run grep -c '^fn .*\[unknown%20@%200x4000[123]0%20(libgone.so)\]$' "$BATS_TEST_TMPDIR/out.ev"
	[ "$output" = "3" ]
}

@test "mt-symbolize: binaries are found by build-id in a --debug-dir cache" {
	local b="$PROGS/rust-names" id m
	id=$(readelf -n "$b" | awk '/Build ID/ { print $3 }')
	mkdir -p "$BATS_TEST_TMPDIR/cache/.build-id/${id:0:2}"
	cp "$b" "$BATS_TEST_TMPDIR/cache/.build-id/${id:0:2}/${id:2}"
	m=$(symaddr "$b" main)
	cat > "$BATS_TEST_TMPDIR/in.ev" <<-EOF
	mt-events 1.0
	mod 1 $BASE 0x555556554000 0 $id /elsewhere/rust-names
	call 1 1 $(printf '0x%x' $((BASE + 0x$m))) 0x0
	EOF
	run mt-symbolize -d "$BATS_TEST_TMPDIR/cache" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ "${lines[3]}" = "$(printf 'fn 1 0x%x /elsewhere/rust-names main' $((BASE + 0x$m)))" ]
	# Without the cache the path does not exist: a warning, no name.
	run mt-symbolize "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *"'/elsewhere/rust-names' not found (build-id $id)" ]]
}

@test "mt-symbolize: a file whose build-id differs is not used" {
	local m
	m=$(symaddr "$PROGS/rust-names" main)
	cat > "$BATS_TEST_TMPDIR/in.ev" <<-EOF
	mt-events 1.0
	mod 1 $BASE 0x555556554000 0 00112233445566778899aabbccddeeff00112233 $PROGS/rust-names
	call 1 1 $(printf '0x%x' $((BASE + 0x$m))) 0x0
	EOF
	run mt-symbolize "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *"build-id differs from the recorded 00112233"* ]]
	[[ "$output" == *"[unknown%20@%20"* ]]
}

@test "mt-symbolize: a directory as -o is one error saying so, exit 1, nothing written into it" {
	mkdir -p "$BATS_TEST_TMPDIR/out"
	printf 'mt-events 1.0\ninfo source test\n' > "$BATS_TEST_TMPDIR/in.events"
	run mt-symbolize -o "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/in.events"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-symbolize: '$BATS_TEST_TMPDIR/out' is a directory (-o names the output file)" ]
	run ls -A "$BATS_TEST_TMPDIR/out"
	[ -z "$output" ]
}

@test "mt-symbolize: symbolizing a symbolized stream gives the same stream" {
	local b="$PROGS/cxx-templates" m
	m=$(symaddr "$b" main)
	{
		stream_head "$b"
		printf 'call 10 1001 0x%x 0x%x\n' $((BASE + 0x$m + 5)) $((BASE + 0x$m))
	} > "$BATS_TEST_TMPDIR/in.ev"
	mt-symbolize "$BATS_TEST_TMPDIR/in.ev" > "$BATS_TEST_TMPDIR/once.ev"
	mt-symbolize "$BATS_TEST_TMPDIR/once.ev" > "$BATS_TEST_TMPDIR/twice.ev"
	diff -u "$BATS_TEST_TMPDIR/once.ev" "$BATS_TEST_TMPDIR/twice.ev"
}

@test "mt-symbolize: a malformed line names the file and line, exit 1" {
	printf 'mt-events 1.0\nthread 1 1 t\ncall 5 1 0x10\n' > "$BATS_TEST_TMPDIR/bad.ev"
	run mt-symbolize "$BATS_TEST_TMPDIR/bad.ev"
	[ "$status" -eq 1 ]
	[[ "$output" == *"mt-symbolize: $BATS_TEST_TMPDIR/bad.ev: line 3: "* ]]
	run mt-symbolize < "$BATS_TEST_TMPDIR/bad.ev"
	[ "$status" -eq 1 ]
	[[ "$output" == *"mt-symbolize: <stdin>: line 3: "* ]]
	printf 'not-events\n' | { run mt-symbolize; [ "$status" -eq 1 ]; }
}

@test "mt-symbolize: a directory as the input is one error with the byte offset, exit 1" {
	mkdir "$BATS_TEST_TMPDIR/dir"
	run mt-symbolize -o "$BATS_TEST_TMPDIR/x.ev" "$BATS_TEST_TMPDIR/dir"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-symbolize: $BATS_TEST_TMPDIR/dir: read error at offset 0: Is a directory" ]
	[ ! -e "$BATS_TEST_TMPDIR/x.ev" ]
}

@test "mt-symbolize: -o writes the whole file and refuses to overwrite the input" {
	printf 'mt-events 1.0\nend 1 1\n' > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize -o "$BATS_TEST_TMPDIR/out.ev" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR/out.ev")" = "$(printf 'mt-events 1.2\ninfo symbolized 1\nend 1 1')" ]
	run mt-symbolize -o "$BATS_TEST_TMPDIR/in.ev" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 1 ]
	[[ "$output" == *"refusing to overwrite the input"* ]]
	[ "$(cat "$BATS_TEST_TMPDIR/in.ev")" = "$(printf 'mt-events 1.0\nend 1 1')" ]
	run mt-symbolize -o "$BATS_TEST_TMPDIR/out2.ev" "$BATS_TEST_TMPDIR/missing.ev"
	[ "$status" -eq 1 ]
	[ ! -e "$BATS_TEST_TMPDIR/out2.ev" ]
	# Through common/outfile: permissions as any new file's (umask).
	(umask 027; mt-symbolize -o "$BATS_TEST_TMPDIR/out3.ev" "$BATS_TEST_TMPDIR/in.ev")
	[ "$(stat -c %a "$BATS_TEST_TMPDIR/out3.ev")" = 640 ]
	run ls -A "$BATS_TEST_TMPDIR"
	[ "$output" = "$(printf 'in.ev\nout.ev\nout3.ev')" ]
}

@test "mt-symbolize: usage errors exit 2, -h and -V exit 0" {
	run mt-symbolize --bogus
	[ "$status" -eq 2 ]
	[[ "$output" == *"usage: mt-symbolize"* ]]
	run mt-symbolize a.ev b.ev
	[ "$status" -eq 2 ]
	# An option of the other mode is refused, not ignored.
	for o in -o -a -C -f -i -p -s --elfutils --kallsyms --perf-map \
	    --no-demangle; do
		case $o in
		-o|--kallsyms|--perf-map) run mt-symbolize -e "$LIBC" "$o" "$BATS_TEST_TMPDIR/x" 0x26000 ;;
		--no-demangle) run mt-symbolize -e "$LIBC" "$o" 0x26000 ;;
		*) run mt-symbolize "$o" < /dev/null ;;
		esac
		[ "$status" -eq 2 ]
		[[ "${lines[0]}" == "mt-symbolize: "*" with -e" ||
		    "${lines[0]}" == "mt-symbolize: "*" need -e" ]]
	done
	[ ! -e "$BATS_TEST_TMPDIR/x" ]
	run mt-symbolize -e "$LIBC" -afips -C 0x26000
	[ "$status" -eq 0 ]
	run mt-symbolize -h
	[ "$status" -eq 0 ]
	[[ "$output" == *"--perf-map"* ]]
	run mt-symbolize -V
	[ "$status" -eq 0 ]
}

@test "mt-symbolize: bad perf map and kallsyms files are errors with their line" {
	printf '7f00 10 ok\nzz 10 bad\n' > "$BATS_TEST_TMPDIR/perf-1.map"
	printf 'mt-events 1.0\n' > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize --perf-map "$BATS_TEST_TMPDIR/perf-1.map" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 1 ]
	[[ "$output" == *"perf-1.map': line 2: bad address"* ]]
	run mt-symbolize --kallsyms "$BATS_TEST_TMPDIR/nope" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 1 ]
	[[ "$output" == *"nope': No such file or directory"* ]]
}

@test "mt-symbolize: a stripped binary's .gnu_debuglink file is found beside it and in .debug/" {
	local d="$BATS_TEST_TMPDIR/dl" m
	mkdir -p "$d/.debug"
	printf 'int work(int x){return x*3;}\nint main(void){return work(2);}\n' > "$d/p.c"
	cc -O0 -g -o "$d/p" "$d/p.c"
	objcopy --only-keep-debug "$d/p" "$d/p.debug"
	strip --strip-all "$d/p"
	objcopy --add-gnu-debuglink="$d/p.debug" "$d/p"
	m=$(nm "$d/p.debug" | awk '$3 == "work" { print $1 }')
	printf 'mt-events 1.0\nmod 1 %s 0x555556554000 0 - %s\ncall 1 1 0x%x 0x0\n' \
	    "$BASE" "$d/p" $((BASE + 0x$m)) > "$d/in.ev"
	run mt-symbolize "$d/in.ev"
	[ "$status" -eq 0 ]
	[ "${lines[3]}" = "$(printf 'fn 1 0x%x %s work' $((BASE + 0x$m)) "$d/p")" ]
	[ "${lines[4]}" = "file 1 $d/p.c" ]
	mv "$d/p.debug" "$d/.debug/"
	run mt-symbolize "$d/in.ev"
	[ "$status" -eq 0 ]
	[ "${lines[3]}" = "$(printf 'fn 1 0x%x %s work' $((BASE + 0x$m)) "$d/p")" ]
	[ "${lines[4]}" = "file 1 $d/p.c" ]
	# Without the debug file: no name (the binary has no symbols).
	rm "$d/.debug/p.debug"
	run mt-symbolize "$d/in.ev"
	[ "$status" -eq 0 ]
	[[ "${lines[3]}" != *" work" ]]
}

@test "mt-symbolize: a FIFO or a device where the debug file is looked for is a warning, not a hang" {
	local d="$BATS_TEST_TMPDIR/dl" m id w
	mkdir -p "$d/.debug" "$d/dd$d" "$d/bd"
	printf 'int work(int x){return x*3;}\nint main(void){return work(2);}\n' > "$d/p.c"
	cc -O0 -g -Wl,--build-id -o "$d/p" "$d/p.c"
	objcopy --only-keep-debug "$d/p" "$d/p.debug"
	strip --strip-debug "$d/p"
	objcopy --add-gnu-debuglink="$d/p.debug" "$d/p"
	rm "$d/p.debug"
	m=$(nm "$d/p" | awk '$3 == "work" { print $1 }')
	id=$(readelf -n "$d/p" | awk '/Build ID/ { print $3 }')
	printf 'mt-events 1.0\nmod 1 %s 0x555556554000 0 - %s\ncall 1 1 0x%x 0x0\n' \
	    "$BASE" "$d/p" $((BASE + 0x$m)) > "$d/in.ev"
	mkdir -p "$d/bd/.build-id/${id:0:2}"
	# Each place libdw's search opens: beside the file, in .debug/,
	# under a debug directory, by build-id; a FIFO, then /dev/zero.
	for w in "$d/p.debug" "$d/.debug/p.debug" "$d/dd$d/p.debug" \
	    "$d/bd/.build-id/${id:0:2}/${id:2}.debug"; do
		for kind in fifo zero; do
			if [ $kind = fifo ]; then mkfifo "$w"; else ln -s /dev/zero "$w"; fi
			run timeout 20 mt-symbolize -d "$d/dd" -d "$d/bd" "$d/in.ev"
			[ "$status" -eq 0 ]
			[[ "$output" == *"mt-symbolize: warning: '$d/p': its debug file is not searched: '$w' is not a regular file"* ]]
			# The name from the binary's own symbols still.
			[[ "$output" == *"$(printf 'fn 1 0x%x %s work' $((BASE + 0x$m)) "$d/p")"* ]]
			run timeout 20 mt-symbolize -d "$d/dd" -d "$d/bd" -e "$d/p" -f 0x$m
			[ "$status" -eq 0 ]
			[[ "$output" == *"warning: '$d/p': its debug file is not searched: '$w' is not a regular file"* ]]
			[[ " ${lines[*]} " == *" work "* ]]
			rm "$w"
		done
	done
}
