#!/usr/bin/env bats
# Which outputs are flushed to disk (fsync) before they are renamed into
# place (common/outfile, MT_OUTFILE_SYNC), seen in the system calls the
# programs make (strace): a snapshot cannot be made again, so mt-capture
# syncs it; the filters' outputs and export-perf's perf.data are made
# again from the snapshot, so they are renamed into place without one
# (docs/capture.md, "Output files").  Every output still appears under
# its final name only by a rename of its complete temporary file.

setup_file() {
	D="$BATS_FILE_TMPDIR"
	cc -O1 -o "$D/ptgen" "$MT_ROOT/tests/helpers/ptgen.c" -lipt
	"$D/ptgen" code "$D/code.bin"
	"$D/ptgen" calls "$D/calls.pt"
}

setup() {
	command -v strace > /dev/null || skip "needs strace (make deps)"
	D="$BATS_FILE_TMPDIR"
	T="$BATS_TEST_TMPDIR"
}

# traced LOG CMD...: run CMD under strace, its fsync, fdatasync and
# rename calls (any thread or child) in LOG (LeakSanitizer cannot run
# under ptrace: off for the sanitizer build's runs)
traced() {
	local log=$1
	shift
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -e trace=fsync,fdatasync,rename,renameat,renameat2 \
		-o "$log" "$@"
}

# synced LOG: the number of fsync/fdatasync calls in LOG
synced() { grep -c -E '(^|[ ])f(data)?sync\(' "$1" || true; }

@test "outfile sync: a snapshot is fsync'ed before its rename" {
	traced "$T/cap.log" mt-capture import-raw --pt "$D/calls.pt" \
		-o "$T/a.snap" "$D/code.bin@0x400000"
	[ -s "$T/a.snap" ]
	cat "$T/cap.log"
	[ "$(synced "$T/cap.log")" -ge 1 ]
	# the sync comes before the rename to the final name
	run awk '/f(data)?sync\(/ && !r { s = NR } /rename.*a\.snap"/ { r = NR } END { exit !(s && r && s < r) }' "$T/cap.log"
	[ "$status" -eq 0 ]
}

@test "outfile sync: mt-decode, mt-symbolize, mt-fxt and export-perf outputs are renamed without fsync" {
	mt-capture import-raw --pt "$D/calls.pt" -o "$T/a.snap" "$D/code.bin@0x400000"
	traced "$T/dec.log" mt-decode -o "$T/a.ev" "$T/a.snap"
	traced "$T/sym.log" mt-symbolize -o "$T/a.sym" "$T/a.ev"
	traced "$T/fxt.log" mt-fxt -o "$T/a.fxt.gz" "$T/a.sym"
	traced "$T/perf.log" mt-capture export-perf -o "$T/a.data" "$T/a.snap"
	for l in dec sym fxt perf; do
		cat "$T/$l.log"
		[ "$(synced "$T/$l.log")" -eq 0 ]
	done
	# each was written under a temporary name and renamed
	grep -q 'rename.*\.a\.ev\.tmp.*"'"$T"'/a\.ev"' "$T/dec.log"
	grep -q 'rename.*\.a\.sym\.tmp.*"'"$T"'/a\.sym"' "$T/sym.log"
	grep -q 'rename.*\.a\.fxt\.gz\.tmp.*"'"$T"'/a\.fxt\.gz"' "$T/fxt.log"
	grep -q 'rename.*\.a\.data\.tmp.*"'"$T"'/a\.data"' "$T/perf.log"
	# and complete: the stream ends as mt-decode writes it to a pipe
	cmp "$T/a.ev" <(mt-decode "$T/a.snap")
	gzip -t "$T/a.fxt.gz"
}
