#!/bin/sh
# make demo: generate a synthetic Pentium trace, show what it holds.
set -eu
BUILD=${BUILD:-build}
BACH="$BUILD/bin/bach"
out=demo-capture
mkdir -p "$out"
echo "== bach gen --records 2000000 --seed 1 -o $out/demo.byu.gz"
"$BACH" gen --records 2000000 --seed 1 -o "$out/demo.byu.gz"
ls -l "$out/demo.byu.gz"
echo
echo "== bach verify $out/demo.byu.gz"
"$BACH" verify "$out/demo.byu.gz"
echo
echo "== bach stat $out/demo.byu.gz"
"$BACH" stat "$out/demo.byu.gz"
echo
echo "== bach dump -n 20 $out/demo.byu.gz"
"$BACH" dump -n 20 "$out/demo.byu.gz"
