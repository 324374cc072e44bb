#!/bin/sh
# make fpga-formal: each core's properties (the `ifdef FORMAL part of its
# file, the yosys script here), by yosys-smtbmc with z3: bounded model
# checking from the initial state, then k-induction (every state that
# satisfies the properties for k clocks keeps them: together, a proof for
# all time), then the covers (yosys-smtbmc -c: a trace to every cover()
# statement within the cover depth; one not reached fails the core, so no
# property holds only because its premise never does). Prints a line per
# core and PASS (or FAIL) last.
#
#   run.sh OUT [CORE...]      OUT/formal/CORE.smt2, .log, and a VCD of
#                             the counterexample when a property fails;
#                             CORE.cover.log and a VCD per cover reached
set -u
out=$1/formal
shift
cores=${*:-"sampler afifo framer cmd ft245"}
mkdir -p "$out"
failed=""

# depths: BMC steps, induction steps, cover steps (afifo: steps of either
# clock)
depth() {
	case $1 in
	sampler) echo "8 8 12" ;;
	afifo) echo "10 8 24" ;;
	framer) echo "6 4 14" ;;
	cmd) echo "8 4 16" ;;
	ft245) echo "12 12 20" ;;
	*) echo "8 8 20" ;;
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
	cov="not tried"
	if [ $ok = 1 ]; then
		yosys-smtbmc -s z3 --unroll -c -t "$3" \
			--dump-vcd "$out/$c.cover%.vcd" "$out/$c.smt2" \
			> "$out/$c.cover.log" 2>&1 || ok=0
		reached=$(tr '\r' '\n' < "$out/$c.cover.log" |
			grep -c 'Reached cover statement')
		unreached=$(tr '\r' '\n' < "$out/$c.cover.log" |
			sed -n 's/.*Unreached cover statement at \([^ ]*\) .*/\1/p' |
			tr '\n' ' ' | sed 's/ $//')
		cov="$reached reached"
		[ -z "$unreached" ] || cov="$cov, UNREACHED: $unreached"
		[ $ok = 1 ] || [ -n "$unreached" ] ||
			cov="$cov, $(result "$out/$c.cover.log")"
	fi
	echo "fpga-formal: $c: BMC $1 steps: $bmc; induction $2 steps: $ind; covers $3 steps: $cov ($(($(date +%s) - start)) s)"
	[ $ok = 1 ] || failed="$failed $c"
done
if [ -n "$failed" ]; then
	echo "FAIL:$failed"
	exit 1
fi
echo PASS
