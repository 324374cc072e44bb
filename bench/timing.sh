#!/bin/sh
# The cost of timing sidecars (docs/formats.md section 3.2): the same
# capture from the fake board with timing=0 and timing=1, in one run on
# the same disk, as a ratio. Targets: timing=1 within 1.1x of timing=0,
# and each sidecar at most 2% of its segment (docs/formats.md 3.2).
#
#   BENCH_RECORDS=50000000  records a run (README.md's figures are of 50 M)
#   BENCH_REPEAT=5          pairs of runs, timing=0 then timing=1; the
#                           medians are kept (of each one's times, and of
#                           the pairs' ratios, which the targets check)
#
# The time is `bach capture`'s wall time, whole (the ring's allocation, the
# compression of segments and sidecars, the syncs and renames): what a
# user waits for. On a machine others share, wall time is noisy: the CPU
# time (user + system, /usr/bin/time) is printed beside it, and its ratio,
# and the load average before the first run and after the last.
set -eu
BUILD=${BUILD:-build}
BACH="$BUILD/bin/bach"
N=${BENCH_RECORDS:-50000000}
REPEAT=${BENCH_REPEAT:-5}
D=${BENCH_DIR:-$BUILD/bench-data}/timing
mkdir -p "${D%/*}"
missed=0

. "$(dirname "$0")/lib.sh"
trap 'rm -rf "$D" "$D.log" "$D.cpu"' EXIT
trap 'exit 1' INT TERM HUP

# run TIMING: sets wall and cpu (seconds) of one capture of N records
run() {
	rm -rf "$D"
	mkdir -p "$D"
	t0=$(now)
	/usr/bin/time -f '%U %S' -o "$D.cpu" "$BACH" capture --driver fake \
		--option "records=$N" --option "timing=$1" --output "$D" \
		2> "$D.log" ||
		{ cat "$D.log" >&2; echo "bench/timing.sh: capture failed" >&2; exit 1; }
	t1=$(now)
	wall=$(calc "$t1 - $t0")
	cpu=$(awk '{ print $1 + $2 }' "$D.cpu")
	if [ "$1" = 1 ]; then
		ls "$D"/*/seg-000001.time.gz > /dev/null ||
			{ echo "bench/timing.sh: no sidecar" >&2; exit 1; }
		side=$(cat "$D"/*/seg-*.time.gz | wc -c)
		segs=$(cat $(ls "$D"/*/seg-*.byu* | grep -v '\.gzi$') | wc -c)
	fi
}

echo "timing: fake board, $N records a run, compressed segments, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
w0s='' w1s='' c0s='' c1s='' wrs='' crs=''
i=0
while [ "$i" -lt "$REPEAT" ]; do
	run 0
	wa=$wall ca=$cpu
	run 1
	echo "  pair $((i + 1)): timing=0 $(fmt "$wa") s wall, $(fmt "$ca") s CPU; timing=1 $(fmt "$wall") s wall, $(fmt "$cpu") s CPU"
	w0s="$w0s $wa" c0s="$c0s $ca" w1s="$w1s $wall" c1s="$c1s $cpu"
	wrs="$wrs $(calc "$wall / $wa")" crs="$crs $(calc "$cpu / $ca")"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # the lists are words
{
	w0=$(median $w0s) w1=$(median $w1s) c0=$(median $c0s) c1=$(median $c1s)
	ratio=$(median $wrs) cratio=$(median $crs)
}
echo "  medians: timing=0 $(fmt "$w0") s wall, $(fmt "$c0") s CPU; timing=1 $(fmt "$w1") s wall, $(fmt "$c1") s CPU; load average after $(cut -d' ' -f1-3 /proc/loadavg)"
check "sidecars at most 2% of their segments" "$side * 50 <= $segs" \
	"$side bytes of sidecars, $segs of segments: $(fmt "$(calc "100 * $side / $segs")")%"
check "capture with timing=1 within 1.1x of timing=0 (wall)" "$ratio <= 1.1" \
	"median of $REPEAT pairs: $(fmt "$ratio")x wall, $(fmt "$cratio")x CPU"
exit "$missed"
