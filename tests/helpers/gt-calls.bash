# Shared by tests/mt-capture-emulate.bats and tests/mt-capture-qemu.bats:
# the calls and returns of a backend's --ground-truth log and of the
# decoded event stream, in one form to compare with diff, and the check
# of a wrapped ring against the log.  Sourced.

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

# decodes_to_gt_tail PREFIX: PREFIX.snap, whose ring wrapped, decodes with
# no error into PREFIX.ev, whose calls and returns are the last ones of
# PREFIX.gt (before snapshot 0), not all of them.
decodes_to_gt_tail() {
	local p=$1 n
	run mt-decode --stats -o "$p.ev" "$p.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	gt_calls "$p.gt" 0 > "$p.want"
	ev_calls "$p.ev" > "$p.got"
	[ -s "$p.got" ]
	n=$(wc -l < "$p.got")
	tail -n "$n" "$p.want" | diff -u - "$p.got"
	[ "$n" -lt "$(wc -l < "$p.want")" ]
}
