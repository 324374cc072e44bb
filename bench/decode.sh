#!/bin/sh
# make bench, the logic-analyzer path: the bus decoder's speed per core on
# 48-channel samples (bench/busdecode, in one process), and bach decode
# against sigrok-cli's parallel decoder on the same .sr file, in this run.
# Exits 1 when a target is missed.
set -eu
BUILD=${BUILD:-build}
BACH="$BUILD/bin/bach"
D=${BENCH_DIR:-$BUILD/bench-data}
RECS=${BENCH_DECODE_RECORDS:-400000}
mkdir -p "$D"
missed=0

. "$(dirname "$0")/lib.sh"

echo "bus decoder, one core, 48 channels (6 bytes per sample):"
"$BUILD/bench/busdecode" 4000000 | tee "$D/busdecode.txt"
# the target is for the full 48 channels with the bus protocol followed
ms=$(awk '/48 ch, BRDY/ && /state mode/ { print $(NF-5) }' "$D/busdecode.txt")
check "decoder >= 100 M samples/s per core, 48 channels" "$ms >= 100" \
	"$ms M samples/s, state mode, BRDY#/KEN#/BOFF#"

# The same capture file for both: clock mode (sigrok's parallel decoder
# needs a clock), 4 samples per bus clock, as srzip.
SR="$D/bus-$RECS.sr"
if [ ! -f "$SR" ]; then
	"$BACH" gen --records "$RECS" --seed 1 --pins vcd --oversample 4 \
		--bus wait=1,pipeline=20 -o "$D/bus.vcd"
	sigrok-cli -i "$D/bus.vcd" -o "$SR"
	rm -f "$D/bus.vcd"
fi
t0=$(now)
"$BACH" decode -q "$SR" -o "$D/decoded.byu"
t1=$(now)
# sigrok-cli's parallel decoder, 8 data lines (its most), clocked by clk;
# Debian's build may crash on exit after finishing, so its status is not
# checked, but its output must be there
sigrok-cli -i "$SR" -P parallel:clk=clk:d0=a3:d1=a4:d2=a5:d3=a6:d4=a7:d5=a8:d6=a9:d7=a10 \
	-A parallel=items > "$D/parallel.txt" 2>/dev/null || true
t2=$(now)
[ -s "$D/parallel.txt" ] || { echo "sigrok-cli produced nothing" >&2; exit 1; }
"$BACH" gen --records "$RECS" --seed 1 -o "$D/want.byu"
cmp -s "$D/decoded.byu" "$D/want.byu" || { echo "bach decode: wrong records" >&2; exit 1; }
ours=$(calc "$t1 - $t0")
theirs=$(calc "$t2 - $t1")
r=$(calc "$theirs / $ours")
samples=$(sigrok-cli -i "$SR" --show 2>/dev/null | awk '/sample count/ { print $NF }')
check "bach decode >= 50x sigrok-cli -P parallel, same .sr" "$r >= 50" \
	"$samples samples: bach $(fmt "$ours") s (all 48 channels), sigrok-cli $(fmt "$theirs") s (8), $(fmt "$r")x"
rm -f "$D/decoded.byu" "$D/want.byu" "$D/parallel.txt"
exit $missed
