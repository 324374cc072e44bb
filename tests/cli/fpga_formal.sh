# The gateware's proofs: make fpga-formal (yosys-smtbmc and z3), each core's
# properties bounded from reset and by k-induction, then its covers (each
# must be reached); PASS last.
. "$TOP/tests/lib.sh"

if [ -n "${BACH_SANITIZED:-}" ]; then
	skip "the gateware proofs run in the plain pass only"
fi
for tool in yosys yosys-smtbmc z3; do
	command -v $tool > /dev/null ||
		skip "$tool is not installed (scripts/deps.sh installs it)"
done

make -C "$TOP" --no-print-directory NO_DEPS=1 BUILD="$BUILD" fpga-formal \
	> "$T/formal.log" 2>&1
status=$?
cat "$T/formal.log"
[ $status -eq 0 ] || fail "make fpga-formal exited $status"
[ "$(tail -n 1 "$T/formal.log")" = PASS ] ||
	fail "make fpga-formal did not end in PASS"
