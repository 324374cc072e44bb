# --range at record numbers whose byte offsets do not fit in 64 bits
# (2^63 and up, 2^64 / 6 and up): past the end, every command that takes
# --range gives nothing and exits 0, as for any range past the end
# (README.md, docs/api.md), never records shifted from where 6 * START
# wrapped to. An END that wraps still stops at the real end.
. "$TOP/tests/lib.sh"

N=400000 # three capture segments of 1 MiB of records
$BACH gen --records $N --seed 4 -o "$T/a.byu"
$BACH gen --records $N --seed 4 -o "$T/a.byu.gz"
gzip -c "$T/a.byu" > "$T/plain.byu.gz" # no BC fields: read through
mkdir "$T/cap"
# the fake board plays bach gen's stream of the same seed
$BACH capture --driver fake --option records=$N --option seed=4 \
	--set rotate_mb=1 --output "$T/cap" > /dev/null 2>&1 || fail "capture"
CAP=$(ls -d "$T"/cap/2*)
[ "$(ls "$CAP"/seg-*.byu.zst | wc -l)" -ge 3 ] || fail "capture: $(ls "$CAP")"
$BACH dump "$T/a.byu" > "$T/all.txt"

# 6 * 9223372036854775813 wraps to 30 (record 5), 6 * 3074457345618258603
# to 2 (byte 2), 6 * 18446744073709551615 to 2^64 - 6; 1537228672809129302
# is the first record whose byte offset is beyond off_t
FAR="9223372036854775813:9223372036854775816
9223372036854775808:
9223372036854775807:9223372036854775808
3074457345618258603:3074457345618258605
3074457345618258602:
3074457345618258604:18446744073709551615
18446744073709551614:18446744073709551615
18446744073709551615:
1537228672809129302:1537228672809129310
12297829382473034411:"

for r in $FAR; do
	for f in "$T/a.byu" "$T/a.byu.gz" "$T/plain.byu.gz" "$CAP" -; do
		src=$f from=
		[ "$f" != - ] || src="$T/a.byu.gz" from="--from byu.gz"
		name=${f##*/}

		expect_status 0 sh -c '"$1" dump --range "$2" "$3" < "$4"' sh \
			"$BACH" "$r" "$f" "$src"
		[ ! -s "$T/out" ] || fail "dump --range $r $name printed $(wc -l < "$T/out") records: $(head -2 "$T/out")"
		[ ! -s "$T/err" ] || fail "dump --range $r $name: $(cat "$T/err")"

		expect_status 0 sh -c '"$1" stat --json --range "$2" "$3" < "$4"' sh \
			"$BACH" "$r" "$f" "$src"
		expect_out '{"records":0,'

		rm -f "$T/c.byu" "$T/c.byu.gz"
		expect_status 0 sh -c '"$1" convert -q $6 --range "$2" "$3" "$5" < "$4"' sh \
			"$BACH" "$r" "$f" "$src" "$T/c.byu" "$from"
		[ -f "$T/c.byu" ] && [ ! -s "$T/c.byu" ] ||
			fail "convert --range $r $name: $(wc -c < "$T/c.byu") bytes"
		expect_status 0 sh -c '"$1" convert -q $6 --range "$2" "$3" "$5" < "$4"' sh \
			"$BACH" "$r" "$f" "$src" "$T/c.byu.gz" "$from"
		[ "$(gzip -dc "$T/c.byu.gz" | wc -c)" -eq 0 ] ||
			fail "convert --range $r $name to .byu.gz: records"

		# diff: each side against the others, and against itself
		for g in "$T/a.byu" "$T/a.byu.gz" "$T/plain.byu.gz" "$CAP"; do
			expect_status 0 sh -c '"$1" diff --range "$2" "$3" "$5" < "$4"' sh \
				"$BACH" "$r" "$f" "$src" "$g"
			expect_out "0 matched, 0 changed, 0 only in A, 0 only in B"
		done
	done
done

# an END that wraps: records START to the real end, exactly
for r in 399995:3074457345618258603 399995:9223372036854775813 \
	399995:18446744073709551615 0:3074457345618258603; do
	s=${r%:*}
	for f in "$T/a.byu" "$T/a.byu.gz" "$T/plain.byu.gz" "$CAP"; do
		$BACH dump --range "$r" "$f" > "$T/r.txt"
		sed -n "$((s + 1)),\$p" "$T/all.txt" | cmp -s - "$T/r.txt" ||
			fail "dump --range $r ${f##*/}: $(wc -l < "$T/r.txt") lines"
		$BACH stat --json --range "$r" "$f" > "$T/out"
		expect_out "{\"records\":$((N - s)),"
	done
	expect_status 0 $BACH diff --range "$r" "$T/a.byu" "$T/plain.byu.gz"
	expect_out "$((N - s)) matched, 0 changed, 0 only in A, 0 only in B"
	$BACH convert -q --range "$r" "$CAP" "$T/c.byu"
	tail -c $(((N - s) * 6)) "$T/a.byu" | cmp -s - "$T/c.byu" ||
		fail "convert --range $r of the capture"
done
echo ok
