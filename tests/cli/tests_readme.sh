# tests/README.md is the map of the tests: it names every folder of tests/,
# every helper in tests/helpers/ and the Python module's tests, so that a
# new one is not left for the reader to find.
. "$TOP/tests/lib.sh"
R="$TOP/tests/README.md"
for d in "$TOP"/tests/*/; do
	d=$(basename "$d")
	grep -qF "\`$d/" "$R" || echo "the folder tests/$d/" >> "$T/missing"
done
for f in "$TOP"/tests/helpers/* "$TOP"/tests/models/*; do
	f=$(basename "$f")
	grep -qF "\`$f\`" "$R" || echo "the helper $f" >> "$T/missing"
done
[ ! -d "$TOP/python/tests" ] || grep -qF "python/tests/" "$R" ||
	echo "python/tests/" >> "$T/missing"
for f in lib.sh run.sh lsan.supp; do
	grep -qF "\`$f\`" "$R" || echo "tests/$f" >> "$T/missing"
done
[ ! -s "$T/missing" ] || fail "tests/README.md does not name: $(cat "$T/missing")"
echo ok
