#!/bin/sh
# The Python module (README.md, "Performance"): reading a .byu.gz into numpy
# arrays reaches at least 80% of bach stat's rate on the same file. Both
# decompress the same blocked gzip through libbach; the file is read once
# first so that both find it in the page cache. PY_RECORDS=N to change the
# size (default 20 million records, 120 MB of records).
set -eu
BUILD=${BUILD:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
BACH="$TOP/$BUILD/bin/bach"
PYTHON=${PYTHON:-/usr/bin/python3}
. "$TOP/bench/lib.sh"
missed=0
N=${PY_RECORDS:-20000000}
D=$(mktemp -d "${TMPDIR:-/tmp}/bach-bench-py.XXXXXX")
trap 'rm -rf "$D"' EXIT

"$BACH" gen --records "$N" --seed 1 -o "$D/t.byu.gz"
cat "$D/t.byu.gz" > /dev/null
best_stat=999 best_py=999 best_iter=999
for i in 1 2 3; do
	t0=$(now)
	"$BACH" stat "$D/t.byu.gz" > /dev/null
	t=$(calc "$(now) - $t0")
	best_stat=$(calc "$t < $best_stat ? $t : $best_stat")
	# chunks as a user iterates them, then the whole trace as one array
	out=$(BACH_LIBRARY="$TOP/$BUILD/libbach.so.0" PYTHONPATH="$TOP/python" \
		"$PYTHON" -c "
import sys, time, bach
t0 = time.perf_counter()
n = sum(len(c) for c in bach.open(sys.argv[1]))
t1 = time.perf_counter()
a = bach.open(sys.argv[1]).read()
t2 = time.perf_counter()
assert n == len(a) == $N, (n, len(a))
print(t1 - t0, t2 - t1)
" "$D/t.byu.gz")
	best_iter=$(calc "${out% *} < $best_iter ? ${out% *} : $best_iter")
	best_py=$(calc "${out#* } < $best_py ? ${out#* } : $best_py")
done
rate() { calc "$N / $1 / 1e6"; }
echo "python: $N records, $(du -m "$D/t.byu.gz" | cut -f1) MB gzip; best of 3:"
echo "python:   bach stat             $(fmt "$best_stat") s, $(fmt "$(rate "$best_stat")") M records/s"
echo "python:   bach.open(), chunks   $(fmt "$best_iter") s, $(fmt "$(rate "$best_iter")") M records/s"
echo "python:   bach.open().read()    $(fmt "$best_py") s, $(fmt "$(rate "$best_py")") M records/s"
check "numpy chunks >= 80% of bach stat's rate" "$best_stat / $best_iter >= 0.8" \
	"$(fmt "$(calc "100 * $best_stat / $best_iter")")%"
check "numpy read() of all >= 80% of bach stat's rate" "$best_stat / $best_py >= 0.8" \
	"$(fmt "$(calc "100 * $best_stat / $best_py")")%"
exit $missed
