#!/bin/sh
# bach diff on two equal .byu files in the page cache (target: at least
# 1 GB/s), beside cmp(1) on the same files. BENCH_MB (1024) MiB
# each, kept in BENCH_DIR (build/bench-data) like bench/run.sh's trace.
# Prints a MEETS/MISSES line; exits 1 when the target is missed.
set -eu
BUILD=${BUILD:-build}
BACH="$BUILD/bin/bach"
MB=${BENCH_MB:-1024}
D=${BENCH_DIR:-$BUILD/bench-data}
mkdir -p "$D"
N=$((MB * 1024 * 1024 / 6))
A="$D/trace.byu"
B="$D/trace-copy.byu"
missed=0

. "$(dirname "$0")/lib.sh"
bench_trace "$A" "$N"
if ! cmp -s "$A" "$B" 2>/dev/null; then
	cp "$A" "$B"
fi
bytes=$(wc -c < "$A")
cat "$A" "$B" > /dev/null # both into the page cache
"$BACH" diff -q "$A" "$B" || { echo "bach diff: the copies differ?"; exit 1; }
t=$(secs "$BACH" diff "$A" "$B")
c=$(secs cmp "$A" "$B")
gbs=$(calc "$bytes / $t / 1000000000")
check "diff of two equal .byu in the page cache >= 1 GB/s" "$gbs >= 1" \
	"$(fmt "$gbs") GB/s per trace, $(fmt "$t") s for 2 x $bytes bytes; cmp $(fmt "$c") s"
exit $missed
