#!/bin/sh
# bach decode: logic-analyzer captures of the bus, in every format libsigrok
# reads, back to exactly the records the bus played; and every bad input
# refused with exit 2, a message naming the problem, and no output left.
. "$TOP/tests/lib.sh"
command -v sigrok-cli >/dev/null || fail "sigrok-cli missing (scripts/deps.sh installs it)"

# libsigrok's CSV reader crawls under AddressSanitizer: fewer records there
N=6000
[ -n "${BACH_SANITIZED:-}" ] && N=800
SEED=11
BUS=wait=3,pipeline=30,boff=40,ken=25
"$BACH" gen --records $N --seed $SEED -o "$T/ref.byu"

# decoded FILE [ARGS...]: decode FILE, which must give ref.byu exactly
decoded() {
	f=$1
	shift
	expect_status 0 "$BACH" decode "$@" "$f" -o "$T/got.byu"
	cmp -s "$T/got.byu" "$T/ref.byu" ||
		fail "$f ($*): decoded records differ: $(cmp "$T/got.byu" "$T/ref.byu" 2>&1)"
	grep -q "$N records to" "$T/err" || fail "no summary: $(cat "$T/err")"
}

# The channel order of --pins bin, as a map (channel i = bit i).
binmap() { # OVERSAMPLE
	i=0
	: > "$T/bin.map"
	sigs="ads_n $(seq -f 'a%g' 3 31) $(seq -f 'be%g_n' 0 7) mio dc wr cache_n brdy_n na_n ken_n boff_n lock_n"
	[ "$1" -gt 0 ] && sigs="clk $sigs"
	for s in $sigs; do
		echo "$s = $i" >> "$T/bin.map"
		i=$((i + 1))
	done
}

# 1. every format, state mode and clock mode, the whole bus protocol
for ov in 0 4; do
	o=""
	[ $ov -gt 0 ] && o="--oversample $ov"
	for fmt in vcd csv bin; do
		# shellcheck disable=SC2086
		"$BACH" gen --records $N --seed $SEED --pins $fmt $o --bus $BUS \
			-o "$T/bus$ov.$fmt"
	done
	decoded "$T/bus$ov.vcd"
	grep -q "aborted by BOFF#" "$T/err" || fail "no BOFF# count: $(cat "$T/err")"
	grep -q "noncacheable by KEN#" "$T/err" || fail "no KEN# count"
	if [ $ov -gt 0 ]; then
		grep -q "clock mode" "$T/err" || fail "not clock mode: $(cat "$T/err")"
	else
		grep -q "state mode" "$T/err" || fail "not state mode: $(cat "$T/err")"
	fi
	decoded "$T/bus$ov.csv"
	binmap $ov
	nch=$(wc -l < "$T/bin.map")
	decoded "$T/bus$ov.bin" --map "$T/bin.map" --option numchannels="$nch" \
		--option samplerate=66000000
	grep -q "66000000 Hz" "$T/err" || fail "samplerate option not used"
	# srzip, written by libsigrok itself from two of them
	sigrok-cli -i "$T/bus$ov.vcd" -o "$T/bus$ov.sr" 2>/dev/null ||
		fail "sigrok-cli cannot write srzip"
	decoded "$T/bus$ov.sr"
	sigrok-cli -i "$T/bus$ov.bin" -I binary:numchannels="$nch":samplerate=66000000 \
		-o "$T/binbus$ov.sr" 2>/dev/null
	decoded "$T/binbus$ov.sr" --map "$T/bin.map"
	# --format wins over the name
	cp "$T/bus$ov.csv" "$T/bus$ov.txt"
	decoded "$T/bus$ov.txt" --format csv
done

# 2. without BRDY#: plain timing, each ADS# one record; the summary says so
"$BACH" gen --records $N --seed $SEED --pins vcd --basic --bus wait=2,pipeline=50 \
	-o "$T/basic.vcd"
decoded "$T/basic.vcd"
grep -q "brdy_n not captured: every ADS# is one record" "$T/err" ||
	fail "missing BRDY# not stated: $(cat "$T/err")"

# 2b. the CPU off the bus: HOLD/HLDA with another master's cycles, BOFF#
# of one clock; the other master's cycles and floating pins are counted,
# never recorded
"$BACH" gen --records $N --seed $SEED --pins vcd --oversample 4 \
	--bus wait=2,pipeline=30,boff=20,bofflen=1,ken=25,hold=40 -o "$T/hold.vcd"
decoded "$T/hold.vcd"
grep -q "cycles while the CPU was off the bus" "$T/err" ||
	fail "no off-bus count: $(cat "$T/err")"
grep -q "hlda: cycles while HLDA is high are another master's" "$T/err" ||
	fail "hlda not followed: $(cat "$T/err")"
# inquires under AHOLD: their writebacks are records bach gen did not write,
# at the inquire's address; without ahold and eads_n the summary says what
# that costs
"$BACH" gen --records $N --seed $SEED --pins vcd \
	--bus wait=1,pipeline=20,boff=50,snoop=30 -o "$T/snoop.vcd"
expect_status 0 "$BACH" decode "$T/snoop.vcd" -o "$T/snoop.byu"
expect_err "writebacks under AHOLD recorded at the inquire's address"
[ $(($(wc -c < "$T/snoop.byu") / 6)) -gt $N ] || fail "no inquire writebacks"
printf 'ahold = none\neads_n = none\n' > "$T/noahold.map"
expect_status 0 "$BACH" decode --map "$T/noahold.map" "$T/snoop.vcd" -o "$T/x.byu"
expect_err "ahold, eads_n not captured: a writeback under AHOLD keeps the address pins"
# locked read-modify-writes add the scyc channel (SCYC, random levels
# outside locked cycles, where it means nothing): it is accepted, with no
# warning, and the records are those of the same capture without it
"$BACH" gen --records $N --seed $SEED --pins vcd \
	--bus wait=1,pipeline=20,lock=2 -o "$T/lock.vcd"
grep -q ' scyc \$end' "$T/lock.vcd" || fail "no scyc channel in the VCD"
expect_status 0 "$BACH" decode "$T/lock.vcd" -o "$T/lock.byu"
grep -qi 'scyc\|warning' "$T/err" && fail "scyc: $(cat "$T/err")"
echo "scyc = none" > "$T/noscyc.map"
expect_status 0 "$BACH" decode --map "$T/noscyc.map" "$T/lock.vcd" \
	-o "$T/lock-noscyc.byu"
same "$T/lock.byu" "$T/lock-noscyc.byu"
[ $(($(wc -c < "$T/lock.byu") / 6)) -eq $N ] || fail "lock.byu: not $N records"

# 2c. KEN# or NA# not captured: one record per ADS#, and the summary says
# so; a map line that fixes the level brings cycle tracking back
"$BACH" gen --records $N --seed $SEED --pins vcd --bus wait=2,boff=40 \
	-o "$T/plain.vcd"
echo "ken_n = none" > "$T/noken.map"
expect_status 0 "$BACH" decode --map "$T/noken.map" "$T/plain.vcd" -o "$T/x.byu"
expect_err "one record per ADS#, no cycle tracking: ken_n not captured"
expect_err "reads asked cacheable and recorded so: KEN# not followed"
echo "na_n = none" > "$T/nona.map"
expect_status 0 "$BACH" decode --map "$T/nona.map" "$T/plain.vcd" -o "$T/x.byu"
expect_err "no cycle tracking: na_n not captured"
echo "na_n = high   # this bus never pipelines" > "$T/nopipe.map"
decoded "$T/plain.vcd" --map "$T/nopipe.map"
expect_err "brdy_n: cycles followed to their last BRDY#"

# 3. a map: channels renamed, a signal not captured at a constant level.
# Every cycle of this workload drives lock_n high; drop it and say so.
sed -e 's/ ads_n / ADS# /' -e 's/ a17 / ADDR17 /' -e 's/ clk / CPUCLK /' \
	"$T/bus4.vcd" > "$T/renamed.vcd"
expect_status 2 "$BACH" decode "$T/renamed.vcd" -o "$T/x.byu"
expect_err "ads_n is not captured"
cat > "$T/map" <<'EOF'
# the analyzer's names
ads_n = ADS#     # address strobe
a17 = ADDR17
clk=CPUCLK
lock_n = none
EOF
decoded "$T/renamed.vcd" --map "$T/map"
grep -q "clock mode" "$T/err" || fail "clk from the map not used"
# mio, not captured, taken high: the I/O and special cycles become memory
# cycles, and the summary says what was assumed
grep -v ' mio ' "$T/basic.vcd" > "$T/nomio.vcd"
expect_status 0 "$BACH" decode "$T/nomio.vcd" -o "$T/nomio.byu"
expect_err "not captured, taken as constant levels: mio=1"
"$BACH" dump "$T/nomio.byu" | awk '{ print $3 }' | sort -u > "$T/types"
grep -qx IO_READ "$T/types" && fail "mio=1 yet I/O cycles: $(cat "$T/types")"
echo "mio = low" > "$T/lowmio.map"
expect_status 0 "$BACH" decode --map "$T/lowmio.map" "$T/nomio.vcd" -o "$T/lowmio.byu"
expect_err "mio=0"
"$BACH" dump "$T/lowmio.byu" | awk '{ print $3 }' | sort -u | grep -qx D_READ &&
	fail "mio=0 yet memory reads"

# 4. bad input: exit 2 (usage) or 1 (a damaged capture: lib/exit.h),
# the problem named, no output left behind
want=2
bad() { # WHAT-STDERR-SAYS ARGS...
	says=$1
	shift
	rm -f "$T/out.byu.gz"
	expect_status "$want" "$BACH" decode "$@" -o "$T/out.byu.gz"
	expect_err "$says"
	[ ! -e "$T/out.byu.gz" ] || fail "output left behind after: $says"
	ls "$T" | grep -q '^out\.byu\.gz.' && fail "temporary output left: $(ls "$T")"
	true
}
bad_data() { # the same for a damaged capture: exit 1
	want=1
	bad "$@"
	want=2
}
printf 'ads_n = ADS#\na3 = NOSUCH\n' > "$T/badchan.map"
bad "badchan.map:2: a3 = NOSUCH: the capture has no channel 'NOSUCH'" \
	--map "$T/badchan.map" "$T/renamed.vcd"
printf 'ads_n = ADS#\nnot_a_pin = A3\n' > "$T/badsig.map"
bad "badsig.map:2: unknown signal 'not_a_pin'" --map "$T/badsig.map" "$T/renamed.vcd"
bad "ads_n is not captured" "$T/renamed.vcd"
bad "nosuch.map: No such file" --map "$T/nosuch.map" "$T/bus0.vcd"
# cut in the middle of a line, wherever half the file ends
cut=$(($(wc -c < "$T/bus0.vcd") / 2))
[ "$(head -c $cut "$T/bus0.vcd" | tail -c 1 | od -An -tx1 | tr -d ' ')" = 0a ] &&
	cut=$((cut - 1))
head -c $cut "$T/bus0.vcd" > "$T/cut.vcd"
bad_data "cut.vcd: truncated: the last line (ending at byte $cut) is incomplete" "$T/cut.vcd"
head -c 300 "$T/bus0.vcd" | sed '$d' > "$T/header.vcd"
bad "header.vcd:" "$T/header.vcd"
head -c 4000 /dev/urandom > "$T/noise.sr"
bad "noise.sr: not a readable libsigrok session (.sr)" "$T/noise.sr"
# a damaged member inside a good archive
cp "$T/bus4.sr" "$T/damaged.sr"
size=$(wc -c < "$T/damaged.sr")
printf '\377\377\377\377\377\377\377\377\377\377\377\377' |
	dd of="$T/damaged.sr" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
bad_data "damaged.sr: damaged: member logic-1-" "$T/damaged.sr"
# and in its metadata (channel names, sample size: as dangerous)
cp "$T/bus4.sr" "$T/meta.sr"
printf '\125' | dd of="$T/meta.sr" bs=1 seek=90 conv=notrunc 2>/dev/null
bad_data "meta.sr: metadata: damaged: member metadata" "$T/meta.sr"
bad "--format nosuch: no such input format" --format nosuch "$T/bus0.vcd"
cp "$T/bus0.vcd" "$T/bus0.xyz"
bad "bus0.xyz: cannot tell the format from the name" "$T/bus0.xyz"
bad "--option frobnicate=1: the vcd input has no option 'frobnicate'" \
	--option frobnicate=1 "$T/bus0.vcd"
bad "--option numchannels=many: not a valid value" --option numchannels=many "$T/bus0.vcd"
bad "missing.vcd: No such file" "$T/missing.vcd"
bad "a .sr session takes no --option" --option samplerate=1 "$T/bus0.sr"
# an earlier good output is not replaced by a failed decode
"$BACH" decode -q "$T/bus0.vcd" -o "$T/keep.byu"
cp "$T/keep.byu" "$T/keep.ref"
expect_status 1 "$BACH" decode "$T/cut.vcd" -o "$T/keep.byu"
same "$T/keep.byu" "$T/keep.ref"
expect_status 2 "$BACH" decode "$T/bus0.vcd"
expect_err "-o OUT is required"
# an output that is the capture (or the map) is refused, the input kept
for f in bus0.vcd bus0.sr; do
	cp "$T/$f" "$T/keep.$f"
	expect_status 2 "$BACH" decode "$T/$f" -o "$T/$f"
	expect_err "the same file as the input"
	same "$T/$f" "$T/keep.$f"
done
cp "$T/map" "$T/map.byu"
expect_status 2 "$BACH" decode --map "$T/map.byu" "$T/renamed.vcd" -o "$T/map.byu"
expect_err "the same file as the input"
same "$T/map.byu" "$T/map"
# records go to a trace: .byu, .byu.gz, - or a device; other names refused
for o in t.csv t.din t.vcd t.gz noext; do
	expect_status 2 "$BACH" decode "$T/bus0.vcd" -o "$T/$o"
	expect_err "$o: bach decode writes a trace"
	[ ! -e "$T/$o" ] || fail "decode wrote $o"
done
expect_status 0 "$BACH" decode -q "$T/bus0.vcd" -o /dev/null
expect_status 0 "$BACH" decode -q "$T/bus0.vcd" -o -
cmp -s "$T/out" "$T/keep.byu" || fail "decode -o - differs from decode -o keep.byu"
expect_status 0 "$BACH" decode --list-formats
expect_out "srzip"
expect_out "vcd"

# 5. damaged analyzer files: each an error naming the file and the place
case ${BUILD:-build} in /*) hb=$BUILD ;; *) hb=$TOP/${BUILD:-build} ;; esac
[ -x "$hb/tests/helpers/srzip_edit" ] || fail "$hb/tests/helpers/srzip_edit is not built: make tests"
ln -s "$hb/tests/helpers/srzip_edit" "$T/srzip_edit"
# a session's samples in three members decode as in one
cp "$T/bus4.sr" "$T/split.sr"
"$T/srzip_edit" "$T/split.sr" split logic-1-1 3 6
decoded "$T/split.sr"
# one of them missing (1, then 3), or empty: damage, not a shorter capture
cp "$T/split.sr" "$T/hole.sr"
"$T/srzip_edit" "$T/hole.sr" delete logic-1-2
bad_data "hole.sr: damaged: member logic-1-2 is missing (logic-1-3 follows)" "$T/hole.sr"
cp "$T/split.sr" "$T/empty2.sr"
"$T/srzip_edit" "$T/empty2.sr" empty logic-1-2
bad_data "empty2.sr: damaged: member logic-1-2 is empty" "$T/empty2.sr"
cp "$T/bus4.sr" "$T/empty1.sr"
"$T/srzip_edit" "$T/empty1.sr" empty logic-1-1
bad_data "empty1.sr: damaged: member logic-1-1 is empty" "$T/empty1.sr"
# a VCD whose time goes back at line L (libsigrok stops there, silently)
L=$(grep -n '^#' "$T/bus0.vcd" | sed -n 100p | cut -d: -f1)
prev=$(grep '^#' "$T/bus0.vcd" | sed -n 99p)
awk -v l="$L" 'NR == l { print "#3"; next } { print }' "$T/bus0.vcd" > "$T/back.vcd"
bad_data "back.vcd:$L: timestamp #3 is before the previous one ($prev)" "$T/back.vcd"
# a timestamp far beyond the last: refused at once, not walked sample by
# sample (it took more than 100 s)
cp "$T/bus0.vcd" "$T/far.vcd"
echo '#99999999999' >> "$T/far.vcd"
L=$(wc -l < "$T/far.vcd")
expect_status 1 timeout 60 "$BACH" decode "$T/far.vcd" -o "$T/far.byu"
expect_err "far.vcd:$L: timestamp #99999999999 comes 99999"
expect_err "samples after the last change"
[ ! -e "$T/far.byu" ] || fail "far.vcd left an output"
# ... unless the user shortens idle spans with the module's own option
expect_status 0 timeout 60 "$BACH" decode -q --option compress=1000 "$T/far.vcd" -o "$T/far.byu"
# an option beyond what the decoder takes: refused before libsigrok sees it
# (which made 99999999 channels one by one)
expect_status 2 timeout 60 "$BACH" decode --format binary --option numchannels=99999999 \
	"$T/bus0.bin" -o "$T/nc.byu"
expect_err "--option numchannels=99999999: out of range for the binary input: 0 to 128"
expect_status 2 timeout 60 "$BACH" decode --option logic_channels=1000 "$T/bus0.csv" -o "$T/nc.byu"
expect_err "--option logic_channels=1000: out of range for the csv input"

# 6. a capture a real analyzer made (skipped when ../shared/testdata is
# absent): a Z80 as a bus with ADS# = /M1, one record per opcode fetch,
# checked against sigrok-cli's own reading of the samples
KC=$TESTDATA/external/kc85-cpuclk.sr
if [ -f "$KC" ]; then
	{
		echo "ads_n = /M1"
		for i in $(seq 3 15); do echo "a$i = A$i"; done
		echo "clk = none   # sampled on the CPU clock: state mode"
		echo "dc = low"
	} > "$T/kc85.map"
	expect_status 0 "$BACH" decode -e --map "$T/kc85.map" "$KC" -o "$T/kc85.byu"
	expect_err "34 channels, 5000 samples"
	expect_err "a cycle opens where ads_n falls"
	"$BACH" dump "$T/kc85.byu" > "$T/kc85.txt"
	sigrok-cli -i "$KC" -O csv 2>/dev/null | awk -F, '
		/^;/ || /^logic/ { next }
		BEGIN { prev = 1 }
		{
			if ($2 == 0 && prev == 1) {
				a = 0
				for (k = 3; k <= 15; k++) a += $(7 + k) * 2 ^ k
				printf "%08x 00 NC_I_FETCH\n", a
			}
			prev = $2
		}' > "$T/kc85.want"
	[ -s "$T/kc85.want" ] || fail "sigrok-cli read no samples of $KC"
	same "$T/kc85.txt" "$T/kc85.want"
	echo "kc85: $(wc -l < "$T/kc85.txt") opcode fetches, as sigrok-cli reads them"
	# the map of docs/decoding.md ("Map files") is this one, whole: the
	# same records, and what the decoder says it assumed is what the docs
	# show ("What the decoder says")
	awk '/^### Map files/ { f = 1 } f && /^```/ { if (b) exit; b = 1; next } b' \
		"$TOP/docs/decoding.md" > "$T/doc.map"
	grep -q '^ads_n = /M1' "$T/doc.map" || fail "no map in docs/decoding.md: $(cat "$T/doc.map")"
	# ... that maps every address line the Z80 has above A2, not a few
	for i in $(seq 3 15); do
		grep -q "^a$i = A$i\\b" "$T/doc.map" ||
			fail "docs/decoding.md's map lacks a$i: $(cat "$T/doc.map")"
	done
	expect_status 0 "$BACH" decode --map "$T/doc.map" --edge "$KC" -o "$T/doc.byu"
	expect_err "not captured, taken as constant levels: a16-a31=0 be0_n-be7_n=0 mio=1 dc-wr=0 cache_n=1"
	"$BACH" dump "$T/doc.byu" > "$T/doc.txt"
	same "$T/doc.txt" "$T/kc85.want"
else
	echo "note: $KC absent; the real-analyzer check did not run"
fi
echo "decode: ok"
