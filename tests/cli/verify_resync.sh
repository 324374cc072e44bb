# bach verify goes on past a damaged gzip member: it names the damage (file
# and byte offset, exit 1), reads on at the next member (found through the
# .gzi index, or by looking for the next member header) and says how many
# records are still readable after the damage and how many bytes it passed
# over. The expected numbers come from Python's zlib inflating the members
# the damage left whole, the members found from their BSIZE fields as
# docs/formats.md section 3 lays them out, not from bach.
. "$TOP/tests/lib.sh"
command -v python3 > /dev/null || skip "no python3 to read the members"

# damage FILE OUT K...: OUT is FILE with members K... damaged (bytes in the
# middle of their deflate data flipped, or with "hdr" before K the gzip
# magic); prints "OFF_FIRST NEXT_OFF SKIPPED BEFORE AFTER MARK": the first
# damaged member's offset, the offset of the member after it, the bytes of
# the damaged members, the records before the first one and after it in
# the members left whole, and the place of the first gap marker after the
# first damaged member (from the member after it; -1: none)
cat > "$T/damage.py" << 'EOF'
import gzip, struct, sys, zlib
src, out, args = sys.argv[1], sys.argv[2], sys.argv[3:]
b = bytearray(open(src, "rb").read())
plain = not (b[3] & 4)
members = []
if plain:  # members as the test wrote them: their offsets in FILE.offsets
    offs = [int(x) for x in open(src + ".offsets").read().split()] + [len(b)]
    members = [(offs[i], offs[i + 1] - offs[i]) for i in range(len(offs) - 1)]
else:
    o = 0
    while o < len(b):
        size = struct.unpack("<H", b[o + 16:o + 18])[0] + 1
        members.append((o, size))
        o += size
hdr = [a.startswith("hdr") for a in args]
ks = [int(a[3:] if a.startswith("hdr") else a) for a in args]
for k, h in zip(ks, hdr):
    o, size = members[k]
    if h:
        b[o:o + 2] = b"\x00\x00"
    else:
        for i in range(o + size // 2, o + size // 2 + 16):
            b[i] ^= 0x5a
open(out, "wb").write(b)
recs, mark, first = [], -1, min(ks)
for k, (o, size) in enumerate(members):
    if k in ks:
        recs.append(None)
        continue
    d = zlib.decompressobj(31)
    data = d.decompress(bytes(b[o:o + size])) + d.flush()
    assert d.eof and not d.unused_data, k
    if k > first and mark < 0 and None not in recs[first + 1:]:
        for i in range(0, len(data), 6):
            c = data[i + 5]
            if c & 15 == 15 and (c >> 4) in (0, 2, 4, 6, 10, 11):
                mark = sum(recs[first + 1:]) + i // 6
                break
    recs.append(len(data) // 6)
skipped = sum(members[k][1] for k in ks)
before = sum(recs[:first])
after = sum(r for r in recs[first:] if r is not None)
nxt = members[first + 1][0] if first + 1 < len(members) else len(b)
print(members[first][0], nxt, skipped, before, after, mark)
EOF

# check FILE K...: damage FILE's members K... and verify the copy
check() {
	f=$1
	shift
	python3 "$T/damage.py" "$f" "$T/bad.byu.gz" "$@" > "$T/want" || fail "damage.py $*"
	read -r off next skipped before after mark < "$T/want"
	rm -f "$T/bad.byu.gz.gzi"
	[ -n "$GZI" ] && cp "$f.gzi" "$T/bad.byu.gz.gzi"
	expect_status 1 "$BACH" verify "$T/bad.byu.gz"
	grep -q "^$T/bad.byu.gz: .* at byte offset $off" "$T/out" || fail "members $*: the damage at $off is not named: $(cat "$T/out")"
	grep -qxF "$T/bad.byu.gz: reading on at byte offset $next, the next gzip member ($((next - off)) bytes skipped)" "$T/out" ||
		fail "members $*: not read on at $next: $(cat "$T/out")"
	grep -qF "$T/bad.byu.gz: damaged: $((before + after)) records read, $after of them after the damage ($skipped bytes skipped)" "$T/out" ||
		fail "members $*: want $before records before the damage and $after after it ($skipped bytes skipped): $(cat "$T/out")"
	grep -qF "verify: 1 file, $((before + after)) records, $# problem" "$T/out" || fail "members $*: summary: $(tail -n 1 "$T/out")"
}

"$BACH" gen --records 100000 --seed 3 -o "$T/a.byu.gz"
[ -f "$T/a.byu.gz.gzi" ] || fail "gen wrote no index"
for GZI in "" yes; do
	check "$T/a.byu.gz" 4          # a member in the middle
	check "$T/a.byu.gz" hdr4       # its header: not a gzip member there
	check "$T/a.byu.gz" 2 6        # two of them
	check "$T/a.byu.gz" 0          # the first
done
# the last data member: reading on at the EOF block finds nothing more
GZI=
n=$(python3 -c 'import struct,sys
b=open(sys.argv[1],"rb").read(); o=n=0
while o < len(b): o += struct.unpack("<H", b[o+16:o+18])[0] + 1; n += 1
print(n)' "$T/a.byu.gz")
check "$T/a.byu.gz" $((n - 2))
grep -q "damaged: .*, 0 of them after the damage" "$T/out" || fail "last member: $(cat "$T/out")"

# plain gzip members, no BC field: found by their header and inflated
python3 - "$T/p.byu.gz" "$T/a.byu.gz" << 'EOF'
import gzip, sys
data = gzip.open(sys.argv[2]).read()
out, offs, step = bytearray(), [], 6 * 7000
for i in range(0, len(data), step):
    offs.append(len(out))
    out += gzip.compress(data[i:i + step])
open(sys.argv[1], "wb").write(out)
open(sys.argv[1] + ".offsets", "w").write(" ".join(map(str, offs)))
EOF
check "$T/p.byu.gz" 5
check "$T/p.byu.gz" hdr5

# standard input cannot be read on: the damage ends it, as before
python3 "$T/damage.py" "$T/a.byu.gz" "$T/bad.byu.gz" 4 > "$T/want"
read -r off next skipped before after mark < "$T/want"
expect_status 1 sh -c '"$1" verify - < "$2"' sh "$BACH" "$T/bad.byu.gz"
grep -q "verify: 1 file, $before records, 1 problem" "$T/out" || fail "stdin: $(cat "$T/out")"

# a capture's damaged segment: named, read on, the other segments read, the
# summary counting what is readable (a damaged gzip member: compressor =
# record; a damaged zstd frame of the default: verify_resync_zstd.sh)
mkdir "$T/caps"
"$BACH" capture --driver fake --option records=600000 --option drop_every=9 --policy drop \
	--set rotate_mb=1 --set compressor=record --output "$T/caps" 2> "$T/log" ||
	fail "capture: $(cat "$T/log")"
C=$(ls -d "$T"/caps/2*Z*)
S=$C/seg-000001.byu.gz
[ -f "$C/seg-000002.byu.gz" ] || fail "one segment only"
python3 "$T/damage.py" "$S" "$T/seg.byu.gz" 7 > "$T/want" || fail "damage.py seg"
read -r off next skipped before after mark < "$T/want"
mv "$T/seg.byu.gz" "$S"
total=$(python3 -c 'import glob, gzip, sys
print(sum(len(gzip.open(f).read()) // 6 for f in glob.glob(sys.argv[1] + "/seg-*.byu.gz") if not f.endswith("seg-000001.byu.gz")))' "$C")
expect_status 1 "$BACH" verify "$C"
grep -qF "$S: damaged: " "$T/out" && grep -qF ", $after of them after the damage ($skipped bytes skipped)" "$T/out" ||
	fail "capture: $(cat "$T/out")"
grep -qF "$S: reading on at byte offset $next," "$T/out" || fail "capture: not read on: $(cat "$T/out")"
grep -q "seg-000002.byu.gz: OK, " "$T/out" || fail "capture: the next segment: $(cat "$T/out")"
# a gap marker after the damage is named by its place after where reading went on
[ "$mark" -ge 0 ] || fail "no gap marker after the damaged member"
grep -q "^$S: record $mark after byte offset $next: gap marker: " "$T/out" ||
	fail "capture: the gap marker $mark records after byte offset $next: $(grep 'after byte' "$T/out" | head -n 3)"
grep -q "^verify: [0-9]* files, $((total + before + after)) records (" "$T/out" ||
	fail "capture: want $((total + before + after)) records readable: $(tail -n 1 "$T/out")"
echo ok
