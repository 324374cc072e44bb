# A .byu.zst.part recovered on a full disk (docs/formats.md section 10):
# its seek table needs 12 bytes a frame where a .byu.gz's EOF block needs
# 28, more than cutting the unfinished frame may free. Recovery then
# keeps fewer whole frames, so that their table fits, and closes the
# segment; before, it failed ("cannot close": a stale errno) and left the
# .part, and bachd's capture ended with 0 segments when its disk filled
# (bachd_hardening.sh, items 5 and 6, now and then). The frames are
# walked by zstd's format alone (tests/helpers/zstd_frames.py), the
# result checked by zstd -t.
. "$TOP/tests/lib.sh"
command -v zstd > /dev/null || fail "zstd (Debian: zstd, scripts/deps.sh) is missing"
ZF="python3 $TOP/tests/helpers/zstd_frames.py"
PAGE=$(getconf PAGESIZE)

mkdir "$T/c" "$T/fs"
mount -t tmpfs -o size=4m tmpfs "$T/fs" 2> /dev/null ||
	skip "mount -t tmpfs refused (not root, or no CAP_SYS_ADMIN here): a full disk needs a small filesystem of its own"
trap 'umount "$T/fs" 2> /dev/null || umount -l "$T/fs" 2> /dev/null; rm -rf "$T"' EXIT
# frames of one 64 KiB block, many of them in a small segment (the 8 MiB
# default would give one frame, and no table to squeeze)
"$BACH" capture --driver fake --option records=1000000 --option seed=3 \
	--set zstd_frame_kb=64 --output "$T/c" 2> "$T/log" || fail "capture: $(cat "$T/log")"
C=$(echo "$T"/c/*/)
S=${C}seg-000001.byu.zst
# the crash: the first M whole frames, then the next frame's first bytes
# up to the end of the page, where the table of M frames would cross
# into a page the full disk has not; M as large as that allows
python3 - "$S" "$PAGE" > "$T/cut" << 'EOF' || fail "no frame count fits the test"
import struct, sys
d = open(sys.argv[1], 'rb').read()
page = int(sys.argv[2])
n = struct.unpack('<I', d[-9:-5])[0]
tab = len(d) - (8 + 12 * n + 9)
ends, off = [], 0
for i in range(n):
    c = struct.unpack_from('<I', d, tab + 8 + 12 * i)[0]
    off += c
    ends.append((off, c))
for m in range(n - 1, 1, -1):
    end = ends[m - 1][0]
    rest = page - end % page
    if end % page and 8 + 12 * m + 9 > rest and rest < ends[m][1]:
        print(m, end, end + rest)
        sys.exit(0)
sys.exit(1)
EOF
read -r m fend psize < "$T/cut"
A="$T/fs/cap"
mkdir "$A"
head -c "$psize" "$S" > "$A/seg-000001.byu.zst.part"
grep -v '"event":"segment"\|"event":"ended"' "${C}manifest.jsonl" > "$A/manifest.jsonl"
[ "$($ZF whole "$A/seg-000001.byu.zst.part")" = "$fend $m" ] ||
	fail "the .part is not $m whole frames of $fend bytes: $($ZF whole "$A/seg-000001.byu.zst.part")"
# the disk full to its last page
dd if=/dev/zero of="$T/fs/fill" bs=4096 2> /dev/null || true
[ "$(stat -f -c %a "$T/fs")" -eq 0 ] || fail "the tmpfs is not full: $(df "$T/fs")"

expect_status 0 "$BACH" recover "$A"
[ ! -e "$A/seg-000001.byu.zst.part" ] || fail "the .part is left: $(ls "$A"): $(cat "$T/err")"
G="$A/seg-000001.byu.zst"
[ -f "$G" ] || fail "no segment after recovery: $(ls "$A"): $(cat "$T/err")"
# fewer frames than the .part held, as many as their table leaves room
# for, the start of the .part, and what zstd itself reads
set -- $($ZF table "$G")
k=$(($(wc -c < "$G") - $2))
[ "$1" -lt "$m" ] && [ "$1" -ge 1 ] || fail "$1 frames kept of $m"
[ "$3" -eq "$k" ] || fail "the seek table's frames are $3 bytes, $k precede it"
head -c "$k" "$G" > "$T/kept"
head -c "$k" "$S" | cmp -s - "$T/kept" || fail "the kept frames are not the start of the segment"
[ "$($ZF whole "$G")" = "$k $1" ] || fail "the frames are not whole: $($ZF whole "$G")"
zstd -q -t "$G" || fail "zstd -t rejects the recovered segment"
recs=$(($4 / 6))
# the manifest names it with those records, its size and CRC, the
# records it cut, and the capture verifies
ev=$(grep '"event":"segment","name":"seg-000001.byu.zst"' "$A/manifest.jsonl") ||
	fail "no segment event: $(cat "$A/manifest.jsonl")"
echo "$ev" | grep -q "\"records\":$recs,.*\"bytes\":$(wc -c < "$G")," || fail "$ev"
echo "$ev" | grep -q '"recovered":true' || fail "$ev"
rm "$T/fs/fill"
zstd -dcq "$G" > "$T/got.byu"
zstd -dcq "$S" | head -c $((recs * 6)) | cmp -s - "$T/got.byu" ||
	fail "the records kept are not the segment's first $recs"
expect_status 0 "$BACH" verify "$A"
echo "ok: $m frames in the .part, $1 kept on the full disk"
