# The board's pin map against the package: every Pentium bus input in bank
# 3 with the CPU's CLK (one VCCIO for the bus), the hold output and LED in
# bank 2, the FT2232H in bank 1, each ball's bank as Project IceStorm's
# package database (icebox.py) places it. HITM# was on N5, a bank-2 ball,
# while docs/fpga.md listed it in bank 3.
. "$TOP/tests/lib.sh"

command -v python3 > /dev/null || skip "python3 is not installed"
B=$TOP/fpga/boards/ice40hx8k
python3 "$B/check_banks.py" "$B/bach.pcf" > "$T/banks" 2>&1
status=$?
[ $status -eq 77 ] && skip "$(cat "$T/banks")"
[ $status -eq 0 ] || fail "bach.pcf: $(grep -v ' bank [0-9]$' "$T/banks")"
grep -q '^bus_hitm_n R1 bank 3$' "$T/banks" || fail "HITM#: $(grep hitm "$T/banks")"
# docs/fpga.md's table says the same balls
grep -q '^| 3 (left) | P1, P2, R1 | AHOLD, EADS#, HITM# |$' "$TOP/docs/fpga.md" ||
	fail "docs/fpga.md: the AHOLD, EADS#, HITM# row"
# a ball of bank 2 among the bus inputs fails, naming it
sed 's/^set_io bus_hitm_n R1/set_io bus_hitm_n N5/' "$B/bach.pcf" > "$T/bad.pcf"
python3 "$B/check_banks.py" "$T/bad.pcf" > "$T/bad" 2>&1 && fail "N5 passed"
grep -q 'bad.pcf:[0-9]*: bus_hitm_n on N5 is in bank 2, not 3' "$T/bad" ||
	fail "no message for N5: $(cat "$T/bad")"
echo ok
