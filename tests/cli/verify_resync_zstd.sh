# bach verify goes on past a damaged zstd frame of a .byu.zst as it does
# past a damaged gzip member (verify_resync.sh): it names the damage (file
# and byte offset, exit 1), reads on at the next frame (found through the
# seek table, or by looking for the next frame magic when the table is
# damaged too), or at the seek table when the last frame is the damaged
# one, and says how many records are still readable after the damage and
# how many bytes it passed over. The frames are found by Python walking
# their headers and blocks as RFC 8878 lays them out, and the records they
# hold are counted by zstd itself (zstd -dc), not by bach.
. "$TOP/tests/lib.sh"
command -v python3 > /dev/null || skip "no python3 to find the frames"
command -v zstd > /dev/null || skip "zstd (Debian: zstd) is not installed: no reference reader"

# damage FILE OUT K...: OUT is FILE with frames K... damaged (16 bytes in
# the middle of the frame flipped; "hdrK": its magic; "tab": an entry's
# decompressed size in the seek table; "tabc": an entry's compressed size,
# so that the table no longer fits the file); writes $T/before.zst and
# $T/after.zst, the frames before the first damaged one and the frames
# left whole after it; prints "OFF NEXT SKIPPED TABLE": the first damaged
# frame's offset, the offset of what follows it, the bytes of the damaged
# frames, the seek table's offset
cat > "$T/damage.py" << 'EOF'
import struct, sys
src, out, args = sys.argv[1], sys.argv[2], sys.argv[3:]
b = bytearray(open(src, "rb").read())

def frame_size(o):
    # RFC 8878 3.1.1: header, blocks, the checksum
    assert struct.unpack("<I", b[o:o + 4])[0] == 0xFD2FB528, o
    fhd = b[o + 4]
    fcs_flag, single, checksum, did = fhd >> 6, fhd >> 5 & 1, fhd >> 2 & 1, fhd & 3
    p = o + 5 + (0 if single else 1) + (0, 1, 2, 4)[did]
    p += (1 if single else 0, 2, 4, 8)[fcs_flag]
    while True:
        h = b[p] | b[p + 1] << 8 | b[p + 2] << 16
        last, kind, size = h & 1, h >> 1 & 3, h >> 3
        p += 3 + (1 if kind == 1 else size)
        if last:
            break
    return p + 4 * checksum - o

frames, o = [], 0
while struct.unpack("<I", b[o:o + 4])[0] == 0xFD2FB528:
    frames.append((o, frame_size(o)))
    o += frames[-1][1]
table = o
assert struct.unpack("<I", b[o:o + 4])[0] == 0x184D2A5E, "no seek table"
bad = []
for a in args:
    if a in ("tab", "tabc"):  # frame 1's entry: compressed, decompressed size
        e = table + 8 + 12 * 1 + (0 if a == "tabc" else 4)
        struct.pack_into("<I", b, e, struct.unpack("<I", b[e:e + 4])[0] + 6)
        continue
    k = int(a[3:] if a.startswith("hdr") else a)
    fo, size = frames[k]
    if a.startswith("hdr"):
        b[fo:fo + 2] = b"\0\0"
    else:
        for i in range(fo + size // 2, fo + size // 2 + 16):
            b[i] ^= 0x5A
    bad.append(k)
open(out, "wb").write(b)
first = min(bad) if bad else len(frames)
open(sys.argv[0] + ".before", "wb").write(b"".join(b[o:o + s] for o, s in frames[:first]))
open(sys.argv[0] + ".after", "wb").write(b"".join(
    b[o:o + s] for k, (o, s) in enumerate(frames) if k > first and k not in bad))
nxt = frames[first + 1][0] if first + 1 < len(frames) else table
off = frames[first][0] if bad else table
print(off, nxt, sum(frames[k][1] for k in bad), table)
EOF

# records in the frames of FILE, by zstd
recs() {
	if [ -s "$1" ]; then
		echo $(($(zstd -q -dc "$1" | wc -c) / 6))
	else
		echo 0
	fi
}

# check FILE K...: damage FILE's frames K... and verify the copy
check() {
	f=$1
	shift
	python3 "$T/damage.py" "$f" "$T/bad.byu.zst" "$@" > "$T/want" || fail "damage.py $*"
	read -r off next skipped table < "$T/want"
	before=$(recs "$T/damage.py.before")
	after=$(recs "$T/damage.py.after")
	expect_status 1 "$BACH" verify "$T/bad.byu.zst"
	grep -Eq "^$T/bad.byu.zst: .* at byte offset $off(:|$)" "$T/out" || fail "frames $*: the damage at $off is not named: $(cat "$T/out")"
	if [ "$next" = "$table" ]; then
		w="the seek table"
	else
		w="the next zstd frame"
	fi
	grep -qxF "$T/bad.byu.zst: reading on at byte offset $next, $w ($((next - off)) bytes skipped)" "$T/out" ||
		fail "frames $*: not read on at $next ($w): $(cat "$T/out")"
	grep -qF "$T/bad.byu.zst: damaged: $((before + after)) records read, $after of them after the damage ($skipped bytes skipped)" "$T/out" ||
		fail "frames $*: want $before records before the damage and $after after it ($skipped bytes skipped): $(cat "$T/out")"
}

"$BACH" gen --records 100000 --seed 3 -o "$T/a.byu"
# frames of one 64 KiB block: enough of them to damage the middle
"$BACH" convert -q --to byu.zst --zstd-frame-kb 64 "$T/a.byu" "$T/a.byu.zst"
n=$(python3 -c 'import struct,sys; print(struct.unpack("<I", open(sys.argv[1],"rb").read()[-9:-5])[0])' "$T/a.byu.zst")
[ "$n" -ge 8 ] || fail "a.byu.zst has $n frames: too few to damage the middle"

check "$T/a.byu.zst" 4 # a frame in the middle: found through the seek table
grep -q "bad zstd frame at byte offset $off: " "$T/out" || fail "frame 4: $(cat "$T/out")"
grep -qF "verify: 1 file, $((before + after)) records, 1 problem" "$T/out" || fail "frame 4: summary: $(tail -n 1 "$T/out")"
# frames of 16 blocks (1 MiB; the default is 128): the damaged one's
# records, decompressed before its checksum failed, are not counted as read
"$BACH" gen --records 1000000 --seed 4 -o "$T/m.byu"
"$BACH" convert -q --to byu.zst --zstd-frame-kb 1024 "$T/m.byu" "$T/m.byu.zst"
check "$T/m.byu.zst" 2
grep -q "bad zstd frame at byte offset $off: " "$T/out" || fail "1 MiB frame 2: $(cat "$T/out")"
[ "$before" -eq 348160 ] || fail "1 MiB frames: $before records before frame 2, not 2 * 174080"
grep -qF "verify: 1 file, $((before + after)) records, 1 problem" "$T/out" || fail "1 MiB frame 2: summary: $(tail -n 1 "$T/out")"
check "$T/a.byu.zst" hdr4 # its magic: not a zstd frame there
grep -q "trailing garbage at byte offset $off: not a zstd frame" "$T/out" || fail "hdr4: $(cat "$T/out")"
check "$T/a.byu.zst" 2 6 # two of them
grep -qF "verify: 1 file, $((before + after)) records, 2 problems" "$T/out" || fail "frames 2 6: summary: $(tail -n 1 "$T/out")"
check "$T/a.byu.zst" 0 # the first
check "$T/a.byu.zst" hdr0
grep -q "not zstd: no zstd frame at byte offset 0" "$T/out" || fail "hdr0: $(cat "$T/out")"
# the last frame: reading on at the seek table, which lists the frames
# from there on (none): nothing more after the damage, and nothing else
# wrong
check "$T/a.byu.zst" $((n - 1))
grep -qF "damaged: $before records read, 0 of them after the damage" "$T/out" || fail "last frame: $(cat "$T/out")"
grep -qF "verify: 1 file, $before records, 1 problem" "$T/out" || fail "last frame: summary: $(tail -n 1 "$T/out")"
# a frame and the seek table: the table no longer fits the file, so the
# next frame is looked for by its magic, and the table's damage is named
# too
check "$T/a.byu.zst" 4 tabc
grep -q "seek table at byte offset $table: " "$T/out" || fail "frame 4 and the table: $(cat "$T/out")"
grep -qF "verify: 1 file, $((before + after)) records, 2 problems" "$T/out" || fail "frame 4 and the table: summary: $(tail -n 1 "$T/out")"
# a frame, and the table's entry for a frame before it: reading on is
# right (through the table's frame offsets), but the table does not list
# the bytes read after the damage
check "$T/a.byu.zst" 4 tab
grep -q "seek table at byte offset $table does not match the frames before it" "$T/out" || fail "frame 4 and a table entry: $(cat "$T/out")"
# the seek table alone: every record is read, the table named
python3 "$T/damage.py" "$T/a.byu.zst" "$T/bad.byu.zst" tab > "$T/want"
read -r off next skipped table < "$T/want"
expect_status 1 "$BACH" verify "$T/bad.byu.zst"
grep -q "^$T/bad.byu.zst: seek table at byte offset $table does not match the frames before it" "$T/out" || fail "table: $(cat "$T/out")"
grep -qF "verify: 1 file, 100000 records, 1 problem" "$T/out" || fail "table: summary: $(tail -n 1 "$T/out")"

# standard input cannot be read on: the damage ends it, as for gzip
python3 "$T/damage.py" "$T/a.byu.zst" "$T/bad.byu.zst" 4 > "$T/want"
before=$(recs "$T/damage.py.before")
expect_status 1 sh -c '"$1" verify - < "$2"' sh "$BACH" "$T/bad.byu.zst"
grep -q "verify: 1 file, $before records, 1 problem" "$T/out" || fail "stdin: $(cat "$T/out")"
grep -q "reading on" "$T/out" && fail "stdin read on: $(cat "$T/out")"

# the other readers stop at the damage, naming file and byte offset
read -r off next skipped table < "$T/want"
expect_status 1 "$BACH" stat "$T/bad.byu.zst"
expect_err "$T/bad.byu.zst: bad zstd frame at byte offset $off: "

# a capture's damaged .byu.zst segment: named, read on, the next segment
# read, the manifest's CRC-32 no longer the segment's
mkdir "$T/caps"
"$BACH" capture --driver fake --option records=600000 --set compressor=zstd \
	--set zstd_frame_kb=128 --set rotate_mb=1 --output "$T/caps" 2> "$T/log" || fail "capture: $(cat "$T/log")"
C=$(ls -d "$T"/caps/2*Z*)
S=$C/seg-000001.byu.zst
[ -f "$C/seg-000002.byu.zst" ] || fail "one segment only: $(ls "$C")"
python3 "$T/damage.py" "$S" "$T/seg.byu.zst" 5 > "$T/want" || fail "damage.py seg"
read -r off next skipped table < "$T/want"
after=$(recs "$T/damage.py.after")
mv "$T/seg.byu.zst" "$S"
expect_status 1 "$BACH" verify "$C"
grep -qF "$S: bad zstd frame at byte offset $off: " "$T/out" || fail "capture: $(cat "$T/out")"
grep -qxF "$S: reading on at byte offset $next, the next zstd frame ($((next - off)) bytes skipped)" "$T/out" ||
	fail "capture: not read on: $(cat "$T/out")"
grep -qF ", $after of them after the damage ($skipped bytes skipped)" "$T/out" || fail "capture: $(cat "$T/out")"
grep -q "seg-000001.byu.zst: CRC-32 " "$T/out" || fail "capture: no CRC mismatch: $(cat "$T/out")"
grep -q "seg-000002.byu.zst: OK, " "$T/out" || fail "capture: the next segment: $(cat "$T/out")"
echo ok
