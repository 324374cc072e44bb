# Replay of a trace with timing sidecars (docs/formats.md section 3.2,
# docs/drivers.md, replay): the clocks go into the replayed capture's
# sidecars record for record, pace=original plays by them, and a trace
# without a sidecar replays as before but cannot be paced by clocks.
. "$TOP/tests/lib.sh"

# The board model's rule (drivers/board_model.c, docs/board-protocol.md
# section 3), as tests/cli/timing.sh derives it: record k sampled is at bus
# clock 2k; every Dth frame of F records lost (a gap marker at the clock
# of the record before it).
N=400000 F=1000 D=3
board_model_clocks $N $F $D > "$T/expected"

# the original: gap markers, and two segments (rotate_mb=1: 174762
# records a segment), each with its sidecar
mkdir "$T/c"
$BACH capture --driver fake --option records=$N --option seed=3 \
	--option frame=$F --option drop_every=$D --option timing=1 \
	--set rotate_mb=1 --output "$T/c" 2> "$T/err" || fail "capture: $(cat "$T/err")"
C=$(ls -d "$T"/c/2*Z*)
[ -f "$C/seg-000002.time.gz" ] || fail "want two timed segments: $(ls "$C")"
$BACH dump --time "$C" > "$T/orig" || fail "dump --time of the original"
awk '{ print ($3 ~ /^GAP:/ && $2 == "00" ? "gap " : "rec ") $4 }' \
	"$T/orig" | cmp -s - "$T/expected" || fail "the original's clocks are not the model's"

# replayed (rotating by size too): the same
# records and clocks, gap markers and the segment boundary included
mkdir "$T/r"
$BACH capture --driver replay --option path="$C" --set rotate_mb=1 \
	--output "$T/r" 2> "$T/err" || fail "replay: $(cat "$T/err")"
R=$(ls -d "$T"/r/2*Z*)
for s in 1 2; do
	[ -f "$R/seg-00000$s.time.gz" ] || fail "replayed segment $s has no sidecar: $(ls "$R")"
done
$BACH dump --time "$R" > "$T/again" || fail "dump --time of the replay"
# the replay carries the source's gap events (docs/bachd.md section 3):
# its gap markers have the same lost counts and causes
same "$T/orig" "$T/again"
grep -q '"timing":"seg-000002.time.gz","clock_hz":66666666' "$R/manifest.jsonl" ||
	fail "replayed segment event: $(grep segment "$R/manifest.jsonl")"
$BACH verify "$R" > /dev/null || fail "the replay does not verify"

# one trace file and its sidecar, not a capture directory
cp "$C/seg-000001.byu.zst" "$T/one.byu.zst"
cp "$C/seg-000001.time.gz" "$T/one.time.gz"
mkdir "$T/o"
$BACH capture --driver replay --option path="$T/one.byu.zst" --output "$T/o" \
	2> "$T/err" || fail "replay of a file: $(cat "$T/err")"
$BACH dump --time "$T/one.byu.zst" > "$T/one"
$BACH dump --time "$T"/o/2*Z* > "$T/oneagain" || fail "dump --time of the file's replay"
same "$T/one" "$T/oneagain"

# pace=original: 20000 records at clocks 0 to 39998; clock_hz=40000 (in
# place of the sidecar's 66666666) makes that 1 s. A generous lower
# bound only: the replay must not come in before 80% of it.
mkdir "$T/s" "$T/sp"
$BACH capture --driver fake --option records=20000 --option frame=1000 \
	--option timing=1 --output "$T/s" 2> "$T/err" || fail "capture: $(cat "$T/err")"
S=$(ls -d "$T"/s/2*Z*)
t0=$(date +%s%N)
$BACH capture --driver replay --option path="$S" --option pace=original \
	--option clock_hz=40000 --output "$T/sp" 2> "$T/err" ||
	fail "pace=original: $(cat "$T/err")"
t1=$(date +%s%N)
[ $(((t1 - t0) / 1000000)) -ge 800 ] ||
	fail "pace=original of 1 s of clocks took $(((t1 - t0) / 1000000)) ms"
$BACH dump --time "$S" > "$T/s1"
$BACH dump --time "$T"/sp/2*Z* > "$T/s2"
same "$T/s1" "$T/s2" # the clocks and their own rate are kept

# loop=1: each pass's clocks go on from the last one of the pass before
# (a capture's clocks never go back, docs/formats.md 3.2): record i of
# pass p at 39998 p + 2i, and the replayed capture reads with --time
mkdir "$T/lp"
$BACH capture --driver replay --option path="$S" --option loop=1 \
	--set records=50000 --output "$T/lp" 2> "$T/err" || fail "loop=1: $(cat "$T/err")"
$BACH dump --time "$T"/lp/2*Z* > "$T/lp.d" || fail "dump --time of the looped replay"
[ "$(wc -l < "$T/lp.d")" -eq 50000 ] || fail "loop=1: $(wc -l < "$T/lp.d") records"
awk '{ j = NR - 1; p = int(j / 20000); i = j % 20000
	if ($4 != p * 39998 + 2 * i) { print NR ": " $0; exit 1 } }' "$T/lp.d" ||
	fail "loop=1: the clocks do not go on from pass to pass"
$BACH verify "$T"/lp/2*Z* > /dev/null || fail "the looped replay does not verify"

# without the sidecar: replays as before, untimed; pace=original refused
rm "$T/one.time.gz"
mkdir "$T/u"
$BACH capture --driver replay --option path="$T/one.byu.zst" --output "$T/u" \
	2> "$T/err" || fail "replay without sidecar: $(cat "$T/err")"
[ ! -e "$(ls -d "$T"/u/2*Z*)/seg-000001.time.gz" ] || fail "a sidecar from nowhere"
expect_status 2 $BACH capture --driver replay --option path="$T/one.byu.zst" \
	--option pace=original --output "$T/u"
expect_err "pace=original needs the trace's timing sidecar $T/one.time.gz, which is missing"
rm "$C/seg-000001.time.gz"
expect_status 2 $BACH capture --driver replay --option path="$C" \
	--option pace=original --output "$T/u"
expect_err "seg-000001.time.gz, which is missing"

# a damaged sidecar stops the replay, naming it and the offset
cp "$C/seg-000002.byu.zst" "$T/d.byu.zst"
cut_member "$C/seg-000002.time.gz" "$T/d.time.gz"
mkdir "$T/d"
expect_status 4 $BACH capture --driver replay --option path="$T/d.byu.zst" \
	--output "$T/d"
expect_err "d.time.gz: truncated gzip member at byte offset"
# ... and so does one with more entries than its trace has records (the
# second segment's sidecar beside its first 1000 records)
$BACH convert -q --range 0:1000 "$C/seg-000002.byu.zst" "$T/m.byu.zst"
cp "$C/seg-000002.time.gz" "$T/m.time.gz"
expect_status 4 $BACH capture --driver replay --option path="$T/m.byu.zst" \
	--output "$T/d"
expect_err "m.time.gz: more entries than $T/m.byu.zst has records (1000 records"
echo ok
