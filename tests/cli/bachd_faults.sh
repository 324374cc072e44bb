# bachd when things go wrong: a writer slower than the source (the drop and
# stall policies), the board unplugged and back, the disk full, io_uring
# refused by seccomp, an output directory it cannot write.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"
helper crc32
helper gapwalk
helper no_io_uring

# cause_sum DIR CAUSE: records lost to CAUSE, by the manifest's gap events
cause_sum() {
	grep '"event":"gap"' "$1/manifest.jsonl" | grep "\"cause\":\"$2\"" |
		sed 's/.*"lost":\([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s + 0 }'
}
# the gap markers line of bach stat: "N M" (markers, records they say lost)
stat_gaps() {
	"$BACH" stat "$1" | sed -n 's/^gap markers *\([0-9]*\) *(standing for \([0-9]*\) lost).*/\1 \2/p'
}

# -- drop: a slow writer and a small ring lose records, every one counted --
# 4M records/s for a second; every write sleeps 0.1 s (a write of 1 MiB
# or of one block: at most 1.7M records/s), a 1 MiB ring: much is lost
mkdir "$T/drop"
bg "$BACHD" --driver fake --option records=4000000 --option rate=4000000 \
	--option seed=9 --policy drop --no-compress --set ring_mb=1 \
	--set test_writer_delay_ms=100 --output "$T/drop" \
	--control-socket "$T/drop.sock" 2> "$T/drop.log"
P=$BGPID
wait_until 20 "the control socket" test -S "$T/drop.sock"
# status during the run: the loss shows as it happens, and never more
# written and lost than produced (the difference is in the ring)
seen=0
while alive "$P"; do
	if "$BACH" ctl --socket "$T/drop.sock" status --json > "$T/st" 2> /dev/null; then
		pr=$(jnum produced "$T/st") w=$(jnum written "$T/st") l=$(jnum lost "$T/st")
		[ $((w + l)) -le "$pr" ] || fail "status: written $w + lost $l > produced $pr"
		[ "$l" -gt 0 ] && seen=1
	fi
	sleep 0.1
done
reap "$P"
[ "$RC" -eq 0 ] || fail "drop: bachd exited $RC: $(cat "$T/drop.log")"
[ "$seen" -eq 1 ] || fail "drop: status never showed a loss during the run"
C=$(capdir "$T/drop")
check_closed "$C"
pr=$(ended "$C" produced) w=$(ended "$C" written) l=$(ended "$C" lost) m=$(ended "$C" gap_markers)
[ "$pr" -eq 4000000 ] || fail "drop: produced $pr"
[ "$l" -gt 0 ] || fail "drop: nothing lost: the writer was not slow enough"
[ $((w + l)) -eq "$pr" ] || fail "drop: written $w + lost $l != produced $pr"
[ "$(evsum "$C" gap lost)" -eq "$l" ] || fail "drop: gap events sum to $(evsum "$C" gap lost), lost $l"
[ "$(cause_sum "$C" ring)" -eq "$l" ] || fail "drop: not every gap is the ring's"
[ "$(evcount "$C" gap)" -ge 1 ] && [ "$m" -ge "$(evcount "$C" gap)" ] ||
	fail "drop: $m markers for $(evcount "$C" gap) gaps"
[ "$(stat_gaps "$C")" = "$m $l" ] || fail "drop: bach stat says '$(stat_gaps "$C")', manifest '$m $l'"
[ "$(evsum "$C" segment gap_markers)" -eq "$m" ] || fail "drop: segment events' gap_markers"
"$BACH" gen --records 4000000 --seed 9 -o "$T/gen9.byu"
records "$C" "$T/drop.byu"
"$T/gapwalk" "$T/gen9.byu" "$T/drop.byu" > "$T/walk" || fail "drop: not gen minus the gaps: $(cat "$T/walk")"
[ "$(cat "$T/walk")" = "records $w markers $m lost $l walked 4000000" ] ||
	fail "drop: walk '$(cat "$T/walk")' disagrees with the manifest ($w written, $m markers, $l lost)"

# -- stall: the same slow writer loses nothing; every stall is recorded ---
mkdir "$T/stall"
# the source is as fast as it gets (over 10M records/s); a write of 1 MiB
# or of a block sleeps 25 ms (at most 7M records/s)
"$BACHD" --driver fake --option records=800000 --option seed=10 --policy stall \
	--no-compress --set ring_mb=1 --set test_writer_delay_ms=25 \
	--output "$T/stall" 2> "$T/stall.log" || fail "stall: bachd exited $?: $(cat "$T/stall.log")"
C=$(capdir "$T/stall")
check_closed "$C"
[ "$(ended "$C" lost)" = 0 ] && [ "$(ended "$C" written)" = 800000 ] &&
	[ "$(ended "$C" produced)" = 800000 ] || fail "stall: totals: $(grep ended "$C/manifest.jsonl")"
s=$(ended "$C" stalls)
[ "$s" -gt 0 ] || fail "stall: no stalls counted"
rs=$(evsum "$C" stall count)
[ "$rs" -eq "$s" ] || fail "stall: ring stall events count $rs stalls, ended says $s"
grep '"event":"stall".*"source":"ring"' "$C/manifest.jsonl" | grep -qv '"ns":[0-9]' &&
	fail "stall: a stall event without its duration"
grep '"event":"stall"' "$C/manifest.jsonl" | grep -qv '"at":[0-9]' &&
	fail "stall: a stall event without its position"
records "$C" "$T/stall.byu"
"$BACH" gen --records 800000 --seed 10 -o "$T/gen10.byu"
same "$T/stall.byu" "$T/gen10.byu"

# -- the board unplugged for a second and back ------------------------------
mkdir "$T/unplug"
"$BACHD" --driver fake --option records=300000 --option seed=4 \
	--option disconnect=100000:1 --set ring_mb=8 --output "$T/unplug" \
	2> "$T/unplug.log" || fail "unplug: bachd exited $?: $(cat "$T/unplug.log")"
C=$(capdir "$T/unplug")
check_closed "$C"
grep -q 'device_lost' "$T/unplug.log" && grep -q 'device_back' "$T/unplug.log" ||
	fail "unplug: not logged: $(cat "$T/unplug.log")"
[ "$(ls "$C"/seg-* | grep -vc '\.gzi$')" -eq 2 ] || fail "unplug: want 2 segments: $(ls "$C")"
# in order: lost, the segment closed there, back
grep -o '"event":"[a-z_]*"' "$C/manifest.jsonl" | tr '\n' ' ' > "$T/events"
grep -q '"event":"device_lost" "event":"segment" "event":"device_back" "event":"segment" "event":"ended"' "$T/events" ||
	fail "unplug: events in the wrong order: $(cat "$T/events")"
at=$(grep '"event":"device_lost"' "$C/manifest.jsonl" | sed 's/.*"at":\([0-9]*\).*/\1/')
s1=$(grep '"name":"seg-000001' "$C/manifest.jsonl" | sed 's/.*"records":\([0-9]*\).*/\1/')
[ "$at" -ge 100000 ] && [ "$at" -eq "$s1" ] ||
	fail "unplug: device_lost at $at, the first segment holds $s1 records"
[ "$(ended "$C" lost)" = 0 ] && [ "$(ended "$C" written)" = 300000 ] ||
	fail "unplug: totals $(grep ended "$C/manifest.jsonl")"
records "$C" "$T/unplug.byu"
"$BACH" gen --records 300000 --seed 4 -o "$T/gen4.byu"
same "$T/unplug.byu" "$T/gen4.byu"

# -- a disk that fills up: exit 3, everything before the full disk kept ----
small=""
mkdir "$T/small"
if mount -t tmpfs -o size=2m tmpfs "$T/small" 2> /dev/null; then
	MOUNTS="$T/small"
	small="tmpfs of 2 MiB"
elif command -v mkfs.ext4 > /dev/null 2>&1 &&
	dd if=/dev/zero of="$T/small.img" bs=1M count=4 2> /dev/null &&
	mkfs.ext4 -q -F -O ^has_journal "$T/small.img" 2> /dev/null &&
	mount -o loop "$T/small.img" "$T/small" 2> /dev/null; then
	MOUNTS="$T/small"
	small="loop-mounted ext4 of 4 MiB"
	chmod 0755 "$T/small"
	rm -rf "$T/small/lost+found"
else
	echo "SKIPPED the full disk: neither a tmpfs nor a loop mount is permitted here"
fi
if [ -n "$small" ]; then
	for mode in raw compressed; do
		rm -rf "$T/small"/2*
		set -- --set rotate_mb=1
		[ "$mode" = raw ] && set -- "$@" --no-compress
		"$BACHD" --driver fake --option seed=6 --set ring_mb=4 "$@" \
			--output "$T/small" 2> "$T/full.log" && fail "$mode: the full disk went unnoticed"
		rc=$?
		[ "$rc" -eq 3 ] || fail "$mode on a full $small: exit $rc, want 3: $(cat "$T/full.log")"
		grep -q 'No space left on device.*disk is full' "$T/full.log" ||
			fail "$mode: no clear message: $(cat "$T/full.log")"
		C=$(capdir "$T/small")
		check_closed "$C"
		[ "$(ls "$C"/seg-* | grep -vc '\.gzi$')" -ge 2 ] || fail "$mode: no segment closed before the disk filled: $(ls -l "$C")"
		grep '"event":"segment"' "$C/manifest.jsonl" | tail -n 1 | grep -q '"error":"No space left on device"' ||
			fail "$mode: the last segment event lacks the error: $(tail -n 2 "$C/manifest.jsonl")"
		[ "$(ended_state "$C")" = error ] || fail "$mode: ended state $(ended_state "$C")"
		pr=$(ended "$C" produced) w=$(ended "$C" written) l=$(ended "$C" lost)
		[ $((w + l)) -eq "$pr" ] && [ "$w" -gt 0 ] || fail "$mode: written $w + lost $l != produced $pr"
		records "$C" "$T/full.byu"
		[ "$(nrecs "$T/full.byu")" -eq "$w" ] || fail "$mode: $(nrecs "$T/full.byu") records on disk, manifest $w"
		[ "$(evsum "$C" segment records)" -eq "$w" ] || fail "$mode: segment events sum to $(evsum "$C" segment records), written $w"
		is_gen_prefix "$T/full.byu" 6 || fail "$mode: the records kept are not the start of bach gen's"
	done
	umount "$T/small"
	MOUNTS=""
fi

# -- io_uring refused: pwrite, and the very same bytes ---------------------
mkdir "$T/uring" "$T/nouring"
# (flush_ms: no block may be cut short by timing, so both runs cut alike)
set -- --driver fake --option records=300000 --option seed=12 --set rotate_mb=1 --set ring_mb=16 \
	--set flush_ms=600000
"$BACHD" "$@" --output "$T/uring" 2> "$T/uring.log" || fail "io_uring run: $(cat "$T/uring.log")"
if "$T/no_io_uring" true 2> "$T/seccomp.err"; then
	"$T/no_io_uring" "$BACHD" "$@" --output "$T/nouring" 2> "$T/nouring.log" ||
		fail "under seccomp: exit $?: $(cat "$T/nouring.log")"
	A=$(capdir "$T/uring") B=$(capdir "$T/nouring")
	grep -q 'io_uring refused (Operation not permitted): writing with pwrite' "$T/nouring.log" ||
		fail "no word of the fallback: $(cat "$T/nouring.log")"
	grep -q '"event":"started".*"io":"pwrite"' "$B/manifest.jsonl" || fail "started event does not say pwrite"
	if grep -q '"io":"pwrite"' "$A/manifest.jsonl"; then
		echo "note: io_uring is refused on this kernel even without the filter"
	else
		grep -q '"io":"io_uring"' "$A/manifest.jsonl" || fail "the plain run names no io"
	fi
	check_closed "$A"
	check_closed "$B"
	[ "$(ls "$A")" = "$(ls "$B")" ] || fail "different segments: $(ls "$A") / $(ls "$B")"
	for f in "$A"/seg-*; do
		same "$f" "$B/$(basename "$f")"
	done
	grep '"event":"segment"' "$A/manifest.jsonl" | sed 's/.*"name"/"name"/' > "$T/segs.a"
	grep '"event":"segment"' "$B/manifest.jsonl" | sed 's/.*"name"/"name"/' > "$T/segs.b"
	same "$T/segs.a" "$T/segs.b"
else
	echo "SKIPPED io_uring refused: cannot install a seccomp filter: $(cat "$T/seccomp.err")"
fi

# -- an output directory it cannot write: exit 2 at once, nothing made -----
touch "$T/file"
bg "$BACHD" --driver fake --option records=1000 --set ring_mb=1 --output "$T/file/out" 2> /dev/null
P=$BGPID
reap_within 20 "$P"
[ "$RC" -eq 2 ] || fail "output under a file: exit $RC, want 2"
"$BACHD" --driver fake --option records=1000 --set ring_mb=1 --output "$T/file/out" 2> "$T/e" || true
grep -q "$T/file/out.*Not a directory" "$T/e" || fail "output under a file: $(cat "$T/e")"
chmod 0711 "$T"
mkdir -m 0755 "$T/rootonly"
if command -v setpriv > /dev/null 2>&1 && id nobody > /dev/null 2>&1; then
	bg setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups \
		"$BACHD" --driver fake --option records=1000 --set ring_mb=1 \
		--output "$T/rootonly" 2> "$T/e"
	reap_within 20 "$BGPID"
	[ "$RC" -eq 2 ] || fail "nobody into a root-owned directory: exit $RC, want 2: $(cat "$T/e")"
	grep -q "$T/rootonly.*Permission denied" "$T/e" || fail "unwritable: $(cat "$T/e")"
	[ -z "$(ls "$T/rootonly")" ] || fail "unwritable: made $(ls "$T/rootonly")"
else
	echo "no setpriv: the unprivileged case is not run"
fi
mkdir "$T/ro"
if mount --bind "$T/rootonly" "$T/ro" 2> /dev/null; then
	MOUNTS="$T/ro"
	if mount -o remount,bind,ro "$T/ro" 2> /dev/null; then
		bg "$BACHD" --driver fake --option records=1000 --set ring_mb=1 --output "$T/ro" 2> "$T/e"
		reap_within 20 "$BGPID"
		[ "$RC" -eq 2 ] || fail "read-only output: exit $RC, want 2: $(cat "$T/e")"
		grep -q "$T/ro.*Read-only file system" "$T/e" || fail "read-only: $(cat "$T/e")"
		[ -z "$(ls "$T/ro")" ] || fail "read-only: made $(ls "$T/ro")"
	fi
	umount "$T/ro"
	MOUNTS=""
fi

# -- known trouble: checks that run last, each reported ----------------------
# a source that gives nothing (an empty trace to replay): a clean capture
# of no records, with no segment, that verifies
mkdir "$T/nothing"
: > "$T/empty.byu"
"$BACHD" --driver replay --option path="$T/empty.byu" --no-compress --set ring_mb=1 \
	--output "$T/nothing" 2> "$T/n.log" || fail "an empty replay source exited $?: $(cat "$T/n.log")"
C=$(capdir "$T/nothing")
[ "$(ended "$C" produced)" = 0 ] && [ "$(ended "$C" segments)" = 0 ] ||
	fail "an empty replay: $(tail -n 1 "$C/manifest.jsonl")"
ls "$C" | grep -q '\.part$' && fail "nothing: .part left"
"$BACH" verify "$C" > "$T/v" 2>&1 ||
	later "a capture whose source gave no record does not verify: $(grep -v '^verify:' "$T/v" | head -n 1) (capture.c close_segment keeps a 0-byte .byu)"
# a board unplugged while a drop-policy ring is full: the manifest must still
# say so, and the segment still closes there
mkdir "$T/dropunplug"
"$BACHD" --driver fake --option records=1000000 --option seed=4 \
	--option disconnect=500000:1 --policy drop --no-compress --set ring_mb=1 \
	--set test_writer_delay_ms=100 --output "$T/dropunplug" 2> "$T/du.log" ||
	fail "drop + unplug: bachd exited $?: $(cat "$T/du.log")"
C=$(capdir "$T/dropunplug")
check_closed "$C"
[ "$(ended "$C" lost)" -gt 0 ] || fail "drop + unplug: the ring never filled"
[ "$(evcount "$C" device_lost)" -eq 1 ] ||
	later "drop + unplug: the manifest has $(evcount "$C" device_lost) device_lost events, want 1 (capture.c bach_source_event drops it when the ring is full)"
[ "$(evcount "$C" device_back)" -eq 1 ] || later "drop + unplug: $(evcount "$C" device_back) device_back events"
# losses of two causes while the ring is full keep their own causes: the
# same corrupt frames lose the same records, slow writer or not
mkdir "$T/causes" "$T/causes2"
set -- --driver fake --option records=1000000 --option seed=9 --option corrupt_every=3 --no-compress
"$BACHD" "$@" --set ring_mb=8 --output "$T/causes" 2> "$T/c.log" || fail "corrupt: $(cat "$T/c.log")"
want=$(cause_sum "$(capdir "$T/causes")" corrupt)
[ "$want" -gt 0 ] || fail "corrupt: no corrupt gaps"
"$BACHD" "$@" --option rate=4000000 --policy drop --set ring_mb=1 \
	--set test_writer_delay_ms=100 --output "$T/causes2" 2> "$T/c.log" || fail "corrupt + drop: $(cat "$T/c.log")"
C=$(capdir "$T/causes2")
[ "$(cause_sum "$C" ring)" -gt 0 ] || fail "corrupt + drop: the ring never filled"
[ "$(evsum "$C" gap lost)" -eq "$(ended "$C" lost)" ] || fail "corrupt + drop: gaps do not sum to lost"
[ "$(cause_sum "$C" corrupt)" -eq "$want" ] ||
	later "corrupt + drop: the manifest blames $(cause_sum "$C" corrupt) lost records on corrupt frames, the same frames lose $want (capture.c: pending_lost takes the last cause)"
records "$C" "$T/causes.byu"
"$BACH" gen --records 1000000 --seed 9 -o "$T/gen9m.byu"
"$T/gapwalk" "$T/gen9m.byu" "$T/causes.byu" > "$T/walk" || fail "corrupt + drop: $(cat "$T/walk")"
# many gaps close together (small frames, every other one corrupt): every
# gap still gets its manifest event
mkdir "$T/many"
"$BACHD" --driver fake --option records=200000 --option seed=5 --option frame=100 \
	--option corrupt_every=2 --set ring_mb=8 --output "$T/many" 2> "$T/m.log" ||
	fail "many gaps: $(cat "$T/m.log")"
C=$(capdir "$T/many")
check_closed "$C"
[ "$(ended "$C" lost)" -eq 100000 ] && [ "$(ended "$C" gap_markers)" -eq 1000 ] ||
	fail "many gaps: $(grep ended "$C/manifest.jsonl")"
[ "$(stat_gaps "$C")" = "1000 100000" ] || fail "many gaps: bach stat says $(stat_gaps "$C")"
[ "$(evcount "$C" gap)" -eq 1000 ] && [ "$(evsum "$C" gap lost)" -eq 100000 ] ||
	later "many gaps: $(evcount "$C" gap) gap events for $(evsum "$C" gap lost) records, the trace has 1000 markers for 100000 (capture.c add_event: RING_MAX_EVENTS per block, the rest dropped)"
finish
