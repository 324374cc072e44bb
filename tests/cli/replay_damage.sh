# Replay of a damaged board stream dump never reports a clean capture: a
# stream cut inside a frame, or bytes that are not frames, end the capture
# with a source error (exit 4) naming the file and the byte; what came before is kept. A FIFO or a device as the
# replay path is refused at once (it hung on open, deaf to SIGTERM).
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

mkdir "$T/dump"
$BACHD --driver fake --option records=100000 --option seed=9 \
	--set raw_dump=yes --output "$T/dump" 2> "$T/log" || fail "dump: $(cat "$T/log")"
S=$(capdir "$T/dump")/board-stream.bin
size=$(wc -c < "$S")

# replay OUT FILE: bachd's exit status in $rc, its log in $T/log
replay() {
	rm -rf "$T/$1" && mkdir "$T/$1"
	set +e
	timeout 30 "$BACHD" --driver replay --option path="$2" --output "$T/$1" 2> "$T/log"
	rc=$?
	set -e
}

# the whole dump: clean
replay whole "$S"
[ $rc -eq 0 ] || fail "the whole dump exited $rc: $(cat "$T/log")"
grep -q "LAST frame" "$T/log" && fail "a whole dump warned: $(cat "$T/log")"

# cut inside a frame: exit 4, the byte where the last whole frame ends,
# and every record before it kept
head -c $((size / 2)) "$S" > "$T/half.bin"
replay half "$T/half.bin"
[ $rc -eq 4 ] || fail "a stream cut in half exited $rc: $(cat "$T/log")"
at=$(sed -n 's/.*half.bin: byte \([0-9]*\) to the end (\([0-9]*\) bytes) is not a whole frame.*/\1 \2/p' "$T/log")
[ -n "$at" ] || fail "no offset named: $(cat "$T/log")"
set -- $at
[ $(($1 + $2)) -eq $((size / 2)) ] || fail "byte $1 + $2 bytes is not the file's $((size / 2))"
C=$(capdir "$T/half")
[ "$(ended_state "$C")" = source_error ] || fail "state $(ended_state "$C")"
w=$(ended "$C" written)
[ "$w" -gt 0 ] || fail "nothing kept before the cut"
$BACH verify "$C" > /dev/null || fail "what was kept does not verify"

# cut exactly where that frame ends: whole frames only, so the records
# all count, but the board's LAST frame is missing: a warning
head -c "$1" "$S" > "$T/cut.bin"
replay cut "$T/cut.bin"
[ $rc -eq 0 ] || fail "a stream cut between frames exited $rc: $(cat "$T/log")"
grep -q "cut.bin: the stream ends without the board's LAST frame" "$T/log" ||
	fail "no warning for a stream cut between frames: $(cat "$T/log")"
[ "$(ended "$(capdir "$T/cut")" written)" -eq "$w" ] || fail "a different number of records from the same frames"

# 2 MB of random bytes after a valid magic: no frame at all
{ printf 'BACH'; head -c 2000000 /dev/urandom; } > "$T/rand.bin"
replay rand "$T/rand.bin"
[ $rc -eq 4 ] || fail "random bytes exited $rc: $(cat "$T/log")"
grep -q "rand.bin: byte 0 to the end (2000004 bytes) is not a whole frame" "$T/log" ||
	fail "random bytes: $(cat "$T/log")"

# a frame damaged after the last data frame, with nothing after it: its
# records cannot be counted
{ head -c "$1" "$S"; printf 'BACH'; head -c 100 /dev/zero; } > "$T/tail.bin"
replay tail "$T/tail.bin"
[ $rc -eq 4 ] || fail "a damaged tail exited $rc: $(cat "$T/log")"
grep -q "tail.bin: byte $1 to the end (104 bytes) is not a whole frame" "$T/log" ||
	fail "a damaged tail: $(cat "$T/log")"

# a FIFO with no writer, and a device: refused at once, naming the path
mkfifo "$T/fifo"
for f in "$T/fifo" /dev/zero; do
	replay dev "$f"
	[ $rc -eq 2 ] || fail "$f exited $rc: $(cat "$T/log")"
	grep -q "$f: not a regular file or a capture directory" "$T/log" || fail "$f: $(cat "$T/log")"
	[ "$(ncaps "$T/dev")" -eq 0 ] || fail "$f left a capture behind"
done
echo ok
