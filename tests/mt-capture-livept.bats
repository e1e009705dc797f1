#!/usr/bin/env bats
# The live Intel PT path against real kernels' differences, limits and
# errors, on a machine without Intel PT: the shim tests/data/faults/fakept.c
# (helpers/fakept.bash) opens a dummy software event where mt-capture asks
# for intel_pt, refuses what older kernels refuse, injects errnos at
# perf_event_open and mmap, and logs what mt-capture asked of the kernel.
# The sideband, uprobes, enable_on_exec, SET_OUTPUT, DISABLE and ENABLE
# run in the real kernel.  No PT hardware is involved: what these tests
# show is what mt-capture asks and how it reacts, not what PT records.

load helpers/fakept
load helpers/faults
load helpers/mt-capture-targets

setup_file() {
	build_targets
	cc -O1 -pthread -o "$T/sleepers" "$MT_ROOT/tests/data/capture/sleepers.c"
	cc -O1 -o "$T/forker" "$MT_ROOT/tests/data/capture/forker.c"
	cc -O1 -pthread -o "$T/newhit" "$MT_ROOT/tests/data/capture/newhit.c"
	export FP="$BATS_FILE_TMPDIR"
	fakept_tools "$FP"
}

setup() {
	L="$BATS_TEST_TMPDIR/peo.log"
	tpid=
	bg=
}

has_threads() {
	[ "$(ls "/proc/$1/task" | wc -l)" -eq "$2" ]
}

teardown() {
	if [ -n "${other_probe:-}" ]; then echo "-:$other_probe" >> "$UE" || true; fi
	if [ -n "$tpid" ]; then kill "$tpid" 2>/dev/null || true; fi
	# shellcheck disable=SC2086 # (a list of PIDs)
	if [ -n "$bg" ]; then kill $bg 2>/dev/null || true; fi
	if [ -n "${tracefs_mounted:-}" ]; then umount /sys/kernel/tracing || true; fi
}

# needs_root WHY: skip the test unless it runs as root.
needs_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root: $1"
}

# Skip unless uprobe events can be opened (CAP_SYS_ADMIN).
needs_uprobes() {
	needs_root "uprobe events need CAP_SYS_ADMIN"
}

# Skip unless root with the BPF JIT on (BPF programs get JIT code and
# KSYMBOL records).
needs_bpf_jit() {
	needs_root "$1"
	[ "$(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null)" = 1 ] ||
	    skip "needs the BPF JIT (net.core.bpf_jit_enable)"
}

# tracefs at /sys/kernel/tracing with a writable uprobe_events (UE):
# mounted here (and unmounted by teardown) only when it is not already;
# skip the test without it.
UE=/sys/kernel/tracing/uprobe_events
needs_tracefs() {
	needs_uprobes
	tracefs_mounted=
	[ -w "$UE" ] && return 0
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	    skip "needs tracefs (mount -t tracefs nodev /sys/kernel/tracing failed)"
	tracefs_mounted=1
	[ -w "$UE" ] || skip "needs tracefs with a writable $UE"
}

# mtcap_probes PID/: how many tracefs uprobes of the mt-capture process
# PID are defined (other captures on the machine may have theirs).
mtcap_probes() {
	grep -c "^p:mtcap$1" "$UE" || true
}

# probe_group_of OUTPUT: the PID of "mtcapPID", the tracefs group -v
# names in mt-capture's OUTPUT.
probe_group_of() {
	sed -n 's/.*triggers: tracefs uprobe events mtcap\([0-9]*\)\/t.*/\1/p' <<< "$1" | head -1
}

# capture_of JOB: the mt-capture process of background job JOB (a
# with_fakept in a subshell, or mt-capture itself).
capture_of() {
	wait_for capture_in "$1" > /dev/null
	capture_in "$1"
}
capture_in() {
	if [ "$(cat "/proc/$1/comm" 2>/dev/null)" = mt-capture ]; then
		echo "$1"
	else
		pgrep -x -P "$1" mt-capture | head -1 | grep .
	fi
}

# trigger_hit_of SNAP: "PID/TID" of the first trigger hit the snapshot holds
trigger_hit_of() {
	mt-decode --info "$1" | sed -n 's/^trigger hit at 0x[0-9a-f]* time [0-9]* thread \([0-9]*\/[0-9]*\) .*/\1/p' | head -1
}

@test "mt-capture on a 5.11 kernel: the sideband retries once without attr.build_id" {
	run with_fakept FAKEPT_KERNEL=5.11 -- mt-capture run --backend pt \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 0 ]
	[[ "$output" == *"wrote snapshot 0 (exit)"* ]]
	# the first sideband open carries build_id and is refused, every
	# later one (the other CPU) is opened without it: remembered
	run grep -c '^refused EINVAL' "$L"
	[ "$output" -eq 1 ]
	run grep -E '^open other type=1 config=0x9 .*build_id=0' "$L"
	[ "${#lines[@]}" -eq "$(nproc)" ]
}

@test "mt-capture on a 5.11 kernel: MMAP2 records get their build-ids from the files" {
	run with_fakept FAKEPT_KERNEL=5.11 -- mt-capture run -q -b emulate \
	    --start-at call_it --no-bundle -o "$T/sb511.snap" -- "$T/dl"
	[ "$status" -eq 0 ]
	grep -q '^refused EINVAL' "$L"
	run mt-decode "$T/sb511.snap"
	[ "$status" -eq 0 ]
	id=$(readelf -n "$(realpath /lib/x86_64-linux-gnu/libm.so.6)" |
	    awk '/Build ID/ {print $3}')
	[ -n "$id" ]
	[[ "$output" == *" $id "*"libm.so.6"* ]]
}

@test "mt-capture: aux_pause is the u32 at attr byte 116, and the snapshot says it was armed" {
	needs_uprobes
	# (main: a hit in the thread bound before the exec, not in one
	# bound from its FORK record when mt-capture reads it)
	run with_fakept -- mt-capture run --backend pt --trigger main \
	    -o "$BATS_TEST_TMPDIR/p.snap" -- "$T/worker"
	[ "$status" -eq 0 ]
	[[ "$output" == *"wrote snapshot 0 (trigger)"* ]]
	pt=$(awk '/^open pt /{print; exit}' "$L")
	[ -n "$pt" ]
	# the pause uprobe is opened in the PT event's group, aux_action = 2
	run grep -E '^open uprobe .*group=[0-9]+ .*aux_action=2 ' "$L"
	[ "${#lines[@]}" -eq 1 ]
	run mt-decode --info "$BATS_TEST_TMPDIR/p.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"meta: aux-pause = armed"* ]]
}

@test "mt-capture on a 6.12 kernel: aux_pause is refused and the snapshot says so" {
	needs_uprobes
	run with_fakept FAKEPT_KERNEL=6.12 -- mt-capture run --backend pt \
	    --trigger main -o "$BATS_TEST_TMPDIR/p.snap" -- "$T/worker"
	[ "$status" -eq 0 ]
	[[ "$output" == *"wrote snapshot 0 (trigger)"* ]]
	run mt-decode --info "$BATS_TEST_TMPDIR/p.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"meta: aux-pause = refused: Invalid argument (aux_action needs kernel 6.13+)"* ]]
}

@test "mt-capture: with --multi-snapshot the snapshot says aux_pause was not used" {
	needs_uprobes
	run with_fakept -- mt-capture run --backend pt --trigger main \
	    --multi-snapshot --max-snapshots 1 -o "$BATS_TEST_TMPDIR/p.snap" \
	    -- "$T/worker"
	[ "$status" -eq 0 ]
	run grep -c 'aux_action=2' "$L"
	[ "$output" -eq 0 ]
	run mt-decode --info "$BATS_TEST_TMPDIR/p.snap"
	[[ "$output" == *"meta: aux-pause = not used (--multi-snapshot)"* ]]
}

@test "mt-capture: EBUSY at the intel_pt open says another PT user holds it" {
	run with_fakept FAKEPT_OPEN_ERRNO=16 -- mt-capture run --backend pt \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- touch "$BATS_TEST_TMPDIR/ran"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot open the intel_pt event: Device or resource busy; another user of Intel PT holds it"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	[ ! -e "$BATS_TEST_TMPDIR/x.snap" ]
}

@test "mt-capture: EMFILE at the intel_pt open names ulimit -n" {
	run with_fakept FAKEPT_OPEN_ERRNO=24 -- mt-capture run --backend pt \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot open the intel_pt event: Too many open files; "*"ulimit -n; the hard limit is "* ]]
}

@test "mt-capture: EPERM at the PT mmap is the locked-memory limit, not perf_event_paranoid" {
	run with_fakept FAKEPT_MMAP_ERRNO=1 -- mt-capture run --backend pt \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot map the intel_pt data ring: Operation not permitted; locked memory: "*"perf_event_mlock_kb ("*" KiB per CPU, "*"ulimit -l: "*"CAP_IPC_LOCK"* ]]
	[[ "$output" != *"paranoid"* ]]
	run with_fakept FAKEPT_SB_MMAP_ERRNO=1 -- mt-capture run --backend pt \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot map the sideband ring: Operation not permitted; locked memory: "* ]]
}

@test "mt-capture: ENOMEM at the AUX mmap asks for a smaller --snapshot-size" {
	run with_fakept FAKEPT_AUX_ERRNO=12 -- mt-capture run --backend pt \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot map the intel_pt AUX ring: Cannot allocate memory; "*"use a smaller --snapshot-size"* ]]
}

# as root without CAP_IPC_LOCK, so the locked-memory limits apply
NO_IPC_LOCK=(setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock)

budget_tree() {
	cp -r "$FP/sys" "$BATS_TEST_TMPDIR/sys"
	mkdir -p "$BATS_TEST_TMPDIR/sys/sys/devices/system/cpu"
	echo "$1" > "$BATS_TEST_TMPDIR/sys/sys/devices/system/cpu/online"
}

@test "mt-capture: with CAP_IPC_LOCK the rings are sized to need, not shrunk" {
	run with_fakept FAKEPT_FAKE_DATA=1 -- mt-capture run --backend pt \
	    -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 0 ]
	[[ "$output" != *"locked memory"* ]]
	# sideband 1 + 32 pages per online CPU, PT 1 + 2 data pages, 4 MiB AUX
	run grep -c '^mmap data .* len=135168 ' "$L"
	[ "$output" -eq "$(nproc)" ]
	grep -q '^mmap pt-data .* len=12288 ' "$L"
	grep -q '^mmap aux .* len=4194304 ' "$L"
}

@test "mt-capture: over the locked-memory budget the rings shrink, saying so" {
	[ "$(cat /proc/sys/kernel/perf_event_mlock_kb)" -eq 516 ] ||
	    skip "the numbers assume kernel.perf_event_mlock_kb = 516"
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 0 ] ||
	    skip "paranoid -1 lifts the limit"
	budget_tree 0-1
	run with_fakept FAKEPT_FAKE_DATA=1 \
	    MT_SYSFS_ROOT="$BATS_TEST_TMPDIR/sys" -- "${NO_IPC_LOCK[@]}" \
	    bash -c 'ulimit -l 64 && exec "$@"' _ mt-capture run --backend pt -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 0 ]
	# 516 KiB x 2 CPUs + 64 KiB = 274 pages: sideband 2 x (1 + 8),
	# PT 1 + 1 data and 128 AUX pages (256 would be 276)
	[[ "${lines[0]}" == "mt-capture: locked memory: shrank the rings to fit 1096 KiB (kernel.perf_event_mlock_kb 516 KiB x 2 CPUs + ulimit -l 64 KiB): sideband 32 KiB per CPU (wanted 128), PT 512 KiB per buffer (wanted 4096)"* ]]
	grep -q '^mmap data .* len=36864 ' "$L"
	grep -q '^mmap pt-data .* len=8192 ' "$L"
	grep -q '^mmap aux .* len=524288 ' "$L"
	run mt-decode --info "$BATS_TEST_TMPDIR/x.snap"
	[ "$status" -eq 0 ]
}

@test "mt-capture: when even the smallest rings do not fit, it refuses before touching the targets" {
	[ "$(cat /proc/sys/kernel/perf_event_mlock_kb)" -eq 516 ] ||
	    skip "the numbers assume kernel.perf_event_mlock_kb = 516"
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 0 ] ||
	    skip "paranoid -1 lifts the limit"
	budget_tree 0-1
	# started by a plain bash, not this test's shell: a subshell of bats
	# killed before it execs sleep (a loaded box) runs bats's traps and
	# reports the test again ("not ok", "Executed 46 instead of 43")
	pids=($(bash -c 'for i in $(seq 20); do sleep 30 > /dev/null & echo $!; done' 3>&-))
	[ "${#pids[@]}" -eq 20 ]
	list=$(IFS=,; echo "${pids[*]}")
	run with_fakept FAKEPT_FAKE_DATA=1 \
	    MT_SYSFS_ROOT="$BATS_TEST_TMPDIR/sys" -- "${NO_IPC_LOCK[@]}" \
	    bash -c 'ulimit -l 0 && exec "$@"' _ mt-capture attach --backend pt -p "$list" -o "$BATS_TEST_TMPDIR/x.snap"
	kill "${pids[@]}"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "mt-capture: locked memory: the perf rings need 1512 KiB (2 sideband rings of 36 KiB, 20 PT buffers of 64 KiB + 8 KiB data, 0 trigger rings of 8 KiB) even at their smallest, but this user may lock 1032 KiB (kernel.perf_event_mlock_kb 516 KiB x 2 CPUs, less what other perf users of this uid hold, + ulimit -l 0 KiB): raise ulimit -l or kernel.perf_event_mlock_kb, run with CAP_IPC_LOCK, or trace fewer threads" ]]
	# nothing was opened: the shim logged nothing
	[ ! -e "$L" ]
}

@test "mt-capture attach: a low soft open-files limit is raised to the hard one" {
	"$T/sleepers" 30 60 3>&- &
	tpid=$!
	wait_for has_threads "$tpid" 31
	# 31 threads x CPUs sideband events do not fit in 40 descriptors
	run with_fakept -- bash -c 'ulimit -Sn 40 && exec "$@"' _ \
	    mt-capture attach --backend pt --duration 0.2 -p "$tpid" \
	    -o "$BATS_TEST_TMPDIR/x.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"wrote snapshot 0 (duration)"* ]]
	run grep -c '^open other type=1 ' "$L"
	[ "$output" -eq $((31 * $(nproc))) ]
}

# At least $2 threads in process $1.
has_threads_at_least() {
	[ "$(ls "/proc/$1/task" | wc -l)" -ge "$2" ]
}

@test "mt-capture attach: past the open-files limit, one sideband event per thread, a new thread's from its FORK record" {
	# 60 threads, one every 300 ms
	"$T/sleepers" 60 60 300 3>&- &
	tpid=$!
	wait_for has_threads_at_least "$tpid" 6
	# 6+ threads x CPUs events would pass 70 descriptors; 1 per thread not
	first=$(ls "/proc/$tpid/task" | wc -l)
	run with_fakept -- bash -c 'ulimit -n 76 && exec "$@"' _ \
	    mt-capture attach --backend pt --duration 1.5 -p "$tpid" \
	    -o "$BATS_TEST_TMPDIR/x.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *" CPUs sideband events would pass the open-files limit 76: one per thread instead"* ]]
	[[ "$output" == *"wrote snapshot 0 (duration)"* ]]
	# no event per CPU; one per thread (cpu -1, logged as 4294967295),
	# never two for one thread, and threads created while recording got
	# theirs
	run grep -cE '^open other type=1 .* cpu=[0-9]+ group=.* inherit=1 ' "$L"
	[ "$output" -eq 0 ]
	grep -E '^open other type=1 .* cpu=4294967295 .* inherit=0 ' "$L" |
	    sed 's/.* pid=\([0-9]*\) .*/\1/' > "$BATS_TEST_TMPDIR/sb.tids"
	n=$(wc -l < "$BATS_TEST_TMPDIR/sb.tids")
	[ "$n" -eq "$(sort -u "$BATS_TEST_TMPDIR/sb.tids" | wc -l)" ]
	[ "$n" -gt "$first" ]
	# each stored as its thread's SIDEBAND chunk
	run mt-decode --info "$BATS_TEST_TMPDIR/x.snap"
	[ "$status" -eq 0 ]
	run grep -c '^sideband [0-9]*: cpu -1 tid [0-9]' <<< "$output"
	[ "$output" -eq "$n" ]
}

@test "mt-capture attach: a hard open-files limit too low is refused up front with the numbers" {
	"$T/sleepers" 30 60 3>&- &
	tpid=$!
	wait_for has_threads "$tpid" 31
	run with_fakept -- bash -c 'ulimit -n 40 && exec "$@"' _ \
	    mt-capture attach --backend pt --duration 0.2 -p "$tpid" \
	    -o "$BATS_TEST_TMPDIR/x.snap"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "mt-capture: too many open files: recording 31 threads on $(nproc) CPUs needs about "*" descriptors (one event per thread and CPU), but the limit is 40 (hard limit; ulimit -Hn)"* ]]
	[ ! -e "$L" ]
}

@test "mt-capture: timing terms the caps refuse are fitted to the nearest allowed, and the event carries them" {
	cp -r "$MT_ROOT/tests/data/sysfs/oddcaps" "$BATS_TEST_TMPDIR/sys"
	echo 4242 > "$BATS_TEST_TMPDIR/sys/sys/bus/event_source/devices/intel_pt/type"
	echo 4243 > "$BATS_TEST_TMPDIR/sys/sys/bus/event_source/devices/uprobe/type"
	run with_fakept MT_SYSFS_ROOT="$BATS_TEST_TMPDIR/sys" -- \
	    mt-capture run --backend pt --timing low -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 0 ]
	[[ "$output" == *"mtc_period=3 is not allowed by intel_pt/caps/mtc_periods (0x6): using 2; psb_period=3 is not allowed by intel_pt/caps/psb_periods (0x1): using 0"* ]]
	# pt 0, mtc 9, tsc 10, branch 13, mtc_period 2 at 14
	grep -q "^open pt type=4242 config=0x$(printf %x $(( 1 | 1 << 9 | 1 << 10 | 1 << 13 | 2 << 14 ))) " "$L"
	# a value the user gives is not fitted
	run with_fakept MT_SYSFS_ROOT="$BATS_TEST_TMPDIR/sys" -- \
	    mt-capture run --backend pt --timing low,mtc_period=3 -o "$BATS_TEST_TMPDIR/x.snap" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"--timing: mtc_period=3 is not allowed by intel_pt/caps/mtc_periods (0x6)"* ]]
}

# The order of ENABLE/DISABLE ioctls on the PT and uprobe events, runs of
# the same (kind, request) collapsed: "pt ENABLE,uprobe ENABLE,...".
ioctl_order() {
	awk '/^ioctl (pt|uprobe) .* (ENABLE|DISABLE)$/ {
		k = $2 " " $4
		if (k != last) { printf "%s%s", sep, k; sep = "," }
		last = k
	}' "$L"
}

@test "mt-capture attach: triggers open disabled, and fire only while PT records, across snapshots" {
	needs_uprobes
	"$T/loop" > /dev/null 3>&- &
	tpid=$!
	wait_for is_exe "$tpid" "$T/loop"
	# the uprobe PMU path, whether tracefs is mounted or not
	run with_fakept MT_TRACEFS=/nonexistent -- mt-capture attach \
	    --backend pt --trigger work --multi-snapshot --max-snapshots 3 \
	    -p "$tpid" -o "$BATS_TEST_TMPDIR/m.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"wrote snapshot 2 (trigger)"* ]]
	run grep -c '^open uprobe .* disabled=1 ' "$L"
	[ "$output" -eq "$(nproc)" ]
	run grep -c '^open uprobe .* disabled=0 ' "$L"
	[ "$output" -eq 0 ]
	# enabled after PT, disabled with it while each snapshot is written
	# (the queued hits are dropped when they are enabled again)
	run ioctl_order
	[ "$output" = "pt ENABLE,uprobe ENABLE,pt DISABLE,uprobe DISABLE,pt ENABLE,uprobe ENABLE,pt DISABLE,uprobe DISABLE,pt ENABLE,uprobe ENABLE,pt DISABLE,uprobe DISABLE,pt DISABLE" ]
}

# A line "PID TID" in file $1 (thrcos prints it).
has_pid_line() {
	grep -q '^[0-9]* [0-9]*$' "$1"
}

@test "mt-capture run: trigger uprobes are bound to the target's threads, one created while recording too; another process mapping the library keeps its code" {
	needs_uprobes
	D=$BATS_TEST_TMPDIR
	mkfifo "$D/go" "$D/ready"
	# a copy of libm of this test's own (LD_LIBRARY_PATH): an int3 in
	# it comes from a uprobe on this file, never from another run's on
	# the system's libm (uprobes are per file)
	private_libm "$D/lib"
	exec 5<>"$D/ready"
	# the uprobe PMU path (tracefs, when mounted, needs no binding)
	( rc=0
	  with_fakept MT_TRACEFS=/nonexistent LD_LIBRARY_PATH="$D/lib" -- \
	      mt-capture run --backend pt --ready-fd 3 \
	      --trigger libm.so.6:cos -o "$D/b.snap" -- "$T/thrcos" "$D/go" \
	      3>"$D/ready" 2>"$D/cap.err" >"$D/cap.out" || rc=$?
	  echo $rc > "$D/cap.status" ) &
	b=
	read -r -n 1 -t 60 -u 5 b || true
	exec 5<&-
	[ "$b" = r ]
	# the thread the target started once recording ran
	wait_for has_pid_line "$D/cap.out"
	read -r pid tid < "$D/cap.out"
	tpid=$pid
	[ "$tid" != "$pid" ]
	# bound to it from its sideband FORK record, on every CPU (as the
	# main thread; not counting the aux_pause event in the PT group)
	# (the shim logs an int -1 as 4294967295)
	on_cpus="cpu=[0-9]+ group=(-1|4294967295) "
	n=$(getconf _NPROCESSORS_CONF)
	wait_for grep -qE "^open uprobe .* pid=$tid $on_cpus" "$L"
	run grep -cE "^open uprobe .* pid=$tid $on_cpus" "$L"
	[ "$output" -eq "$n" ]
	run grep -cE "^open uprobe .* pid=$pid $on_cpus" "$L"
	[ "$output" -eq "$n" ]
	run grep -cE '^open uprobe .* pid=(-1|4294967295) ' "$L"
	[ "$output" -eq 0 ]
	# an unrelated process mapping that libm sees cos's own first byte,
	# no int3
	peek=$(LD_LIBRARY_PATH="$D/lib" "$T/peekcode" cos || echo failed)
	echo x > "$D/go"
	wait_for test -s "$D/cap.status"
	[ "$(cat "$D/cap.status")" -eq 0 ]
	[ "$(tail -1 "$D/cap.out")" = "1.878" ]
	grep -q "wrote snapshot 0 (trigger)" "$D/cap.err"
	peek_is_original "$D/cap.err" "$D/lib/libm.so.6" "$peek"
	# the hit is the new thread's
	run mt-decode --info "$D/b.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"trigger libm.so.6:cos at 0x"*" thread $pid/$tid "* ]]
}

@test "mt-capture run: with tracefs, a new thread's and a forked child's first call to the trigger is the snapshot's hit (inherited tracefs uprobes)" {
	needs_tracefs
	D=$BATS_TEST_TMPDIR
	# a thread whose first call is hit(): per-thread PT buffers
	run with_fakept -- mt-capture run -v --backend pt --trigger hit \
	    -o "$D/t.snap" -- "$T/newhit" thread
	[ "$status" -eq 0 ]
	[[ "$output" == *"triggers: tracefs uprobe events mtcap"*"inherited by new threads and child processes"* ]]
	[[ "$output" == *"wrote snapshot 0 (trigger)"* ]]
	g1=$(probe_group_of "$output")
	hit=$(trigger_hit_of "$D/t.snap")
	[ -n "$hit" ]
	[ "${hit%/*}" != "${hit#*/}" ]	# the new thread's, not the main one's
	# inherited tracepoint events, one per CPU of the main thread; no
	# uprobe PMU trigger event (only aux_pause's, in the PT group)
	n=$(getconf _NPROCESSORS_CONF)
	run grep -cE "^open other type=2 .* cpu=[0-9]+ group=(-1|4294967295) .*inherit=1 .* inherit_thread=0$" "$L"
	[ "$output" -eq "$n" ]
	run grep -cE "^open uprobe .* group=(-1|4294967295) " "$L"
	[ "$output" -eq 0 ]
	# a child process whose first call is hit(): --all-threads follows it
	rm -f "$L"
	run with_fakept -- mt-capture run -v --all-threads --backend pt \
	    --trigger hit -o "$D/f.snap" -- "$T/newhit" fork
	[ "$status" -eq 0 ]
	g2=$(probe_group_of "$output")
	[[ "$output" =~ following\ process\ ([0-9]+),\ a\ child ]]
	child=${BASH_REMATCH[1]}
	[[ "$output" == *"wrote snapshot 0 (trigger)"* ]]
	[ "$(trigger_hit_of "$D/f.snap")" = "$child/$child" ]
	# (per-CPU buffers follow children: their events too)
	[[ "$output" == *"inherited by new threads and child processes"* ]]
	run grep -cE "^open other type=2 .*inherit=1 .* inherit_thread=0$" "$L"
	[ "$output" -eq "$n" ]
	# the probes were removed when the captures ended
	[ -n "$g1" ]
	[ -n "$g2" ]
	[ "$(mtcap_probes "$g1/")" -eq 0 ]
	[ "$(mtcap_probes "$g2/")" -eq 0 ]
}

# file_offset ELF VADDR: the file offset (hex, no 0x) of virtual address
# VADDR (hex) in ELF, from its PT_LOAD program headers.
file_offset() {
	local v=$((16#$2)) type off va pa fsz rest
	while read -r type off va pa fsz rest; do
		[ "$type" = LOAD ] || continue
		if [ "$v" -ge $((va)) ] && [ "$v" -lt $((va + fsz)) ]; then
			printf '%x\n' $((v - va + off))
			return
		fi
	done < <(readelf -lW "$1")
}

# sym_vaddr ELF NAME: NAME's virtual address (hex) in ELF's symbol table
sym_vaddr() {
	nm "$1" | awk -v n="$2" '$3 == n { print $1; exit }'
}

@test "mt-capture: the snapshot lists every uprobe site (PROBE): its trigger's and another tool's from tracefs, at the addresses the kernel's hit and the ELF give" {
	needs_tracefs
	D=$BATS_TEST_TMPDIR
	f=$(realpath "$T/newhit")
	# another tool's uprobe on thread_main, defined but never enabled
	# (no int3 is written anywhere until an event uses it)
	vt=$(sym_vaddr "$f" thread_main)
	vh=$(sym_vaddr "$f" hit)
	[ -n "$vt" ] && [ -n "$vh" ]
	ot=$(file_offset "$f" "$vt")
	[ -n "$ot" ]
	other_probe=mtlivept$$/other
	echo "p:$other_probe $f:0x$ot" >> "$UE"
	run with_fakept -- mt-capture run -q --backend pt --trigger hit \
	    -o "$D/p.snap" -- "$T/newhit" thread
	[ "$status" -eq 0 ]
	run mt-decode --info "$D/p.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"snapshot format 1.2,"* ]]
	# the kernel's hit of the trigger: where hit() runs
	[[ "$output" =~ trigger\ hit\ at\ 0x([0-9a-f]+)\ time\ [0-9]+\ thread\ ([0-9]+)/ ]]
	ah=${BASH_REMATCH[1]}
	pid=${BASH_REMATCH[2]}
	# its site, and the other tool's, at hit() + (thread_main - hit)
	# in the ELF
	[[ "$output" == *"probe hit at 0x$ah process $pid, $f+0x"*", trigger"* ]]
	at=$(printf '%x' $((16#$ah + 16#$vt - 16#$vh)))
	[[ "$output" == *"probe $other_probe at 0x$at process $pid, $f+0x$ot, another tool's"* ]]
	echo "-:$other_probe" >> "$UE"
	other_probe=
	# gone from tracefs: only the trigger's site is listed
	run with_fakept -- mt-capture run -q --backend pt --trigger hit \
	    -o "$D/q.snap" -- "$T/newhit" thread
	[ "$status" -eq 0 ]
	run mt-decode --info "$D/q.snap"
	[ "$(grep -c '^probe ' <<< "$output")" -eq 1 ]
	[[ "$output" != *"another tool's"* ]]
}

@test "mt-capture run: with per-thread PT buffers a forked child is followed: its PT event opened from its FORK record, its hits counted, the library only it maps bundled, the snapshot lists it" {
	needs_uprobes
	D=$BATS_TEST_TMPDIR
	mkfifo "$D/end"
	with_fakept -- mt-capture run -v --backend pt --trigger hit \
	    -o "$D/k.snap" -- "$T/newhit" forkdl "$D/end" > "$D/out" \
	    2> "$D/err" &
	bg=$!
	wait_for grep -q '^child ' "$D/out"
	wait_for grep -q 'wrote snapshot 0 (trigger)' "$D/err"
	echo x > "$D/end"
	wait "$bg"
	bg=
	child=$(sed -n 's/^child //p' "$D/out")
	[ -n "$child" ]
	run grep -o "following process $child, a child of process [0-9]*" "$D/err"
	[ "$status" -eq 0 ]
	parent=${output##* }
	# one intel_pt event per process's main thread: the child's opened
	# (from its FORK record) after the parent's, and enabled at once
	run grep -c "^open pt .* pid=$parent " "$L"
	[ "$output" -eq 1 ]
	run grep -c "^open pt .* pid=$child " "$L"
	[ "$output" -eq 1 ]
	run grep -c '^open pt ' "$L"
	[ "$output" -eq 2 ]
	[ "$(grep -n "^open pt .* pid=$parent " "$L" | cut -d: -f1)" -lt \
	    "$(grep -n "^open pt .* pid=$child " "$L" | cut -d: -f1)" ]
	# (run mode: the parent's starts at its exec, enable_on_exec)
	run awk '/^ioctl pt .* (ENABLE|DISABLE)$/ { print $4; exit }' "$L"
	[ "$output" = ENABLE ]
	run mt-decode --info "$D/k.snap"
	[ "$status" -eq 0 ]
	# the hit is the child's; the child, its buffer and libm, which only
	# the child maps, are in the snapshot
	[[ "$output" == *"trigger hit at 0x"*" thread $child/$child "* ]]
	[[ "$output" == *"process $child (parent $parent) "* ]]
	[[ "$output" == *"pt buffer "*": thread $child,"* ]]
	[[ "$output" == *"bundled elf "*"/libm.so.6, "* ]]
}

@test "mt-capture: without tracefs the triggers fall back to uprobe PMU events bound per thread, and -v says why" {
	needs_uprobes
	run with_fakept MT_TRACEFS=/nonexistent -- mt-capture run -v \
	    --backend pt --trigger hit -o "$BATS_TEST_TMPDIR/t.snap" -- \
	    "$T/newhit" thread
	[ "$status" -eq 0 ]
	[[ "$output" == *"triggers: uprobe PMU events bound to each thread, a new one's when its sideband FORK record is read (tracefs uprobes: no writable uprobe_events in MT_TRACEFS=/nonexistent)"* ]]
	run grep -c "^open other type=2 " "$L"
	[ "$output" -eq 0 ]
}

@test "mt-capture: its tracefs uprobes go on SIGTERM; those of a killed capture are removed by the next" {
	needs_tracefs
	D=$BATS_TEST_TMPDIR
	with_fakept -- mt-capture run --backend pt --trigger "$T/newhit:hit" \
	    -o "$D/a.snap" -- sleep 5 2>"$D/a.err" &
	cap=$(capture_of $!)
	wait_for grep -q "^p:mtcap$cap/t0 " "$UE"
	kill -TERM "$cap"
	wait_for test ! -e "/proc/$cap"
	wait || true
	grep -q "wrote snapshot 0 (sigterm)" "$D/a.err"
	[ "$(mtcap_probes "$cap/")" -eq 0 ]
	# killed: the probe stays until the next capture reaps it
	with_fakept -- mt-capture run --backend pt --trigger "$T/newhit:hit" \
	    -o "$D/b.snap" -- sleep 5 2>"$D/b.err" &
	cap=$(capture_of $!)
	wait_for grep -q "^p:mtcap$cap/t0 " "$UE"
	kill -KILL "$cap"
	wait_for test ! -e "/proc/$cap"
	wait || true
	grep -q "^p:mtcap$cap/t0 " "$UE"
	run with_fakept -- mt-capture run -v --backend pt --trigger hit \
	    -o "$D/c.snap" -- "$T/newhit" thread
	[ "$status" -eq 0 ]
	[ "$(mtcap_probes "$cap/")" -eq 0 ]
	# and its own are gone too
	[ "$(mtcap_probes "$(probe_group_of "$output")/")" -eq 0 ]
}

@test "mt-capture: the PT events' own records are drained as they come and stored as their thread's SIDEBAND" {
	# 300 threads created 2 ms apart: 300 FORK records of 64 bytes in
	# the fake PT event's 8 KiB data ring, which only periodic
	# draining keeps whole
	run with_fakept FAKEPT_PT_RECORDS=1 -- mt-capture run -q --backend pt \
	    -o "$BATS_TEST_TMPDIR/r.snap" -- "$T/sleepers" 300 0 2
	[ "$status" -eq 0 ]
	grep -q '^mmap pt-data .* len=12288 ' "$L"
	run mt-decode --info "$BATS_TEST_TMPDIR/r.snap"
	[ "$status" -eq 0 ]
	line=$(printf '%s\n' "$output" | grep -E '^sideband [0-9]+: cpu -1 tid [0-9]+, ')
	[[ "$line" =~ tid\ ([0-9]+),\ ([0-9]+)\ bytes,\ sample_type\ 0x10087 ]]
	[ "${BASH_REMATCH[2]}" -ge $((300 * 64)) ]
	run mt-decode "$BATS_TEST_TMPDIR/r.snap"
	[ "$status" -eq 0 ]
}

# trim_inputs DIR: DIR/sb, sideband records of the sideband's sample_type
# (TID|TIME|CPU|IDENTIFIER) as old as the test wants, and DIR/aux, a PT
# ring whose one PSB+ has TSC 5e9 (perf time 5 s with FAKEPT_SB's
# conversion).  Old (before 5 s - 1 s): a COMM, an MMAP2 and a FORK
# (state), AUX records (what only tells what happened then) of thread
# 10 at 1.3 s and 2 s and of thread 11 at 1.5 s; new: thread 10's AUX at
# 9 s.  Each AUX record's aux_offset is a marker, 0x6d7400000000000N.
trim_inputs() {
	python3 - "$1" <<'PY'
import struct, sys
d = sys.argv[1]
def rec(typ, misc, body, tid, t):
    body += struct.pack("<IIQIIQ", 7, tid, t, 0, 0, 1)
    return struct.pack("<IHH", typ, misc, 8 + len(body)) + body
def s8(x):
    x += b"\0"
    return x + b"\0" * (-len(x) % 8)
aux = lambda n, tid, t: rec(11, 0, struct.pack("<QQQ", 0x6d74000000000000 + n, 0, 0), tid, t)
r = rec(3, 0, struct.pack("<II", 7, 10) + s8(b"mtoldcomm"), 10, 1000000000)
r += rec(10, 2, struct.pack("<IIQQQIIQQII", 7, 10, 0x10000, 0x1000, 0, 0, 0, 0, 0, 5, 2) + s8(b"/mt-old-map.so"), 10, 1100000000)
r += rec(7, 0, struct.pack("<IIIIQ", 7, 7, 0x6d7411, 10, 1200000000), 0x6d7411, 1200000000)
r += aux(1, 10, 1300000000) + aux(2, 11, 1500000000) + aux(3, 10, 2000000000) + aux(4, 10, 9000000000)
open(d + "/sb", "wb").write(r)
# PSB, TSC 5e9, PSBEND
open(d + "/aux", "wb").write(b"\x02\x82" * 8 + b"\x19" + (5000000000).to_bytes(7, "little") + b"\x02\x23")
PY
}

# in_snap SNAP HEX: the snapshot holds the bytes HEX
in_snap() {
	python3 -c 'import sys; sys.exit(bytes.fromhex(sys.argv[2]) not in open(sys.argv[1], "rb").read())' "$1" "$2"
}

# aux_marker N: the bytes of AUX record N's aux_offset (trim_inputs)
aux_marker() {
	printf '0%s0000000000746d' "$1"
}

@test "mt-capture: the periodic sideband trim drops what only dates the past and keeps maps, names and forks" {
	D=$BATS_TEST_TMPDIR
	trim_inputs "$D"
	# without a trim (10 s apart) everything stays
	run with_fakept FAKEPT_SB="$D/sb" FAKEPT_AUX="$D/aux" -- \
	    mt-capture run -q --backend pt -d 1 -o "$D/a.snap" -- sleep 3
	[ "$status" -eq 0 ]
	grep -q "^fake sideband " "$L"
	for n in 1 2 3 4; do in_snap "$D/a.snap" "$(aux_marker $n)"; done
	# trimmed every 50 ms to the ring's PSB+ (5 s) less 1 s
	run with_fakept FAKEPT_SB="$D/sb" FAKEPT_AUX="$D/aux" \
	    MT_PT_TRIM_MS=50 -- mt-capture run -q --backend pt -d 1 \
	    -o "$D/b.snap" -- sleep 3
	[ "$status" -eq 0 ]
	# thread 10's AUX at 1.3 s goes: its state is the one at 2 s
	run in_snap "$D/b.snap" "$(aux_marker 1)"
	[ "$status" -eq 1 ]
	# each thread's last one before 4 s stays, and the newer one
	in_snap "$D/b.snap" "$(aux_marker 2)"
	in_snap "$D/b.snap" "$(aux_marker 3)"
	in_snap "$D/b.snap" "$(aux_marker 4)"
	# the COMM, the MMAP2 and the FORK, all older, stay
	in_snap "$D/b.snap" "$(printf mtoldcomm | od -An -tx1 | tr -d ' \n')"
	in_snap "$D/b.snap" "$(printf /mt-old-map.so | od -An -tx1 | tr -d ' \n')"
	in_snap "$D/b.snap" 070000000700000011746d000a000000
}

@test "mt-capture --multi-snapshot: PT resumes once the rings are copied, before the snapshot is assembled and written" {
	needs_uprobes
	"$T/loop" > /dev/null 3>&- &
	tpid=$!
	wait_for is_exe "$tpid" "$T/loop"
	run with_fakept -- mt-capture attach --backend pt --trigger work \
	    --multi-snapshot --max-snapshots 3 -p "$tpid" \
	    -o "$BATS_TEST_TMPDIR/m.snap"
	[ "$status" -eq 0 ]
	run awk '/^ioctl pt .* (ENABLE|DISABLE)$/ { k = $4 }
	    /^rename / { n = split($2, p, "/"); k = "rename " p[n] }
	    k != "" && k != last { printf "%s%s", sep, k; sep = ","; last = k }
	    { k = "" }' "$L"
	[ "$output" = "ENABLE,DISABLE,ENABLE,rename m.snap,DISABLE,ENABLE,rename m-1.snap,DISABLE,rename m-2.snap,DISABLE" ]
}

@test "mt-capture --kernel: TEXT_POKE and KSYMBOL come from one CPU-wide event per CPU, dropped on kernels without" {
	needs_root "kernel tracing"
	n=$(nproc)
	# this kernel (6.x) takes them, on CPU-wide events (pid -1, logged
	# as 4294967295) asking for nothing else; the target's events not
	run with_fakept -- mt-capture run -q --kernel --backend pt \
	    -o "$BATS_TEST_TMPDIR/k.snap" -- true
	[ "$status" -eq 0 ]
	run grep -c '^open other .* pid=4294967295 .* text_poke=1 ksymbol=1 bpf_event=1 ' "$L"
	[ "$output" -eq "$n" ]
	run grep -c '^open other .* text_poke=0 ksymbol=0 bpf_event=0 ' "$L"
	[ "$output" -eq "$n" ]
	# 5.8: no build_id (5.12) and no text_poke (5.9), each dropped once
	rm -f "$L"
	run with_fakept FAKEPT_KERNEL=5.8 -- mt-capture run -q --kernel \
	    --backend pt -o "$BATS_TEST_TMPDIR/k.snap" -- true
	[ "$status" -eq 0 ]
	run awk '/^open other/ { print $9, $16, $17 } /^refused/ { print "refused" }' "$L"
	[ "${lines[0]}" = "build_id=1 text_poke=0 ksymbol=0" ]
	[ "${lines[1]}" = "refused" ]
	[ "${lines[2]}" = "build_id=0 text_poke=0 ksymbol=0" ]
	[ "${lines[$((n + 1))]}" = "build_id=0 text_poke=0 ksymbol=0" ]
	[ "${lines[$((n + 2))]}" = "build_id=0 text_poke=1 ksymbol=1" ]
	[ "${lines[$((n + 3))]}" = "refused" ]
	[ "${lines[$((n + 4))]}" = "build_id=0 text_poke=0 ksymbol=1" ]
	[ "${lines[$((2 * n + 3))]}" = "build_id=0 text_poke=0 ksymbol=1" ]
	[ "${#lines[@]}" -eq $((2 * n + 4)) ]
	# without --kernel none of them
	rm -f "$L"
	run with_fakept -- mt-capture run -q --backend pt \
	    -o "$BATS_TEST_TMPDIR/k.snap" -- true
	run grep -c '^open other .* text_poke=0 ksymbol=0 bpf_event=0 ' "$L"
	[ "$output" -eq "$n" ]
	run grep -c '^open other ' "$L"
	[ "$output" -eq "$n" ]
}

@test "mt-capture --kernel: a BPF program loaded while recording is in the snapshot, from its KSYMBOL record, as /proc/kallsyms places it" {
	needs_bpf_jit "kernel tracing and BPF"
	D=$BATS_TEST_TMPDIR
	cc -O1 -o "$D/bpfload" "$MT_ROOT/tests/data/capture/bpfload.c"
	mkfifo "$D/ready" "$D/go" "$D/go2"
	# Another copy of the program (same kallsyms name, as another
	# test's run of this one on the machine would load), unloaded
	# before the snapshot: the check must be about this test's own.
	"$D/bpfload" "$D/go2" > "$D/other.out" &
	other=$!
	bg=$other	# (teardown ends what a failed check leaves)
	wait_for test -s "$D/other.out"
	exec 5<>"$D/ready"
	( rc=0
	  with_fakept -- mt-capture run --kernel --backend pt --ready-fd 3 \
	      -o "$D/k.snap" -- sleep 60 3>"$D/ready" 2>"$D/cap.err" || rc=$?
	  echo $rc > "$D/cap.status" ) &
	sub=$!
	b=
	read -r -n 1 -t 60 -u 5 b || true
	exec 5<&-
	[ "$b" = r ]
	# loaded while recording, still loaded at the snapshot
	"$D/bpfload" "$D/go" > "$D/bpf.out" &
	bg="$bg $!"
	cap=$(capture_of "$sub")
	bg="$bg $cap"
	wait_for test -s "$D/bpf.out"
	read -r addr name len < "$D/bpf.out"
	read -r oaddr oname olen < "$D/other.out"
	[ "$name" = "$oname" ] && [ "$addr" != "$oaddr" ]
	echo x > "$D/go2"
	wait "$other"
	kill -INT "$cap"
	wait_for test -s "$D/cap.status"
	echo x > "$D/go"
	wait
	cat "$D/cap.err"
	[ "$(cat "$D/cap.status")" -eq 0 ]
	# the JIT ranges of the snapshot (a perf map of pid 0) hold it at
	# the address /proc/kallsyms gave, with its length
	run mt-decode --info "$D/k.snap"
	[[ "$output" == *"text kind 2 pid 0, "* ]]
	grep -aq "${addr#"${addr%%[!0]*}"} $len $name" "$D/k.snap"
}

@test "mt-capture --kernel: a BPF program loaded before recording is in the snapshot with its JIT length, as bpf() gives it; refused, from /proc/kallsyms, saying so" {
	needs_bpf_jit "kernel tracing and BPF"
	D=$BATS_TEST_TMPDIR
	cc -O1 -o "$D/bpfload" "$MT_ROOT/tests/data/capture/bpfload.c"
	mkfifo "$D/go"
	"$D/bpfload" "$D/go" > "$D/bpf.out" &
	tpid=$!		# (teardown unloads it if a check fails)
	wait_for test -s "$D/bpf.out"
	read -r addr name len < "$D/bpf.out"
	a=${addr#"${addr%%[!0]*}"}
	run with_fakept -- mt-capture run --kernel --backend pt -d 1 \
	    -o "$D/k.snap" -- sleep 2
	[ "$status" -eq 0 ]
	# the snapshot's JIT ranges (a perf map of pid 0): address and name
	# as /proc/kallsyms gives them, length as the kernel's
	# jited_prog_len
	run mt-decode --info "$D/k.snap"
	[[ "$output" == *"text kind 2 pid 0, "* ]]
	grep -aq "$a $len $name" "$D/k.snap"
	# bpf() refused: the kallsyms symbol, up to the next one or 64 KiB
	run with_fakept FAKEPT_BPF_ERRNO=1 -- mt-capture run --kernel \
	    --backend pt -d 1 -o "$D/r.snap" -- sleep 2
	echo x > "$D/go"
	wait "$tpid"
	tpid=
	[ "$status" -eq 0 ]
	[[ "$output" == *"listing the BPF programs was refused (bpf(): Operation not permitted; it needs CAP_SYS_ADMIN)"*"at most 65536 bytes each"* ]]
	line=$(grep -ao "$a [0-9a-f]* $name" "$D/r.snap" | head -1)
	[ -n "$line" ]
	l=$(echo "$line" | cut -d' ' -f2)
	[ $((16#$l)) -ge $((16#$len)) ] && [ $((16#$l)) -le 65536 ]
}

# fake_kcore FILE ADDR:LEN:MARK...: an ELF core file of /proc/kcore's
# form (fs/proc/kcore.c: a PT_LOAD per range, p_vaddr its kernel
# address, p_offset where its bytes are), sparse, MARK at each range's start
fake_kcore() {
	python3 - "$@" <<'PY'
import struct, sys
out, segs = sys.argv[1], [a.split(":") for a in sys.argv[2:]]
off, ph = 4096, b""
with open(out, "wb") as f:
    for addr, length, mark in segs:
        addr, length = int(addr, 16), int(length, 16)
        ph += struct.pack("<IIQQQQQQ", 1, 4, off, addr, 0, length, length, 4096)
        f.seek(off)
        f.write(mark.encode())
        off += (length + 8191) // 4096 * 4096
    f.truncate(off)
    f.seek(0)
    f.write(b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH",
        4, 62, 1, 0, 64, 0, 0, 64, 56, len(segs), 0, 0, 0))
    f.write(ph)
PY
}

@test "mt-capture --kernel: the kernel text, a module and BPF JIT code are copied from kcore (a file of its form, MT_KCORE), again at the snapshot" {
	needs_bpf_jit "kernel addresses in /proc/kallsyms, BPF"
	D=$BATS_TEST_TMPDIR
	stext=$(awk '$3 == "_stext" { print $1; exit }' /proc/kallsyms)
	etext=$(awk '$3 == "_etext" { print $1; exit }' /proc/kallsyms)
	[ -n "$stext" ] && [ -n "$etext" ]
	tlen=$(printf '%x' $((16#$etext - 16#$stext)))
	cc -O1 -o "$D/bpfload" "$MT_ROOT/tests/data/capture/bpfload.c"
	mkfifo "$D/go" "$D/ready"
	"$D/bpfload" "$D/go" > "$D/bpf.out" &
	tpid=$!
	wait_for test -s "$D/bpf.out"
	read -r addr name len < "$D/bpf.out"
	segs=("$stext:$tlen:MT-KTEXT-1" "$addr:$len:MT-BPFJIT-1")
	read -r mod msize _ _ _ maddr < /proc/modules || true
	if [ -n "${maddr:-}" ]; then
		segs+=("${maddr#0x}:$(printf '%x' "$msize"):MT-MODULE-1")
	fi
	fake_kcore "$D/kcore" "${segs[@]}"
	exec 5<>"$D/ready"
	( rc=0
	  with_fakept MT_KCORE="$D/kcore" -- mt-capture run --kernel \
	      --backend pt --ready-fd 3 -o "$D/k.snap" -- sleep 60 \
	      3>"$D/ready" 2>"$D/cap.err" || rc=$?
	  echo $rc > "$D/cap.status" ) &
	sub=$!
	b=
	read -r -n 1 -t 60 -u 5 b || true
	exec 5<&-
	[ "$b" = r ]
	# "patched" while recording: the snapshot holds the code as it is then
	sed -i 's/MT-KTEXT-1/MT-KTEXT-2/; s/MT-BPFJIT-1/MT-BPFJIT-2/' "$D/kcore"
	kill -INT "$(pgrep -P "$sub")"
	wait_for test -s "$D/cap.status"
	echo x > "$D/go"
	wait "$tpid"
	tpid=
	cat "$D/cap.err"
	[ "$(cat "$D/cap.status")" -eq 0 ]
	run mt-decode --info "$D/k.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"blob kind 4 pid 0 0x${stext#"${stext%%[!0]*}"} $((16#$tlen)) bytes [kernel.kallsyms]"* ]]
	[[ "$output" == *"blob kind 4 pid 0 0x${addr#"${addr%%[!0]*}"} $((16#$len)) bytes $name"* ]]
	if [ -n "${maddr:-}" ]; then
		[[ "$output" == *"blob kind 4 pid 0 ${maddr} ${msize} bytes [$mod]"* ]]
		grep -aq "MT-MODULE-1" "$D/k.snap"
	fi
	grep -aq "MT-KTEXT-2" "$D/k.snap"
	grep -aq "MT-BPFJIT-2" "$D/k.snap"
	run grep -aq "MT-KTEXT-1" "$D/k.snap"
	[ "$status" -eq 1 ]
}

is_exe() {
	[ "$(readlink "/proc/$1/exe")" = "$2" ]
}

@test "mt-capture attach: a target in another mount namespace is resolved through /proc/PID/root, not the same-named file here" {
	needs_root "mount namespaces and uprobes"
	D="$BATS_TEST_TMPDIR/ct"
	mkdir -p "$D/bin"
	# here: another program under the target's path
	cc -O1 -o "$D/bin/loop" "$MT_ROOT/tests/data/capture/decoy.c"
	# there: loop.c, in a tmpfs only its mount namespace sees
	unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs "$1" &&
	    cp "$2" "$1/loop" && exec "$1/loop"' _ "$D/bin" "$T/loop" \
	    > /dev/null 3>&- &
	tpid=$!
	wait_for is_exe "$tpid" "$D/bin/loop"
	run with_fakept -- mt-capture attach --backend pt --trigger work \
	    --duration 10 -p "$tpid" -o "$BATS_TEST_TMPDIR/ct.snap"
	[ "$status" -eq 0 ]
	off=$(nm "$T/loop" | awk '$3 == "work" {print $1}')
	[[ "$output" == *"trigger 'work' is work in /proc/$tpid/root$D/bin/loop+0x${off#"${off%%[!0]*}"}"* ]]
	[[ "$output" == *"wrote snapshot 0 (trigger)"* ]]
	# the program that ran is bundled, not the file of that name here
	id=$(readelf -n "$T/loop" | awk '/Build ID/ {print $3}')
	run mt-decode --info "$BATS_TEST_TMPDIR/ct.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"bundled elf $D/bin/loop, "*" bytes, build-id $id"* ]]
}

@test "mt-capture attach: DSO:SYMBOL of a library a target in another mount namespace loads later is found in its root, not the same-named file here" {
	needs_root "mount namespaces and uprobes"
	D="$BATS_TEST_TMPDIR/ct"
	mkdir -p "$D/lib"
	# here: a decoy under the path the target's loader will search
	cc -shared -fPIC -O1 -DDECOY -o "$D/lib/libmtc.so" \
	    "$MT_ROOT/tests/data/capture/mtclib.c"
	# there: the real one, in a tmpfs only its mount namespace sees
	cc -shared -fPIC -O1 -o "$D/real.so" "$MT_ROOT/tests/data/capture/mtclib.c"
	mkfifo "$D/go" "$D/ready"
	LD_LIBRARY_PATH="$D/lib" unshare -m --propagation private sh -c \
	    'mount -t tmpfs tmpfs "$1" && cp "$2" "$1/libmtc.so" &&
	    exec "$3" "$4" libmtc.so mtc_fn' _ "$D/lib" "$D/real.so" \
	    "$T/dlfifo" "$D/go" > "$D/out" 3>&- &
	tpid=$!
	wait_for is_exe "$tpid" "$T/dlfifo"
	exec 5<>"$D/ready"
	( rc=0
	  with_fakept -- mt-capture attach --backend pt --ready-fd 3 \
	      --trigger libmtc.so:mtc_fn --duration 20 -p "$tpid" \
	      -o "$D/dl.snap" 3>"$D/ready" 2>"$D/cap.err" || rc=$?
	  echo $rc > "$D/cap.status" ) &
	b=
	read -r -n 1 -t 60 -u 5 b || true
	exec 5<&-
	[ "$b" = r ]
	echo x > "$D/go"
	wait_for test -s "$D/cap.status" || wait_for test -s "$D/cap.status"
	cat "$D/cap.err"
	[ "$(cat "$D/cap.status")" -eq 0 ]
	[ "$(cat "$D/out")" = 47 ]
	off=$(nm -D "$D/real.so" | awk '$3 == "mtc_fn" {print $1}')
	grep -q "trigger 'libmtc.so:mtc_fn' is mtc_fn in /proc/$tpid/root$D/lib/libmtc.so+0x${off#"${off%%[!0]*}"}" "$D/cap.err"
	grep -q "wrote snapshot 0 (trigger)" "$D/cap.err"
}

@test "mt-capture run --all-threads: a child process the per-CPU trace follows is adopted: its trigger hits count" {
	needs_uprobes
	run with_fakept -- mt-capture run --all-threads --backend pt \
	    --trigger work -o "$BATS_TEST_TMPDIR/f.snap" -- "$T/forker" 3
	[ "$status" -eq 0 ]
	[[ "$output" =~ following\ process\ ([0-9]+),\ a\ child\ of\ process\ ([0-9]+) ]]
	child=${BASH_REMATCH[1]}
	[[ "$output" == *"wrote snapshot 0 (trigger)"* ]]
	run mt-decode --info "$BATS_TEST_TMPDIR/f.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"trigger work at 0x"*" thread $child/$child "* ]]
	# a child that execs another program: its hit counts and that
	# program is bundled (from the sideband's MMAP2 of the child)
	run with_fakept -- mt-capture run --all-threads --backend pt \
	    --trigger "$T/worker:mt_test_hit" -o "$BATS_TEST_TMPDIR/w.snap" \
	    -- "$T/forker" 0 "$T/worker" 500
	[ "$status" -eq 0 ]
	[[ "$output" == *"wrote snapshot 0 (trigger)"* ]]
	run mt-decode --info "$BATS_TEST_TMPDIR/w.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"bundled elf $T/worker, "* ]]
}

@test "mt-capture --multi-snapshot: files bundled once are not read again for the next snapshots" {
	needs_uprobes
	cp "$T/loop" "$BATS_TEST_TMPDIR/loopw"
	"$BATS_TEST_TMPDIR/loopw" > /dev/null 3>&- &
	tpid=$!
	wait_for is_exe "$tpid" "$BATS_TEST_TMPDIR/loopw"
	run with_fakept FAKEPT_WATCH=/loopw -- mt-capture attach --backend pt \
	    --trigger work --multi-snapshot --max-snapshots 3 -p "$tpid" \
	    -o "$BATS_TEST_TMPDIR/m.snap"
	[ "$status" -eq 0 ]
	[[ "$output" == *"wrote snapshot 2 (trigger)"* ]]
	# read whole once, when recording starts, not at each snapshot
	run awk '/^read .*\/loopw$/ { n += $2 } END { print n + 0 }' "$L"
	[ "$output" -eq "$(stat -c %s "$BATS_TEST_TMPDIR/loopw")" ]
	for f in m.snap m-1.snap m-2.snap; do
		run mt-decode --info "$BATS_TEST_TMPDIR/$f"
		[[ "$output" == *"bundled elf $BATS_TEST_TMPDIR/loopw, "* ]]
	done
}
