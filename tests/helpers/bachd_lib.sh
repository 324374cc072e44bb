# Helpers for the bachd_*.sh tests (sourced after tests/lib.sh): real
# bachd processes, their notify socket, control socket and capture
# directories. Every process a test starts is recorded and killed (by its
# pid) on the way out; every mount is unmounted.
BACHD="$(dirname "$BACH")/bachd"
# capture ids sort by time in the C locale
LC_ALL=C
export LC_ALL
[ -x "$BACHD" ] || fail "no bachd next to $BACH"
# the segments bachd writes by default (compressor = zstd, docs/bachd.md):
# seg-NNNNNN.$SEG, its seek table its index (no .gzi); tests of what is
# gzip's own (.gzi, bgzip, damaged members) set compressor = record
SEG=byu.zst
PIDS=""
MOUNTS=""

cleanup() {
	for p in $PIDS; do
		kill -KILL "$p" 2>/dev/null || true
	done
	for m in $MOUNTS; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# helper NAME: tests/helpers/NAME.c as make tests built it (the project's
# flags, sanitized in the sanitized pass), as $T/NAME
helper() {
	case ${BUILD:-build} in /*) hb=$BUILD ;; *) hb=$TOP/${BUILD:-build} ;; esac
	[ -x "$hb/tests/helpers/$1" ] ||
		fail "$hb/tests/helpers/$1 is not built: make tests"
	ln -sf "$hb/tests/helpers/$1" "$T/$1"
}

# wait_until SECONDS WHAT CMD...: poll CMD every 50 ms until it succeeds
wait_until() {
	wu_n=$(($1 * 20))
	wu_what=$2
	shift 2
	while ! "$@" > /dev/null 2>&1; do
		wu_n=$((wu_n - 1))
		[ "$wu_n" -gt 0 ] || fail "waited in vain for $wu_what"
		sleep 0.05
	done
}

# bg CMD...: start CMD in the background; its pid in $BGPID
bg() {
	"$@" &
	BGPID=$!
	PIDS="$PIDS $BGPID"
}

# reap PID: wait for it; its exit status in $RC
reap() {
	set +e
	wait "$1"
	RC=$?
	set -e
	np=""
	for p in $PIDS; do
		[ "$p" = "$1" ] || np="$np $p"
	done
	PIDS=$np
}

# reap_within SECONDS PID: the same, but fail when PID is still alive after
# SECONDS (it must end by itself: no hang, no retry loop)
reap_within() {
	wait_until "$1" "pid $2 to exit" not_alive "$2"
	reap "$2"
}
not_alive() { ! kill -0 "$1" 2>/dev/null; }
alive() { kill -0 "$1" 2>/dev/null; }

# the newest capture directory in OUT (capture ids sort by time)
capdir() { ls -d "$1"/2*Z* 2>/dev/null | tail -n 1; }
# crashed_capture OUT SEED: a capture of the fake board (workload SEED)
# in the directory OUT, killed (SIGKILL) while its first segment is
# written: its directory, with seg-000001.$SEG.part, in $CRASHED (more
# bachd options after SEED: --set compressor=record for a .byu.gz.part)
crashed_capture() {
	cc_out=$1 cc_seed=$2
	shift 2
	bg "$BACHD" --driver fake --option "seed=$cc_seed" --option rate=200000 \
		--set ring_mb=4 --output "$cc_out" "$@" 2> "$cc_out.log"
	wait_until 20 "a segment with data" sh -c "[ -s \"\$(ls '$cc_out'/2*Z*/seg-000001.byu*.part 2>/dev/null)\" ]"
	sleep 0.3
	kill -KILL "$BGPID"
	reap "$BGPID"
	CRASHED=$(capdir "$cc_out")
}
# the number of capture directories in OUT
ncaps() { ls -d "$1"/2*Z* 2>/dev/null | wc -l; }

# the last "ended" event's numeric member KEY; ended_state DIR
ended() { grep '"event":"ended"' "$1"/manifest.jsonl | tail -n 1 | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }
ended_state() { grep '"event":"ended"' "$1"/manifest.jsonl | tail -n 1 | sed -n 's/.*"state":"\([a-z_]*\)".*/\1/p'; }

# jnum KEY FILE: the first numeric member KEY in FILE (a status reply)
jnum() { sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p" "$2" | head -n 1; }

# sum of member KEY over the manifest events EVENT of DIR
evsum() {
	grep "\"event\":\"$2\"" "$1/manifest.jsonl" |
		sed -n "s/.*\"$3\":\([0-9]*\).*/\1/p" | awk '{ s += $1 } END { print s + 0 }'
}
evcount() { grep -c "\"event\":\"$2\"" "$1/manifest.jsonl" || true; }

# records DIR FILE: the raw records of DIR's segments, in order, into FILE
records() {
	: > "$2"
	for f in "$1"/seg-*; do
		[ -e "$f" ] || continue # no segment at all: no records
		case $f in
		*.gzi) ;; # a segment's index (docs/formats.md section 3.1)
		*.part) fail "$f: unfinished segment left" ;;
		*.gz) zcat "$f" >> "$2" || fail "$f: zcat failed" ;;
		*.zst) zstd -dcq "$f" >> "$2" || fail "$f: zstd -d failed" ;;
		*) cat "$f" >> "$2" ;;
		esac
	done
}

# nrecs FILE: whole records in a raw file
nrecs() { echo $(($(wc -c < "$1") / 6)); }

# is_gen_prefix FILE SEED: FILE (raw) is the first records of bach gen SEED
is_gen_prefix() {
	n=$(nrecs "$1")
	[ $((n * 6)) -eq "$(wc -c < "$1")" ] || fail "$1: not whole records"
	"$BACH" gen --records "$n" --seed "$2" -o "$T/prefix.byu" ||
		fail "bach gen --records $n failed"
	cmp -s "$1" "$T/prefix.byu"
}

# check_closed DIR: no .part, every segment has its segment event with the
# file's size and CRC, and the capture verifies
check_closed() {
	ls "$1" | grep -q '\.part$' && fail "$1: .part left: $(ls "$1")"
	[ -n "$(ls "$1"/seg-* 2>/dev/null)" ] || fail "$1: no segments"
	# a segment with no whole record may have been removed: it says so
	for name in $(grep '"event":"segment".*"removed":true' "$1/manifest.jsonl" |
		sed 's/.*"name":"\([^"]*\)".*/\1/'); do
		[ -e "$1/$name" ] && fail "$1/$name: the manifest says removed"
	done
	grep '"event":"segment"' "$1/manifest.jsonl" | grep -v '"removed":true' |
		sed 's/.*"name":"\([^"]*\)".*"bytes":\([0-9]*\).*"crc32":"\([0-9a-f]*\)".*/\1 \2 \3/' \
			> "$T/segev"
	nsegs=$(ls "$1"/seg-* | grep -vc '\.gzi$')
	[ "$(wc -l < "$T/segev")" -eq "$nsegs" ] ||
		fail "$1: $(wc -l < "$T/segev") segment events for $nsegs segments"
	while read -r name bytes crc; do
		[ -f "$1/$name" ] || fail "$1: manifest names $name, not there"
		[ "$(wc -c < "$1/$name")" -eq "$bytes" ] ||
			fail "$1/$name: $(wc -c < "$1/$name") bytes, manifest says $bytes"
		[ "$("$T/crc32" "$1/$name" | cut -d' ' -f1)" = "$crc" ] ||
			fail "$1/$name: CRC differs from the manifest's $crc"
	done < "$T/segev"
	"$BACH" verify -q "$1" > "$T/verify.out" 2>&1 ||
		fail "$1 does not verify: $(cat "$T/verify.out")"
}

# later MESSAGE: a failed check that need not stop the rest of the script;
# finish reports them all (and fails) or prints ok
later() {
	echo "FAIL: $*" >&2
	echo "$*" >> "$T/later"
}
finish() {
	if [ -s "$T/later" ]; then
		echo "$(wc -l < "$T/later") check(s) failed (above)" >&2
		exit 1
	fi
	echo ok
}

# json_lines FILE: every line of FILE is one JSON object in UTF-8 (strictly
# parsed with python3 where there is one; else only the UTF-8 is checked)
json_lines() {
	if command -v python3 > /dev/null 2>&1; then
		python3 -c '
import json, sys
for i, l in enumerate(open(sys.argv[1], "rb"), 1):
    try:
        o = json.loads(l.decode("utf-8"))
        assert isinstance(o, dict)
    except Exception as e:
        sys.exit("%s:%d: %s" % (sys.argv[1], i, e))' "$1"
	elif command -v iconv > /dev/null 2>&1; then
		iconv -f UTF-8 -t UTF-8 "$1" > /dev/null
	fi
}
