# make_capture DIR TRACE [EVENTS]: a capture directory written by hand
# from a raw trace (sourced by tests/cli): one segment, and a manifest
# with one of each event the pictures and the report show. Positions: a
# gap at 1000 (lost 500, overflow), a stall at 1500, a mark at 2000 whose
# text needs HTML escaping, device lost at 3000 and back at 3000. With
# EVENTS, a file of manifest lines, those are the events instead.
make_capture() {
	mkdir -p "$1"
	$BACH convert -q "$2" "$1/seg-000001.byu.gz"
	n=$(($(wc -c <"$2") / 6))
	bytes=$(wc -c <"$1/seg-000001.byu.gz")
	crc=$(python3 -c 'import sys, zlib; print("%08x" % zlib.crc32(open(sys.argv[1], "rb").read()))' "$1/seg-000001.byu.gz")
	lost=0 stalls=0
	if [ -z "${3:-}" ]; then
		lost=500 stalls=3
		set -- "$1" "$2" "$1/events"
		cat >"$3" <<'EOT'
{"time":"2026-11-21T22:30:00.100Z","event":"gap","segment":"seg-000001.byu.gz","at":1000,"lost":500,"cause":"overflow"}
{"time":"2026-11-21T22:30:00.150Z","event":"stall","segment":"seg-000001.byu.gz","at":1500,"source":"ring","start_ns":1,"end_ns":2,"ns":1,"count":3,"cycles":0}
{"time":"2026-11-21T22:30:00.200Z","event":"mark","segment":"seg-000001.byu.gz","at":2000,"text":"<b>phase & two</b>"}
{"time":"2026-11-21T22:30:00.300Z","event":"device_lost","segment":"seg-000001.byu.gz","at":3000}
{"time":"2026-11-21T22:30:01.300Z","event":"device_back","segment":"seg-000001.byu.gz","at":3000}
EOT
	fi
	{
		echo '{"time":"2026-11-21T22:30:00.000Z","event":"started","version":1,"driver":"fake","options":{},"device":{},"config":{}}'
		cat "$3"
		echo "{\"time\":\"2026-11-21T22:30:02.000Z\",\"event\":\"segment\",\"name\":\"seg-000001.byu.gz\",\"records\":$n,\"gap_markers\":0,\"bytes\":$bytes,\"crc32\":\"$crc\"}"
		echo "{\"time\":\"2026-11-21T22:30:02.001Z\",\"event\":\"ended\",\"state\":\"clean\",\"produced\":$((n + lost)),\"written\":$n,\"lost\":$lost,\"gap_markers\":0,\"segments\":1,\"bytes\":$bytes,\"stalls\":$stalls,\"board_stalls\":0}"
	} >"$1/manifest.jsonl"
	rm -f "$1/events"
}
