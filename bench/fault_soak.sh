#!/bin/sh
# make soak: crash recovery under faults. SOAK_CYCLES (default 40) times:
# start bachd (the fake board, drop policy, with overflows and corrupt
# frames, so that there are gaps to account for), a storm of SIGHUP
# rotations, then kill -9 at a random moment. The next start recovers the
# last one. Afterwards every capture must have an ended event, a manifest
# that names every segment (with its records, size and CRC), gap events
# that sum to what the ended event says was lost, and pass bach verify.
#
# F1, as many times: the same with timing on (a sidecar
# beside every segment) and retention far below what the captures hold
# (keep_bytes of 1 byte, 2 MB, or 4 MB with keep_captures=2), so that
# every run of retention wants everything gone. After each kill, in the
# capture that was running: the newest segment a segment event names is
# still there with its sidecar, no retention event names it, and none
# names a segment that never closed (the open one); no sidecar or index
# is left without its segment. At the end every capture is checked as
# above, and again for sidecars without their segment.
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

# storm LOG MS SPAN BACHD-ARGS...: bachd with those arguments, a storm of
# rotations (SIGHUP as fast as a shell sends them) for MS plus up to SPAN
# milliseconds (by $r), then kill -9
storm() {
	log=$1 ms=$2 span=$3
	shift 3
	"$BACHD" "$@" 2>> "$log" &
	pid=$!
	end=$(($(date +%s%N) + (ms + r % span) * 1000000))
	sleep 0.1
	while [ "$(date +%s%N)" -lt "$end" ]; do
		kill -HUP "$pid" 2> /dev/null || break
	done
	kill -KILL "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
}

# finished CAP PART: what every capture passes at the end: an ended event,
# no file left whose name matches PART (a grep -E pattern), bach verify
finished() {
	grep -q '"event":"ended"' "$1/manifest.jsonl" ||
		{ echo "$1: no ended event"; failed=1; }
	ls "$1" | grep -qE "$2" && { echo "$1: a .part is left"; failed=1; }
	# verify checks each segment against the manifest and the totals
	if ! "$BACH" verify -q "$1" > "$D/v" 2>&1; then
		echo "$1 does not verify:"
		sed 's/^/    /' "$D/v" | head -n 10
		failed=1
	fi
}

i=1
while [ "$i" -le "$CYCLES" ]; do
	r=$(rand)
	storm "$D/bachd.log" 200 1000 --driver fake --option seed="$i" \
		--option rate=$((500000 + r % 4000000)) \
		--option overflow_every=7:300 --option corrupt_every=13 \
		--policy drop --set ring_mb=4 --set rotate_mb=2 --output "$OUT"
	i=$((i + 1))
done
# one more start recovers the last capture, and is itself clean
"$BACHD" --driver fake --option records=1000 --set ring_mb=4 --output "$OUT" \
	2>> "$D/bachd.log" || { echo "the last start failed"; failed=1; }

caps=0 segs=0
for c in "$OUT"/2*; do
	caps=$((caps + 1))
	segs=$((segs + $(ls "$c" | grep -cE '^seg-[0-9]+\.byu(\.gz|\.zst)?$')))
	finished "$c" '\.part$'
done
rec=$(grep -c 'recovered [0-9]* capture' "$D/bachd.log")
echo "fault soak: $CYCLES kills, $caps captures, $segs segments, $rec starts recovered a capture"

# ---- F1: retention with timing on, under kill -9 storms ---------------------
# f1_alone CAP: every sidecar, index or index temporary in CAP has its
# segment (closed or open)
f1_alone() {
	for f in "$1"/seg-*.time.gz "$1"/seg-*.time.gz.part "$1"/seg-*.gzi \
		"$1"/.seg-*.gzi.tmp; do
		[ -e "$f" ] || continue
		n=$(basename "$f" | sed 's/^\.*\(seg-[0-9]*\)\..*/\1/')
		ls "$1" | grep -qE "^$n\.byu(\.gz)?(\.part)?\$" && continue
		echo "$1: $(basename "$f") is left without its segment"
		failed=1
	done
}
# f1_running CAP: what retention must never have removed from the capture
# it ran in
f1_running() {
	m="$1/manifest.jsonl"
	closed=$(grep '"event":"segment"' "$m" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p' | sort)
	newest=$(echo "$closed" | tail -n 1)
	if [ -n "$newest" ]; then
		[ -f "$1/$newest" ] ||
			{ echo "$1: retention removed the newest closed segment $newest"; failed=1; }
		tm=$(grep "\"event\":\"segment\",\"name\":\"$newest\"" "$m" | sed -n 's/.*"timing":"\([^"]*\)".*/\1/p')
		[ -z "$tm" ] || [ -f "$1/$tm" ] ||
			{ echo "$1: the newest segment's sidecar $tm is gone"; failed=1; }
	fi
	for r in $(grep '"event":"retention","name"' "$m" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p'); do
		[ "$r" != "$newest" ] ||
			{ echo "$1: a retention event for the newest closed segment $r"; failed=1; }
		echo "$closed" | grep -qx "$r" ||
			{ echo "$1: a retention event for $r, which never closed"; failed=1; }
	done
	f1_alone "$1"
}

OUT1="$D/out1"
mkdir "$OUT1"
i=1
while [ "$i" -le "$CYCLES" ]; do
	r=$(rand)
	case $((r % 3)) in
	0) keep="--set keep_bytes=1" ;;
	1) keep="--set keep_bytes=2M" ;;
	*) keep="--set keep_bytes=4M --set keep_captures=2" ;;
	esac
	# shellcheck disable=SC2086 # $keep is several words
	storm "$D/bachd1.log" 300 1200 --driver fake --option seed="$i" \
		--option timing=1 --option rate=$((500000 + r % 2000000)) \
		--option overflow_every=7:300 --option corrupt_every=13 \
		--policy drop --set ring_mb=4 --set rotate_mb=1 $keep --output "$OUT1"
	# the capture that was running: the newest directory
	c=$(ls -d "$OUT1"/2* 2> /dev/null | tail -n 1)
	[ -n "$c" ] && f1_running "$c"
	i=$((i + 1))
done
# one more start recovers the last capture, and its retention (a limit
# that removes nothing here) finds nothing left alone
"$BACHD" --driver fake --option records=1000 --option timing=1 --set ring_mb=4 \
	--set keep_bytes=100G --output "$OUT1" 2>> "$D/bachd1.log" ||
	{ echo "F1: the last start failed"; failed=1; }
caps1=0 segs1=0
for c in "$OUT1"/2*; do
	caps1=$((caps1 + 1))
	segs1=$((segs1 + $(ls "$c" | grep -cE '^seg-[0-9]+\.byu(\.gz|\.zst)?$')))
	# a sidecar's .time.gz.part beside a recovered segment is recovery's
	finished "$c" '\.byu(\.gz)?\.part$'
	f1_alone "$c"
done
ret1=$(cat "$OUT1"/2*/manifest.jsonl | grep -c '"event":"retention"')
held=$(grep -c 'are never removed' "$D/bachd1.log")
echo "fault soak F1: $CYCLES kills with timing and retention, $caps1 captures left with $segs1 segments, $ret1 retention events, $held starts said keep_bytes could not be met"
if [ "$failed" -eq 0 ]; then
	echo "fault soak: PASS (every capture ended, named every segment, added up, verified; retention kept the open and newest segments and left no sidecar alone)"
else
	echo "fault soak: FAIL"
fi
exit "$failed"
