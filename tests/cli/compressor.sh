# bachd's block compressor (docs/bachd.md, compressor): zstd at level 3 by
# default; the record encoder and libdeflate with compressor = record or
# libdeflate (.byu.gz); each writes the records of bach gen, and the
# manifest says which wrote them. compressor = zstd writes
# .byu.zst segments (docs/formats.md section 10) that zstd itself reads.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

$BACH gen --records 200000 --seed 3 -o "$T/want.byu"
for c in libdeflate record; do
	mkdir "$T/$c"
	expect_status 0 "$BACHD" --driver fake --option records=200000 --option seed=3 \
		--output "$T/$c" --set "compressor=$c"
	C=$(echo "$T/$c"/*/)
	want=$c
	# no level given: 1, the level used, in the started event
	head -n 1 "$C/manifest.jsonl" | grep -q "\"compressor\":\"$want\",\"level\":1," ||
		fail "$c: the started event does not name $want at level 1: $(head -n 1 "$C/manifest.jsonl")"
	expect_status 0 $BACH verify "$C"
	$BACH convert -q --to byu "$C" "$T/$c.byu"
	same "$T/want.byu" "$T/$c.byu"
	gzip -dc "$C"/seg-*.byu.gz | cmp -s - "$T/want.byu" || fail "$c: zcat differs"
done
# the record encoder's segments are smaller, and not libdeflate's bytes
r=$(wc -c < "$(echo "$T/record"/*/seg-000001.byu.gz)")
l=$(wc -c < "$(echo "$T/libdeflate"/*/seg-000001.byu.gz)")
[ "$r" -lt "$l" ] || fail "record encoder $r bytes, libdeflate $l"

# its levels are 1 and 2
expect_status 2 "$BACHD" --driver fake --option records=10 --output "$T/record" \
	--set compressor=record --set level=5
expect_err "level: the record encoder takes 1 to 2, not 5"
expect_status 0 "$BACHD" --check-config --driver fake --option records=10 \
	--output "$T/record" --set compressor=record --set level=2
expect_status 2 "$BACHD" --check-config --driver fake --output "$T/record" \
	--set compressor=lzma
expect_err "compressor"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T/record" \
	--set compressor=libdeflate --set level=13
expect_err "level: libdeflate takes 1 to 12, not 13"

# zstd: .byu.zst segments, read by bach and by zstd, at a level up to 19
command -v zstd > /dev/null || fail "zstd (Debian: zstd, scripts/deps.sh) is missing"
# with no level given, zstd's own 3 (make bench-compress: zstd 1's frames
# of bus traces are 60 to 70% larger than the record encoder's), the bytes
# that level = 3 writes
# (and zstd is the default compressor)
for c in zstd-nolevel zstd3; do
	mkdir "$T/$c"
	set -- --driver fake --option records=200000 --option seed=3 --output "$T/$c"
	[ "$c" = zstd3 ] && set -- "$@" --set compressor=zstd --set level=3
	expect_status 0 "$BACHD" "$@"
done
C=$(echo "$T/zstd-nolevel"/*/)
head -n 1 "$C/manifest.jsonl" | grep -q '"compressor":"zstd","level":3,' ||
	fail "zstd with no level: the started event does not say level 3: $(head -n 1 "$C/manifest.jsonl")"
same "$C/seg-000001.byu.zst" "$T/zstd3"/*/seg-000001.byu.zst
zstd -q -dc "$C/seg-000001.byu.zst" | cmp -s - "$T/want.byu" || fail "zstd with no level: zstd -d differs"
mkdir "$T/zstd"
expect_status 0 "$BACHD" --driver fake --option records=200000 \
	--option seed=3 --output "$T/zstd" --set compressor=zstd \
	--set level=19
C=$(echo "$T/zstd"/*/)
head -n 1 "$C/manifest.jsonl" | grep -q '"compressor":"zstd"' ||
	fail "zstd: the started event does not name it"
[ -f "$C/seg-000001.byu.zst" ] || fail "zstd: no seg-000001.byu.zst: $(ls "$C")"
expect_status 0 $BACH verify "$C"
# 1.2 MB of records: one frame (zstd_frame_kb's 8192: up to 128 blocks)
expect_out "seg-000001.byu.zst: OK, 200000 records, zstd, 1 frame and the seek table"
zstd -q -dc "$C"/seg-*.byu.zst | cmp -s - "$T/want.byu" || fail "zstd: zstd -d differs"
$BACH convert -q --to byu "$C" "$T/zstd.byu"
same "$T/want.byu" "$T/zstd.byu"
"$BACHD" --help | grep -q '^  compressor=libdeflate|record|zstd' ||
	fail "bachd --help lacks the compressor setting"
exit 0
