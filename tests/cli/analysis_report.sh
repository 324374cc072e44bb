#!/bin/sh
# bach report in a real browser: headless Chromium renders the page to
# PNG with no console message, the screenshot is not blank (decoded here
# with Python's zlib), every image of it decodes (checked by a copy of the
# page with a script added; the report itself has none), and it prints to
# PDF. The checks are first shown to fail on a page with a broken image, a
# script error and a blank page. The provenance is held to the manifest
# as Python's json reads it, the types to bach stat's order, the timeline
# picture's lines to the events' positions. Skips (77) only when chromium
# cannot be installed.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/capture.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed: the checks cannot run"
if ! command -v chromium >/dev/null 2>&1; then
	"$TOP/scripts/deps.sh" >/dev/null 2>&1 || true
	command -v chromium >/dev/null 2>&1 ||
		skip "chromium is not installed and scripts/deps.sh could not install it"
fi
CHROME="chromium --headless --no-sandbox --disable-gpu --user-data-dir=$T/profile --enable-logging=stderr --v=0 --virtual-time-budget=5000"

# render FILE.html: screenshot to FILE.png, console messages to FILE.console
render() {
	timeout 120 $CHROME --window-size=1200,4000 --screenshot="$1.png" \
		"file://$1" >/dev/null 2>"$1.log" || true
	grep -F 'CONSOLE' "$1.log" >"$1.console" || true
}
# images FILE.html: "decoded total" from a copy with a checking script
images() {
	sed 's|</body>|<script>addEventListener("load",()=>{const i=[...document.images];document.body.dataset.images=i.filter(x=>x.complete\&\&x.naturalWidth>0).length+" "+i.length})</script></body>|' \
		"$1" >"$1.check.html"
	timeout 120 $CHROME --dump-dom "file://$1.check.html" 2>/dev/null |
		sed -n 's/.*data-images="\([0-9]* [0-9]*\)".*/\1/p'
}

# blank FILE.png: exit 0 when the screenshot is blank (one colour nearly
# everywhere), 1 when it shows something; the PNG decoded by hand
blank() {
	python3 - "$1" <<'EOP'
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
i, idat = 8, b""
while i < len(b):
    n, t = struct.unpack(">I4s", b[i:i + 8])
    if t == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", b[i + 8:i + 18])
    elif t == b"IDAT":
        idat += b[i + 8:i + 8 + n]
    i += 12 + n
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, rows, o = bytearray(stride), [], 0
for y in range(h):
    f, line = raw[o], bytearray(raw[o + 1:o + 1 + stride])
    o += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        up, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + up) & 255
        elif f == 3: line[x] = (line[x] + (a + up) // 2) & 255
        elif f == 4:
            p = a + up - c
            pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
px = {}
for r in rows[::4]:
    for x in range(0, stride, bpp * 4):
        k = r[x:x + 3]
        px[k] = px.get(k, 0) + 1
top = max(px.values())
# blank: one colour covers 99.5% of the sampled pixels, or under 8 colours
sys.exit(0 if top > 0.995 * sum(px.values()) or len(px) < 8 else 1)
EOP
}

# the checks can fail
cat >"$T/bad.html" <<'EOT'
<!DOCTYPE html><html><body><img alt="x" src="data:image/png;base64,AAAA">
<script>undefined_function();</script></body></html>
EOT
render "$T/bad.html"
[ -s "$T/bad.html.console" ] || fail "a script error was not seen on the console: $(cat "$T/bad.html.log")"
[ "$(images "$T/bad.html")" = "0 1" ] || fail "a broken image was not seen: '$(images "$T/bad.html")'"
printf '<!DOCTYPE html><html><body></body></html>\n' >"$T/blank.html"
render "$T/blank.html"
[ -s "$T/blank.html.png" ] || fail "chromium rendered nothing: $(tail -n 5 "$T/blank.html.log")"
blank "$T/blank.html.png" || fail "a blank screenshot was not seen as blank"

$BACH gen --records 20000 --seed 9 -o "$T/g.byu"
make_capture "$T/cap" "$T/g.byu"
# a hand-edited line: an event whose name is markup with a handler (it
# ran in the browser: a script error on the console)
printf '{"time":"2026-11-21T22:30:02.002Z","event":"<svg onload=x()>"}\n' >> "$T/cap/manifest.jsonl"
$BACH report "$T/cap" -o "$T/report.html" || fail "report exited $?"

# self-contained: nothing fetched from anywhere, no script
grep -Eq '(src|href)="(https?:|//|file:)' "$T/report.html" && fail "the report refers to outside files"
grep -qi '<script' "$T/report.html" && fail "the report holds a script"
# the manifest's events, the mark's text escaped, versions
for want in '>gap<' '>overflow<' '>stall<' '>mark<' '>device_lost<' '>device_back<' \
	'&lt;b&gt;phase &amp; two&lt;/b&gt;' 'bach 0.' 'seg-000001.byu.gz' '>D_WRITE<' \
	'>&lt;svg onload=x()&gt;<'; do
	grep -qF -- "$want" "$T/report.html" || fail "the report lacks $want"
done

render "$T/report.html"
[ -s "$T/report.html.png" ] || fail "chromium rendered nothing: $(tail -n 5 "$T/report.html.log")"
[ -s "$T/report.html.console" ] && fail "console messages: $(cat "$T/report.html.console")"
[ "$(images "$T/report.html")" = "4 4" ] || fail "images decoded/present: '$(images "$T/report.html")', want 4 4"
blank "$T/report.html.png" && fail "the report's screenshot is blank"

# a capture of the fake board: provenance, timeline, types, alt text, print
mkdir "$T/fc"
$BACH capture --driver fake --option records=60000 --option seed=2 --option timing=1 \
	--option overflow_every=5:3000 --set marker=io:0x80 \
	--set marker_rate=20000 --policy drop --label machine=p166 \
	--label run=7 --output "$T/fc" >"$T/fc.log" 2>&1 || fail "bach capture: $(cat "$T/fc.log")"
fc=$(ls -d "$T"/fc/*/)
fc=${fc%/}
cat >>"$fc/manifest.jsonl" <<'EOT'
{"time":"2026-11-26T14:00:00.000Z","event":"mark","segment":"seg-000001.byu.gz","at":30000,"record":30000,"source":"ctl","text":"phase two"}
EOT
$BACH report "$fc" -o "$T/fc.html" || fail "report of a capture exited $?"
$BACH stat "$fc" >"$T/fc.stat" || fail "bach stat"
$BACH stat --time "$fc" >"$T/fc.tstat" || fail "bach stat --time"
python3 - "$fc/manifest.jsonl" "$T/fc.html" "$T/fc.stat" "$T/fc.tstat" <<'EOP' || fail "the report of $fc (above)"
import datetime, html, json, re, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
page = open(sys.argv[2]).read()
st = next(e for e in ev if e["event"] == "started")
end = [e for e in ev if e["event"] == "ended"][-1]
def row(k):
    m = re.search(r'<th scope="row">%s</th><td>(.*?)</td>' % re.escape(k), page)
    assert m, "no row " + k
    return html.unescape(m.group(1))
def secs(t):
    return datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
labels = [html.unescape(v) for v in re.findall(r'<th scope="row">label</th><td>(.*?)</td>', page)]
assert labels == ["%s=%s" % kv for kv in st["labels"].items()] == ["machine=p166", "run=7"], labels
assert row("host") == st["host"]
assert row("gateware") == st["gateware"]
assert row("versions").startswith("bach %s " % st["bach_version"])
assert row("driver") == "%s, options %s" % (st["driver"], ", ".join(
    "%s=%s" % kv for kv in st["options"].items())), row("driver")
assert row("policy") == st["config"]["policy"] == "drop"
dur = secs(end["time"]) - secs(st["time"])
assert row("duration") == "%.3f s" % dur, (row("duration"), dur)
mean = end["written"] / dur
got = row("mean rate (records written / duration)")
num, unit = got.split()[0], got.split()[1]
scale = {"M": 1e6, "k": 1e3, "records/s": 1}[unit]
assert abs(float(num) * scale - mean) <= 0.01 * scale, (got, mean)
assert row("peak rate (the busiest segment)").endswith("records/s")
# bach stat's types, in its order
want = [l.split()[0] for l in open(sys.argv[3]).read().split("by type:\n")[1]
        .split("special cycles:")[0].splitlines()]
tab = page.split("<h2>Records (bach stat)</h2>")[1].split("</table>")[0]
got = re.findall(r"<tr><td>([^<]*)</td>", tab)[:len(want)]
assert got == want, (got, want)
# the timeline: a line at each gap, mark and marker, where its record is
svg = re.search(r"<svg class=\"tl\".*?</svg>", page, re.S).group(0)
total = sum(e["records"] for e in ev if e["event"] == "segment")
def xs(colour):
    return sorted(float(x) for x in re.findall(
        r'<line x1="([0-9.]+)"[^>]*stroke="%s"' % colour, svg))
def at(es):
    return sorted(round(10 + 980 * min(e["at"], total) / total, 1) for e in es)
gaps = [e for e in ev if e["event"] == "gap"]
marks = [e for e in ev if e["event"] == "mark"]
# in bach plot's palette (Okabe and Ito's), the gaps labelled as it
# labels them, and the axis with 1-2-5 ticks
assert len(gaps) >= 2 and xs("#d55e00") == at(gaps), (xs("#d55e00"), at(gaps))
markers = [e for e in marks if e.get("source") == "marker"]
assert len(markers) >= 2 and xs("#009e73") == at(markers)
assert xs("#000000") == at([e for e in marks if e.get("source") != "marker"])
assert "phase two</text>" in svg
g = gaps[0]
assert ">%d records lost (%s)</text>" % (g["lost"], g["cause"]) in svg, svg
ticks = re.findall(r'<line x1="([0-9.]+)" y1="70" x2="[0-9.]+" y2="75"', svg)
step = 980 * 5000 / total  # 60000 records: ticks every 5k
assert len(ticks) >= 8 and all(abs(float(b) - float(a) - step) < 0.2 for a, b in zip(ticks, ticks[1:])), ticks
assert len(re.findall("<rect ", svg)) == len([e for e in ev if e["event"] == "segment"])
assert re.search(r'role="img" aria-labelledby="tl-title tl-desc"', svg)
assert re.search(r"<desc id=\"tl-desc\">[^<]{40,}</desc>", svg)
# alt text on every image, saying what it shows
alts = re.findall(r'<img alt="([^"]*)"', page)
assert len(alts) == page.count("<img") == 4 and all(len(a) > 60 for a in alts), alts
assert "@media print{" in page
# bach stat --time's lines, as it prints them
plain, timed = open(sys.argv[3]).read(), open(sys.argv[4]).read()
assert timed.startswith(plain) and "duration" in timed[len(plain):]
got = page.split("<h2>Timing (bach stat --time)</h2>\n<pre>")[1].split("</pre>")[0]
assert html.unescape(got) == timed[len(plain):], (got, timed[len(plain):])
EOP
render "$T/fc.html"
[ -s "$T/fc.html.console" ] && fail "console messages: $(cat "$T/fc.html.console")"
blank "$T/fc.html.png" && fail "the capture report's screenshot is blank"
timeout 120 $CHROME --print-to-pdf="$T/fc.pdf" "file://$T/fc.html" >/dev/null 2>&1 || true
[ "$(head -c 5 "$T/fc.pdf" 2>/dev/null)" = "%PDF-" ] || fail "chromium did not print the report to PDF"

# a plain trace file: the same page without a manifest, its gap markers
# the gaps
$BACH convert -q "$fc" "$T/flat.byu.gz" || fail "bach convert"
$BACH report "$T/flat.byu.gz" -o "$T/flat.html" || fail "report of a file exited $?"
grep -qF "<h1>Trace $T/flat.byu.gz</h1>" "$T/flat.html" || fail "the file's report lacks its title"
grep -qF "Timing (bach stat --time)" "$T/flat.html" && fail "timing shown for a file without a sidecar"
ngaps=$(grep -c '"event":"gap"' "$fc/manifest.jsonl")
[ "$(grep -o 'stroke="#d55e00"' "$T/flat.html" | wc -l)" = "$ngaps" ] ||
	fail "the file's timeline lacks its $ngaps gap markers"
grep -q '<img alt="Address map of ' "$T/flat.html" || fail "the file's report lacks its pictures"

# bad input: exit 2 (usage), 1 (damaged data); no page left behind
expect_status 2 $BACH report "$T/cap"
expect_err "no -o FILE.html given"
expect_status 2 $BACH report -o "$T/x.html"
expect_err "no CAPTURE given"
expect_status 2 $BACH report "$T/nothing" -o "$T/x.html"
expect_err "No such file or directory"
mkdir "$T/empty"
expect_status 2 $BACH report "$T/empty" -o "$T/x.html"
expect_err "no manifest.jsonl"
expect_status 2 $BACH report "$T/cap" -o "$T/cap/x.html"
expect_err "inside the capture directory"
cp -r "$T/cap" "$T/badm"
printf '{"time":"x","event":"gap","at":"soon"}\n' >>"$T/badm/manifest.jsonl"
expect_status 1 $BACH report "$T/badm" -o "$T/x.html"
expect_err "manifest.jsonl: line 10"
cp -r "$T/cap" "$T/cut"
size=$(wc -c <"$T/cut/seg-000001.byu.gz")
head -c $((size - 100)) "$T/cap/seg-000001.byu.gz" >"$T/cut/seg-000001.byu.gz"
expect_status 1 $BACH report "$T/cut" -o "$T/x.html"
expect_err "seg-000001.byu.gz"
size=$(wc -c <"$T/flat.byu.gz")
head -c $((size - 100)) "$T/flat.byu.gz" >"$T/cutflat.byu.gz"
expect_status 1 $BACH report "$T/cutflat.byu.gz" -o "$T/x.html"
expect_err "cutflat.byu.gz"
[ -e "$T/x.html" ] && fail "a failed report left its page"
exit 0
