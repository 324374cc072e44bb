# The capture's clocks are exactly the source's (docs/formats.md 3.2):
# the ring keeps them as u16 steps with escapes, the sidecar as runs, and
# whatever the steps, bach dump --time gives back every clock a replayed
# trace's sidecar holds. The clocks are made here (no bach code), written
# by tests/helpers/sidecar.py: runs of steady steps, steps of 65534,
# 65535 (the escape's own value), 65536 and 2^40, a step of 0, entries
# without a time (at the start and in the middle), and a stretch where
# every step escapes, longer than a ring block's escapes (the block goes
# to the writer early); 3 segments (rotate_mb=1: 174762 records each).
. "$TOP/tests/lib.sh"

N=400000
SC="python3 $TOP/tests/helpers/sidecar.py"
$BACH gen --records $N --seed 5 -o "$T/t.byu" || fail "gen"
awk -v n=$N 'BEGIN {
	c = 1000
	for (i = 0; i < n; i++) {
		if (i < 100 || (i >= 250000 && i < 250050)) { print "-"; continue }
		if (i < 50000) s = 2
		else if (i < 60000) s = (i % 4 == 0) ? 65535 : (i % 4 == 1) ? 65534 : (i % 4 == 2) ? 65536 : 3
		else if (i < 70000) s = 70000 + i % 13   # every step an escape
		else if (i == 100000) s = 2 ^ 40
		else if (i < 120000) s = i % 3          # 0, 1, 2: short runs
		else s = (i % 50000 == 0) ? 65535 : 2
		c += s
		printf "%.0f\n", c
	}
}' > "$T/clocks"
[ "$(wc -l < "$T/clocks")" -eq $N ] || fail "made $(wc -l < "$T/clocks") clocks"
$SC write "$T/t.time.gz" 66666666 < "$T/clocks"

# the source reads back as made (bach's reader of encoding 1, the
# helper's default)
$BACH dump --time "$T/t.byu" | awk '{ print $4 }' > "$T/src"
cmp -s "$T/src" "$T/clocks" || fail "the source's clocks: $(diff "$T/src" "$T/clocks" | head -3)"

mkdir "$T/r"
$BACH capture --driver replay --option path="$T/t.byu" --set rotate_mb=1 \
	--output "$T/r" 2> "$T/err" || fail "replay: $(cat "$T/err")"
R=$(ls -d "$T"/r/2*Z*)
for s in 1 2 3; do
	[ -f "$R/seg-00000$s.time.gz" ] || fail "segment $s has no sidecar: $(ls "$R")"
done
$BACH dump --time "$R" | awk '{ print $4 }' > "$T/got"
cmp -s "$T/got" "$T/clocks" ||
	fail "the capture's clocks differ from the source's: $(diff "$T/got" "$T/clocks" | head -5)"
# Python's zlib reads the sidecars (encoding 2, runs) to the same clocks
for s in 1 2 3; do $SC entries "$R/seg-00000$s.time.gz"; done > "$T/py"
cmp -s "$T/py" "$T/clocks" || fail "sidecar.py reads other clocks: $(diff "$T/py" "$T/clocks" | head -5)"
# the segment events' first and last clocks are the sidecars'
for s in 1 2 3; do
	grep "\"name\":\"seg-00000$s" "$R/manifest.jsonl" |
		sed 's/.*"first_clock":\([0-9]*\),"last_clock":\([0-9]*\).*/\1 \2/'
done > "$T/ev"
for s in 1 2 3; do
	$SC entries "$R/seg-00000$s.time.gz" | grep -v '^-$' | sed -n '1p;$p' | paste -sd' '
done > "$T/want"
same "$T/ev" "$T/want"
$BACH verify "$R" > /dev/null || fail "the replay does not verify"

# Clocks are u64 (docs/formats.md 3.2): a capture whose clocks pass 2^63
# verifies, and dump --time gives them back. 3 segments: the first all
# below 2^63 (its segment event has its first and last clocks), the
# second crossing it, the third above it up to near 2^64 - 1 after a jump
# of more than 2^62 (neither has them: the manifest's JSON integers end at
# 2^63 - 1, docs/bachd.md section 5).
N=400000
$BACH gen --records $N --seed 6 -o "$T/big.byu" || fail "gen"
python3 -c '
import sys
n, h = int(sys.argv[1]), 2**63
for i in range(n):
    print(h - 750000 + 3 * i if i < 380000 else 2**64 - 100000 + i - 380000)' $N > "$T/bigclk"
$SC write "$T/big.time.gz" 66666666 < "$T/bigclk"
mkdir "$T/rb"
$BACH capture --driver replay --option path="$T/big.byu" --set rotate_mb=1 \
	--output "$T/rb" 2> "$T/err" || fail "replay: $(cat "$T/err")"
R=$(ls -d "$T"/rb/2*Z*)
[ -f "$R/seg-000003.time.gz" ] || fail "not 3 segments: $(ls "$R")"
$BACH dump --time "$R" | awk '{ print $4 }' > "$T/got"
cmp -s "$T/got" "$T/bigclk" ||
	fail "clocks past 2^63 differ: $(diff "$T/got" "$T/bigclk" | head -5)"
$BACH verify "$R" > "$T/v" || fail "clocks past 2^63 do not verify: $(grep -v ': OK' "$T/v")"
# segment 3: the entries after 2 * 184960 (rotate_mb=1's segments)
c3="$(sed -n 369921p "$T/bigclk") to $(tail -n 1 "$T/bigclk")"
grep -q "seg-000003.time.gz: OK, .*, clocks $c3$" "$T/v" ||
	fail "verify's clocks of segment 3: $(grep seg-000003.time "$T/v")"
first=$(sed -n 1p "$T/bigclk")
grep "\"name\":\"seg-000001" "$R/manifest.jsonl" | grep -q "\"first_clock\":$first," ||
	fail "segment 1's event has not its first clock $first: $(grep seg-000001 "$R/manifest.jsonl")"
! grep "\"name\":\"seg-00000[23]" "$R/manifest.jsonl" | grep -q _clock ||
	fail "a clock past 2^63 - 1 in the manifest: $(grep _clock "$R/manifest.jsonl")"
