#!/bin/sh
# The gateware's simulation (make fpga-sim): every scenario of tbgen.c
# through the testbench (Icarus Verilog), each byte stream through
# check_stream. Prints a line per scenario and PASS (or FAIL) last.
#
#   run.sh OUT GEN.byu TB.vvp TBGEN CHECK [SCENARIO...]
#
# OUT/sim/SCENARIO/ keeps each run's files (stream.bin: all the board
# wrote; capture.bin: the capture checked in full, after the one of the
# other source that precedes it); the bus scenario's pins and records go
# to OUT/bus.vcd and OUT/bus.byu for the logic-analyzer path.
set -u
out=$1 gen=$2 vvp=$3 tbgen=$4 check=$5
shift 5
scenarios=${*:-"bus drop offbus filter counter lfsr cmds deaf nocpu nobus"}
failed=""

for s in $scenarios; do
	[ "$s" = bus ] && rm -f "$out/bus.vcd" "$out/bus.byu"
	d=$out/sim/$s
	rm -rf "$d"
	mkdir -p "$d"
	start=$(date +%s)
	extra=""
	case $s in
	bus) extra="+vcd=$d/bus.vcd" ;;
	deaf) extra="+deaf" ;;
	no*) extra="+nobclk" ;;
	esac
	if ! "$tbgen" "$s" "$gen" "$d"; then
		failed="$failed $s"
		continue
	fi
	vvp -n "$vvp" +dir="$d" +cycles="$d/cycles.hex" +ts="$d/ts.txt" \
		$extra > "$d/tb.log" 2>&1
	if [ "$(tail -n 1 "$d/tb.log")" != PASS ]; then
		echo "fpga-sim: $s: the testbench failed:"
		grep -v '^WARNING.*readmemh' "$d/tb.log" | tail -n 20
		failed="$failed $s"
		continue
	fi
	if ! "$check" "$d"; then
		failed="$failed $s"
		continue
	fi
	# the capture checked in full, alone: a raw dump for bach capture's
	# replay driver
	mark=$(sed -n 's/^mark_byte //p' "$d/summary.txt")
	tail -c +$((mark + 1)) "$d/stream.bin" > "$d/capture.bin"
	echo "fpga-sim: $s: $(tail -n 2 "$d/tb.log" | head -n 1 | sed 's/^tb: //') ($(($(date +%s) - start)) s)"
	if [ "$s" = bus ]; then
		cp "$d/bus.vcd" "$out/bus.vcd"
		cp "$d/expect.byu" "$out/bus.byu"
	fi
done
if [ -n "$failed" ]; then
	echo "FAIL:$failed"
	exit 1
fi
echo PASS
