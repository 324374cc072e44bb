# A raw .byu that another process truncates while bach reads it: every
# command reads what is still there, then says the file was cut short,
# naming it and the byte offsets, and exits 1 (damaged data); none dies
# of SIGBUS (a mapped file's pages past its new end). Made deterministic
# two ways: bach dump blocked on a full pipe while the file is cut, and
# tests/helpers/truncate_shim.so (LD_PRELOAD), which cuts the file right
# after the command has read or mapped a given number of its bytes.
. "$TOP/tests/lib.sh"
case $BUILD in /*) HB=$BUILD ;; *) HB=$TOP/$BUILD ;; esac
SHIM=$HB/tests/helpers/truncate_shim.so
[ -f "$SHIM" ] || fail "$SHIM is not built: make tests"
# the shim is not sanitized: its read() comes before the sanitizer's
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
export ASAN_OPTIONS

N=2000000 # 12000000 bytes: 46 of the reader's 256 KiB blocks
$BACH gen --records $N --seed 6 -o "$T/keep.byu"

# bach dump, blocked writing its first lines to a pipe nobody reads yet,
# while the file is cut to nothing
cp "$T/keep.byu" "$T/big.byu"
{
	set +e
	$BACH dump "$T/big.byu" 2> "$T/err"
	echo $? > "$T/rc"
} | {
	head -c 1 > /dev/null
	truncate -s 0 "$T/big.byu"
	cat > /dev/null
}
[ "$(cat "$T/rc")" = 1 ] || fail "dump of a file cut under it exited $(cat "$T/rc"): $(cat "$T/err")"
grep -q "big.byu: truncated while being read: 12000000 bytes when opened, 0 now; reading stopped at byte offset [0-9]" \
	"$T/err" || fail "dump: $(cat "$T/err")"

# cut STATUS CMD...: run CMD with the shim cutting big.byu to $to bytes
# once $after of its bytes were read (or mapped); it must exit STATUS
cut() {
	cp "$T/keep.byu" "$T/big.byu"
	cut_status=$1
	shift
	expect_status $cut_status env TRUNCATE_FILE="$T/big.byu" \
		TRUNCATE_AFTER=$after TRUNCATE_TO=$to LD_PRELOAD="$SHIM" "$@"
}

# after the first block: to nothing, to a record's end, to the middle of
# a record (every command reads the records up to the cut, then says so)
after=1
for to in 0 6000000 6000003; do
	say="big.byu: truncated while being read: 12000000 bytes when opened, $to now; reading stopped at byte offset"
	for cmd in "dump" "stat" "verify" "sim --l1 8k:32:2" "mrc --sizes 1k,8k" \
		"convert -q --to byu.gz"; do
		out=
		case $cmd in convert*) out=$T/c.byu.gz ;; esac
		cut 1 $BACH $cmd "$T/big.byu" $out
		# (verify says what it found on standard output)
		cat "$T/out" "$T/err" | grep -qF "$say" ||
			fail "$cmd: $(cat "$T/out" "$T/err" | tail -3)"
	done
	# bach diff: damage is "could not compare" (2), never "different"
	cut 2 $BACH diff "$T/big.byu" "$T/keep.byu"
	expect_err "$say"
	[ "$to" -eq 0 ] && continue
	# what was there came out: the first million records, exactly
	cut 1 $BACH dump "$T/big.byu"
	expect_err "$say $to"
	$BACH dump "$T/keep.byu" | head -n 1000000 | cmp -s - "$T/out" ||
		fail "dump before the cut: $(wc -l < "$T/out") lines"
	[ ! -e "$T/c.byu.gz" ] || fail "convert left its output behind"
done

# bach verify of a capture directory of raw segments: the segment cut
# while its CRC-32 is computed, after the records were read
mkdir "$T/cap"
$BACH capture --driver fake --option records=400000 --option seed=4 \
	--set rotate_mb=1 --set compress=no --output "$T/cap" > /dev/null 2>&1 ||
	fail "capture"
D=$(ls -d "$T"/cap/2*)
S=$D/seg-000001.byu
size=$(wc -c < "$S")
expect_status 1 env TRUNCATE_FILE="$S" TRUNCATE_AFTER=$((size + 1)) \
	LD_PRELOAD="$SHIM" $BACH verify "$D"
expect_out "seg-000001.byu: truncated while being read: $size bytes when opened; reading stopped at byte offset"
echo ok
