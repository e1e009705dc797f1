#!/usr/bin/env bats
# mt-symbolize keeps the inflated copy of a debug file (dbgcopy.h) in
# the mt cache directory, DIR/.build-id/xx/rest.debug.mt-inflated, and
# reads it instead of inflating again: the same bytes out with the copy
# made in memory, stored, read back, and after the cached file was
# damaged (made again); --no-debug-cache and MT_DEBUG_CACHE_MIB=0 turn
# the copies' cache off, MT_DEBUG_CACHE_MIB bounds it (oldest removed
# first).  Whether the copy was made is read from the
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

# run_sym NAME CACHE-DIR [OPTION...]: mt-symbolize of in.ev into NAME.ev
# under strace; prints how many memfd_create calls it made.
run_sym() {
	local name=$1 dir=$2
	shift 2
	MT_CACHE_DIR="$dir" strace -f -qq -e trace=memfd_create \
	    -o "$S/$name.st" mt-symbolize "$@" -o "$S/$name.ev" "$S/in.ev"
	grep -c memfd_create "$S/$name.st" || true
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

@test "mt-symbolize: a cached copy cut short or with a damaged header is made again, output unchanged" {
	local size
	[ "$(run_sym first "$S/cache")" -le 1 ]
	[ -f "$CACHED" ]
	size=$(stat -c %s "$CACHED")
	# The section header table (the copy's last bytes before the
	# 48-byte trailer) zeroed in part.
	dd if=/dev/zero of="$CACHED" bs=1 seek=$((size - 48 - 512)) \
	    count=256 conv=notrunc status=none
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

@test "mt-symbolize: --no-debug-cache and MT_DEBUG_CACHE_MIB=0 neither read nor keep copies" {
	[ "$(run_sym first "$S/c1")" -eq 1 ]
	[ -f "$S/c1/${CACHED#"$S/cache/"}" ]
	# A whole copy is there, but not read: made in memory.
	[ "$(run_sym off "$S/c1" --no-debug-cache)" -eq 1 ]
	[ "$(MT_DEBUG_CACHE_MIB=0 run_sym zero "$S/c1")" -eq 1 ]
	# And none is written.
	[ "$(run_sym off2 "$S/c2" --no-debug-cache)" -eq 1 ]
	[ "$(MT_DEBUG_CACHE_MIB=0 run_sym zero2 "$S/c2")" -eq 1 ]
	[ ! -e "$S/c2/.build-id" ]
	cmp "$S/first.ev" "$S/off.ev"
	cmp "$S/first.ev" "$S/zero.ev"
	cmp "$S/first.ev" "$S/off2.ev"
	# --help lists the option.
	run mt-symbolize --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--no-debug-cache"* ]]
}

@test "mt-symbolize: MT_DEBUG_CACHE_MIB bounds the copies, the oldest removed first" {
	local c="$S/cap" rel size
	rel=${CACHED#"$S/cache/"}
	mkdir -p "$c/.build-id/01" "$c/.build-id/02" "$c/.build-id/03"
	head -c 1048576 /dev/zero > "$c/.build-id/01/old.debug.mt-inflated"
	head -c 1048576 /dev/zero > "$c/.build-id/02/new.debug.mt-inflated"
	head -c 4194304 /dev/zero > "$c/.build-id/03/other.debug"
	touch -d '2 days ago' "$c/.build-id/01/old.debug.mt-inflated"
	touch -d '1 day ago' "$c/.build-id/02/new.debug.mt-inflated"
	touch -d '3 days ago' "$c/.build-id/03/other.debug"
	# Too small for libc's copy (about 13 MB): not kept, nothing removed.
	[ "$(MT_DEBUG_CACHE_MIB=1 run_sym small "$c")" -eq 1 ]
	[ ! -e "$c/$rel" ]
	[ -f "$c/.build-id/01/old.debug.mt-inflated" ]
	# Room for the copy and one MiB more: the oldest copy goes, the
	# newer one and the file that is no copy stay.
	size=$(stat -c %s "$CACHED")
	[ "$(MT_DEBUG_CACHE_MIB=$(( (size >> 20) + 2 )) run_sym capped "$c")" -eq 1 ]
	[ -f "$c/$rel" ]
	[ ! -e "$c/.build-id/01/old.debug.mt-inflated" ]
	[ -f "$c/.build-id/02/new.debug.mt-inflated" ]
	[ -f "$c/.build-id/03/other.debug" ]
	[ "$(MT_DEBUG_CACHE_MIB=$(( (size >> 20) + 2 )) run_sym read "$c")" -eq 0 ]
	cmp "$S/small.ev" "$S/capped.ev"
	cmp "$S/small.ev" "$S/read.ev"
}

@test "mt-symbolize: a MT_DEBUG_CACHE_MIB that is no number is a usage error" {
	MT_DEBUG_CACHE_MIB=12M run mt-symbolize -o "$S/bad.ev" "$S/in.ev"
	[ "$status" -eq 2 ]
	[[ "$output" == *"MT_DEBUG_CACHE_MIB"*"12M"* ]]
	[ ! -e "$S/bad.ev" ]
}
