#!/usr/bin/env bats
# mt-symbolize under faults: full disks and devices as the output, a
# reader that exits early, a stream of a newer major version, and streams
# that name files which are not binaries (a FIFO, a device).  The input is
# the real mruby trace decoded by mt-decode (3.3 MB of events).

load helpers/faults
load helpers/real-pt

setup_file() {
	[ -f "$RP/mruby/trace" ] || return 0
	T="$BATS_FILE_TMPDIR"
	real_pt_snap mruby "$T/mruby.snap"
	mt-decode -o "$T/mruby.ev" "$T/mruby.snap"
}

setup() {
	T="$BATS_FILE_TMPDIR"
	E="$T/mruby.ev"
	M="$BATS_TEST_TMPDIR/mnt"
	[ -f "$RP/mruby/trace" ] || skip "needs the real traces in $RP"
}

teardown() {
	tiny_fs_done "$M"
}

@test "mt-symbolize: -o onto a full device exits 1 with the reason and leaves the device in place" {
	device_node "$BATS_TEST_TMPDIR/full"
	run mt-symbolize -q -o "$BATS_TEST_TMPDIR/full" "$E"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-symbolize: cannot write '$BATS_TEST_TMPDIR/full': No space left on device" ]
	[ -c "$BATS_TEST_TMPDIR/full" ]
	run ls "$BATS_TEST_TMPDIR"
	[ "$output" = "full" ]
}

@test "mt-symbolize: standard output on a full device exits 1 with the reason" {
	run bash -c 'mt-symbolize -q "$1" > /dev/full' _ "$E"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-symbolize: cannot write '-': No space left on device" ]
}

@test "mt-symbolize: a disk that fills up exits 1, and nothing is left under the output name" {
	tiny_fs "$M" 64k
	run mt-symbolize -q -o "$M/out.ev" "$E"
	[ "$status" -eq 1 ]
	[ "$output" = "mt-symbolize: cannot write '$M/out.ev': No space left on device" ]
	run ls -A "$M"
	[ "$output" = "" ]
}

@test "mt-symbolize: a reader that exits early (| head -1) stops it quietly by SIGPIPE" {
	pipe_head mt-symbolize -q "$E"
	[ "$pout" = "mt-events 1.2" ]
	[ "$perr" = "" ]
	[ "$pstatus" -eq 141 ]
}

@test "mt-symbolize: with SIGPIPE ignored by its parent, an early reader exit is still quiet" {
	pipe_head_ign mt-symbolize -q "$E"
	[ "$pout" = "mt-events 1.2" ]
	[ "$perr" = "" ]
	[ "$pstatus" -eq 141 ]
}

@test "mt-symbolize: an event stream of a newer major version is refused with a clear error" {
	printf 'mt-events 2.0\ncall 1 1 0x1 0x2\n' > "$BATS_TEST_TMPDIR/v2.ev"
	run mt-symbolize -o "$BATS_TEST_TMPDIR/out.ev" "$BATS_TEST_TMPDIR/v2.ev"
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-symbolize: "*"line 1: field 1: unsupported event stream version 2.0 (this reader: 1.x)" ]]
	[ ! -e "$BATS_TEST_TMPDIR/out.ev" ]
}

@test "mt-symbolize: a mapping that names a FIFO or a device is a warning, not a hang" {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	printf '%s\n' 'mt-events 1.0' 'proc 1 a a' 'thread 1 1 a' \
	    "mod 1 0x1000 0x2000 0 - $BATS_TEST_TMPDIR/fifo" \
	    'mod 1 0x3000 0x4000 0 - /dev/zero' \
	    'call 10 1 0x1100 0x3200' > "$BATS_TEST_TMPDIR/in.ev"
	run timeout 20 mt-symbolize -o "$BATS_TEST_TMPDIR/out.ev" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "mt-symbolize: warning: cannot read '$BATS_TEST_TMPDIR/fifo': not a regular file" ]
	[ "${lines[1]}" = "mt-symbolize: warning: cannot read '/dev/zero': not a regular file" ]
	[ "$(tail -1 "$BATS_TEST_TMPDIR/out.ev")" = "call 10 1 0x1100 0x3200 @1 @2" ]
}

# shdr_end FILE: where FILE's section header table ends, by readelf.
shdr_end() {
	readelf -h "$1" | awk -F: '
		/Start of section headers/ { o = $2 + 0 }
		/Size of section headers/ { s = $2 + 0 }
		/Number of section headers/ { n = $2 + 0 }
		END { print o + s * n }'
}

@test "mt-symbolize: a library cut short is one warning naming it and where its headers end" {
	lib=/usr/lib/x86_64-linux-gnu/libm.so.6
	head -c 3000 "$lib" > "$BATS_TEST_TMPDIR/x.so"
	end=$(shdr_end "$lib")
	[ "$end" -gt 3000 ]
	printf '%s\n' 'mt-events 1.0' 'proc 1 a a' 'thread 1 1 a' \
	    "mod 1 0x1000 0x20000 0 - $BATS_TEST_TMPDIR/x.so" \
	    "mod 1 0x30000 0x40000 0 - $BATS_TEST_TMPDIR/x.so" \
	    'call 10 1 0x1100 0x5200' 'call 11 1 0x5200 0x31000' \
	    > "$BATS_TEST_TMPDIR/in.ev"
	run mt-symbolize -o "$BATS_TEST_TMPDIR/out.ev" "$BATS_TEST_TMPDIR/in.ev"
	[ "$status" -eq 0 ]
	[ "$output" = "mt-symbolize: warning: '$BATS_TEST_TMPDIR/x.so': truncated: section headers end at byte $end, file has 3000" ]
	[ "$(tail -1 "$BATS_TEST_TMPDIR/out.ev")" = "call 11 1 0x5200 0x31000 @2 @3" ]
	# addr2line mode: the same warning on stderr, ??:0 on stdout
	run mt-symbolize -e "$BATS_TEST_TMPDIR/x.so" 0x5200
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "mt-symbolize: warning: '$BATS_TEST_TMPDIR/x.so': truncated: section headers end at byte $end, file has 3000" ]
	[ "${lines[1]}" = "??:0" ]
	[ "${#lines[@]}" -eq 2 ]
	run mt-symbolize -q -e "$BATS_TEST_TMPDIR/x.so" 0x5200
	[ "$output" = "??:0" ]
}

@test "mt-symbolize: a file cut inside its ELF header cannot be read, and says so" {
	head -c 40 /usr/lib/x86_64-linux-gnu/libm.so.6 > "$BATS_TEST_TMPDIR/h.so"
	run mt-symbolize -e "$BATS_TEST_TMPDIR/h.so" 0x1
	[ "$status" -eq 1 ]
	[ "$output" = "mt-symbolize: cannot read '$BATS_TEST_TMPDIR/h.so': truncated: ELF header ends at byte 64, file has 40" ]
}
