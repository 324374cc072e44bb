#!/bin/sh
# The cost of timing sidecars (docs/formats.md section 3.2): the same
# capture from the fake board with timing=0 and timing=1, in one run on
# the same disk, as a ratio. Targets: timing=1 within 1.1x of timing=0,
# and each sidecar at most 2% of its segment (docs/formats.md 3.2).
#
#   BENCH_RECORDS=50000000  records a run (README.md's figures are of 50 M)
#   BENCH_REPEAT=3          runs alternate timing=0/1; the best of each kept
#
# The time is `bach capture`'s wall time, whole (the ring's allocation, the
# compression of segments and sidecars, the syncs and renames): what a
# user waits for. On a machine others share, wall time is noisy: the CPU
# time (user + system, /usr/bin/time) is printed beside it, and its ratio.
set -eu
BUILD=${BUILD:-build}
BACH="$BUILD/bin/bach"
N=${BENCH_RECORDS:-50000000}
REPEAT=${BENCH_REPEAT:-3}
D=${BENCH_DIR:-$BUILD/bench-data}/timing
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

echo "timing: fake board, $N records a run, compressed segments, $(nproc) CPUs"
w0=0 w1=0 c0=0 c1=0
i=0
while [ "$i" -lt "$REPEAT" ]; do
	run 0
	echo "  timing=0: $(fmt "$wall") s wall, $(fmt "$cpu") s CPU"
	if [ "$w0" = 0 ] || [ "$(calc "$wall < $w0")" = 1 ]; then w0=$wall c0=$cpu; fi
	run 1
	echo "  timing=1: $(fmt "$wall") s wall, $(fmt "$cpu") s CPU"
	if [ "$w1" = 0 ] || [ "$(calc "$wall < $w1")" = 1 ]; then w1=$wall c1=$cpu; fi
	i=$((i + 1))
done
ratio=$(calc "$w1 / $w0")
check "sidecars at most 2% of their segments" "$side * 50 <= $segs" \
	"$side bytes of sidecars, $segs of segments: $(fmt "$(calc "100 * $side / $segs")")%"
check "capture with timing=1 within 1.1x of timing=0 (wall)" "$ratio <= 1.1" \
	"$(fmt "$w1") s against $(fmt "$w0") s: $(fmt "$ratio")x; CPU $(fmt "$c1") s against $(fmt "$c0") s: $(fmt "$(calc "$c1 / $c0")")x"
exit "$missed"
