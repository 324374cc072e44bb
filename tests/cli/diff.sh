#!/bin/sh
# bach diff: a capture against its replay, records inserted, missing and
# changed (with and without --align), gap markers (--ignore-gaps), every
# trace form, and the exit statuses: 0 equal, 1 different, 2 could not
# compare.
. "$TOP/tests/lib.sh"
BACHD="$(dirname "$BACH")/bachd"
ended() { grep '"event":"ended"' "$1"/manifest.jsonl | tail -n 1 | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }
capdir() { ls -d "$1"/2*Z* | tail -n 1; }
summary() { # MATCHED CHANGED ONLY_A ONLY_B: the last line of the output
	want="$1 matched, $2 changed, $3 only in A, $4 only in B"
	[ "$(tail -n 1 "$T/out")" = "$want" ] ||
		fail "summary '$(tail -n 1 "$T/out")', expected '$want'"
}
# records FROM COUNT FILE OUT: COUNT records of FILE from record FROM
records() { dd if="$3" bs=6 skip="$1" count="$2" status=none >>"$4"; }

# ---- a capture against its replay: equal -----------------------------

# the fake board with corrupt frames (so gap markers), its raw stream kept
mkdir "$T/cap" "$T/rep"
"$BACHD" --driver fake --option records=60000 --option frame=500 --option seed=9 \
	--option corrupt_every=7 --set raw_dump=yes --output "$T/cap" 2>"$T/log" ||
	fail "capture: $(cat "$T/log")"
C=$(capdir "$T/cap")
"$BACHD" --driver replay --option path="$C/board-stream.bin" --output "$T/rep" 2>"$T/log" ||
	fail "replay: $(cat "$T/log")"
R=$(capdir "$T/rep")
n=$("$BACH" stat "$C" | sed -n 's/^records: *\([0-9]*\).*/\1/p')
[ -n "$n" ] && [ "$n" -gt 0 ] || n=$(( $("$BACH" dump "$C" | wc -l) ))
expect_status 0 "$BACH" diff "$C" "$R"
summary "$n" 0 0 0
# the same records in other forms: a .byu, a .byu.gz, standard input
expect_status 0 "$BACH" convert "$R" "$T/rep.byu"
expect_status 0 "$BACH" convert "$C" "$T/cap.byu.gz"
expect_status 0 "$BACH" diff "$T/cap.byu.gz" "$T/rep.byu"
summary "$n" 0 0 0
expect_status 0 "$BACH" diff -q "$C" - <"$T/rep.byu"
[ ! -s "$T/out" ] || fail "-q printed: $(cat "$T/out")"

# ---- the capture against what the board model made: gaps and losses --

lost=$(ended "$C" lost)
[ "$lost" -gt 0 ] || fail "the corrupt frames lost nothing"
markers=$("$BACH" dump "$C" | grep -c ' GAP:' || true)
[ "$markers" -gt 0 ] || fail "no gap markers in the capture"
produced=$(ended "$C" produced)
expect_status 0 "$BACH" gen --records "$produced" --seed 9 -o "$T/model.byu"
# aligned, each gap marker is the capture's alone and the records it
# stands for are the model's alone
expect_status 1 "$BACH" diff --align "$C" "$T/model.byu"
summary $((produced - lost)) 0 "$markers" "$lost"
# gap markers passed over: only the lost records remain
expect_status 1 "$BACH" diff --align --ignore-gaps "$C" "$T/model.byu"
summary $((produced - lost)) 0 0 "$lost"
# a gap marker is shown as a gap, as dump shows it (docs/formats.md 5, 9):
# its lost count and the cause of the capture's manifest (unknown for a
# file outside a capture), on either side and in the context
gap=$(grep -m 1 '"event":"gap"' "$C/manifest.jsonl")
at=$(echo "$gap" | sed 's/.*"at":\([0-9]*\).*/\1/')
glost=$(echo "$gap" | sed 's/.*"lost":\([0-9]*\).*/\1/')
cause=$(echo "$gap" | sed 's/.*"cause":"\([a-z]*\)".*/\1/')
[ "$cause" = corrupt ] || fail "the first gap's cause: $gap"
line=$(printf '%12d  %08x 00 GAP:lost=%d:cause=' "$at" "$glost" "$glost")
expect_status 1 "$BACH" diff "$C" "$T/model.byu"
expect_out "first difference at record $at"
grep -qxF -- "- ${line}corrupt" "$T/out" || fail "A's gap marker: $(grep -m 1 "^- *$at " "$T/out")"
expect_status 1 "$BACH" diff "$T/model.byu" "$C"
grep -qxF -- "+ ${line}corrupt" "$T/out" || fail "B's gap marker: $(grep -m 1 "^+ *$at " "$T/out")"
expect_status 1 "$BACH" diff "$T/cap.byu.gz" "$T/model.byu"
grep -qxF -- "- ${line}unknown" "$T/out" || fail "a file's gap marker: $(grep -m 1 "^- *$at " "$T/out")"
expect_status 0 "$BACH" convert -q "$T/cap.byu.gz" "$T/gchg.byu"
printf '\377' | dd of="$T/gchg.byu" bs=1 seek=$((6 * (at + 2) + 4)) conv=notrunc status=none
expect_status 1 "$BACH" diff "$C" "$T/gchg.byu"
expect_out "first difference at record $((at + 2))"
grep -qxF -- "  ${line}corrupt" "$T/out" || fail "a gap marker in the context: $(cat "$T/out")"

# the help's run of matching records is the one docs/formats.md section 9
# gives (RUN in diff.c)
run=$(sed -n 's/.*smallest shift k of A or of B (A first at equal k) after which \([0-9]*\) records.*/\1/p' \
	"$TOP/docs/formats.md")
[ -n "$run" ] || fail "docs/formats.md section 9 names no run"
"$BACH" help diff | tr -s ' \n' '  ' | grep -q "after which $run records" ||
	fail "bach help diff does not say $run records match: $("$BACH" help diff | grep -A 1 'after which')"

# ---- one record inserted, one missing, one changed --------------------

expect_status 0 "$BACH" gen --records 20000 --seed 5 -o "$T/g.byu"
: >"$T/ins.byu"
records 0 5000 "$T/g.byu" "$T/ins.byu"
printf '\022\064\126\170\000\320' >>"$T/ins.byu" # 12345678 00 NC_D_READ
records 5000 15000 "$T/g.byu" "$T/ins.byu"
# by position: everything after the insertion differs
expect_status 1 "$BACH" diff "$T/ins.byu" "$T/g.byu"
expect_out "first difference at record 5000"
expect_out "-         5000  12345678 00 NC_D_READ"
grep -q '^ *4999  ' "$T/out" || fail "no context before the difference: $(cat "$T/out")"
# aligned: exactly the one record, A's alone
expect_status 1 "$BACH" diff --align "$T/ins.byu" "$T/g.byu"
summary 20000 0 1 0
expect_status 1 "$BACH" diff --align "$T/g.byu" "$T/ins.byu"
summary 20000 0 0 1
# a missing record
: >"$T/del.byu"
records 0 7000 "$T/g.byu" "$T/del.byu"
records 7001 12999 "$T/g.byu" "$T/del.byu"
expect_status 1 "$BACH" diff --align "$T/g.byu" "$T/del.byu"
summary 19999 0 1 0
# a changed record: one changed, nothing else, with or without --align
cp "$T/g.byu" "$T/chg.byu"
printf '\377' | dd of="$T/chg.byu" bs=1 seek=$((6 * 12345 + 4)) conv=notrunc status=none
expect_status 1 "$BACH" diff "$T/g.byu" "$T/chg.byu"
summary 19999 1 0 0
expect_out "first difference at record 12345"
expect_status 1 "$BACH" diff --align "$T/g.byu" "$T/chg.byu"
summary 19999 1 0 0
# one a prefix of the other
: >"$T/head.byu"
records 0 100 "$T/g.byu" "$T/head.byu"
expect_status 1 "$BACH" diff "$T/g.byu" "$T/head.byu"
expect_out "first difference at record 100: B ends there"
summary 100 0 19900 0

# ---- gap markers: --ignore-gaps ---------------------------------------

: >"$T/gap.byu"
records 0 3000 "$T/g.byu" "$T/gap.byu"
printf '\000\000\000\007\000\017' >>"$T/gap.byu" # a gap marker: 7 lost
records 3000 17000 "$T/g.byu" "$T/gap.byu"
printf '\000\000\000\001\000\017' >>"$T/gap.byu"
expect_status 1 "$BACH" diff "$T/gap.byu" "$T/g.byu"
expect_status 0 "$BACH" diff --ignore-gaps "$T/gap.byu" "$T/g.byu"
summary 20000 0 0 0
expect_status 0 "$BACH" diff --ignore-gaps "$T/g.byu" "$T/gap.byu"
expect_status 1 "$BACH" diff --align "$T/gap.byu" "$T/g.byu"
summary 20000 0 2 0

# ---- could not compare: 2, never 1 ------------------------------------

expect_status 2 "$BACH" diff "$T/g.byu" "$T/nonexistent.byu"
expect_err "nonexistent.byu"
expect_status 0 "$BACH" convert "$T/g.byu" "$T/g.byu.gz"
head -c 3000 "$T/g.byu.gz" >"$T/cut.byu.gz"
expect_status 2 "$BACH" diff "$T/g.byu.gz" "$T/cut.byu.gz"
expect_err "cut.byu.gz: truncated gzip member at byte offset"
head -c 1000 "$T/g.byu" >"$T/odd.byu" # 166 records and 4 bytes
expect_status 2 "$BACH" diff "$T/odd.byu" "$T/g.byu"
expect_err "odd.byu: truncated record at byte offset 996"
expect_status 2 "$BACH" diff "$T/g.byu"
expect_status 2 "$BACH" diff --window 0 "$T/g.byu" "$T/g.byu"

# --range: the same records of each side, reached through the index, with
# differences at their index in the whole trace
$BACH gen --records 100000 --seed 3 -o "$T/ra.byu.gz"
$BACH gen --records 100000 --seed 3 -o "$T/rb.byu"
printf '\000\000\000\000\000\000' | dd of="$T/rb.byu" bs=1 seek=$((70000 * 6)) conv=notrunc 2> /dev/null
expect_status 0 "$BACH" diff --range 1000:60000 "$T/ra.byu.gz" "$T/rb.byu"
expect_out "59000 matched, 0 changed, 0 only in A, 0 only in B"
expect_status 1 "$BACH" diff --range 69990:70010 "$T/ra.byu.gz" "$T/rb.byu"
expect_out "first difference at record 70000"
expect_out "19 matched, 1 changed, 0 only in A, 0 only in B"
expect_status 2 "$BACH" diff --range 5:2 "$T/ra.byu.gz" "$T/rb.byu"
expect_err "--range: not START:END"
# ---- every form bach convert reads, through convert's own import path --
# A trace against its export read back (--from, or a name that implies the
# format, as convert takes them; gzip-compressed too): equal. The records
# an export keeps are those of the trace it makes when imported, so the
# trace compared is that one.
$BACH gen --records 20000 --seed 3 -o "$T/x.byu"
for f in din laplace laplace-bin tracematcher; do
	$BACH convert -q --to $f "$T/x.byu" "$T/x.$f"
	$BACH convert -q --from $f "$T/x.$f" "$T/k.$f.byu.gz"
	$BACH convert -q --to $f "$T/k.$f.byu.gz" "$T/y.$f"
	n=$(($($BACH dump "$T/k.$f.byu.gz" | wc -l)))
	[ "$n" -gt 5000 ] || fail "$f: only $n records"
	expect_status 0 "$BACH" diff --from-b $f "$T/k.$f.byu.gz" "$T/y.$f"
	summary "$n" 0 0 0
	gzip -c "$T/y.$f" >"$T/y.$f.gz"
	expect_status 0 "$BACH" diff -q --from-a $f "$T/y.$f.gz" "$T/k.$f.byu.gz"
	expect_status 0 "$BACH" diff --from $f "$T/y.$f" "$T/y.$f.gz"
	summary "$n" 0 0 0
done
# idtrace too: its export folds a run of fetches in one line into one entry
# (docs/formats.md 7.6), as its import makes two records of an entry, so
# the export of an import is the export itself, and imports back to it
$BACH convert -q --to idtrace "$T/x.byu" "$T/x.idtrace"
$BACH convert -q --from idtrace "$T/x.idtrace" "$T/k.idtrace.byu"
$BACH convert -q --to idtrace "$T/k.idtrace.byu" "$T/y.idtrace"
cmp -s "$T/x.idtrace" "$T/y.idtrace" ||
	fail "idtrace: the export of its own import differs from the export"
expect_status 0 "$BACH" diff --from-b idtrace "$T/k.idtrace.byu" "$T/y.idtrace"
summary "$(($(wc -c <"$T/k.idtrace.byu") / 6))" 0 0 0
# .din is read as din by its name, as convert reads it
expect_status 0 "$BACH" diff "$T/k.din.byu.gz" "$T/y.din"
summary "$(($($BACH dump "$T/k.din.byu.gz" | wc -l)))" 0 0 0
# an export changed on one line: record 5000 differs, named with both sides
awk 'NR == 5001 { $NF = "1000"; } { print }' "$T/y.laplace" >"$T/z.laplace"
expect_status 1 "$BACH" diff --from-b laplace "$T/k.laplace.byu.gz" "$T/z.laplace"
expect_out "first difference at record 5000"
expect_out "+         5000  00001000 "
n=$(($($BACH dump "$T/k.laplace.byu.gz" | wc -l)))
summary $((n - 1)) 1 0 0
# the golden CIS 501 trace against the trace convert makes of it
G="$TOP/tests/golden/convert"
$BACH convert -q --from cis501 --mask-address "$G/cis501.txt" "$T/c.byu"
expect_status 0 "$BACH" diff --from-b cis501 --mask-address "$T/c.byu" "$G/cis501.txt"
summary 12 0 0 0
# an import's damage is the importer's message, and no comparison (2)
expect_status 2 "$BACH" diff --from-b cis501 "$T/c.byu" "$G/cis501.txt"
expect_err "cis501.txt: line 6: address above 4 GiB"
# convert's rules: --range is for traces, a format must be one convert reads
expect_status 2 "$BACH" diff --range 1:5 --from-b laplace "$T/k.laplace.byu.gz" "$T/y.laplace"
expect_err "--range: for traces, not imports"
expect_status 2 "$BACH" diff --from csv "$T/x.byu" "$T/x.byu"
expect_err "--from: unknown format 'csv'"
# --as FMT compares what FMT keeps (its export read back, for both sides):
# a trace against its own export is equal, though by record the import
# differs (NC_I_FETCH for I_FETCH, BE# a span); under --as a name ending in
# .FMT (or .FMT.gz) is read as FMT. The count is the export's references,
# counted by wc: one line each.
$BACH convert -q --to laplace "$T/x.byu" "$T/x.laplace"
expect_status 1 "$BACH" diff --from-b laplace "$T/x.byu" "$T/x.laplace"
expect_status 0 "$BACH" diff --as laplace "$T/x.byu" "$T/x.laplace"
summary $(($(wc -l <"$T/x.laplace"))) 0 0 0
gzip -c "$T/x.laplace" >"$T/x.laplace.gz"
expect_status 0 "$BACH" diff -q --as laplace "$T/x.laplace.gz" "$T/x.byu"
# a real difference still shows: one reference's address changed
awk 'NR == 101 { $NF = "1000"; } { print }' "$T/x.laplace" >"$T/z.laplace"
expect_status 1 "$BACH" diff --as laplace "$T/x.byu" --from-b laplace "$T/z.laplace"
expect_out "first difference at record 100"
expect_out "+          100  00001000 "
summary $(($(wc -l <"$T/x.laplace") - 1)) 1 0 0
for f in din dinx laplace-bin tracematcher idtrace; do
	$BACH convert -q --to $f "$T/x.byu" "$T/x.$f"
	expect_status 0 "$BACH" diff --as $f "$T/x.byu" "$T/x.$f"
	expect_status 0 "$BACH" diff -q --as $f --from-a $f "$T/x.$f" "$T/x.byu"
done
# the text exports: their line counts are what the projection compares
for f in din dinx tracematcher; do
	expect_status 0 "$BACH" diff --as $f "$T/x.byu" "$T/x.$f"
	summary $(($(wc -l <"$T/x.$f"))) 0 0 0
done
# a format bach writes but does not read, or reads but does not write, has
# no projection: a usage error naming it
expect_status 2 "$BACH" diff --as csv "$T/x.byu" "$T/x.byu"
expect_err "--as: bach does not read 'csv'"
expect_status 2 "$BACH" diff --as lackey "$T/x.byu" "$T/x.byu"
expect_err "--as: bach does not write 'lackey'"
# standard input as both sides: one stream cannot be read twice (A would
# take its start, B the rest as raw records); a usage error, as is - twice
# in any command's list of traces
expect_status 2 sh -c '"$1" diff - - < "$2"' sh "$BACH" "$T/cap.byu.gz"
expect_err "-: standard input given twice: it can be read only once"
[ ! -s "$T/out" ] || fail "diff - - compared: $(cat "$T/out")"
expect_status 2 sh -c '"$1" diff --from lackey - - < "$2"' sh "$BACH" "$T/cap.byu.gz"
expect_err "-: standard input given twice"
for cmd in dump stat verify "sim --l1 8k:32:2" mrc "plot mix -o $T/p.svg"; do
	expect_status 2 sh -c '"$1" $2 - - < "$3"' sh "$BACH" "$cmd" "$T/cap.byu.gz"
	expect_err "-: standard input given twice: it can be read only once"
done
exit 0
