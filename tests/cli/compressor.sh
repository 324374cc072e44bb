# bachd's block compressor (docs/bachd.md, compressor): the record encoder by
# default, libdeflate with compressor = libdeflate; both write the records of
# bach gen, and the manifest says which wrote them.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

$BACH gen --records 200000 --seed 3 -o "$T/want.byu"
for c in default libdeflate record; do
	mkdir "$T/$c"
	set -- --driver fake --option records=200000 --option seed=3 --output "$T/$c"
	[ "$c" = default ] || set -- "$@" --set "compressor=$c"
	expect_status 0 "$BACHD" "$@"
	C=$(echo "$T/$c"/*/)
	want=$c
	[ "$c" = default ] && want=record
	head -n 1 "$C/manifest.jsonl" | grep -q "\"compressor\":\"$want\"" ||
		fail "$c: the started event does not name $want: $(head -n 1 "$C/manifest.jsonl")"
	expect_status 0 $BACH verify "$C"
	$BACH convert -q --to byu "$C" "$T/$c.byu"
	same "$T/want.byu" "$T/$c.byu"
	gzip -dc "$C"/seg-*.byu.gz | cmp -s - "$T/want.byu" || fail "$c: zcat differs"
done
same "$T/default"/*/seg-000001.byu.gz "$T/record"/*/seg-000001.byu.gz
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
	--set compressor=zstd
expect_err "compressor"
"$BACHD" --help | grep -q '^  compressor=libdeflate|record' ||
	fail "bachd --help lacks the compressor setting"
exit 0
