# One count of records everywhere (docs/formats.md section 5): verify, stat
# and ls give a capture with gap markers the same records, data records,
# gap markers and lost records, in text and JSON, and dump shows each gap
# marker as a gap with its lost count and its cause, in text, csv and jsonl.
# The expected numbers come from the segments as zstd itself decompresses
# them (bachd's default .byu.zst) and from the manifest's gap events, not
# from bach.
. "$TOP/tests/lib.sh"
command -v python3 > /dev/null || skip "no python3 to read the segments"
command -v zstd > /dev/null || fail "zstd (Debian: zstd, scripts/deps.sh) is missing"

. "$TOP/tests/helpers/partial_lib.sh"
split_capture 1000000 # several segments: the gaps of later ones are tried

# "records markers lost" of the segments, by zstd -d: a gap marker
# is an INVALID type with control low nibble f, its address the lost count
python3 - "$C" > "$T/want" << 'EOF'
import glob, struct, subprocess, sys
recs = marks = lost = 0
for f in sorted(glob.glob(sys.argv[1] + "/seg-*.byu.zst")):
    b = subprocess.run(["zstd", "-dcq", f], check=True, stdout=subprocess.PIPE).stdout
    for i in range(0, len(b), 6):
        c = b[i + 5]
        recs += 1
        if c & 15 == 15 and (c >> 4) in (0, 2, 4, 6, 10, 11):
            marks += 1
            lost += struct.unpack(">I", b[i:i + 4])[0]
print(recs, marks, lost)
EOF
read -r recs marks lost < "$T/want"
[ "$marks" -gt 10 ] || fail "only $marks gap markers"
data=$((recs - marks))
words="$recs records ($data data, $marks gap markers standing for $lost lost)"

"$BACH" verify "$C" > "$T/v" || fail "verify: $(cat "$T/v")"
grep -qxF "verify: $(ls "$C"/seg-*.byu.zst | wc -l) files, $words, 0 problems" "$T/v" ||
	fail "verify does not say '$words': $(tail -n 1 "$T/v")"
"$BACH" stat "$C" > "$T/s" || fail "stat"
grep -qF "records            $recs  ($data data, $marks gap markers standing for $lost lost; " "$T/s" ||
	fail "stat does not say '$words': $(head -n 1 "$T/s")"
"$BACH" stat --json "$C" > "$T/s.json" || fail "stat --json"
"$BACH" ls --json "$T/caps" > "$T/l.json" || fail "ls --json"
python3 - "$T/s.json" "$T/l.json" $recs $data $marks $lost << 'EOF' || fail "JSON counts differ"
import json, sys
s = json.load(open(sys.argv[1]))
l = json.load(open(sys.argv[2]))[0]
want = [int(v) for v in sys.argv[3:7]]
for name, o in (("stat", s), ("ls", l)):
    got = [o["records"], o["data"], o["gap_markers"], o["lost"]]
    if got != want:
        sys.exit("%s --json: records, data, gap_markers, lost %s, want %s" % (name, got, want))
EOF
"$BACH" ls "$T/caps" > "$T/l" || fail "ls"
awk -v r=$recs -v g=$marks -v l=$lost 'NR == 2 && $4 == r && $5 == g && $6 == l { ok = 1 } END { exit !ok }' "$T/l" ||
	fail "ls does not say $recs records, $marks gap markers, $lost lost: $(cat "$T/l")"

# dump: each gap marker at its position, with its count and its cause,
# as the manifest's gap events say (in trace order)
python3 - "$C/manifest.jsonl" > "$T/gaps" << 'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
for e in sorted((e for e in ev if e["event"] == "gap"), key=lambda e: e["at"]):
    print(e["at"], e["lost"], e["cause"])
EOF
[ "$(wc -l < "$T/gaps")" -eq "$marks" ] || fail "$(wc -l < "$T/gaps") gap events for $marks markers"
grep -q overflow "$T/gaps" && grep -q frames "$T/gaps" || fail "not two causes: $(sort -u -k3 "$T/gaps")"
"$BACH" dump "$C" | awk '$3 ~ /^GAP:/ { split($3, f, ":"); print NR - 1, f[2], f[3] }' |
	sed 's/lost=//; s/cause=//' > "$T/text"
same "$T/text" "$T/gaps"
"$BACH" dump --format csv "$C" | awk -F, '$5 ~ /^GAP:/ { split($5, f, ":"); print $1, f[2], f[3] }' |
	sed 's/lost=//; s/cause=//' > "$T/csv"
same "$T/csv" "$T/gaps"
"$BACH" dump --format jsonl "$C" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["type"] == "GAP":
        assert int(o["address"], 16) == o["lost"] and o["control"] == "0x0f", o
        print(o["index"], o["lost"], o["cause"])' > "$T/jsonl" || fail "jsonl"
same "$T/jsonl" "$T/gaps"
# a range that starts in a later segment finds its gaps' causes too
last=$(tail -n 1 "$T/gaps")
at=${last%% *}
"$BACH" dump --format csv --range "$at:$((at + 1))" "$C" > "$T/one"
grep -qx "$at,.*,GAP:lost=$(echo "$last" | cut -d' ' -f2):cause=$(echo "$last" | cut -d' ' -f3)" "$T/one" ||
	fail "--range $at: $(cat "$T/one")"
# a segment alone, outside its capture directory: the cause is unknown
S=$(ls "$C"/seg-*.byu.zst | tail -n 1)
cp "$S" "$T/alone.byu.zst"
"$BACH" dump "$T/alone.byu.zst" | grep -q ' GAP:lost=[0-9]*:cause=unknown$' || fail "a lone segment's gap"
"$BACH" dump "$S" | grep ' GAP:' | grep -q 'cause=unknown' && fail "a segment read from its capture lost its causes"
# --time keeps its columns: the clock is the fourth word of a gap's line too
"$BACH" dump --time "$C" | awk '$3 ~ /^GAP:/ && NF != 5 { bad = 1 } END { exit bad }' ||
	fail "dump --time of a gap marker: $("$BACH" dump --time "$C" | grep -m 1 GAP:)"
echo ok
