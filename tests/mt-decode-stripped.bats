#!/usr/bin/env bats
# Stripped code end to end: tests/data/emu/tailchain.c built -O2
# -foptimize-sibling-calls -z lazy and stripped, captured with the
# software backend (--ground-truth logs every branch that ran), decoded
# and symbolized.  Function bounds come from .eh_frame FDEs where symbols
# are missing (the program, ld.so), so tail calls and the jumps of the
# first call through a PLT entry are jmp records.  The truth: the ground
# truth's jumps classified from the binaries by nm, objdump and readelf
# (tests/helpers/jump-oracle), and the unstripped build's symbol table.
# tests/data/emu/nocfi-jmp.c, stripped too, longjmps out of assembler
# that no symbol and no FDE covers, as glibc's __longjmp is without its
# FDE: that jump into main must be a jmp record.

setup_file() {
	export S="$BATS_FILE_TMPDIR"
	cc -O2 -foptimize-sibling-calls -Wl,-z,lazy -o "$S/tailchain" \
	    "$MT_ROOT/tests/data/emu/tailchain.c"
	strip -o "$S/tailchain-s" "$S/tailchain"
	env -u LD_BIND_NOW mt-capture run -q -b emulate \
	    --ground-truth "$S/gt" -o "$S/t.snap" -- "$S/tailchain-s" \
	    > "$S/run.out"
	mt-decode --stats -o "$S/t.ev" "$S/t.snap" 2> "$S/stats"
	mt-symbolize -q -o "$S/t.sym" "$S/t.ev"
	"$MT_ROOT/tests/helpers/jump-oracle" "$S/gt" "$S/t.ev" > "$S/oracle"
	# A longjmp out of assembler of no known function (nocfi-jmp.c).
	cc -O2 -rdynamic -o "$S/nocfi" "$MT_ROOT/tests/data/emu/nocfi-jmp.c"
	strip -o "$S/nocfi-s" "$S/nocfi"
	mt-capture run -q -b emulate --start-at main --ground-truth "$S/ngt" \
	    -o "$S/n.snap" -- "$S/nocfi-s" > "$S/nrun.out"
	mt-decode --stats -o "$S/n.ev" "$S/n.snap" 2> "$S/nstats"
	"$MT_ROOT/tests/helpers/jump-oracle" "$S/ngt" "$S/n.ev" > "$S/noracle"
}

# mod PATH-SUFFIX: "START END PGOFF" of the first mapping of that file.
mod() {
	awk -v p="$1" '$1 == "mod" && $7 ~ p"$" { print $3, $4, $5; exit }' \
	    "$S/t.ev"
}

# base PATH-SUFFIX: load bias of the mapping of that file (start - pgoff).
base() {
	local m
	m=($(mod "$1"))
	[ "${#m[@]}" -eq 3 ] && echo $((m[0] - m[2]))
}

# sym FILE NAME: file vaddr of a symbol (nm, dynamic symbols with -D).
sym() {
	nm --defined-only "${@:3}" "$1" | awk -v s="$2" '$3 == s { print $1; exit }'
}

# named: the calls, jumps and returns of t.sym as "kind FROMFN TOFN".
named() {
	awk '$1 == "fn" { fn[$2] = $5 }
	    $1 == "loc" { split($4, f, ":"); loc["@" $2] = fn[f[1]] }
	    $1 == "call" || $1 == "jmp" || $1 == "ret" {
	        print $1, loc[$6], loc[$7] }' "$S/t.sym"
}

@test "mt-decode: a stripped program's jumps between functions are jmp records, as the binaries' bounds say" {
	[ "$(cat "$S/run.out")" = "210" ]	# the program ran as compiled
	grep -q '^errors: 0$' "$S/stats"
	awk '$1 == "leave" { print "jmp", $2, $3 }' "$S/oracle" > "$S/want"
	awk '$1 == "jmp" { print "jmp", $4, $5 }' "$S/t.ev" > "$S/got"
	[ -s "$S/want" ]
	diff -u "$S/want" "$S/got"
	# Among them the tail calls c1 -> c2 -> c3, once per loop turn.
	local b c1 c2 c3
	b=$(base /tailchain-s)
	c1=$(sym "$S/tailchain" c1) c2=$(sym "$S/tailchain" c2)
	c3=$(sym "$S/tailchain" c3)
	[ "$(grep -c "^jmp 0x[0-9a-f]* $(printf '0x%x' $((b + 0x$c2)))$" "$S/got")" -eq 3 ]
	[ "$(grep -c "^jmp 0x[0-9a-f]* $(printf '0x%x' $((b + 0x$c3)))$" "$S/got")" -eq 3 ]
}

@test "mt-decode --stats: jumps from or into code of no known function are counted" {
	local src dst
	src=$(awk '$1 == "unknown-source" { print $2 }' "$S/oracle")
	dst=$(awk '$1 == "unknown-target" { print $2 }' "$S/oracle")
	grep -qx "jumps-unknown-source: $src" "$S/stats"
	grep -qx "jumps-unknown-target: $dst" "$S/stats"
}

@test "mt-symbolize: the stripped tail-call chain is main > c1 > c2 > c3, each one [unknown fn ...] identity" {
	local b f n
	b=$(base /tailchain-s)
	for f in main c1 c2 c3; do
		n=$(printf '0x%x' $((b + 0x$(sym "$S/tailchain" $f))))
		eval "$f='[unknown%20fn%20$n%20(tailchain-s)]'"
		# one fn record per function
		[ "$(grep -c "^fn [0-9]* $n .*unknown%20fn%20$n%20" "$S/t.sym")" -eq 1 ]
	done
	named > "$S/named"
	printf 'call %s %s\njmp %s %s\njmp %s %s\nret %s %s\n' \
	    "$main" "$c1" "$c1" "$c2" "$c2" "$c3" "$c3" "$main" > "$S/turn"
	cat "$S/turn" "$S/turn" "$S/turn" > "$S/want"
	grep -F -e "$c1" -e "$c2" -e "$c3" "$S/named" > "$S/got"
	diff -u "$S/want" "$S/got"
}

@test "mt-decode: the first call through printf's PLT entry jumps to PLT0, into ld.so's resolver, then to printf" {
	local b lb ls le stub plt0 pf m on k t tid from to rest
	b=$(base /tailchain-s)
	lb=$(base /libc.so.6)
	m=($(mod /ld-linux-x86-64.so.2))
	ls=$((m[0])) le=$((m[1]))
	stub=$(objdump -d -j .plt -j .plt.sec "$S/tailchain" | awk '/<printf@plt>:$/ { print $1 }')
	plt0=$(readelf -SW "$S/tailchain" | awk '$2 == ".plt" { print $4 }')
	pf=$(nm -D --defined-only /usr/lib/x86_64-linux-gnu/libc.so.6 |
	    awk '$3 == "printf" || $3 == "printf@@GLIBC_2.2.5" { print $1; exit }')
	[ -n "$stub" ] && [ -n "$plt0" ] && [ -n "$pf" ] && [ "$ls" -gt 0 ]
	stub=$((b + 0x$stub)) plt0=$((b + 0x$plt0)) pf=$((lb + 0x$pf))
	# From the call of printf@plt on: its jmp records, as "where to".
	on=0
	while read -r k t tid from to rest; do
		from=$((from)) to=$((to))
		if [ "$k" = call ] && [ "$to" -eq "$stub" ]; then
			on=1
		elif [ $on -eq 0 ] || [ "$k" != jmp ]; then
			continue
		elif [ "$from" -ge "$stub" ] && [ "$from" -lt $((stub + 16)) ] &&
		    [ "$to" -eq "$plt0" ]; then
			echo "stub>plt0"
		elif [ "$from" -ge "$plt0" ] && [ "$from" -lt $((plt0 + 16)) ] &&
		    [ "$to" -ge "$ls" ] && [ "$to" -lt "$le" ]; then
			echo "plt0>ld.so"
		elif [ "$from" -ge "$ls" ] && [ "$from" -lt "$le" ] && [ "$to" -eq "$pf" ]; then
			echo "ld.so>printf"
			break
		elif [ "$from" -lt "$ls" ] || [ "$from" -ge "$le" ]; then
			echo "other $from $to"
		fi
	done < <(grep -E '^(call|jmp) ' "$S/t.ev") > "$S/got"
	printf 'stub>plt0\nplt0>ld.so\nld.so>printf\n' > "$S/want"
	diff -u "$S/want" "$S/got"
	# PLT0 has no symbol: it is named after the .plt FDE.
	grep -q "^fn [0-9]* $(printf '0x%x' "$plt0") .*unknown%20fn%20" "$S/t.sym"
}

@test "mt-decode: a longjmp out of code of no known function into the middle of main is a jmp record, each round" {
	[ "$(cat "$S/nrun.out")" = "4" ]	# the program ran its 4 rounds
	grep -q '^errors: 0$' "$S/nstats"
	# nl_longjmp has no symbol left and no FDE; main is in .dynsym
	# (counted: a '!' check that is not a test's last line cannot fail)
	[ "$(nm -D "$S/nocfi-s" | grep -c nl_longjmp)" -eq 0 ]
	[ "$(readelf --debug-dump=frames "$S/nocfi-s" |
	    grep -c "pc=0*$(sym "$S/nocfi" nl_longjmp)\.\.")" -eq 0 ]
	awk '$1 == "leave" { print "jmp", $2, $3 }' "$S/noracle" > "$S/nwant"
	awk '$1 == "jmp" { print "jmp", $4, $5 }' "$S/n.ev" > "$S/ngot"
	diff -u "$S/nwant" "$S/ngot"
	# Among them the jump out of nl_longjmp into main, once per round.
	local m b lj main msz from to n=0
	m=($(awk '$1 == "mod" && $7 ~ /\/nocfi-s$/ { print $3, $5; exit }' "$S/n.ev"))
	b=$((m[0] - m[1]))
	lj=$((b + 0x$(sym "$S/nocfi" nl_longjmp)))
	main=$((b + 0x$(sym "$S/nocfi" main)))
	msz=$((0x$(nm -S --defined-only "$S/nocfi" | awk '$4 == "main" { print $2 }')))
	while read -r from to; do
		from=$((from)) to=$((to))
		[ "$from" -gt "$lj" ] && [ "$from" -lt $((lj + 64)) ] &&
		    [ "$to" -gt "$main" ] && [ "$to" -lt $((main + msz)) ] &&
		    n=$((n + 1))
	done < <(awk '$1 == "jmp" { print $4, $5 }' "$S/n.ev")
	[ "$n" -eq 4 ]
}
