# bachd with the fake board: records, capture directory, manifest, faults.
. "$TOP/tests/lib.sh"
BACHD="$(dirname "$BACH")/bachd"

# the last "ended" event's member KEY
ended() { grep '"event":"ended"' "$1"/manifest.jsonl | tail -n 1 | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }
capdir() { ls -d "$1"/2*Z* | tail -n 1; }

# N records: exit 0, verifies, zstd -d (bachd's default segments are
# .byu.zst) equals bach gen, manifest totals N
mkdir "$T/out"
$BACHD --driver fake --option records=300000 --option seed=11 --output "$T/out" 2> "$T/log" ||
	fail "bachd exited $?: $(cat "$T/log")"
C=$(capdir "$T/out")
$BACH verify "$C" > /dev/null || fail "capture does not verify"
$BACH gen --records 300000 --seed 11 -o "$T/gen.byu"
zstd -dcq "$C"/seg-*.byu.zst | cmp -s - "$T/gen.byu" || fail "capture differs from bach gen"
[ "$(ended "$C" produced)" = 300000 ] || fail "produced: $(ended "$C" produced)"
[ "$(ended "$C" written)" = 300000 ] || fail "written: $(ended "$C" written)"
[ "$(ended "$C" lost)" = 0 ] || fail "lost"
grep -q '"event":"started".*"driver":"fake"' "$C/manifest.jsonl" || fail "no started event"
grep -q '"event":"segment","name":"seg-000001.byu.zst","records":300000' "$C/manifest.jsonl" ||
	fail "no segment event: $(cat "$C/manifest.jsonl")"
ls "$C" | grep -q part && fail ".part left behind"
# one segment is "1 segment" in the log
grep -q "capture ended: 300000 records produced, 300000 written, 0 lost, 1 segment, exit status 0$" "$T/log" ||
	fail "the end of the capture in the log: $(cat "$T/log")"

# raw segments, rotation by size: several segments, in order, same records
mkdir "$T/raw"
$BACHD --driver fake --option records=300000 --option seed=11 --no-compress \
	--set rotate_mb=1 --output "$T/raw" 2> "$T/log" || fail "raw: $(cat "$T/log")"
C=$(capdir "$T/raw")
[ "$(ls "$C"/seg-*.byu | wc -l)" -eq 2 ] || fail "expected 2 segments: $(ls "$C")"
cat "$C"/seg-*.byu | cmp -s - "$T/gen.byu" || fail "raw segments differ"
$BACH dump "$C" | cmp -s - "$(printf '%s' "$T/x")" 2>/dev/null || true
$BACH convert -q "$C" "$T/back.byu" && same "$T/back.byu" "$T/gen.byu"

# faults: corrupt CRCs, dropped frames and board overflows are exact gaps
mkdir "$T/faults"
$BACHD --driver fake --option records=200000 --option seed=5 --option frame=1000 \
	--option corrupt_every=7 --option drop_every=11 --option overflow_every=13:250 \
	--output "$T/faults" 2> "$T/log" || fail "faults: $(cat "$T/log")"
C=$(capdir "$T/faults")
[ "$(ended "$C" produced)" = 200000 ] || fail "faults produced $(ended "$C" produced)"
w=$(ended "$C" written) l=$(ended "$C" lost)
[ $((w + l)) -eq 200000 ] || fail "written $w + lost $l != 200000"
# every cause shows up, and the causes add up to the total
sum() { grep "\"cause\":\"$1\"" "$C/manifest.jsonl" | sed 's/.*"lost":\([0-9]*\).*/\1/' | awk '{s+=$1} END {print s+0}'; }
for cause in frames corrupt overflow; do
	[ "$(sum "$cause")" -gt 0 ] || fail "no $cause gaps"
done
[ $(($(sum frames) + $(sum corrupt) + $(sum overflow))) -eq "$l" ] || fail "causes do not add up to $l"
# the trace is gen's stream with exactly the lost records missing, a marker
# (GAP, address = count) at each gap: walk both and compare
$BACH gen --records 200000 --seed 5 | $BACH dump - > "$T/gen.txt"
$BACH dump "$C" > "$T/cap.txt"
awk 'function hex(s,  k, n) { n = 0; for (k = 1; k <= length(s); k++) n = n * 16 + index("0123456789abcdef", substr(s, k, 1)) - 1; return n }
NR == FNR { g[NR] = $0; next }
$3 ~ /^GAP:/ { i += hex($1); next }
{ i++; if (g[i] != $0) { print "record " FNR " is " $0 ", gen " i " is " g[i]; bad = 1; exit } }
END { if (!bad && i != 200000) { print "walked " i " records"; bad = 1 } exit bad }' "$T/gen.txt" "$T/cap.txt" ||
	fail "capture is not gen minus its gaps"
$BACH verify "$C" > "$T/v" || fail "faults capture does not verify"
grep -q "gap marker" "$T/v" || fail "no gap markers listed"

# the board holding the CPU (stall_every): board stall events (merged, at
# most one a second) with every episode and its bus cycles, nothing lost
mkdir "$T/bstall"
$BACHD --driver fake --option records=100000 --option frame=1000 --option seed=4 \
	--option stall_every=20:30 --output "$T/bstall" 2> "$T/log" || fail "board stall: $(cat "$T/log")"
C=$(capdir "$T/bstall")
# before frames 20, 40, 60 and 80: four episodes of 30 ms at 66.67 MHz
bsum() { grep '"event":"stall".*"source":"board"' "$C/manifest.jsonl" |
	sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" | awk '{ s += $1 } END { print s + 0 }'; }
[ "$(bsum episodes)" -eq 4 ] && [ "$(bsum cycles)" -eq 7920000 ] ||
	fail "board stalls: $(grep stall "$C/manifest.jsonl")"
[ "$(ended "$C" board_stalls)" = 4 ] || fail "board stalls in ended: $(ended "$C" board_stalls)"
[ "$(ended "$C" lost)" = 0 ] || fail "a stall lost records"
$BACH gen --records 100000 --seed 4 -o "$T/g4.byu"
zstd -dcq "$C"/seg-*.byu.zst | cmp -s - "$T/g4.byu" || fail "records differ from bach gen after board stalls"

# a raw board stream dump of a live session replays to the same trace and totals
mkdir "$T/dump" "$T/replayed"
$BACHD --driver fake --option records=100000 --option seed=9 --option corrupt_every=5 \
	--set raw_dump=yes --output "$T/dump" 2> "$T/log" || fail "dump: $(cat "$T/log")"
C=$(capdir "$T/dump")
[ -s "$C/board-stream.bin" ] || fail "no board-stream.bin"
$BACHD --driver replay --option path="$C/board-stream.bin" --output "$T/replayed" 2> "$T/log" ||
	fail "replay of the dump: $(cat "$T/log")"
R=$(capdir "$T/replayed")
$BACH dump "$C" > "$T/a.txt"
$BACH dump "$R" > "$T/b.txt"
same "$T/a.txt" "$T/b.txt"
for k in produced written lost; do
	[ "$(ended "$C" $k)" = "$(ended "$R" $k)" ] || fail "replayed $k differs"
done
[ "$(ended "$R" lost)" -gt 0 ] || fail "the corrupt frames should show in the replay"
# at the board's own pace (its timestamps: 2 clocks a record): the same trace
mkdir "$T/paced"
$BACHD --driver replay --option path="$C/board-stream.bin" --option pace=original \
	--option clock_hz=2000000 --output "$T/paced" 2> "$T/log" || fail "paced replay: $(cat "$T/log")"
$BACH dump "$(capdir "$T/paced")" > "$T/c.txt"
same "$T/a.txt" "$T/c.txt"
# and it is paced: 200000 board clocks at 400 kHz take at least 0.5 s
rm -rf "$T/paced" && mkdir "$T/paced"
t0=$(date +%s%N)
$BACHD --driver replay --option path="$C/board-stream.bin" --option pace=original \
	--option clock_hz=400000 --output "$T/paced" 2> "$T/log" || fail "paced replay: $(cat "$T/log")"
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -ge 450 ] || fail "pace=original over 0.5 s of board time took $ms ms"
# a trace without a timing sidecar has no timing to pace by
set +e
$BACHD --driver replay --option path="$C/seg-000001.byu.zst" --option pace=original \
	--output "$T/paced" 2> "$T/log"
rc=$?
set -e
[ $rc -eq 2 ] || fail "pace=original on a trace exited $rc"
grep -q "pace=original needs the trace's timing sidecar $C/seg-000001.time.gz, which is missing" "$T/log" ||
	fail "no reason: $(cat "$T/log")"

# loop=1 starts again at the end, until stopped...
mkdir "$T/loop"
$BACH gen --records 1000 --seed 2 -o "$T/small.byu"
$BACHD --driver replay --option path="$T/small.byu" --option loop=1 --option rate=100000 \
	--control-socket "$T/loop.sock" --output "$T/loop" 2> "$T/log" &
pid=$!
i=0
until n=$($BACH ctl --socket "$T/loop.sock" status --json 2> /dev/null |
	sed -n 's/.*"produced":\([0-9]*\).*/\1/p') && [ "${n:-0}" -gt 3000 ]; do
	i=$((i + 1)); [ $i -lt 600 ] || { kill $pid; fail "loop=1 did not go round: ${n:-no status}"; }
	sleep 0.1
done
kill -TERM $pid
wait $pid || fail "loop=1: bachd exited $?: $(cat "$T/log")"
C=$(capdir "$T/loop")
grep -q '"event":"ended","state":"clean"' "$C/manifest.jsonl" || fail "loop: $(cat "$T/log")"
# ... but an input with no records would spin at full speed for ever: an
# error naming the file (a trace, a capture directory, a board stream)
gzip -c < /dev/null > "$T/empty.byu.gz"
mkdir "$T/emptycap"
$BACHD --driver replay --option path="$T/empty.byu.gz" --output "$T/emptycap" 2> "$T/log" ||
	fail "replay of an empty trace: $(cat "$T/log")"
E=$(capdir "$T/emptycap")
# a board stream of whole frames and no records: the dump's last frame,
# the board's final STATUS, from its magic to the end
D=$(capdir "$T/dump")/board-stream.bin
off=$(grep -obUa BACH "$D" | tail -n 1 | cut -d: -f1)
tail -c +$((off + 1)) "$D" > "$T/empty.bin"
rm -rf "$T/eloop" && mkdir "$T/eloop"
$BACHD --driver replay --option path="$T/empty.bin" --output "$T/eloop" 2> "$T/log" ||
	fail "a board stream of one STATUS: $(cat "$T/log")"
for f in "$T/empty.byu.gz" "$E" "$T/empty.bin"; do
	rm -rf "$T/eloop" && mkdir "$T/eloop"
	set +e
	timeout 20 $BACHD --driver replay --option path="$f" --option loop=1 \
		--output "$T/eloop" 2> "$T/log"
	rc=$?
	set -e
	[ $rc -eq 4 ] || fail "loop=1 over $f exited $rc, expected 4: $(cat "$T/log")"
	grep -qF "$f: no records to loop over (loop=1)" "$T/log" || fail "loop=1: $(cat "$T/log")"
done

# a newline in a path stays inside its log line, escaped (bachd logs the
# capture directory at start, at each segment and at the end)
NL="$T/new
line"
mkdir "$NL"
$BACHD --driver fake --option records=10 --output "$NL" 2> "$T/log" || fail "newline: $(cat "$T/log")"
[ "$(grep -c '^line' "$T/log")" -eq 0 ] || fail "a log line was split: $(cat "$T/log")"
[ "$(grep -cF 'new\nline/2' "$T/log")" -ge 2 ] || fail "no escaped path: $(cat "$T/log")"
echo ok
