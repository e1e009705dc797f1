# Shared by the tests that read the real Intel PT traces of
# $MT_SHARED/testdata/real-pt (its README.md): each trace with its page
# dumps imported by mt-capture import-raw with the IP filter it was
# recorded with.  Sourced; the tests skip when the traces are absent.

RP="$MT_SHARED/testdata/real-pt"

# real_pt_filter NAME: the IP filter range trace NAME was recorded with.
real_pt_filter() {
	case $1 in
	unzip) echo 0x400000-0x427000 ;;
	mruby) echo 0x400000-0x4b6000 ;;
	*) echo "real_pt_filter: no trace '$1'" >&2; return 1 ;;
	esac
}

# real_pt_snap NAME OUT: import trace NAME into snapshot OUT, its pages
# at consecutive addresses joined into one blob (--pages).
real_pt_snap() {
	mt-capture import-raw --pt "$RP/$1/trace" \
		--pages "$RP/$1/addr,$RP/$1/dump" \
		--filter "$(real_pt_filter "$1")" -o "$2"
}

# real_pt_page_snap NAME OUT: the same with one IMAGE operand per page,
# so that every page is a section of its own.
real_pt_page_snap() {
	local ops
	mapfile -t ops < <(od -An -v -t x8 -w8 "$RP/$1/addr" |
		awk -v d="$RP/$1/dump" '{ printf "%s:%d-4096@0x%s\n", d, (NR - 1) * 4096, $1 }')
	mt-capture import-raw --pt "$RP/$1/trace" \
		--filter "$(real_pt_filter "$1")" -o "$2" "${ops[@]}"
}
