#!/bin/sh
# The soak (README.md, "Performance"): bachd for SOAK_MINUTES (default 10; or
# SOAK_SECONDS) from the fake board at a high rate (SOAK_RATE records/s,
# default 4000000), a segment a second, retention on (keep_bytes =
# SOAK_KEEP, default 256M), post_rotate on every segment, `bach ctl status`
# polled in a loop, a SIGHUP every 7 s. Every 5 s it samples bachd's RSS,
# open file descriptors and zombie children.
#
# Flat, after a warm-up (the first sample at or after a fifth of the run,
# at least 10 s):
#   RSS:  no sample more than SOAK_RSS_SLACK KiB (default 8192) above the
#         warm-up sample;
#   fds:  no sample more than 3 above the warm-up sample (a control
#         connection and retention's directories come and go), and the
#         last sample not above the highest of the first three from the
#         warm-up on (one sample can catch such an fd open, or not);
#   zombies: never more than 1 (a post_rotate just ended, not reaped yet).
# At the end (SIGTERM): exit 0, produced = written + lost in the ended
# event, the gap events sum to lost, retention removed segments, what is
# left passes bach verify. Exits 1 when anything fails.
#
# Metrics: when bachd has a metrics_file setting (docs/bachd.md section 8), it
# is turned on (metrics_interval = 1) and the file is checked at each
# sample with promtool when there is one. HOOK(metrics_file).
set -u
BUILD=${BUILD:-build}
BACH=${BACH:-$BUILD/bin/bach}
BACHD=${BACHD:-$(dirname "$BACH")/bachd}
SECONDS_RUN=${SOAK_SECONDS:-$((${SOAK_MINUTES:-10} * 60))}
RATE=${SOAK_RATE:-4000000}
KEEP=${SOAK_KEEP:-256M}
SLACK=${SOAK_RSS_SLACK:-8192}
D=$(mktemp -d "${TMPDIR:-/tmp}/bach-soak.XXXXXX")
pid=""
poller=""
cleanup() {
	[ -n "$poller" ] && kill "$poller" 2> /dev/null
	[ -n "$pid" ] && kill -KILL "$pid" 2> /dev/null
	rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
OUT="$D/out"
mkdir "$OUT"
failed=0
bad() { echo "soak: FAIL: $*"; failed=1; }

metrics=""
if "$BACHD" --help 2> /dev/null | grep -q 'metrics_file'; then
	metrics="$D/bachd.prom"
	set -- --set metrics_file="$metrics" --set metrics_interval=1
else
	set --
fi
"$BACHD" --driver fake --option rate="$RATE" --option seed=10 \
	--set rotate_seconds=1 --set rotate_mb=0 --set keep_bytes="$KEEP" \
	--set ring_mb=64 --set post_rotate=true --set log_level=notice \
	--control-socket "$D/s.sock" --output "$OUT" "$@" 2> "$D/bachd.log" &
pid=$!
i=0
until [ -S "$D/s.sock" ]; do
	i=$((i + 1))
	[ $i -lt 200 ] && kill -0 "$pid" 2> /dev/null ||
		{ echo "soak: bachd did not start: $(tail -n 5 "$D/bachd.log")"; exit 1; }
	sleep 0.1
done

# the poller: status as fast as a monitoring loop would ask, counted
(
	while kill -0 "$pid" 2> /dev/null; do
		"$BACH" ctl --socket "$D/s.sock" status > /dev/null 2>&1 &&
			echo >> "$D/polls"
		sleep 0.2
	done
) &
poller=$!

sample() {
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
	fds=$(ls "/proc/$pid/fd" | wc -l)
	zombies=$(ps -o stat= --ppid "$pid" | grep -c '^Z' || true)
	echo "$1 $rss $fds $zombies" >> "$D/samples"
	# where the memory is, kept for the warm-up sample and the latest:
	# a drift then names the mappings that grew
	[ -f "$D/smaps.warm" ] || [ "$1" -lt "$warm" ] ||
		cp "/proc/$pid/smaps" "$D/smaps.warm" 2> /dev/null
	cp "/proc/$pid/smaps" "$D/smaps.last" 2> /dev/null
	if [ -n "$metrics" ] && [ -s "$metrics" ] && command -v promtool > /dev/null; then
		promtool check metrics < "$metrics" > "$D/promtool" 2>&1 ||
			bad "promtool: $(head -n 3 "$D/promtool")"
	fi
}

start=$(date +%s)
warm=$((SECONDS_RUN / 5))
[ "$warm" -ge 10 ] || warm=10
huped=0
next_sample=0
next_hup=7
while :; do
	t=$(($(date +%s) - start))
	[ "$t" -lt "$SECONDS_RUN" ] || break
	kill -0 "$pid" 2> /dev/null || { bad "bachd exited during the soak: $(tail -n 5 "$D/bachd.log")"; break; }
	if [ "$t" -ge "$next_sample" ]; then
		sample "$t"
		next_sample=$((next_sample + 5))
	fi
	if [ "$t" -ge "$next_hup" ]; then
		kill -HUP "$pid" && huped=$((huped + 1))
		next_hup=$((next_hup + 7))
	fi
	sleep 0.5
done
sample "$SECONDS_RUN"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=""
kill "$poller" 2> /dev/null
wait "$poller" 2> /dev/null
poller=""
[ "$rc" -eq 0 ] || bad "bachd exited $rc: $(tail -n 5 "$D/bachd.log")"

# flat: every sample after the warm-up against the warm-up sample
awk -v warm="$warm" -v slack="$SLACK" '
	$1 >= warm && !base { base = 1; r0 = $2; f0 = $3 }
	base { if ($2 - r0 > slack) print "RSS " $2 " KiB at " $1 " s, " r0 " KiB after the warm-up";
	       if ($3 - f0 > 3) print "fds " $3 " at " $1 " s, " f0 " after the warm-up";
	       if (++nb <= 3 && $3 > fearly) fearly = $3
	       last_f = $3 }
	$4 > 1 { print $4 " zombie children at " $1 " s" }
	END { if (base && last_f > fearly) print "fds " last_f " at the end, at most " fearly " in the first samples after the warm-up" }
' "$D/samples" > "$D/drift"
if [ -s "$D/drift" ]; then
	bad "not flat: $(cat "$D/drift")"
	# per mapping (start address and name), RSS growth since the warm-up
	rss_by_map() {
		awk '/^[0-9a-f]+-[0-9a-f]+ / { m = $1 " " ($6 == "" ? "[anon]" : $6) }
		     /^Rss:/ { print m, $2 }' "$1"
	}
	if [ -f "$D/smaps.warm" ] && [ -f "$D/smaps.last" ]; then
		rss_by_map "$D/smaps.warm" > "$D/rss.warm"
		rss_by_map "$D/smaps.last" > "$D/rss.last"
		echo "soak: the mappings that grew most since the warm-up (KiB):"
		awk 'NR == FNR { w[$1 " " $2] = $3; next }
		     { d = $3 - w[$1 " " $2]; if (d > 0) print d, $1, $2 }' \
			"$D/rss.warm" "$D/rss.last" | sort -rn | head -n 5 |
			sed 's/^/soak:   +/'
	fi
fi

# the accounting, and what is left
C=$(ls -d "$OUT"/2*Z* | tail -n 1)
M="$C/manifest.jsonl"
endv() { grep '"event":"ended"' "$M" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
pr=$(endv produced) w=$(endv written) l=$(endv lost) segs=$(endv segments)
[ -n "$pr" ] || bad "no ended event"
gl=$(grep '"event":"gap"' "$M" | sed -n 's/.*"lost":\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
[ -n "$pr" ] && [ $((w + l)) -eq "$pr" ] || bad "written ${w:-?} + lost ${l:-?} != produced ${pr:-?}"
[ "$gl" = "${l:-}" ] || bad "the gap events sum to $gl, ended says ${l:-?}"
removed=$(grep -c '"event":"retention"' "$M" || true)
[ "$removed" -gt 0 ] || bad "retention removed nothing (keep_bytes=$KEEP)"
"$BACH" verify -q "$C" > "$D/verify" 2>&1 || bad "bach verify: $(head -n 5 "$D/verify")"
grep -q 'post_rotate' "$D/bachd.log" && bad "post_rotate warnings: $(grep post_rotate "$D/bachd.log" | head -n 3)"

polls=$(cat "$D/polls" 2> /dev/null | wc -l)
awk -v warm="$warm" '
	$1 >= warm && !b { b = 1; r0 = $2; f0 = $3 }
	{ if ($2 > rmax) rmax = $2; if ($3 > fmax) fmax = $3; r = $2; f = $3 }
	END { printf "soak: RSS %d KiB after warm-up, %d at the end, max %d; fds %d, %d, max %d\n", r0, r, rmax, f0, f, fmax }
' "$D/samples"
echo "soak: $SECONDS_RUN s at $RATE records/s: $pr produced, $w written, $l lost, $segs segments ($removed removed by retention), $huped SIGHUPs, $polls status polls${metrics:+, metrics checked}"
echo "soak: samples (s:RSS KiB/fds/zombies):" $(awk '{ printf "%s:%s/%s/%s\n", $1, $2, $3, $4 }' "$D/samples")
[ "$failed" -eq 0 ] || exit 1
echo "soak: OK"
