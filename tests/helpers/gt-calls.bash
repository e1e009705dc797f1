# Shared by tests/mt-capture-emulate.bats and tests/mt-capture-qemu.bats:
# the calls and returns of a backend's --ground-truth log and of the
# decoded event stream, in one form to compare with diff.  Sourced.

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
