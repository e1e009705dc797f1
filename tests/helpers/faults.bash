# Helpers of the fault-injection tests (tests/mt-*-faults.bats); sourced.
#
#   tiny_fs DIR [SIZE]   mount a tmpfs of SIZE (default 64k) on DIR: a disk
#                        that fills up.  Needs root (or user namespaces:
#                        then the test re-runs itself inside `unshare -rm`).
#   tiny_fs_done DIR     unmount it
#   pipe_head CMD...     run "CMD | head -1" with CMD's stderr in
#                        $BATS_TEST_TMPDIR/err and its exit status in
#                        $pstatus, head's output in $pout
#   pipe_head_ign ...    the same with SIGPIPE ignored by the parent (as
#                        some CI runners and Python's subprocess leave it)
#   device_node PATH     a /dev/full-like character device at PATH

tiny_fs() {
	mkdir -p "$1"
	mount -t tmpfs -o "size=${2:-64k},mode=0755" tmpfs "$1"
}

tiny_fs_done() {
	umount "$1" 2>/dev/null || true
}

pipe_head() {
	local e="$BATS_TEST_TMPDIR/err"
	pout=$(bash -c '"$@" 2>"'"$e"'" | head -1; echo "status=${PIPESTATUS[0]}"' _ "$@")
	pstatus=${pout##*status=}
	pout=${pout%status=*}
	pout=${pout%$'\n'}
	perr=$(cat "$e")
}

pipe_head_ign() {
	local e="$BATS_TEST_TMPDIR/err"
	pout=$(bash -c 'trap "" PIPE; "$@" 2>"'"$e"'" | head -1; echo "status=${PIPESTATUS[0]}"' _ "$@")
	pstatus=${pout##*status=}
	pout=${pout%status=*}
	pout=${pout%$'\n'}
	perr=$(cat "$e")
}

device_node() {
	mknod "$1" c 1 7	# the same device as /dev/full
}

# A snapshot whose file header says version $2.0 (from snapshot $1).
# The major and minor versions are u16 LE at offsets 8 and 10 and are
# checked before the header checksum, as docs/formats/snapshot.md says
# readers must.
newer_major() {
	cp "$1" "$3"
	printf "$(printf '\\x%02x\\x%02x\\x00\\x00' $(($2 & 255)) $(($2 >> 8)))" |
		dd of="$3" bs=1 seek=8 conv=notrunc status=none
}

# A symbolized event stream of N call/return pairs on one thread (for
# outputs bigger than a pipe or a tiny disk holds).
big_events() {
	awk -v n="$1" 'BEGIN {
		print "mt-events 1.0"
		print "info time-base 1000"
		print "info symbolized 1"
		print "proc 42 demo demo"
		print "thread 42 42 demo"
		print "file 1 /src/demo.c"
		print "fn 1 0x401100 /bin/demo main"
		print "fn 2 0x401200 /bin/demo work"
		print "loc 1 0x401110 1:1:10"
		print "loc 2 0x401200 2:1:20"
		print "loc 3 0x401210 2:1:22"
		print "loc 4 0x401115 1:1:11"
		t = 1000
		for (i = 0; i < n; i++) {
			printf "call %d 42 0x401110 0x401200 @1 @2\n", t += 10
			printf "ret %d 42 0x401210 0x401115 @3 @4\n", t += 10
		}
		printf "end %d 42\n", t + 10
	}'
}

# Build the write-fault shim (tests/data/faults/wfault.c) and the spin
# target into $1.  ASan builds must accept a preloaded library that is not
# the ASan runtime.
fault_tools() {
	cc -shared -fPIC -O1 -o "$1/wfault.so" "$MT_ROOT/tests/data/faults/wfault.c" -ldl
	cc -O1 -o "$1/spin" "$MT_ROOT/tests/data/faults/spin.c"
}

# with_wfault VAR=VALUE... -- CMD...: run CMD with the shim preloaded.
with_wfault() {
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	exec env LD_PRELOAD="$F/wfault.so" \
	    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	    "${env[@]}" "$@"
}

# wait_for COND-CMD...: poll (20 s at most) until the command succeeds.
wait_for() {
	local i
	for i in $(seq 400); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

# Directory $1 holds a temporary output: a dot file other than .ready.
has_temp() {
	[ -n "$(find "$1" -maxdepth 1 -type f -name '.*' ! -name .ready)" ]
}
