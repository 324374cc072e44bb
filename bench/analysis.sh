#!/bin/sh
# The analyses' performance targets (docs/analysis.md section 3.4), each
# measured in this one run on the same synthetic trace
# (BENCH_ANALYSIS_RECORDS, default 20 M records) in the page cache:
#   - bach sim: at least 50 M records/s for one L1 configuration;
#   - bach mrc: a 16-size exact curve in one pass at least 10x faster than
#     the 16 bach sim runs it replaces (--l1 SIZE:32:full, the same caches);
#   - bach mrc --sample 0.01: at least 100x faster than those runs, with an
#     absolute error of 0.01 or less against the exact curve at every size.
# Times are CPU seconds (user + system) of each command, so that other
# work on a shared machine does not move the ratios much.
# Exits 1 when a target is missed.
set -eu
BUILD=${BUILD:-build}
BACH="$BUILD/bin/bach"
N=${BENCH_ANALYSIS_RECORDS:-20000000}
D=${BENCH_DIR:-$BUILD/bench-data}
SIZES="1k 2k 4k 8k 16k 32k 64k 128k 256k 512k 1M 2M 4M 8M 16M 32M"
mkdir -p "$D"
T="$D/analysis.byu"
missed=0

. "$(dirname "$0")/lib.sh"
# cpu CMD...: CPU seconds (user + system) of CMD, output discarded, from
# the shell's own accounting of its children (times: 10 ms resolution)
cpu() {
	times >"$D/times.a"
	"$@" >/dev/null
	times >"$D/times.b"
	tail -n 1 "$D/times.a" "$D/times.b" | awk '
function s(x) { sub(/s$/, "", x); split(x, p, "m"); return p[1] * 60 + p[2] }
NF == 2 { t[++n] = s($1) + s($2) } END { print t[2] - t[1] }'
}
# cpu5 CMD...: the same, the mean of five runs (for the short ones)
cpu5() {
	a=$(cpu "$@"); b=$(cpu "$@"); c=$(cpu "$@"); d=$(cpu "$@"); e=$(cpu "$@")
	calc "($a + $b + $c + $d + $e) / 5"
}

if [ ! -f "$T" ] || [ "$(wc -c <"$T")" -ne $((N * 6)) ]; then
	echo "generating $N records..."
	"$BACH" gen --records "$N" --seed 1 -o "$T"
fi
cat "$T" >/dev/null
echo "trace: $T, $N records, 32-byte lines, CPU seconds (user + system)"

s=$(cpu5 "$BACH" sim --l1 16k:32:4 "$T")
r=$(calc "$N / $s / 1000000")
check "sim, one L1 (16k:32:4), >= 50 M records/s" "$r >= 50" \
	"$(fmt "$r") M records/s, $(fmt "$s") s"

sims=0
for z in $SIZES; do
	t=$(cpu "$BACH" sim --l1 "$z:32:full" "$T")
	sims=$(calc "$sims + $t")
done
"$BACH" mrc --json --min 1k --max 32M "$T" >"$D/exact.json"
e=$(cpu "$BACH" mrc --min 1k --max 32M "$T")
r=$(calc "$sims / $e")
check "mrc, 16 sizes exact >= 10x 16 sim runs" "$r >= 10" \
	"mrc $(fmt "$e") s, 16 sims $(fmt "$sims") s, $(fmt "$r")x"

"$BACH" mrc --json --min 1k --max 32M --sample 0.01 "$T" >"$D/sampled.json"
p=$(cpu5 "$BACH" mrc --min 1k --max 32M --sample 0.01 "$T")
r=$(calc "$sims / $p")
check "mrc --sample 0.01 >= 100x 16 sim runs" "$r >= 100" \
	"mrc $(fmt "$p") s, $(fmt "$r")x"
# The error is checked at every size: those below 4 sampled lines come
# from the near stack (docs/analysis.md section 3.3).
err=$(python3 - "$D/exact.json" "$D/sampled.json" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))["points"]
s = json.load(open(sys.argv[2]))["points"]
assert [a["size"] for a in e] == [b["size"] for b in s]
d = [(a["size"], abs(a["miss_ratio"] - b["miss_ratio"])) for a, b in zip(e, s)]
x = [v for _, v in d]
print("%.4f %.4f %d %s" % (max(x), sum(x) / len(x), len(x),
      " ".join("%d:%.4f" % (z // 1024, v) for z, v in d)))
EOF
)
set -- $err
check "mrc --sample 0.01: abs error <= 0.01 at every size" "$1 <= 0.01" \
	"largest $1, mean $2 over the $3 sizes"
shift 3
echo "(abs error by size in KiB: $*)"
exit $missed
