# The disk never kills the service: on a small tmpfs,
# bachd runs through hundreds of rotations with retention (keep_bytes) and
# min_free active; another process fills the disk for a while, which costs
# exactly one gap (cause disk); post_rotate runs on every closed segment;
# autostop ends it cleanly. Then keep_captures, a reader's lock, on_full =
# stop, and bad values.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"


mkdir "$T/fs"
mount -t tmpfs -o size=48m tmpfs "$T/fs" 2> /dev/null ||
	skip "mount -t tmpfs refused (not root, or no CAP_SYS_ADMIN here): the disk guard needs a small filesystem of its own"
MOUNTS="$T/fs"
OUT="$T/fs/out"
mkdir "$OUT"

# -- hundreds of rotations on 48 MiB, retention at 16 MB, min_free 8 MB ----
# 2M records/s, a segment every MiB of records (~175k records, ~0.4 MB):
# about 11 rotations a second for 25 s
: > "$T/shipped"
printf '#!/bin/sh\necho "$1" >> %s\n' "$T/shipped" > "$T/ship"
chmod +x "$T/ship"
bg "$BACHD" --driver fake --option rate=2000000 --option seed=5 \
	--set rotate_mb=1 --set keep_bytes=16M --set min_free=8M \
	--set post_rotate="$T/ship" --set ring_mb=16 --set threads=1 \
	-a duration:25 --output "$OUT" --control-socket "$T/s.sock" \
	2> "$T/run.log"
P=$BGPID
wait_until 20 "the control socket" test -S "$T/s.sock"
sleep 6
# another process takes the disk down to 4 MB free: below min_free
avail=$(($(stat -f -c '%a*%S' "$OUT")))
fill=$((avail - (4 << 20)))
[ "$fill" -gt 0 ] || fail "the tmpfs is already full: $avail bytes free"
head -c "$fill" /dev/zero > "$T/fs/filler" 2> /dev/null || true
waited=0
for i in $(seq 1 60); do
	"$BACH" ctl --socket "$T/s.sock" status --json > "$T/st" 2> /dev/null || true
	if grep -q '"waiting_for_disk":true' "$T/st"; then waited=1; break; fi
	sleep 0.1
done
[ "$waited" = 1 ] || fail "bachd did not start waiting below min_free: $(cat "$T/st")"
alive "$P" || fail "bachd exited on the full disk: $(tail -n 5 "$T/run.log")"
sleep 2
alive "$P" || fail "bachd exited while waiting: $(tail -n 5 "$T/run.log")"
rm "$T/fs/filler"
reap_within 40 "$P"
[ "$RC" -eq 0 ] || fail "bachd exited $RC: $(tail -n 5 "$T/run.log")"
C=$(capdir "$OUT")
[ "$(ended_state "$C")" = clean ] || fail "not a clean end: $(tail -n 1 "$C/manifest.jsonl")"
grep -q '"event":"ended".*"stopped_by":"duration"' "$C/manifest.jsonl" ||
	fail "the ended event does not say duration stopped it"
pr=$(ended "$C" produced) w=$(ended "$C" written) l=$(ended "$C" lost)
segs=$(ended "$C" segments)
[ $((w + l)) -eq "$pr" ] || fail "written $w + lost $l != produced $pr"
[ "$segs" -ge 200 ] || fail "only $segs rotations"
# the wait cost exactly one gap, cause disk, and nothing else was lost
[ "$(evcount "$C" gap)" -eq 1 ] || fail "gaps: $(grep '"event":"gap"' "$C/manifest.jsonl")"
grep '"event":"gap"' "$C/manifest.jsonl" | grep -q '"cause":"disk"' || fail "the gap is not cause disk"
[ "$(evsum "$C" gap lost)" -eq "$l" ] && [ "$l" -gt 0 ] ||
	fail "the disk gap says $(evsum "$C" gap lost), the ended event $l"
grep -q 'min_free is 8000000: closing' "$T/run.log" || fail "no warning about min_free in the log"
grep -q 'bytes free again' "$T/run.log" || fail "no notice when space came back"
# retention: old segments went, each with its event, and the rest fit
nret=$(evcount "$C" retention)
left=$(ls "$C" | grep -cE '^seg-[0-9]+\.byu(\.gz|\.zst)?$')
[ "$nret" -gt 0 ] || fail "retention removed nothing"
[ $((nret + left)) -eq "$segs" ] || fail "$nret removed + $left left != $segs segments"
# the default .byu.zst segments carry their index (the seek table): no
# .gzi (a .byu.gz's .gzi going with it: retention.sh)
[ "$(ls "$C" | grep -c '\.gzi$')" -eq 0 ] || fail "indexes beside .$SEG segments: $(ls "$C")"
used=$(du -sb "$OUT" | cut -f1)
[ "$used" -le $((17 << 20)) ] || fail "the output holds $used bytes, keep_bytes is 16M"
grep -q '"event":"retention","name":"seg-000001.'"$SEG"'".*"reason":"keep_bytes"' "$C/manifest.jsonl" ||
	fail "no retention event for seg-000001"
# what is left verifies, and verify says what retention took
"$BACH" verify -q "$C" > "$T/v" || fail "bach verify: $(cat "$T/v")"
grep -q "$nret segments (.* records) removed by retention" "$T/v" || fail "verify: $(cat "$T/v")"
# post_rotate ran on every closed segment, with its absolute path
[ "$(sort -u "$T/shipped" | wc -l)" -eq "$segs" ] ||
	fail "post_rotate ran $(wc -l < "$T/shipped") times for $segs segments"
grep -q "^$C/seg-000001.$SEG\$" "$T/shipped" || fail "post_rotate's argument: $(head -n 1 "$T/shipped")"

# -- a failing post_rotate is a warning, never an end ------------------------
mkdir "$T/pr"
"$BACH" capture --driver fake --option records=600000 --set rotate_mb=1 \
	--set post_rotate='exit 3 #' --output "$T/pr" 2> "$T/pr.log" ||
	fail "a failing post_rotate ended bach capture: $(cat "$T/pr.log")"
grep -q "post_rotate: seg-000001.$SEG: the command exited 3" "$T/pr.log" ||
	fail "no warning for the failing command: $(cat "$T/pr.log")"

# -- keep_captures: the oldest capture goes whole, said in the new one -----
mkdir "$T/kc"
for i in 1 2 3; do
	"$BACH" capture --driver fake --option records=1000 --set keep_captures=2 \
		--output "$T/kc" 2> /dev/null || fail "capture $i failed"
done
[ "$(ncaps "$T/kc")" -eq 2 ] || fail "keep_captures=2 left $(ncaps "$T/kc")"
grep -q '"event":"retention","capture":"2.*"reason":"keep_captures"' "$(capdir "$T/kc")/manifest.jsonl" ||
	fail "no retention event in the running capture"

# -- a capture being read is left alone -----------------------------------
mkdir "$T/rd"
"$BACH" capture --driver fake --option records=400000 --set rotate_mb=1 \
	--output "$T/rd" 2> /dev/null || fail "first capture failed"
R=$(capdir "$T/rd")
n0=$(ls "$R" | grep -cE '^seg-[0-9]+\.byu(\.gz|\.zst)?$')
# a reader (as the replay driver, dump or verify do) holds a shared lock
flock -s "$R" sleep 4 &
RP=$!
sleep 0.3
"$BACH" capture --driver fake --option records=1000 --set keep_bytes=1 \
	--output "$T/rd" 2> /dev/null || fail "second capture failed"
[ "$(ls "$R" | grep -cE '^seg-[0-9]+\.byu(\.gz|\.zst)?$')" -eq "$n0" ] || fail "retention removed segments being read"
wait "$RP"
"$BACH" capture --driver fake --option records=1000 --set keep_bytes=1 \
	--output "$T/rd" 2> /dev/null || fail "third capture failed"
[ ! -e "$R" ] || fail "once unlocked, the old capture should go: $(ls "$R")"

# -- on_full = stop: a clean end, exit 0, the accounting whole ------------
mkdir "$OUT/stop"
expect_status 0 "$BACHD" --driver fake --option rate=1000000 --set min_free=99% \
	--set on_full=stop --output "$OUT/stop"
expect_err "stopping the capture (on_full = stop)"
S=$(capdir "$OUT/stop")
grep -q '"event":"ended","state":"clean".*"stopped_by":"min_free"' "$S/manifest.jsonl" ||
	fail "on_full=stop: $(tail -n 1 "$S/manifest.jsonl")"
[ $(($(ended "$S" written) + $(ended "$S" lost))) -eq "$(ended "$S" produced)" ] ||
	fail "on_full=stop: the accounting does not add up"
"$BACH" verify -q "$S" > /dev/null || fail "on_full=stop: does not verify"

# -- bad values: exit 2, naming the key -----------------------------------
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" --set min_free=lots
expect_err "min_free: want bytes"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" --set min_free=100%
expect_err "min_free:"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" --set on_full=maybe
expect_err "on_full:"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" --set keep_days=-1
expect_err "keep_days:"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" -a minutes:3
expect_err "--autostop: want duration:SECONDS"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" -a duration:soon
expect_err "duration: want seconds"
printf '[bachd]\nmin_free = 5%%\non_full = stop\nkeep_bytes = 10G\nkeep_days = 30\nkeep_captures = 100\npost_rotate = /bin/true\nduration = 2h\nrecords = 1G\nsegments = 24\n' > "$T/ok.conf"
expect_status 0 "$BACHD" --check-config --config "$T/ok.conf" --driver fake --output "$T"
printf '[bachd]\nkeep_bytes = much\n' > "$T/bad.conf"
expect_status 2 "$BACHD" --check-config --config "$T/bad.conf" --driver fake --output "$T"
expect_err "$T/bad.conf:2: keep_bytes:"
echo "disk guard: $segs segments, $nret removed by retention, $l records lost while the disk was full"
