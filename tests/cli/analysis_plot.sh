#!/bin/sh
# bach plot: every kind as PNG, SVG and PDF; what the pictures show checked
# pixel by pixel against the layout docs/analysis.md section 4 gives (the
# plot area of 1000 x 600, which --debug-layout writes): the colour of a
# kind of cycle, gaps, marks and device events as rules at their
# positions, address ranges; --size, --dpi, fonts and titles; SVG text as
# <text>; bad options and damaged traces.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/capture.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed: the checks cannot run"
PNG="python3 $TOP/tests/helpers/png.py"

$BACH gen --records 8000 --seed 5 -o "$T/g.byu"
make_capture "$T/cap" "$T/g.byu"

# every kind, all formats; SVG's text is <text> (searchable, editable),
# the title, axis titles and legend among them, in the font asked for
for k in map mix mrc wss; do
	$BACH plot $k "$T/cap" -o "$T/$k.png" || fail "plot $k png exited $?"
	$BACH plot $k "$T/cap" --font "DejaVu Serif" -o "$T/$k.svg" || fail "plot $k svg exited $?"
	$BACH plot $k "$T/cap" -o "$T/$k.pdf" || fail "plot $k pdf exited $?"
	[ "$($PNG "$T/$k.png")" = "1000 600" ] || fail "$k.png is not 1000 x 600"
	python3 - "$T/$k.svg" "$k" <<'PY' || fail "$k.svg is not an SVG picture with its text as <text>"
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
assert r.tag.endswith("svg") and r.get("width").startswith("1000"), r.attrib
ns = "{http://www.w3.org/2000/svg}"
texts = ["".join(t.itertext()) for t in r.iter(ns + "text")]
title = {"map": "address map: cap", "mix": "bus cycle mix: cap",
         "mrc": "miss-ratio curves: cap", "wss": "working set: cap"}[sys.argv[2]]
assert title in texts, texts
if sys.argv[2] != "mrc":
    assert "trace position (records from the start)" in texts, texts
    assert "500 records lost (overflow)" in texts, texts
    assert "<b>phase & two</b>" in texts, texts
g = [e for e in r.iter(ns + "g") if e.get("font-family")]
assert g and g[0].get("font-family").startswith("DejaVu Serif"), [e.attrib for e in g]
PY
	head -c 5 "$T/$k.pdf" | grep -q '%PDF-' || fail "$k.pdf is not a PDF"
done
# a family that is not installed: drawn in fontconfig's choice, which
# is said, and which the SVG names first (the font measured), then the
# one asked for
expect_status 0 "$BACH" plot wss "$T/cap" --font "No Such Family" -o "$T/nf.svg"
expect_err "font 'No Such Family' is not installed: drawn in "
drawn=$(sed -n "s/.*drawn in //p" "$T/err")
grep -q "<g font-family=\"$drawn, No Such Family, sans-serif\">" "$T/nf.svg" ||
	fail "nf.svg does not name $drawn, then No Such Family: $(grep -o '<g font-family=[^>]*>' "$T/nf.svg")"
# mix's bars: one path a class, not one a bar (8000 records: 800 columns)
n=$(grep -c '<path' "$T/mix.svg")
[ "$n" -le 60 ] || fail "mix.svg has $n paths: a bar each"
if command -v pdftotext >/dev/null 2>&1; then
	pdftotext "$T/map.pdf" - | grep -q "address map: cap" || fail "map.pdf: its title is not text"
fi

# a name that is not UTF-8 (a file's name may be any bytes) and control
# characters in --title: the SVG stays well-formed, '?' for the bytes
cp "$T/g.byu" "$T/n$(printf '\377\376')x.byu"
$BACH plot wss "$T/n$(printf '\377\376')x.byu" -o "$T/u.svg" || fail "plot of a non-UTF-8 name exited $?"
$BACH plot wss "$T/g.byu" --title "$(printf 'a\001b <&> \303\251')" -o "$T/u2.svg" || fail "plot --title exited $?"
python3 - "$T/u.svg" "$T/u2.svg" <<'PY' || fail "the SVG of a non-UTF-8 name or a control character is not well-formed"
import sys, xml.etree.ElementTree as E
t = lambda f: ["".join(e.itertext()) for e in E.parse(f).getroot().iter("{http://www.w3.org/2000/svg}text") if e.get("class") == "title"]
assert t(sys.argv[1]) == ["working set: n??x.byu"], t(sys.argv[1])
assert t(sys.argv[2]) == ["ab <&> \u00e9"], t(sys.argv[2])
PY

# --size and --dpi: 3.5 x 2.5 inches at 300 dpi are 1050 x 750 pixels;
# SVG and PDF in points (252 x 180)
$BACH plot wss "$T/cap" --size 3.5inx2.5in --dpi 300 --font-size 8 -o "$T/s.png" || fail "plot --size --dpi exited $?"
[ "$($PNG "$T/s.png")" = "1050 750" ] || fail "3.5inx2.5in at 300 dpi is $($PNG "$T/s.png")"
$BACH plot wss "$T/cap" --size 9cmx6cm --no-title -o "$T/s.svg"
python3 -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
assert r.get("width") in ("255pt", "255") and r.get("height") in ("170pt", "170"), r.attrib
assert not any(t.get("class") == "title" for t in r.iter("{http://www.w3.org/2000/svg}text"))' "$T/s.svg" ||
	fail "9cmx6cm --no-title is not 255 x 170 points without a title"
$BACH plot mix "$T/cap" --size 640x480 -o "$T/s.png"
[ "$($PNG "$T/s.png")" = "640 480" ] || fail "--size 640x480 is $($PNG "$T/s.png")"

# the plot area: x0 y0 x1 y1 of --debug-layout's JSON
area() {
	python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["plot"]; print(p["x0"], p["y0"], p["x1"], p["y1"])' "$1"
}
$BACH plot wss "$T/cap" -o "$T/wss.png" --debug-layout "$T/wss.json"
set -- $(area "$T/wss.json")
X0=$1 Y0=$2 X1=$3 Y1=$4

# rules: x = X0 + at / records x (X1 - X0); in Okabe and Ito's colours
# gap vermillion (213 94 0), mark black dashed, device reddish purple
# (204 121 167); a column without a rule has none of them
# hue COLUMN: how many of 30 rows of the plot area are each
hue() {
	pts=""
	y=$((Y0 + 30))
	while [ $y -le $((Y1 - 10)) ]; do pts="$pts $1 $y"; y=$(((Y1 - Y0 - 40) / 29 + y)); done
	# shellcheck disable=SC2086
	$PNG "$T/wss.png" $pts | tail -n +2 | awk '
		$1 > 180 && $2 > 60 && $2 < 130 && $3 < 60 { r++ }
		$1 < 60 && $2 < 60 && $3 < 60 { b++ }
		$1 > 170 && $2 > 90 && $2 < 150 && $3 > 130 { p++ }
		END { print r + 0, b + 0, p + 0 }'
}
col() { echo $((X0 + $1 * (X1 - X0) / 8000)); }
set -- $(hue "$(col 1000)")
[ "$1" -ge 24 ] || fail "no vermillion gap rule at record 1000 (column $(col 1000)): $*"
set -- $(hue "$(col 2000)")
[ "$2" -ge 12 ] || fail "no black dashed mark rule at record 2000 (column $(col 2000)): $*"
set -- $(hue "$(col 3000)")
[ "$3" -ge 12 ] || fail "no reddish purple device rule (dash-dot) at record 3000: $*"
set -- $(hue "$(col 1250)")
[ "$1" -le 6 ] && [ "$2" -le 6 ] || fail "a rule where there is no event (record 1250): $*"

# a plain file: its gap markers are the rules
python3 "$TOP/tests/helpers/splice.py" "$T/g.byu" "$T/gaps.byu" 4000
$BACH plot wss "$T/gaps.byu" -o "$T/wss.png"
n=$(($(wc -c <"$T/gaps.byu") / 6))
set -- $(hue $((X0 + 4000 * (X1 - X0) / n)))
[ "$1" -ge 24 ] || fail "no rule at the gap marker of a plain file: $*"

# filtered (--type fetch): x is the position among the records kept, and
# the manifest's rules move with them: the mark at record 2000 is drawn at
# the number of fetches before it (tests/helpers/filter_ref.py counts)
python3 "$TOP/tests/helpers/filter_ref.py" "$T/g.byu" "$T/f.byu" "$T/f.idx" --type fetch
k=$(wc -l < "$T/f.idx")
fcol() { echo $((X0 + $(awk -v a="$1" '$1 < a { n++ } END { print n + 0 }' "$T/f.idx") * (X1 - X0) / k)); }
$BACH plot wss --type fetch "$T/cap" -o "$T/wss.png"
set -- $(hue "$(fcol 2000)")
[ "$2" -ge 12 ] || fail "filtered: no black mark rule at column $(fcol 2000): $*"
set -- $(hue "$(fcol 1000)")
[ "$1" -ge 24 ] || fail "filtered: no vermillion gap rule at column $(fcol 1000): $*"
set -- $(hue "$(col 2000)")
[ "$2" -le 6 ] || fail "filtered: the mark drawn at its unfiltered column $(col 2000): $*"

# --x time: a timed capture of the fake board whose FIFO overflows twice
# (5000 records lost, 10000 clocks, each): the gap rules stand at their
# clocks' x, the first one about 20 columns left of its position's x
mkdir "$T/tc"
$BACH capture --driver fake --option records=100000 --option seed=3 --option timing=1 \
	--option frame=1000 --option overflow_every=30:5000 --policy drop --output "$T/tc" 2>/dev/null ||
	fail "the timed capture failed"
TC=$(ls -d "$T"/tc/2*Z*)
$BACH plot mix --x time "$TC" -o "$T/t.png" --debug-layout "$T/t.json" || fail "plot mix --x time exited $?"
$BACH plot mix --x time "$TC" -o "$T/t.svg" || fail "plot mix --x time (svg) exited $?"
grep -q '>time (ms from the first timed record)</text>' "$T/t.svg" || fail "--x time: no time axis title"
$BACH dump --time "$TC" > "$T/t.dump"
python3 - "$T/t.json" "$T/t.dump" "$TC/manifest.jsonl" "$TOP/tests/helpers/png.py" "$T/t.png" <<'PY' || fail "--x time: the gap rules are not at their clocks"
import json, subprocess, sys
p = json.load(open(sys.argv[1]))["plot"]
clk = [int(l.split()[3]) for l in open(sys.argv[2])]
gaps = [e["at"] for e in map(json.loads, open(sys.argv[3])) if e["event"] == "gap"]
assert len(gaps) == 2, gaps
def red(x):  # vermillion rows of 20 down the plot area at column x
    pts = [str(v) for y in range(p["y0"] + 20, p["y1"] - 10, (p["y1"] - p["y0"] - 30) // 20) for v in (x, y)]
    out = subprocess.run(["python3", sys.argv[4], sys.argv[5]] + pts, capture_output=True, text=True, check=True).stdout.split("\n")[1:]
    return sum(1 for l in out if l and (lambda r, g, b: r > 180 and 60 < g < 130 and b < 60)(*map(int, l.split())))
w = p["x1"] - p["x0"]
for at in gaps:
    xt = int(p["x0"] + (clk[at] - clk[0]) / (clk[-1] - clk[0]) * w)
    xp = int(p["x0"] + at / len(clk) * w)
    assert abs(xt - xp) > 10, (at, xt, xp)
    assert red(xt) >= 15, ("no rule at the clock's column", at, xt, red(xt))
    assert red(xp) <= 3, ("a rule at the position's column", at, xp, red(xp))
PY
$BACH plot wss --x time "$TC" -o "$T/t.png" || fail "plot wss --x time exited $?"
$BACH plot map --x time "$TC" -o "$T/t.png" || fail "plot map --x time exited $?"

# mix: a trace of writes alone fills the plot with the write colour
# (Okabe-Ito orange 230 159 0), one of reads with the read colour
# (bluish green 0 158 115)
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "1 %x\n", 4096 + i * 4 }' >"$T/w.din"
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "0 %x\n", 4096 + i * 4 }' >"$T/r.din"
$BACH convert -q --from din "$T/w.din" "$T/w.byu"
$BACH convert -q --from din "$T/r.din" "$T/r.byu"
$BACH plot mix "$T/w.byu" -o "$T/mw.png"
$BACH plot mix "$T/r.byu" -o "$T/mr.png"
# near RGB: within 2 of each component (cairo rounds 0.84 x 255 its way)
near() {
	$PNG "$1" 300 400 | tail -n 1 | awk -v want="$2" '
		{ split(want, w, " "); for (i = 1; i <= 3; i++)
			if ($i - w[i] > 2 || w[i] - $i > 2) exit 1 }'
}
near "$T/mw.png" "230 159 0" || fail "writes are not drawn as writes: $($PNG "$T/mw.png" 300 400)"
near "$T/mr.png" "0 158 115" || fail "reads are not drawn as reads: $($PNG "$T/mr.png" 300 400)"
near "$T/mr.png" "230 159 0" && fail "near() cannot fail"

# map: the default range holds the references (coloured pixels in the
# plot area); a --range they are not in leaves it white
$BACH plot map "$T/r.byu" -o "$T/map1.png" --debug-layout "$T/map1.json"
coloured() {
	F=$1
	# shellcheck disable=SC2046
	set -- $(area "$T/map1.json")
	$PNG "$F" --count $(($1 + 1)) $(($2 + 1)) $(($3 - 1)) $(($4 - 1))
}
[ "$(coloured "$T/map1.png")" -ge 300 ] || fail "the map does not show the references"
$BACH plot map --range 80000000-8000ffff "$T/r.byu" -o "$T/map2.png"
[ "$(coloured "$T/map2.png")" -eq 0 ] || fail "the map shows references outside --range"

# mrc: several traces on one plot, the legend their last names;
# --min, --max: the sizes of the x axis
$BACH plot mrc "$T/g.byu" "$T/r.byu" "$T/cap/" --min 512 --max 64M -o "$T/m3.svg"
python3 -c 'import sys, xml.etree.ElementTree as E
t = ["".join(e.itertext()) for e in E.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}text") if e.get("class") in ("legend", "tick")]
assert all(x in t for x in ("g.byu", "r.byu", "cap", "512 B", "64 MiB")), t
assert not any("/" in x for x in t), t' "$T/m3.svg" || fail "plot mrc: legend or --min/--max ticks wrong"
# --label: the legend of the traces in order; the rest keep their names
$BACH plot mrc --label "gen, seed 5" --label "reads & more" "$T/g.byu" "$T/r.byu" "$T/cap" -o "$T/m3.svg"
python3 -c 'import sys, xml.etree.ElementTree as E
t = ["".join(e.itertext()) for e in E.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}text") if e.get("class") == "legend"]
assert t == ["gen, seed 5", "reads & more", "cap"], t' "$T/m3.svg" || fail "plot mrc --label: wrong legend"

# bad options: exit 2, nothing written
bad() {
	msg=$1
	shift
	expect_status 2 $BACH plot "$@"
	expect_err "$msg"
}
bad "no KIND given" -o "$T/x.png"
bad "'pie' is not a kind" pie "$T/g.byu" -o "$T/x.png"
bad "no -o FILE.svg, FILE.pdf or FILE.png given" map "$T/g.byu"
bad "must end in .svg, .pdf or .png" map "$T/g.byu" -o "$T/x.jpg"
bad "--size: '3inx2cm' is not WxH in one unit" wss --size 3inx2cm "$T/g.byu" -o "$T/x.png"
bad "--size: '1000' is not WxH" wss --size 1000 "$T/g.byu" -o "$T/x.png"
bad "--dpi: 'x' is not a number" wss --dpi x "$T/g.byu" -o "$T/x.png"
bad "--font-size: '0' is not a size" wss --font-size 0 "$T/g.byu" -o "$T/x.png"
bad "--title and --no-title" wss --title a --no-title "$T/g.byu" -o "$T/x.png"
bad "--min and --max are for plot mrc" wss --min 1k "$T/g.byu" -o "$T/x.png"
bad "zz" mrc --max zz "$T/g.byu" -o "$T/x.png"
bad "--label is for plot mrc" wss --label a "$T/g.byu" -o "$T/x.png"
bad "--label: 2 labels for 1 traces" mrc --label a --label b "$T/g.byu" -o "$T/x.png"
bad "has no timing (no .time.gz sidecar)" mix --x time "$T/g.byu" -o "$T/x.png"
bad "--x time is for the pictures of map, mix and wss" mrc --x time "$T/g.byu" -o "$T/x.png"
bad "--x: 'clock' is not time or position" mix --x clock "$T/g.byu" -o "$T/x.png"
bad "no TRACE given" map -o "$T/x.png"
bad "plot map reads its traces twice" map - -o "$T/x.png"
bad "--range: 'zz' is not LO-HI" map --range zz "$T/g.byu" -o "$T/x.png"
bad "is not a range of 32-bit addresses" map --range 2000-1000 "$T/g.byu" -o "$T/x.png"
bad "--range is for plot map" mix --range 0-ff "$T/g.byu" -o "$T/x.png"
bad "--line: '12'" mrc --line 12 "$T/g.byu" -o "$T/x.png"
bad "--sample: '2'" mrc --sample 2 "$T/g.byu" -o "$T/x.png"
bad "--window: '0'" wss --window 0 "$T/g.byu" -o "$T/x.png"
bad "at most 8 traces" mrc "$T/g.byu" "$T/g.byu" "$T/g.byu" "$T/g.byu" "$T/g.byu" "$T/g.byu" "$T/g.byu" "$T/g.byu" "$T/g.byu" -o "$T/x.png"
bad "missing.byu" mix "$T/missing.byu" -o "$T/x.png"
bad "inside the capture directory" mix "$T/cap" -o "$T/cap/x.png"
# a small canvas: a wide, low figure is drawn (map said "out of memory":
# its plot area was negative); one too small for any plot area is a
# usage error that says why, and leaves no picture
for k in map mix mrc wss; do
	expect_status 0 $BACH plot $k "$T/cap" --size 4inx1.5in -o "$T/low.png"
	rm -f "$T/x.png"
	bad "a 108 x 72 point picture is too small for its text at 7 points: the plot area would be" \
		$k "$T/cap" --size 1.5inx1in -o "$T/x.png"
	[ -e "$T/x.png" ] && fail "plot $k left a picture too small to draw"
done
[ -e "$T/x.png" ] && fail "a failed plot left its output"

# --json and --csv: the data behind each picture, checked against what
# bach mrc and bach stat say of the same trace, and the manifest's events
$BACH plot mrc "$T/g.byu" "$T/cap" --json > "$T/mrc.json" || fail "plot mrc --json exited $?"
$BACH mrc --json --min 1k --max 32M "$T/g.byu" > "$T/mrc1.json"
$BACH mrc --json --min 1k --max 32M "$T/cap" > "$T/mrc2.json"
python3 - "$T/mrc.json" "$T/mrc1.json" "$T/mrc2.json" "$T/g.byu" "$T/cap" <<'PY' || fail "plot mrc --json is not bach mrc --json's points"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kind"] == "mrc" and d["line"] == 32, d
assert [c["trace"] for c in d["curves"]] == sys.argv[4:6], d["curves"]
for c, f in zip(d["curves"], sys.argv[2:4]):
    assert c["points"] == json.load(open(f))["points"], (c, f)
PY
$BACH plot mrc "$T/g.byu" --csv > "$T/mrc.csv"
$BACH mrc --csv --min 1k --max 32M "$T/g.byu" | sed "1s/^/trace,/; 2,\$s|^|$T/g.byu,|" > "$T/mrc1.csv"
same "$T/mrc.csv" "$T/mrc1.csv"
# one window of wss over the whole trace: stat's lines and pages
$BACH stat --json "$T/cap" > "$T/stat.json"
$BACH plot wss "$T/cap" --window 100000000 --json > "$T/wss.json"
$BACH plot mix "$T/cap" --json -o "$T/mix.json" || fail "plot mix --json -o exited $?"
$BACH plot map "$T/cap" --json > "$T/map.json"
python3 - "$T/stat.json" "$T/wss.json" "$T/mix.json" "$T/map.json" <<'PY' || fail "plot --json disagrees with bach stat --json or the manifest"
import json, sys
st, wss, mix, mp = (json.load(open(f)) for f in sys.argv[1:5])
ty = st["types"]
w, = wss["windows"]
assert (w["start"], w["records"], w["lines"], w["pages"]) == (0, st["records"], st["lines"], st["pages"]), (w, st)
want_events = [("gap", 1000, 500), ("mark", 2000, None), ("device_lost", 3000, None), ("device_back", 3000, None)]
for d in (wss, mix, mp):
    assert [(e["event"], e["at"], e.get("lost")) for e in d["events"]] == want_events, d["events"]
    assert d["records"] == st["records"]
# mix: the columns cover the trace, and the counts per class are stat's
assert sum(c["records"] for c in mix["columns"]) == st["records"]
tot = [sum(c["counts"][k] for c in mix["columns"]) for k in range(7)]
assert tot == [ty["I_FETCH"] + ty["NC_I_FETCH"], ty["D_READ"] + ty["NC_D_READ"], ty["D_WRITE"],
               ty["WRITE_BACK"], ty["IO_READ"] + ty["IO_WRITE"], ty["INT_ACK"] + ty["SPECIAL"],
               ty["INVALID"] + st["gap_markers"]], (tot, ty)
# map: every fetch, read, write, writeback and I/O cycle in one cell
# whose addresses are inside a band of its space
assert sum(c["count"] for c in mp["cells"]) == sum(tot[:5]), (sum(c["count"] for c in mp["cells"]), tot)
for c in mp["cells"]:
    assert any(b["space"] == c["space"] and b["lo"] <= c["lo"] <= c["hi"] <= b["hi"] for b in mp["bands"]), c
PY
$BACH plot map "$T/cap" --size 3inx2in --font-size 6 --json | cmp -s - "$T/map.json" ||
	fail "plot map --json depends on --size"
$BACH plot map "$T/cap" --csv | awk -F, 'NR > 1 { s += $NF } END { print s }' > "$T/n"
[ "$(cat "$T/n")" = "$(python3 -c 'import json,sys; print(sum(c["count"] for c in json.load(open(sys.argv[1]))["cells"]))' "$T/map.json")" ] ||
	fail "plot map --csv counts $(cat "$T/n"), --json another"
bad "one or the other" mrc "$T/g.byu" --csv --json

# damaged traces: exit 1 with the file and offset, no picture left
head -c 6001 "$T/g.byu" >"$T/cut.byu"
for k in map mix mrc wss; do
	expect_status 1 $BACH plot $k "$T/cut.byu" -o "$T/x.svg"
	expect_err "cut.byu"
	expect_err "offset 6000"
	[ -e "$T/x.svg" ] && fail "plot $k left a picture of a damaged trace"
	ls -a "$T" | grep -q '^\.x\.svg' && fail "plot $k left its temporary file"
done

# a window of one record is "per 1 record", not "per 1 records"
$BACH plot wss --window 1 "$T/g.byu" -o "$T/w1.svg" || fail "plot wss --window 1"
grep -q 'per 1 record (log)' "$T/w1.svg" || fail "wss --window 1: the axis title is not 'per 1 record (log)'"
grep -q 'per 1 records' "$T/w1.svg" && fail "wss --window 1: 'per 1 records'"
exit 0
