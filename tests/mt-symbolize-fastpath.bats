#!/usr/bin/env bats
# mt-symbolize's two paths give the same bytes: canonical event lines are
# copied through with their @ fields appended (the fast path, with a
# direct-mapped address cache), every other line is parsed and written
# again by common/events.  A trailing space on every line forces the
# second path, so the same stream through both must give the same output.
# Also: mappings replaced mid-stream or at a time, input read in pieces,
# lines longer than the read buffer, a last line without '\n'.

LIBC=/usr/lib/x86_64-linux-gnu/libc.so.6
LIBM=/usr/lib/x86_64-linux-gnu/libm.so.6

# A canonical stream (see the script): gen SEED N D.
gen() {
	"$MT_ROOT/tests/data/symbolize/gen-events" "$@"
}

setup() {
	D="$BATS_TEST_TMPDIR"
}

# both_paths: $D/s.ev symbolized as it is (fast path) and with a space
# after every line (the other path) gives the same $D/fast.out
both_paths() {
	sed 's/$/ /' "$D/s.ev" > "$D/slow.ev"
	run mt-symbolize -o "$D/fast.out" "$D/s.ev"
	[ "$status" -eq 0 ]
	run mt-symbolize -o "$D/slow.out" "$D/slow.ev"
	[ "$status" -eq 0 ]
	cmp "$D/fast.out" "$D/slow.out"
}

@test "mt-symbolize: copied and reformatted lines give the same output, cache hits and misses alike" {
	# 12,000 distinct addresses (more than the 8,192 cache entries)
	# in 60,000 events: hits, misses and evictions.
	gen 1 60000 12000 > "$D/s.ev"
	both_paths
	# Not vacuous: thousands of loc records and @ fields on the events.
	[ "$(awk '$1 == "loc"' "$D/fast.out" | wc -l)" -gt 10000 ]
	[ "$(awk '$1 == "call" && NF == 7 && $6 ~ /^@[1-9]/' "$D/fast.out" | wc -l)" -gt 1000 ]
	# Lines of both kinds mixed: every other line slow.
	awk 'NR % 2 { print; next } { print $0 " " }' "$D/s.ev" > "$D/mixed.ev"
	run mt-symbolize -o "$D/mixed.out" "$D/mixed.ev"
	[ "$status" -eq 0 ]
	cmp "$D/fast.out" "$D/mixed.out"
}

@test "mt-symbolize: non-canonical spellings of an event read as the canonical one" {
	{
		gen 2 0 1
		printf 'call 10 1001 0x7f0000027000 0x7f0000028000\n'
	} > "$D/canon.ev"
	{
		gen 2 0 1
		printf 'call  10\t1001 0x7F0000027000 0x00007f0000028000 @9 @9 extra\r\n'
	} > "$D/odd.ev"
	run mt-symbolize -o "$D/canon.out" "$D/canon.ev"
	[ "$status" -eq 0 ]
	run mt-symbolize -o "$D/odd.out" "$D/odd.ev"
	[ "$status" -eq 0 ]
	cmp "$D/canon.out" "$D/odd.out"
	[[ "$(tail -n 1 "$D/canon.out")" == "call 10 1001 0x7f0000027000 0x7f0000028000 @"[1-9]*" @"[1-9]* ]]
}

@test "mt-symbolize: a mapping replaced mid-stream gives the address a new loc on both paths" {
	{
		gen 3 0 1
		printf 'call 10 1001 0x7f0000030000 0x7f0000031000\n'
		printf 'call 11 1001 0x7f0000030000 0x7f0000031000\n'
		printf 'mod 1000 0x7f0000000000 0x7f0000100000 0 - %s\n' "$LIBM"
		printf 'call 12 1001 0x7f0000030000 0x7f0000031000\n'
	} > "$D/s.ev"
	both_paths
	run awk '$1 == "call" { print $6, $7 }' "$D/fast.out"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = "${lines[1]}" ]
	[ "${lines[1]}" != "${lines[2]}" ]
}

@test "mt-symbolize: a mod with a time names each event after the mapping of its time, on both paths" {
	{
		printf 'mt-events 1.2\nproc 1000 t t\nthread 1000 1001 t\n'
		printf 'thread 1000 1002 u\n'
		printf 'mod 1000 0x7f0000000000 0x7f0000100000 0 - %s\n' "$LIBC"
		# libm loaded at time 500 where libc was
		printf 'mod 1000 0x7f0000000000 0x7f0000100000 0 - %s 500\n' \
		    "$LIBM"
		printf 'call 100 1001 0x7f0000030000 0x7f0000031000\n'
		printf 'call 600 1001 0x7f0000030000 0x7f0000031000\n'
		printf 'call 499 1002 0x7f0000030000 0x7f0000031000\n'
		printf 'call 500 1002 0x7f0000030000 0x7f0000031000\n'
	} > "$D/s.ev"
	both_paths
	# the DSO of each call's target
	run awk '$1 == "fn" { d[$2] = $4 }
	    $1 == "loc" { split($4, f, ":"); l[$2] = d[f[1]] }
	    $1 == "call" { print $2, l[substr($7, 2)] }' "$D/fast.out"
	[ "${#lines[@]}" -eq 4 ]
	[ "${lines[0]}" = "100 $LIBC" ]
	[ "${lines[1]}" = "600 $LIBM" ]
	[ "${lines[2]}" = "499 $LIBC" ]
	[ "${lines[3]}" = "500 $LIBM" ]
}

@test "mt-symbolize: input arriving in pieces, a line split between two reads" {
	gen 4 3000 500 > "$D/s.ev"
	run mt-symbolize -o "$D/whole.out" "$D/s.ev"
	[ "$status" -eq 0 ]
	# Cut the stream in the middle of an address and in the middle of a
	# keyword; the pauses make each piece a read of its own.
	head -c 40000 "$D/s.ev" > "$D/p1"
	tail -c +40001 "$D/s.ev" | head -c 30000 > "$D/p2"
	tail -c +70001 "$D/s.ev" > "$D/p3"
	{ cat "$D/p1"; sleep 0.3; cat "$D/p2"; sleep 0.3; cat "$D/p3"; } |
		mt-symbolize -o "$D/pieces.out"
	cmp "$D/whole.out" "$D/pieces.out"
}

@test "mt-symbolize: a last line without newline, on either path" {
	gen 5 20 10 > "$D/s.ev"
	printf 'call 99 1001 0x7f0000030000 0x7f0000031000' > "$D/tail"
	cat "$D/s.ev" "$D/tail" > "$D/nonl.ev"
	{ cat "$D/s.ev" "$D/tail"; echo; } > "$D/nl.ev"
	run mt-symbolize -o "$D/nonl.out" "$D/nonl.ev"
	[ "$status" -eq 0 ]
	run mt-symbolize -o "$D/nl.out" "$D/nl.ev"
	[ "$status" -eq 0 ]
	cmp "$D/nl.out" "$D/nonl.out"
	printf 'end 100 1001' > "$D/tail"
	cat "$D/s.ev" "$D/tail" > "$D/nonl.ev"
	run mt-symbolize -o "$D/nonl.out" "$D/nonl.ev"
	[ "$status" -eq 0 ]
	[ "$(tail -c 13 "$D/nonl.out")" = "end 100 1001" ]
	[ "$(tail -c 1 "$D/nonl.out" | od -An -c | tr -d ' ')" = '\n' ]
	# The slow path: a trailing space, no newline.
	printf 'end 100 1001 ' > "$D/tail"
	cat "$D/s.ev" "$D/tail" > "$D/nonl2.ev"
	run mt-symbolize -o "$D/nonl2.out" "$D/nonl2.ev"
	[ "$status" -eq 0 ]
	cmp "$D/nonl.out" "$D/nonl2.out"
}

@test "mt-symbolize: lines longer than the read buffer pass through" {
	local big
	big=$(head -c 700000 /dev/zero | tr '\0' 'a')
	{
		gen 6 10 5
		printf '# %s\n' "$big"
		printf 'proc 2000 long %s\n' "$big"
		printf 'call 9000000 1001 0x7f0000030000 0x7f0000031000 %s\n' "$big"
		printf 'call 9000001 1001 0x7f0000030000 0x7f0000031000\n'
	} > "$D/s.ev"
	run mt-symbolize -o "$D/out" "$D/s.ev"
	[ "$status" -eq 0 ]
	# The comment is dropped, the proc record kept whole, the trailing
	# field of the first call dropped; both calls get the same locs.
	[ "$(awk '$1 == "proc" && $2 == 2000 { print length($4) }' "$D/out")" -eq 700000 ]
	run awk '/^#/ { print "comment" } $1 == "call" && $2 >= 9000000 { print $6, $7, NF }' "$D/out"
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "${lines[1]}" ]
	[[ "${lines[0]}" == "@"[1-9]*" @"[1-9]*" 7" ]]
}
