#!/usr/bin/env bats
# mt-symbolize --no-lines and --no-inline (both: symbols only, as perf
# script and uftrace show by default).  A program whose DWARF has
# file:line and an inlined function (square() inlined into outer(),
# always_inline), checked against binutils addr2line (-i for the
# inlined frames) and nm; that symbols only leaves libdw out is read
# from the system calls (strace): libdw opens the binary a second time
# itself, and opens the debug file it reads DWARF from; with libc6-dbg
# (make deps), libc's compressed DWARF is inflated into a memfd.

BASE=0x555555554000
LIBC=/usr/lib/x86_64-linux-gnu/libc.so.6

setup_file() {
	export S="$BATS_FILE_TMPDIR"
	local id
	cat > "$S/p.c" <<'EOF'
static inline __attribute__((always_inline)) int
square(volatile int *p)
{
	return *p * *p;
}

__attribute__((noinline)) int
outer(volatile int *p)
{
	int s = square(p);

	return s + 1;
}

int
main(void)
{
	volatile int x = 3;

	return outer(&x);
}
EOF
	cc -O2 -g -Wl,--build-id -o "$S/p" "$S/p.c"
	# The DWARF in a debug file found by build-id under -d, the symbol
	# table left in the binary.
	id=$(readelf -n "$S/p" | awk '/Build ID/ { print $3 }')
	mkdir -p "$S/dd/.build-id/${id:0:2}" "$S/sep"
	objcopy --only-keep-debug "$S/p" "$S/dd/.build-id/${id:0:2}/${id:2}.debug"
	strip --strip-debug -o "$S/sep/p" "$S/p"
	# Every address of outer() and main() (file offset, nm's name),
	# one event each.
	nm -S --defined-only "$S/p" | awk '$4 == "outer" || $4 == "main"' |
	    while read -r a z _ n; do
		for ((i = 0; i < 0x$z; i++)); do
			echo $((0x$a + i)) "$n"
		done
	done > "$S/offs"
	events "$S/p" > "$S/in.ev"
	events "$S/sep/p" > "$S/sep.ev"
}

# An event stream: binary $1 mapped at BASE, a call from each of offs.
events() {
	printf 'mt-events 1.2\nproc 1000 t t\nthread 1000 1001 t\n'
	printf 'mod 1000 %s 0x555555558000 0 - %s\n' "$BASE" "$1"
	while read -r o _; do
		printf 'call 1 1001 0x%x 0x0\n' $((BASE + o))
	done < "$S/offs"
}

# "ADDR NAME..., FILE:LINE..." per loc record of stream $1: the frames'
# names outermost first, then each frame's file:line (- for file 0).
frames() {
	awk '$1 == "fn" { n[$2] = $5 } $1 == "file" { f[$2] = $3 }
	     $1 == "loc" { s = $3; l = ""
		for (i = 4; i <= NF; i++) { split($i, x, ":")
			s = s " " n[x[1]]; l = l " " (x[2] ? f[x[2]] : "-") ":" x[3] }
		print s "," l }' "$1"
}

# addr2line's answer for file offset $1 of p: "NAME FILE:LINE ..."
# (with -i: innermost first), base names of files.
a2l() {
	addr2line -f -s "${@:2}" -e "$S/p" "$(printf '%x' "$1")" | paste -sd' '
}

# traced CALLS LOG CMD...: CMD under strace, its CALLS (any thread) in LOG
# (LeakSanitizer cannot run under ptrace: off for the sanitizer build)
traced() {
	local calls=$1 log=$2
	shift 2
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -e trace="$calls" -o "$log" "$@"
}

@test "mt-symbolize --no-lines --no-inline: one frame per address named by its symbol, no file:line" {
	local d="$BATS_TEST_TMPDIR" o
	mt-symbolize -o "$d/full.ev" "$S/in.ev"
	mt-symbolize --no-lines --no-inline -o "$d/sym.ev" "$S/in.ev"
	# The fixture has what the options leave out: square() inlined
	# into outer() at its first address, with lines (addr2line -i).
	o=$(nm "$S/p" | awk '$3 == "outer" { print $1 }')
	[ "$(a2l $((0x$o)) -i)" = "square p.c:4 outer p.c:10" ]
	run frames "$d/full.ev"
	[[ "$output" == *"$(printf '0x%x' $((BASE + 0x$o))) outer square, $S/p.c:10 $S/p.c:4"* ]]
	# Symbols only: the stream says so, no file records, one frame
	# per address with file and line 0.
	grep -qx 'info lines 0' "$d/sym.ev"
	grep -qx 'info inline 0' "$d/sym.ev"
	run grep -c '^file ' "$d/sym.ev"
	[ "$output" = 0 ]
	run awk '$1 == "loc" && (NF != 4 || $4 !~ /:0:0$/)' "$d/sym.ev"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# Each address named as nm names it, and as the default mode names
	# its outermost frame.
	frames "$d/sym.ev" | awk '{ print $1, $2 }' | tr -d , > "$d/sym.names"
	frames "$d/full.ev" | awk '{ print $1, $2 }' | tr -d , > "$d/full.names"
	[ "$(wc -l < "$d/sym.names")" -eq "$(wc -l < "$S/offs")" ]
	diff -u "$d/full.names" "$d/sym.names"
	while read -r o n; do
		printf '0x%x %s\n' $((BASE + o)) "$n"
	done < "$S/offs" > "$d/nm.names"
	diff -u "$d/nm.names" "$d/sym.names"
}

@test "mt-symbolize --no-inline: one frame, the symbol's name, the address's own line as addr2line gives it" {
	local d="$BATS_TEST_TMPDIR" o line
	mt-symbolize --no-inline -o "$d/ni.ev" "$S/in.ev"
	grep -qx 'info inline 0' "$d/ni.ev"
	run grep -c '^info lines' "$d/ni.ev"
	[ "$output" = 0 ]
	frames "$d/ni.ev" > "$d/ni.frames"
	[ "$(wc -l < "$d/ni.frames")" -eq "$(wc -l < "$S/offs")" ]
	# addr2line without -i: the address's own line (the innermost,
	# inlined function's source line); the name is the symbol's.
	while read -r o n; do
		line=$(a2l "$o" | awk '{ print $2 }')
		grep -qx "$(printf '0x%x' $((BASE + o))) $n, $S/$line" "$d/ni.frames"
	done < "$S/offs"
}

@test "mt-symbolize --no-lines: the inlined frames without file:line" {
	local d="$BATS_TEST_TMPDIR" o
	mt-symbolize -o "$d/full.ev" "$S/in.ev"
	mt-symbolize --no-lines -o "$d/nl.ev" "$S/in.ev"
	grep -qx 'info lines 0' "$d/nl.ev"
	run grep -c '^file \|^info inline' "$d/nl.ev"
	[ "$output" = 0 ]
	o=$(nm "$S/p" | awk '$3 == "outer" { print $1 }')
	run frames "$d/nl.ev"
	[[ "$output" == *"$(printf '0x%x' $((BASE + 0x$o))) outer square, -:0 -:0"* ]]
	# The same frames as the default mode, names and all.
	diff -u <(frames "$d/full.ev" | cut -d, -f1) <(frames "$d/nl.ev" | cut -d, -f1)
}

@test "mt-symbolize --no-lines --no-inline reads no DWARF: libdw opens neither the binary nor the debug file (strace)" {
	local d="$BATS_TEST_TMPDIR" dbg
	dbg=$(find "$S/dd/.build-id" -name '*.debug')
	# The default mode: libdw opens the binary a second time (O_RDONLY
	# alone; mt's own open has O_NONBLOCK) and reads the debug file.
	traced openat "$d/full.st" \
	    mt-symbolize -d "$S/dd" -o "$d/full.ev" "$S/sep.ev"
	grep -q '^file ' "$d/full.ev"
	[ "$(grep -c "\"$S/sep/p\", O_RDONLY)" "$d/full.st")" -eq 1 ]
	grep -q "\"$dbg\"" "$d/full.st"
	traced openat "$d/sym.st" \
	    mt-symbolize --no-lines --no-inline -d "$S/dd" -o "$d/sym.ev" "$S/sep.ev"
	[ "$(grep -c "\"$S/sep/p\"" "$d/sym.st")" -eq 1 ]
	[ "$(grep -c "\"$S/sep/p\", O_RDONLY)" "$d/sym.st")" -eq 0 ]
	run grep -c "\"$dbg\"" "$d/sym.st"
	[ "$output" = 0 ]
	# Same names as from the binary with its DWARF.
	mt-symbolize --no-lines --no-inline -o "$d/p.ev" "$S/in.ev"
	diff -u <(frames "$d/p.ev" | cut -d, -f1) <(frames "$d/sym.ev" | cut -d, -f1)
}

@test "mt-symbolize symbols only: a stripped binary's debug-file symbols still name its code (build-id, .gnu_debuglink)" {
	local d="$BATS_TEST_TMPDIR" id
	mkdir -p "$d/bid" "$d/link"
	id=$(readelf -n "$S/p" | awk '/Build ID/ { print $3 }')
	# By build-id under -d: the full debug file beside a stripped copy.
	mkdir -p "$d/dd/.build-id/${id:0:2}"
	objcopy --only-keep-debug "$S/p" "$d/dd/.build-id/${id:0:2}/${id:2}.debug"
	strip --strip-all -o "$d/bid/p" "$S/p"
	events "$d/bid/p" > "$d/bid.ev"
	mt-symbolize -d "$d/dd" -o "$d/bid.full" "$d/bid.ev"
	mt-symbolize --no-lines --no-inline -d "$d/dd" -o "$d/bid.sym" "$d/bid.ev"
	# By .gnu_debuglink beside it, no build-id in the binary.
	cc -O2 -g -Wl,--build-id=none -o "$d/link/p" "$S/p.c"
	objcopy --only-keep-debug "$d/link/p" "$d/link/p.dbg"
	strip --strip-all "$d/link/p"
	objcopy --add-gnu-debuglink="$d/link/p.dbg" "$d/link/p"
	events "$d/link/p" > "$d/link.ev"
	mt-symbolize -o "$d/link.full" "$d/link.ev"
	mt-symbolize --no-lines --no-inline -o "$d/link.sym" "$d/link.ev"
	for k in bid link; do
		frames "$d/$k.sym" | awk '{ print $1, $2 }' | tr -d , > "$d/$k.names"
		grep -q ' outer$' "$d/$k.names"
		grep -q ' main$' "$d/$k.names"
		diff -u <(frames "$d/$k.full" | awk '{ print $1, $2 }' | tr -d ,) "$d/$k.names"
	done
	# A debug file whose CRC is not the one .gnu_debuglink gives is
	# not the binary's: no names from it.
	printf 'x' >> "$d/link/p.dbg"
	mt-symbolize --no-lines --no-inline -o "$d/bad.sym" "$d/link.ev"
	run grep -c ' outer$' "$d/bad.sym"
	[ "$output" = 0 ]
}

@test "mt-symbolize symbols only: libc's static functions named from libc6-dbg, its DWARF not inflated" {
	local d="$BATS_TEST_TMPDIR" id dbg
	id=$(readelf -n "$LIBC" | awk '/Build ID/ { print $3 }')
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -f "$dbg" ] || skip "needs libc6-dbg (make deps)"
	# A call from inside 100 local functions of libc's debug symbols.
	{
		printf 'mt-events 1.2\nproc 1000 t t\nthread 1000 1001 t\n'
		printf 'mod 1000 0x7f0000000000 0x7f0000400000 0 %s %s\n' "$id" "$LIBC"
		nm --defined-only "$dbg" | awk '$2 == "t" { print $1 }' |
		    sort -u | head -100 | while read -r a; do
			printf 'call 1 1001 0x%x 0x0\n' $((0x7f0000000000 + 0x$a + 1))
		done
	} > "$d/in.ev"
	traced memfd_create "$d/full.st" \
	    mt-symbolize --no-debug-cache -o "$d/full.ev" "$d/in.ev"
	grep -q memfd_create "$d/full.st"
	traced memfd_create "$d/sym.st" \
	    mt-symbolize --no-debug-cache --no-lines --no-inline -o "$d/sym.ev" "$d/in.ev"
	run grep -c memfd_create "$d/sym.st"
	[ "$output" = 0 ]
	frames "$d/sym.ev" | awk '{ print $1, $2 }' | tr -d , > "$d/sym.names"
	[ "$(grep -c '\[unknown' "$d/sym.names")" -eq 0 ]
	[ "$(wc -l < "$d/sym.names")" -ge 90 ]
	diff -u <(frames "$d/full.ev" | awk '{ print $1, $2 }' | tr -d ,) "$d/sym.names"
}

@test "mt-fxt reads a symbols-only stream: fxt, json, folded, summary; the stacks lose only the inlined frames" {
	local d="$BATS_TEST_TMPDIR" f o m
	o=$(nm "$S/p" | awk '$3 == "outer" { print $1 }')
	m=$(nm "$S/p" | awk '$3 == "main" { print $1 }')
	# main calls outer at an address where square is inlined; outer
	# returns.
	{
		printf 'mt-events 1.2\ninfo clock perf\nproc 1000 t t\nthread 1000 1001 t\n'
		printf 'mod 1000 %s 0x555555558000 0 - %s\n' "$BASE" "$S/p"
		printf 'call 100 1001 0x%x 0x%x\n' $((BASE + 0x$m + 4)) $((BASE + 0x$o))
		printf 'call 200 1001 0x%x 0x%x\n' $((BASE + 0x$o)) $((BASE + 0x$m))
		printf 'ret 300 1001 0x%x 0x%x\n' $((BASE + 0x$m + 8)) $((BASE + 0x$o + 1))
		printf 'ret 400 1001 0x%x 0x%x\n' $((BASE + 0x$o + 0xa)) $((BASE + 0x$m + 9))
		printf 'end 500 1001\n'
	} > "$d/in.ev"
	mt-symbolize -o "$d/full.ev" "$d/in.ev"
	mt-symbolize --no-lines --no-inline -o "$d/sym.ev" "$d/in.ev"
	for f in fxt json folded summary; do
		mt-fxt --format "$f" -o "$d/full.$f" "$d/full.ev"
		mt-fxt --format "$f" -o "$d/sym.$f" "$d/sym.ev"
		[ -s "$d/sym.$f" ]
	done
	grep -q 'square' "$d/full.folded"
	run grep -c 'square' "$d/sym.folded"
	[ "$output" = 0 ]
	grep -q 'outer' "$d/sym.folded"
	# The same stacks, inlined frames taken out.
	diff -u <(sed 's/;square / /; s/;square;/;/g' "$d/full.folded" | sort) <(sort "$d/sym.folded")
	jq -e '.traceEvents | map(select(.name == "outer")) | length > 0' "$d/sym.json"
	grep -q outer "$d/sym.summary"
}

@test "mt-symbolize: re-symbolizing a symbols-only stream in the default mode gives the default stream" {
	local d="$BATS_TEST_TMPDIR"
	mt-symbolize -o "$d/full.ev" "$S/in.ev"
	mt-symbolize --no-lines --no-inline -o "$d/sym.ev" "$S/in.ev"
	mt-symbolize -o "$d/again.ev" "$d/sym.ev"
	cmp "$d/full.ev" "$d/again.ev"
}

@test "mt-symbolize: --no-lines and --no-inline do not go with -e (exit 2)" {
	run mt-symbolize -e "$S/p" --no-lines 0x1150
	[ "$status" -eq 2 ]
	[[ "$output" == *"--no-inline and --no-lines do not go with -e"* ]]
	run mt-symbolize -e "$S/p" --no-inline 0x1150
	[ "$status" -eq 2 ]
}
