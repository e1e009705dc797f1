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

# src_opts_of FILE FUNC: the long options of the getopt_long table in
# function FUNC of FILE (a subcommand's own table)
src_opts_of() {
	awk -v f="$2" '$0 ~ "^" f "\\(" { on = 1 } on { print } on && /^}/ { exit }' "$1" |
	    src_opts /dev/stdin
}

@test "every long option each mt-capture subcommand accepts is in its --help" {
	[ "$(src_opts_of "$MT_ROOT/mt-capture/import-raw.c" cmd_import_raw | wc -l)" -gt 6 ]
	run comm -23 <(src_opts_of "$MT_ROOT/mt-capture/import-raw.c" cmd_import_raw) \
	    <(opts mt-capture import-raw)
	echo "mt-capture import-raw: not in --help: $output"
	[ "$output" = "" ]
	[ "$(src_opts_of "$MT_ROOT/mt-capture/perf-cli.c" cmd_import_perf | wc -l)" -gt 3 ]
	run comm -23 <(src_opts_of "$MT_ROOT/mt-capture/perf-cli.c" cmd_import_perf) \
	    <(opts mt-capture import-perf)
	echo "mt-capture import-perf: not in --help: $output"
	[ "$output" = "" ]
	[ "$(src_opts_of "$MT_ROOT/mt-capture/perf-cli.c" cmd_export_perf | wc -l)" -gt 3 ]
	run comm -23 <(src_opts_of "$MT_ROOT/mt-capture/perf-cli.c" cmd_export_perf) \
	    <(opts mt-capture export-perf)
	echo "mt-capture export-perf: not in --help: $output"
	[ "$output" = "" ]
}

@test "mt-capture import-raw --help is a full help whose usage matches mt-capture(1)" {
	run mt-capture import-raw --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "usage: mt-capture import-raw "* ]]
	# a line of its own for each option, beyond the usage lines
	for o in --pt --output --cpu --elf --elf-ref --filter --pages --help; do
		printf '%s\n' "$output" | grep -qE "^  (-[a-z], )?$o( |\$)"
	done
	# the usage's words are the SYNOPSIS's (options, then operands)
	usage=$(printf '%s\n' "$output" | awk '/^usage:/ { on = 1 } on && !/^ *[-[]|^usage:/ { exit } on' |
	    sed 's/^usage: mt-capture import-raw//' | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
	synopsis=$(awk '/^\.Cm import-raw$/ { on = 1; next } on && /^\.Nm$/ { exit } on' \
	    "$MT_ROOT/docs/man/mt-capture.1" |
	    sed -E 's/^\.Op Fl Fl ([a-z-]*) Ar (.*)/[--\1 \2]/; s/^\.Op Fl ([a-z]*)$/[-\1]/;
	        s/^\.Fl Fl ([a-z-]*) Ar (.*)/--\1 \2/; s/^\.Fl ([a-z]) Ar (.*)/-\1 \2/' |
	    sed -E 's/ Ns Op @ Ns Ar bias/[@bias]/; s/^\.Op Ar file Ns Oo : Ns Ar offset Ns Oo - Ns Ar size Oc Oc Ns @ Ns Ar addr \.\.\./[file[:offset[-size]]@addr ...]/' |
	    tr '\n' ' ' | sed 's/ $//')
	echo "usage:    $usage"
	echo "synopsis: $synopsis"
	[ "$usage" = "$synopsis" ]
	# bad usage: the usage alone, on stderr, exit 2
	run mt-capture import-raw
	[ "$status" -eq 2 ]
	[ "${lines[1]}" = "usage: mt-capture import-raw [-h] [--cpu family/model/stepping]" ]
	[[ "$output" != *"--pt FILE "* ]]
}

@test "hw: triggers are in mt-capture run --help and in mt-capture(1)" {
	run mt-capture run --help
	[[ "$output" == *"hw:SEL"* ]]
	grep -q '^\.Cm hw:$' "$MT_ROOT/docs/man/mt-capture.1"
}
