#!/usr/bin/env bats
# mt-decode's cached decoder on traces with perf time (TSC, MTC, CYC):
# the stream must be libipt's (--no-cache) byte for byte, because where
# libipt's blocks end decides the time a call gets (docs/decode.md,
# "Times").  tests/helpers/timed-diff makes the traces: ptgen's
# scenarios, the real traces and captures of the emulate or qemu backend
# retimed by tests/helpers/ptretime.c (timing packets put between the
# packets, the control flow left as it was), gen-synth's own timing,
# copies of a buffer, damaged copies, export-perf/import-perf round
# trips.  MT_TIMED_CASES sets the number of cases (default 40; bench or
# manual runs: several hundred, with MT_TIMED_SEED for other ones).

setup() {
	T="$BATS_FILE_TMPDIR"
}

# untimed SNAP: the stream without its times and info lines
untimed() {
	mt-decode --no-cache -o - "$1" | grep -v '^info' | awk '{ $2 = ""; print }'
}

@test "ptretime: a retimed trace has perf time and decodes to the same control flow" {
	cc -O1 -o "$T/ptgen" "$MT_ROOT/tests/helpers/ptgen.c" -lipt
	san=
	nm "$MT_BUILD/libmtcommon.a" 2> /dev/null | grep -q __asan &&
		san=-fsanitize=address,undefined
	cc -O2 -std=c11 -D_GNU_SOURCE $san -fno-lto -iquote "$MT_ROOT/common" \
		-o "$T/ptretime" "$MT_ROOT/tests/helpers/ptretime.c" \
		"$MT_BUILD/libmtcommon.a" -lipt -lxxhash -lz
	"$T/ptgen" code "$T/code.bin"
	for s in calls ovf irq kernel filter packets tsx; do
		"$T/ptgen" "$s" "$T/$s.pt"
		f=()
		[ "$s" = filter ] && f=(--filter 0x400000-0x400fff)
		(cd "$T" && mt-capture import-raw --pt "$s.pt" ${f[@]+"${f[@]}"} \
			code.bin@0x400000 -o "$s.snap")
		for m in TMC TtMCBP TtB C; do
			run "$T/ptretime" time -m $m -S 3 "$T/$s.snap" "$T/t.snap"
			[ "$status" -eq 0 ] && [ "$output" = "$m" ]
			mt-decode --no-cache -s -o "$T/t.ev" "$T/t.snap" 2> "$T/t.st"
			grep -q '^info clock perf' "$T/t.ev"
			grep -q '^errors: 0' "$T/t.st"
			# times that move (with MTC or CYC after a TSC, on
			# these few packets): more than one distinct time
			[ "${m#T*C}" = "$m" ] ||
				[ "$(awk '$1 != "info" && $2 ~ /^[0-9]+$/ { print $2 }' "$T/t.ev" | sort -u | wc -l)" -gt 1 ]
			[ "$(untimed "$T/t.snap")" = "$(untimed "$T/$s.snap")" ]
		done
	done
	# -d 2: the buffer twice, the copy as thread 1000
	"$T/ptretime" time -m T -S 1 -d 2 "$T/calls.snap" "$T/d.snap"
	mt-decode --no-cache -s -o "$T/d.ev" "$T/d.snap" 2> "$T/d.st"
	grep -q '^buffers: 2' "$T/d.st"
	grep -q '^call [0-9]* 1000 ' "$T/d.ev"
	# mutate: other PT bytes, the same snapshot otherwise
	"$T/ptretime" mutate -S 5 "$T/t.snap" "$T/m.snap"
	! cmp -s "$T/t.snap" "$T/m.snap"
	mt-decode --info "$T/m.snap" | grep -q 'tsc 1'
}

@test "timed-diff: the cached decoder writes --no-cache's stream on timed traces" {
	run "$MT_ROOT/tests/helpers/timed-diff" -n "${MT_TIMED_CASES:-40}" \
		-s "${MT_TIMED_SEED:-1}" "$T/diff"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[-1]}" == "timed-diff: ${MT_TIMED_CASES:-40} cases, 0 mismatches, "* ]]
	# and not trivially: the cached decoder decoded most of the timed
	# buffers to their end itself (--stats' cache-buffers), at least
	# half of them (those with decode errors, damaged ones, code
	# mapped while the program runs go back to libipt)
	[[ "${lines[-1]}" =~ ([0-9]+)\ of\ ([0-9]+)\ timed\ buffers\ cached$ ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	[ $((2 * BASH_REMATCH[1])) -ge "${BASH_REMATCH[2]}" ]
}

# The harness is not vacuous: an mt-decode whose cached stream has one
# call a nanosecond late is caught, with the reproducer and the line.
@test "timed-diff: a cached stream one nanosecond off is reported as a mismatch" {
	mkdir -p "$T/bin"
	cat > "$T/bin/mt-decode" <<EOF
#!/usr/bin/env bash
out=
for a in "\$@"; do [ "\$p" = -o ] && out=\$a; p=\$a; done
"$MT_BUILD/bin/mt-decode" "\$@" || exit
case " \$* " in *" --no-cache "*) exit 0 ;; esac
awk '\$1 == "call" && !d { \$2 = \$2 + 1; d = 1 } { print }' "\$out" > "\$out.x" &&
	mv "\$out.x" "\$out"
EOF
	chmod +x "$T/bin/mt-decode"
	PATH="$T/bin:$PATH" run "$MT_ROOT/tests/helpers/timed-diff" \
		-c ptgen.calls+t.TC.1 "$T/bad"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"MISMATCH ptgen.calls+t.TC.1"* ]]
	[[ "$output" == *"reproduce: "*"timed-diff -c 'ptgen.calls+t.TC.1'"* ]]
	[[ "$output" == *"l1 vs c1: streams differ"* ]]
	[[ "$output" == *"lj vs cj: streams differ"* ]]
	[[ "${lines[-1]}" == "timed-diff: 1 cases, 1 mismatches, "* ]]
}

# The comparison sees what it is for: without the model of libipt's
# block-cache fill (MT_DECODE_NO_FILL=1, mt-decode/fill.h) the cached
# decoder ends blocks elsewhere than libipt, and calls get other times.
@test "timed-diff: the cached decoder without its model of libipt's block-cache fill is caught" {
	MT_DECODE_NO_FILL=1 run "$MT_ROOT/tests/helpers/timed-diff" \
		-c synth.x.2.15 "$T/nofill"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"MISMATCH synth.x.2.15"* ]]
	[[ "$output" == *"l1 vs c1: streams differ"* ]]
	MT_DECODE_NO_FILL=1 run "$MT_ROOT/tests/helpers/timed-diff" \
		-c ptgen.filtercall+t.TCB.11 "$T/nofill"
	[ "$status" -eq 1 ]
	# and with it, the same streams
	run "$MT_ROOT/tests/helpers/timed-diff" -c synth.x.2.15 "$T/fill"
	[ "$status" -eq 0 ]
}
