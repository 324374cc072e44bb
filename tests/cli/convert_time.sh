#!/bin/sh
# bach convert --to laplace|laplace-bin|tracematcher takes the time field
# from the trace's timing sidecar when it has one (docs/formats.md 7.3,
# 7.5): the clocks bach dump --time shows, record for record; without a
# sidecar (or with --no-time), the position as before.
. "$TOP/tests/lib.sh"

# a capture with the fake board's clocks, frames lost on the way (gap
# markers, skipped by the exports)
mkdir "$T/c"
$BACH capture --driver fake --option records=20000 --option seed=3 \
	--option frame=1000 --option drop_every=3 --option timing=1 \
	--output "$T/c" 2> "$T/err" || fail "capture: $(cat "$T/err")"
C=$(ls -d "$T"/c/2*Z*)

# the reference: dump --time's clock of each record an export keeps
$BACH dump --time "$C" | awk '$3 ~ /^(NC_)?(I_FETCH|D_READ)$|^(WRITE_BACK|D_WRITE)$/ { print $4 }' \
	> "$T/want"
[ "$(wc -l < "$T/want")" -gt 10000 ] || fail "too few records: $(wc -l < "$T/want")"
$BACH dump --time "$C" | awk '$3 ~ /^(NC_)?D_READ$|^(WRITE_BACK|D_WRITE)$/ { print $4 }' \
	> "$T/want_data"
# the gaps are there, so the clocks are not the positions
$BACH dump "$C" | grep -q " GAP:" || fail "no gap markers in the capture"

hex2dec='function h(s,  i, v) { v = 0; for (i = 1; i <= length(s); i++)
	v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }'
expect_status 0 $BACH convert --to laplace "$C" "$T/l.txt"
awk "$hex2dec"' { print h($2) }' "$T/l.txt" > "$T/got"
same "$T/got" "$T/want"

expect_status 0 $BACH convert --to laplace-bin "$C" "$T/l.bin"
# the 8-byte timestamp at offset 1 of each 18-byte record
od -An -v -tu1 -w18 "$T/l.bin" | awk '{ v = 0; for (i = 9; i >= 2; i--) v = v * 256 + $i; print v }' \
	> "$T/got"
same "$T/got" "$T/want"

expect_status 0 $BACH convert --to tracematcher "$C" "$T/tm.txt"
awk '{ print $1 }' "$T/tm.txt" > "$T/got"
same "$T/got" "$T/want_data"

# a range: the clocks of those records
expect_status 0 $BACH convert --range 5000:5100 --to laplace "$C" "$T/r.txt"
$BACH dump --time --range 5000:5100 "$C" |
	awk '$3 ~ /^(NC_)?(I_FETCH|D_READ)$|^(WRITE_BACK|D_WRITE)$/ { print $4 }' > "$T/want"
awk "$hex2dec"' { print h($2) }' "$T/r.txt" > "$T/got"
same "$T/got" "$T/want"

# --no-time, and a trace without a sidecar: the position (hex), as before
$BACH dump "$C" | awk '$3 ~ /^(NC_)?(I_FETCH|D_READ)$|^(WRITE_BACK|D_WRITE)$/ { print NR - 1 }' \
	> "$T/pos"
expect_status 0 $BACH convert --no-time --to laplace "$C" "$T/n.txt"
awk "$hex2dec"' { print h($2) }' "$T/n.txt" > "$T/got"
same "$T/got" "$T/pos"
$BACH convert -q "$C" "$T/plain.byu"
[ ! -e "$T/plain.time.gz" ] || fail "a sidecar for plain.byu"
expect_status 0 $BACH convert --to laplace "$T/plain.byu" "$T/p.txt"
awk "$hex2dec"' { print h($2) }' "$T/p.txt" > "$T/got"
same "$T/got" "$T/pos"

# a damaged sidecar fails the export, naming it; no output left
cp "$T/plain.byu" "$T/d.byu"
cut_member "$C/seg-000001.time.gz" "$T/d.time.gz"
expect_status 1 $BACH convert --to laplace "$T/d.byu" "$T/d.txt"
expect_err "d.time.gz: truncated gzip member at byte offset"
[ ! -e "$T/d.txt" ] || fail "a failed export left d.txt"
# records without a time (BACH_TIME_NONE, what a capture has before its
# first timed block): each takes the time before it, 0 before the first.
# The sidecar is written here by hand after docs/formats.md 3.2 (a BGZF
# member with BC and BT, then the EOF block)
if [ -x /usr/bin/python3 ]; then
	$BACH gen --records 8 --seed 1 -o "$T/n.byu"
	/usr/bin/python3 - "$T/n.time.gz" <<'PY'
import struct, sys, zlib
N = (1 << 64) - 1
raw = b"".join(struct.pack("<Q", e) for e in [N, N, 100, 102, N, 110, N, 120])
c = zlib.compressobj(6, zlib.DEFLATED, -15)
data = c.compress(raw) + c.flush()
xtra = b"BC" + struct.pack("<HH", 2, 0) + b"BT" + struct.pack("<HQ", 8, 1000)
m = (b"\x1f\x8b\x08\x04\0\0\0\0\0\xff" + struct.pack("<H", len(xtra)) + xtra +
     data + struct.pack("<II", zlib.crc32(raw), len(raw)))
m = m[:16] + struct.pack("<H", len(m) - 1) + m[18:]
eof = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")
open(sys.argv[1], "wb").write(m + eof)
PY
	$BACH dump --time "$T/n.byu" | awk '$4 != "-" { last = $4 } { print last + 0 }' > "$T/want"
	$BACH dump --time "$T/n.byu" | grep -q -- ' - -$' ||
		fail "no record without a time: $($BACH dump --time "$T/n.byu")"
	expect_status 0 $BACH convert --to laplace "$T/n.byu" "$T/n.txt"
	awk "$hex2dec"' { print h($2) }' "$T/n.txt" > "$T/got"
	same "$T/got" "$T/want"
fi
echo "convert_time: ok"
