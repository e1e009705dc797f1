#!/usr/bin/env bats
# The ptrace backend under another tool's uprobes: a uprobe is an int3 the
# kernel writes into every process that maps the probed file, so a program
# stepped by `mt-capture --backend emulate` executes it while bpftrace, a
# USDT agent or another mt-capture holds one.  tests/data/emu/uprobe-hold.c
# plays that other tool on a private copy of tests/data/emu/probed.c,
# whose functions count their own calls.

setup_file() {
	export E="$BATS_FILE_TMPDIR"
	cc -O2 -g -no-pie -o "$E/probed" "$MT_ROOT/tests/data/emu/probed.c"
	cc -O2 -o "$E/uprobe-hold" "$MT_ROOT/tests/data/emu/uprobe-hold.c"
}

teardown() {
	[ -n "${HPID:-}" ] && kill "$HPID" 2>/dev/null || true
	true
}

# file_offset FILE SYMBOL: the file offset of SYMBOL's first byte.
file_offset() {
	local va ty off v pa fsz msz
	va=$((16#$(nm "$1" | awk -v s="$2" '$3 == s { print $1 }')))
	while read -r ty off v pa fsz msz _; do
		[ "$ty" = LOAD ] || continue
		if ((va >= v && va < v + fsz)); then
			echo $((va - v + off))
			return 0
		fi
	done < <(readelf -lW "$1")
	return 1
}

# hold FILE [ret:]SYMBOL...: uprobes at each SYMBOL of FILE, held by a process
# HPID until teardown; skips when uprobes cannot be opened here.
hold() {
	local f=$1 s offs=()
	shift
	for s in "$@"; do
		# ret:SYMBOL: a return probe (uretprobe) on SYMBOL
		case $s in
		ret:*) offs+=("r$(file_offset "$f" "${s#ret:}")") ;;
		*) offs+=("$(file_offset "$f" "$s")") ;;
		esac
	done
	"$E/uprobe-hold" "$f" "${offs[@]}" > "$E/hold.out" 2> "$E/hold.err" &
	HPID=$!
	for s in $(seq 100); do
		grep -q '^ready' "$E/hold.out" 2>/dev/null && return 0
		kill -0 "$HPID" 2>/dev/null || break
		sleep 0.1
	done
	skip "needs uprobe perf events (root, CONFIG_UPROBE_EVENTS): $(cat "$E/hold.err")"
}

@test "emulate: instructions under another tool's uprobes run as themselves and decode" {
	local want
	want=$("$E/probed")
	hold "$E/probed" probe_push probe_riprel probe_call
	run mt-capture run -q -b emulate --start-at main \
	    --ground-truth "$E/u.gt" -o "$E/u.snap" -- "$E/probed"
	[ "$status" -eq 0 ]
	[ "$output" = "$want" ]
	# the ground truth shows the probed call itself, never an int3
	run grep -c -E ' (int|async) ' "$E/u.gt"
	[ "$output" -eq 0 ]
	local a
	a=$(nm "$E/probed" | awk '$3 == "probe_call" { print $1 }')
	run grep -c " call 0x${a#"${a%%[!0]*}"} " "$E/u.gt"
	[ "$output" -eq 5 ]
	# mt-decode's calls equal the ground truth's, and each probed
	# function's calls the program's own count
	run mt-decode --stats -o "$E/u.ev" "$E/u.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	diff -u <(awk '$2 == "call" || $2 == "icall" { print "call", $3, $4 }
	    $2 == "ret" { print "ret", $3, $4 }' "$E/u.gt") \
	    <(awk '$1 == "call" || $1 == "ret" { print $1, $4, $5 }' "$E/u.ev")
	local f n
	for f in push riprel call; do
		a=$(nm "$E/probed" | awk -v s="probe_$f" '$3 == s { print $1 }')
		n=$(awk -v a="0x${a#"${a%%[!0]*}"}" '$1 == "call" && $5 == a' \
		    "$E/u.ev" | wc -l)
		[[ "$want" == *"$f $n "* ]]
	done
}

@test "emulate: uretprobes and uprobes together leave the branch log and the instruction count unchanged" {
	# without ASLR both runs execute the same addresses
	setarch -R mt-capture run -q -b emulate --start-at main \
	    --ground-truth "$E/r0.gt" -o "$E/r0.snap" -- "$E/probed" > "$E/r0.out"
	hold "$E/probed" ret:probe_push ret:probe_riprel probe_push probe_riprel \
	    probe_call
	run setarch -R mt-capture run -q -b emulate --start-at main \
	    --ground-truth "$E/r1.gt" -o "$E/r1.snap" -- "$E/probed"
	[ "$status" -eq 0 ]
	[ "$output" = "$(cat "$E/r0.out")" ]
	# the returns go to the callers, not into the [uprobes] page
	diff -u <(cut -d' ' -f2- "$E/r0.gt") <(cut -d' ' -f2- "$E/r1.gt")
	local i0 i1
	i0=$(mt-decode --info "$E/r0.snap" | grep 'emulate-instructions')
	i1=$(mt-decode --info "$E/r1.snap" | grep 'emulate-instructions')
	[ -n "$i0" ]
	[ "$i0" = "$i1" ]
	run mt-decode --stats -o "$E/r1.ev" "$E/r1.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	diff -u <(awk '$2 == "call" || $2 == "icall" { print "call", $3, $4 }
	    $2 == "ret" { print "ret", $3, $4 }' "$E/r1.gt") \
	    <(awk '$1 == "call" || $1 == "ret" { print $1, $4, $5 }' "$E/r1.ev")
}

@test "emulate: the program's own int3 under uprobes still reaches its handler" {
	hold "$E/probed" probe_push
	run mt-capture run -q -b emulate --start-at main \
	    --ground-truth "$E/t.gt" -o "$E/t.snap" -- "$E/probed" int3
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "traps 1" ]
	run grep -c ' int ' "$E/t.gt"
	[ "$output" -eq 1 ]
	run grep -c ' signal ' "$E/t.gt"
	[ "$output" -eq 1 ]
}
