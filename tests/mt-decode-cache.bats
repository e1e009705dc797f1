#!/usr/bin/env bats
# mt-decode's cached decoder (mt-decode/cfg.c, the default; with perf time
# through the model of libipt's block cache, fill.c) against libipt's
# block decoder (--no-cache): the same
# event stream byte for byte, the same instruction and event counts, on
# every kind of trace the suite has.  libipt is the oracle: its stream is
# what tests/mt-decode-real.bats and tests/data/decode/*.expected check.

load helpers/gen-synth
load helpers/real-pt

setup_file() {
	T="$BATS_FILE_TMPDIR"
	gen_synth_build "$T" 7
	# perf time: TSC only (3 threads, a TSC packet after every 4th TNT
	# packet too), MTC (2 threads, no CYC) and CYC (2 threads)
	"$T/gen-synth" snap -C -T 4 -S 7 -t 3 -m 1 -e "$T/prog" -o "$T/tsc.snap"
	"$T/gen-synth" snap -C -M -S 7 -t 2 -m 1 -e "$T/prog" -o "$T/mtc.snap"
	"$T/gen-synth" snap -S 7 -t 2 -m 1 -e "$T/prog" -o "$T/cyc.snap"
	cc -O1 -o "$T/ptgen" "$MT_ROOT/tests/helpers/ptgen.c" -lipt
	"$T/ptgen" code "$T/code.bin"
}

setup() {
	T="$BATS_FILE_TMPDIR"
}

# same SNAP [mt-decode options]: the cached decoder writes libipt's
# stream, with the same counters but libipt's block count and the walks;
# the cached decoder's own counters go to $T/cache
same() {
	local snap=$1
	shift
	run mt-decode "$@" --no-cache -s -o "$T/lib.ev" "$snap"
	[ "$status" -eq 0 ]
	[[ "$output" != *cache-* ]]
	lib=$(grep -v -e '^blocks' -e '^walk' <<<"$output")
	run mt-decode "$@" -s -o "$T/cache.ev" "$snap"
	[ "$status" -eq 0 ]
	cmp "$T/lib.ev" "$T/cache.ev"
	grep '^cache-' <<<"$output" > "$T/cache" || true
	[ "$(grep -v -e '^blocks' -e '^walk' -e '^cache-' <<<"$output")" = "$lib" ]
	# to the null device the stream is written in place, not staged,
	# and a buffer given back to libipt is not cut off it: same counters
	# (but blocks and walks, which -j's seams move)
	local cached
	cached=$(grep -v -e '^blocks' -e '^walk' <<<"$output")
	run mt-decode "$@" -s -o /dev/null "$snap"
	[ "$status" -eq 0 ]
	[ "$(grep -v -e '^blocks' -e '^walk' <<<"$output")" = "$cached" ]
}

@test "mt-decode cache: the real traces decode to libipt's stream, all through the cache" {
	[ -f "$RP/unzip/trace" ] || skip "needs the real traces in $RP"
	real_pt_snap unzip "$T/unzip.snap"
	real_pt_snap mruby "$T/mruby.snap"
	for n in unzip mruby; do
		for o in -q --all-branches; do
			same "$T/$n.snap" $o
			[ "$(cat "$T/cache")" = "cache-buffers: 1
cache-fallbacks: 0" ]
		done
	done
	# not a trivial stream: the overflow, the filter gaps, the calls
	run grep -c -e '^call ' -e '^ret ' -e '^enable ' -e '^disable ' -e '^overflow ' "$T/cache.ev"
	[ "$output" -eq 105189 ]
}

@test "mt-decode cache: past its bound of walks it gives the buffer back to libipt and says so" {
	[ -f "$RP/unzip/trace" ] || skip "needs the real traces in $RP"
	[ -f "$T/unzip.snap" ] || real_pt_snap unzip "$T/unzip.snap"
	MT_DECODE_CACHE_WALKS=50 same "$T/unzip.snap"
	[ "$(cat "$T/cache")" = "cache-buffers: 0
cache-fallbacks: 1
cache-full: 1" ]
}

@test "mt-decode cache: -j 2 workers decode the segments of a split real trace through the cache" {
	[ -f "$RP/unzip/trace" ] || skip "needs the real traces in $RP"
	real_pt_snap mruby "$T/mruby2.snap"
	mt-decode --no-cache -o "$T/lib.ev" "$T/mruby2.snap"
	for j in 2 3; do
		MT_DECODE_SEGMENT_BYTES=65536 run mt-decode -j $j -s -o "$T/j.ev" "$T/mruby2.snap"
		[ "$status" -eq 0 ]
		cmp "$T/lib.ev" "$T/j.ev"
		[[ "$output" == *"cache-fallbacks: 0"* ]]
		[[ "$output" != *"cache-buffers: 0"* ]]
		[[ "$output" == *"segment-joins: "* ]]
	done
}

# Damaged traces send the decode into the middle of instructions, into
# resyncs and errors: whatever the cached decoder does not handle exactly
# as libipt it must give back (a mutation of this kind found an invalid
# VEX that libipt refuses and the walk had taken).
@test "mt-decode cache: damaged real traces decode to libipt's stream" {
	[ -f "$RP/mruby/trace" ] || skip "needs the real traces in $RP"
	python3 - "$RP/mruby/trace" "$T" <<'PY'
import random, sys
data = open(sys.argv[1], 'rb').read()
random.seed(11)
for i in range(20):
    d = bytearray(data)
    if i % 3 == 0:
        for _ in range(2):
            p = random.randrange(len(d))
            d[p] = random.randrange(256)
    elif i % 3 == 1:
        p = random.randrange(len(d))
        del d[p:p + random.randrange(1, 50)]
    else:
        d = d[:random.randrange(len(d))]
    open('%s/m%d.pt' % (sys.argv[2], i), 'wb').write(bytes(d))
PY
	used=0
	for i in $(seq 0 19); do
		mt-capture import-raw --pt "$T/m$i.pt" \
			--pages "$RP/mruby/addr,$RP/mruby/dump" \
			--filter 0x400000-0x4b6000 -o "$T/m.snap"
		same "$T/m.snap" --all-branches
		grep -q 'cache-buffers: 1' "$T/cache" && used=$((used + 1))
	done
	# both paths were taken: through the cache and given back
	[ "$used" -gt 3 ] && [ "$used" -lt 20 ]
}

# Straight-line code runs from page to page there, and an instruction
# that straddles two sections (libipt's truncated block) sends the buffer
# back to libipt.
@test "mt-decode cache: a section per page (pages as separate images) gives the same stream" {
	[ -f "$RP/unzip/trace" ] || skip "needs the real traces in $RP"
	real_pt_page_snap unzip "$T/unzip-pages.snap"
	same "$T/unzip-pages.snap"
	[ "$(cat "$T/cache")" = "cache-buffers: 0
cache-fallbacks: 1" ]
}

# mt's own query layer (mt-decode/pq.c) decodes the packets of all but
# "timing", whose TSC it leaves to libipt's query decoder
# (cache-libipt-query); "nomode" has no MODE.Exec, where libipt decodes no
# instruction (the cached decoder took such code as 64-bit before).
@test "mt-decode cache: every synthetic scenario decodes to libipt's stream; errors go back to libipt" {
	for s in calls ipcomp psb ovf nomap corrupt midpacket syscall kernel irq \
		filter filtercall tailcall tsx packets timing nomode; do
		"$T/ptgen" "$s" "$T/$s.pt"
		f=()
		[ "$s" = filter ] && f=(--filter 0x400000-0x400fff)
		(cd "$T" && mt-capture import-raw --pt "$s.pt" ${f[@]+"${f[@]}"} \
			code.bin@0x400000 -o "$s.snap")
		same "$T/$s.snap"
		same "$T/$s.snap" --all-branches
		case $s in
		nomap|corrupt|nomode)	# a decode error
			# (psb and tsx: a PSB+'s MODE.Exec binds inside a
			# block, where the cached decoder moves as libipt
			# does)
			[ "$(cat "$T/cache")" = "cache-buffers: 0
cache-fallbacks: 1" ] ;;
		timing)	[ "$(cat "$T/cache")" = "cache-buffers: 1
cache-fallbacks: 0
cache-libipt-query: 1" ] ;;
		*)	[ "$(cat "$T/cache")" = "cache-buffers: 1
cache-fallbacks: 0" ] ;;
		esac
	done
	# from a pipe too: the code then comes from a memfd
	mt-decode -o "$T/pipe.ev" - < "$T/irq.snap"
	mt-decode --no-cache -o "$T/pipe-lib.ev" - < "$T/irq.snap"
	cmp "$T/pipe.ev" "$T/pipe-lib.ev"
}

# With perf time a call's time depends on where libipt's block decoder
# ends its blocks, which its block cache decides: the cached decoder
# ends its blocks where its model of that cache says (fill.c).  Each
# trace below needs the model: without it (MT_DECODE_NO_FILL) the stream
# differs, so the comparison with --no-cache checks the model.
@test "mt-decode cache: traces with perf time (TSC, MTC, CYC) decode through the cache to libipt's stream" {
	for n in tsc:3 mtc:2 cyc:2; do
		snap=$T/${n%:*}.snap
		same "$snap"
		[ "$(cat "$T/cache")" = "cache-buffers: ${n#*:}
cache-fallbacks: 0" ]
		grep -q '^info clock perf' "$T/cache.ev"
		MT_DECODE_NO_FILL=1 mt-decode -o "$T/nofill.ev" "$snap"
		run cmp -s "$T/lib.ev" "$T/nofill.ev"
		[ "$status" -eq 1 ]
		same "$snap" --all-branches
		[ "$(cat "$T/cache")" = "cache-buffers: ${n#*:}
cache-fallbacks: 0" ]
	done
}

# MTC and CYC: every buffer, and under -j every unit, has a fresh image
# view (parallel.h), so a model of its own; TSC only: one model for all
# the buffers, at one job (under -j N libipt's decoders fill the caches
# in any order: libipt decodes).
@test "mt-decode cache: timed traces under -j, split into segments too" {
	for snap in "$T/mtc.snap" "$T/cyc.snap"; do
		for j in 1 2 3; do
			MT_DECODE_SEGMENT_BYTES=65536 same "$snap" -j $j
			grep -q '^cache-fallbacks: 0$' "$T/cache"
			# more units than buffers: the segments went through
			# the cache
			[ "$(sed -n 's/^cache-buffers: //p' "$T/cache")" -gt 2 ]
		done
		same "$snap" -j 2
		[ "$(cat "$T/cache")" = "cache-buffers: 2
cache-fallbacks: 0" ]
	done
	# (not compared: with one block cache for all, libipt's own stream
	# under -j 2 depends on the order its workers fill it in)
	run mt-decode -j 2 -s -o /dev/null "$T/tsc.snap"
	[ "$status" -eq 0 ]
	[[ "$output" != *cache-* ]]
}

# TSC only: libipt's block cache is one for the whole run, so a buffer
# given back to libipt must find in it what libipt's own decode of the
# buffers before would have left (they went through the cached decoder:
# they are decoded again by libipt first, output dropped), and the
# buffers after it go to libipt too.  The bound of the walk cache gives
# a buffer back after the first one or two went through.
@test "mt-decode cache: TSC only, a buffer given back after others went through the cache" {
	run mt-decode -s -o /dev/null "$T/tsc.snap"
	[ "$status" -eq 0 ]
	walks=$(sed -n 's/^walks: //p' <<<"$output")
	seen=
	for b in $(seq $((walks - 400)) 20 "$walks"); do
		MT_DECODE_CACHE_WALKS=$b same "$T/tsc.snap"
		case $(tr '\n' ' ' < "$T/cache") in
		"cache-buffers: 1 cache-fallbacks: 1 "*) seen+=1 ;;
		"cache-buffers: 2 cache-fallbacks: 1 "*) seen+=2 ;;
		esac
	done
	[[ "$seen" == *1* && "$seen" == *2* ]]
}

# The software backends' captures have perf time (their virtual clock's
# TSC, MTC and CYC): the same stream with and without the cache, and
# through the cache (their mappings, seen again after the exec, are one
# section each).
@test "mt-decode cache: emulate and qemu captures decode through the cache to libipt's stream" {
	command -v qemu-x86_64 > /dev/null || skip "needs qemu-x86_64 (qemu-user)"
	cc -O1 -o "$T/recurse" "$MT_ROOT/tests/data/emu/recurse.c"
	mt-capture run -q -b qemu -o "$T/q.snap" -- "$T/recurse"
	mt-capture run -q -b emulate -o "$T/e.snap" -- "$T/recurse"
	for snap in "$T/q.snap" "$T/e.snap"; do
		same "$snap"
		[ "$(cat "$T/cache")" = "cache-buffers: 1
cache-fallbacks: 0" ]
		same "$snap" --all-branches -j 2
		[ "$(cat "$T/cache")" = "cache-buffers: 1
cache-fallbacks: 0" ]
		grep -q '^info clock perf' "$T/cache.ev"
		[ "$(grep -c '^call ' "$T/cache.ev")" -gt 10 ]
	done
}
