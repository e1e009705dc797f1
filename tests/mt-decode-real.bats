#!/usr/bin/env bats
# mt-decode on the two real Intel PT traces in $MT_SHARED/testdata/real-pt
# (recorded by hardware; never copied into the repository): imported with
# mt-capture import-raw, they must decode to the instruction and block counts
# the plain libipt loop reports (README there), with no error, and the calls
# and returns of the event stream must pair up.

load helpers/real-pt

# Calls push their source; a return must land 1..15 bytes after the call on
# top; `enable` at the return address of the top call pops it (the callee
# ran outside the IP filter), `enable` elsewhere (longjmp, a callback) and
# errors or overflows forget the stack.  Prints "paired N mismatched M".
PAIRS='
function hex(s,   i, v) { v = 0; s = tolower(substr(s, 3));
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v }
$1 == "call" { st[++n] = hex($4); next }
$1 == "enable" { d = n > 0 ? hex($4) - st[n] : 0
	if (d > 0 && d <= 15) n--; else n = 0; next }
$1 == "ret" { if (n == 0) next; d = hex($5) - st[n]; n--
	if (d > 0 && d <= 15) ok++; else bad++; next }
$1 == "error" || $1 == "overflow" { n = 0 }
END { printf "paired %d mismatched %d\n", ok, bad }'

setup_file() {
	[ -f "$RP/unzip/trace" ] || return 0
	T="$BATS_FILE_TMPDIR"
	# --pages joins the pages at consecutive addresses into one blob;
	# the reference counts were made with every page a section of its own
	real_pt_snap unzip "$T/unzip.snap"
	real_pt_snap mruby "$T/mruby.snap"
	real_pt_page_snap unzip "$T/unzip-pages.snap"
	real_pt_page_snap mruby "$T/mruby-pages.snap"
}

setup() {
	[ -f "$RP/unzip/trace" ] || skip "needs the real traces in $RP"
	T="$BATS_FILE_TMPDIR"
}

# stat KEY: the value of "KEY: value" in $output
stat() {
	local l
	for l in "${lines[@]}"; do
		case "$l" in "$1: "*) echo "${l#*: }"; return 0 ;; esac
	done
	echo "missing"
}

@test "mt-decode: unzip, a section per page, decodes to 149576 instructions, 46478 blocks, 0 errors" {
	run mt-decode --no-cache --stats -o "$T/unzip-pages.ev" "$T/unzip-pages.snap"
	[ "$status" -eq 0 ]
	[ "$(stat instructions)" = 149576 ]
	[ "$(stat blocks)" = 46478 ]
	[ "$(stat errors)" = 0 ]
	[ "$(stat overflows)" = 0 ]
	[ "$(stat bytes-before-sync)" = 0 ]
	[ "$(stat walk-mismatches)" = 0 ]
}

@test "mt-decode: mruby, a section per page, decodes to 6334131 instructions, 433487 blocks, 0 errors, 1 overflow" {
	run mt-decode --no-cache --stats -o "$T/mruby-pages.ev" "$T/mruby-pages.snap"
	[ "$status" -eq 0 ]
	[ "$(stat instructions)" = 6334131 ]
	[ "$(stat blocks)" = 433487 ]
	[ "$(stat errors)" = 0 ]
	[ "$(stat overflows)" = 1 ]
	[ "$(stat walk-mismatches)" = 0 ]
}

@test "mt-decode: unzip stream has relative time, the filter gaps and paired calls" {
	[ -f "$T/unzip.ev" ] || mt-decode -o "$T/unzip.ev" "$T/unzip.snap"
	run head -n 8 "$T/unzip.ev"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "mt-events 1.2" ]
	[ "${lines[2]}" = "info clock relative" ]
	[ "${lines[4]}" = "info backend raw" ]
	[ "${lines[6]}" = "mod 0 0x400000 0x427000 0 - $RP/unzip/dump" ]
	run awk '{ n[$1]++ } END { print n["call"], n["ret"], n["enable"], n["disable"], n["error"] + 0, n["end"] }' "$T/unzip.ev"
	[ "$output" = "219 111 128 128 0 1" ]
	run awk "$PAIRS" "$T/unzip.ev"
	[ "$output" = "paired 100 mismatched 0" ]
}

@test "mt-decode: mruby calls and returns pair up, the overflow is an event" {
	[ -f "$T/mruby.ev" ] || mt-decode -o "$T/mruby.ev" "$T/mruby.snap"
	run awk '{ n[$1]++ } END { print n["call"], n["ret"], n["overflow"], n["error"] + 0 }' "$T/mruby.ev"
	[ "$output" = "45445 31164 1 0" ]
	run awk "$PAIRS" "$T/mruby.ev"
	[ "$output" = "paired 31137 mismatched 0" ]
}

@test "mt-decode: event times of one thread never go backwards" {
	[ -f "$T/mruby.ev" ] || mt-decode -o "$T/mruby.ev" "$T/mruby.snap"
	run awk 'NF >= 3 && $2 ~ /^[0-9]+$/ && $1 != "thread" && $1 != "proc" && $1 != "mod" { if ($2 + 0 < last) bad++; last = $2 + 0 } END { print bad + 0 }' "$T/mruby.ev"
	[ "$output" = 0 ]
}

# (--no-cache: libipt's block decoder, whose counts these are;
# tests/mt-decode-cache.bats holds the cached decoder to its stream.)
# The pages of each trace are at consecutive addresses: imported with
# --pages they are one blob, one libipt section.  Blocks no longer end at
# page borders, so libipt's block count is that of the plain loop mapping
# the pages as one section (bench/ipt-loop.c -c), and the stream is the
# same as with a section per page: relative times count instructions.
@test "mt-decode: real traces imported with --pages as one blob: the plain libipt loop's counts, the same stream" {
	cc -O2 -o "$T/ipt-loop" "$MT_ROOT/bench/ipt-loop.c" -lipt
	for t in unzip:0x400000-0x427000 mruby:0x400000-0x4b6000; do
		n=${t%%:*}
		run mt-decode --info "$T/$n.snap"
		[[ "$output" == *"code blobs: 1, "* ]]
		run "$T/ipt-loop" -c -t "$RP/$n/trace" -a "$RP/$n/addr" \
			-d "$RP/$n/dump" -f "${t#*:}"
		[ "$status" -eq 0 ]
		want_i=$(stat instructions)
		want_b=$(stat blocks)
		run "$T/ipt-loop" -t "$RP/$n/trace" -a "$RP/$n/addr" \
			-d "$RP/$n/dump" -f "${t#*:}"
		[ "$(stat blocks)" != "$want_b" ]	# the sections differ
		run mt-decode --no-cache --stats -o "$T/$n.ev" "$T/$n.snap"
		[ "$status" -eq 0 ]
		[ "$(stat instructions)" = "$want_i" ]
		[ "$(stat blocks)" = "$want_b" ]
		[ -f "$T/$n-pages.ev" ] || mt-decode -o "$T/$n-pages.ev" "$T/$n-pages.snap"
		diff <(sed 2d "$T/$n-pages.ev") <(sed 2d "$T/$n.ev")
	done
}
