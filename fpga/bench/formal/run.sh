#!/bin/sh
# make fpga-formal: each core's properties (the `ifdef FORMAL part of its
# file, the yosys script here), by yosys-smtbmc with z3: bounded model
# checking from the initial state, then k-induction (every state that
# satisfies the properties for k clocks keeps them: together, a proof for
# all time). Prints a line per core and PASS (or FAIL) last.
#
#   run.sh OUT [CORE...]      OUT/formal/CORE.smt2, .log, and a VCD of
#                             the counterexample when a property fails
set -u
out=$1/formal
shift
cores=${*:-"sampler afifo framer cmd"}
mkdir -p "$out"
failed=""

# depths: BMC steps, induction steps (afifo: steps of either clock)
depth() {
	case $1 in
	sampler) echo "8 8" ;;
	afifo) echo "10 8" ;;
	framer) echo "6 4" ;;
	cmd) echo "8 4" ;;
	*) echo "8 8" ;;
	esac
}

# the result of one run, from its log
result() {
	tr '\r' '\n' < "$1" | grep -o '##.*' | grep -E 'Status:|failed|Assert' |
		sed 's/^## *[0-9:]* *//' | tr '\n' ' '
}

for c in $cores; do
	start=$(date +%s)
	set -- $(depth "$c")
	if ! yosys -q -l "$out/$c.yosys.log" -p "script fpga/bench/formal/$c.ys" \
		-p "write_smt2 -wires $out/$c.smt2" > /dev/null 2>&1; then
		echo "fpga-formal: $c: yosys failed (see $out/$c.yosys.log)"
		failed="$failed $c"
		continue
	fi
	ok=1
	yosys-smtbmc -s z3 --unroll -t "$1" --dump-vcd "$out/$c.bmc.vcd" \
		"$out/$c.smt2" > "$out/$c.bmc.log" 2>&1 || ok=0
	bmc=$(result "$out/$c.bmc.log")
	ind="not tried"
	if [ $ok = 1 ]; then
		yosys-smtbmc -s z3 --unroll -i -t "$2" \
			--dump-vcd "$out/$c.ind.vcd" "$out/$c.smt2" \
			> "$out/$c.ind.log" 2>&1 || ok=0
		ind=$(result "$out/$c.ind.log")
	fi
	echo "fpga-formal: $c: BMC $1 steps: $bmc; induction $2 steps: $ind($(($(date +%s) - start)) s)"
	[ $ok = 1 ] || failed="$failed $c"
done
if [ -n "$failed" ]; then
	echo "FAIL:$failed"
	exit 1
fi
echo PASS
