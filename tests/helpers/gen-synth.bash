# bench/gen-synth for the tests (sourced with `load helpers/gen-synth`).
#
#   gen_synth_build DIR SEED   build DIR/gen-synth against this build's
#                              libmtcommon.a (with the sanitizer runtimes
#                              when it is a SANITIZE build) and assemble its
#                              program of SEED as DIR/prog; then
#                              "DIR/gen-synth snap ... -e DIR/prog" writes
#                              snapshots.

gen_synth_build() {
	local dir=$1 seed=$2 san=
	if nm "$MT_BUILD/libmtcommon.a" 2>/dev/null | grep -q __asan; then
		san=-fsanitize=address,undefined
	fi
	cc -O2 -std=c11 -D_GNU_SOURCE $san -fno-lto -iquote "$MT_ROOT/common" \
		-o "$dir/gen-synth" "$MT_ROOT/bench/gen-synth.c" \
		"$MT_BUILD/libmtcommon.a" -lipt -lxxhash -lz || return 1
	"$dir/gen-synth" asm -S "$seed" -o "$dir/prog.s" || return 1
	cc -nostdlib -static -no-pie -Wl,--build-id -Wl,-Ttext=0x401000 \
		-o "$dir/prog" "$dir/prog.s"
}
