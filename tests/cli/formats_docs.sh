# The documents name every format bach convert reads and writes, and no
# other: the list of formats in `bach help convert` (printed from the one
# table of formats, lib/formats/formats.c) against docs/formats.md (the titles of
# its import and export sections, and a subsection for each) and the
# convert entry of bach(1), so that a new format cannot go undocumented.
. "$TOP/tests/lib.sh"
F="$TOP/docs/formats.md"

# the rows of the list: NAME WAYS (in, out or in/out)
$BACH help convert | awk '/^Formats/ { on = 1; next } !/^  [^ ]/ { on = 0 }
	on { print $1, $2 }' > "$T/rows"
[ "$(wc -l < "$T/rows")" -ge 10 ] || fail "bach help convert lists [$(cat "$T/rows")]"
# ways W: the names that go W, sorted
ways() {
	awk -v w="$1" '{ n = split($2, d, "/")
		for (i = 1; i <= n; i++) if (d[i] == w) print $1 }' "$T/rows" | sort
}
ways in > "$T/in"
ways out > "$T/out"
[ -s "$T/in" ] && [ -s "$T/out" ] || fail "no in or out in [$(cat "$T/rows")]"

# docs/formats.md: a trace format has a section of its own ("## 2.
# `.byu`: ..."); the others are named in the title of the imports section
# (`bach convert --from a|b|...`) when read, of the exports when written
grep '^## [0-9]*\. `\.[a-z0-9.-]*`' "$F" | sed 's/^[^`]*`\.\([^`]*\)`.*/\1/' |
	sort > "$T/traces"
[ -s "$T/traces" ] || fail "docs/formats.md has no section for the trace formats"
# section WORD OPTION: the names in that section's title, sorted
title() {
	sed -n "s/^## [0-9]*\\. $1 (\`bach convert --$2 \\([^\`]*\\)\`)\$/\\1/p" "$F" |
		tr '|' '\n' | sort
}
for s in "Imports from in" "Exports to out"; do
	set -- $s
	title "$1" "$2" > "$T/doc"
	comm -23 "$T/$3" "$T/traces" > "$T/want"
	[ -s "$T/doc" ] || fail "docs/formats.md has no '## N. $1 (\`bach convert --$2 ...\`)' section"
	cmp -s "$T/want" "$T/doc" ||
		fail "docs/formats.md's $1 section names [$(echo $(cat "$T/doc"))]; bach convert --$2 takes [$(echo $(cat "$T/want"))]"
	# ... and each has a subsection whose title names it
	awk -v s="## [0-9]+\\\\. $1 " '/^## / { on = $0 ~ "^" s; next }
		on && /^### / { gsub(/[,()]/, " "); for (i = 3; i <= NF; i++) print $i }' \
		"$F" > "$T/sub"
	while read -r n; do
		grep -qxF -- "$n" "$T/sub" ||
			fail "docs/formats.md: no subsection of $1 is titled with $n"
	done < "$T/want"
done
while read -r n; do
	grep -qxF -- "$n" "$T/in" && grep -qxF -- "$n" "$T/out" ||
		fail "docs/formats.md documents the trace format .$n, which bach convert does not read and write"
done < "$T/traces"

# bach(1): the convert entry names each
awk '/^\*convert\* / { on = 1 } on && !NF { exit } on' "$TOP/docs/man/bach.1.scd" > "$T/man"
[ -s "$T/man" ] || fail "bach.1.scd has no convert entry"
while read -r n w; do
	grep -qF -- "*$n*" "$T/man" || fail "bach(1)'s convert entry does not name $n"
done < "$T/rows"
echo ok
