# Random access: bach index (htslib's .gzi layout, checked against Debian's
# bgzip), --range in dump, stat and convert, bachd's indexes, and stale or
# missing indexes, which must never give wrong records.
. "$TOP/tests/lib.sh"
command -v bgzip >/dev/null || skip "no bgzip (Debian package tabix)"

# 100000 records: 10 members of 10880 records, the last one shorter
$BACH gen --records 100000 --seed 5 -o "$T/a.byu"
$BACH gen --records 100000 --seed 5 -o "$T/a.byu.gz"
$BACH dump "$T/a.byu" > "$T/all.txt"

# bach index writes what htslib's bgzip -r writes for the same file
expect_status 0 $BACH index "$T/a.byu.gz"
expect_out "a.byu.gz.gzi: 10 members, 100000 records"
cp "$T/a.byu.gz" "$T/h.byu.gz"
bgzip -r "$T/h.byu.gz"
same "$T/a.byu.gz.gzi" "$T/h.byu.gz.gzi"
[ "$(wc -c < "$T/a.byu.gz.gzi")" -eq $((8 + 9 * 16)) ] || fail "index size"

# and bgzip reads our file through our index: records 54321..54330
rm "$T/h.byu.gz.gzi"
cp "$T/a.byu.gz.gzi" "$T/h.byu.gz.gzi"
bgzip -b $((54321 * 6)) -s 60 "$T/h.byu.gz" > "$T/bg.bin"
dd if="$T/a.byu" of="$T/dd.bin" bs=6 skip=54321 count=10 2>/dev/null
same "$T/bg.bin" "$T/dd.bin"

sed -n 54322,54331p "$T/all.txt" > "$T/r54321.txt"

# --range START:END is records START..END-1, as the whole dump says
for r in 0:3 10879:10882 10880:10881 54321:54331 99990:100000 99999: :4 \
	21759:21761; do
	s=${r%:*} e=${r#*:}
	[ -n "$s" ] || s=0
	[ -n "$e" ] || e=100000
	$BACH dump --range "$r" "$T/a.byu.gz" > "$T/r.txt"
	sed -n "$((s + 1)),${e}p" "$T/all.txt" | cmp -s - "$T/r.txt" ||
		fail "dump --range $r of .byu.gz"
	$BACH dump --range "$r" "$T/a.byu" | cmp -s - "$T/r.txt" ||
		fail "dump --range $r of .byu"
done
# past the end: nothing, and no error; an empty range: nothing
expect_status 0 $BACH dump --range 100000:100010 "$T/a.byu.gz"
[ ! -s "$T/out" ] || fail "past the end printed: $(head -2 "$T/out")"
expect_status 0 $BACH dump --range 200000:300000 "$T/a.byu.gz"
[ ! -s "$T/out" ] || fail "far past the end printed"
expect_status 0 $BACH dump --range 7:7 "$T/a.byu.gz"
[ ! -s "$T/out" ] || fail "empty range printed"
expect_status 2 $BACH dump --range 9:3 "$T/a.byu.gz"
expect_err "--range: not START:END"
expect_status 2 $BACH dump --range 12 "$T/a.byu.gz"
expect_err "--range"
# csv keeps each record's index in the whole trace
$BACH dump --range 54321:54323 --format csv "$T/a.byu.gz" > "$T/r.csv"
sed -n 2p "$T/r.csv" | grep -q '^54321,0x' || fail "csv index: $(cat "$T/r.csv")"
# standard input: forward, by reading
cat "$T/a.byu.gz" | $BACH dump --range 54321:54331 - > "$T/r.txt"
sed -n 54322,54331p "$T/all.txt" | cmp -s - "$T/r.txt" || fail "range of stdin"
# a gzip file without BC fields has no index, and is read from its start
gzip -c "$T/a.byu" > "$T/plain.byu.gz"
$BACH dump --range 54321:54331 "$T/plain.byu.gz" > "$T/r.txt"
sed -n 54322,54331p "$T/all.txt" | cmp -s - "$T/r.txt" || fail "range of plain gzip"
expect_status 2 $BACH index "$T/plain.byu.gz"
expect_err "plain.byu.gz: gzip member at byte offset 0 has no BC field"

# stat and convert over a range agree with the same records cut by dd
dd if="$T/a.byu" of="$T/cut.byu" bs=6 skip=30000 count=25000 2>/dev/null
$BACH stat --json "$T/cut.byu" > "$T/want.json"
$BACH stat --json --range 30000:55000 "$T/a.byu.gz" > "$T/got.json"
same "$T/got.json" "$T/want.json"
$BACH convert -q --range 30000:55000 "$T/a.byu.gz" "$T/conv.byu"
same "$T/conv.byu" "$T/cut.byu"
$BACH convert -q --range 30000:30002 --to csv "$T/a.byu.gz" "$T/conv.csv"
sed -n 2p "$T/conv.csv" | grep -q '^30000,0x' || fail "convert csv index"
expect_status 2 $BACH convert --range 1:2 --from din "$T/a.byu" "$T/x.byu"
expect_err "for traces, not imports"

# a stale index is not trusted: another file's index, made newer
$BACH gen --records 70000 --seed 9 -o "$T/b.byu.gz"
$BACH dump "$T/b.byu.gz" > "$T/b.txt"
cp "$T/a.byu.gz.gzi" "$T/b.byu.gz.gzi"
touch -d '+1 minute' "$T/b.byu.gz.gzi" 2>/dev/null || touch "$T/b.byu.gz.gzi"
$BACH dump --range 65000:65010 "$T/b.byu.gz" > "$T/r.txt"
sed -n 65001,65010p "$T/b.txt" | cmp -s - "$T/r.txt" || fail "stale index trusted"
# an index older than its file
$BACH index "$T/b.byu.gz" >/dev/null
touch -d '2000-01-01' "$T/b.byu.gz.gzi"
$BACH dump --range 65000:65010 "$T/b.byu.gz" | cmp -s - "$T/r.txt" || fail "old index"
# an index whose newer mtime and size fit, but whose entries are wrong:
# member 2 said to start one byte later; then every member said to start
# 6 bytes further into the records
$BACH index "$T/a.byu.gz" >/dev/null
python3 - "$T/a.byu.gz.gzi" <<'PY'
import struct, sys
p = sys.argv[1]
raw = bytearray(open(p, 'rb').read())
n = struct.unpack_from('<Q', raw)[0]
ents = [list(struct.unpack_from('<QQ', raw, 8 + 16 * i)) for i in range(n)]
ents[2][0] += 1
open(p, 'wb').write(struct.pack('<Q', n) + b''.join(struct.pack('<QQ', *e) for e in ents))
PY
touch -d '+1 minute' "$T/a.byu.gz.gzi" 2>/dev/null || true
$BACH dump --range 32640:32650 "$T/a.byu.gz" > "$T/r.txt"
sed -n 32641,32650p "$T/all.txt" | cmp -s - "$T/r.txt" || fail "bad member offset trusted"
$BACH index "$T/a.byu.gz" >/dev/null
python3 - "$T/a.byu.gz.gzi" <<'PY'
import struct, sys
p = sys.argv[1]
raw = bytearray(open(p, 'rb').read())
n = struct.unpack_from('<Q', raw)[0]
for i in range(n):
    c, u = struct.unpack_from('<QQ', raw, 8 + 16 * i)
    struct.pack_into('<QQ', raw, 8 + 16 * i, c, u + 6)
open(p, 'wb').write(raw)
PY
touch -d '+1 minute' "$T/a.byu.gz.gzi" 2>/dev/null || true
$BACH dump --range 60000:60010 "$T/a.byu.gz" > "$T/r.txt"
sed -n 60001,60010p "$T/all.txt" | cmp -s - "$T/r.txt" || fail "shifted index trusted"
# garbage in place of an index
printf 'not an index' > "$T/a.byu.gz.gzi"
$BACH dump --range 60000:60010 "$T/a.byu.gz" | cmp -s - "$T/r.txt" || fail "garbage index"

# damage: bach index names the file and the offset
head -c 100000 "$T/a.byu.gz" > "$T/cut.byu.gz"
expect_status 1 $BACH index "$T/cut.byu.gz"
expect_err "cut.byu.gz: truncated gzip member at byte offset"
[ ! -e "$T/cut.byu.gz.gzi" ] || fail "index of a damaged file written"
expect_status 0 $BACH index "$T/a.byu"
expect_out "raw records, no index needed"

# every blocked .byu.gz a command writes gets its index beside it, as
# bgzip -r makes it, and bgzip reads the file through it (lib/io/trace_writer.c)
checkix() { # FILE: its .gzi is there and is what bgzip -r and bach index make
	[ -s "$1.gzi" ] || fail "$1: no index written beside it"
	[ ! "$1.gzi" -ot "$1" ] || fail "$1.gzi older than its file"
	cp "$1" "$T/w.byu.gz"
	rm -f "$T/w.byu.gz.gzi"
	bgzip -r "$T/w.byu.gz"
	same "$1.gzi" "$T/w.byu.gz.gzi"
	cp "$1.gzi" "$T/keep.gzi"
	$BACH index "$1" >/dev/null
	same "$1.gzi" "$T/keep.gzi"
}
$BACH gen --records 100000 --seed 5 -o "$T/a.byu.gz" # over the garbage one
checkix "$T/a.byu.gz"
bgzip -b $((54321 * 6)) -s 60 "$T/a.byu.gz" > "$T/bg.bin"
same "$T/bg.bin" "$T/dd.bin"
$BACH convert -q "$T/a.byu" "$T/c.byu.gz"
checkix "$T/c.byu.gz"
$BACH convert -q --to din "$T/a.byu" "$T/a.din"
$BACH convert -q "$T/a.din" "$T/d.byu.gz" # an import
checkix "$T/d.byu.gz"
$BACH convert -q --level 6 --threads 1 "$T/a.byu" "$T/l.byu.gz" # libdeflate
checkix "$T/l.byu.gz"
$BACH dump --range 54321:54331 "$T/l.byu.gz" | cmp -s - "$T/r54321.txt" ||
	fail "--range through convert's index"
# an empty trace: the index of no member, as bach index makes it (bgzip -r
# writes a count of -1 for a file that is its EOF block alone)
: > "$T/empty.byu"
$BACH convert -q "$T/empty.byu" "$T/e.byu.gz"
cp "$T/e.byu.gz.gzi" "$T/keep.gzi"
$BACH index "$T/e.byu.gz" >/dev/null
same "$T/e.byu.gz.gzi" "$T/keep.gzi"
[ "$(od -An -tx1 "$T/keep.gzi" | tr -d ' ')" = 0000000000000000 ] ||
	fail "empty trace's index: $(od -An -tx1 "$T/keep.gzi")"
if command -v sigrok-cli >/dev/null; then
	$BACH gen --records 3000 --seed 4 --pins vcd -o "$T/bus.vcd"
	$BACH decode "$T/bus.vcd" -o "$T/dec.byu.gz" 2>/dev/null
	checkix "$T/dec.byu.gz"
fi
# standard output gets none; a replaced file's index is replaced with it,
# never left describing the old one
$BACH gen --records 10 --seed 1 -o - > "$T/so.byu.gz"
[ ! -e "$T/-.gzi" ] || fail "an index for standard output"
cp "$T/a.byu.gz.gzi" "$T/c.byu.gz.gzi.old"
$BACH gen --records 70000 --seed 9 -o "$T/c.byu.gz"
checkix "$T/c.byu.gz"
cmp -s "$T/c.byu.gz.gzi" "$T/c.byu.gz.gzi.old" && fail "old index kept"
$BACH convert -q "$T/a.byu.gz" "$T/c.byu.gz"
checkix "$T/c.byu.gz"
# raw records written where a .byu.gz was: its index goes
cp "$T/a.byu.gz" "$T/x.byu.gz"
$BACH index "$T/x.byu.gz" >/dev/null
$BACH convert -q --to byu "$T/a.byu" "$T/x.byu.gz"
[ ! -e "$T/x.byu.gz.gzi" ] || fail "index kept beside raw records"
# an abandoned output leaves neither file nor index (the input is cut)
head -c 100000 "$T/a.byu.gz" > "$T/cut.byu.gz"
expect_status 1 $BACH convert -q "$T/cut.byu.gz" "$T/ab.byu.gz"
[ ! -e "$T/ab.byu.gz" ] && [ ! -e "$T/ab.byu.gz.gzi" ] ||
	fail "abandoned output left: $(ls "$T")"
ls -a "$T" | grep -q '^\.ab' && fail "temporary left: $(ls -a "$T")"

# bach verify names a stale index in a warning, and the trace is not
# called damaged for it: exit 0, no problem counted
$BACH gen --records 70000 --seed 9 -o "$T/v.byu.gz"
expect_status 0 $BACH verify "$T/v.byu.gz"
grep -q warning "$T/out" && fail "a fresh index warned: $(cat "$T/out")"
cp "$T/a.byu.gz.gzi" "$T/v.byu.gz.gzi" # another file's, made newer
touch -d '+1 minute' "$T/v.byu.gz.gzi" 2>/dev/null || touch "$T/v.byu.gz.gzi"
expect_status 0 $BACH verify "$T/v.byu.gz"
expect_out "warning: $T/v.byu.gz.gzi: "
expect_out "stale index: ignored"
expect_out "bach index $T/v.byu.gz\` rewrites it"
expect_out "v.byu.gz: OK, 70000 records"
expect_out "0 problems, 1 stale index"
# one whose size, first and last members fit but a middle entry does not:
# what the readers' checks pass, verify compares with the file's members
$BACH index "$T/v.byu.gz" >/dev/null
python3 - "$T/v.byu.gz.gzi" <<'PY'
import struct, sys
p = sys.argv[1]
raw = bytearray(open(p, 'rb').read())
c, u = struct.unpack_from('<QQ', raw, 8 + 16 * 2)
struct.pack_into('<QQ', raw, 8 + 16 * 2, c + 1, u)
open(p, 'wb').write(raw)
PY
expect_status 0 $BACH verify -q "$T/v.byu.gz"
expect_out "warning: $T/v.byu.gz.gzi: member 3 at byte offset"
expect_out "1 stale index"
$BACH index "$T/v.byu.gz" >/dev/null
expect_status 0 $BACH verify "$T/v.byu.gz"
grep -q warning "$T/out" && fail "rewritten index warned: $(cat "$T/out")"

# a capture directory: bachd's .byu.gz segments (compressor = record; the
# .gzi is gzip's, and htslib's) each get the index bgzip -r makes, and a
# range crosses segments
mkdir "$T/cap"
$BACH capture --driver fake --option records=400000 --option seed=3 \
	--set rotate_mb=1 --set compressor=record --output "$T/cap" 2>/dev/null
D=$(echo "$T"/cap/*/)
nseg=0
for f in "$D"seg-*.byu.gz; do
	[ -s "$f.gzi" ] || fail "$f: no index written by the capture"
	cp "$f" "$T/s.byu.gz"
	rm -f "$T/s.byu.gz.gzi"
	bgzip -r "$T/s.byu.gz"
	same "$f.gzi" "$T/s.byu.gz.gzi"
	nseg=$((nseg + 1))
done
[ "$nseg" -ge 2 ] || fail "only $nseg segments"
expect_status 0 $BACH verify "$D"
grep -q warning "$T/out" && fail "bachd's index warned: $(cat "$T/out")"
# a capture whose segment has another's index: named, not damage
seg1=$(ls "$D"seg-*.byu.gz | head -n 1)
seg2=$(ls "$D"seg-*.byu.gz | sed -n 2p)
cp "$seg1.gzi" "$T/seg1.gzi"
cp "$seg2.gzi" "$seg1.gzi"
expect_status 0 $BACH verify "$D"
expect_out "/$(basename "$seg1").gzi: its last member"
expect_out "0 problems, 1 stale index"
cp "$T/seg1.gzi" "$seg1.gzi"
$BACH dump "$D" > "$T/capall.txt"
# 1 MiB of records per segment: 174762 records, the first boundary
for s in 0 174760 174762 349520 399995; do
	$BACH dump --range $s:$((s + 5)) "$D" > "$T/r.txt"
	sed -n "$((s + 1)),$((s + 5))p" "$T/capall.txt" | cmp -s - "$T/r.txt" ||
		fail "capture --range $s"
done
# the same without the indexes, and after bach index rebuilt them
rm "$D"*.gzi
sed -n 349521,349525p "$T/capall.txt" > "$T/want.txt"
$BACH dump --range 349520:349525 "$D" | cmp -s - "$T/want.txt" || fail "no index"
expect_status 0 $BACH index "$D"
$BACH dump --range 349520:349525 "$D" | cmp -s - "$T/want.txt" || fail "bach index DIR"
for f in "$D"seg-*.byu.gz; do
	[ -s "$f.gzi" ] || fail "bach index DIR: $f.gzi missing"
done

# bachd's default .byu.zst segments: no .gzi beside them (the seek table
# in each is its index, docs/formats.md section 10), the same records, and
# a range crosses their boundaries the same
mkdir "$T/zcap"
$BACH capture --driver fake --option records=400000 --option seed=3 \
	--set rotate_mb=1 --output "$T/zcap" 2>/dev/null
Z=$(echo "$T"/zcap/*/)
[ "$(ls "$Z"seg-*.byu.zst | wc -l)" -ge 2 ] || fail "default capture: $(ls "$Z")"
ls "$Z" | grep -q '\.gzi$' && fail "a .gzi beside .byu.zst segments: $(ls "$Z")"
$BACH dump "$Z" | cmp -s - "$T/capall.txt" || fail "the .byu.zst capture's records"
for s in 0 174760 174762 349520 399995; do
	$BACH dump --range $s:$((s + 5)) "$Z" > "$T/r.txt"
	sed -n "$((s + 1)),$((s + 5))p" "$T/capall.txt" | cmp -s - "$T/r.txt" ||
		fail ".byu.zst capture --range $s"
done
# bach index names no segment that needs no index (as for raw ones)
expect_status 0 $BACH index "$Z"
[ ! -s "$T/out" ] || fail "bach index DIR of .byu.zst segments: $(cat "$T/out")"
expect_status 0 $BACH index "${Z}seg-000001.byu.zst"
expect_out "seg-000001.byu.zst: zstd, 1 frame, 184960 records: its seek table matches its frames"
ls "$Z" | grep -q '\.gzi$' && fail "bach index wrote a .gzi beside .byu.zst: $(ls "$Z")"

# ... but checks it: the seek table (zstd's seekable format) must be there
# and match the frames, each entry's offset a frame (RFC 8878 3.1.1) whose
# header's content size is the entry's. Frames of 64 KiB; the table's
# entries are 12 bytes (csize, dsize, checksum), then a 9-byte footer.
expect_status 0 $BACH gen --records 400000 --seed 3 -o "$T/all.byu"
expect_status 0 $BACH convert --zstd-frame-kb 64 "$T/all.byu" "$T/f.byu.zst"
expect_status 0 $BACH index "$T/f.byu.zst"
expect_out "f.byu.zst: zstd, 37 frames, 400000 records: its seek table matches its frames"
python3 - "$T/f.byu.zst" "$T" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", d, len(d) - 9)[0]
tab = len(d) - 9 - 12 * n - 8
assert struct.unpack_from("<I", d, tab)[0] == 0x184D2A5E
open(sys.argv[2] + "/notab.byu.zst", "wb").write(d[:tab])
e = lambda i: tab + 8 + 12 * i
x = bytearray(d)  # entries 2 and 36: the last frame is the short one
x[e(2):e(2) + 12], x[e(36):e(36) + 12] = d[e(36):e(36) + 12], d[e(2):e(2) + 12]
open(sys.argv[2] + "/swap.byu.zst", "wb").write(x)
x = bytearray(d)  # entry 5 claims 6 more bytes, entry 6 6 fewer
struct.pack_into("<I", x, e(5) + 4, struct.unpack_from("<I", d, e(5) + 4)[0] + 6)
struct.pack_into("<I", x, e(6) + 4, struct.unpack_from("<I", d, e(6) + 4)[0] - 6)
open(sys.argv[2] + "/size.byu.zst", "wb").write(x)
x = bytearray(d)  # entry 5's frame 1 byte longer, entry 6's 1 shorter
struct.pack_into("<I", x, e(5), struct.unpack_from("<I", d, e(5))[0] + 1)
struct.pack_into("<I", x, e(6), struct.unpack_from("<I", d, e(6))[0] - 1)
open(sys.argv[2] + "/moved.byu.zst", "wb").write(x)
PY
expect_status 1 $BACH index "$T/notab.byu.zst"
expect_err "notab.byu.zst: missing seek table: zstd file ends at byte offset $(wc -c < "$T/notab.byu.zst") without it"
expect_status 1 $BACH index "$T/swap.byu.zst"
expect_err "swap.byu.zst: seek table entry 2: the frame at byte offset"
expect_err "holds 65280 bytes, the table says 49920"
expect_status 1 $BACH index "$T/size.byu.zst"
expect_err "size.byu.zst: seek table entry 5: the frame at byte offset"
expect_err "holds 65280 bytes, the table says 65286"
expect_status 1 $BACH index "$T/moved.byu.zst"
expect_err "moved.byu.zst: seek table entry 6: no zstd frame at byte offset"
echo "index: ok"
