#!/usr/bin/env bats
# Code that replaces other code at the same addresses (issue 18 item 2):
# tests/data/decode/dlreuse/dlreuse loads liba.so, calls into it, unloads
# it and loads libb.so, which the loader maps where liba.so was (the
# program checks and says so).  The decoder must decode each library's
# calls against its own bytes, choosing the image by address and time
# (the sideband's MMAP2 order): the calls and returns into the library
# must number what the two libraries counted themselves, and mt-symbolize
# must name each call after the library mapped there at its time (the
# mod records' times).
# tests/data/qemu/jitswap does the same with JIT code: functions written
# in turn into one page; the calls decoded must be those it counted.

setup_file() {
	export G="$BATS_FILE_TMPDIR"
	local s="$MT_ROOT/tests/data/decode/dlreuse"
	local cf="-O1 -fno-optimize-sibling-calls"
	cc $cf -fPIC -shared -o "$G/liba.so" "$s/liba.c"
	cc $cf -fPIC -shared -o "$G/libb.so" "$s/libb.c"
	cc $cf -o "$G/dlreuse" "$s/dlreuse.c" -ldl
	# QEMU's mmap does not reuse a freed range for a request without
	# an address: libraries linked at one address ask for it there
	mkdir "$G/fix"
	cc $cf -fPIC -shared -Wl,-Ttext-segment=$FIX -o "$G/fix/liba.so" \
	    "$s/liba.c"
	cc $cf -fPIC -shared -Wl,-Ttext-segment=$FIX -o "$G/fix/libb.so" \
	    "$s/libb.c"
	cc -O2 -pthread -o "$G/jitswap" "$MT_ROOT/tests/data/qemu/jitswap.c"
}

FIX=0x600000000	# where the libraries of fix/ are linked

# truth KEY: the value of "KEY value" in the program's output
truth() {
	awk -v k="$1" '$1 == k { print $2 }' "$G/truth"
}

# The value of hex number s ("0x..." or bare digits); mawk has no strtonum.
HEX='function h(s,   i, v) { v = 0; sub(/^0x/, "", s); s = tolower(s)
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v }'

# calls_into LO HI FILE: call records whose target is in [LO, HI)
calls_into() {
	awk -v lo="$1" -v hi="$2" "$HEX"'
	    $1 == "call" && h($5) >= lo && h($5) < hi { n++ }
	    END { print n + 0 }' "$3"
}

# rets_from LO HI FILE: return records from [LO, HI)
rets_from() {
	awk -v lo="$1" -v hi="$2" "$HEX"'
	    $1 == "ret" && h($4) >= lo && h($4) < hi { n++ }
	    END { print n + 0 }' "$3"
}

# calls_to ADDR FILE: call records whose target is ADDR
calls_to() {
	awk -v a="$1" "$HEX"'$1 == "call" && h($5) == a { n++ }
	    END { print n + 0 }' "$2"
}

# offset LIB SYM: the vaddr of SYM in LIB (its offset from the load
# address when LIB is linked at 0) in directory $L
offset() {
	echo $((0x$(nm "$L/$1" | awk -v s="$2" '$3 == s { print $1 }')))
}

# fn_end LIB SYM: the vaddr one past the end of function SYM in LIB
fn_end() {
	nm -S "$L/$1" | awk -v s="$2" '$4 == s { print "0x" $1, "0x" $2 }' |
	    { read -r a n; echo $((a + n)); }
}

# names LO HI FILE: per call into [LO, HI) of the symbolized FILE, in
# order: the base name of its function's DSO, the function's name, and 1
# when the function starts at the call's target
names() {
	awk -v lo="$1" -v hi="$2" "$HEX"'
	    $1 == "fn" { dso[$2] = $4; name[$2] = $5; start[$2] = $3 }
	    $1 == "loc" { split($4, f, ":"); fn[$2] = f[1] }
	    $1 == "call" && h($5) >= lo && h($5) < hi {
		i = fn[substr($7, 2)]; d = dso[i]; sub(/.*\//, "", d)
		print d, name[i], h(start[i]) == h($5) }' "$3"
}

# check_names: dl.ev symbolized names each call into the library after
# the library mapped there at its time: the first calls-a calls liba.so's
# functions, the next calls-b libb.so's (the same names, other addresses)
check_names() {
	mt-symbolize -o dl.sym dl.ev
	names "$lo" "$hi" dl.sym > names
	na=$(truth calls-a)
	nb=$(truth calls-b)
	[ "$(wc -l < names)" -eq $((na + nb)) ]
	head -n "$na" names | sort | uniq -c
	tail -n "$nb" names | sort | uniq -c
	run sh -c "head -n $na names | grep -cvx 'liba.so \(work\|mid\|step\) 1'"
	[ "$output" -eq 0 ]
	run sh -c "tail -n $nb names | grep -cvx 'libb.so \(work\|mid\|step\) 1'"
	[ "$output" -eq 0 ]
	run sh -c "head -n $na names | grep -c ' mid '"
	[ "$output" -eq 20 ]
	run sh -c "tail -n $nb names | grep -c ' mid '"
	[ "$output" -eq 20 ]
}

# check_decode: dl.snap (with the program's output in truth) decodes each
# library's calls against its own code; the libraries are in $L, linked
# at $LINK
check_decode() {
	cat truth
	# the loader really put libb.so where liba.so was
	[ "$(truth reused)" = 1 ]
	run mt-decode --stats -o dl.ev dl.snap
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	base=$(($(truth base-a) - LINK))
	lo=$((base + $(offset liba.so step) < base + $(offset libb.so step) ?
	    base + $(offset liba.so step) : base + $(offset libb.so step)))
	hi=$((base + $(fn_end liba.so work) > base + $(fn_end libb.so work) ?
	    base + $(fn_end liba.so work) : base + $(fn_end libb.so work)))
	want=$(($(truth calls-a) + $(truth calls-b)))
	echo "calls counted by the libraries: $want"
	# [lo, hi): from step() to the end of work(), in either library
	run calls_into "$lo" "$hi" dl.ev
	echo "calls decoded into them: $output"
	[ "$output" -eq "$want" ]
	run rets_from "$lo" "$hi" dl.ev
	[ "$output" -eq "$want" ]
	# each library's mid() is called 20 times, at its own address
	run calls_to $((base + $(offset liba.so mid))) dl.ev
	[ "$output" -eq 20 ]
	run calls_to $((base + $(offset libb.so mid))) dl.ev
	[ "$output" -eq 20 ]
	# the same records decoded in one thread, and in parallel
	mt-decode -j 1 -o dl1.ev dl.snap
	cmp dl.ev dl1.ev
	mt-decode -j 2 -o dl2.ev dl.snap
	cmp dl.ev dl2.ev
	check_names
}

@test "mt-decode, mt-symbolize: a library loaded where an unloaded one was decodes against its own code, named after it (emulate)" {
	cd "$G"
	run mt-capture run -q -b emulate --start-at main -s 64M \
	    -o dl.snap -- ./dlreuse ./liba.so ./libb.so
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > truth
	L=$G LINK=0 check_decode
}

@test "mt-decode, mt-symbolize: a library loaded where an unloaded one was decodes against its own code, named after it (qemu)" {
	command -v qemu-x86_64 > /dev/null ||
	    skip "needs qemu-x86_64 (Debian package qemu-user)"
	cd "$G"
	run mt-capture run -q -b qemu -s 64M -o dl.snap -- \
	    ./dlreuse fix/liba.so fix/libb.so
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > truth
	L=$G/fix LINK=$FIX check_decode
}

# check_jit TIMING ARGS [BLOBS]: jitswap ARGS (rounds) captured with
# --timing TIMING (backend $B, default qemu) decodes into the calls it
# counted, against each version of its code in turn; the snapshot has at
# least BLOBS (default 5) JIT BLOBs with a time, and the anonymous memory
# they were written to is no warning: its code is in them
check_jit() {
	run mt-capture run -q -b "${B:-qemu}" --all-threads --timing "$1" \
	    -s 64M -o jit.snap -- ./jitswap $2
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > truth
	cat truth
	# a BLOB per version written over another, each from its time
	run mt-decode --info jit.snap
	[ "$(grep -c 'blob kind 2 .*\[jit\] from time' <<< "$output")" -ge \
	    "${3:-5}" ]
	run mt-decode --stats -o jit.ev jit.snap
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"errors: 0"* ]]
	[[ "$output" != *"warning"* ]]
	jit=$(($(truth jit)))
	run calls_to "$jit" jit.ev
	echo "calls of the JIT code: decoded $output, counted $(truth calls-jit)"
	[ "$output" -eq "$(truth calls-jit)" ]
	run rets_from "$jit" $((jit + 64)) jit.ev
	[ "$output" -eq "$(truth calls-jit)" ]
	run calls_to $(($(truth cb-a))) jit.ev
	echo "calls of cb_a (from A): decoded $output, counted $(truth calls-a)"
	[ "$output" -eq "$(truth calls-a)" ]
	run calls_to $(($(truth cb-b))) jit.ev
	echo "calls of cb_b (from B): decoded $output, counted $(truth calls-b)"
	[ "$output" -eq "$(truth calls-b)" ]
	mt-decode -j 1 -o jit1.ev jit.snap
	cmp jit.ev jit1.ev
	mt-decode -j 2 -o jit2.ev jit.snap
	cmp jit.ev jit2.ev
}

@test "mt-decode: JIT code written over other JIT code decodes against each version in turn (qemu)" {
	command -v qemu-x86_64 > /dev/null ||
	    skip "needs qemu-x86_64 (Debian package qemu-user)"
	cd "$G"
	# CYC dates the old code's branches; without it only MTC and TSC
	check_jit cyc=1 "5 4 3 2 1 3"
	check_jit cyc=0 "5 4 3 2 1 3"
	# 64 versions, a few instructions apart: libipt's CYC clock must
	# not run ahead (the cycles between two MTCs are their CTC's)
	check_jit cyc=1 "$(printf '2 %.0s' $(seq 64))"
	# two threads with clocks of their own run each version: one's
	# clock jumps to the other's
	check_jit cyc=1 "-t 300 200 100 50 7 9"
	check_jit cyc=0 "-t 300 200 100 50 7 9"
}

# The ptrace backend steps about 20,000 instructions a second: a few
# rounds.  It records the page of each instruction it runs in memory no
# file holds, again when the bytes changed (emu-jit.c).
@test "mt-decode: JIT code written over other JIT code decodes against each version in turn (emulate)" {
	cd "$G"
	B=emulate check_jit cyc=1 "5 4 3 2 1 3" 6
	B=emulate check_jit cyc=0 "5 4 3 2 1 3" 6
	B=emulate check_jit cyc=1 "$(printf '2 %.0s' $(seq 16))" 6
	# two threads run each version, one after the other wrote it
	B=emulate check_jit cyc=1 "-t 3 2 4 1" 4
	B=emulate check_jit cyc=0 "-t 3 2 4 1" 4
}

# A system call the clock jumps over (a 20 ms sleep in each round, after
# its first call), then the same code again, then new code: the enable
# after the sleep writes PSB+, and unless a CYC counts the cycles of the
# jump first, libipt's CYC calibration (across the PSB+, to the first MTC
# after it) dated the calls after it thousands of ticks ahead, into the
# next version's time (docs/emulate.md; under load, any system call).
@test "mt-decode: JIT code run right after a system call the clock jumped over decodes against its own version (emulate)" {
	cd "$G"
	B=emulate check_jit cyc=1 "-s 5 4 5 4 5 4" 6
	[ "$(truth calls-jit)" -eq 27 ]
}

@test "mt-decode: JIT code written once decodes from its BLOB (emulate)" {
	cd "$G"
	B=emulate check_jit cyc=1 "6" 1
	[ "$(truth calls-jit)" -eq 6 ]
	[ "$(truth calls-a)" -eq 18 ]
}

# perf_calls_to ADDR FILE: calls to ADDR in perf script's "-F flags,ip,addr"
perf_calls_to() {
	awk -v a="$1" "$HEX"'$1 == "call" && h($NF) == a { n++ }
	    END { print n + 0 }' "$2"
}

# check_export BACKEND: jitswap captured with BACKEND, exported to
# perf.data, decodes in perf script (perf's own decoder, which shares no
# code with mt-decode) into the calls the program counted
check_export() {
	command -v perf > /dev/null && perf version > /dev/null 2>&1 ||
	    skip "needs perf (Debian linux-perf) as the independent decoder"
	cd "$G"
	run mt-capture run -q -b "$1" -s 64M -o pj.snap -- ./jitswap 5 4 3 2
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > truth
	rm -rf pj.data pj.data.files
	mt-capture export-perf -o pj.data pj.snap
	perf script -i pj.data --itrace=be -F flags,ip,addr > pj.perf 2>&1
	run grep -c 'instruction trace error' pj.perf
	[ "$output" -eq 0 ]
	run perf_calls_to $(($(truth jit))) pj.perf
	echo "calls of the JIT code: perf $output, counted $(truth calls-jit)"
	[ "$output" -eq "$(truth calls-jit)" ]
	run perf_calls_to $(($(truth cb-a))) pj.perf
	[ "$output" -eq "$(truth calls-a)" ]
	run perf_calls_to $(($(truth cb-b))) pj.perf
	[ "$output" -eq "$(truth calls-b)" ]
}

@test "export-perf: JIT code written over other JIT code is mapped at its time, perf script decodes it into the program's calls (qemu)" {
	command -v qemu-x86_64 > /dev/null ||
	    skip "needs qemu-x86_64 (Debian package qemu-user)"
	check_export qemu
}

@test "export-perf: JIT code written over other JIT code is mapped at its time, perf script decodes it into the program's calls (emulate)" {
	check_export emulate
}
