#!/usr/bin/env bats
# mt-capture export-perf: snapshots written as perf.data and decoded by
# perf's own Intel PT decoder (perf script), which shares no code with
# libipt.  The snapshots: the synthetic traces of tests/helpers/ptgen.c
# imported with import-raw.  perf script output is compared exactly with
# tests/data/perf/*.expected (regenerate: tests/data/perf/README).

load helpers/real-pt

setup_file() {
	D="$BATS_FILE_TMPDIR"
	cc -O1 -o "$D/ptgen" "$MT_ROOT/tests/helpers/ptgen.c" -lipt
	(cd "$D" && ./ptgen code code.bin && ./ptgen calls calls.pt &&
	    mt-capture import-raw --pt calls.pt code.bin@0x400000 -o calls.snap)
}

setup() {
	D="$BATS_FILE_TMPDIR"
	E="$MT_ROOT/tests/data/perf"
	cd "$D"
	command -v perf > /dev/null && perf version > /dev/null 2>&1 ||
		skip "needs perf (Debian linux-perf) as the independent decoder"
}

@test "export-perf: perf script decodes the calls and returns of a snapshot" {
	run mt-capture export-perf -o calls.data calls.snap
	[ "$status" -eq 0 ]
	perf script -i calls.data --itrace=cr -F tid,flags,ip,addr \
		> calls.cr 2> calls.err
	run diff -u "$E/calls.cr.expected" calls.cr
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "export-perf: every taken branch, and no decode error" {
	mt-capture export-perf -o calls.data calls.snap
	perf script -i calls.data --itrace=be -F tid,flags,ip,addr > calls.b 2>&1
	run diff -u "$E/calls.b.expected" calls.b
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "export-perf: --pipe writes pipe mode, which perf reads from a pipe" {
	run mt-capture export-perf --pipe -o pipe.data calls.snap
	[ "$status" -eq 0 ]
	run od -A n -t u8 -j 8 -N 8 pipe.data
	[ "$(echo $output)" = 16 ]
	# A real pipe: perf 6.1 misreads pipe-mode data from a regular file,
	# even one redirected to stdin (seen with perf 6.1: it reads the
	# AUXTRACE payloads 16 bytes early and reports "Bad packet").
	cat pipe.data | perf script -i - --itrace=cr -F tid,flags,ip,addr > pipe.cr 2> pipe.err
	run diff -u "$E/calls.cr.expected" pipe.cr
	[ "$status" -eq 0 ]
}

@test "export-perf: code bytes of the snapshot become files the MMAP2 records name" {
	run mt-capture export-perf -o calls.data calls.snap
	[ "$status" -eq 0 ]
	[ -d calls.data.files ]
	run cmp calls.data.files/blob0-400000-code.bin.bin code.bin
	[ "$status" -eq 0 ]
	run perf script -i calls.data --show-mmap-events --itrace=
	[[ "$output" == *"PERF_RECORD_MMAP2 4194303/4194303: [0x400000("*"$D/calls.data.files/blob0-400000-code.bin.bin"* ]]
	run mt-capture export-perf --files-dir code-files -o c2.data calls.snap
	[ "$status" -eq 0 ]
	[ -f code-files/blob0-400000-code.bin.bin ]
}

@test "export-perf: writes to stdout with -o -" {
	mt-capture export-perf --files-dir files -o calls.data calls.snap
	run bash -c 'mt-capture export-perf --files-dir files -o - calls.snap > out.data'
	[ "$status" -eq 0 ]
	run cmp calls.data out.data
	[ "$status" -eq 0 ]
}

@test "export-perf: no files directory beside a device, none left after a failure" {
	[ -c /dev/full ] || skip "needs /dev/full"
	mkdir -p full && cd full
	run mt-capture export-perf -o /dev/full ../calls.snap
	[ "$status" -eq 1 ]
	[[ "$output" == *"'/dev/full': No space left on device"* ]]
	[ ! -e /dev/full.files ]
	# its place is ./perf.data.files, as for stdout, removed on failure
	run ls -A
	[ -z "$output" ]
	run mt-capture export-perf -o /dev/null ../calls.snap
	[ "$status" -eq 0 ]
	[ ! -e /dev/null.files ]
	[ -f perf.data.files/blob0-400000-code.bin.bin ]
}

@test "export-perf: -o naming a directory is one line saying so, nothing made" {
	mkdir -p outdir
	run mt-capture export-perf -o outdir calls.snap
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: 'outdir' is a directory (-o names the output file)" ]
	run ls -A outdir
	[ -z "$output" ]
	[ ! -e outdir.files ]
}

@test "export-perf: round trip through import-perf decodes to the same stream" {
	mt-capture export-perf -o rt.data calls.snap
	run mt-capture import-perf rt.data -o rt.snap
	[ "$status" -eq 0 ]
	# Thread 0 comes back as PERF_EXPORT_TID0 (perf's idle task is 0);
	# the import makes a PROCESS of it, which import-raw had not.
	mt-decode -q calls.snap | grep -v -e '^info ' -e '^mod ' -e '^proc ' > a.ev
	mt-decode -q rt.snap | grep -v -e '^info ' -e '^mod ' -e '^proc ' |
		sed -e 's/^thread 4194303 4194303 unknown$/thread 0 0 -/' \
		    -e 's/^\([a-z]* [0-9]*\) 4194303/\1 0/' > b.ev
	run diff -u a.ev b.ev
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "export-perf: a corrupt snapshot is an error with its offset" {
	head -c 200 calls.snap > cut.snap
	run mt-capture export-perf -o cut.data cut.snap
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-capture: 'cut.snap': "*" at offset "* ]]
	[ ! -e cut.data ]
}

@test "export-perf: usage errors exit 2" {
	run mt-capture export-perf --bogus
	[ "$status" -eq 2 ]
	run mt-capture export-perf a b
	[ "$status" -eq 2 ]
	run mt-capture export-perf -o calls.snap calls.snap
	[ "$status" -eq 2 ]
	[[ "$output" == *"refusing to overwrite the input"* ]]
	run mt-capture export-perf --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--guest-as-host"* ]]
}

# PSB, PIP (CR3 0x200 >> 5 << 1, NR bit $1), PSBEND
pip_trace() {
	printf '\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82'
	printf "\\x02\\x43\\x$(printf %02x $((0x10 | $1)))\\x00\\x00\\x00\\x00\\x00"
	printf '\x02\x23'
}

@test "export-perf: a trace recorded in a guest (PIP.NR) says perf needs --guest-as-host" {
	pip_trace 1 > guest.pt
	mt-capture import-raw --pt guest.pt code.bin@0x400000 -o guest.snap
	run mt-capture export-perf -o guest.data guest.snap
	[ "$status" -eq 0 ]
	[ "$output" = "mt-capture: 'guest.snap': the trace was recorded in a guest (1 PIP packets with NR set): perf script decodes no instruction of it as exported; add --guest-as-host" ]
	run mt-capture export-perf --guest-as-host -o guest.data guest.snap
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	# a host trace (NR clear) exports without a word
	pip_trace 0 > host.pt
	mt-capture import-raw --pt host.pt code.bin@0x400000 -o host.snap
	run mt-capture export-perf -o host.data host.snap
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
}

@test "export-perf: the real kAFL trace unzip is detected as a guest trace" {
	[ -f "$RP/unzip/trace" ] || skip "needs $RP/unzip (../shared)"
	real_pt_snap unzip unzip.snap
	run mt-capture export-perf -o unzip.data unzip.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"the trace was recorded in a guest ("*" PIP packets with NR set)"*"add --guest-as-host" ]]
}
