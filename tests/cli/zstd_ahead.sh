#!/bin/sh
# The .byu.zst reader's read-ahead (lib/io/reader_zst.c, docs/formats.md
# section 10): on two CPUs a helper thread decompresses the frames ahead
# of those handed out; on one (taskset -c 0) no thread is started and the
# frames are read as before. Both must give the same: bach stat, dump and
# verify of files of many frames equal between the two and to the records
# zstd -d makes (read as .byu from a pipe); a damaged frame (its data, a
# block header, the file cut inside it) the same records before it, the
# same message naming file and byte offset and the same exit status, and
# verify the same resync past it; --range starting and ending on both
# sides of frame boundaries. strace sees the thread started on two CPUs
# and none on one.
. "$TOP/tests/lib.sh"
command -v zstd > /dev/null || skip "zstd (Debian: zstd) is not installed: no reference reader"
command -v python3 > /dev/null || skip "python3 is not installed"
command -v taskset > /dev/null || skip "taskset (Debian: util-linux) is not installed"
taskset -c 0,1 true 2> /dev/null || skip "this machine has one CPU: no second thread to test"

ONE="taskset -c 0"
TWO="taskset -c 0,1"

# run NAME CMD...: CMD's stdout, stderr and exit status in $T/NAME.*
run() {
	rn=$1
	shift
	set +e
	"$@" > "$T/$rn.out" 2> "$T/$rn.err"
	echo $? > "$T/$rn.rc"
	set -e
}

# both NAME ARGS...: bach ARGS on one CPU and on two, the same stdout,
# stderr and exit status; the status is left in $rc
both() {
	n=$1
	shift
	run "$n.1" $ONE $BACH "$@"
	run "$n.2" $TWO $BACH "$@"
	for x in out err rc; do
		cmp -s "$T/$n.1.$x" "$T/$n.2.$x" ||
			fail "bach $*: $x differs on one CPU and two: $(diff "$T/$n.1.$x" "$T/$n.2.$x" | head -c 1500)"
	done
	rc=$(cat "$T/$n.1.rc")
}

# 1.2 M records: 7 frames of 1 MiB, 1 of 8 MiB (the default), 111 of 64 KiB
$BACH gen --records 1200000 --seed 7 -o "$T/t.byu"
$BACH convert -q --to byu.zst --zstd-frame-kb 1024 "$T/t.byu" "$T/m.byu.zst"
$BACH convert -q --to byu.zst "$T/t.byu" "$T/d.byu.zst"
$BACH convert -q --to byu.zst --zstd-frame-kb 64 "$T/t.byu" "$T/s.byu.zst"
$BACH gen --records 3000000 --seed 8 -o "$T/big.byu"
$BACH convert -q --to byu.zst "$T/big.byu" "$T/big.byu.zst"
zstd -q -dc "$T/big.byu.zst" | cmp -s - "$T/big.byu" || fail "big.byu.zst: not its records"

# stat, dump and verify: one CPU, two, and zstd -d's records read as .byu
for f in m d s big; do
	F="$T/$f.byu.zst"
	both stat.$f stat "$F"
	[ "$rc" -eq 0 ] || fail "bach stat $f.byu.zst exited $rc: $(cat "$T/stat.$f.1.err")"
	zstd -q -dc "$F" | $BACH stat - > "$T/ref.out"
	# the same counts; the first line names the input
	tail -n +2 "$T/ref.out" > "$T/ref.tail"
	tail -n +2 "$T/stat.$f.2.out" > "$T/two.tail"
	same "$T/two.tail" "$T/ref.tail"
	both dump.$f dump --format csv "$F"
	[ "$rc" -eq 0 ] || fail "bach dump $f.byu.zst exited $rc"
	zstd -q -dc "$F" | $BACH dump --format csv - > "$T/ref.out"
	same "$T/dump.$f.2.out" "$T/ref.out"
	both verify.$f verify "$F"
	[ "$rc" -eq 0 ] || fail "bach verify $f.byu.zst exited $rc: $(cat "$T/verify.$f.1.err")"
done

# frames of other tools, the one-thread way on two CPUs too: zstd's own
# (one frame of 18 MB, over 16 MiB; from a pipe, no content size), then
# bach's frames after them (cat): no seek table after zstd's (and
# bach's table does not list them), exit 1 after all their records
zstd -q -c "$T/big.byu" > "$T/z1.zst"
cat "$T/big.byu" | zstd -q -c > "$T/z2.zst"
cat "$T/z1.zst" "$T/m.byu.zst" > "$T/z3.zst"
for f in z1 z2 z3; do
	both other.$f stat "$T/$f.zst"
	[ "$rc" -eq 1 ] || fail "stat of $f.zst exited $rc, expected 1"
	[ $f = z3 ] || grep -qF "missing seek table" "$T/other.$f.2.err" ||
		fail "stat of $f.zst: $(cat "$T/other.$f.2.err")"
	both other.$f dump --format csv "$T/$f.zst"
	zstd -q -dc "$T/$f.zst" | $BACH dump --format csv - > "$T/ref.out"
	same "$T/other.$f.2.out" "$T/ref.out"
done

# frames of FILE: "offset size" a line, then "table OFFSET"
cat > "$T/frames.py" << 'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()


def frame_size(o):
    d = b[o + 4]
    fcs_code, single = d >> 6, (d >> 5) & 1
    did = [0, 1, 2, 4][d & 3]
    fcs = [0 if not single else 1, 2, 4, 8][fcs_code]
    p = o + 5 + (0 if single else 1) + did + fcs
    while True:
        h = b[p] | b[p + 1] << 8 | b[p + 2] << 16
        last, kind, size = h & 1, (h >> 1) & 3, h >> 3
        p += 3 + (1 if kind == 1 else size)
        if last:
            break
    return p + (4 if d & 4 else 0) - o


o = 0
while struct.unpack("<I", b[o:o + 4])[0] == 0xFD2FB528:
    s = frame_size(o)
    print(o, s)
    o += s
print("table", o)
EOF
# damage FILE OUT HOW OFFSET SIZE: a copy with frame (OFFSET, SIZE) damaged:
# data (bytes flipped in its middle), block (its first block's header
# claims 127 KiB more), cut (the file ends in its middle)
damage() {
	python3 - "$@" << 'EOF'
import sys
src, out, how, o, s = sys.argv[1:6]
o, s = int(o), int(s)
b = bytearray(open(src, "rb").read())
if how == "data":
    for i in range(o + s // 2, o + s // 2 + 16):
        b[i] ^= 0x5A
elif how == "block":
    # the first block header, after a 6-byte header (bach's: one byte of
    # descriptor, four of content size)
    h = o + 4 + 1 + 4
    v = b[h] | b[h + 1] << 8 | b[h + 2] << 16
    v += 127 << 13
    b[h:h + 3] = bytes([v & 255, (v >> 8) & 255, (v >> 16) & 255])
elif how == "cut":
    b = b[:o + s // 2]
open(out, "wb").write(b)
EOF
}

# damage in frame k of files of several frames (k = 0, 1 and the last):
# the same on one CPU and two, and the records before it those zstd makes
for f in m big; do
	python3 "$T/frames.py" "$T/$f.byu.zst" > "$T/$f.frames"
	nf=$(($(wc -l < "$T/$f.frames") - 1))
	[ "$nf" -ge 3 ] || fail "$f.byu.zst: $nf frames, expected 3 or more"
	for k in 0 1 $((nf - 1)); do
		set -- $(sed -n "$((k + 1))p" "$T/$f.frames")
		off=$1 size=$2
		for how in data block cut; do
			D="$T/bad.$f.$k.$how.byu.zst"
			damage "$T/$f.byu.zst" "$D" $how $off $size
			both bad.stat stat "$D"
			[ "$rc" -eq 1 ] || fail "stat of $f frame $k ($how) exited $rc, expected 1"
			grep -qF "byte offset $off" "$T/bad.stat.2.err" ||
				fail "stat of $f frame $k ($how): no 'byte offset $off': $(cat "$T/bad.stat.2.err")"
			both bad.dump dump --format csv "$D"
			[ "$rc" -eq 1 ] || fail "dump of $f frame $k ($how) exited $rc, expected 1"
			# the records before the damaged frame, all of them
			head -c "$off" "$D" | zstd -q -dc 2> /dev/null | $BACH dump --format csv - > "$T/ref.out"
			same "$T/bad.dump.2.out" "$T/ref.out"
			both bad.verify verify "$D"
			[ "$rc" -eq 1 ] || fail "verify of $f frame $k ($how) exited $rc, expected 1"
		done
	done
done

# --range from before a frame boundary to after the next (1 MiB frames:
# 174080 records), through the seek table and reading on: the records
# zstd -d makes
F=$T/m.byu.zst
for r in 174000:174200 174079:348161 0:174080 174080:348160 348159:1200000 1:1199999 522240:522241; do
	both range dump --format csv --range $r "$F"
	[ "$rc" -eq 0 ] || fail "dump --range $r exited $rc"
	zstd -q -dc "$F" | $BACH dump --format csv --range $r - > "$T/ref.out"
	same "$T/range.2.out" "$T/ref.out"
done
# and damage past a range's end never read
set -- $(sed -n "3p" "$T/m.frames")
damage "$F" "$T/late.byu.zst" data $1 $2
both range dump --format csv --range 1000:348000 "$T/late.byu.zst"
[ "$rc" -eq 0 ] || fail "dump --range before a damaged frame exited $rc: $(cat "$T/range.2.err")"
zstd -q -dc "$F" | $BACH dump --format csv --range 1000:348000 - > "$T/ref.out"
same "$T/range.2.out" "$T/ref.out"

# the helper thread: started on two CPUs, never on one (LeakSanitizer
# cannot run under ptrace: off for these two)
if command -v strace > /dev/null && strace -f -o /dev/null true 2> /dev/null; then
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -e trace=clone,clone3 -o "$T/st1" $ONE $BACH stat "$T/big.byu.zst" > /dev/null
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -e trace=clone,clone3 -o "$T/st2" $TWO $BACH stat "$T/big.byu.zst" > /dev/null
	# taskset's own exec is no clone; bach's thread is
	! grep -q "clone" "$T/st1" || fail "a thread started on one CPU: $(cat "$T/st1")"
	grep -q "CLONE_THREAD" "$T/st2" || fail "no thread started on two CPUs: $(cat "$T/st2")"
	# and what else counts CPUs (lib/cpus.h: the affinity mask, not the
	# machine): the writer's compressors, sim --configs' simulators; from
	# the raw records, whose reader starts no thread of its own
	echo "--l1 4k:32:2" > "$T/sweep"
	echo "--l1 8k:32:4" >> "$T/sweep"
	for c in "convert -q --to byu.zst $T/big.byu $T/again.byu.zst" \
		"sim --configs $T/sweep $T/big.byu"; do
		for n in 1 2; do
			cpus=$ONE
			[ $n = 1 ] || cpus=$TWO
			# shellcheck disable=SC2086 # the command's words
			ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
				strace -f -e trace=clone,clone3 -o "$T/st$n" $cpus $BACH $c > /dev/null
		done
		! grep -q "clone" "$T/st1" || fail "$c: a thread started on one CPU: $(cat "$T/st1")"
		grep -q "CLONE_THREAD" "$T/st2" || fail "$c: no thread started on two CPUs: $(cat "$T/st2")"
	done
else
	skip "strace is not installed or not allowed: the rest passed, the threads were not looked for"
fi
echo "zstd_ahead: ok"
