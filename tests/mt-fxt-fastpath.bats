#!/usr/bin/env bats
# mt-fxt's fast path for plain event lines (mt-fxt/fastev.c) and the
# full reader (common/events.c) give the same trace: lines in other
# spellings (tabs, CRLF, leading zeros, 0X, comments) take the full
# reader; input arriving in small pieces, lines across the reader's
# 256 KiB blocks, very long lines, and the line numbers of errors after
# fast-path lines.

setup_file() {
	T="$BATS_FILE_TMPDIR"
	"$MT_ROOT/tests/helpers/gen-events" --events 30000 --functions 80 \
		--threads 3 --max-depth 20 > "$T/s.events"
	mt-fxt -l 0 -o "$T/ref.fxt" "$T/s.events"
}

setup() {
	T="$BATS_FILE_TMPDIR"
}

@test "mt-fxt: event lines in other spellings give the same trace" {
	# every 3rd event line with tabs, every 5th with CRLF, every 7th
	# with a zero-padded time and 0X, comments in between
	awk 'NR > 1 && $1 ~ /^(call|ret|end)$/ {
		n++
		if (n % 7 == 0) { $2 = "000" $2; sub(/ 0x/, " 0X") }
		if (n % 3 == 0) gsub(/ /, "\t")
		if (n % 5 == 0) $0 = $0 "\r"
		if (n % 11 == 0) print "# comment " n
	} { print }' "$T/s.events" > "$T/var.events"
	run cmp -s "$T/s.events" "$T/var.events"
	[ "$status" -eq 1 ]
	run mt-fxt -l 0 -o "$T/var.fxt" "$T/var.events"
	[ "$status" -eq 0 ]
	cmp "$T/ref.fxt" "$T/var.fxt"
}

@test "mt-fxt: input from a pipe in 4093-byte pieces gives the same trace" {
	python3 -c 'import sys, time
d = open(sys.argv[1], "rb").read()
for i in range(0, len(d), 4093):
    sys.stdout.buffer.write(d[i:i + 4093])
    sys.stdout.buffer.flush()' "$T/s.events" | mt-fxt -l 0 -o "$T/pipe.fxt"
	cmp "$T/ref.fxt" "$T/pipe.fxt"
}

@test "mt-fxt: a line across a 256 KiB block and a 600 KiB line give the same trace" {
	# a comment that makes an event line straddle byte 262144, and a
	# 600 KiB comment later (the reader's buffer grows for it)
	python3 -c 'import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
out, size, padded = [], 0, False
for i, l in enumerate(lines):
    if i >= 100 and not padded and l.startswith((b"call ", b"ret ")):
        pad = 262144 - size - 20
        out.append(b"#" + b"x" * (pad - 2)); size += pad
        padded = True
    if i == 20000:
        out.append(b"#" + b"y" * 600000)
    out.append(l); size += len(l) + 1
sys.stdout.buffer.write(b"\n".join(out))' "$T/s.events" > "$T/long.events"
	python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
s = d.rfind(b"\n", 0, 262144) + 1
e = d.find(b"\n", 262144)
l = d[s:e].split(b" ")[0]
sys.exit(0 if s < 262144 < e and l in (b"call", b"ret", b"end") else 1)' "$T/long.events"
	run mt-fxt -l 0 -o "$T/long.fxt" "$T/long.events"
	[ "$status" -eq 0 ]
	cmp "$T/ref.fxt" "$T/long.fxt"
}

@test "mt-fxt: a last line without a newline is read" {
	head -c -1 "$T/s.events" > "$T/nonl.events"
	[ "$(tail -c 1 "$T/nonl.events" | od -An -c | tr -d ' ')" != '\n' ]
	run mt-fxt -l 0 -o "$T/nonl.fxt" "$T/nonl.events"
	[ "$status" -eq 0 ]
	cmp "$T/ref.fxt" "$T/nonl.fxt"
}

@test "mt-fxt: an error after fast-path lines names the right line" {
	n=$(wc -l < "$T/s.events")
	{ cat "$T/s.events"; echo "call 1 1000 0x1 0xzz @1"; } > "$T/bad.events"
	run mt-fxt -o "$T/bad.fxt" "$T/bad.events"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: $T/bad.events: line $((n + 1)): field 4: bad address '0xzz'" ]
	{ cat "$T/s.events"; echo "ret 1 1000 0x1 0x2 @1 @2 @3"; } > "$T/bad2.events"
	run mt-fxt -o "$T/bad2.fxt" "$T/bad2.events"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-fxt: $T/bad2.events: line $((n + 1)): field 7: unexpected loc field '@3'" ]
}
