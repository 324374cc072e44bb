# Helpers for tests/cli/*.sh (sourced, not run). $BACH is the binary under
# test; every test works in its own temporary directory, removed on exit.
set -eu
: "${BACH:?BACH must name the bach binary}"
T=$(mktemp -d "${TMPDIR:-/tmp}/bach-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
# a bachd with no control_socket listens at bachd's default, and bach ctl
# looks there: the test's own directory, never the host's /run/bach
BACH_SOCKET="$T/bachd.sock"
export BACH_SOCKET
GOLDEN="$TOP/tests/golden"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# expect_status CODE CMD...: run CMD, require exit status CODE; its stdout
# and stderr are left in $T/out and $T/err.
expect_status() {
	want=$1
	shift
	set +e
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	set -e
	[ "$got" -eq "$want" ] ||
		fail "'$*' exited $got, expected $want; stderr: $(cat "$T/err")"
}

# expect_err TEXT: stderr of the last expect_status contains TEXT
expect_err() {
	grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1': $(cat "$T/err")"
}

expect_out() {
	grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1': $(head -c 2000 "$T/out")"
}

# same FILE1 FILE2: byte-identical
same() {
	cmp -s "$1" "$2" || fail "$1 and $2 differ: $(cmp "$1" "$2" 2>&1)"
}

skip() {
	echo "$*"
	exit 77
}

# Blocked gzip (docs/formats.md 3): the first member's size (BSIZE + 1,
# from its BC subfield, the first one bach writes) and where its deflate
# data starts (12 + XLEN).
member1_size() {
	echo $(($(od -An -t u2 -j16 -N2 "$1") + 1))
}
member1_data() {
	echo $((12 + $(od -An -t u2 -j10 -N2 "$1")))
}

# cut_member FILE OUT: FILE cut 10 bytes before its first member's end,
# so a reader finds "truncated gzip member at byte offset 0"
cut_member() {
	head -c $(($(member1_size "$1") - 10)) "$1" > "$2"
}

# board_model_clocks N F D: the clocks the fake board's model gives
# (drivers/board_model.c, docs/board-protocol.md section 3), one line a
# record of the trace: record k sampled (lost ones counted) is at bus clock
# 2k; frames of F records, every Dth lost on the link: a gap marker at the
# clock of the record before it ("gap CLOCK"), then the next frame's
# records ("rec CLOCK").
board_model_clocks() {
	awk -v n="$1" -v f="$2" -v d="$3" 'BEGIN {
		last = 0; lost = 0
		for (fr = 0; fr * f < n; fr++) {
			if ((fr + 1) % d == 0) { lost = 1; continue }
			if (lost) { print "gap " last; lost = 0 }
			for (k = fr * f; k < fr * f + f && k < n; k++) {
				print "rec " 2 * k; last = 2 * k
			}
		}
	}'
}
