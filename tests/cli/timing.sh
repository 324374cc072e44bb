# Timing sidecars (docs/formats.md section 3.2): the fake board's clocks
# kept, aligned with the records through gaps, read by dump and stat.
. "$TOP/tests/lib.sh"

# The board model's rule (drivers/board_model.c, docs/board-protocol.md
# section 3): record k it samples (lost ones counted) is at bus clock 2k,
# a cycle every two clocks, at 66666666 Hz. Frames of F records; every
# Dth frame lost on the link: a gap marker, at the clock of the record
# before it, then the next frame's records.
N=50000 F=1000 D=3 HZ=66666666
board_model_clocks $N $F $D > "$T/expected"

mkdir "$T/c"
$BACH capture --driver fake --option records=$N --option seed=3 \
	--option frame=$F --option drop_every=$D --option timing=1 \
	--output "$T/c" 2> "$T/err" || fail "capture: $(cat "$T/err")"
C=$(ls -d "$T"/c/2*Z*)
[ -f "$C/seg-000001.time.gz" ] || fail "no sidecar: $(ls "$C")"
grep -q '"timing":"seg-000001.time.gz","clock_hz":66666666' "$C/manifest.jsonl" ||
	fail "segment event without timing: $(grep segment "$C/manifest.jsonl")"

# one entry per record, gap markers included, exactly the model's clocks
$BACH dump --time "$C" > "$T/dump" || fail "dump --time exited $?"
awk '{ print ($3 ~ /^GAP:/ && $2 == "00" ? "gap " : "rec ") $4 }' \
	"$T/dump" > "$T/got"
cmp -s "$T/got" "$T/expected" ||
	fail "clocks differ from the model: $(diff "$T/got" "$T/expected" | head -5)"
[ "$(wc -l < "$T/dump")" = "$($BACH dump "$C" | wc -l)" ] ||
	fail "dump --time and dump disagree on the record count"
# seconds = clock / rate, within the 1 ns printed
awk -v hz=$HZ '{ e = $4 / hz - $5; if (e < 0) e = -e
	if (e > 1.5e-9) { print NR ": " $0; exit 1 } }' "$T/dump" ||
	fail "seconds column is not clock / $HZ"
# the sidecar read as docs/formats.md 3.2 says, by Python's zlib: the
# same clocks; and small: varints of steady differences
/usr/bin/python3 "$TOP/tests/helpers/sidecar.py" entries "$C/seg-000001.time.gz" > "$T/raw"
awk '{ print $2 }' "$T/expected" | cmp -s - "$T/raw" ||
	fail "sidecar entries are not the model's clocks"
sb=$(wc -c < "$C/seg-000001.time.gz") bb=$(wc -c < "$C/seg-000001.byu.zst")
[ $((sb * 50)) -le "$bb" ] ||
	fail "sidecar $sb bytes, more than 2% of its segment's $bb"

# csv and jsonl carry them too; a range reaches them through the members
$BACH dump --time --format csv --range 2000:2002 "$C" > "$T/csv"
[ "$(head -2 "$T/csv")" = "index,address,be,control,type,clock,seconds
2000,0x000003e8,0x00,0x0f,GAP:lost=1000:cause=frames,3998,0.000059970" ] ||
	fail "csv --time: $(cat "$T/csv")"
$BACH dump --time --format jsonl --range 20000:20001 "$C" > "$T/j"
want=$(awk 'NR == 20001 { print $2 }' "$T/expected")
grep -q "\"clock\":$want," "$T/j" || fail "jsonl --time: $(cat "$T/j") (want $want)"
# far into the sidecar (members passed over undecoded)
$BACH dump --time --range 33000:33001 "$C" | awk '{ print $4 }' > "$T/far"
[ "$(cat "$T/far")" = "$(awk 'NR == 33001 { print $2 }' "$T/expected")" ] || fail "far entry: $(cat "$T/far")"

# stat --time: 99998 clocks from first to last, every cycle (lost ones
# too) every 2 clocks, all in second 0
$BACH stat --time "$C" > "$T/stat" || fail "stat --time exited $?"
grep -q "duration           0.001499970 s  (99998 bus clocks at 66666666 Hz)" "$T/stat" ||
	fail "duration: $(cat "$T/stat")"
grep -q "bus utilisation    0.5000 cycles per clock" "$T/stat" || fail "utilisation: $(cat "$T/stat")"
grep -q "busiest second     0  ($N cycles)" "$T/stat" || fail "busiest: $(cat "$T/stat")"
$BACH stat --time --json "$C" | grep -q '"cycles":50000,"first_clock":0,"last_clock":99998' ||
	fail "stat --time --json"

# a capture without timing works as before; --time says there is none
mkdir "$T/u"
$BACH capture --driver fake --option records=5000 --option seed=3 \
	--output "$T/u" 2> "$T/err" || fail "capture: $(cat "$T/err")"
U=$(ls -d "$T"/u/2*Z*)
[ ! -e "$U/seg-000001.time.gz" ] || fail "a sidecar without timing"
grep -q '"timing"' "$U/manifest.jsonl" && fail "timing in the manifest"
$BACH verify "$U" > /dev/null || fail "untimed capture does not verify"
$BACH verify "$C" > /dev/null || fail "timed capture does not verify"
expect_status 2 $BACH dump --time "$U"
expect_err "seg-000001.time.gz: no timing sidecar"

# damage: cut short, a corrupt member, one of another trace
cp "$C/seg-000001.byu.zst" "$T/d.byu.zst"
cut_member "$C/seg-000001.time.gz" "$T/d.time.gz"
expect_status 1 $BACH dump --time "$T/d.byu.zst"
expect_err "d.time.gz: truncated gzip member at byte offset"
expect_status 1 $BACH stat --time "$T/d.byu.zst"
expect_err "d.time.gz: truncated gzip member at byte offset"
cp "$C/seg-000001.time.gz" "$T/d.time.gz"
printf '\377\377\377\377' | dd of="$T/d.time.gz" bs=1 seek=$(member1_data "$T/d.time.gz") conv=notrunc 2> /dev/null
expect_status 1 $BACH dump --time "$T/d.byu.zst"
expect_err "d.time.gz: corrupt gzip member at byte offset 0"
cp "$U/seg-000001.byu.zst" "$T/s.byu.zst"
cp "$C/seg-000001.time.gz" "$T/s.time.gz"
expect_status 1 $BACH dump --time "$T/s.byu.zst"
expect_err "more entries than"
cp "$C/seg-000001.byu.zst" "$T/l.byu.zst"
$BACH dump "$T/l.byu.zst" > /dev/null || fail "plain dump"

# the clock buffers are in status: some while the board sends timing,
# never more than one a ring block (32656 bytes each, docs/bachd.md)
. "$TOP/tests/helpers/bachd_lib.sh"
mkdir "$T/cs"
bg $BACH capture --driver fake --option rate=200000 --option timing=1 \
	--set ring_mb=8 --output "$T/cs" --control-socket "$T/t.sock" 2> "$T/cs.log"
P=$BGPID
wait_until 10 "the control socket" test -S "$T/t.sock"
tb=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$BACH" ctl --socket "$T/t.sock" status --json > "$T/st" || fail "status: $(cat "$T/st")"
	tb=$(jq -r '.status.timing_bytes' "$T/st")
	[ "$tb" -gt 0 ] && break
	sleep 0.2
done
blocks=$(jq -r '.status.ring_blocks' "$T/st")
[ "$tb" -gt 0 ] || fail "no clock buffers in status with timing=1: $(cat "$T/st")"
[ "$tb" -le $((blocks * 32656)) ] || fail "clock buffers $tb bytes, more than one a block ($blocks)"
"$BACH" ctl --socket "$T/t.sock" stop > /dev/null || fail "stop"
reap_within 20 "$P"
[ "$RC" -eq 0 ] || fail "bach capture exited $RC: $(cat "$T/cs.log")"
echo ok
