# Shared by tests/mt-capture-*.bats: build the small test targets of
# tests/data/capture into $T, and helpers to start mt-capture in the
# background and wait until it records (--ready-fd).

build_targets() {
	export T="$BATS_FILE_TMPDIR"
	cc -O1 -g -o "$T/loop" "$MT_ROOT/tests/data/capture/loop.c"
	cc -O1 -g -pthread -o "$T/worker" "$MT_ROOT/tests/data/capture/worker.c"
	cc -O1 -g -o "$T/dl" "$MT_ROOT/tests/data/capture/dl.c" -ldl
	cc -O1 -g -o "$T/fifocos" "$MT_ROOT/tests/data/capture/fifocos.c" -ldl
	cc -O1 -g -o "$T/peekcode" "$MT_ROOT/tests/data/capture/peekcode.c" -ldl
	cc -O1 -g -pthread -o "$T/thrcos" "$MT_ROOT/tests/data/capture/thrcos.c" -ldl
	cc -O1 -g -o "$T/dlfifo" "$MT_ROOT/tests/data/capture/dlfifo.c" -ldl
}

# start_capture ARGS...: run mt-capture ARGS in the background with
# --ready-fd 3 and wait (60 s at most) for its ready byte.  Sets CAP_PID;
# its stderr goes to $T/cap.err, its stdout to $CAP_OUT (default
# $T/cap.out), its status to $T/cap.status.
start_capture() {
	rm -f "$T/ready" "$T/cap.status"
	mkfifo "$T/ready"
	exec 5<>"$T/ready"
	# (set -e holds in the subshell: keep a failing status)
	( rc=0
	  mt-capture "$1" --ready-fd 3 "${@:2}" 3>"$T/ready" 2>"$T/cap.err" >"${CAP_OUT:-$T/cap.out}" || rc=$?
	  echo $rc > "$T/cap.status" ) &
	CAP_PID=$!
	local b=""
	read -r -n 1 -t 60 -u 5 b || true
	exec 5<&-
	[ "$b" = "r" ]
	# the subshell's child is mt-capture itself
	CAP_PID=$(pgrep -P "$CAP_PID" -x mt-capture)
	[ -n "$CAP_PID" ]
}

# wait_capture: wait (60 s at most) for the background mt-capture; sets
# CAP_STATUS.
wait_capture() {
	local i
	for i in $(seq 600); do
		[ -s "$T/cap.status" ] && break
		sleep 0.1
	done
	CAP_STATUS=$(cat "$T/cap.status")
}

# wait_pid_line [FILE]: TPID = the first line of FILE (default
# $T/cap.out), where the loop target prints its pid (30 s at most).
wait_pid_line() {
	local i f=${1:-$T/cap.out}
	for i in $(seq 300); do
		[ -s "$f" ] && break
		sleep 0.1
	done
	TPID=$(head -1 "$f")
	[ -n "$TPID" ]
}

# not_stopped_nor_traced PID: the process runs free.
not_stopped_nor_traced() {
	local st tr
	st=$(awk '/^State:/ {print $2}' "/proc/$1/status")
	tr=$(awk '/^TracerPid:/ {print $2}' "/proc/$1/status")
	[ "$tr" = "0" ]
	[ "$st" != "T" ] && [ "$st" != "t" ]
}

# private_libm DIR: a copy of the system's libm.so.6 in DIR, for
# LD_LIBRARY_PATH=DIR.  Uprobes are set per file: an int3 in a process
# mapping this copy comes from a uprobe on it, never from another run's
# trigger on the system's libm (peekcode in the uprobe tests).
private_libm() {
	mkdir -p "$1"
	cp "$(realpath /lib/x86_64-linux-gnu/libm.so.6)" "$1/libm.so.6"
}

# peek_is_original ERR LIB PEEK: the trigger libm.so.6:cos that
# mt-capture's stderr ERR describes is cos in the file LIB, and PEEK (the
# output of peekcode cos in another process) is LIB's own byte there, no
# int3, read from a mapping of LIB.
peek_is_original() {
	local off want poff pbyte ppath
	off=$(sed -n "s/.*trigger 'libm.so.6:cos' is cos.*libm\.so\.6+0x\([0-9a-f]*\).*/\1/p" "$1")
	[ -n "$off" ]
	grep -qF "$2+0x$off" "$1"
	read -r poff pbyte ppath <<< "$3"
	[ "$ppath" = "$2" ]
	[ "$poff" = "$off" ]
	want=$(od -An -tx1 -j $((16#$off)) -N1 "$2" | tr -d ' ')
	[ "$want" != cc ]
	[ "$pbyte" = "$want" ]
}
