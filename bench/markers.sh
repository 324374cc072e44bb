#!/bin/sh
# The cost of in-band markers (docs/bachd.md section 5): bachd's capture
# rate from the fake board without a marker rule and with rules, in one
# run on the same disk, as a ratio. The writer scans whole blocks only
# when rules are set; the target is a rate within 5% of the one without.
#
#   BENCH_MB=512       record bytes a run (raw segments: the writer's own
#                      work shows, not the compressors')
#   BENCH_REPEAT=3     runs alternate without/with; the best of each kept
#
# The time is the manifest's span, "started" to the last "segment" event
# (as bench/capture.sh measures it): start-up and exit are not throughput.
# On a machine others share, wall time is noisy: bachd's CPU time (user +
# system, /usr/bin/time) is printed beside it, and its ratio too.
set -eu
BUILD=${BUILD:-build}
BACHD="$BUILD/bin/bachd"
MB=${BENCH_MB:-512}
REPEAT=${BENCH_REPEAT:-3}
D=${BENCH_DIR:-$BUILD/bench-data}/markers
N=$((MB * 1024 * 1024 / 6))
missed=0

. "$(dirname "$0")/lib.sh"
trap 'rm -rf "$D" "$D.log" "$D.cpu" "$D.span"' EXIT
trap 'exit 1' INT TERM HUP

# span ARGS...: seconds bachd took for N records with ARGS; its marks in
# $marks, the CPU seconds it used (user + system) in $cpu
span() {
	rm -rf "$D"
	mkdir -p "$D"
	/usr/bin/time -f '%U %S' -o "$D.cpu" "$BACHD" --driver fake --option "records=$N" --no-compress \
		--set rotate_mb=0 --set ring_mb=256 --output "$D" "$@" 2> "$D.log" ||
		{ cat "$D.log" >&2; echo "bench/markers.sh: bachd failed" >&2; exit 1; }
	man=$(echo "$D"/*/manifest.jsonl)
	marks=$(grep -c '"event":"mark"' "$man" || true)
	cpu=$(awk '{ c = $1 + $2 } END { print c }' "$D.cpu")
	awk -F'"' '
		function s(t) { return substr(t, 12, 2) * 3600 + substr(t, 15, 2) * 60 + substr(t, 18, 6) }
		/"event":"started"/ { t0 = s($4) }
		/"event":"segment"/ { t1 = s($4) }
		END { d = t1 - t0; if (d < 0) d += 86400; if (d <= 0) d = 0.001; print d }' "$man"
}

echo "markers: fake board, $N records a run, raw segments, $(nproc) CPUs"
# the POST port (rare: about 900 a million), and four rules, one of them a
# page of code the workload runs often (capped at marker_rate)
RULES1="--set marker=io:0x80"
RULES4="--set marker=io:0x80,io:0xe0-0xef,mem:0xfff00000/4096,mem:0x184000/4096"
best0=0 best1=0 best4=0 cpu0=0 cpu1=0 cpu4=0
i=0
while [ "$i" -lt "$REPEAT" ]; do
	i=$((i + 1))
	line="  run $i:"
	for v in 0 1 4; do
		eval "args=\${RULES$v:-}"
		# shellcheck disable=SC2086 # the rules are words
		span $args > "$D.span"
		s=$(cat "$D.span")
		eval "best=\$best$v c=\$cpu$v"
		if [ "$best" = 0 ] || [ "$(calc "$s < $best")" = 1 ]; then eval "best$v=$s"; fi
		if [ "$c" = 0 ] || [ "$(calc "$cpu < $c")" = 1 ]; then eval "cpu$v=$cpu"; fi
		line="$line $v rule(s) $(fmt "$s") s ($(fmt "$cpu") s CPU),"
	done
	echo "${line%,}"
done
r0=$(calc "$N / $best0 / 1000000")
r1=$(calc "$N / $best1 / 1000000")
r4=$(calc "$N / $best4 / 1000000")
echo "  rates (best): no rule $(fmt "$r0") M/s, 1 rule $(fmt "$r1") M/s, 4 rules $(fmt "$r4") M/s ($marks mark events with 4)"
echo "  CPU (best): no rule $(fmt "$cpu0") s, 1 rule $(fmt "$cpu1") s ($(calc "$cpu1 / $cpu0") x), 4 rules $(fmt "$cpu4") s ($(calc "$cpu4 / $cpu0") x)"
check "1 marker rule: rate >= 0.95 x without" "$r1 >= 0.95 * $r0" "ratio $(calc "$r1 / $r0")"
check "4 marker rules: rate >= 0.95 x without" "$r4 >= 0.95 * $r0" "ratio $(calc "$r4 / $r0")"
exit "$missed"
