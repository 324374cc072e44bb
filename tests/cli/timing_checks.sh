# Timing sidecars checked (docs/formats.md section 3.2, docs/bachd.md
# section 5): each segment event records its sidecar's size, CRC-32 and
# first and last clocks; bach verify holds every sidecar to them; every
# reader of clocks (dump, stat, convert's exports, replay) refuses clocks
# that go backwards, within a sidecar or from one segment of a capture to
# the next, naming the sidecar and the entry (exit 1; replay: 4). The
# oracle is Python's zlib (tests/helpers/sidecar.py), never bach's reading.
. "$TOP/tests/lib.sh"
command -v python3 > /dev/null || skip "no python3: the sidecars cannot be read by another reader here"
SC="python3 $TOP/tests/helpers/sidecar.py"

# three segments (1 MiB each), each with its sidecar
mkdir "$T/c"
$BACH capture --driver fake --option records=400000 --option seed=3 \
	--option timing=1 --set rotate_mb=1 --output "$T/c" 2> "$T/err" ||
	fail "capture: $(cat "$T/err")"
C=$(ls -d "$T"/c/2*Z*)
[ -f "$C/seg-000003.time.gz" ] || fail "want three timed segments: $(ls "$C")"

# ev N KEY: member KEY of segment N's event
ev() { grep "\"event\":\"segment\",\"name\":\"seg-00000$1" "$C/manifest.jsonl" | sed -n "s/.*\"$2\":\"*\([0-9a-f]*\).*/\1/p"; }
# line N: the manifest line of segment N's event
line() { grep -n "\"event\":\"segment\",\"name\":\"seg-00000$1" "$C/manifest.jsonl" | cut -d: -f1; }

# the events say what zlib finds in the files
for s in 1 2 3; do
	f=$C/seg-00000$s.time.gz
	$SC entries "$f" > "$T/e$s"
	[ "$(wc -l < "$T/e$s")" -eq "$(ev $s records)" ] || fail "seg $s: $(wc -l < "$T/e$s") entries for $(ev $s records) records"
	[ "$(ev $s timing_bytes)" -eq "$(wc -c < "$f")" ] || fail "seg $s: timing_bytes $(ev $s timing_bytes), the file has $(wc -c < "$f")"
	[ "$(ev $s timing_crc32)" = "$($SC crc32 "$f")" ] || fail "seg $s: timing_crc32 $(ev $s timing_crc32), zlib says $($SC crc32 "$f")"
	[ "$(ev $s first_clock)" = "$(grep -v -- - "$T/e$s" | head -n 1)" ] || fail "seg $s: first_clock $(ev $s first_clock)"
	[ "$(ev $s last_clock)" = "$(grep -v -- - "$T/e$s" | tail -n 1)" ] || fail "seg $s: last_clock $(ev $s last_clock)"
done
$BACH verify "$C" > "$T/v" || fail "a whole capture does not verify: $(cat "$T/v")"
grep -qF "$C/seg-000002.time.gz: OK, $(ev 2 records) entries, clocks $(ev 2 first_clock) to $(ev 2 last_clock)" "$T/v" ||
	fail "verify does not say the sidecar is whole: $(cat "$T/v")"

# refused TRACE: stat --time, dump --time and convert's laplace export
# exit 1 with the message $want, and print no duration, leave no output
refused() {
	expect_status 1 $BACH stat --time "$1"
	expect_err "$want"
	grep -q "duration\|utilisation" "$T/out" && fail "stat --time printed a duration: $(cat "$T/out")"
	expect_status 1 $BACH dump --time "$1"
	expect_err "$want"
	expect_status 1 $BACH convert --to laplace "$1" "$T/l.laplace"
	expect_err "$want"
	[ ! -e "$T/l.laplace" ] || fail "convert left an output with the clocks going back"
}

# -- swapped sidecars (segments 1 and 2 hold as many records): the clocks
# jump back at segment 2 --------------------------------------------------
[ "$(ev 1 records)" -eq "$(ev 2 records)" ] || fail "segments 1 and 2 differ in records"
cp -rp "$C" "$T/sw"
mv "$T/sw/seg-000001.time.gz" "$T/x"
mv "$T/sw/seg-000002.time.gz" "$T/sw/seg-000001.time.gz"
mv "$T/x" "$T/sw/seg-000002.time.gz"
want="sw/seg-000002.time.gz: entry 0 (in the member at byte offset 0): clock $(head -n 1 "$T/e1") is before $(tail -n 1 "$T/e2"), the last clock of $T/sw/seg-000001.time.gz (entry $(($(ev 2 records) - 1))): the clocks go backwards from one segment to the next"
refused "$T/sw"
mkdir "$T/r"
expect_status 4 $BACH capture --driver replay --option path="$T/sw" --output "$T/r"
expect_err "$want"
# verify: neither sidecar is the one written, and the clocks go back
expect_status 1 $BACH verify "$T/sw"
# (by its size when the two differ, else by its CRC-32)
if [ "$(ev 1 timing_bytes)" = "$(ev 2 timing_bytes)" ]; then
	expect_out "$T/sw: seg-000001.time.gz: CRC-32 $(ev 2 timing_crc32), manifest.jsonl line $(line 1) says $(ev 1 timing_crc32): not the timing sidecar written"
else
	expect_out "$T/sw: seg-000001.time.gz has $(ev 2 timing_bytes) bytes, manifest.jsonl line $(line 1) says $(ev 1 timing_bytes)"
fi
expect_out "$want"

# -- a sidecar whose clocks go back within it: entries 20000 and 20001 of
# segment 3 swapped, written again by zlib (blocked, BC and BT) ----------
awk 'NR == 20001 { a = $0; next } NR == 20002 { print; print a; next } { print }' "$T/e3" > "$T/bad"
[ "$(sed -n 20001p "$T/bad")" -gt "$(sed -n 20002p "$T/bad")" ] || fail "the swap does not go back"
cp "$C/seg-000003.byu.zst" "$T/d.byu.zst"
$SC write "$T/d.time.gz" 66666666 < "$T/e3"
$BACH dump --time "$T/d.byu.zst" > /dev/null || fail "zlib's sidecar of the right clocks is refused"
$SC write "$T/d.time.gz" 66666666 < "$T/bad"
moff=$($SC offsets "$T/d.time.gz" | sed -n "$((20001 / 8160 + 1))p")
want="d.time.gz: entry 20001 (in the member at byte offset $moff): clock $(sed -n 20002p "$T/bad") is before clock $(sed -n 20001p "$T/bad") of entry 20000: the clocks go backwards"
refused "$T/d.byu.zst"
expect_status 1 $BACH verify "$T/d.byu.zst"
expect_out "$want"
# the same in the capture: verify names the damage
cp -rp "$C" "$T/w"
cp "$T/d.time.gz" "$T/w/seg-000003.time.gz"
expect_status 1 $BACH verify "$T/w"
expect_out "$T/w: seg-000003.time.gz has $(wc -c < "$T/d.time.gz") bytes, manifest.jsonl line $(line 3) says $(ev 3 timing_bytes)"
expect_out "w/seg-000003.time.gz: entry 20001 (in the member at byte offset $moff)"

# -- verify: a truncated, a missing, an altered sidecar, and clocks that
# are not the event's ----------------------------------------------------
cp -rp "$C" "$T/v1"
half=$(($(wc -c < "$C/seg-000002.time.gz") / 2))
head -c $half "$C/seg-000002.time.gz" > "$T/v1/seg-000002.time.gz"
touch -r "$C/seg-000002.time.gz" "$T/v1/seg-000002.time.gz"
expect_status 1 $BACH verify "$T/v1"
expect_out "$T/v1: seg-000002.time.gz has $half bytes, manifest.jsonl line $(line 2) says $(ev 2 timing_bytes)"
expect_out "v1/seg-000002.time.gz: truncated gzip member at byte offset"
rm "$T/v1/seg-000002.time.gz"
expect_status 1 $BACH verify "$T/v1"
expect_out "$T/v1: seg-000002.time.gz is missing (manifest.jsonl line $(line 2) names it)"
# readers too: its event says it had one
expect_status 1 $BACH dump --time "$T/v1"
expect_err "v1/seg-000002.time.gz: missing: $T/v1/manifest.jsonl line $(line 2) says seg-000002.byu.zst has it"
cp -p "$C/seg-000002.time.gz" "$T/v1/"
printf '\001' | dd of="$T/v1/seg-000002.time.gz" bs=1 seek=$half conv=notrunc 2> /dev/null
expect_status 1 $BACH verify "$T/v1"
expect_out "$T/v1: seg-000002.time.gz: CRC-32 $($SC crc32 "$T/v1/seg-000002.time.gz"), manifest.jsonl line $(line 2) says $(ev 2 timing_crc32): not the timing sidecar written"
cp -p "$C/seg-000002.time.gz" "$T/v1/"
sed -i "s/\"first_clock\":$(ev 2 first_clock),/\"first_clock\":$(($(ev 2 first_clock) + 2)),/" "$T/v1/manifest.jsonl"
expect_status 1 $BACH verify "$T/v1"
expect_out "$T/v1: seg-000002.time.gz: clocks $(ev 2 first_clock) to $(ev 2 last_clock), manifest.jsonl line $(line 2) says $(($(ev 2 first_clock) + 2)) to $(ev 2 last_clock)"
# a sidecar beside a segment whose event names none is not its own
cp -rp "$C" "$T/v2"
sed -i "s/,\"timing\":\"seg-000003.time.gz\",[^}]*\"last_clock\":[0-9]*//" "$T/v2/manifest.jsonl"
grep -q '"timing":"seg-000003' "$T/v2/manifest.jsonl" && fail "the edit left the timing"
expect_status 1 $BACH verify "$T/v2"
expect_out "$T/v2: seg-000003.time.gz: manifest.jsonl line $(line 3) names no timing sidecar for seg-000003.byu.zst: not its sidecar"
echo ok
