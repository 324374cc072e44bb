# bach ls: the captures under an output directory, each as its manifest
# and its files say: records, lost, size, labels, state (clean, running,
# unfinished, recovered). Expected values come from the files themselves
# (bach stat of the trace, the sizes on disk), not from bach ls's reader.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"
command -v python3 > /dev/null || skip "no python3 to read bach ls --json"

# field CAPTURE KEY: member KEY of CAPTURE's object in $T/ls.json
field() { python3 -c 'import json,sys
for o in json.load(open(sys.argv[1])):
    if o["capture"] == sys.argv[2]:
        v = o[sys.argv[3]]
        print(v if isinstance(v, str) else json.dumps(v, sort_keys=True))' "$T/ls.json" "$1" "$2"; }
bytes_on_disk() { find "$1" -maxdepth 1 -type f -printf '%s\n' | awk '{ n += $1 } END { print n + 0 }'; }

O=$T/caps
mkdir "$O" "$O/not-a-capture"
"$BACH" capture --driver fake --option records=100000 --output "$O" --label run=7 --label who=me 2> "$T/log" ||
	fail "capture: $(cat "$T/log")"
"$BACH" capture --driver fake --option records=60000 --option drop_every=3 --policy drop \
	--output "$O" 2> "$T/log" || fail "capture: $(cat "$T/log")"
"$BACH" ls --json "$O" > "$T/ls.json" || fail "bach ls --json: $(cat "$T/ls.json")"
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/ls.json")" -eq 2 ] ||
	fail "not two captures: $(cat "$T/ls.json")"
for C in "$O"/2*Z*; do
	name=$(basename "$C")
	"$BACH" stat --json "$C" > "$T/st"
	recs=$(sed 's/^{"records":\([0-9]*\),.*/\1/' "$T/st")
	gaps=$(sed 's/.*"gap_markers":\([0-9]*\),"lost":\([0-9]*\),.*/\1/' "$T/st")
	lost=$(sed 's/.*"gap_markers":\([0-9]*\),"lost":\([0-9]*\),.*/\2/' "$T/st")
	# one count everywhere: records include the gap markers
	[ "$(field "$name" records)" -eq "$recs" ] || fail "$name: records $(field "$name" records), the trace holds $recs"
	[ "$(field "$name" gap_markers)" -eq "$gaps" ] || fail "$name: gap_markers $(field "$name" gap_markers), the trace holds $gaps"
	[ "$(field "$name" data)" -eq $((recs - gaps)) ] || fail "$name: data $(field "$name" data), the trace holds $((recs - gaps))"
	[ "$(field "$name" lost)" -eq "$lost" ] || fail "$name: lost $(field "$name" lost), the gap markers say $lost"
	[ "$(field "$name" bytes)" -eq "$(bytes_on_disk "$C")" ] || fail "$name: bytes $(field "$name" bytes), $(bytes_on_disk "$C") on disk"
	[ "$(field "$name" state)" = clean ] || fail "$name: state $(field "$name" state)"
done
first=$(basename "$(ls -d "$O"/2*Z* | head -n 1)")
[ "$(field "$first" labels)" = '{"run": "7", "who": "me"}' ] || fail "labels: $(field "$first" labels)"
"$BACH" ls "$O" > "$T/ls.txt" || fail "bach ls"
grep -q "^$first .* 100000 .* clean *run=7,who=me$" "$T/ls.txt" || fail "text: $(cat "$T/ls.txt")"
grep -q not-a-capture "$T/ls.txt" && fail "a directory that is no capture is listed"

# copy_edited DIR JSON: a copy of the first capture in DIR, its manifest's
# events given the members of JSON ({"started": {...}, "ended": {...}})
copy_edited() {
	mkdir "$1"
	cp -a "$O/$first" "$1/$first"
	python3 - "$1/$first/manifest.jsonl" "$2" << 'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
edit = json.loads(sys.argv[2])
for o in lines:
    o.update(edit.get(o["event"], {}))
open(sys.argv[1], "w").write("".join(json.dumps(o) + "\n" for o in lines))
EOF
}

# duration_seconds: the end minus the start, to the millisecond, as a
# decimal (19.045, not the double's 19.045000000000002)
D=$T/dur
copy_edited "$D" '{"started": {"time": "2026-01-02T03:04:05.000Z"},
	"ended": {"time": "2026-01-02T03:04:24.045Z"}}'
"$BACH" ls --json "$D" > "$T/d.json" || fail "bach ls --json: $(cat "$T/d.json")"
grep -qF '"duration_seconds":19.045,' "$T/d.json" ||
	fail "duration_seconds not 19.045: $(cat "$T/d.json")"

# a manifest's strings reach the terminal as text: C0 and C1 controls
# (ESC, and CSI, NEL, OSC as U+0080 to U+009F) in labels and the ended
# state are escaped; other UTF-8 stays as it is
H=$T/hostile
copy_edited "$H" '{"started": {"labels": {"run": "7\u009b2J", "who": "\u001b[31mm\u00e9"}},
	"ended": {"state": "clean\u0085x\u009d0;t\u0007"}}'
"$BACH" ls "$H" > "$T/h.txt" || fail "bach ls: $(cat "$T/h.txt")"
grep -qF 'run=7\xc2\x9b2J,who=\x1b[31mm'"$(printf '\303\251')" "$T/h.txt" ||
	fail "labels not escaped: $(cat -A "$T/h.txt")"
grep -qF 'clean\xc2\x85x\xc2\x9d0;t\x07' "$T/h.txt" || fail "state not escaped: $(cat -A "$T/h.txt")"
LC_ALL=C grep -q "$(printf '\302[\200-\237]')\|$(printf '[\001-\037]')" "$T/h.txt" &&
	fail "a control character printed raw: $(cat -A "$T/h.txt")"

# running while bachd writes; unfinished once it is killed; recovered after
bg "$BACHD" --driver fake --option rate=100000 --output "$O" 2> "$T/log"
P=$BGPID
three() { [ "$(ncaps "$O")" -eq 3 ]; }
wait_until 20 "the third capture" three
C=$(capdir "$O")
wait_until 20 "its first segment" test -e "$C/seg-000001.$SEG.part"
"$BACH" ls --json "$O" > "$T/ls.json"
[ "$(field "$(basename "$C")" state)" = running ] || fail "a capture bachd writes is $(field "$(basename "$C")" state)"
[ "$(field "$first" state)" = clean ] || fail "an older capture is $(field "$first" state) while bachd runs"
kill -KILL "$P"
reap "$P"
"$BACH" ls --json "$O" > "$T/ls.json"
[ "$(field "$(basename "$C")" state)" = unfinished ] || fail "a capture bachd left is $(field "$(basename "$C")" state)"
"$BACH" recover "$O" > /dev/null 2>&1 || fail "bach recover"
"$BACH" ls --json "$O" > "$T/ls.json"
[ "$(field "$(basename "$C")" state)" = recovered ] || fail "a recovered capture is $(field "$(basename "$C")" state)"

# a damaged manifest: listed as unreadable, named, exit 1; no DIR: exit 2
echo 'not json' >> "$O/$first/manifest.jsonl"
expect_status 1 "$BACH" ls "$O"
expect_err "$first/manifest.jsonl: line"
grep -q "^$first .* unreadable" "$T/out" || fail "damaged manifest: $(cat "$T/out")"
expect_status 2 "$BACH" ls "$T/nothere"
expect_err "nothere"
expect_status 2 "$BACH" ls
