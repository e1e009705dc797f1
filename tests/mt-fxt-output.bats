#!/usr/bin/env bats
# mt-fxt output handling: gzip by name or --level, plain FXT, standard
# output (never a terminal), temporary file renamed only when complete,
# errors with line and field, exit statuses 0/1/2.

D="$MT_ROOT/tests/data/fxt"
CHK="$MT_ROOT/tests/helpers/fxt-check"

magic() {
	od -An -tx1 -N8 "$1" | tr -d ' \n'
}

# The gzip members of file $1, read by Python's zlib (one decompressor
# per member, RFC 1952): a line per member with its uncompressed size
# and its XFL header byte.  Fails on a bad or truncated member.
gz_members() {
	python3 -c 'import sys, zlib
data = open(sys.argv[1], "rb").read()
while data:
    d = zlib.decompressobj(31)
    out = d.decompress(data)
    if not d.eof:
        sys.exit("truncated member")
    print(len(out), data[8])
    data = d.unused_data' "$1"
}

# The OS byte of gzip file $1's header (RFC 1952: 3 Unix, 255 unknown):
# zlib writes 3 here, libdeflate and ISA-L 255, which tells zlib's files
# from the others.
gz_os() {
	od -An -tu1 -j9 -N1 "$1" | tr -d ' '
}

# The gzip stream zlib writes at level $2 for the bytes of file $1.
zlib_gz() {
	python3 -c 'import sys, zlib
c = zlib.compressobj(int(sys.argv[2]), zlib.DEFLATED, 31)
sys.stdout.buffer.write(c.compress(open(sys.argv[1], "rb").read()) + c.flush())' "$1" "$2"
}

@test "mt-fxt: -o x.fxt.gz writes one gzip member holding mt-fxt's plain FXT (small: libdeflate, ISA-L not loaded)" {
	run mt-fxt -o "$BATS_TEST_TMPDIR/t.fxt.gz" "$D/basic.events"
	[ "$status" -eq 0 ]
	[ "$(magic "$BATS_TEST_TMPDIR/t.fxt.gz" | cut -c1-4)" = 1f8b ]
	gzip -t "$BATS_TEST_TMPDIR/t.fxt.gz"
	gzip -dc "$BATS_TEST_TMPDIR/t.fxt.gz" > "$BATS_TEST_TMPDIR/t.fxt"
	[ "$(magic "$BATS_TEST_TMPDIR/t.fxt")" = 1000044678541600 ]
	mt-fxt -l 0 -o "$BATS_TEST_TMPDIR/p.fxt" "$D/basic.events"
	cmp "$BATS_TEST_TMPDIR/t.fxt" "$BATS_TEST_TMPDIR/p.fxt"
	run "$CHK" "$BATS_TEST_TMPDIR/t.fxt.gz"
	[ "$status" -eq 0 ]
	# one member, compressed, XFL 4: libdeflate's fastest level, 1
	run gz_members "$BATS_TEST_TMPDIR/t.fxt.gz"
	[ "$status" -eq 0 ]
	[ "$output" = "$(stat -c %s "$BATS_TEST_TMPDIR/p.fxt") 4" ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/t.fxt.gz")" -lt "$(stat -c %s "$BATS_TEST_TMPDIR/p.fxt")" ]
	[ "$(gz_os "$BATS_TEST_TMPDIR/t.fxt.gz")" = 255 ]
	# the dynamic loader's own log: no ISA-L for an output this small
	LD_DEBUG=files mt-fxt -o "$BATS_TEST_TMPDIR/t2.fxt.gz" "$D/basic.events" 2> "$BATS_TEST_TMPDIR/ld.log"
	cmp "$BATS_TEST_TMPDIR/t.fxt.gz" "$BATS_TEST_TMPDIR/t2.fxt.gz"
	grep -q 'file=libc.so' "$BATS_TEST_TMPDIR/ld.log"
	[ "$(grep -c libisal "$BATS_TEST_TMPDIR/ld.log")" = 0 ]
}

@test "mt-fxt: -l 1, 4, 6 and 9 on a small output: one member each, the same FXT" {
	mt-fxt -l 0 -o "$BATS_TEST_TMPDIR/p.fxt" "$D/basic.events"
	size=$(stat -c %s "$BATS_TEST_TMPDIR/p.fxt")
	# RFC 1952's XFL: 4 for the fastest level, 2 for the slowest ones
	for lx in 1:4 4:0 6:0 9:2; do
		l=${lx%:*}
		run mt-fxt -l $l -o "$BATS_TEST_TMPDIR/l$l.fxt.gz" "$D/basic.events"
		[ "$status" -eq 0 ]
		gzip -t "$BATS_TEST_TMPDIR/l$l.fxt.gz"
		gzip -dc "$BATS_TEST_TMPDIR/l$l.fxt.gz" | cmp - "$BATS_TEST_TMPDIR/p.fxt"
		run gz_members "$BATS_TEST_TMPDIR/l$l.fxt.gz"
		[ "$output" = "$size ${lx#*:}" ]
	done
}

@test "mt-fxt: -l 1, 4, 6 and 9 on an output over 256 KiB write zlib's streams of those levels" {
	"$MT_ROOT/tests/helpers/gen-events" --events 40000 --functions 300 --threads 3 > "$BATS_TEST_TMPDIR/s.events"
	mt-fxt -l 0 -o "$BATS_TEST_TMPDIR/p.fxt" "$BATS_TEST_TMPDIR/s.events"
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/p.fxt")" -gt $((256 << 10)) ]
	for l in 1 4 6 9; do
		run mt-fxt -l $l -o "$BATS_TEST_TMPDIR/l$l.fxt.gz" "$BATS_TEST_TMPDIR/s.events"
		[ "$status" -eq 0 ]
		zlib_gz "$BATS_TEST_TMPDIR/p.fxt" $l > "$BATS_TEST_TMPDIR/z$l.gz"
		cmp "$BATS_TEST_TMPDIR/l$l.fxt.gz" "$BATS_TEST_TMPDIR/z$l.gz"
	done
}

@test "mt-fxt: a trace over 256 KiB at the default level is one gzip member, ISA-L's, not zlib's" {
	"$MT_ROOT/tests/helpers/gen-events" --events 40000 --functions 300 --threads 3 > "$BATS_TEST_TMPDIR/s.events"
	mt-fxt -l 0 -o "$BATS_TEST_TMPDIR/p.fxt" "$BATS_TEST_TMPDIR/s.events"
	size=$(stat -c %s "$BATS_TEST_TMPDIR/p.fxt")
	[ "$size" -gt $((256 << 10)) ]
	run mt-fxt -o "$BATS_TEST_TMPDIR/t.fxt.gz" "$BATS_TEST_TMPDIR/s.events"
	[ "$status" -eq 0 ]
	gzip -t "$BATS_TEST_TMPDIR/t.fxt.gz"
	zcat "$BATS_TEST_TMPDIR/t.fxt.gz" | cmp - "$BATS_TEST_TMPDIR/p.fxt"
	run "$CHK" "$BATS_TEST_TMPDIR/t.fxt.gz"
	[ "$status" -eq 0 ]
	run gz_members "$BATS_TEST_TMPDIR/t.fxt.gz"
	[ "$status" -eq 0 ]
	[ "$output" = "$size 0" ]
	# ISA-L's header (zlib, mt's writer before session 9, writes 3),
	# ISA-L loaded (the dynamic loader's log)
	[ "$(gz_os "$BATS_TEST_TMPDIR/t.fxt.gz")" = 255 ]
	LD_DEBUG=files mt-fxt -o "$BATS_TEST_TMPDIR/t2.fxt.gz" "$BATS_TEST_TMPDIR/s.events" 2> "$BATS_TEST_TMPDIR/ld.log"
	cmp "$BATS_TEST_TMPDIR/t.fxt.gz" "$BATS_TEST_TMPDIR/t2.fxt.gz"
	grep -q 'file=libisal.so.2 .*dynamically loaded by' "$BATS_TEST_TMPDIR/ld.log"
	# compressed: smaller than a third of the FXT
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/t.fxt.gz")" -lt $((size / 3)) ]
	# the same bytes on standard output, and with -l 2 said
	mt-fxt < "$BATS_TEST_TMPDIR/s.events" | cmp - "$BATS_TEST_TMPDIR/t.fxt.gz"
	mt-fxt -l 2 -o - "$BATS_TEST_TMPDIR/s.events" | cmp - "$BATS_TEST_TMPDIR/t.fxt.gz"
}

@test "mt-fxt: where ISA-L cannot be loaded the default level goes through zlib, still one member" {
	"$MT_ROOT/tests/helpers/gen-events" --events 40000 --functions 300 --threads 3 > "$BATS_TEST_TMPDIR/s.events"
	mt-fxt -l 0 -o "$BATS_TEST_TMPDIR/p.fxt" "$BATS_TEST_TMPDIR/s.events"
	size=$(stat -c %s "$BATS_TEST_TMPDIR/p.fxt")
	[ "$size" -gt $((256 << 10)) ]
	# a libisal.so.2 found first that has no isal_deflate (zlib's own
	# shared object under that name), as on a host whose ISA-L is
	# missing or another build
	lib=$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ { print $NF; exit }')
	[ -n "$lib" ] || skip "no shared libz.so.1 in ldconfig's cache"
	mkdir "$BATS_TEST_TMPDIR/lib"
	cp "$lib" "$BATS_TEST_TMPDIR/lib/libisal.so.2"
	LD_LIBRARY_PATH="$BATS_TEST_TMPDIR/lib" LD_DEBUG=files \
		mt-fxt -o "$BATS_TEST_TMPDIR/t.fxt.gz" "$BATS_TEST_TMPDIR/s.events" 2> "$BATS_TEST_TMPDIR/ld.log"
	# the stand-in was loaded (and had nothing to give)
	grep -q 'file=libisal.so.2 .*dynamically loaded by' "$BATS_TEST_TMPDIR/ld.log"
	grep -q "calling init: $BATS_TEST_TMPDIR/lib/libisal.so.2" "$BATS_TEST_TMPDIR/ld.log"
	gzip -t "$BATS_TEST_TMPDIR/t.fxt.gz"
	zcat "$BATS_TEST_TMPDIR/t.fxt.gz" | cmp - "$BATS_TEST_TMPDIR/p.fxt"
	run gz_members "$BATS_TEST_TMPDIR/t.fxt.gz"
	[ "$status" -eq 0 ]
	[ "$output" = "$size 0" ]
	# zlib's header, and zlib's level 2 bytes
	[ "$(gz_os "$BATS_TEST_TMPDIR/t.fxt.gz")" = 3 ]
	zlib_gz "$BATS_TEST_TMPDIR/p.fxt" 2 | cmp - "$BATS_TEST_TMPDIR/t.fxt.gz"
}

@test "mt-fxt: an empty output compressed is still one gzip member" {
	printf 'mt-events 1.0\n' > "$BATS_TEST_TMPDIR/e.events"
	# folded stacks of no events: no bytes
	run mt-fxt -F folded -l 2 -o "$BATS_TEST_TMPDIR/e.gz" "$BATS_TEST_TMPDIR/e.events"
	[ "$status" -eq 0 ]
	gzip -t "$BATS_TEST_TMPDIR/e.gz"
	[ "$(zcat "$BATS_TEST_TMPDIR/e.gz" | wc -c)" -eq 0 ]
	# (XFL 4: a small output at level 2 is libdeflate's level 1)
	run gz_members "$BATS_TEST_TMPDIR/e.gz"
	[ "$output" = "0 4" ]
}

@test "mt-fxt: -o x.fxt writes plain FXT, magic first" {
	run mt-fxt -o "$BATS_TEST_TMPDIR/t.fxt" "$D/basic.events"
	[ "$status" -eq 0 ]
	[ "$(magic "$BATS_TEST_TMPDIR/t.fxt")" = 1000044678541600 ]
}

@test "mt-fxt: --level picks the gzip level, 0 is plain" {
	run mt-fxt --level 1 -o "$BATS_TEST_TMPDIR/a.fxt" "$D/basic.events"
	[ "$status" -eq 0 ]
	[ "$(magic "$BATS_TEST_TMPDIR/a.fxt" | cut -c1-4)" = 1f8b ]
	run mt-fxt -l 0 -o "$BATS_TEST_TMPDIR/b.fxt.gz" "$D/basic.events"
	[ "$status" -eq 0 ]
	[ "$(magic "$BATS_TEST_TMPDIR/b.fxt.gz")" = 1000044678541600 ]
	run mt-fxt --level 10 "$D/basic.events"
	[ "$status" -eq 2 ]
}

@test "mt-fxt: FXT on standard output is gzip; stdin is read without operand" {
	mt-fxt < "$D/basic.events" > "$BATS_TEST_TMPDIR/o.gz"
	[ "$(magic "$BATS_TEST_TMPDIR/o.gz" | cut -c1-4)" = 1f8b ]
	run "$CHK" "$BATS_TEST_TMPDIR/o.gz"
	[ "$status" -eq 0 ]
}

@test "mt-fxt: refuses to write FXT to a terminal (exit 2)" {
	run script -qec "mt-fxt -o - '$D/basic.events'" /dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"refusing to write binary data to a terminal"* ]]
}

@test "mt-fxt: a malformed line gives file, line and field, exit 1, no output left" {
	printf 'mt-events 1.0\nthread 1 1 a\ncall 10 1 0x12g 0x20\n' > "$BATS_TEST_TMPDIR/bad.events"
	run mt-fxt -o "$BATS_TEST_TMPDIR/bad.fxt" "$BATS_TEST_TMPDIR/bad.events"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: $BATS_TEST_TMPDIR/bad.events: line 3: field 3: bad address '0x12g'" ]
	run ls -A "$BATS_TEST_TMPDIR"
	[ "$output" = "bad.events" ]
}

@test "mt-fxt: a loc naming an undefined fn is an error with its line" {
	printf 'mt-events 1.0\nfn 1 0x10 a f\nloc 1 0x10 2:0:0\n' > "$BATS_TEST_TMPDIR/l.events"
	run mt-fxt -o "$BATS_TEST_TMPDIR/l.fxt" "$BATS_TEST_TMPDIR/l.events"
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-fxt: $BATS_TEST_TMPDIR/l.events: line 3: "* ]]
}

@test "mt-fxt: not an event stream, missing input: exit 1" {
	run mt-fxt -o "$BATS_TEST_TMPDIR/x.fxt" "$D/basic.expected"
	[ "$status" -eq 1 ]
	[[ "$output" == *"line 1"* ]]
	run mt-fxt -o "$BATS_TEST_TMPDIR/x.fxt" "$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-fxt: cannot open"* ]]
}

@test "mt-fxt: a directory as the input is one error with the byte offset, exit 1" {
	mkdir "$BATS_TEST_TMPDIR/dir"
	run mt-fxt -o "$BATS_TEST_TMPDIR/x.fxt" "$BATS_TEST_TMPDIR/dir"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: $BATS_TEST_TMPDIR/dir: read error at offset 0: Is a directory" ]
	run mt-fxt -o "$BATS_TEST_TMPDIR/x.fxt" < "$BATS_TEST_TMPDIR/dir"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: <stdin>: read error at offset 0: Is a directory" ]
	[ ! -e "$BATS_TEST_TMPDIR/x.fxt" ]
}

@test "mt-fxt: usage errors exit 2, -h exits 0" {
	run mt-fxt --no-such-option
	[ "$status" -eq 2 ]
	run mt-fxt -F xml "$D/basic.events"
	[ "$status" -eq 2 ]
	run mt-fxt --min-duration 5parsecs "$D/basic.events"
	[ "$status" -eq 2 ]
	# --function draws a histogram in the summary only.
	run mt-fxt -F json --function f "$D/basic.events"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "mt-fxt: --function goes with -F summary" ]
	# A pair or a list is named whole; no empty element of a list.
	run mt-fxt --time 5,1 "$D/basic.events"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "mt-fxt: bad --time argument '5,1'" ]
	run mt-fxt --around-trigger 1,2x "$D/basic.events"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "mt-fxt: bad --around-trigger argument '1,2x'" ]
	for l in 1,,2 1, ,1 ''; do
		run mt-fxt --tid "$l" "$D/basic.events"
		[ "$status" -eq 2 ]
		[ "${lines[0]}" = "mt-fxt: bad --tid argument '$l'" ]
	done
	run mt-fxt -o "$D/basic.events" "$D/basic.events"
	[ "$status" -eq 2 ]
	run mt-fxt -h
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "usage: mt-fxt "* ]]
}

@test "mt-fxt: an unwritable output directory is an error, exit 1" {
	run mt-fxt -o /nonexistent-dir/t.fxt "$D/basic.events"
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-fxt: cannot create"* ]]
}

@test "mt-fxt: a directory as -o is one error saying so, exit 1, nothing written into it" {
	mkdir -p "$BATS_TEST_TMPDIR/out"
	for f in fxt json; do
		run mt-fxt -F "$f" -o "$BATS_TEST_TMPDIR/out" "$D/basic.events"
		[ "$status" -eq 1 ]
		[ "$output" = "mt-fxt: '$BATS_TEST_TMPDIR/out' is a directory (-o names the output file)" ]
	done
	run ls -A "$BATS_TEST_TMPDIR/out"
	[ -z "$output" ]
}

@test "mt-fxt: --max-size with gzip: each file is gzip of the plain split's file" {
	"$MT_ROOT/tests/helpers/gen-events" --events 20000 --functions 50 --threads 3 > "$BATS_TEST_TMPDIR/s.events"
	mkdir "$BATS_TEST_TMPDIR/gz" "$BATS_TEST_TMPDIR/plain"
	run mt-fxt --max-size 200k -o "$BATS_TEST_TMPDIR/gz/t.fxt.gz" "$BATS_TEST_TMPDIR/s.events"
	[ "$status" -eq 0 ]
	[[ "$output" == "mt-fxt: the trace was split into "*" files (--max-size)" ]]
	mt-fxt -q --max-size 200k -o "$BATS_TEST_TMPDIR/plain/t.fxt" "$BATS_TEST_TMPDIR/s.events"
	n=0
	for f in "$BATS_TEST_TMPDIR"/plain/t.*.fxt; do
		g=$BATS_TEST_TMPDIR/gz/$(basename "$f").gz
		gzip -t "$g"
		zcat "$g" | cmp - "$f"
		run gz_members "$g"
		[ "$output" = "$(stat -c %s "$f") 0" ]
		n=$((n + 1))
	done
	[ "$n" -ge 2 ]
	[ "$(ls "$BATS_TEST_TMPDIR/gz" | wc -l)" -eq "$n" ]
}
