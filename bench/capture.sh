#!/bin/sh
# make bench, second part: the capture daemon's targets, each measured in
# this one run, ours and the baseline side by side on the same disk
# (BENCH_DIR, default build/bench-data). Exits 1 when a target is missed.
#
#   BENCH_MB=1024       size of the rate runs: bachd and dd write this much
#   BENCH_BIG_MB=10240  the long capture of the memory target (0: skip it)
#   BENCH_RING_MB=256   bachd's ring (its default)
#   BENCH_REPEAT=2      rate runs are repeated, the best of each kept
#
# How it is measured, and why:
# - bachd's capture time runs from the manifest's "started" event (the ring
#   is allocated and touched, the source opened) to its last "segment"
#   event (the segment written, fdatasync'd, renamed, directory synced).
#   Start-up and bachd's exit (its main loop notices the end within 250 ms)
#   are not throughput; the whole process's wall time is printed beside.
# - The baseline is `dd if=/dev/zero bs=1M conv=fdatasync` of the same
#   bytes into the same directory, timed by dd itself: bachd syncs a
#   segment before it closes it, so dd must sync too (without it dd
#   measures the page cache, not the disk). Runs alternate dd, bachd.
# - The memory target: peak RSS (/usr/bin/time %M) of a BENCH_MB and a
#   BENCH_BIG_MB raw capture. The long one rotates every 1 GiB and its
#   closed segments are deleted as they appear, so it needs about 3 GiB
#   free, not 10. Raw segments, because the ring, the frame parser and the
#   writer are what must not grow; compression only adds the pool's fixed
#   buffers (the compressed run's peak is printed too).
set -eu
BUILD=${BUILD:-build}
BACHD="$BUILD/bin/bachd"
MB=${BENCH_MB:-1024}
BIG_MB=${BENCH_BIG_MB:-10240}
RING_MB=${BENCH_RING_MB:-256}
REPEAT=${BENCH_REPEAT:-2}
D=${BENCH_DIR:-$BUILD/bench-data}/capture
N=$((MB * 1024 * 1024 / 6))
BIG_N=$((BIG_MB * 1024 * 1024 / 6))
BYTES=$((N * 6))
missed=0
deleter=""

. "$(dirname "$0")/lib.sh"
cleanup() {
	[ -z "$deleter" ] || kill "$deleter" 2>/dev/null || true
	rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

rm -rf "$D"
mkdir -p "$D"
avail_mb=$(($(df -Pk "$D" | awk 'NR == 2 { print $4 }') / 1024))

# seconds dd took to write MB MiB and fdatasync them
dd_secs() {
	LC_ALL=C dd if=/dev/zero of="$D/dd.bin" bs=1M count="$MB" \
		conv=fdatasync 2>&1 | awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") print $(i - 1) }'
	rm -f "$D/dd.bin"
}

# capture NAME RECORDS BACHD-ARGS...: run bachd into $D/NAME; sets
# cap_secs (manifest span), cap_wall, cap_rss (KiB), cap_bytes (segment
# bytes), and fails unless
# every record was written
capture() {
	name=$1
	recs=$2
	shift 2
	out="$D/$name"
	rm -rf "$out"
	mkdir -p "$out"
	t0=$(now)
	if ! /usr/bin/time -f %M -o "$D/rss" "$BACHD" --driver fake \
		--option "records=$recs" --set "ring_mb=$RING_MB" \
		--output "$out" "$@" 2> "$D/log"; then
		cat "$D/log" >&2
		echo "bench/capture.sh: bachd failed" >&2
		exit 1
	fi
	t1=$(now)
	cap_wall=$(calc "$t1 - $t0")
	cap_rss=$(tail -n 1 "$D/rss")
	man=$(echo "$out"/*/manifest.jsonl)
	written=$(sed -n 's/.*"event":"ended".*"written":\([0-9]*\).*/\1/p' "$man")
	if [ "$written" != "$recs" ]; then
		cat "$D/log" >&2
		echo "bench/capture.sh: $recs records asked for, ${written:-?} written" >&2
		exit 1
	fi
	cap_bytes=$(sed -n 's/.*"event":"segment".*"bytes":\([0-9]*\).*/\1/p' "$man" |
		awk '{ n += $1 } END { print n + 0 }')
	cap_secs=$(manifest_span "$man")
	rm -rf "$out"
}

echo "capture: fake board, $N records ($BYTES bytes) a run, ring $RING_MB MiB, $(nproc) CPUs, $D ($avail_mb MiB free)"
echo

# 1. raw segments at full speed, against dd
best_dd=0 best_raw=0 raw_wall=0 rss1=0
i=0
while [ "$i" -lt "$REPEAT" ]; do
	i=$((i + 1))
	s=$(dd_secs)
	if [ "$best_dd" = 0 ] || [ "$(calc "$s < $best_dd")" = 1 ]; then best_dd=$s; fi
	capture raw "$N" --no-compress --set rotate_mb=0
	if [ "$best_raw" = 0 ] || [ "$(calc "$cap_secs < $best_raw")" = 1 ]; then
		best_raw=$cap_secs
		raw_wall=$cap_wall
	fi
	if [ "$cap_rss" -gt "$rss1" ]; then rss1=$cap_rss; fi
	echo "  run $i: dd $(fmt "$s") s, bachd raw $(fmt "$cap_secs") s (process $(fmt "$cap_wall") s)"
done
rate=$(calc "$N / $best_raw / 1000000")
mbs=$(calc "$BYTES / $best_raw / 1000000")
ddmbs=$(calc "$BYTES / $best_dd / 1000000")
check "fake -> raw segments >= 150 M records/s (900 MB/s)" "$rate >= 150" \
	"$(fmt "$rate") M records/s, $(fmt "$mbs") MB/s, $(fmt "$best_raw") s; process $(fmt "$raw_wall") s"
r=$(calc "$mbs / $ddmbs")
check "fake -> raw segments >= 0.7x dd conv=fdatasync" "$r >= 0.7" \
	"bachd $(fmt "$mbs") MB/s, dd $(fmt "$ddmbs") MB/s, $(fmt "$r")x"

# 2. compressed segments, the pool on every core: the record encoder at its
# level 1 (bachd's default) and libdeflate -1 (compressor = libdeflate),
# alternating, the best of each kept. The record encoder is bachd's default
# because it reaches the bus's peak rate, 33 M records/s, here
# (docs/bachd.md, compressor): this checks that it still does.
best_z=0 z_wall=0 rssz=0 best_r=0 r_wall=0 z_bytes=0 r_bytes=0
i=0
while [ "$i" -lt "$REPEAT" ]; do
	i=$((i + 1))
	capture gz "$N" --set rotate_mb=0 --set compressor=libdeflate --set level=1
	if [ "$best_z" = 0 ] || [ "$(calc "$cap_secs < $best_z")" = 1 ]; then
		best_z=$cap_secs
		z_wall=$cap_wall
	fi
	z_bytes=$cap_bytes
	if [ "$cap_rss" -gt "$rssz" ]; then rssz=$cap_rss; fi
	capture rec "$N" --set rotate_mb=0 --set compressor=record --set level=1
	if [ "$best_r" = 0 ] || [ "$(calc "$cap_secs < $best_r")" = 1 ]; then
		best_r=$cap_secs
		r_wall=$cap_wall
	fi
	r_bytes=$cap_bytes
	echo "  run $i: libdeflate -1 $(fmt "$best_z") s, record encoder -1 $(fmt "$cap_secs") s"
done
rate=$(calc "$N / $best_z / 1000000")
rrate=$(calc "$N / $best_r / 1000000")
check "fake -> compressed segments, $(nproc) cores >= 33 M records/s" "$rrate >= 33" \
	"record encoder -1 (.byu.gz default): $(fmt "$rrate") M records/s, $(fmt "$best_r") s; process $(fmt "$r_wall") s; ratio $(fmt "$(calc "$BYTES / $r_bytes")")"
echo "(libdeflate -1, compressor = libdeflate: $(fmt "$rate") M records/s, $(fmt "$best_z") s; process $(fmt "$z_wall") s; ratio $(fmt "$(calc "$BYTES / $z_bytes")"); the record encoder's segments $(fmt "$(calc "$z_bytes / $r_bytes")")x smaller at $(fmt "$(calc "$rrate / $rate")")x its rate)"

# 2b. zstd segments (compressor = zstd, .byu.zst, bachd's default) at its
# default level 3, the pool on every core, the best of REPEAT runs
best_s=0 s_wall=0 s_bytes=0
i=0
while [ "$i" -lt "$REPEAT" ]; do
	i=$((i + 1))
	capture zst "$N" --set rotate_mb=0 --set compressor=zstd --set level=3
	if [ "$best_s" = 0 ] || [ "$(calc "$cap_secs < $best_s")" = 1 ]; then
		best_s=$cap_secs
		s_wall=$cap_wall
	fi
	s_bytes=$cap_bytes
done
srate=$(calc "$N / $best_s / 1000000")
check "fake -> zstd segments, $(nproc) cores >= 33 M records/s" "$srate >= 33" \
	"zstd -3 (default): $(fmt "$srate") M records/s, $(fmt "$best_s") s; process $(fmt "$s_wall") s; ratio $(fmt "$(calc "$BYTES / $s_bytes")"), $(fmt "$(calc "$srate / $rrate")")x the record encoder's rate"

# 3. memory: the same peak for a short and a long capture
limit=$(((RING_MB + 32) * 1024))
if [ "$BIG_MB" -gt 0 ] && [ "$avail_mb" -ge 3072 ]; then
	mkdir -p "$D/big"
	(while :; do
		rm -f "$D"/big/*/seg-*.byu
		sleep 0.5
	done) &
	deleter=$!
	capture big "$BIG_N" --no-compress --set rotate_mb=1024
	kill "$deleter"
	deleter=""
	rss10=$cap_rss
	big_rate=$(calc "$BIG_N / $cap_secs / 1000000")
	check "peak RSS <= ring + 32 MiB, same for $MB and $BIG_MB MiB" \
		"$rss1 <= $limit && $rss10 <= $limit && $rss10 <= $rss1 + 4096" \
		"$((rss1 / 1024)) MiB and $((rss10 / 1024)) MiB, limit $((limit / 1024)) MiB; $BIG_MB MiB at $(fmt "$big_rate") M records/s"
else
	check "peak RSS <= ring + 32 MiB, same for $MB and $BIG_MB MiB" "0" \
		"$((rss1 / 1024)) MiB for $MB MiB; the long run was skipped ($avail_mb MiB free, 3072 needed, BENCH_BIG_MB=$BIG_MB)"
fi
echo "(peak RSS of the compressed run: $((rssz / 1024)) MiB)"
exit $missed
