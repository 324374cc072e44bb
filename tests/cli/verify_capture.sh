# bach verify DIR checks every segment against the manifest: a deleted,
# swapped, replaced, extra or doubled segment is damage (exit 1), and the
# manifest's totals must add up. A crashed capture's unfinished segment is
# named and read, not called damage.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

mkdir "$T/cap"
"$BACHD" --driver fake --option records=600000 --option seed=5 --set rotate_mb=1 \
	--set ring_mb=4 --output "$T/cap" 2> "$T/log" || fail "capture: $(cat "$T/log")"
C=$(capdir "$T/cap")
[ "$(ls "$C" | grep -cE '^seg-[0-9]+\.byu(\.gz|\.zst)?$')" -ge 3 ] || fail "fewer than 3 segments: $(ls "$C")"
expect_status 0 "$BACH" verify "$C"
expect_out "verify: 4 files, 600000 records, 0 problems"

# fresh COPY: a copy of the capture to damage
fresh() {
	rm -rf "$T/c"
	cp -a "$C" "$T/c"
}
# damaged WHAT TEXT: verify finds the damage and says TEXT
damaged() {
	expect_status 1 "$BACH" verify "$T/c"
	expect_out "$2"
	echo "$1: found"
}

fresh
rm "$T/c/seg-000002.byu.zst"
damaged "a deleted segment" "seg-000002.byu.zst is missing (manifest.jsonl line"

fresh
mv "$T/c/seg-000001.byu.zst" "$T/swap"
mv "$T/c/seg-000002.byu.zst" "$T/c/seg-000001.byu.zst"
mv "$T/swap" "$T/c/seg-000002.byu.zst"
damaged "two segments swapped" "c: seg-000001.byu.zst has"

fresh
"$BACH" gen --records 174720 --seed 99 -o "$T/other.byu.zst"
cp "$T/other.byu.zst" "$T/c/seg-000002.byu.zst"
damaged "a segment replaced by another trace" "seg-000002.byu.zst"
grep -q "not the segment written\|holds\|bytes, manifest" "$T/out" || fail "no reason given: $(cat "$T/out")"

fresh
n=$(zstd -dcq "$T/c/seg-000002.byu.zst" | wc -c)
"$BACH" gen --records $((n / 6)) --seed 98 -o "$T/same.byu.zst"
cp "$T/same.byu.zst" "$T/c/seg-000002.byu.zst"
expect_status 1 "$BACH" verify "$T/c"
grep -q "seg-000002.byu.zst" "$T/out" || fail "a same-sized trace in place of a segment passed: $(cat "$T/out")"

fresh
cp "$T/c/seg-000003.byu.zst" "$T/c/seg-000005.byu.zst"
damaged "an extra segment" "seg-000005.byu.zst is not named in manifest.jsonl"

fresh
zstd -dcq "$T/c/seg-000001.byu.zst" > "$T/c/seg-000001.byu"
damaged "a segment there as .byu and .byu.zst" "seg-000001.byu is not named in manifest.jsonl"

fresh
crc=$(grep '"name":"seg-000003.byu.zst"' "$T/c/manifest.jsonl" | sed 's/.*"crc32":"\([0-9a-f]*\)".*/\1/')
sed -i "s/\"crc32\":\"$crc\"/\"crc32\":\"0badc0de\"/" "$T/c/manifest.jsonl"
damaged "a segment whose CRC is not the manifest's" "seg-000003.byu.zst: CRC-32 $crc, manifest.jsonl line 4 says 0badc0de"

fresh
sed -i 's/"event":"gap"/"event":"gap","x":1/' "$T/c/manifest.jsonl"
grep '"event":"ended"' "$T/c/manifest.jsonl" | sed 's/"lost":[0-9]*/"lost":7/' > "$T/end"
grep -v '"event":"ended"' "$T/c/manifest.jsonl" > "$T/m"
cat "$T/m" "$T/end" > "$T/c/manifest.jsonl"
damaged "totals that do not add up" "the gap events sum to 0 lost, the ended event says 7"

fresh
printf '{"time":"x","event":"segment","name":\n' >> "$T/c/manifest.jsonl"
printf '{"event":"ended"}\n' >> "$T/c/manifest.jsonl"
damaged "a malformed manifest line" "manifest.jsonl: line"

# events this bach does not know: read past and named in a warning, with
# their line and their name, control characters escaped; not damage (a
# newer bach's, or a hand-edited line: verify passed them silently)
fresh
lines=$(wc -l < "$T/c/manifest.jsonl")
printf '{"event":"<svg onload=alert(1)>"}\n{"time":"x","event":"a\\u0001\\nb\\u009b"}\n' >> "$T/c/manifest.jsonl"
expect_status 0 "$BACH" verify "$T/c"
expect_out "warning: $T/c/manifest.jsonl line $((lines + 1)): unknown event \"<svg onload=alert(1)>\""
expect_out "line $((lines + 2)): unknown event \"a\\x01\\nb\\xc2\\x9b\""
expect_out "0 problems, 2 unknown events (warnings, not damage)"
grep -q "$(printf 'a\001')" "$T/out" && fail "a control character printed raw: $(cat -A "$T/out")"
# and the events bachd writes are all known
expect_status 0 "$BACH" verify "$C"
grep -q "unknown event" "$T/out" && fail "a known event called unknown: $(cat "$T/out")"

# a crash: the .part is named and read, and nothing is called damage
mkdir "$T/crash"
crashed_capture "$T/crash" 3
K=$CRASHED
expect_status 0 "$BACH" verify "$K"
expect_out "seg-000001.byu.zst.part: unfinished segment:"
expect_out "no ended event"
# bach recover closes it offline, as a bachd start would; once
expect_status 0 "$BACH" recover "$K"
expect_out "$K: recovered"
expect_status 0 "$BACH" recover "$T/crash"
expect_out "0 captures recovered"
expect_status 0 "$BACH" verify "$K"
expect_out "0 problems"
grep -q '"event":"ended","state":"recovered"' "$K/manifest.jsonl" || fail "not closed"
# never under a running writer
bg "$BACHD" --driver fake --option rate=100000 --set ring_mb=4 --output "$T/crash" 2> /dev/null
P=$BGPID
wait_until 20 "a second capture" sh -c "[ \$(ls -d '$T/crash'/2*Z* | wc -l) -eq 2 ]"
expect_status 2 "$BACH" recover "$T/crash"
expect_err "another bachd or bach capture is writing there"
expect_status 2 "$BACH" recover "$(capdir "$T/crash")"
kill -TERM "$P"
reap "$P"
echo ok
