# Provenance survives replay (docs/bachd.md section 3, replay): a replay of
# a capture directory carries its marks (SIGUSR1) and in-band markers
# (merged ones too) at the same record positions, its gaps as gap events
# with their lost counts and causes, its labels (the replay's own winning)
# and a "source" object saying where it came from; --between, verify and
# ls read the replay as they read the source.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"
command -v python3 > /dev/null || skip "no python3 to read the manifests"

# events DIR KIND: DIR's events of KIND, one JSON line each, sorted, without
# the members a replay writes anew (time, segment, record, replayed)
events() { python3 -c 'import json, sys
out = []
for line in open(sys.argv[1] + "/manifest.jsonl"):
    e = json.loads(line)
    if e["event"] != sys.argv[2]:
        continue
    for k in ("time", "segment", "record", "replayed"):
        e.pop(k, None)
    out.append(json.dumps(e, sort_keys=True))
print("\n".join(sorted(out)))' "$1" "$2"; }
# started MEMBER DIR: a member of DIR's started event (a/b for nested)
started() { python3 -c 'import json, sys
v = json.loads(open(sys.argv[2] + "/manifest.jsonl").readline())
for k in sys.argv[1].split("/"):
    v = v[k]
print(v if isinstance(v, str) else json.dumps(v, sort_keys=True))' "$1" "$2"; }

# the source: frames lost (drop_every: gap markers), markers on the POST
# port capped at 2 a second (merged events with count and last_at), two
# SIGUSR1 marks, labels
mkdir "$T/caps" "$T/rep"
bg "$BACH" capture --driver fake --option records=700000 --option seed=7 --option rate=400000 \
	--option frame=1000 --option drop_every=5 --policy drop \
	--set marker=io:0x80 --set marker_rate=2 \
	--label machine=p166 --label run=1 --output "$T/caps" 2> "$T/log"
P=$BGPID
first_seg() { ls "$T"/caps/2*Z*/seg-000001.* > /dev/null 2>&1; }
wait_until 20 "the first segment" first_seg
sleep 0.4
kill -USR1 "$P"
sleep 0.5
kill -USR1 "$P"
reap_within 30 "$P"
[ "$RC" -eq 0 ] || fail "the source capture exited $RC: $(cat "$T/log")"
C=$(capdir "$T/caps")
events "$C" mark > "$T/src.marks"
grep -q '"text": "SIGUSR1 #2"' "$T/src.marks" || fail "the source has no SIGUSR1 marks: $(cat "$T/src.marks")"
grep -q '"source": "marker"' "$T/src.marks" || fail "the source has no marker events"
grep -q '"last_at"' "$T/src.marks" || fail "the source has no merged marker event"
[ "$(evcount "$C" gap)" -gt 10 ] || fail "drop_every=5 lost too little: $(evcount "$C" gap) gaps"

# the replay, with labels of its own: run replaces the source's, who is new
"$BACH" capture --driver replay --option path="$C" --output "$T/rep" \
	--label run=2 --label who=me 2> "$T/log" || fail "replay: $(cat "$T/log")"
R=$(capdir "$T/rep")

# marks and markers: the same texts, rules, counts, at the same positions
events "$R" mark > "$T/rep.marks"
same "$T/src.marks" "$T/rep.marks"
n=$(grep -c '"event":"mark"' "$R/manifest.jsonl")
[ "$(grep '"event":"mark"' "$R/manifest.jsonl" | grep -c '"replayed":true')" -eq "$n" ] ||
	fail "replayed marks without \"replayed\":true"
# ... and their source indexes: lost records counted as the source counted them
python3 -c 'import json, sys
def marks(d):
    return sorted((e["at"], e["record"]) for e in map(json.loads, open(d + "/manifest.jsonl")) if e["event"] == "mark")
sys.exit(marks(sys.argv[1]) != marks(sys.argv[2]))' "$C" "$R" || fail "marks' record members differ"

# gaps: the same events (at, lost, cause), the same totals
events "$C" gap > "$T/src.gaps"
events "$R" gap > "$T/rep.gaps"
same "$T/src.gaps" "$T/rep.gaps"
for k in produced written lost gap_markers; do
	[ "$(ended "$R" "$k")" = "$(ended "$C" "$k")" ] ||
		fail "ended.$k: replay $(ended "$R" "$k"), source $(ended "$C" "$k")"
done
"$BACH" dump "$C" > "$T/src.txt"
"$BACH" dump "$R" > "$T/rep.txt"
same "$T/src.txt" "$T/rep.txt"
"$BACH" verify "$C" > "$T/src.v" 2>&1 || fail "verify source: $(cat "$T/src.v")"
"$BACH" verify "$R" > "$T/rep.v" 2>&1 || fail "verify replay: $(cat "$T/rep.v")"
tail -n 1 "$T/src.v" > "$T/src.vt"
tail -n 1 "$T/rep.v" > "$T/rep.vt"
same "$T/src.vt" "$T/rep.vt"
lsjson() { "$BACH" ls --json "$1" | python3 -c 'import json, sys
print(json.dumps([{k: c.get(k) for k in ("records", "lost", "marks")} for c in json.load(sys.stdin)]))'; }
lsjson "$T/caps" > "$T/src.ls"
lsjson "$T/rep" > "$T/rep.ls"
same "$T/src.ls" "$T/rep.ls"

# labels: the source's, the replay's own winning; the source's as they were
[ "$(started labels "$R")" = '{"machine": "p166", "run": "2", "who": "me"}' ] ||
	fail "replay labels: $(started labels "$R")"
[ "$(started source/labels "$R")" = '{"machine": "p166", "run": "1"}' ] ||
	fail "source.labels: $(started source/labels "$R")"

# the source object: the source's capture id, absolute path, versions
[ "$(started capture "$C")" = "$(basename "$C")" ] || fail "capture id $(started capture "$C"), directory $C"
[ "$(started source/capture "$R")" = "$(started capture "$C")" ] ||
	fail "source.capture $(started source/capture "$R"), the source's $(started capture "$C")"
[ "$(started source/path "$R")" = "$(realpath "$C")" ] || fail "source.path $(started source/path "$R")"
for k in bach_version gateware host driver; do
	[ "$(started source/$k "$R")" = "$(started $k "$C")" ] ||
		fail "source.$k $(started source/$k "$R"), the source's $(started $k "$C")"
done
[ "$(started source/gateware "$R")" = 1.0 ] || fail "source.gateware: $(started source/gateware "$R")"
[ "$(started source/start_time "$R")" = "$(sed -n '1s/^{"time":"\([^"]*\)".*/\1/p' "$C/manifest.jsonl")" ] ||
	fail "source.start_time $(started source/start_time "$R")"

# --between on the replay as on the source: by text, by marker address
for w in "SIGUSR1 #1|SIGUSR1 #2" "0x80|0x80" "0x80|SIGUSR1 #2"; do
	a=${w%|*} b=${w#*|}
	"$BACH" dump --between "$a" "$b" "$C" > "$T/src.b" || fail "source --between $a $b"
	"$BACH" dump --between "$a" "$b" "$R" > "$T/rep.b" || fail "replay --between $a $b"
	[ -s "$T/src.b" ] || fail "--between $a $b: nothing"
	same "$T/src.b" "$T/rep.b"
done

# the Python module reads the replay's manifest as bach does
# (Debian's python3, as tests/cli/python.sh; which skips where it cannot)
if /usr/bin/python3 -c 'import numpy, cffi' 2> /dev/null && [ -z "${BACH_SANITIZED:-}" ]; then
	BACH_LIBRARY="$TOP/$BUILD/libbach.so.0" PYTHONPATH="$TOP/python" /usr/bin/python3 -c '
import sys, bach
src, rep = (bach.open(d) for d in sys.argv[1:3])
assert rep.labels == {"machine": "p166", "run": "2", "who": "me"}, rep.labels
key = lambda m: (m["at"], m["text"], m.get("address"), m.get("count"))
assert [key(m) for m in src.marks()] == [key(m) for m in rep.marks()]
a = src.between("SIGUSR1 #1", "SIGUSR1 #2").read()
b = rep.between("SIGUSR1 #1", "SIGUSR1 #2").read()
assert len(a) and a.tobytes() == b.tobytes()
' "$C" "$R" || fail "python: the replay's manifest"
fi

# a replay of the replay carries the same again (its source: the replay)
"$BACH" capture --driver replay --option path="$R" --output "$T/rep" 2> "$T/log" ||
	fail "replay of the replay: $(cat "$T/log")"
R2=$(capdir "$T/rep")
[ "$R2" != "$R" ] || fail "no second replay"
events "$R2" mark > "$T/rep2.marks"
same "$T/src.marks" "$T/rep2.marks"
events "$R2" gap > "$T/rep2.gaps"
same "$T/src.gaps" "$T/rep2.gaps"
[ "$(started source/capture "$R2")" = "$(basename "$R")" ] || fail "source of the second replay: $(started source/capture "$R2")"
[ "$(started labels "$R2")" = '{"machine": "p166", "run": "2", "who": "me"}' ] ||
	fail "labels of the second replay: $(started labels "$R2")"

# without gap markers (gap_markers = false on both sides): the gaps are in
# the manifest alone, and come out at the same positions
mkdir "$T/nm" "$T/nmr"
"$BACH" capture --driver fake --option records=200000 --option seed=5 --option frame=1000 \
	--option drop_every=4 --policy drop --set gap_markers=false \
	--set marker=io:0x80 --set marker_rate=1000000 --output "$T/nm" 2> "$T/log" ||
	fail "capture without gap markers: $(cat "$T/log")"
N=$(capdir "$T/nm")
[ "$(ended "$N" gap_markers)" -eq 0 ] && [ "$(ended "$N" lost)" -gt 0 ] ||
	fail "the capture without gap markers: $(tail -n 1 "$N/manifest.jsonl")"
"$BACH" capture --driver replay --option path="$N" --set gap_markers=false \
	--output "$T/nmr" 2> "$T/log" || fail "replay without gap markers: $(cat "$T/log")"
NR=$(capdir "$T/nmr")
for kind in mark gap; do
	events "$N" $kind > "$T/nm.$kind"
	events "$NR" $kind > "$T/nmr.$kind"
	same "$T/nm.$kind" "$T/nmr.$kind"
done
for k in produced written lost gap_markers; do
	[ "$(ended "$NR" "$k")" = "$(ended "$N" "$k")" ] ||
		fail "without gap markers, ended.$k: replay $(ended "$NR" "$k"), source $(ended "$N" "$k")"
done

# retention removed the source's oldest segment: the replay's trace begins
# at the first one left, every mark and gap the records that segment held
# earlier, those inside it left out
mkdir "$T/ret" "$T/rep3"
"$BACH" capture --driver fake --option records=400000 --option seed=3 --option frame=1000 \
	--option drop_every=7 --policy drop --set marker=io:0x80 --set marker_rate=1000000 \
	--set rotate_mb=1 --output "$T/ret" 2> "$T/log" || fail "capture to rotate: $(cat "$T/log")"
C3=$(capdir "$T/ret")
[ -e "$C3/seg-000002.$SEG" ] || fail "no second segment: $(ls "$C3")"
cp -r "$C3" "$T/open"
base=$(grep "\"name\":\"seg-000001.$SEG\"" "$C3/manifest.jsonl" | sed 's/.*"records":\([0-9]*\).*/\1/')
bytes=$(cat "$C3"/seg-000001.* | wc -c)
rm "$C3"/seg-000001.*
printf '{"time":"2026-11-26T12:00:00.000Z","event":"retention","name":"seg-000001.'"$SEG"'","bytes":%s,"reason":"keep_bytes"}\n' \
	"$bytes" >> "$C3/manifest.jsonl"
"$BACH" verify -q "$C3" > "$T/v" 2>&1 || fail "the source after retention: $(cat "$T/v")"
"$BACH" capture --driver replay --option path="$C3" --output "$T/rep3" 2> "$T/log" ||
	fail "replay after retention: $(cat "$T/log")"
R3=$(capdir "$T/rep3")
for kind in mark gap; do
	events "$C3" $kind | python3 -c 'import json, sys
base, out = int(sys.argv[1]), []
for line in sys.stdin:
    e = json.loads(line)
    if e["at"] < base:
        continue
    e["at"] -= base
    if "last_at" in e:
        e["last_at"] -= base
    out.append(json.dumps(e, sort_keys=True))
print("\n".join(sorted(out)))' "$base" > "$T/src3.$kind"
	events "$R3" $kind > "$T/rep3.$kind"
	[ -s "$T/src3.$kind" ] || fail "no ${kind}s after the removed segment"
	same "$T/src3.$kind" "$T/rep3.$kind"
done
[ "$(grep -c '"event":"mark"' "$C3/manifest.jsonl")" -gt "$(wc -l < "$T/rep3.mark")" ] ||
	fail "the removed segment held no mark to leave out"
"$BACH" dump "$C3" > "$T/src3.txt"
"$BACH" dump "$R3" > "$T/rep3.txt"
same "$T/src3.txt" "$T/rep3.txt"
[ "$(ended "$R3" lost)" -eq "$(python3 -c 'import json, sys
print(sum(json.loads(l)["lost"] for l in open(sys.argv[1])))' "$T/src3.gap")" ] ||
	fail "lost after retention: $(ended "$R3" lost)"

# a capture still being written (its last segment a .part, a copy from
# before the retention above): what its manifest places past the closed
# segments is left out, and said
last=$(ls "$T"/open/seg-*.$SEG | tail -n 1)
mv "$last" "$last.part"
closed=$(cat "$T"/open/seg-*.$SEG | zstd -dcq | wc -c)
closed=$((closed / 6))
"$BACH" capture --driver replay --option path="$T/open" --output "$T/rep3" 2> "$T/log" ||
	fail "replay of an open capture: $(cat "$T/log")"
grep -q "of its manifest stand past the end of its closed segments (record $closed): not replayed" "$T/log" ||
	fail "nothing said of what lies past the closed segments: $(cat "$T/log")"
R4=$(capdir "$T/rep3")
grep -q '"event":"mark"' "$R4/manifest.jsonl" || fail "an open capture's replay without the marks of its closed segments"
[ "$(grep -c '"event":"mark"' "$R4/manifest.jsonl")" -eq "$(events "$T/open" mark |
	awk -v c="$closed" '{ sub(/.*"at": /, ""); sub(/,.*/, ""); if ($0 + 0 <= c) n++ } END { print n + 0 }')" ] ||
	fail "marks of an open capture's replay: $(grep -c '"event":"mark"' "$R4/manifest.jsonl")"

# a manifest that cannot be read refuses the replay, naming its line; a
# gap of a cause this bach does not know too; without a manifest, nothing
# to carry: said, and replayed
cp -r "$C" "$T/bad"
sed -i '3s/.*/{"event":"gap","at":"x"}/' "$T/bad/manifest.jsonl"
n=$(ncaps "$T/rep")
expect_status 2 "$BACH" capture --driver replay --option path="$T/bad" --output "$T/rep"
expect_err "bad/manifest.jsonl: line 3: \"at\" is not a record index"
rm -r "$T/bad"
cp -r "$C" "$T/bad"
sed -i '0,/"event":"gap"/s/"cause":"frames"/"cause":"cosmic"/' "$T/bad/manifest.jsonl"
expect_status 2 "$BACH" capture --driver replay --option path="$T/bad" --output "$T/rep"
expect_err 'has cause "cosmic", which this bach does not know'
[ "$(ncaps "$T/rep")" -eq "$n" ] || fail "a refused replay made a capture"
rm "$T/bad/manifest.jsonl"
expect_status 0 "$BACH" capture --driver replay --option path="$T/bad" --output "$T/rep"
expect_err "bad: no manifest.jsonl: replayed without its marks, gaps and labels"
echo ok
