# Retention with timing sidecars: a segment, its
# timing sidecar (seg-N.time.gz) and a .byu.gz's index (.gzi) are one
# unit, counted and removed together; the running capture's newest closed segment is
# never removed for a limit it cannot meet (the log, the status and the
# metrics say so); keep_captures and keep_days leave no sidecar behind;
# bach verify and bach ls are content with what is left.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

# every sidecar, index and index temporary in capture DIR has its segment
companions_whole() {
	for f in "$1"/seg-*.time.gz "$1"/seg-*.time.gz.part "$1"/seg-*.gzi; do
		[ -e "$f" ] || continue
		n=$(basename "$f" | sed 's/^\(seg-[0-9]*\)\..*/\1/')
		ls "$1/$n".byu* 2> /dev/null | grep -qE '\.byu(\.gz|\.zst)?(\.part)?$' ||
			fail "$(basename "$f") is left without its segment in $1: $(ls "$1")"
	done
}
not_there() { [ ! -e "$1" ]; }
nsegs() { ls "$1" | grep -cE '^seg-[0-9]+\.byu(\.gz|\.zst)?$' || true; }
# the bytes of the regular files in DIR
dirbytes() { find "$1" -maxdepth 1 -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }

# -- keep_bytes with timing: the reproducer of the issue --------------------
# 11 segments of ~0.3 MB, each with a sidecar and an index; 1.5 MB kept
# (compressor = record: the .gzi is .byu.gz's; the default .byu.zst's
# index is inside it, and its keep_bytes is bachd_disk_guard.sh's)
mkdir "$T/r4"
expect_status 0 "$BACH" capture --driver fake -O records=2000000 -O timing=1 \
	--set rotate_mb=1 --set keep_bytes=1.5M --set compressor=record -o "$T/r4"
C=$(capdir "$T/r4")
left=$(nsegs "$C")
[ "$left" -ge 2 ] || fail "keep_bytes=1.5M left $left segments: $(ls "$C")"
companions_whole "$C"
# every segment left has its sidecar and index: the removal took them whole
for s in "$C"/seg-*.byu.gz; do
	[ -f "${s%.byu.gz}.time.gz" ] || fail "$(basename "$s") lost its sidecar"
	[ -f "$s.gzi" ] || fail "$(basename "$s") lost its index"
done
[ -f "$C/seg-000011.byu.gz" ] || fail "the newest segment went: $(ls "$C")"
used=$(dirbytes "$C")
[ "$used" -le 1500000 ] || fail "the capture holds $used bytes, keep_bytes is 1.5M"
nret=$(evcount "$C" retention)
[ $((nret + left)) -eq 11 ] || fail "$nret removed + $left left != 11 segments"
# a retention event counts the sidecar and index with their segment
seg1=$(grep '"event":"segment","name":"seg-000001.byu.gz"' "$C/manifest.jsonl" | sed -n 's/.*"bytes":\([0-9]*\).*/\1/p')
ret1=$(grep '"event":"retention","name":"seg-000001.byu.gz"' "$C/manifest.jsonl" | sed -n 's/.*"bytes":\([0-9]*\).*/\1/p')
tb1=$(grep '"event":"segment","name":"seg-000001.byu.gz"' "$C/manifest.jsonl" | sed -n 's/.*"timing_bytes":\([0-9]*\).*/\1/p')
[ -n "$ret1" ] && [ -n "$tb1" ] && [ "$ret1" -gt $((seg1 + tb1)) ] ||
	fail "seg-000001: retention says $ret1 bytes, the segment is $seg1 and its sidecar $tb1, and it had an index"
"$BACH" verify "$C" > "$T/v" 2>&1 || fail "bach verify: $(cat "$T/v")"
grep -q "$nret segments (.* records) removed by retention" "$T/v" || fail "verify: $(cat "$T/v")"
expect_status 0 "$BACH" ls "$T/r4"

# -- a limit the capture cannot meet: its newest closed segment stays -------
mkdir "$T/kb1"
expect_status 0 "$BACH" capture --driver fake -O records=600000 -O timing=1 \
	--set rotate_mb=1 --set keep_bytes=1 --set metrics_file="$T/kb1.prom" -o "$T/kb1"
C=$(capdir "$T/kb1")
segs=$(ended "$C" segments)
[ "$(nsegs "$C")" -eq 1 ] || fail "keep_bytes=1: $(ls "$C")"
last=$(printf 'seg-%06d' "$segs")
[ "$(ls "$C" | sort | tr '\n' ' ')" = "manifest.jsonl $last.$SEG $last.time.gz " ] ||
	fail "keep_bytes=1 should leave the newest segment whole: $(ls "$C")"
grep -q "\"event\":\"retention\",\"name\":\"$last" "$C/manifest.jsonl" &&
	fail "a retention event for the newest segment $last"
expect_err "keep_bytes is 1,"
expect_err "are never removed"
grep -q '^bach_retention_kept_newest 1$' "$T/kb1.prom" ||
	fail "metrics: $(grep retention "$T/kb1.prom")"
over=$(sed -n 's/^bach_retention_over_bytes \([0-9]*\)$/\1/p' "$T/kb1.prom")
# as the last run saw it: before the ended line
held=$(($(dirbytes "$C") - 1))
[ "$over" -le "$held" ] && [ "$over" -gt $((held - 1000)) ] ||
	fail "bach_retention_over_bytes is $over, the capture holds $(dirbytes "$C") bytes"
"$BACH" verify -q "$C" > "$T/v" 2>&1 || fail "bach verify: $(cat "$T/v")"

# -- keep_captures: the old capture goes whole, sidecars and all -----------
mkdir "$T/kc"
"$BACH" capture --driver fake -O records=400000 -O timing=1 --set rotate_mb=1 \
	-o "$T/kc" 2> /dev/null || fail "capture 1 failed"
old=$(capdir "$T/kc")
oldbytes=$(dirbytes "$old")
oldsegs=$(nsegs "$old")
sleep 1.1 # a new capture name
expect_status 0 "$BACH" capture --driver fake -O records=1000 -O timing=1 \
	--set keep_captures=1 -o "$T/kc"
[ ! -e "$old" ] || fail "keep_captures=1 left $old: $(ls -a "$old")"
grep -q "emptied" "$T/err" && fail "$(cat "$T/err")"
new=$(capdir "$T/kc")
ev=$(grep '"event":"retention","capture"' "$new/manifest.jsonl")
[ "$(echo "$ev" | sed -n 's/.*"bytes":\([0-9]*\).*/\1/p')" -eq "$oldbytes" ] ||
	fail "the retention event says $ev; the capture held $oldbytes bytes"
[ "$(echo "$ev" | sed -n 's/.*"segments":\([0-9]*\).*/\1/p')" -eq "$oldsegs" ] ||
	fail "the retention event says $ev; the capture held $oldsegs segments"
expect_status 0 "$BACH" ls "$T/kc"

# -- keep_days: an old capture's segments and sidecars go, and then it ------
mkdir "$T/kd"
"$BACH" capture --driver fake -O records=400000 -O timing=1 --set rotate_mb=1 \
	-o "$T/kd" 2> /dev/null || fail "capture 1 failed"
old=$(capdir "$T/kd")
touch -d '3 days ago' "$old"/seg-*
sleep 1.1
expect_status 0 "$BACH" capture --driver fake -O records=1000 -O timing=1 \
	--set keep_days=1 -o "$T/kd"
[ ! -e "$old" ] || fail "keep_days=1 left $old: $(ls -a "$old")"
grep -q "emptied" "$T/err" && fail "$(cat "$T/err")"
expect_status 0 "$BACH" ls "$T/kd"

# -- a sidecar an older bach left without its segment goes ------------------
# (and a .byu.gz's index: compressor = record)
mkdir "$T/orph"
"$BACH" capture --driver fake -O records=400000 -O timing=1 --set rotate_mb=1 \
	--set compressor=record -o "$T/orph" 2> /dev/null || fail "capture 1 failed"
old=$(capdir "$T/orph")
rm "$old/seg-000001.byu.gz"
sleep 1.1
expect_status 0 "$BACH" capture --driver fake -O records=1000 --set keep_bytes=1G -o "$T/orph"
[ ! -e "$old/seg-000001.time.gz" ] || fail "the orphan sidecar stays: $(ls "$old")"
[ ! -e "$old/seg-000001.byu.gz.gzi" ] || fail "the orphan index stays: $(ls "$old")"
[ -f "$old/seg-000002.time.gz" ] || fail "a sidecar with its segment went: $(ls "$old")"

# -- bachd: the newest closed segment kept against keep_days, said ----------
mkdir "$T/live"
bg "$BACHD" --driver fake -O rate=100000 -O timing=1 --set keep_days=1 \
	--set ring_mb=4 --output "$T/live" --control-socket "$T/live.sock" \
	--set metrics_file="$T/live.prom" --set metrics_interval=1 2> "$T/live.log"
P=$BGPID
wait_until 20 "the control socket" test -S "$T/live.sock"
for i in 1 2; do
	wait_until 20 "records in segment $i" sh -c "'$BACH' ctl --socket '$T/live.sock' status --json | grep -q '\"segment\":\"seg-00000$i'"
	sleep 0.3
	"$BACH" ctl --socket "$T/live.sock" rotate > /dev/null || fail "rotate"
done
L=$(capdir "$T/live")
wait_until 10 "seg-000002 closed" test -f "$L/seg-000002.time.gz"
wait_until 10 "seg-000002 closed" test -f "$L/seg-000002.$SEG"
touch -d '3 days ago' "$L"/seg-000001.* "$L"/seg-000002.*
# retention runs at least every 10 s
wait_until 15 "seg-000001 removed by keep_days" not_there "$L/seg-000001.$SEG"
wait_until 5 "the status to say the newest is kept" sh -c "'$BACH' ctl --socket '$T/live.sock' status --json | grep -q '\"retention_kept_newest\":true'"
[ -f "$L/seg-000002.$SEG" ] && [ -f "$L/seg-000002.time.gz" ] ||
	fail "keep_days removed the newest closed segment: $(ls "$L")"
[ ! -e "$L/seg-000001.time.gz" ] || fail "seg-000001's sidecar stays: $(ls "$L")"
wait_until 5 "the metric" grep -q '^bach_retention_kept_newest 1$' "$T/live.prom"
"$BACH" ctl --socket "$T/live.sock" status > "$T/st" || fail "status"
grep -q "the newest closed segment is kept" "$T/st" || fail "bach ctl status: $(cat "$T/st")"
grep -q "seg-000002.$SEG: older than keep_days, kept" "$T/live.log" ||
	fail "no warning: $(cat "$T/live.log")"
kill -TERM "$P"
reap_within 20 "$P"
[ "$RC" -eq 0 ] || fail "bachd exited $RC: $(tail -n 5 "$T/live.log")"
companions_whole "$L"
"$BACH" verify -q "$L" > "$T/v" 2>&1 || fail "bach verify: $(cat "$T/v")"
echo ok
