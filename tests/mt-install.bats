#!/usr/bin/env bats
# make install: programs, man pages and bash completion land under PREFIX,
# and every man page renders.

setup() {
	tmp=$(mktemp -d)
}

teardown() {
	rm -rf "$tmp"
}

@test "make install puts programs, man pages and completions under PREFIX" {
	run make -C "$MT_ROOT" --no-print-directory O="$MT_BUILD" \
	    SANITIZE="${MT_SANITIZE:-}" install PREFIX="$tmp/usr"
	[ "$status" -eq 0 ]
	for p in mt-capture mt-decode mt-symbolize mt-fxt; do
		[ -x "$tmp/usr/bin/$p" ]
		[ -f "$tmp/usr/share/man/man1/$p.1" ]
		[ -f "$tmp/usr/share/bash-completion/completions/$p" ]
	done
	[ -f "$tmp/usr/share/man/man5/mt-snapshot.5" ]
	[ -f "$tmp/usr/share/man/man5/mt-events.5" ]
	# the qemu backend's plugin, where the installed mt-capture finds it
	[ -f "$tmp/usr/lib/mt/mt-qemu.so" ]
	if command -v qemu-x86_64 > /dev/null; then
		cc -O1 -o "$tmp/prog" "$MT_ROOT/tests/data/emu/fnptr.c"
		run "$tmp/usr/bin/mt-capture" run -q -b qemu -o "$tmp/p.snap" \
		    -- "$tmp/prog"
		[ "$status" -eq 0 ]
		run "$tmp/usr/bin/mt-decode" --stats -o /dev/null "$tmp/p.snap"
		[[ "$output" == *"errors: 0"* ]]
	fi
}

@test "every man page renders without warnings and has the standard sections" {
	for f in "$MT_ROOT"/docs/man/*.[15]; do
		# groff's warnings go to stderr, the page to stdout.
		run sh -c 'MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null' _ "$f"
		[ "$status" -eq 0 ]
		[ "$output" = "" ]
		run env MANWIDTH=80 man -l "$f"
		[[ "$output" == *NAME* ]]
		[[ "$output" == *DESCRIPTION* ]]
		[[ "$output" == *"SEE ALSO"* ]]
	done
}

@test "bash completion offers subcommands and options read from --help" {
	source "$MT_ROOT/docs/bash-completion/mt"
	COMP_WORDS=(mt-capture ru)
	COMP_CWORD=1
	_mt_complete
	[ "${COMPREPLY[*]}" = "run" ]
	COMP_WORDS=(mt-fxt --form)
	COMP_CWORD=1
	_mt_complete
	[ "${COMPREPLY[*]}" = "--format" ]
	COMP_WORDS=(mt-fxt --format s)
	COMP_CWORD=2
	_mt_complete
	[ "${COMPREPLY[*]}" = "summary" ]
}
