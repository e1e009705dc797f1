#!/usr/bin/env bats
# mt-capture import-perf: perf.data files built to the layout perf record
# writes for intel_pt (by the unit test binary: test-perfdata --write-synth,
# which encodes the PT with libipt's encoder), in file and pipe mode,
# per-thread and per-CPU, snapshot and full-trace mode, with build-ids;
# then decoded with mt-decode.  Expected streams: tests/data/perf/*.expected
# (regenerate: see tests/data/perf/README).

setup_file() {
	D="$BATS_FILE_TMPDIR"
	for k in thread snapshots split cpu; do
		"$MT_BUILD/tests/test-perfdata" --write-synth "$D" $k
		"$MT_BUILD/tests/test-perfdata" --write-synth "$D" $k --pipe
	done
}

setup() {
	D="$BATS_FILE_TMPDIR"
	E="$MT_ROOT/tests/data/perf"
	cd "$D"
}

# The event stream of SNAP without the lines that name files.
events() {
	mt-decode -q "$1" | grep -v -e '^info source ' -e '^mod '
}

@test "import-perf: file mode, per-thread, decodes every iteration" {
	run mt-capture import-perf --no-bundle thread.data -o thread.snap
	[ "$status" -eq 0 ]
	events thread.snap > thread.ev
	run grep -c '^call .* 4242 0x400005 0x400010$' thread.ev
	[ "$output" = 1000 ]
	run grep -c '^ret .* 4242 0x400016 0x40000a$' thread.ev
	[ "$output" = 1000 ]
	run mt-decode -i thread.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"pt buffer 0: thread 4242, snapshot 0"* ]]
	[[ "$output" == *"per-thread buffers"* ]]
	[[ "$output" == *"meta: perf-mode = file"* ]]
}

@test "import-perf: pipe mode gives the same snapshot content as file mode" {
	mt-capture import-perf --no-bundle thread.data -o f.snap
	run mt-capture import-perf --no-bundle thread.pipe.data -o p.snap
	[ "$status" -eq 0 ]
	events f.snap > f.ev
	events p.snap > p.ev
	run diff -u f.ev p.ev
	[ "$status" -eq 0 ]
}

@test "import-perf: '-' reads a pipe-mode stream from stdin and writes stdout" {
	mt-capture import-perf --no-bundle thread.data -o f.snap
	run bash -c 'cat thread.pipe.data | mt-capture import-perf --no-bundle - > s.snap'
	[ "$status" -eq 0 ]
	events f.snap > f.ev
	events s.snap > s.ev
	run diff -u f.ev s.ev
	[ "$status" -eq 0 ]
}

@test "import-perf: default output name is INPUT.snap" {
	run mt-capture import-perf --no-bundle split.data
	[ "$status" -eq 0 ]
	[ -s split.data.snap ]
}

@test "import-perf: full-trace mode joins contiguous AUXTRACE records" {
	mt-capture import-perf --no-bundle thread.data -o t.snap
	mt-capture import-perf --no-bundle split.data -o s.snap
	run mt-decode -i s.snap
	[[ "$output" == *"pt buffer 0: thread 4242, snapshot 0, 544 bytes"* ]]
	[[ "$output" != *"pt buffer 1"* ]]
	events t.snap > t.ev
	events s.snap > s.ev
	run diff -u t.ev s.ev
	[ "$status" -eq 0 ]
}

@test "import-perf: snapshot mode keeps each AUXTRACE record as a snapshot" {
	run mt-capture import-perf --no-bundle snapshots.data -o snaps.snap
	[ "$status" -eq 0 ]
	run mt-decode -i snaps.snap
	[[ "$output" == *"pt buffer 0: thread 4242, snapshot 0, 40 bytes"*", wrapped"* ]]
	[[ "$output" == *"pt buffer 1: thread 4242, snapshot 1, 48 bytes"*", wrapped"* ]]
	events snaps.snap > snaps.ev
	run diff -u "$E/snapshots.expected" snaps.ev
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "import-perf: AUXTRACE_INFO and TIME_CONV become PTCFG and TIMECONV" {
	run mt-capture import-perf --no-bundle cpu.data -o cpu.snap
	[ "$status" -eq 0 ]
	run mt-decode -i cpu.snap
	[[ "$output" == *"pt: backend perf, config 0x2401 (tsc 1,"*"per-cpu buffers"* ]]
	[[ "$output" == *"timing: time_zero 0 time_mult 1024 time_shift 10"* ]]
	[[ "$output" == *"pt buffer 0: cpu 0, snapshot 0"* ]]
	[[ "$output" == *"pt buffer 1: cpu 1, snapshot 0"* ]]
	[[ "$output" == *"sideband 0: cpu 0 tid -1"* ]]
	[[ "$output" == *"sideband 1: cpu 1 tid -1"* ]]
	[[ "$output" == *"thread 100/101 alpha"* ]]
	[[ "$output" == *"thread 100/102 beta"* ]]
}

@test "import-perf: per-CPU buffers are split into threads by the SWITCH records" {
	mt-capture import-perf --no-bundle cpu.data -o cpu.snap
	events cpu.snap > cpu.ev
	# Thread 101 ran code A (0x400000) on CPU 0 then CPU 1, thread 102
	# code B (0x500000) on CPU 1 then CPU 0: each call and return must
	# be in the right thread, 3 + 2 and 5 + 4 iterations.
	run awk '($1 == "call" || $1 == "ret") && $3 == 101 && $4 ~ /^0x4000/' cpu.ev
	[ "${#lines[@]}" -eq 10 ]
	run awk '($1 == "call" || $1 == "ret") && $3 == 102 && $4 ~ /^0x5000/' cpu.ev
	[ "${#lines[@]}" -eq 18 ]
	run awk '($1 == "call" || $1 == "ret") && !(($3 == 101 && $4 ~ /^0x4000/) || ($3 == 102 && $4 ~ /^0x5000/))' cpu.ev
	[ "${#lines[@]}" -eq 0 ]
	# Both slices of each thread, at the TSC of their CPU's slice.
	run awk '$1 == "call" && $3 == 101 { print $2 }' cpu.ev
	[ "$(printf '%s\n' "${lines[@]}" | sort -un | tr '\n' ' ')" = "1000 4000 " ]
	run awk '$1 == "call" && $3 == 102 { print $2 }' cpu.ev
	[ "$(printf '%s\n' "${lines[@]}" | sort -un | tr '\n' ' ')" = "2000 3000 " ]
}

@test "import-perf: per-CPU pipe mode equals file mode" {
	mt-capture import-perf --no-bundle cpu.data -o c1.snap
	mt-capture import-perf --no-bundle cpu.pipe.data -o c2.snap
	events c1.snap > c1.ev
	events c2.snap > c2.ev
	run diff -u c1.ev c2.ev
	[ "$status" -eq 0 ]
}

@test "import-perf: an ELF whose build-id matches the header is bundled" {
	cp /bin/true prog
	bid=$(readelf -n prog | awk '/Build ID/ { print $3 }')
	"$MT_BUILD/tests/test-perfdata" --write-synth "$D" elf "$D/prog" "$bid"
	run mt-capture import-perf elf.data -o elf.snap
	[ "$status" -eq 0 ]
	run mt-decode -i elf.snap
	[[ "$output" == *"bundled elf $D/prog, "*"build-id $bid"* ]]
	run mt-capture import-perf --no-bundle elf.data -o nob.snap
	run mt-decode -i nob.snap
	[[ "$output" != *"bundled elf"* ]]
}

@test "import-perf: perf's build-id cache is used when the path is gone" {
	cp /bin/true prog2
	bid=$(readelf -n prog2 | awk '/Build ID/ { print $3 }')
	"$MT_BUILD/tests/test-perfdata" --write-synth "$D" elf "$D/prog2" "$bid"
	mkdir -p "home/.debug/.build-id/${bid:0:2}/${bid:2}"
	mv prog2 "home/.debug/.build-id/${bid:0:2}/${bid:2}/elf"
	HOME="$D/home" run mt-capture import-perf elf.data -o cache.snap
	[ "$status" -eq 0 ]
	run mt-decode -i cache.snap
	[[ "$output" == *"bundled elf $D/prog2, "*"build-id $bid"* ]]
}

@test "import-perf: a file with another build-id is not bundled, with a warning" {
	cp /bin/true prog3
	"$MT_BUILD/tests/test-perfdata" --write-synth "$D" elf "$D/prog3" \
		0123456789abcdef0123456789abcdef01234567
	run mt-capture import-perf elf.data -o wrong.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"'$D/prog3': build-id differs from the one perf recorded"* ]]
	run mt-decode -i wrong.snap
	[[ "$output" != *"bundled elf"* ]]
}

@test "import-perf: flat code files are bundled only from the perf.data's directory" {
	mkdir -p sub
	cp thread.data sub/moved.data
	run mt-capture import-perf sub/moved.data -o moved.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"'$D/code.bin' is not an ELF file and lies outside the perf.data's directory: not bundled"* ]]
	run mt-decode -i moved.snap
	[[ "$output" != *"blob kind"* ]]
	run mt-capture import-perf thread.data -o here.snap
	run mt-decode -i here.snap
	[[ "$output" == *"blob kind 3 pid 4242 0x400000 4096 bytes $D/code.bin"* ]]
}

@test "import-perf: a FIFO where a mapped file should be is skipped, not waited on" {
	mkdir -p fifo
	"$MT_BUILD/tests/test-perfdata" --write-synth "$D/fifo" thread
	rm fifo/code.bin
	mkfifo fifo/code.bin
	run timeout 60 mt-capture import-perf fifo/thread.data -o fifo.snap
	[ "$status" -eq 0 ]
	run mt-decode -i fifo.snap
	[ "$status" -eq 0 ]
	[[ "$output" != *"blob kind"* ]]
}

@test "import-perf: a truncated file is an error with its byte offset" {
	head -c 1000 thread.data > cut.data
	run mt-capture import-perf cut.data -o cut.snap
	[ "$status" -eq 1 ]
	[[ "$output" == "mt-capture: 'cut.data': "*" at offset "* ]]
	[ ! -e cut.snap ]
	head -c 300 thread.pipe.data > cut.pipe.data
	run mt-capture import-perf cut.pipe.data -o cut.snap
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: 'cut.pipe.data': truncated record (type 64, size 144) at offset 160" ]
}

@test "import-perf: a file cut at every 97th byte never crashes" {
	size=$(stat -c %s cpu.data)
	for ((n = 0; n < size; n += 97)); do
		head -c $n cpu.data > c.data
		run mt-capture import-perf --no-bundle c.data -o c.snap
		[ "$status" -eq 1 ]
		[[ "$output" == *" at offset "* ]]
	done
}

# set_priv IN OUT I V: IN with value I of its AUXTRACE_INFO record (type
# 70, values from byte 16 of the record) set to V; prints the value's
# offset.  The records are walked from the data section (header byte 40).
set_priv() {
	python3 - "$@" <<-'EOF'
		import struct, sys
		d = bytearray(open(sys.argv[1], 'rb').read())
		off, = struct.unpack_from('<Q', d, 40)
		while struct.unpack_from('<I', d, off)[0] != 70:
		    off += struct.unpack_from('<H', d, off + 6)[0]
		at = off + 16 + 8 * int(sys.argv[3])
		struct.pack_into('<Q', d, at, int(sys.argv[4]))
		open(sys.argv[2], 'wb').write(d)
		print(at)
	EOF
}

@test "import-perf: a bad AUXTRACE_INFO value is named with its offset" {
	at=$(set_priv thread.data bad.data 0 99)
	run mt-capture import-perf --no-bundle bad.data -o bad.snap
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: 'bad.data': no event of the Intel PT PMU type 99 recorded at offset $at" ]
	at=$(set_priv thread.data bad.data 1 64)
	run mt-capture import-perf --no-bundle bad.data -o bad.snap
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: 'bad.data': AUXTRACE_INFO time_shift 64 is over 63 at offset $at" ]
	[ ! -e bad.snap ]
}

@test "import-perf: not a perf.data file" {
	echo "hello, this is not perf data" > text.data
	run mt-capture import-perf text.data -o x.snap
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: 'text.data': not a perf.data file at offset 0" ]
}

@test "import-perf: -o naming a directory is one line saying so, nothing made" {
	mkdir -p outdir
	run mt-capture import-perf --no-bundle thread.data -o outdir
	[ "$status" -eq 1 ]
	[ "$output" = "mt-capture: 'outdir' is a directory (-o names the output file)" ]
	run ls -A outdir
	[ -z "$output" ]
}

@test "import-perf: perf.data without Intel PT is refused" {
	# The pipe header and one FINISHED_ROUND record, nothing else.
	printf 'PERFILE2\x10\0\0\0\0\0\0\0\x44\0\0\0\0\0\x08\0' > nopt.data
	run mt-capture import-perf nopt.data -o x.snap
	[ "$status" -eq 1 ]
	[[ "$output" == *"no Intel PT data"* ]]
}

@test "import-perf: usage errors exit 2" {
	run mt-capture import-perf --bogus
	[ "$status" -eq 2 ]
	[[ "$output" == *"usage: mt-capture import-perf"* ]]
	run mt-capture import-perf a b
	[ "$status" -eq 2 ]
	run mt-capture import-perf thread.data -o thread.data
	[ "$status" -eq 2 ]
	[[ "$output" == *"refusing to overwrite the input"* ]]
	run mt-capture import-perf -h
	[ "$status" -eq 0 ]
	[[ "$output" == *"--debug-dir DIR"* ]]
}
