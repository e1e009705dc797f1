#!/usr/bin/env bats
# The oracle: mt-decode (libipt) and perf's own Intel PT decoder, on the
# perf.data export-perf writes, agree on the calls, returns and taken
# branches of every trace the suite has: the synthetic scenarios of
# tests/helpers/ptgen.c, the two real hardware traces, and an emulated
# capture of a real process.  tests/helpers/oracle does the comparison
# (end-of-buffer tails and resync points aside: see its header).

ORACLE="$MT_ROOT/tests/helpers/oracle"
load helpers/real-pt
load helpers/gen-synth

setup_file() {
	D="$BATS_FILE_TMPDIR"
	cc -O1 -o "$D/ptgen" "$MT_ROOT/tests/helpers/ptgen.c" -lipt
	cd "$D"
	./ptgen code code.bin
	for s in calls ipcomp psb ovf nomap corrupt midpacket syscall kernel irq filter; do
		f=()
		[ $s = filter ] && f=(--filter 0x400000-0x400fff)
		./ptgen $s $s.pt
		mt-capture import-raw --pt $s.pt "${f[@]}" code.bin@0x400000 -o $s.snap
	done
}

setup() {
	D="$BATS_FILE_TMPDIR"
	cd "$D"
	command -v perf > /dev/null && perf version > /dev/null 2>&1 ||
		skip "needs perf (Debian linux-perf) as the independent decoder"
}

both() {	# both SNAPSHOT [oracle options]: calls/returns, then branches
	local s=$1
	shift
	run "$ORACLE" "$@" "$s"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "oracle: "*" branches in 1 threads agree (cr)" ]]
	run "$ORACLE" -b "$@" "$s"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "oracle: "*" branches in 1 threads agree (b)" ]]
}

@test "oracle: synthetic calls, compressed and TIP returns" { both calls.snap; }
@test "oracle: synthetic IP compression" { both ipcomp.snap; }
@test "oracle: synthetic PSB+ mid-trace" { both psb.snap; }
@test "oracle: synthetic overflow" { both ovf.snap; }
@test "oracle: synthetic missing code" { both nomap.snap; }
@test "oracle: synthetic corrupt packet" { both corrupt.snap; }
@test "oracle: synthetic trace starting mid-packet" { both midpacket.snap; }
@test "oracle: synthetic syscall" { both syscall.snap; }
@test "oracle: synthetic kernel" { both kernel.snap; }
@test "oracle: synthetic interrupt" { both irq.snap; }
@test "oracle: synthetic IP filter" { both filter.snap; }

@test "oracle: user and kernel, syscalls into a bundled kernel image (gen-synth -k)" {
	# bench/gen-synth -k: a program whose syscalls enter a generated
	# kernel image at 0xffffffff81000000, bundled as mt-capture bundles
	# kernel text; export-perf writes it as a vmlinux and a kernel MMAP
	# record, the oracle gives perf --vmlinux and compares kernel
	# branches too
	gen_synth_build "$D" 7
	"$D/gen-synth" asm -k -S 7 -o "$D/progk.s"
	cc -nostdlib -static -no-pie -Wl,--build-id -Wl,-Ttext=0x401000 \
		-o "$D/progk" "$D/progk.s"
	"$D/gen-synth" snap -C -k -S 7 -t 1 -m 1 -e "$D/progk" -o k.snap
	both k.snap
	# the kernel was decoded by both, not left out: every sysret
	mt-decode -q -o k.ev k.snap
	n=$(grep -c '^sysret ' k.ev)
	mt-capture export-perf -o k.data k.snap 2> k.err
	grep -q "give perf script --vmlinux $D/k.data.files/vmlinux" k.err
	perf script -i k.data --vmlinux k.data.files/vmlinux --itrace=be \
		-F flags,ip,addr > k.perf
	[ "$n" -gt 1000 ]
	[ "$(grep -c sysret k.perf)" -eq "$n" ]
	[ "$(awk '$1 == "call" && $4 ~ /^0xffffffff8/' k.ev | wc -l)" -gt 1000 ]
}

@test "oracle: pipe-mode export agrees too" {
	run "$ORACLE" -b -x --pipe calls.snap
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "oracle: 13 of 15 branches in 1 threads agree (b)" ]
}

@test "oracle: per-CPU recording, threads trading CPUs, split by SWITCH records" {
	"$MT_BUILD/tests/test-perfdata" --write-synth "$D" cpu
	# perf on the perf.data as written: each thread's calls on both CPUs
	perf script -i cpu.data --itrace=cr -F tid,cpu,ip,addr > cpu.perf 2> cpu.err
	run awk '$1 == 101 && $3 == "400005"' cpu.perf
	[ "${#lines[@]}" -eq 5 ]
	run awk '$1 == 102 && $3 == "500005"' cpu.perf
	[ "${#lines[@]}" -eq 9 ]
	[ "$(awk '$1 == 101 { print $2 }' cpu.perf | uniq | tr '\n' ' ')" = "[000] [001] " ]
	# mt-decode on the import, perf on its export, in time order
	mt-capture import-perf cpu.data -o cpu.snap
	run "$ORACLE" -T cpu.snap
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "oracle: 28 of 28 branches in 2 threads agree (cr)" ]
	run "$ORACLE" -T -b cpu.snap
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "oracle: 44 of 44 branches in 2 threads agree (b)" ]
	# Without time perf cannot split a CPU's buffer: the oracle says so.
	run "$ORACLE" -b cpu.snap
	[ "$status" -eq 1 ]
}

@test "oracle: real trace unzip (every taken branch identical)" {
	[ -f "$RP/unzip/trace" ] || skip "needs $RP/unzip"
	real_pt_snap unzip unzip.snap
	run "$ORACLE" -b -t 0 -s 0 -x --guest-as-host unzip.snap
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "oracle: 44368 of 44368 branches in 1 threads agree (b)" ]
}

@test "oracle: real trace mruby, with its overflow (calls and returns identical)" {
	[ -f "$RP/mruby/trace" ] || skip "needs $RP/mruby"
	real_pt_snap mruby mruby.snap
	run "$ORACLE" -t 0 -s 0 -x --guest-as-host mruby.snap
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "oracle: 76609 of 76609 branches in 1 threads agree (cr)" ]
}

@test "oracle: it fails when the decoders disagree" {
	[ -f "$RP/unzip/trace" ] || skip "needs $RP/unzip"
	real_pt_snap unzip unzip.snap
	# Without --guest-as-host perf looks for a guest machine (PIP.NR)
	# and decodes nothing.
	run "$ORACLE" unzip.snap
	[ "$status" -eq 1 ]
	[[ "$output" == *"differing branches lie away from sync points"* ]]
}

@test "oracle: emulated capture of a real process (ELF files, libc, vDSO)" {
	mt-capture run --help 2>&1 | grep -q emulate ||
		skip "needs mt-capture's emulate backend"
	cc -O1 -g -o recurse "$MT_ROOT/tests/data/emu/recurse.c"
	run mt-capture run -b emulate -q -o rec.snap -- ./recurse
	[ "$status" -eq 0 ]
	both rec.snap
	# Round trip: export-perf, import-perf, same stream (perf.data has no
	# PROCESS command line, so the proc line is left out).
	mt-capture export-perf -o rt.data rec.snap
	run mt-capture import-perf rt.data -o rt.snap
	[ "$status" -eq 0 ]
	mt-decode -q rec.snap | grep -v -e '^info ' -e '^mod ' -e '^proc ' > a.ev
	mt-decode -q rt.snap | grep -v -e '^info ' -e '^mod ' -e '^proc ' > b.ev
	run diff -u a.ev b.ev
	[ "$status" -eq 0 ]
	[ "$(grep -c '^call ' a.ev)" -gt 100 ]
}
