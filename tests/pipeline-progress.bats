#!/usr/bin/env bats
# Progress in the README's pipeline (issue 8 item 5): with the three
# filters on one terminal, only mt-decode, the first, which knows the share
# of the snapshot decoded, shows a line; mt-symbolize and mt-fxt read a
# pipe and stay silent, so the lines do not overwrite each other.  The
# outputs are those of the same pipeline without a terminal.

load helpers/gen-synth

setup_file() {
	T="$BATS_FILE_TMPDIR"
	gen_synth_build "$T" 3
	"$T/gen-synth" snap -C -S 3 -t 2 -m 1 -e "$T/prog" -o "$T/s.snap"
	mt-decode "$T/s.snap" | mt-symbolize | mt-fxt -o "$T/ref.fxt.gz"
}

@test "pipeline on a terminal: only mt-decode shows progress, the trace is unchanged" {
	T="$BATS_FILE_TMPDIR"
	export MT_PROGRESS_INTERVAL_MS=0
	run script -qec "mt-decode '$T/s.snap' | mt-symbolize | mt-fxt -o '$T/tty.fxt.gz'" /dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\r'"mt-decode: "*"% of "*" events"$'\033[K'* ]]
	[[ "$output" != *"mt-symbolize:"* ]]
	[[ "$output" != *"mt-fxt:"* ]]
	[ "${output: -4}" = $'\r\033[K' ]
	cmp "$T/ref.fxt.gz" "$T/tty.fxt.gz"
}

@test "pipeline on a terminal: a stored event stream shows mt-symbolize's progress alone" {
	T="$BATS_FILE_TMPDIR"
	export MT_PROGRESS_INTERVAL_MS=0
	mt-decode -o "$T/s.ev" "$T/s.snap"
	run script -qec "mt-symbolize < '$T/s.ev' | mt-fxt -o '$T/ev.fxt.gz'" /dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\r'"mt-symbolize: "*"% of "*" events"$'\033[K'* ]]
	[[ "$output" != *"mt-fxt:"* ]]
	cmp "$T/ref.fxt.gz" "$T/ev.fxt.gz"
}
