#!/usr/bin/env bats
# IFUNCs (issue 18 item 13): the demo calls libm's cos, a GNU indirect
# function, and runs the implementation the loader picked for this CPU.
# mt-symbolize must name that implementation's fn record after the IFUNC
# (its fifth field), at the address the loader really picked (the truth:
# dlsym in tests/data/symbolize/ifunc-pick.c), and mt-fxt --function cos
# must count the demo's two calls of it, not the resolver's.

setup_file() {
	export G="$BATS_FILE_TMPDIR"
	cc -O1 -o "$G/ifunc-pick" "$MT_ROOT/tests/data/symbolize/ifunc-pick.c" \
	    -ldl
	[ -x "$MT_ROOT/demo/demo" ] || make -C "$MT_ROOT" demo/demo >/dev/null
	mt-capture run -q -b emulate --start-at main -s 64M \
	    -o "$G/demo.snap" -- "$MT_ROOT/demo/demo" 1
	mt-decode -o "$G/demo.ev" "$G/demo.snap"
	mt-symbolize -q -o "$G/demo.sym" "$G/demo.ev"
}

@test "mt-symbolize: the implementation an IFUNC picked carries the IFUNC's name" {
	pick=$("$G/ifunc-pick" | awk '{ print $2 }')
	[ -n "$pick" ]
	# libm's load address: its code mapping's start minus its file
	# offset (libm's text has p_vaddr = p_offset)
	run awk '$1 == "mod" && $7 ~ /libm\.so\.6$/ { print $3, $5; exit }' \
	    "$G/demo.ev"
	read -r mstart pgoff <<< "${lines[0]}"
	[ -n "$pgoff" ]
	base=$((mstart - pgoff))
	run awk -v want=cos '$1 == "fn" && $6 == want' "$G/demo.sym"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	read -r _ _ start dso name ifunc <<< "${lines[0]}"
	[[ "$dso" == *libm.so.6 ]]
	[ "$name" != cos ]
	[ $((start - base)) -eq $((pick)) ]
}

@test "mt-fxt --function cos: the two calls of the implementation, not the resolver" {
	run mt-fxt --format summary --function cos "$G/demo.sym"
	[ "$status" -eq 0 ]
	[[ "$output" == *"latency of cos (the implementation its IFUNC picked): 2 calls"* ]]
	# a function that is no IFUNC: as before
	run mt-fxt --format summary --function dlopen "$G/demo.sym"
	[[ "$output" == *"latency of dlopen: 1 calls"* ]]
}
