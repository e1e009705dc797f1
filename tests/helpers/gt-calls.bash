# Shared by tests/mt-capture-emulate.bats and tests/mt-capture-qemu.bats:
# the calls and returns of a backend's --ground-truth log and of the
# decoded event stream, in one form to compare with diff, and the checks
# of a snapshot against the log.  Sourced.

# gt_calls GT SNAPINDEX: the executed calls and returns before snapshot
# SNAPINDEX, as "kind tid from to", per thread in execution order.
gt_calls() {
	awk -v want="$2" '
	    $1 == "snapshot" { if ($2 == want) exit; next }
	    $2 == "call" || $2 == "icall" { print "call", $1, $3, $4 }
	    $2 == "ret" { print "ret", $1, $3, $4 }' "$1" | sort -s -k2,2n
}

# ev_calls EVENTS: mt-decode's calls and returns the same way.
ev_calls() {
	awk '$1 == "call" || $1 == "ret" { print $1, $3, $4, $5 }' "$1" |
	    sort -s -k2,2n
}

# decode_gt PREFIX: PREFIX.snap decodes with no error into PREFIX.ev;
# PREFIX.want then holds the calls and returns of the log PREFIX.gt
# (before snapshot 0), PREFIX.got those of the stream.
decode_gt() {
	run mt-decode --stats -o "$1.ev" "$1.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	gt_calls "$1.gt" 0 > "$1.want"
	ev_calls "$1.ev" > "$1.got"
}

# decodes_to_gt PREFIX: as decode_gt, and the stream's calls and returns
# are the log's, which are not none.
decodes_to_gt() {
	decode_gt "$1"
	[ -s "$1.want" ]
	diff -u "$1.want" "$1.got"
}

# decodes_to_gt_tail PREFIX: as decode_gt for a ring that wrapped: the
# stream's calls and returns are the last ones of the log, not all.
decodes_to_gt_tail() {
	local p=$1 n
	decode_gt "$p"
	[ -s "$p.got" ]
	n=$(wc -l < "$p.got")
	tail -n "$n" "$p.want" | diff -u - "$p.got"
	[ "$n" -lt "$(wc -l < "$p.want")" ]
}
