#!/bin/sh
# The test runner behind `make check`: every unit test binary in
# $BUILD/tests, every tests/cli/*.sh script, and the fuzz smoke runs, each
# with a time limit. A test exits 0 to pass, 77 to skip (saying why), and
# anything else to fail. Ends with one line: "check: N passed, N failed,
# N skipped".
set -u
BUILD=${BUILD:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
export BACH="$TOP/$BUILD/bin/bach"
export BUILD TOP
export TESTDATA="${TESTDATA:-$TOP/../shared/testdata}"
LIMIT=${TEST_TIMEOUT:-300}
if [ -n "${BACH_SANITIZED:-}" ]; then
	# libsigrok's own leaks (tests/lsan.supp says which and why)
	LSAN_OPTIONS="suppressions=$TOP/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
	export LSAN_OPTIONS
fi
pass=0 fail=0 skip=0 failed=""
log=$(mktemp -d "${TMPDIR:-/tmp}/bach-check.XXXXXX")

run_one() {
	name=$1
	shift
	out="$log/$(echo "$name" | tr '/ ' '__').log"
	start=$(date +%s)
	timeout "$LIMIT" "$@" >"$out" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	case $rc in
	0) pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP  $name: $(tail -n 1 "$out")" ;;
	*)
		fail=$((fail + 1)); failed="$failed $name"
		echo "FAIL  $name (exit $rc, ${secs}s)"
		sed 's/^/      | /' "$out" | tail -n 40
		;;
	esac
}

for t in "$TOP/$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in "$TOP"/tests/cli/*.sh; do
	[ -f "$t" ] || continue
	run_one "cli/$(basename "$t" .sh)" sh "$t"
done
if [ -z "${BACH_SANITIZED:-}" ] && [ -x "$TOP/tests/fuzz/run.sh" ]; then
	run_one "fuzz/smoke" "$TOP/tests/fuzz/run.sh" smoke
fi

rm -rf "$log"
[ -n "$failed" ] && echo "failed:$failed"
echo "check: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
