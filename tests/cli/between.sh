# --between A B for dump, stat and convert: the records of a capture from
# the first mark matching A (by text, or a marker's address) up to the
# next mark matching B after it. Expected ranges come from awk over the
# whole trace, and from the marks' own positions. bach marks lists them,
# against Python's reading of the manifest.
. "$TOP/tests/lib.sh"

mkdir "$T/caps"
# markers on the POST port and port 0x64; SIGUSR1 marks by text
"$BACH" capture --driver fake --option records=600000 --option seed=7 --option rate=400000 \
	--option timing=1 --output "$T/caps" --set marker=io:0x80,io:0x64 --set marker_rate=1000000 2> "$T/log" &
P=$!
sleep 0.6
kill -USR1 "$P"
sleep 0.5
kill -USR1 "$P"
wait "$P" || fail "capture: $(cat "$T/log")"
C=$(ls -d "$T"/caps/2*Z*)
"$BACH" dump --format csv "$C" > "$T/all.csv"

# by marker address: the first two records that write or read port 0x80
# (0x80's quadword, byte 0 enabled) and the first port 0x64 (byte 4 of 0x60)
awk -F, 'NR > 1 && $5 ~ /^IO_/ && $2 == "0x00000080" && $3 ~ /[02468ace]$/ { print $1 }' "$T/all.csv" | head -n 2 > "$T/p80"
awk -F, 'NR > 1 && $5 ~ /^IO_/ && $2 == "0x00000060" && $3 ~ /^0x[0-9a-f]*[0-9a-f]$/ { v = substr($3, 3, 1); if ((index("0123456789abcdef", v) - 1) % 2 == 0) print $1 }' "$T/all.csv" > "$T/p64all"
a=$(sed -n 1p "$T/p80")
b=$(sed -n 2p "$T/p80")
[ -n "$a" ] && [ -n "$b" ] || fail "the workload has no two port 0x80 cycles"
"$BACH" dump --format csv --between 0x80 128 "$C" > "$T/got.csv"
awk -F, -v a="$a" -v b="$b" 'NR == 1 || ($1 >= a && $1 < b)' "$T/all.csv" > "$T/want.csv"
same "$T/want.csv" "$T/got.csv"
# from port 0x80 to the first port 0x64 after it
c=$(awk -v a="$a" '$1 > a { print; exit }' "$T/p64all")
"$BACH" dump --between 0x80 0x64 "$C" > "$T/got.txt"
[ "$(wc -l < "$T/got.txt")" -eq $((c - a)) ] || fail "0x80 to 0x64: $(wc -l < "$T/got.txt") records, want $((c - a))"
# an address inside the quadword but a byte the cycle did not enable: no match
expect_status 2 "$BACH" dump --between 0x81 0x80 "$C"
expect_err "no mark matching '0x81'"

# by text: SIGUSR1 #1 to SIGUSR1 #2, in dump, stat and convert (either
# side of the directory)
r1=$(grep -F '"text":"SIGUSR1 #1"' "$C/manifest.jsonl" | sed 's/.*"at":\([0-9]*\).*/\1/')
r2=$(grep -F '"text":"SIGUSR1 #2"' "$C/manifest.jsonl" | sed 's/.*"at":\([0-9]*\).*/\1/')
[ -n "$r1" ] && [ -n "$r2" ] && [ "$r1" -lt "$r2" ] || fail "SIGUSR1 marks at '$r1' '$r2'"
"$BACH" dump "$C" --between 'SIGUSR1 #1' 'SIGUSR1 #2' > "$T/got.txt"
"$BACH" dump --skip "$r1" -n $((r2 - r1)) "$C" > "$T/want.txt"
same "$T/want.txt" "$T/got.txt"
"$BACH" stat --json --between 'SIGUSR1 #1' 'SIGUSR1 #2' "$C" > "$T/st"
grep -q "^{\"records\":$((r2 - r1))," "$T/st" || fail "stat --between: $(head -c 80 "$T/st"), want $((r2 - r1)) records"
"$BACH" convert -q --between 'SIGUSR1 #1' 'SIGUSR1 #2' "$C" "$T/part.csv"
awk -F, -v a="$r1" -v b="$r2" 'NR == 1 || ($1 >= a && $1 < b)' "$T/all.csv" > "$T/want.csv"
same "$T/want.csv" "$T/part.csv"
"$BACH" convert -q --between 'SIGUSR1 #1' 'SIGUSR1 #2' "$C" "$T/part.byu"
"$BACH" dump "$T/part.byu" | cmp -s - "$T/want.txt" || fail "convert --between to .byu"

# with a filter: the window is chosen by position, then filtered
"$BACH" dump --format csv --between 'SIGUSR1 #1' 'SIGUSR1 #2' --type io "$C" > "$T/got.csv"
awk -F, -v a="$r1" -v b="$r2" 'NR == 1 || ($1 >= a && $1 < b &&
	($5 ~ /^IO_/ || ($5 == "INVALID" && $4 ~ /f$/)))' "$T/all.csv" > "$T/want.csv"
[ "$(wc -l < "$T/want.csv")" -gt 10 ] || fail "too few I/O cycles between the marks"
same "$T/want.csv" "$T/got.csv"

# not found: exit 2 naming the mark; B must come after A
expect_status 2 "$BACH" dump --between 'no such mark' 'SIGUSR1 #2' "$C"
expect_err "no mark matching 'no such mark'"
expect_status 2 "$BACH" stat --between 'SIGUSR1 #2' 'SIGUSR1 #1' "$C"
expect_err "no mark matching 'SIGUSR1 #1' after 'SIGUSR1 #2'"
expect_status 2 "$BACH" convert --between 'SIGUSR1 #1' nope "$C" "$T/x.byu"
expect_err "no mark matching 'nope'"
[ ! -e "$T/x.byu" ] || fail "convert left an output after a mark was not found"
# not a capture directory, or B missing
"$BACH" gen --records 10 -o "$T/g.byu"
expect_status 2 "$BACH" dump --between a b "$T/g.byu"
expect_err "--between: needs one capture directory"
expect_status 2 "$BACH" dump "$C" --between a
expect_err "--between needs two marks"
# a range and marks together: one or the other
for cmd in dump stat; do
	expect_status 2 "$BACH" $cmd --range 0:10 --between a b "$C"
	expect_err "--range and --between: one or the other"
done
expect_status 2 "$BACH" convert --range 0:10 --between a b "$C" "$T/x.byu"
expect_err "--range and --between: one or the other"
[ ! -e "$T/x.byu" ] || fail "a refused convert left its output"

# bach marks: every mark event of the manifest (Python's json), in trace
# order, with its wall time; the clock of the record at its position is
# the fake board's (record k at bus clock 2k: nothing was lost)
command -v python3 >/dev/null 2>&1 || skip "python3 not installed: the manifest reference cannot run"
"$BACH" marks --json "$C" > "$T/marks.json"
python3 - "$C/manifest.jsonl" "$T/marks.json" "$C" <<'PY' || fail "bach marks --json disagrees with the manifest"
import json, sys
ev = [dict(json.loads(l), line=i + 1) for i, l in enumerate(open(sys.argv[1]))]
want = sorted((e for e in ev if e.get("event") == "mark"), key=lambda e: (e["at"], e["line"]))
got = json.load(open(sys.argv[2]))
assert got["capture"] == sys.argv[3], got["capture"]
got = got["marks"]
assert len(got) == len(want) > 3, (len(got), len(want))
texts = 0
for g, w in zip(got, want):
    for k in ("at", "record", "time", "source", "line"):
        assert g[k] == w[k], (k, g, w)
    assert g["count"] == w.get("count", 1), (g, w)
    if w["source"] == "marker":
        assert (g["address"], g["be"]) == (w["address"], w["be"]), (g, w)
    else:
        assert g["text"] == w["text"], (g, w)
        texts += 1
    assert g["clock"] == 2 * w["at"], (g, w)
assert texts == 2, texts
PY
"$BACH" marks "$C" > "$T/marks.txt"
[ "$(wc -l < "$T/marks.txt")" -eq $(($(grep -c '"event":"mark"' "$C/manifest.jsonl") + 1)) ] ||
	fail "bach marks: $(wc -l < "$T/marks.txt") lines"
head -n 1 "$T/marks.txt" | grep -q '^AT  *RECORD  *TIME  *CLOCK  *SECONDS  *SOURCE  *MARK$' ||
	fail "bach marks header: $(head -n 1 "$T/marks.txt")"
grep -q "^$r1  *$r1 .* signal  *SIGUSR1 #1\$" "$T/marks.txt" || fail "no SIGUSR1 #1 at $r1: $(cat "$T/marks.txt")"
grep -q "^$a  *$a .* $((2 * a))  .* marker  *0x00000080 be 0x[0-9a-f][0-9a-f]\$" "$T/marks.txt" ||
	fail "no marker 0x80 at $a: $(head "$T/marks.txt")"
# a manifest without segments (so no timing): times, no clocks
mkdir "$T/bare"
cp "$C/manifest.jsonl" "$T/bare/"
"$BACH" marks --json "$T/bare" | grep -q '"at":'"$r1"',"record":'"$r1"',"time":"[^"]*Z","clock":null,"seconds":null,"source":"signal","text":"SIGUSR1 #1"' ||
	fail "marks of a bare manifest: $("$BACH" marks --json "$T/bare")"
# not a capture: exit 2 saying so
expect_status 2 "$BACH" marks "$T"
expect_err "$T: not a capture directory (no manifest.jsonl)"
expect_status 2 "$BACH" marks "$T/all.csv"
expect_err "all.csv: not a capture directory"
expect_status 2 "$BACH" marks
expect_err "need one CAPDIR"
