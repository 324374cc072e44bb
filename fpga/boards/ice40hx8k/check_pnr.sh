#!/bin/sh
# The checks of make fpga-synth on nextpnr-ice40's report (fpga/fpga.mk,
# docs/fpga.md section 7): print the resources and the figures, then fail
# (exit 1, saying which) when
#   - a clock misses its target (nextpnr's own PASS/FAIL, clocks.py);
#   - the FT2232H's TXE#/RXF# take longer than FT_NS to their registers;
#   - a bus pin reaches a bus-clock register but through its I/O cell's
#     register (any "<async> -> posedge bus_clk" path).
# nextpnr reports each figure after placement and again after routing: the
# last ones count.
# usage: check_pnr.sh NEXTPNR_LOG FT_NS
set -u
log=$1 ft_ns=$2
[ -r "$log" ] || { echo "$log: no nextpnr report" >&2; exit 2; }
fail=0
for r in ICESTORM_LC ICESTORM_RAM SB_IO; do grep -m 1 "$r:" "$log"; done
grep 'Max delay .*ft_clk' "$log" | grep async | tail -n 2
grep 'Max frequency for clock' "$log" | tail -n 2
if grep 'Max frequency for clock' "$log" | tail -n 2 | grep -q FAIL; then
	echo "$log: a clock misses its target"
	fail=1
fi
d=$(sed -n 's/.*Max delay <async> *-> posedge ft_clk[^:]*: *\([0-9.]*\) ns.*/\1/p' \
	"$log" | tail -n 1)
echo "FT2232H TXE#/RXF# to their registers: ${d:-?} ns, budget $ft_ns ns"
if ! awk -v d="$d" -v m="$ft_ns" 'BEGIN { exit !(d != "" && d + 0 <= m + 0) }'; then
	echo "$log: the FT2232H inputs miss their budget of $ft_ns ns"
	fail=1
fi
if grep 'Max delay <async> *-> posedge bus_clk' "$log"; then
	echo "$log: a bus pin reaches a bus-clock register outside its I/O cell"
	fail=1
fi
exit $fail
