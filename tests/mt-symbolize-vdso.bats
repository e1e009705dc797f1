#!/usr/bin/env bats
# vDSO functions get their names: the snapshot carries the vDSO's bytes,
# mt-decode gives its mod record the image's build-id and stores the image
# in the build-id cache, where mt-symbolize reads its ELF symbols.  The
# truth: the kernel's vDSO itself (tests/helpers/vdso-dump, read with
# binutils' readelf), the names vdso(7) documents for x86-64, and the
# program's own loop count.

setup_file() {
	export V="$BATS_FILE_TMPDIR"
	export MT_CACHE_DIR="$V/cache"
	cc -O2 -g -o "$V/clock" "$MT_ROOT/tests/data/emu/clock.c"
	"$MT_ROOT/tests/helpers/vdso-dump" > "$V/vdso.so"
	mt-capture run -q -b emulate --start-at main -o "$V/clock.snap" \
	    -- "$V/clock"
	mt-decode -o "$V/clock.ev" "$V/clock.snap"
}

@test "mt-decode: the [vdso] mod carries the build-id of the kernel's vDSO and the image goes into the cache" {
	local id
	id=$(readelf -n "$V/vdso.so" | awk '/Build ID/ { print $3 }')
	[ -n "$id" ]
	run awk '$1 == "mod" && $7 == "[vdso]" { print $6 }' "$V/clock.ev"
	[ -n "$output" ]
	[ "$(sort -u <<< "$output")" = "$id" ]
	cmp "$V/vdso.so" "$MT_CACHE_DIR/.build-id/${id:0:2}/${id:2}"
}

@test "mt-symbolize: calls into the vDSO are __vdso_clock_gettime and __vdso_gettimeofday, as often as the program called them" {
	run mt-symbolize -o "$V/clock.sym" "$V/clock.ev"
	[ "$status" -eq 0 ]
	run "$MT_ROOT/tests/helpers/gt-stacks" calls "$V/clock.sym" \
	    __vdso_clock_gettime __vdso_gettimeofday
	[ "$output" = "calls __vdso_clock_gettime 3
calls __vdso_gettimeofday 3" ]
	# the function starts where the vDSO's own symbol table says
	local base off
	base=$(awk '$1 == "mod" && $7 == "[vdso]" { print $3; exit }' "$V/clock.sym")
	off=$(readelf --dyn-syms -W "$V/vdso.so" |
	    awk '$8 ~ /^__vdso_clock_gettime@/ { print $2 }')
	run awk '$1 == "fn" && $5 == "__vdso_clock_gettime" { print $3 }' "$V/clock.sym"
	[ "$output" = "$(printf '0x%x' $((base + 0x$off)))" ]
}

@test "mt-symbolize: without the cached image the vDSO's code stays unknown" {
	MT_CACHE_DIR="$V/empty" run mt-symbolize -q "$V/clock.ev"
	[ "$status" -eq 0 ]
	[[ "$output" != *"__vdso_clock_gettime"* ]]
	[[ "$output" == *"(%5Bvdso%5D)]"* || "$output" == *"([vdso])]"* ]]
}
