#!/usr/bin/env bats
# mt-symbolize's start-up: elfutils dlopens libdebuginfod (and curl, TLS,
# Kerberos with it) the first time a module has no debug file on this
# host.  Without DEBUGINFOD_URLS libdebuginfod answers nothing, so
# mt-symbolize refuses that load; with it set, the library is loaded as
# before.  The dynamic loader's own trace (LD_DEBUG=files) says what was
# loaded; the output is the same either way.

setup_file() {
	export S="$BATS_FILE_TMPDIR"
	cc -O2 -Wl,--build-id -o "$S/prog" "$MT_ROOT/tests/data/emu/tailchain.c"
	strip -o "$S/prog-s" "$S/prog"
	printf 'mt-events 1.0\nproc 1000 t t\nthread 1000 1001 t\n' > "$S/in.ev"
	printf 'mod 1000 0x555555554000 0x555555560000 0 - %s\n' "$S/prog-s" >> "$S/in.ev"
	printf 'call 1 1001 0x555555555100 0x0\n' >> "$S/in.ev"
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
