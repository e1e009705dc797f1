#!/usr/bin/env bats
# The programs and their documents agree: one version for the suite (from
# common/version.h), and every long option a program's --help lists is
# described in its man page (issue 18 item 13).

# opts CMD...: the long options CMD's --help lists (not "--x=..." text)
opts() {
	"$@" --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*=?' | grep -v '=$' |
	    sort -u
}

# man_opts PROG: the long options PROG's man page describes
man_opts() {
	grep -oE 'Fl Fl [a-z][a-z0-9-]*' "$MT_ROOT/docs/man/$1.1" |
	    sed 's/^Fl Fl /--/' | sort -u
}

# src_opts FILE...: the long options the getopt_long tables of FILE accept
src_opts() {
	cat "$@" |
	    grep -oE '\{ *"[a-z][a-z0-9-]*", *(no|required|optional)_argument' |
	    sed -E 's/^\{ *"([a-z0-9-]*)".*/--\1/' | sort -u
}

@test "every program prints the suite's one version (common/version.h)" {
	v=$(awk '$2 == "MT_VERSION" { gsub(/"/, "", $3); print $3 }' \
	    "$MT_ROOT/common/version.h")
	[ -n "$v" ]
	for p in mt-capture mt-decode mt-symbolize mt-fxt; do
		run "$p" -V
		[ "$status" -eq 0 ]
		[ "$output" = "$p $v" ]
	done
}

@test "every long option of mt-decode, mt-symbolize and mt-fxt --help is in its man page" {
	for p in mt-decode mt-symbolize mt-fxt; do
		run comm -23 <(opts "$p") <(man_opts "$p")
		echo "$p: not in the man page: $output"
		[ "$output" = "" ]
		[ "$(opts "$p" | wc -l)" -gt 3 ]
	done
}

@test "every long option mt-decode, mt-symbolize and mt-fxt accept is in --help and the man page" {
	for p in mt-decode mt-symbolize mt-fxt; do
		[ "$(src_opts "$MT_ROOT/$p/main.c" | wc -l)" -gt 8 ]
		run comm -23 <(src_opts "$MT_ROOT/$p/main.c") <(opts "$p")
		echo "$p: not in --help: $output"
		[ "$output" = "" ]
		run comm -23 <(src_opts "$MT_ROOT/$p/main.c") <(man_opts "$p")
		echo "$p: not in the man page: $output"
		[ "$output" = "" ]
	done
}

@test "every long option of each mt-capture subcommand's --help is in mt-capture(1)" {
	for c in run attach import-raw import-perf export-perf; do
		run comm -23 <(opts mt-capture "$c") <(man_opts mt-capture)
		echo "mt-capture $c: not in the man page: $output"
		[ "$output" = "" ]
		[ "$(opts mt-capture "$c" | wc -l)" -gt 2 ]
	done
}

@test "hw: triggers are in mt-capture run --help and in mt-capture(1)" {
	run mt-capture run --help
	[[ "$output" == *"hw:SEL"* ]]
	grep -q '^\.Cm hw:$' "$MT_ROOT/docs/man/mt-capture.1"
}
