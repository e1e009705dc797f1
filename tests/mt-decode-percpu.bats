#!/usr/bin/env bats
# mt-decode on per-CPU buffers (docs/decode.md "Threads and CPUs"): two
# CPUs, two threads 42 and 43 of process 40 that swap CPUs twice (CPU 0
# runs 42 from 1090 ns, 43 from 1290, 42 from 1490; CPU 1 the other one),
# user-only tracing, preempted inside f each time (FUP + TIP.PGD) and
# resumed there on the other CPU (TIP.PGE).  The snapshot (CPU 1's buffer
# first) is written by tests/unit/test-decode.c --write-percpu, which also
# checks the stream in memory.  Each thread's events must come in time
# order, the same with any -j, and mt-fxt must see one stack per thread
# that goes on across the CPUs.  Synthetic traces only: no PT hardware here.

setup_file() {
	T="$BATS_FILE_TMPDIR"
	cd "$T"
	"$MT_BUILD/tests/test-decode" --write-percpu blob.snap
	# the same code as an ELF with symbols main, f and g at 0x400000
	cat > prog.s <<'ASM'
	.text
	.globl	main
	.type	main, @function
main:
	call	f
	call	*%rbx
	jmp	main
	.size	main, .-main
	.org	0x20
	.type	f, @function
f:
	test	%eax, %eax
	je	1f
	nop
1:	ret
	.size	f, .-f
	.org	0x30
	.type	g, @function
g:
	jmp	2f
	nop
	nop
2:	ret
	.size	g, .-g
ASM
	cc -nostdlib -static -no-pie -Wl,-e,main -Wl,-Ttext=0x400000 \
		-o prog prog.s
	off=$(readelf -SW prog |
		sed -n 's/.* \.text *PROGBITS *[0-9a-f]* \([0-9a-f]*\) .*/0x\1/p')
	[ -n "$off" ]
	"$MT_BUILD/tests/test-decode" --write-percpu elf.snap "$T/prog" "$off"
}

setup() {
	T="$BATS_FILE_TMPDIR"
	cd "$T"
}

# in_time_order EV: times never go back within a thread, and its thread
# record comes before its first event
in_time_order() {
	run awk '$1 == "thread" { seen[$3] = 1; next }
	    $1 ~ /^(mod|proc|info|mt-events)$/ { next }
	    !seen[$3] { print "no thread record: " $0; bad = 1 }
	    $2 < last[$3] { print "back in time: " $0; bad = 1 }
	    { last[$3] = $2 } END { exit bad }' "$1"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "mt-decode per-CPU: each thread's events in time order, runs merged by start time" {
	run mt-decode -j 1 -o j1.ev blob.snap
	[ "$status" -eq 0 ]
	cat > want.ev <<'EOF2'
mt-events 1.2
info source blob.snap
info clock perf
info time-base 1050
info backend intel_pt
info branches calls
proc 40 demo demo%20--fast
mod 0 0x400000 0x400040 0 - code
thread 40 42 demo
enable 1100 42 0x400000
call 1100 42 0x400000 0x400020
disable 1100 42 0x400025 async
thread 40 43 worker
enable 1100 43 0x400000
call 1100 43 0x400000 0x400020
disable 1100 43 0x400025 async
enable 1300 43 0x400025
ret 1300 43 0x400025 0x400005
call 1300 43 0x400005 0x400030
ret 1300 43 0x400034 0x400007
call 1300 43 0x400000 0x400020
disable 1300 43 0x400025 async
enable 1300 42 0x400025
ret 1300 42 0x400025 0x400005
call 1300 42 0x400005 0x400030
ret 1300 42 0x400034 0x400007
call 1300 42 0x400000 0x400020
disable 1300 42 0x400025 async
enable 1500 42 0x400025
ret 1500 42 0x400025 0x400005
call 1500 42 0x400005 0x400030
ret 1500 42 0x400034 0x400007
call 1500 42 0x400000 0x400020
disable 1500 42 0x400025 async
end 1500 42
enable 1500 43 0x400025
ret 1500 43 0x400025 0x400005
call 1500 43 0x400005 0x400030
ret 1500 43 0x400034 0x400007
call 1500 43 0x400000 0x400020
disable 1500 43 0x400025 async
end 1500 43
EOF2
	run diff -u want.ev j1.ev
	echo "$output"
	[ "$status" -eq 0 ]
	in_time_order j1.ev
	[ "$(awk '$1 == "end"' j1.ev | wc -l)" -eq 2 ]
}

@test "mt-decode per-CPU: -j 2 and -j 8 write the -j 1 bytes" {
	run mt-decode -j 1 -s -o j1.ev blob.snap
	[ "$status" -eq 0 ]
	one=$(grep -v -e '^walk' -e '^blocks' <<<"$output")
	for j in 2 8; do
		run mt-decode -j $j -s -o j$j.ev blob.snap
		[ "$status" -eq 0 ]
		cmp j1.ev j$j.ev
		[ "$(grep -v -e '^walk' -e '^blocks' <<<"$output")" = "$one" ]
	done
	# also from a pipe
	run sh -c 'mt-decode -j 2 - < blob.snap > pipe.ev'
	[ "$status" -eq 0 ]
	[ "$(tail -n +3 pipe.ev)" = "$(tail -n +3 j1.ev)" ]
}

@test "mt-decode per-CPU: mt-fxt continues each thread's stack across CPUs" {
	run sh -c 'mt-decode -j 2 elf.snap | mt-symbolize > sym.ev'
	[ "$status" -eq 0 ]
	run mt-fxt -F folded -o - sym.ev
	[ "$status" -eq 0 ]
	[ "$output" = "demo [tid=42];main;f 167
demo [tid=42];main;f;[untraced] 167
demo [tid=42];main;g 66
worker [tid=43];main;f 167
worker [tid=43];main;f;[untraced] 167
worker [tid=43];main;g 66" ]
	# one main frame per thread from the first run to the last: f is
	# entered 3 times per thread (a call per run), g twice
	run mt-fxt -F summary -o - sym.ev
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "threads 2, events 32, frames 18, inferred 2, decode errors 0, trigger hits 0" ]
	# the [untraced] gap of each preemption shares its timestamp's time
	# with the frames that begin there, as magic-trace's
	[ "${lines[4]}" = "           334            668          6  f" ]
	[ "${lines[5]}" = "           132            132          4  g" ]
	[ "${lines[6]}" = "             0            800          2  main" ]
}

@test "mt-decode per-CPU: a per-CPU perf.data import decodes in time order" {
	# tests/unit/test-perfdata.c's per-CPU recording: 101 on CPU 0 then
	# CPU 1, 102 the other way round (SWITCH records), as perf writes it
	"$MT_BUILD/tests/test-perfdata" --write-synth "$T" cpu > /dev/null
	mt-capture import-perf cpu.data -o pcpu.snap
	run mt-decode -q -j 1 -o pcpu.ev pcpu.snap
	[ "$status" -eq 0 ]
	in_time_order pcpu.ev
	# each resumes on the other CPU with an enable of its own
	[ "$(awk '$1 == "enable" || $1 == "end" || $1 == "thread"' pcpu.ev)" = \
	    "thread 100 101 alpha
thread 100 102 beta
enable 3000 102 0x500005
end 3000 102
enable 4000 101 0x400005
end 4000 101" ]
	run mt-decode -q -j 2 -o pcpu2.ev pcpu.snap
	[ "$status" -eq 0 ]
	cmp pcpu.ev pcpu2.ev
}
