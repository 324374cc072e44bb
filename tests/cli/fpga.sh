# The gateware: make fpga-sim (the testbench and the C check of the byte
# stream it writes), then what it leaves for the host side: the byte stream
# through bach capture's replay driver, and the bus VCD through sigrok.
. "$TOP/tests/lib.sh"

if [ -n "${BACH_SANITIZED:-}" ]; then
	skip "the gateware simulation runs in the plain pass only"
fi
for tool in iverilog vvp; do
	command -v $tool > /dev/null ||
		skip "$tool is not installed (scripts/deps.sh installs it)"
done

F=$TOP/$BUILD/fpga
make -C "$TOP" --no-print-directory NO_DEPS=1 BUILD="$BUILD" fpga-sim \
	> "$T/sim.log" 2>&1
status=$?
cat "$T/sim.log"
[ $status -eq 0 ] || fail "make fpga-sim exited $status"
[ "$(tail -n 1 "$T/sim.log")" = PASS ] || fail "make fpga-sim did not end in PASS"
# the bench's SCYC check (tb_bach.v) saw the split locked sequence
grep -q '^split_locked [1-9]' "$F/sim/bus/summary.txt" ||
	fail "no split locked sequence (SCYC) in the bus scenario"

# the host reads the board's bytes as a raw stream dump: the same records
mkdir "$T/c"
$BACH capture --driver replay --option path="$F/sim/bus/capture.bin" \
	--output "$T/c" 2> "$T/err" || fail "replay of the stream: $(cat "$T/err")"
$BACH convert -q "$T"/c/2*Z* "$T/replayed.byu"
same "$T/replayed.byu" "$F/bus.byu"
grep -q "0 lost" "$T/err" || fail "replay summary: $(cat "$T/err")"
# with the drop policy the losses reach the manifest as overflow gaps
mkdir "$T/d"
$BACH capture --driver replay --option path="$F/sim/drop/capture.bin" \
	--policy drop --output "$T/d" 2> "$T/err" ||
	fail "replay of the drop stream: $(cat "$T/err")"
grep -q '"cause":"overflow"' "$T"/d/2*Z*/manifest.jsonl ||
	fail "no overflow gap in the manifest"

# the VCD: every channel of docs/design.md section 5, as libsigrok reads it
[ -s "$F/bus.vcd" ] && [ -s "$F/bus.byu" ] || fail "no bus.vcd or bus.byu"
if command -v sigrok-cli > /dev/null; then
	sigrok-cli -i "$F/bus.vcd" --show > "$T/show" 2>&1 ||
		fail "sigrok-cli cannot read bus.vcd: $(cat "$T/show")"
	want="clk ads_n"
	i=3; while [ $i -le 31 ]; do want="$want a$i"; i=$((i + 1)); done
	i=0; while [ $i -le 7 ]; do want="$want be${i}_n"; i=$((i + 1)); done
	want="$want mio dc wr cache_n brdy_n na_n ken_n boff_n lock_n hlda"
	want="$want ahold eads_n hitm_n scyc"
	got=$(sed -n 's/^- \([a-z0-9_]*\): logic$/\1/p' "$T/show" | tr '\n' ' ')
	[ "$got" = "$want " ] || fail "VCD channels: $got"
	# the logic-analyzer path: the same bus decodes to the records the
	# gateware delivered (KEN#, BOFF#, NA# as docs/design.md section 5 says)
	$BACH decode "$F/bus.vcd" -o "$T/decoded.byu" 2> "$T/err" ||
		fail "bach decode of bus.vcd: $(cat "$T/err")"
	same "$T/decoded.byu" "$F/bus.byu"
	grep -q "aborted by BOFF#" "$T/err" || fail "no BOFF# in the bus VCD: $(cat "$T/err")"
	# the model's chipset answers only cycles in progress: no BRDY#
	# with no cycle open (it held BRDY# low after the last one)
	grep "with no cycle open\|warning" "$T/err" && fail "bach decode of bus.vcd warns"
	echo "bus.vcd decodes to bus.byu: $(($(wc -c < "$F/bus.byu") / 6)) records"
else
	echo "sigrok-cli is not installed: the VCD was not loaded"
fi
