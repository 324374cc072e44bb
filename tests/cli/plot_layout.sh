#!/bin/sh
# bach plot: no text collides. Every kind drawn on hard traces
# -- many events close together, gaps at both edges, one record, a trace
# of gap markers only, long labels -- at the default size and at a
# paper's (3.5 x 2.5 in, 8 points), SVG and PNG; --debug-layout's boxes
# of every text, the legend and the canvas checked: no two texts overlap,
# none overlaps the legend, none leaves the canvas. And the labels of the
# rules are there: each event is labelled or counted as not labelled.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/capture.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed: the checks cannot run"

ev() { # ev AT KIND [TEXT]: one event line
	case $2 in
	gap) echo "{\"time\":\"2026-11-21T22:30:00.100Z\",\"event\":\"gap\",\"segment\":\"seg-000001.byu.gz\",\"at\":$1,\"lost\":4096,\"cause\":\"${3:-overflow}\"}" ;;
	mark) echo "{\"time\":\"2026-11-21T22:30:00.200Z\",\"event\":\"mark\",\"segment\":\"seg-000001.byu.gz\",\"at\":$1,\"text\":\"$3\"}" ;;
	*) echo "{\"time\":\"2026-11-21T22:30:00.300Z\",\"event\":\"$2\",\"segment\":\"seg-000001.byu.gz\",\"at\":$1}" ;;
	esac
}

$BACH gen --records 20000 --seed 9 -o "$T/g.byu"
# many: 40 events within 2% of the trace, of every kind, and more spread
{
	i=0
	while [ $i -lt 40 ]; do
		case $((i % 4)) in
		0) ev $((9000 + i * 10)) gap ;;
		1) ev $((9000 + i * 10)) mark "phase $i" ;;
		2) ev $((9000 + i * 10)) device_lost ;;
		*) ev $((9000 + i * 10)) device_back ;;
		esac
		i=$((i + 1))
	done
	for a in 100 3000 6000 15000 19000; do ev $a mark "step at $a"; done
} > "$T/many.ev"
make_capture "$T/many" "$T/g.byu" "$T/many.ev"
# edges: gaps at the first and the last record, a mark just before the end
{ ev 0 gap; ev 19990 mark "the end"; ev 20000 gap "usb disconnect"; } > "$T/edges.ev"
make_capture "$T/edges" "$T/g.byu" "$T/edges.ev"
# long labels: the longest a mark's text and a gap's cause can be drawn
L="a mark whose text is far longer than any label should be, and then some more"
{ ev 5000 mark "$L"; ev 5100 mark "$L $L"; ev 5200 gap "a cause that goes on and on and on and on"; ev 19999 mark "$L"; } > "$T/long.ev"
make_capture "$T/long" "$T/g.byu" "$T/long.ev"
# UTF-8 labels: accents, Greek letters, a superscript, a dash
U="Größe σ² — café, λ=0.5"
{ ev 5000 mark "$U"; ev 5050 gap "überlauf"; ev 12000 mark "β-phase"; } > "$T/utf8.ev"
make_capture "$T/utf8" "$T/g.byu" "$T/utf8.ev"
# a plain file with gap markers at both edges; one of one record; one of
# gap markers only
python3 - "$T/g.byu" "$T/edges.byu" "$T/one.byu" "$T/markers.byu" <<'PY'
import sys
g = open(sys.argv[1], "rb").read()
gap = lambda n: n.to_bytes(4, "big") + bytes([0xFF, 0x0F])
open(sys.argv[2], "wb").write(gap(4096) + g + gap(123456789))
open(sys.argv[3], "wb").write(g[:6])
open(sys.argv[4], "wb").write(b"".join(gap(1000 + i) for i in range(50)))
PY

# check LAYOUT.json WHAT: no overlap, none off the canvas; prints the
# number of event labels drawn and the note
cat > "$T/check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
what = sys.argv[2]
c, leg, texts = d["canvas"], d["legend"], d["texts"]
def inside(b, o, tol=0.01):
    return b["x0"] >= o["x0"] - tol and b["y0"] >= o["y0"] - tol and \
        b["x1"] <= o["x1"] + tol and b["y1"] <= o["y1"] + tol
def overlap(a, b):
    return a["x0"] < b["x1"] and b["x0"] < a["x1"] and a["y0"] < b["y1"] and b["y0"] < a["y1"]
bad = []
for t in texts:
    if not inside(t, c):
        bad.append("off the canvas: %r %s" % (t["text"], t))
if leg:
    if not inside(leg, c):
        bad.append("the legend is off the canvas: %s" % leg)
    for t in texts:
        if t["role"] == "legend":
            if not inside(t, leg):
                bad.append("legend text outside the legend: %r" % t["text"])
        elif overlap(t, leg):
            bad.append("over the legend: %r %s" % (t["text"], t))
for i, a in enumerate(texts):
    for b in texts[i + 1:]:
        if overlap(a, b):
            bad.append("%r and %r overlap: %s %s" % (a["text"], b["text"], a, b))
# what a paper's reviewer checks: the legend outside the data; one size of
# text, give or take (nothing shrunk below the event labels' 10/11 of the
# tick labels' size); the plot area at least half the width and a quarter
# of the height (margins not wasted)
p, fs = d["plot"], d["font_size"]
if leg and overlap(leg, p):
    bad.append("the legend is over the plot area: %s %s" % (leg, p))
for t in texts:
    if t["size"] < fs * 10 / 11 - 0.01:
        bad.append("%r is %.2f points, the tick labels %.2f" % (t["text"], t["size"], fs))
if p["x1"] - p["x0"] < (c["x1"] - c["x0"]) / 2 or p["y1"] - p["y0"] < (c["y1"] - c["y0"]) / 4:
    bad.append("the plot area %s is small in the canvas %s" % (p, c))
# the x axis' tick labels not crowded: an em at least between two
t = sorted((x for x in texts if x["role"] == "tick" and x["y0"] >= p["y1"]), key=lambda x: x["x0"])
for a, b in zip(t, t[1:]):
    if b["x0"] - a["x1"] < 0.9 * fs:
        bad.append("tick labels %r and %r %.1f points apart" % (a["text"], b["text"], b["x0"] - a["x1"]))
# and no empty band for the labels of events a trace does not have
if not any(t["role"] in ("event", "note") for t in texts):
    top = max([t["y1"] for t in texts if t["role"] == "title"] +
              ([leg["y1"]] if leg and leg["y1"] <= p["y0"] else []), default=0)
    if p["y0"] - top > 3 * fs:
        bad.append("%.1f points empty above the plot area %s, with no events" % (p["y0"] - top, p))
if bad:
    sys.exit("%s:\n  %s" % (what, "\n  ".join(bad)))
ev = [t for t in texts if t["role"] == "event"]
note = [t["text"] for t in texts if t["role"] == "note"]
print(len(ev), note[0] if note else "")
PY

n=0
for tr in many edges long utf8 edges.byu one.byu markers.byu; do
	for k in map mix mrc wss; do
		for size in "" "--size 3.5inx2.5in --dpi 300" "--size 3.5inx2.5in --font-size 8" "--size 640x400 --font-size 13" "--size 9cmx6cm --font-size 6 --no-title"; do
			for f in svg png; do
				# shellcheck disable=SC2086
				$BACH plot $k "$T/$tr" $size -o "$T/p.$f" --debug-layout "$T/l.json" ||
					fail "plot $k $tr $size -o p.$f exited $?"
				python3 "$T/check.py" "$T/l.json" "plot $k $tr $size ($f)" > "$T/out" ||
					fail "$(cat "$T/out")"
				n=$((n + 1))
			done
		done
	done
done
[ $n -eq 280 ] || fail "$n layouts checked, not 280"

# every event is labelled or counted: 45 events (40 of them in 2% of the
# trace), the labels drawn plus those the note counts
$BACH plot wss "$T/many" -o "$T/p.svg" --debug-layout "$T/l.json"
set -- $(python3 "$T/check.py" "$T/l.json" many)
[ "$1" -ge 8 ] || fail "many: only $1 event labels drawn"
[ "$3" = "not" ] || true
python3 - "$T/l.json" <<'PY' || fail "many: the labels drawn and the note do not add up to 45 events"
import json, re, sys
t = json.load(open(sys.argv[1]))["texts"]
ev = [x for x in t if x["role"] == "event"]
note, = [x["text"] for x in t if x["role"] == "note"]
m = re.fullmatch(r"(\d+) events not labelled", note)
assert m and len(ev) + int(m[1]) == 45, (note, len(ev))
PY
# the edges: both gaps labelled, whole, inside the canvas (the check),
# and what they say is the records lost and the cause
for tr in edges edges.byu; do
	$BACH plot map "$T/$tr" -o "$T/p.png" --debug-layout "$T/l.json"
	python3 - "$T/l.json" "$tr" <<'PY' || fail "$tr: the gaps at the edges are not both labelled"
import json, sys
t = [x["text"] for x in json.load(open(sys.argv[1]))["texts"] if x["role"] == "event"]
want = {"edges": ["4096 records lost (overflow)", "the end", "4096 records lost (usb disconnect)"],
        "edges.byu": ["4096 records lost", "123456789 records lost"]}[sys.argv[2]]
assert sorted(t) == sorted(want), t
PY
done
# UTF-8 laid out by pango: the labels are there, whole, and what the PNG
# shows of a title in UTF-8 lies in the box recorded for it (the font
# measured is the font drawn), at 200 dpi
$BACH plot map "$T/utf8" --title "Ångström: $U" --size 4inx2.5in --dpi 200 \
	-o "$T/u.png" --debug-layout "$T/l.json" || fail "plot map utf8 exited $?"
python3 - "$T/l.json" "$U" > "$T/box" <<'PY' || fail "utf8: the labels in UTF-8 are not drawn as given"
import json, sys
t = json.load(open(sys.argv[1]))["texts"]
ev = sorted(x["text"] for x in t if x["role"] == "event")
assert ev == sorted([sys.argv[2], "4096 records lost (überlauf)", "β-phase"]), ev
ti, = [x for x in t if x["role"] == "title"]
assert ti["text"] == "Ångström: " + sys.argv[2], ti
s = 200 / 72
print(*(round(ti[k] * s, 2) for k in ("x0", "y0", "x1", "y1")), int((ti["y1"] + 2) * s))
PY
read -r bx0 by0 bx1 by1 band < "$T/box"
ink=$(python3 "$TOP/tests/helpers/png.py" "$T/u.png" --bbox 0 0 800 "$band")
python3 -c '
import sys
box, ink = [float(v) for v in sys.argv[1:5]], [float(v) for v in sys.argv[5:9]]
assert all(abs(a - b) <= 2 for a, b in zip(box, ink)), (box, ink)' $bx0 $by0 $bx1 $by1 $ink ||
	fail "utf8: the title drawn ($ink, pixels) is not the box recorded ($bx0 $by0 $bx1 $by1)"
# a character the font asked for lacks is drawn (and measured) in a font
# that has it: DejaVu Serif has no check mark (U+2713); the title "✓" in
# it is the ✓ of the font fontconfig puts in its place, not an empty box
if fc-list : family 2>/dev/null | grep -qx "DejaVu Serif" &&
	! fc-list ':charset=2713' family | grep -q '^DejaVu Serif' &&
	[ -n "$(fc-list ':charset=2713' family)" ]; then
	fb=$(fc-match -f '%{family[0]}' 'DejaVu Serif:charset=2713:weight=bold')
	for f in "DejaVu Serif" "$fb"; do
		$BACH plot wss "$T/g.byu" --font "$f" --title "✓" -o "$T/b.svg" \
			--debug-layout "$T/b-$f.json" || fail "plot --font $f exited $?"
	done
	python3 - "$T/b-DejaVu Serif.json" "$T/b-$fb.json" <<'PY' || fail "the ✓ of a DejaVu Serif title is not $fb's"
import json, sys
a, b = ([x for x in json.load(open(f))["texts"] if x["role"] == "title"][0] for f in sys.argv[1:3])
assert abs((a["x1"] - a["x0"]) - (b["x1"] - b["x0"])) < 0.05 and abs((a["y1"] - a["y0"]) - (b["y1"] - b["y0"])) < 0.05, (a, b)
PY
else
	echo "no DejaVu Serif without U+2713 here: the fallback font is not checked"
fi
echo ok
