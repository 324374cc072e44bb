# tests/README.md is the map of the tests: it names every folder of tests/,
# every helper in tests/helpers/ and the Python module's tests, so that a
# new one is not left for the reader to find; and README.md names every
# document in docs/.
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
# and the top README's layout names every document in docs/ (its docs/
# entry: that line and the indented ones after it)
awk '/^docs\// { f = 1; print; next } f && /^  / { print; next } { f = 0 }' \
	"$TOP/README.md" > "$T/docs_entry"
[ -s "$T/docs_entry" ] || fail "README.md's layout has no docs/ entry"
for f in "$TOP"/docs/*.md; do
	grep -qw "$(basename "$f" .md)\.md" "$T/docs_entry" ||
		echo "docs/$(basename "$f")" >> "$T/nodoc"
done
[ ! -s "$T/nodoc" ] || fail "README.md's layout does not name: $(cat "$T/nodoc")"
echo ok
