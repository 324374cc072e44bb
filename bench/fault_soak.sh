#!/bin/sh
# make soak: crash recovery under faults. SOAK_CYCLES (default 40) times:
# start bachd (the fake board, drop policy, with overflows and corrupt
# frames, so that there are gaps to account for), a storm of SIGHUP
# rotations, then kill -9 at a random moment. The next start recovers the
# last one. Afterwards every capture must have an ended event, a manifest
# that names every segment (with its records, size and CRC), gap events
# that sum to what the ended event says was lost, and pass bach verify.
# Exits 1 when any does not.
set -u
BUILD=${BUILD:-build}
BACH="$BUILD/bin/bach"
BACHD="$BUILD/bin/bachd"
CYCLES=${SOAK_CYCLES:-40}
D=$(mktemp -d "${TMPDIR:-/tmp}/bach-soak.XXXXXX")
trap 'rm -rf "$D"' EXIT
OUT="$D/out"
mkdir "$OUT"
failed=0

rand() { od -An -tu4 -N4 /dev/urandom | tr -d ' '; }

i=1
while [ "$i" -le "$CYCLES" ]; do
	r=$(rand)
	"$BACHD" --driver fake --option seed="$i" --option rate=$((500000 + r % 4000000)) \
		--option overflow_every=7:300 --option corrupt_every=13 \
		--policy drop --set ring_mb=4 --set rotate_mb=2 \
		--output "$OUT" 2>> "$D/bachd.log" &
	pid=$!
	# the storm: rotations as fast as a shell sends them, for 0.2 to 1.2 s
	end=$(($(date +%s%N) + 200000000 + (r % 1000) * 1000000))
	sleep 0.1
	while [ "$(date +%s%N)" -lt "$end" ]; do
		kill -HUP "$pid" 2> /dev/null || break
	done
	kill -KILL "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	i=$((i + 1))
done
# one more start recovers the last capture, and is itself clean
"$BACHD" --driver fake --option records=1000 --set ring_mb=4 --output "$OUT" \
	2>> "$D/bachd.log" || { echo "the last start failed"; failed=1; }

caps=0 segs=0
for c in "$OUT"/2*; do
	caps=$((caps + 1))
	segs=$((segs + $(ls "$c" | grep -cE '^seg-[0-9]+\.byu(\.gz)?$')))
	grep -q '"event":"ended"' "$c/manifest.jsonl" ||
		{ echo "$c: no ended event"; failed=1; }
	ls "$c" | grep -q '\.part$' && { echo "$c: a .part is left"; failed=1; }
	# verify checks each segment against the manifest and the totals
	if ! "$BACH" verify -q "$c" > "$D/v" 2>&1; then
		echo "$c does not verify:"
		sed 's/^/    /' "$D/v" | head -n 10
		failed=1
	fi
done
rec=$(grep -c 'recovered [0-9]* capture' "$D/bachd.log")
echo "fault soak: $CYCLES kills, $caps captures, $segs segments, $rec starts recovered a capture"
if [ "$failed" -eq 0 ]; then
	echo "fault soak: PASS (every capture ended, named every segment, added up, verified)"
else
	echo "fault soak: FAIL"
fi
exit "$failed"
