#!/bin/sh
# make demo: capture a few seconds from the fake capture board into
# ./demo-capture/, then show what was captured.
set -eu
BUILD=${BUILD:-build}
BIN="$BUILD/bin"
out=demo-capture
mkdir -p "$out"
echo "== bach capture --driver fake --option records=6000000 --option rate=2000000 --output $out"
# 3 seconds at 2 million bus cycles a second: the fake board paces itself
"$BIN/bach" capture --driver fake --option records=6000000 --option rate=2000000 \
	--option seed=1 --output "$out"
cap=$(ls -d "$out"/2*Z* | tail -n 1)
echo
echo "== ls -l $cap"
ls -l "$cap"
echo
echo "== bach verify $cap"
"$BIN/bach" verify "$cap"
echo
echo "== bach stat $cap"
"$BIN/bach" stat "$cap"
echo
echo "== bach dump -n 10 $cap"
"$BIN/bach" dump -n 10 "$cap"
echo
echo "== $cap/manifest.jsonl"
cat "$cap/manifest.jsonl"
