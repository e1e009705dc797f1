#!/usr/bin/env bats
# mt-symbolize keeps the inflated copy of a debug file (dbgcopy.h) in
# the mt cache directory, DIR/.build-id/xx/rest.debug.mt-inflated, and
# reads it instead of inflating again: the same bytes out with the copy
# made in memory, stored, read back, and after the cached file was
# damaged (made again).  Whether the copy was made is read from the
# system calls (strace: memfd_create is the in-memory copy).  Needs
# libc6-dbg (in make deps), whose DWARF is zlib-compressed.

LIBC=/usr/lib/x86_64-linux-gnu/libc.so.6

setup_file() {
	export S="$BATS_FILE_TMPDIR"
	local id a n=0
	id=$(readelf -n "$LIBC" | awk '/Build ID/ { print $3 }')
	export DBG="/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	export CACHED="$S/cache/.build-id/${id:0:2}/${id:2}.debug.mt-inflated"
	[ -f "$DBG" ] || return 0
	# A call from inside each of 200 of libc's exported functions, libc
	# mapped whole at 0x7f0000000000.
	{
		printf 'mt-events 1.0\nproc 1000 t t\nthread 1000 1001 t\n'
		printf 'mod 1000 0x7f0000000000 0x7f0000400000 0 %s %s\n' "$id" "$LIBC"
		nm -D --defined-only "$LIBC" | awk '$2 == "T" { print $1 }' |
		    sort -u | head -200 | while read -r a; do
			printf 'call 1 1001 0x%x 0x0\n' $((0x7f0000000000 + 0x$a + 1))
		done
	} > "$S/in.ev"
}

setup() {
	[ -f "$DBG" ] || skip "needs libc6-dbg's debug file of $LIBC"
}

# run_sym NAME CACHE-DIR: mt-symbolize of in.ev into NAME.ev under
# strace; prints how many memfd_create calls it made.
run_sym() {
	MT_CACHE_DIR="$2" strace -f -qq -e trace=memfd_create -o "$S/$1.st" \
	    mt-symbolize -o "$S/$1.ev" "$S/in.ev"
	grep -c memfd_create "$S/$1.st" || true
}

@test "mt-symbolize: the inflated debug file is stored once, read back, and gives the same output" {
	# No cache (its directory cannot be made): the copy in memory.
	[ "$(run_sym none /dev/null/none)" -eq 1 ]
	# libc's DWARF was used: lines and inlined frames.
	grep -q '^file ' "$S/none.ev"
	[ "$(awk '$1 == "loc" && NF > 3' "$S/none.ev" | wc -l)" -gt 10 ]
	[ ! -e "$CACHED" ]
	[ "$(run_sym first "$S/cache")" -eq 1 ]
	[ -f "$CACHED" ]
	[ "$(run_sym second "$S/cache")" -eq 0 ]
	cmp "$S/none.ev" "$S/first.ev"
	cmp "$S/none.ev" "$S/second.ev"
}

@test "mt-symbolize: a damaged cached copy is made again, output unchanged" {
	local size
	[ "$(run_sym first "$S/cache")" -le 1 ]
	[ -f "$CACHED" ]
	size=$(stat -c %s "$CACHED")
	# A page in the middle of the DWARF zeroed, as a crash may leave one.
	dd if=/dev/zero of="$CACHED" bs=1 seek=$((size / 2)) count=4096 \
	    conv=notrunc status=none
	[ "$(run_sym damaged "$S/cache")" -eq 1 ]
	[ "$(run_sym again "$S/cache")" -eq 0 ]
	# Cut short.
	truncate -s $((size - 1)) "$CACHED"
	[ "$(run_sym cut "$S/cache")" -eq 1 ]
	[ "$(stat -c %s "$CACHED")" -eq "$size" ]
	cmp "$S/first.ev" "$S/damaged.ev"
	cmp "$S/first.ev" "$S/again.ev"
	cmp "$S/first.ev" "$S/cut.ev"
}
