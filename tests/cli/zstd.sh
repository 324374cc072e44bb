#!/bin/sh
# .byu.zst (docs/formats.md section 10): bach convert --to byu.zst written
# and read against stock zstd (zstd -d, -t, -l) and Python's own parsing of
# the seekable format's seek table, every reader on it, --range through the
# seek table, and damaged files (a byte flipped in a frame, a file cut
# inside a frame and between frames) failing with exit 1 naming file and
# byte offset; bachd's compressor = zstd: a .part cut inside a frame
# recovered to its last whole frame with a seek table, the manifest's CRC
# checked by verify, retention, and a .byu.zst replayed.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"
command -v zstd > /dev/null || skip "zstd (Debian: zstd) is not installed: no reference reader"
command -v python3 > /dev/null || skip "python3 is not installed"

$BACH gen --records 300000 --seed 11 -o "$T/t.byu"
# frames of 1 MiB: two of them (the default 8 MiB ones: below)
expect_status 0 $BACH convert --to byu.zst --zstd-frame-kb 1024 "$T/t.byu" "$T/t.byu.zst"
# zstd's own checks and decoding: the records, byte for byte
zstd -q -t "$T/t.byu.zst" || fail "zstd -t rejects t.byu.zst"
zstd -q -dc "$T/t.byu.zst" > "$T/back.byu"
same "$T/back.byu" "$T/t.byu"
zstdcat "$T/t.byu.zst" | cmp -s - "$T/t.byu" || fail "zstdcat differs"
# bach gen writes the same by the name (before: raw records under it)
$BACH gen --records 300000 --seed 11 -o "$T/g.byu.zst"
zstd -q -t "$T/g.byu.zst" || fail "zstd -t rejects bach gen's g.byu.zst"
zstdcat "$T/g.byu.zst" | cmp -s - "$T/t.byu" || fail "bach gen's .byu.zst: not its records"
zstd -l -v "$T/t.byu.zst" > "$T/l" 2>&1 || fail "zstd -l: $(cat "$T/l")"
grep -q "Check: XXH64" "$T/l" || grep -q "XXH64" "$T/l" || fail "zstd -l sees no checksum: $(cat "$T/l")"
# the layout, read by Python alone: frames of 128 blocks of 65280 record
# bytes (8 MiB, the default; --zstd-frame-kb 1024: 16 blocks, 64: one)
# with content size and checksum flag, then the seek table (zstd's
# contrib/seekable_format/zstd_seekable_compression_format.md)
$BACH gen --records 1500000 --seed 12 -o "$T/big.byu"
expect_status 0 $BACH convert "$T/big.byu" "$T/big.byu.zst"
zstd -q -dc "$T/big.byu.zst" | cmp -s - "$T/big.byu" || fail "8 MiB frames differ under zstd -d"
# on one thread (no pool threads: a frame compressed as it ends), the
# same bytes
expect_status 0 $BACH convert --threads 1 "$T/big.byu" "$T/big1.byu.zst"
same "$T/big1.byu.zst" "$T/big.byu.zst"
expect_status 0 $BACH convert --zstd-frame-kb 64 "$T/t.byu" "$T/f64.byu.zst"
expect_status 2 $BACH convert --zstd-frame-kb 63 "$T/t.byu" "$T/f63.byu.zst"
expect_err "--zstd-frame-kb: 64 to 16384, not '63'"
expect_status 2 $BACH convert --zstd-frame-kb 64 "$T/t.byu" "$T/f64.byu.gz"
expect_err "--zstd-frame-kb: for byu.zst, not byu.gz"
for f in big:big:8355840 t:t:1044480 f64:t:65280; do
python3 - "$T/${f%%:*}.byu.zst" "$T/$(echo "$f" | cut -d: -f2).byu" "${f##*:}" <<'PY' || fail "seek table layout of ${f%%:*}"
import struct, sys
d = open(sys.argv[1], 'rb').read()
recs = open(sys.argv[2], 'rb').read()
fb = int(sys.argv[3])
n, desc, magic = struct.unpack('<IBI', d[-9:])
assert magic == 0x8F92EAB1 and desc == 0x80, (hex(magic), desc)
size = 8 + 12 * n + 9
skip, fsize = struct.unpack('<II', d[-size:-size + 8])
assert skip == 0x184D2A5E and fsize == size - 8
off = uoff = 0
for i in range(n):
    c, u, _ = struct.unpack('<III', d[-size + 8 + 12 * i:-size + 20 + 12 * i])
    fr = d[off:off + c]
    assert struct.unpack('<I', fr[:4])[0] == 0xFD2FB528, i
    fhd = fr[4]
    assert fhd & 0x04, 'checksum flag'      # Content_Checksum_flag
    assert fhd & 0x20 or fhd >> 6, 'content size'
    assert u == (fb if i < n - 1 else len(recs) - fb * (n - 1)), (i, u)
    off += c
    uoff += u
assert off == len(d) - size and uoff == len(recs)
assert n == (len(recs) + fb - 1) // fb, n
PY
done
zstd -q -dc "$T/f64.byu.zst" | cmp -s - "$T/t.byu" || fail "--zstd-frame-kb 64 differs"

# the readers: stat and dump as of the raw file; --range through the table
$BACH stat "$T/t.byu" > "$T/s1"
expect_status 0 $BACH stat "$T/t.byu.zst"
same "$T/out" "$T/s1"
$BACH dump --range 200000:200010 "$T/t.byu" > "$T/d1"
expect_status 0 $BACH dump --range 200000:200010 "$T/t.byu.zst"
same "$T/out" "$T/d1"
expect_status 0 $BACH diff "$T/t.byu" "$T/t.byu.zst"
expect_status 0 $BACH verify "$T/t.byu.zst"
# standard input and an unsaid name: sniffed by the magic
cat "$T/t.byu.zst" | $BACH stat - > "$T/s2" || fail "stat - of zstd"
same "$T/s2" "$T/s1"
cp "$T/t.byu.zst" "$T/noname"
expect_status 0 $BACH stat "$T/noname"
same "$T/out" "$T/s1"
# back to byu and byu.gz; concatenated files read one after the other
expect_status 0 $BACH convert "$T/t.byu.zst" "$T/t2.byu"
same "$T/t2.byu" "$T/t.byu"
cat "$T/t.byu.zst" "$T/t.byu.zst" > "$T/cc.byu.zst"
cat "$T/t.byu" "$T/t.byu" > "$T/cc.byu"
expect_status 0 $BACH diff "$T/cc.byu" "$T/cc.byu.zst"
# a level, and an empty trace: the seek table alone, which zstd reads
expect_status 0 $BACH convert --level 19 --to byu.zst "$T/t.byu" "$T/l19.byu.zst"
zstd -q -dc "$T/l19.byu.zst" | cmp -s - "$T/t.byu" || fail "level 19 differs"
: > "$T/empty.byu"
expect_status 0 $BACH convert "$T/empty.byu" "$T/empty.byu.zst"
[ "$(wc -c < "$T/empty.byu.zst")" -eq 17 ] || fail "empty .byu.zst is not 17 bytes"
[ "$(zstd -q -dc "$T/empty.byu.zst" | wc -c)" -eq 0 ] || fail "zstd reads records from the empty trace"
expect_status 0 $BACH stat "$T/empty.byu.zst"
expect_out "records            0"

# damage: a byte flipped inside the second frame (its checksum, or its
# blocks, fail), named with the frame's offset; the first frame's records
# come first
c0=$(python3 -c "import struct,sys; d=open(sys.argv[1],'rb').read(); n=struct.unpack('<I',d[-9:-5])[0]; print(struct.unpack('<I', d[-(8+12*n+9)+8:-(8+12*n+9)+12])[0])" "$T/t.byu.zst")
cp "$T/t.byu.zst" "$T/flip.byu.zst"
printf '\125' | dd of="$T/flip.byu.zst" bs=1 seek=$((c0 + 500)) conv=notrunc 2> /dev/null
expect_status 1 $BACH stat "$T/flip.byu.zst"
expect_err "flip.byu.zst: bad zstd frame at byte offset $c0: "
expect_status 1 $BACH dump "$T/flip.byu.zst"
[ "$(wc -l < "$T/out")" -eq 174080 ] || fail "dump of a damaged second frame printed $(wc -l < "$T/out") records, not the first frame's 174080"
expect_status 1 $BACH verify "$T/flip.byu.zst"
expect_out "flip.byu.zst: bad zstd frame at byte offset $c0"
zstd -q -t "$T/flip.byu.zst" 2> /dev/null && fail "zstd -t passes the flipped file: the test damages nothing"
# cut inside a frame, and between frames (no seek table)
head -c $((c0 + 100)) "$T/t.byu.zst" > "$T/cut.byu.zst"
expect_status 1 $BACH stat "$T/cut.byu.zst"
expect_err "cut.byu.zst: truncated zstd frame at byte offset $c0"
head -c "$c0" "$T/t.byu.zst" > "$T/cut2.byu.zst"
expect_status 1 $BACH stat "$T/cut2.byu.zst"
expect_err "cut2.byu.zst: missing seek table: zstd file ends at byte offset $c0 without it"
# garbage after the table, an empty file, a table that lies
cp "$T/t.byu.zst" "$T/trail.byu.zst"
printf 'garbage!' >> "$T/trail.byu.zst"
expect_status 1 $BACH stat "$T/trail.byu.zst"
expect_err "trail.byu.zst: trailing garbage at byte offset $(wc -c < "$T/t.byu.zst")"
: > "$T/e.byu.zst"
expect_status 1 $BACH stat "$T/e.byu.zst"
expect_err "e.byu.zst: empty file: not zstd"
python3 - "$T/t.byu.zst" "$T/lie.byu.zst" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
n = struct.unpack('<I', d[-9:-5])[0]
e = len(d) - (8 + 12 * n + 9) + 8 + 4  # frame 0's decompressed size
struct.pack_into('<I', d, e, 65274)
open(sys.argv[2], 'wb').write(d)
PY
expect_status 1 $BACH stat "$T/lie.byu.zst"
expect_err "lie.byu.zst: seek table at byte offset"

# bachd: replayed from the .byu.zst, written as .byu.zst segments
mkdir "$T/rep"
expect_status 0 "$BACHD" --driver replay --option path="$T/t.byu.zst" \
	--output "$T/rep" --set compressor=zstd --set rotate_mb=1 \
	--set zstd_frame_kb=256
C=$(echo "$T/rep"/*/)
n=$(ls "$C" | grep -c '^seg-[0-9]*\.byu\.zst$')
[ "$n" -ge 2 ] || fail "bachd wrote $n .byu.zst segments: $(ls "$C")"
zstd -q -dc "$C"/seg-*.byu.zst | cmp -s - "$T/t.byu" || fail "bachd's segments differ under zstd -d"
expect_status 0 $BACH verify "$C"
expect_status 0 $BACH diff "$T/t.byu" "$C"
# the manifest's CRC: a byte changed in a segment's seek table (no record
# changes, the frames still decode) is found by verify
cp -r "$C" "$T/crc"
s=$T/crc/seg-000001.byu.zst
sz=$(wc -c < "$s")
printf '\001' | dd of="$s" bs=1 seek=$((sz - 12)) conv=notrunc 2> /dev/null
expect_status 1 $BACH verify "$T/crc"
expect_out "seg-000001.byu.zst"
expect_out "seg-000001.byu.zst: CRC-32 "
# a crash: the last segment unfinished, cut inside its last frame (and
# without its seek table); bach recover cuts it to the last whole frame
# and ends it with the table of those
cp -r "$C" "$T/crash"
last=$(ls "$T/crash" | grep '\.byu\.zst$' | tail -n 1)
python3 - "$T/crash/$last" > "$T/cutat" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
n = struct.unpack('<I', d[-9:-5])[0]
tab = len(d) - (8 + 12 * n + 9)
open(sys.argv[1] + '.part', 'wb').write(d[:tab - 100])
# where the last frame starts (the cut), and the bytes of it left
c = struct.unpack('<I', d[tab + 8 + 12 * (n - 1):tab + 12 + 12 * (n - 1)])[0]
print(tab - c, c - 100)
PY
read -r cutat cutn < "$T/cutat"
rm "$T/crash/$last"
grep -v "\"$last\"\|\"ended\"" "$C/manifest.jsonl" > "$T/crash/manifest.jsonl"
expect_status 1 $BACH stat "$T/crash/$last.part"
expect_err "$T/crash/$last.part: truncated zstd frame at byte offset $cutat"
expect_status 0 $BACH recover "$T/crash"
# the cut named with the file and where it starts
expect_err "/$last: recovered "
expect_err " records, cut $cutn bytes of an unfinished block at byte offset $cutat"
[ -f "$T/crash/$last" ] || fail "recover left no $last: $(ls "$T/crash")"
zstd -q -t "$T/crash/$last" || fail "zstd -t rejects the recovered $last"
expect_status 0 $BACH verify "$T/crash"
tail -n 2 "$T/crash/manifest.jsonl" | grep -q "\"name\":\"$last\".*\"recovered\":true" ||
	fail "no recovered segment event: $(tail -n 2 "$T/crash/manifest.jsonl")"
# what is kept is the records before the cut frame, whole frames of
# 4 blocks of 10880 (zstd_frame_kb=256)
k=$($BACH stat "$T/crash/$last" | awk '/^records/ { print $2 }')
all=$($BACH stat "$C/$last" | awk '/^records/ { print $2 }')
[ $((k % 43520)) -eq 0 ] && [ "$k" -lt "$all" ] && [ "$k" -ge $((all - 43520)) ] ||
	fail "recovered $k of $all records: not the whole frames before the cut"
# a timed capture: the sidecar is seg-N.time.gz beside seg-N.byu.zst
# (docs/formats.md 3.2), read with the records
mkdir "$T/timed"
expect_status 0 $BACH capture --driver fake --option records=20000 \
	--option seed=3 --option timing=1 --output "$T/timed" \
	--set compressor=zstd
C=$(echo "$T/timed"/*/)
[ -f "$C/seg-000001.time.gz" ] || fail "no seg-000001.time.gz: $(ls "$C")"
expect_status 0 $BACH dump --time -n 2 "$C"
expect_out "NC_D_READ 2 0.000000030"
expect_status 0 $BACH verify "$C"
# retention removes .byu.zst segments as others
mkdir "$T/keep"
expect_status 0 "$BACHD" --driver replay --option path="$T/t.byu.zst" \
	--output "$T/keep" --set compressor=zstd --set rotate_mb=1 \
	--set keep_bytes=300k
grep -q "retention: .*seg-000001.byu.zst removed" "$T/err" ||
	fail "retention removed no .byu.zst segment: $(cat "$T/err")"
[ ! -e "$(echo "$T/keep"/*/)seg-000001.byu.zst" ] || fail "seg-000001.byu.zst still there"

# a slow source's records reach the disk at once, not when a frame of
# zstd_frame_kb has gathered: a block flushed before it was full
# (flush_ms) ends the frame, so a crash 2 s in keeps the records up to
# about then (50000 a second here, a block flushed every 80 ms or so; a
# 16 MiB frame would have waited for 256 blocks, or the pool's 128 at
# ring_mb=16: 10 s)
mkdir "$T/slow"
bg "$BACHD" --driver fake --option seed=5 --option rate=50000 \
	--set compressor=zstd --set zstd_frame_kb=16384 --set flush_ms=50 \
	--set ring_mb=16 --output "$T/slow" 2> "$T/slow.log"
P=$BGPID
wait_until 20 "the slow capture's first segment" sh -c "ls '$T'/slow/*/ | grep -q '^seg-000001.byu.zst.part$'"
sleep 2
kill -KILL "$P"
reap "$P"
S=$(capdir "$T/slow")
expect_status 0 $BACH recover "$S"
k=$($BACH stat "$S/seg-000001.byu.zst" 2> /dev/null | awk '/^records/ { print $2 }')
[ "${k:-0}" -ge 50000 ] || fail "a crash 2 s into a slow capture kept ${k:-no} records, not the 50000 of its first second: $(cat "$T/err")"
echo ok
