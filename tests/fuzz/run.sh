#!/bin/sh
# Build and run the libFuzzer targets tests/fuzz/fuzz_*.c (see README.md).
#
#   run.sh smoke [TARGET...]  every regression and seed input once, then
#                             SMOKE_SECONDS (10) of fuzzing per target from
#                             -seed=1; `make check` runs this
#   run.sh long [TARGET...]   FUZZ_SECONDS (60) of fuzzing per target, the
#                             corpus kept in build/fuzz/corpus/; `make fuzz`
#   run.sh build              only build the targets into build/fuzz/
#
# TARGET is a name like fuzz_reader_raw or reader_raw. Targets run
# FUZZ_JOBS (online CPUs) at a time. Exits 0 when nothing crashed, 1 when
# something did (the input is saved under build/fuzz/artifacts/TARGET/),
# 2 on a build or usage error, and 77 (skip) without a clang that links
# -fsanitize=fuzzer or when another run.sh keeps build/fuzz/.lock for
# longer than FUZZ_LOCK_WAIT (150) seconds.
set -u
cd "$(dirname "$0")/../.." || exit 2
TOP=$(pwd)

# absolute, so the paths in reports work from any directory
OUT=$TOP/build/fuzz
FUZZ_CC=${FUZZ_CC:-clang}
FUZZ_CFLAGS="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
-fno-omit-frame-pointer -g -O1 -Iinclude -I. -D_GNU_SOURCE -std=gnu11 \
-Wall -Wextra -pthread"
FUZZ_LIBS="-lz -ldeflate -lzstd -ljansson -pthread"
# The library is compiled here from lib/*.c and lib/*/*.c into an archive, never taken
# from build/libbach.a (gcc-built, maybe with other sanitizers); a target
# links only the members it needs. A source clang cannot compile is left
# out with a warning, so a file someone is halfway through writing breaks
# only the targets that need it.
LIB="$OUT/libbach-fuzz.a"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Longest input libFuzzer makes for a target: the compressed-file targets
# need whole blocks; line parsers do not.
max_len() {
	case $1 in
	fuzz_reader_gzip | fuzz_reader_zstd | fuzz_reader_multi | fuzz_bgzf_roundtrip | fuzz_reader_seek | fuzz_timing) echo 65536 ;;
	fuzz_manifest) echo 16384 ;; # a started line alone is 1 to 2 KiB
	*) echo 4096 ;;
	esac
}

njobs() {
	echo "${FUZZ_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}"
}

all_targets() {
	for f in tests/fuzz/fuzz_*.c; do
		[ -f "$f" ] && basename "$f" .c
	done
}

# newer FILE DEP...: FILE is missing or older than a DEP
newer() {
	f=$1
	shift
	[ -e "$f" ] || return 0
	for d in "$@"; do
		# shellcheck disable=SC3013 # dash and bash both have -nt
		[ "$d" -nt "$f" ] && return 0
	done
	return 1
}

# wait for every pid in $pids; false when one failed
wait_all() {
	ok=0
	for p in $pids; do
		wait "$p" || ok=1
	done
	pids=""
	return $ok
}

build() {
	mkdir -p "$OUT/obj" "$OUT/logs"
	hdrs=$(echo include/bach/*.h lib/*.h lib/*/*.h)
	pids=""
	for src in lib/*.c lib/*/*.c; do
		obj="$OUT/obj/$(basename "$src" .c).o"
		# shellcheck disable=SC2086
		if newer "$obj" "$src" $hdrs tests/fuzz/run.sh; then
			echo "   CC    ${obj#"$TOP"/}"
			# shellcheck disable=SC2086
			(rm -f "$obj"
			 $FUZZ_CC $FUZZ_CFLAGS -c -o "$obj" "$src" ||
				echo "fuzz: warning: $src does not compile; left out") &
			pids="$pids $!"
		fi
	done
	wait_all
	objs=""
	for src in lib/*.c lib/*/*.c; do
		obj="$OUT/obj/$(basename "$src" .c).o"
		[ -f "$obj" ] && objs="$objs $obj"
	done
	# rebuilt every time (cheap), so a deleted source leaves no member
	rm -f "$LIB.tmp"
	# shellcheck disable=SC2086
	ar rcs "$LIB.tmp" $objs || return 2
	if cmp -s "$LIB.tmp" "$LIB"; then
		rm -f "$LIB.tmp"
	else
		mv -f "$LIB.tmp" "$LIB"
	fi
	for t in $targets; do
		bin="$OUT/$t"
		# shellcheck disable=SC2086
		if newer "$bin" "tests/fuzz/$t.c" "$LIB" $hdrs; then
			echo "   LINK  ${bin#"$TOP"/}"
			# shellcheck disable=SC2086
			$FUZZ_CC $FUZZ_CFLAGS -o "$bin" "tests/fuzz/$t.c" "$LIB" \
				$FUZZ_LIBS &
			pids="$pids $!"
		fi
	done
	wait_all || { echo "fuzz: building the targets failed" >&2; return 2; }
}

# The crash input a libFuzzer log names, if any.
crash_input() {
	sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$1" | tail -n 1
}

# Last "#N ... cov: C" figures of a log, as "N runs, cov C".
figures() {
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$1" | tail -n 1)
	cov=$(sed -n 's/^#[0-9]*.*cov: \([0-9]*\).*/\1/p' "$1" | tail -n 1)
	echo "${runs:-0} runs, cov ${cov:-?}"
}

# One target, run by xargs in a child of this script; writes its report to
# $OUT/logs/TARGET.report and exits non-zero when something crashed.
one() {
	mode=$1
	t=$2
	bin="$OUT/$t"
	log="$OUT/logs/$t.log"
	rep="$OUT/logs/$t.report"
	art="$OUT/artifacts/$t/"
	scratch="$OUT/corpus/$t"
	len=$(max_len "$t")
	start=$(date +%s)
	: >"$log"
	mkdir -p "$art"
	common="-timeout=25 -rss_limit_mb=2560 -error_exitcode=1 \
-timeout_exitcode=1 -artifact_prefix=$art"

	# every regression and seed input once, by name
	inputs=""
	for d in "$TOP/tests/fuzz/regress/$t" "$TOP/tests/fuzz/corpus/$t"; do
		for f in "$d"/*; do
			[ -f "$f" ] || continue
			case $(basename "$f") in README*) continue ;; esac
			inputs="$inputs $f"
		done
	done
	ninputs=$(echo "$inputs" | wc -w)
	if [ -n "$inputs" ]; then
		# shellcheck disable=SC2086
		if ! "$bin" $common $inputs >>"$log" 2>&1; then
			bad=$(sed -n 's/^Running: //p' "$log" | tail -n 1)
			{
				tail -n 40 "$log"
				echo "FAIL  $t: crashes on the saved input $bad"
				echo "      reproduce: $bin $bad"
			} >"$rep"
			return 1
		fi
	fi

	if [ "$mode" = smoke ]; then
		secs=${SMOKE_SECONDS:-10}
		rm -rf "$scratch"
		extra="-seed=1"
	else
		secs=${FUZZ_SECONDS:-60}
		extra=""
	fi
	mkdir -p "$scratch"
	seeds=""
	for d in "$TOP/tests/fuzz/corpus/$t" "$TOP/tests/fuzz/regress/$t"; do
		[ -d "$d" ] && seeds="$seeds $d"
	done
	# new inputs go to the scratch corpus only, never the tracked seeds
	# shellcheck disable=SC2086
	timeout $((secs * 2 + 120)) "$bin" $common $extra \
		-max_total_time="$secs" -max_len="$len" -print_final_stats=1 \
		"$scratch" $seeds >>"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	if [ $rc -ne 0 ]; then
		input=$(crash_input "$log")
		{
			tail -n 40 "$log"
			echo "FAIL  $t: exit $rc after ${took}s; full log $log"
			if [ -n "$input" ]; then
				echo "      crash input saved to $input"
				echo "      reproduce: $bin $input"
			fi
		} >"$rep"
		return 1
	fi
	echo "PASS  $t: $ninputs saved inputs, $(figures "$log") in ${took}s" >"$rep"
	return 0
}

mode=${1:-}
[ $# -gt 0 ] && shift
case $mode in
_one)
	one "$@"
	exit $?
	;;
smoke | long | build) ;;
*)
	echo "usage: $0 smoke|long|build [TARGET...]" >&2
	exit 2
	;;
esac

if ! command -v "$FUZZ_CC" >/dev/null 2>&1; then
	echo "fuzz: $FUZZ_CC not installed: libFuzzer targets not built (skip)"
	exit 77
fi
mkdir -p "$OUT"
# one run at a time in build/fuzz (two `make check`s in one tree would
# relink the targets and wipe the scratch corpora under each other)
exec 9>"$OUT/.lock"
if command -v flock >/dev/null 2>&1 &&
	! flock -w "${FUZZ_LOCK_WAIT:-150}" 9; then
	echo "fuzz: another run.sh holds $OUT/.lock (skip)"
	exit 77
fi
probe="$OUT/probe"
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n)
{ return (int)(d && n) * 0; }' |
	$FUZZ_CC -fsanitize=fuzzer,address,undefined -x c -o "$probe" - \
		>/dev/null 2>&1; then
	echo "fuzz: $FUZZ_CC cannot link -fsanitize=fuzzer,address,undefined (skip)"
	exit 77
fi
rm -f "$probe"

targets=""
if [ $# -gt 0 ]; then
	for a in "$@"; do
		t=fuzz_${a#fuzz_}
		if [ ! -f "tests/fuzz/$t.c" ]; then
			echo "fuzz: no target $a" >&2
			exit 2
		fi
		targets="$targets $t"
	done
else
	targets=$(all_targets)
fi

build || exit 2
[ "$mode" = build ] && exit 0

start=$(date +%s)
rm -f "$OUT"/logs/*.report
# shellcheck disable=SC2086
printf '%s\n' $targets |
	xargs -P "$(njobs)" -I{} sh tests/fuzz/run.sh _one "$mode" {}
failed=0
n=0
for t in $targets; do
	n=$((n + 1))
	if [ -f "$OUT/logs/$t.report" ]; then
		cat "$OUT/logs/$t.report"
		grep -q '^PASS' "$OUT/logs/$t.report" || failed=$((failed + 1))
	else
		echo "FAIL  $t: no report (killed?); log $OUT/logs/$t.log"
		failed=$((failed + 1))
	fi
done
echo "fuzz $mode: $n targets, $failed failed, $(($(date +%s) - start))s"
[ $failed -eq 0 ] || exit 1
exit 0
