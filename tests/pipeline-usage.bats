#!/usr/bin/env bats
# Wrong command lines of every program and mt-capture subcommand: an
# unknown option, a missing argument, an extra operand, a bad number.
# Each exits 2 and its first line names the program (and subcommand) and
# the argument at fault; the short usage follows.  Nothing runs.

# usage_error FIRST-LINE CMD...: CMD exits 2, prints FIRST-LINE, then
# the usage
usage_error() {
	local want=$1
	shift
	run "$@"
	echo "$*: $output"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "$want" ]
	[[ "${lines[1]}" == "usage: "* ]]
}

@test "usage: an unknown option names the program and the option, exit 2" {
	for p in mt-decode mt-symbolize mt-fxt; do
		usage_error "$p: unrecognized option '--bogus'" $p --bogus
		usage_error "$p: invalid option -- 'Z'" $p -Z
	done
	for c in run attach import-raw import-perf export-perf; do
		usage_error "mt-capture $c: unrecognized option '--bogus'" \
			mt-capture $c --bogus
		usage_error "mt-capture $c: invalid option -- 'Z'" \
			mt-capture $c -Z
	done
	usage_error "mt-capture: unknown subcommand 'bogus'" mt-capture bogus
}

@test "usage: an option without its argument is named, exit 2" {
	usage_error "mt-decode: option requires an argument -- 'o'" mt-decode -o
	usage_error "mt-symbolize: option requires an argument -- 'e'" mt-symbolize -e
	usage_error "mt-symbolize: option '--perf-map' requires an argument" \
		mt-symbolize --perf-map
	usage_error "mt-fxt: option requires an argument -- 'l'" mt-fxt -l
	usage_error "mt-capture run: option requires an argument -- 's'" \
		mt-capture run -s
	usage_error "mt-capture import-raw: option '--pt' requires an argument" \
		mt-capture import-raw --pt
	usage_error "mt-capture import-perf: option requires an argument -- 'o'" \
		mt-capture import-perf -o
	usage_error "mt-capture export-perf: option '--files-dir' requires an argument" \
		mt-capture export-perf --files-dir
}

@test "usage: an operand too many is named, exit 2" {
	for p in mt-decode mt-symbolize mt-fxt "mt-capture import-perf" \
	    "mt-capture export-perf"; do
		usage_error "${p%% *}: unexpected argument 'b'" $p a b
	done
	usage_error "mt-capture: unexpected argument 'b'" mt-capture attach -p 1 b
}

@test "usage: a bad number names the option and the value, exit 2" {
	usage_error "mt-decode: bad --jobs argument '1x' (1 to 1024)" \
		mt-decode -j 1x
	usage_error "mt-fxt: bad --level argument '10'" mt-fxt -l 10
	usage_error "mt-fxt: bad --max-size argument '99999999999g'" \
		mt-fxt --max-size 99999999999g
	usage_error "mt-capture: bad --snapshot-size '0'" \
		mt-capture run -s 0 -- true
	usage_error "mt-capture: bad --ready-fd '99999999999'" \
		mt-capture run --ready-fd 99999999999 -- true
}
