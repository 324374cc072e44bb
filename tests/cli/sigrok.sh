#!/bin/sh
# The logic-analyzer path through bachd: libsigrok's demo device live (the
# records equal bach decode of sigrok-cli's own recording of the same device),
# stopped by its sample limit or by a signal, always ending cleanly; device
# and map errors refused at the start; and recorded analyzer captures
# replayed through the whole pipeline.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"
command -v sigrok-cli >/dev/null || fail "sigrok-cli missing (scripts/deps.sh installs it)"
helper crc32

# the demo device's 8 logic channels as a small bus: its default pattern
# drives them, so cycles open wherever D0 is low
cat > "$T/demo.map" <<'EOF'
ads_n = D0
a3 = D1
a4 = D2
a5 = D3
a12 = D4
mio = D5
wr = D6
be0_n = D7
EOF
DEV=demo:analog_channels=0

# dec_equal DIR KEY TEXT: the ended event's decode.KEY equals the count
# before TEXT in bach decode's summary ($T/err); a count it leaves out is 0
dec_equal() {
	de_m=$(grep '"event":"ended"' "$1/manifest.jsonl" | jq -r ".decode.$2")
	de_d=$(grep -o "[0-9][0-9]* $3" "$T/err" | head -n 1 | cut -d' ' -f1)
	[ "$de_m" = "${de_d:-0}" ] ||
		fail "decode.$2 is $de_m in the manifest, bach decode says ${de_d:-0} ($3)"
}

# 1. a sample limit: the acquisition ends by itself, the capture cleanly
mkdir "$T/o1"
expect_status 0 "$BACHD" --driver sigrok --option device=$DEV --option samplerate=1M \
	--option limit=300000 --option map="$T/demo.map" --output "$T/o1"
C=$(capdir "$T/o1")
[ "$(ended_state "$C")" = clean ] || fail "not a clean end: $(cat "$C/manifest.jsonl")"
check_closed "$C"
grep -q '"event":"started".*"driver":"sigrok".*"model":"Demo device".*"channels":8' \
	"$C/manifest.jsonl" || fail "no device identity: $(head -n 1 "$C/manifest.jsonl")"
records "$C" "$T/live.byu"
n=$(nrecs "$T/live.byu")
[ "$n" -gt 1000 ] || fail "only $n records from 300000 samples"
[ "$(ended "$C" produced)" -eq "$n" ] || fail "produced $(ended "$C" produced), $n in segments"
# the same device and settings recorded by sigrok-cli, decoded by bach decode
sigrok-cli -d $DEV --config samplerate=1M --samples 300000 -o "$T/demo.sr" 2>/dev/null ||
	fail "sigrok-cli could not record the demo device"
expect_status 0 "$BACH" decode --map "$T/demo.map" "$T/demo.sr" -o "$T/rec.byu"
same "$T/live.byu" "$T/rec.byu"
# the decoder's summary in the ended event is bach decode's of the recording
for k in clocks:"bus clocks" cycles:"cycles" records:"records to"; do
	dec_equal "$C" "${k%%:*}" "${k#*:}"
done
echo "demo: $n records live, equal to sigrok-cli's recording decoded"
# a session with analog channels too is read by libsigrok's own loader
# (logic-only version 2 sessions by ours): the same logic, the same records
sigrok-cli -d demo --config samplerate=1M --samples 300000 -o "$T/analog.sr" 2>/dev/null
sigrok-cli -i "$T/analog.sr" --show 2>/dev/null | grep -q ': analog' ||
	fail "the demo device recorded no analog channels"
expect_status 0 "$BACH" decode --map "$T/demo.map" "$T/analog.sr" -o "$T/analog.byu"
same "$T/analog.byu" "$T/rec.byu"

# 2. no limit: bach capture runs until Ctrl-C, then ends cleanly
mkdir "$T/o2"
bg "$BACH" capture --driver sigrok --option device=$DEV --option samplerate=200k \
	--option map="$T/demo.map" --output "$T/o2"
pid=$BGPID
wait_until 20 "a segment" sh -c "ls '$T'/o2/2*Z*/seg-000001.$SEG.part"
sleep 1
kill -INT "$pid"
reap_within 10 "$pid"
[ "$RC" -eq 0 ] || fail "bach capture exited $RC after SIGINT"
C=$(capdir "$T/o2")
[ "$(ended_state "$C")" = clean ] || fail "not a clean end after SIGINT"
check_closed "$C"
records "$C" "$T/run.byu"
[ "$(nrecs "$T/run.byu")" -gt 0 ] || fail "nothing captured in a second"
# the demo pattern repeats: the capture is a prefix of a longer recording
expect_status 0 "$BACH" dump -n 64 "$T/run.byu"
cp "$T/out" "$T/run.txt"
expect_status 0 "$BACH" dump -n 64 "$T/rec.byu"
same "$T/run.txt" "$T/out"

# 3. errors at the start: exit 2, the device or map named
expect_status 2 "$BACHD" --driver sigrok --option device=nosuchdriver --output "$T"
expect_err "libsigrok has no driver 'nosuchdriver'"
expect_status 2 "$BACHD" --driver sigrok --output "$T"
expect_err "device=DRIVER"
expect_status 2 "$BACHD" --driver sigrok --option device= --output "$T"
expect_err "libsigrok has no driver ''"
expect_status 2 "$BACHD" --driver sigrok --option device=$DEV --output "$T"
expect_err "ads_n is not captured"
printf 'ads_n = D0\na3 = D9\n' > "$T/bad.map"
expect_status 2 "$BACHD" --driver sigrok --option device=$DEV --option map="$T/bad.map" --output "$T"
expect_err "bad.map:2: a3 = D9: the capture has no channel 'D9'"
expect_status 2 "$BACHD" --driver sigrok --option device=$DEV --option channels=D0,Q7 \
	--option map="$T/demo.map" --output "$T"
expect_err "has no channel 'Q7'"
expect_status 2 "$BACHD" --driver sigrok --option device=$DEV --option frobnicate=1 --output "$T"
expect_err "unknown option 'frobnicate'"
ls "$T"/2*Z* > /dev/null 2>&1 && fail "a capture directory was made for a refused start"

# 4. a recorded analyzer capture replayed through bachd: bach gen's records
"$BACH" gen --records 5000 --seed 4 -o "$T/ref.byu"
"$BACH" gen --records 5000 --seed 4 --pins vcd --oversample 4 \
	--bus wait=2,pipeline=30,boff=25,ken=20 -o "$T/bus.vcd"
mkdir "$T/o4"
expect_status 0 "$BACHD" --driver replay --option path="$T/bus.vcd" --output "$T/o4"
C=$(capdir "$T/o4")
check_closed "$C"
grep -q '"input":"analyzer capture"' "$C/manifest.jsonl" || fail "not replayed as a capture"
records "$C" "$T/replayed.byu"
same "$T/replayed.byu" "$T/ref.byu"
# 4b. the CPU off the bus (HOLD/HLDA with another master, BOFF# of one
# clock): the decoder's summary reaches the log at notice level and the
# ended event, and every count equals bach decode's of the same file
"$BACH" gen --records 5000 --seed 4 --pins vcd --oversample 4 \
	--bus wait=2,pipeline=30,boff=20,bofflen=1,ken=25,hold=40 -o "$T/hold.vcd"
expect_status 0 "$BACH" decode "$T/hold.vcd" -o "$T/hold.byu"
mkdir "$T/o6"
# (stderr as journald's stream: <N> priority prefixes)
: > "$T/err"
expect_status 0 env JOURNAL_STREAM="$(stat -c %d:%i "$T/err")" \
	"$BACHD" --driver replay --option path="$T/hold.vcd" --output "$T/o6"
grep -q '^<5>replay: decoded [0-9]* bus clocks, [0-9]* cycles, 5000 records; [1-9][0-9]* off the bus' \
	"$T/err" || fail "no decoder summary at notice level: $(cat "$T/err")"
"$BACH" decode "$T/hold.vcd" -o "$T/hold.byu" 2> "$T/err"
C=$(capdir "$T/o6")
for k in clocks:"bus clocks" cycles:"cycles" records:"records to" \
	off_bus:"cycles while the CPU was off the bus" backoffs:"back-offs" \
	aborted:"attempts aborted by BOFF#" off_bus_clocks:"clocks with the CPU off" \
	ken_uncached:"cacheable reads made noncacheable" \
	stray_brdy:"BRDY# with no cycle open" unfinished:"cycles still open"; do
	dec_equal "$C" "${k%%:*}" "${k#*:}"
done
for k in off_bus backoffs aborted off_bus_clocks; do
	[ "$(grep '"event":"ended"' "$C/manifest.jsonl" | jq ".decode.$k")" -gt 0 ] ||
		fail "no $k in this capture: the test proves nothing"
done
records "$C" "$T/replayed3.byu"
same "$T/replayed3.byu" "$T/hold.byu"

# 4c. no ken_n: one record per ADS#, and the cycles perhaps recorded twice
# at a back-off are counted in the ended event as bach decode counts them
"$BACH" gen --records 3000 --seed 4 --pins vcd --bus wait=2,boff=5,ken=30 \
	-o "$T/noken.vcd"
echo "ken_n = none" > "$T/noken.map"
mkdir "$T/o7"
expect_status 0 "$BACHD" --driver replay --option path="$T/noken.vcd" \
	--option map="$T/noken.map" --output "$T/o7"
"$BACH" decode --map "$T/noken.map" "$T/noken.vcd" -o "$T/noken.byu" 2> "$T/err"
C=$(capdir "$T/o7")
dec_equal "$C" boff_unsure "cycles open, or perhaps open, at a back-off"
[ "$(grep '"event":"ended"' "$C/manifest.jsonl" | jq ".decode.boff_unsure")" -gt 0 ] ||
	fail "no boff_unsure in this capture: the test proves nothing"

# binary needs its channel count and a map, passed through
"$BACH" gen --records 5000 --seed 4 --pins bin --basic -o "$T/bus.bin"
i=0
for s in ads_n $(seq -f 'a%g' 3 31) $(seq -f 'be%g_n' 0 7) mio dc wr cache_n; do
	echo "$s = $i"
	i=$((i + 1))
done > "$T/bin.map"
mkdir "$T/o5"
expect_status 0 "$BACHD" --driver replay --option path="$T/bus.bin" --option map="$T/bin.map" \
	--option input=numchannels=$i --output "$T/o5"
records "$(capdir "$T/o5")" "$T/replayed2.byu"
same "$T/replayed2.byu" "$T/ref.byu"
echo "sigrok: ok"
