# Autostop (after dumpcap's -a): duration, records and
# segments, from --set, -a and the configuration file, for bachd and
# bach capture alike: each ends the capture cleanly, says why in the
# ended event, and exits 0.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

stopped_by() { grep -q "\"event\":\"ended\",\"state\":\"clean\".*\"stopped_by\":\"$2\"" "$1/manifest.jsonl"; }

# records: exactly N produced, all written, the records bach gen makes
mkdir "$T/r"
"$BACH" capture --driver fake --option seed=3 --set records=123457 \
	--output "$T/r" 2> "$T/r.log" || fail "records: exit $?: $(cat "$T/r.log")"
C=$(capdir "$T/r")
stopped_by "$C" records || fail "records: $(tail -n 1 "$C/manifest.jsonl")"
[ "$(ended "$C" produced)" -eq 123457 ] && [ "$(ended "$C" written)" -eq 123457 ] ||
	fail "records: $(tail -n 1 "$C/manifest.jsonl")"
records "$C" "$T/r.byu"
is_gen_prefix "$T/r.byu" 3 || fail "records: not bach gen's first records"
"$BACH" verify -q "$C" > /dev/null || fail "records: does not verify"

# duration: bachd from a configuration file, ends by itself after ~2 s
mkdir "$T/d"
printf '[bachd]\noutput = %s\ndriver = fake\nduration = 2s\n[driver]\nrate = 500000\n' "$T/d" > "$T/d.conf"
start=$(date +%s%N)
bg "$BACHD" --config "$T/d.conf" 2> "$T/d.log"
reap_within 20 "$BGPID"
ms=$((($(date +%s%N) - start) / 1000000))
[ "$RC" -eq 0 ] || fail "duration: bachd exited $RC"
[ "$ms" -ge 2000 ] && [ "$ms" -lt 6000 ] || fail "duration: 2 s took $ms ms"
C=$(capdir "$T/d")
stopped_by "$C" duration || fail "duration: $(tail -n 1 "$C/manifest.jsonl")"
[ $(($(ended "$C" written) + $(ended "$C" lost))) -eq "$(ended "$C" produced)" ] ||
	fail "duration: the accounting does not add up"

# segments: -a segments:3 with a rotation a second gives exactly 3
mkdir "$T/s"
"$BACH" capture --driver fake --option rate=300000 -a segments:3 \
	--set rotate_seconds=1 --output "$T/s" 2> "$T/s.log" ||
	fail "segments: exit $?: $(cat "$T/s.log")"
C=$(capdir "$T/s")
stopped_by "$C" segments || fail "segments: $(tail -n 1 "$C/manifest.jsonl")"
[ "$(ended "$C" segments)" -eq 3 ] || fail "segments: $(ended "$C" segments) segments"
[ "$(ls "$C" | grep -cE '^seg-[0-9]+\.byu(\.gz|\.zst)?$')" -eq 3 ] || fail "segments: $(ls "$C")"
"$BACH" verify -q "$C" > /dev/null || fail "segments: does not verify"

# a source that ends first: no stopped_by
mkdir "$T/e"
"$BACH" capture --driver fake --option records=1000 -a records:5000 \
	--output "$T/e" 2> /dev/null || fail "a short source failed"
C=$(capdir "$T/e")
grep -q '"stopped_by"' "$C/manifest.jsonl" && fail "stopped_by without an autostop"
[ "$(ended "$C" produced)" -eq 1000 ] || fail "produced $(ended "$C" produced)"

# bad values: exit 2, naming the key
expect_status 2 "$BACH" capture --driver fake --output "$T" --set records=many
expect_err "records:"
expect_status 2 "$BACH" capture --driver fake --output "$T" -a segments:-1
expect_err "segments:"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" -a duration
expect_err "--autostop: want"
