#!/bin/sh
# The cost of in-band markers (docs/bachd.md section 5): bachd's capture
# rate from the fake board without a marker rule and with rules, in one
# run on the same disk, as a ratio. The writer scans whole blocks only
# when rules are set; the target is a rate within 5% of the one without.
#
#   BENCH_MB=512       record bytes a run (raw segments: the writer's own
#                      work shows, not the compressors')
#   BENCH_REPEAT=5     rounds, each a run without a rule, with 1 and with
#                      4; the medians are kept (of each one's times, and
#                      of the rounds' ratios, which the targets check)
#
# The time is the manifest's span, "started" to the last "segment" event
# (as bench/capture.sh measures it): start-up and exit are not throughput.
# On a machine others share, wall time is noisy: bachd's CPU time (user +
# system, /usr/bin/time) is printed beside it, and its ratio too, and the
# load average before the first run and after the last.
set -eu
BUILD=${BUILD:-build}
BACHD="$BUILD/bin/bachd"
MB=${BENCH_MB:-512}
REPEAT=${BENCH_REPEAT:-5}
D=${BENCH_DIR:-$BUILD/bench-data}/markers
mkdir -p "${D%/*}"
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

echo "markers: fake board, $N records a run, raw segments, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# the POST port (rare: about 900 a million), and four rules, one of them a
# page of code the workload runs often (capped at marker_rate)
RULES1="--set marker=io:0x80"
RULES4="--set marker=io:0x80,io:0xe0-0xef,mem:0xfff00000/4096,mem:0x184000/4096"
s0='' s1='' s4='' c0='' c1='' c4='' r1s='' r4s='' k1s='' k4s=''
i=0
while [ "$i" -lt "$REPEAT" ]; do
	i=$((i + 1))
	line="  run $i:"
	for v in 0 1 4; do
		eval "args=\${RULES$v:-}"
		# shellcheck disable=SC2086 # the rules are words
		span $args > "$D.span"
		s=$(cat "$D.span")
		eval "s$v=\"\$s$v $s\" c$v=\"\$c$v $cpu\" t$v=$s u$v=$cpu"
		line="$line $v rule(s) $(fmt "$s") s ($(fmt "$cpu") s CPU),"
	done
	# rate ratios (a rate is N / span) and CPU ratios of this round
	r1s="$r1s $(calc "$t0 / $t1")" r4s="$r4s $(calc "$t0 / $t4")"
	k1s="$k1s $(calc "$u1 / $u0")" k4s="$k4s $(calc "$u4 / $u0")"
	echo "${line%,}"
done
# shellcheck disable=SC2086 # the lists are words
{
	m0=$(median $s0) m1=$(median $s1) m4=$(median $s4)
	cpu0=$(median $c0) cpu1=$(median $c1) cpu4=$(median $c4)
	q1=$(median $r1s) q4=$(median $r4s) x1=$(median $k1s) x4=$(median $k4s)
}
echo "  rates (medians): no rule $(fmt "$(calc "$N / $m0 / 1000000")") M/s, 1 rule $(fmt "$(calc "$N / $m1 / 1000000")") M/s, 4 rules $(fmt "$(calc "$N / $m4 / 1000000")") M/s ($marks mark events with 4)"
echo "  CPU (medians): no rule $(fmt "$cpu0") s, 1 rule $(fmt "$cpu1") s, 4 rules $(fmt "$cpu4") s; load average after $(cut -d' ' -f1-3 /proc/loadavg)"
check "1 marker rule: rate >= 0.95 x without" "$q1 >= 0.95" "median of $REPEAT rounds: rate $(calc "$q1")x, CPU $(calc "$x1")x"
check "4 marker rules: rate >= 0.95 x without" "$q4 >= 0.95" "median of $REPEAT rounds: rate $(calc "$q4")x, CPU $(calc "$x4")x"
exit "$missed"
