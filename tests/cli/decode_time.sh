#!/bin/sh
# bach decode writes NAME.time.gz (beside NAME.byu.gz): each record's sample index (the sample its
# ADS# was read from, docs/decoding.md "Sample indexes") at the capture's
# sample rate. Checked against references that are not the decoder: the
# VCD's own timestamps, and sigrok-cli's reading of real captures.
. "$TOP/tests/lib.sh"
command -v sigrok-cli >/dev/null || fail "sigrok-cli missing (scripts/deps.sh installs it)"

N=3000
[ -n "${BACH_SANITIZED:-}" ] && N=600

# 1. a generated VCD in clock mode (4 samples a clock, 1 ns a sample), the
# bus pipelined with wait states and KEN#, nobody else on it: every clock
# edge with ADS# low is one record. The reference reads the VCD itself: at
# a timestamp #T where clk rises, the pins that stood before it (sample
# T-1) are the edge's; ADS# low there gives T-1.
"$BACH" gen --records $N --seed 5 --pins vcd --oversample 4 \
	--bus wait=3,pipeline=40,ken=25 -o "$T/bus.vcd"
expect_status 0 "$BACH" decode "$T/bus.vcd" -o "$T/bus.byu.gz"
[ -f "$T/bus.time.gz" ] || fail "no timing sidecar beside bus.byu.gz"
"$BACH" dump --time "$T/bus.byu.gz" | awk '{ print $4, $5 }' > "$T/got"
awk '
	$1 == "$var" && $5 == "clk" { clk = $4 }
	$1 == "$var" && $5 == "ads_n" { ads = $4 }
	/^#/ { t = substr($0, 2) + 0; ads_before = v[ads]; next }
	/^[01]/ {
		id = substr($0, 2); b = substr($0, 1, 1) + 0
		if (id == clk && b == 1 && v[clk] == 0 && ads_before == 0)
			printf "%d %d.%09d\n", t - 1, 0, t - 1
		v[id] = b
	}' "$T/bus.vcd" > "$T/want"
[ "$(wc -l < "$T/want")" -eq $N ] || fail "the VCD has $(wc -l < "$T/want") ADS# edges, not $N"
same "$T/got" "$T/want"
# the clock rate is the sample rate: 1 GHz (timescale 1 ns)
/usr/bin/python3 "$TOP/tests/helpers/sidecar.py" entries "$T/bus.time.gz" | head -1 | grep -qx "$(head -1 "$T/want" | cut -d' ' -f1)" ||
	fail "the sidecar's first entry"
# a raw output too; - has none (nowhere beside it)
expect_status 0 "$BACH" decode -q "$T/bus.vcd" -o "$T/raw.byu"
[ -f "$T/raw.time.gz" ] || fail "no sidecar beside raw.byu"
"$BACH" dump --time "$T/raw.byu" | awk '{ print $4, $5 }' | cmp -s - "$T/got" || fail "raw.byu times"
expect_status 0 "$BACH" decode -q "$T/bus.vcd" -o - > "$T/out.byu"
[ ! -e "$T/-.time.gz" ] && [ ! -e "$T/out.time.gz" ] || fail "a sidecar for -"
# a failed decode leaves no sidecar either
head -c 3000 "$T/bus.vcd" > "$T/cut.vcd"
printf '#99' >> "$T/cut.vcd"
expect_status 1 "$BACH" decode "$T/cut.vcd" -o "$T/cut.byu.gz"
ls "$T" | grep -q '^cut\.\(byu\|time\)' && fail "a failed decode left $(ls "$T" | grep '^cut\.')"

# 2. state mode: every sample a clock, the index is the sample's own
"$BACH" gen --records $N --seed 6 --pins vcd --bus wait=2,pipeline=30 -o "$T/st.vcd"
expect_status 0 "$BACH" decode "$T/st.vcd" -o "$T/st.byu"
expect_err "state mode"
"$BACH" dump --time "$T/st.byu" | awk '{ print $4 }' > "$T/got"
# ADS# low from its timestamp to the next change of any signal: one
# sample each (the model holds ADS# one clock)
awk '
	$1 == "$var" && $5 == "ads_n" { ads = $4 }
	/^#/ { t = substr($0, 2) + 0; next }
	/^[01]/ && substr($0, 2) == ads && substr($0, 1, 1) == "0" { print t }' \
	"$T/st.vcd" > "$T/want"
same "$T/got" "$T/want"

# 3. real analyzer captures (skipped when ../shared/testdata is absent): a
# Z80 with ADS# = /M1, checked against sigrok-cli's own samples
KC=$TESTDATA/external/kc85-cpuclk.sr
if [ -f "$KC" ]; then
	{
		echo "ads_n = /M1"
		for i in $(seq 3 15); do echo "a$i = A$i"; done
		echo "dc = low"
	} > "$T/kc.map"
	# sampled on the CPU clock: state mode, a fall of /M1 at sample i is i
	cp "$T/kc.map" "$T/kcs.map"
	echo "clk = none" >> "$T/kcs.map"
	expect_status 0 "$BACH" decode -e --map "$T/kcs.map" "$KC" -o "$T/kcs.byu"
	"$BACH" dump --time "$T/kcs.byu" | awk '{ print $4, $5 }' > "$T/got"
	sigrok-cli -i "$KC" -O csv 2>/dev/null | awk -F, '
		/^;/ || /^logic/ { next }
		BEGIN { prev = 1; i = 0 }
		{
			if ($2 == 0 && prev == 1)
				printf "%d %d.%09d\n", i, i / 1000000, (i % 1000000) * 1000
			prev = $2; i++
		}' > "$T/want"
	[ -s "$T/want" ] || fail "sigrok-cli read no samples of $KC"
	same "$T/got" "$T/want"
	# sampled at 20 MHz with CLK captured: clock mode, the sample before
	# each rising CLK edge; a cycle where /M1 is low there and was not at
	# the edge before (--edge)
	KC20=$TESTDATA/external/kc85-20mhz.sr
	echo "clk = CLK" >> "$T/kc.map"
	expect_status 0 "$BACH" decode -e --map "$T/kc.map" "$KC20" -o "$T/kc20.byu.gz"
	expect_err "at 20000000 Hz"
	"$BACH" dump --time "$T/kc20.byu.gz" | awk '{ print $4, $5 }' > "$T/got"
	sigrok-cli -i "$KC20" -O csv 2>/dev/null | awk -F, '
		/^;/ || /^logic/ { next }
		BEGIN { pclk = 1; last = 1; i = 0 }
		{
			if (pclk == 0 && $1 == 1) {
				if (pm1 == 0 && last == 1)
					printf "%d %d.%09d\n", i - 1, 0, (i - 1) * 50
				last = pm1
			}
			pclk = $1; pm1 = $2; i++
		}' > "$T/want"
	[ -s "$T/want" ] || fail "sigrok-cli read no samples of $KC20"
	same "$T/got" "$T/want"
	echo "kc85: $(wc -l < "$T/got") fetches at sigrok-cli's sample indexes"
else
	echo "note: $KC absent; the real-analyzer check did not run"
fi
# a trace written over a decoded one takes the old sidecar away (its
# clocks are not the new records'), a decode over it writes its own
cp "$T/bus.byu.gz" "$T/w.byu.gz"
cp "$T/bus.time.gz" "$T/w.time.gz"
n=$("$BACH" dump "$T/w.byu.gz" | wc -l)
"$BACH" gen --records "$n" --seed 9 -o "$T/w.byu.gz" 2> /dev/null || fail "gen over a decoded trace"
[ ! -e "$T/w.time.gz" ] || fail "gen left the decoded trace's sidecar beside its own records"
expect_status 2 "$BACH" dump --time "$T/w.byu.gz"
expect_err "no timing sidecar"
expect_status 0 "$BACH" decode -q "$T/bus.vcd" -o "$T/w.byu.gz"
"$BACH" dump --time "$T/w.byu.gz" > "$T/w.t" || fail "dump --time after a decode over it"
"$BACH" dump --time "$T/bus.byu.gz" > "$T/bus.t"
same "$T/w.t" "$T/bus.t"
# the sidecar's temporary is never written through a link or waited on as
# a FIFO: the decode refuses it and leaves what is there alone
echo keep > "$T/outside"
ln -s "$T/outside" "$T/l.time.gz.part"
expect_status 2 "$BACH" decode -q "$T/bus.vcd" -o "$T/l.byu.gz"
[ ! -e "$T/l.byu.gz" ] || fail "a refused decode left its trace"
[ "$(cat "$T/outside")" = keep ] || fail "decode wrote through a link at l.time.gz.part"
mkfifo "$T/f.time.gz.part"
rc=0
timeout 20 "$BACH" decode -q "$T/bus.vcd" -o "$T/f.byu.gz" 2> "$T/f.err" || rc=$?
[ "$rc" -ne 124 ] || fail "decode waited on a FIFO at f.time.gz.part"
[ -p "$T/f.time.gz.part" ] || fail "decode took the FIFO at f.time.gz.part away"
echo "decode_time: ok"
