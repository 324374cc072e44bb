#!/bin/sh
# The test runner behind `make check`: every unit test binary in
# $BUILD/tests, every tests/cli/*.sh script, and the fuzz smoke runs, each
# with a time limit. A test exits 0 to pass, 77 to skip (saying why), and
# anything else to fail. Ends with one line: "check: N passed, N failed,
# N skipped".
#
# TEST_JOBS tests run at once (default: the CPUs, at most 2): each test
# is alone in its temporary directory, with its own control socket
# (tests/lib.sh), so two never meet; but the tests that run make on
# $BUILD (an install into a staging directory can rebuild its objects)
# run first, one at a time, while nothing else runs. A line is printed as
# each test ends; the logs of the failed ones follow at the end.
set -u
BUILD=${BUILD:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
export BACH="$TOP/$BUILD/bin/bach"
export BUILD TOP
export TESTDATA="${TESTDATA:-$TOP/../shared/testdata}"
LIMIT=${TEST_TIMEOUT:-300}
if [ -n "${BACH_SANITIZED:-}" ]; then
	LSAN_OPTIONS="suppressions=$TOP/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
	export LSAN_OPTIONS
fi

# run.sh --one LOGDIR NAME CMD...: one test, its output in LOGDIR/N.log
# and "RC SECS" in LOGDIR/N.rc (N: NAME with / as _)
if [ "${1:-}" = --one ]; then
	log=$2 name=$3
	shift 3
	f="$log/$(echo "$name" | tr '/ ' '__')"
	start=$(date +%s)
	timeout "$LIMIT" "$@" > "$f.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	echo "$rc $secs" > "$f.rc"
	case $rc in
	0) echo "PASS  $name (${secs}s)" ;;
	77) echo "SKIP  $name: $(tail -n 1 "$f.log")" ;;
	*) echo "FAIL  $name (exit $rc, ${secs}s)" ;;
	esac
	exit 0
fi

jobs=${TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2> /dev/null || echo 1)}
[ "$jobs" -gt 2 ] && [ -z "${TEST_JOBS:-}" ] && jobs=2
log=$(mktemp -d "${TMPDIR:-/tmp}/bach-check.XXXXXX")
list="$log/list"
alone="build libbach man python systemd" # they run make on $BUILD

# the tests, one a line: NAME CMD... (paths quoted for xargs; the longest
# first, so that the jobs end together: fuzz smoke, the gateware's
# simulation and proofs, the soak)
{
	for t in $alone; do
		[ -f "$TOP/tests/cli/$t.sh" ] && echo "cli/$t sh \"$TOP/tests/cli/$t.sh\""
	done
} > "$log/alone"
{
	if [ -z "${BACH_SANITIZED:-}" ] && [ -x "$TOP/tests/fuzz/run.sh" ]; then
		echo "fuzz/smoke \"$TOP/tests/fuzz/run.sh\" smoke"
	fi
	for t in fpga fpga_formal soak; do
		[ -f "$TOP/tests/cli/$t.sh" ] && echo "cli/$t sh \"$TOP/tests/cli/$t.sh\""
	done
	for t in "$TOP/$BUILD"/tests/test_*; do
		[ -x "$t" ] && echo "unit/$(basename "$t") \"$t\""
	done
	for t in "$TOP"/tests/cli/*.sh; do
		n=$(basename "$t" .sh)
		case " fpga fpga_formal soak $alone " in *" $n "*) continue ;; esac
		[ -f "$t" ] && echo "cli/$n sh \"$t\""
	done
} > "$log/together"

xargs -P 1 -L 1 sh "$TOP/tests/run.sh" --one "$log" < "$log/alone"
xargs -P "$jobs" -L 1 sh "$TOP/tests/run.sh" --one "$log" < "$log/together"
cat "$log/alone" "$log/together" > "$list"

pass=0 fail=0 skip=0 failed=""
while read -r name _; do
	f="$log/$(echo "$name" | tr '/ ' '__')"
	rc=$(cut -d' ' -f1 "$f.rc" 2> /dev/null || echo 1)
	case $rc in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)) ;;
	*)
		fail=$((fail + 1))
		failed="$failed $name"
		echo "FAIL  $name (exit $rc):"
		sed 's/^/      | /' "$f.log" 2> /dev/null | tail -n 40
		;;
	esac
done < "$list"

rm -rf "$log"
[ -n "$failed" ] && echo "failed:$failed"
echo "check: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
