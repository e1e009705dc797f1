#!/usr/bin/env bats
# mt-symbolize's start-up: elfutils dlopens libdebuginfod (and curl, TLS,
# Kerberos with it) the first time a module has no debug file on this
# host.  Without DEBUGINFOD_URLS libdebuginfod answers nothing, so
# mt-symbolize refuses that load; with it set, the library is loaded as
# before.  The dynamic loader's own trace (LD_DEBUG=files) says what was
# loaded; the output is the same either way.  A binary libdw could find
# no DWARF for is not handed to it at all (strace: libdw opens the file a
# second time).

setup_file() {
	export S="$BATS_FILE_TMPDIR"
	cc -O2 -Wl,--build-id -o "$S/prog" "$MT_ROOT/tests/data/emu/tailchain.c"
	strip -o "$S/prog-s" "$S/prog"
	# Not its debug file, but where libdw looks for one (base name +
	# .debug beside it): libdw is set up, finds nothing, and would ask
	# debuginfod next.
	printf 'not a debug file\n' > "$S/prog-s.debug"
	printf 'mt-events 1.0\nproc 1000 t t\nthread 1000 1001 t\n' > "$S/in.ev"
	printf 'mod 1000 0x555555554000 0x555555560000 0 - %s\n' "$S/prog-s" >> "$S/in.ev"
	printf 'call 1 1001 0x555555555100 0x0\n' >> "$S/in.ev"
}

# traced CALLS LOG CMD...: CMD under strace, its CALLS (any thread) in LOG
# (LeakSanitizer cannot run under ptrace: off for the sanitizer build)
traced() {
	local calls=$1 log=$2
	shift 2
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -e trace="$calls" -o "$log" "$@"
}

@test "mt-symbolize: no libdebuginfod without DEBUGINFOD_URLS, loaded with it, same output" {
	local d="$BATS_TEST_TMPDIR"
	env -u DEBUGINFOD_URLS LD_DEBUG=files \
	    mt-symbolize -o "$d/a.ev" "$S/in.ev" 2> "$d/a.err"
	# The stripped module really went through the debug-file search.
	grep -q '^fn ' "$d/a.ev"
	[ "$(grep -c libdebuginfod "$d/a.err")" -eq 0 ]
	DEBUGINFOD_URLS= LD_DEBUG=files \
	    mt-symbolize -o "$d/b.ev" "$S/in.ev" 2> "$d/b.err"
	[ "$(grep -c libdebuginfod "$d/b.err")" -eq 0 ]
	# A server on a loopback port nobody listens on: the library is
	# loaded (the guard forwards), the query fails, nothing changes.
	XDG_CACHE_HOME="$d/cache" DEBUGINFOD_URLS=http://127.0.0.1:9 \
	    DEBUGINFOD_TIMEOUT=2 LD_DEBUG=files \
	    mt-symbolize -o "$d/c.ev" "$S/in.ev" 2> "$d/c.err"
	grep -q 'file=libdebuginfod' "$d/c.err"
	cmp "$d/a.ev" "$d/b.ev"
	cmp "$d/a.ev" "$d/c.ev"
}

@test "mt-symbolize: libdw is not set up for a binary without DWARF and no debug file to find (strace), names unchanged" {
	local d="$BATS_TEST_TMPDIR" id
	# tailchain.c without -g; its symbol table kept.
	cc -O2 -Wl,--build-id -o "$d/nodw" "$MT_ROOT/tests/data/emu/tailchain.c"
	id=$(readelf -n "$d/nodw" | awk '/Build ID/ { print $3 }')
	sed "s|$S/prog-s|$d/nodw|" "$S/in.ev" > "$d/in.ev"
	# mt opens the binary once (O_NONBLOCK); libdw, set up, opens it
	# again.
	(unset DEBUGINFOD_URLS; traced openat "$d/a.st" \
	    mt-symbolize -o "$d/a.ev" "$d/in.ev")
	[ "$(grep -c "\"$d/nodw\"" "$d/a.st")" -eq 1 ]
	# With a debug file where libdw looks (by build-id under -d), it is
	# set up and reads it; the names are the symbol table's either way.
	mkdir -p "$d/dd/.build-id/${id:0:2}"
	objcopy --only-keep-debug "$d/nodw" "$d/dd/.build-id/${id:0:2}/${id:2}.debug"
	(unset DEBUGINFOD_URLS; traced openat "$d/b.st" \
	    mt-symbolize -d "$d/dd" -o "$d/b.ev" "$d/in.ev")
	[ "$(grep -c "\"$d/nodw\"" "$d/b.st")" -ge 2 ]
	grep -q "${id:2}.debug\"" "$d/b.st"
	grep -q '^fn ' "$d/a.ev"
	diff -u <(grep '^fn ' "$d/a.ev") <(grep '^fn ' "$d/b.ev")
	# Under a debug dir, named after the last directory of the binary's
	# path only: libdw's search tries every tail of that path there.
	mkdir -p "$d/dd2/$(basename "$d")"
	mv "$d/dd/.build-id/${id:0:2}/${id:2}.debug" "$d/dd2/$(basename "$d")/nodw.debug"
	(unset DEBUGINFOD_URLS; traced openat "$d/c.st" \
	    mt-symbolize -d "$d/dd2" -o "$d/c.ev" "$d/in.ev")
	[ "$(grep -c "\"$d/nodw\"" "$d/c.st")" -ge 2 ]
	grep -q "\"$d/dd2/$(basename "$d")/nodw.debug\", O_RDONLY) = [0-9]" "$d/c.st"
	cmp "$d/a.ev" "$d/c.ev"
}

@test "mt-symbolize: DWARF in .zdebug_* sections (compressed the old GNU way) is still read: lines as from .debug_*" {
	local d="$BATS_TEST_TMPDIR" a
	printf 'int work(int x){return x*3;}\nint main(void){return work(2);}\n' > "$d/p.c"
	cc -O0 -g -o "$d/p" "$d/p.c"
	objcopy --compress-debug-sections=zlib-gnu "$d/p" "$d/pz"
	readelf -S -W "$d/pz" | grep -q ' \.zdebug_info '
	a=$(nm "$d/p" | awk '$3 == "work" { print $1 }')
	for f in p pz; do
		printf 'mt-events 1.0\nmod 1 0x555555554000 0x555556554000 0 - %s\ncall 1 1 0x%x 0x0\n' \
		    "$d/$f" $((0x555555554000 + 0x$a)) > "$d/$f.ev"
		mt-symbolize -o "$d/$f.out" "$d/$f.ev"
	done
	grep -qx "file 1 $d/p.c" "$d/pz.out"
	diff -u <(grep '^loc\|^file' "$d/p.out") <(grep '^loc\|^file' "$d/pz.out")
}
