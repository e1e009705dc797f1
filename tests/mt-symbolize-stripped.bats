#!/usr/bin/env bats
# mt-symbolize on code without symbols: a stripped program's functions
# are named after their .eh_frame FDE, `[unknown fn 0xSTART (dso)]`, one
# identity per function; code outside every FDE stays
# `[unknown @ 0xADDR (dso)]`.  The function bounds come from the
# unstripped build's symbol table (nm), not from mt.

BASE=0x555555554000

setup_file() {
	export S="$BATS_FILE_TMPDIR"
	cc -O2 -foptimize-sibling-calls -o "$S/tailchain" \
	    "$MT_ROOT/tests/data/emu/tailchain.c"
	strip -o "$S/tailchain-s" "$S/tailchain"
}

# start NAME / size NAME: of a function in the unstripped build, hex.
start() {
	nm -S --defined-only "$S/tailchain" | awk -v s="$1" '$4 == s { print $1; exit }'
}
size() {
	nm -S --defined-only "$S/tailchain" | awk -v s="$1" '$4 == s { print $2; exit }'
}
# named_by_fde_start DSO: out.ev has one fn record per function of DSO,
# named after its FDE's start, and each address that function's identity.
named_by_fde_start() {
	awk '$1 == "fn" { print $3, $5 }' "$BATS_TEST_TMPDIR/out.ev" \
	    > "$BATS_TEST_TMPDIR/fns"
	for f in c1 c2 c3 main; do
		printf '0x%x [unknown%%20fn%%200x%x%%20(%s)]\n' \
		    $((BASE + 0x$(start $f))) $((BASE + 0x$(start $f))) "$1"
	done > "$BATS_TEST_TMPDIR/want"
	diff -u "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/fns"
	awk '$1 == "loc" { split($4, f, ":"); print f[1] }' \
	    "$BATS_TEST_TMPDIR/out.ev" | tr '\n' ' ' > "$BATS_TEST_TMPDIR/ids"
	[ "$(cat "$BATS_TEST_TMPDIR/ids")" = "1 1 1 2 2 2 3 3 3 4 4 4 " ]
}

# stream BINARY ADDR...: a call from each ADDR (offsets in the file) to 0.
stream() {
	local b=$1 a
	shift
	printf 'mt-events 1.0\nproc 1000 t t\nthread 1000 1001 t\n'
	printf 'mod 1000 %s 0x555555560000 0 - %s\n' "$BASE" "$b"
	for a in "$@"; do
		printf 'call 1 1001 0x%x 0x0\n' $((BASE + a))
	done
}

@test "mt-symbolize: a stripped program's functions are [unknown fn 0xSTART (dso)], one per FDE" {
	local f s z addrs=()
	for f in c1 c2 c3 main; do
		s=$(start "$f") z=$(size "$f")
		[ -n "$s" ] && [ -n "$z" ]
		addrs+=($((0x$s)) $((0x$s + 0x$z - 1)) $((0x$s + 0x$z / 2)))
	done
	stream "$S/tailchain-s" "${addrs[@]}" > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize -o "$BATS_TEST_TMPDIR/out.ev" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# One fn record per function, named after its start.
	named_by_fde_start tailchain-s
}

@test "mt-symbolize: code outside every FDE of a stripped program stays [unknown @ 0xADDR (dso)]" {
	# The ELF header: mapped, in no function.
	stream "$S/tailchain-s" 16 > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[[ "$output" == *"fn 1 0x555555554010 $S/tailchain-s [unknown%20@%200x555555554010%20(tailchain-s)]"* ]]
}

@test "mt-symbolize: with symbols, the same addresses keep their names" {
	stream "$S/tailchain" $((0x$(start c2) + 1)) > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[[ "$output" == *" $S/tailchain c2"$'\n'* ]]
}

@test "mt-symbolize: a corrupt .eh_frame is a warning with its byte offset, earlier FDEs still name code" {
	local off rec len i
	cp "$S/tailchain-s" "$BATS_TEST_TMPDIR/bad"
	off=$(readelf -SW "$S/tailchain-s" | awk '$2 == ".eh_frame" { print $5 }')
	[ -n "$off" ]
	# Walk to the last record before the terminator; make its length
	# run past the section.
	rec=0 prev=0
	while :; do
		len=$(od -An -tu4 -j $((0x$off + rec)) -N4 "$S/tailchain-s" | tr -d ' ')
		[ "$len" -eq 0 ] && break
		prev=$rec rec=$((rec + 4 + len))
	done
	[ "$prev" -gt 0 ]
	printf '\xf0\xff\xff\x7f' | dd of="$BATS_TEST_TMPDIR/bad" bs=1 \
	    seek=$((0x$off + prev)) conv=notrunc status=none
	# gcc writes main's FDE last (after c1's): check that order first.
	i=$(readelf --debug-dump=frames "$S/tailchain-s" |
	    awk '/ FDE / { sub(/pc=/, "", $6); split($6, r, "[.][.]"); last = r[1] }
	    END { print last }')
	[ $((0x$(start main))) -eq $((0x$i)) ]
	stream "$BATS_TEST_TMPDIR/bad" $((0x$(start c1))) $((0x$(start main))) \
	    > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize -o "$BATS_TEST_TMPDIR/out.ev" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "${lines[0]}" = "mt-symbolize: warning: '$BATS_TEST_TMPDIR/bad': truncated input at byte $prev of .eh_frame; no function ranges from its later records" ]
	i=$(printf '%x' $((BASE + 0x$(start c1))))
	grep -q "^fn 1 0x$i .*unknown%20fn%200x$i%20" "$BATS_TEST_TMPDIR/out.ev"
	i=$(printf '%x' $((BASE + 0x$(start main))))
	grep -q "^fn 2 0x$i .*unknown%20@%200x$i%20" "$BATS_TEST_TMPDIR/out.ev"
}

# A copy of the stripped program without section headers, as a memory
# image has none: e_shoff, e_shnum and e_shstrndx zeroed (NAME), or the
# file cut where they begin (NAME-cut).  Only PT_GNU_EH_FRAME leads to
# the .eh_frame then.
noshdr() {
	local shoff
	cp "$S/tailchain-s" "$S/$1"
	dd if=/dev/zero of="$S/$1" bs=1 seek=40 count=8 conv=notrunc status=none
	dd if=/dev/zero of="$S/$1" bs=1 seek=60 count=4 conv=notrunc status=none
	shoff=$(readelf -hW "$S/tailchain-s" | awk '/Start of section headers/ { print $5 }')
	[ "$shoff" -gt 0 ]
	head -c "$shoff" "$S/tailchain-s" > "$S/$1-cut"
	! readelf -SW "$S/$1" 2>/dev/null | grep -q eh_frame
}

@test "mt-symbolize: without section headers, every FDE readelf lists names its code through PT_GNU_EH_FRAME" {
	local a b addrs=() want=()
	noshdr tailchain-ns
	readelf -lW "$S/tailchain-ns" | grep -q GNU_EH_FRAME
	# readelf reads the FDEs of the file with its sections.
	while read -r a b; do
		addrs+=($((0x$a)) $((0x$b - 1)))
		want+=("$(printf '0x%x 0x%x' $((BASE + 0x$a)) $((BASE + 0x$a)))"
		    "$(printf '0x%x 0x%x' $((BASE + 0x$b - 1)) $((BASE + 0x$a)))")
	done < <(readelf --debug-dump=frames "$S/tailchain-s" |
	    awk '/ FDE / { sub(/pc=/, "", $6); split($6, r, "[.][.]"); print r[1], r[2] }')
	[ "${#addrs[@]}" -ge 8 ]
	stream "$S/tailchain-ns" "${addrs[@]}" > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize -o "$BATS_TEST_TMPDIR/out.ev" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# Each address's loc, with the START of its fn: the FDE's start.
	awk '$1 == "fn" { start[$2] = $3; name[$2] = $5 }
	    $1 == "loc" { split($4, f, ":"); print $3, start[f[1]]
	        if (name[f[1]] !~ /^\[unknown%20fn%20/) print "bad name", name[f[1]] }' \
	    "$BATS_TEST_TMPDIR/out.ev" > "$BATS_TEST_TMPDIR/got"
	printf '%s\n' "${want[@]}" | diff -u - "$BATS_TEST_TMPDIR/got"
}

@test "mt-symbolize: a stripped program cut before its section headers names the nm functions by FDE, with one warning" {
	local f s z addrs=()
	noshdr tailchain-ns
	for f in c1 c2 c3 main; do
		s=$(start "$f") z=$(size "$f")
		[ -n "$s" ] && [ -n "$z" ]
		addrs+=($((0x$s)) $((0x$s + 0x$z - 1)) $((0x$s + 0x$z / 2)))
	done
	stream "$S/tailchain-ns-cut" "${addrs[@]}" > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize -o "$BATS_TEST_TMPDIR/out.ev" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "mt-symbolize: warning: '$S/tailchain-ns-cut': truncated: section headers end at byte "* ]]
	named_by_fde_start tailchain-ns-cut
}
