# Helpers of tests/mt-capture-livept.bats: the live Intel PT path run on a
# machine without Intel PT, through the LD_PRELOAD shim
# tests/data/faults/fakept.c (a dummy event stands in for intel_pt; old
# kernels, errnos and AUX contents as the environment asks).
#
#   fakept_tools DIR   build the shim into DIR/fakept.so and a fake sysfs
#                      tree DIR/sys (tests/data/sysfs/full with intel_pt
#                      type 4242 and uprobe type 4243, which the shim maps)
#   with_fakept VAR=VALUE... -- CMD...
#                      run CMD with the shim and the tree; the shim logs to
#                      $BATS_TEST_TMPDIR/peo.log

fakept_tools() {
	cc -shared -fPIC -O1 -o "$1/fakept.so" "$MT_ROOT/tests/data/faults/fakept.c" -ldl
	rm -rf "$1/sys"
	cp -r "$MT_ROOT/tests/data/sysfs/full" "$1/sys"
	echo 4242 > "$1/sys/sys/bus/event_source/devices/intel_pt/type"
	echo 4243 > "$1/sys/sys/bus/event_source/devices/uprobe/type"
}

with_fakept() {
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	env LD_PRELOAD="$FP/fakept.so" FAKEPT_TYPE=4242 FAKEPT_UPROBE=4243 \
	    FAKEPT_LOG="$BATS_TEST_TMPDIR/peo.log" MT_SYSFS_ROOT="$FP/sys" \
	    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	    "${env[@]}" "$@"
}
