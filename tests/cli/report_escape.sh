# bach report writes every string of the manifest as text: no manifest,
# however hostile, yields a page with a tag, an attribute, a comment or a
# declaration that bach does not write for a clean capture. Manifests
# with hostile strings in every member of every event (and in unknown
# events and members, and in the capture's own name) are rendered and the
# pages parsed with Python's html.parser, the reference here. Before the
# fix an event named <svg onload=alert(1)> put an svg element with an
# onload attribute on the page.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/capture.sh"
command -v python3 > /dev/null 2>&1 || skip "python3 not installed: the pages cannot be parsed"

$BACH gen --records 3000 --seed 9 -o "$T/g.byu"
make_capture "$T/clean" "$T/g.byu"
$BACH report "$T/clean" -o "$T/clean.html" || fail "report of a clean capture exited $?"

cat > "$T/check.py" << 'EOF'
import html.parser, json, os, random, re, subprocess, sys

bach, tmp, clean_dir, clean_html = sys.argv[1:5]

class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = set()     # (tag, attribute names)
        self.other = []       # comments, declarations, processing instructions
        self.values = []      # (tag, attribute, value)
    def handle_starttag(self, tag, attrs):
        self.tags.add((tag, tuple(sorted(a for a, _ in attrs))))
        self.values += [(tag, a, v) for a, v in attrs]
    handle_startendtag = handle_starttag
    def handle_endtag(self, tag):
        self.tags.add(("/" + tag, ()))
    def handle_comment(self, data):
        self.other.append("comment " + data)
    def handle_decl(self, decl):
        if decl.lower() != "doctype html":
            self.other.append("decl " + decl)
    def handle_pi(self, data):
        self.other.append("pi " + data)
    def unknown_decl(self, data):
        self.other.append("unknown " + data)

def parse(path):
    p = Page()
    p.feed(open(path, "rb").read().decode("utf-8", "replace"))
    p.close()
    return p

ref = parse(clean_html)
assert ref.tags and not ref.other, ref.other
assert ("tr", ("class",)) in ref.tags, "the clean page has no event rows"

HOSTILE = [
    "<svg onload=alert(1)>", "\"><img src=x onerror=alert(1)>",
    "'><script>alert(1)</script>", "</td></tr></table><iframe src=javascript:alert(1)>",
    "<!-- x", "--><b>", "<![CDATA[x]]>", "<?pi x?>", "<!DOCTYPE x>",
    "&lt;script&gt;", "&#60;script&#62;", "</title><script>alert(1)</script>",
    "</style><style>*{}</style>", "\" style=\"x", "' onmouseover='alert(1)",
    "a\nb\rc\td\x01\x1b[31m\x7f", "\u0085\u009b31m\u2028\u2029\u202e",
    "<a href=\"javascript:alert(1)\">", "<meta http-equiv=refresh content=0>",
    "<base href=//evil>", "<form><button formaction=javascript:alert(1)>",
    "x" * 300 + "<svg onload=alert(1)>", "é" * 100 + "<b>",
]
PIECES = list("<>\"'&=/ ;:!-?[]") + ["script", "svg", "on", "load", "\n", "\x00x",
                                      "\u0080", "\u00e9", "\U0001f600", "&#x3c;"]

def h(rng):
    if rng.random() < 0.6:
        s = rng.choice(HOSTILE)
    else:
        s = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40)))
    return s.replace("\x00", "")  # a JSON string may hold none

def cut(s, n):  # at most n bytes of UTF-8, whole characters
    return s.encode()[:n].decode("utf-8", "ignore")

def segname(rng):  # a segment or sidecar name the manifest reader takes
    return cut(h(rng).replace("/", "|"), 63) or "x"

def manifest(rng, n):
    ev = []
    t = lambda: h(rng) if rng.random() < 0.5 else "2026-11-21T22:30:00.000Z"
    def extra(o):
        for _ in range(rng.randint(0, 3)):
            o[h(rng)] = h(rng) if rng.random() < 0.7 else {h(rng): h(rng)}
        return o
    ev.append(extra({"time": t(), "event": "started", "version": 1, "host": h(rng),
        "bach_version": h(rng), "gateware": h(rng), "config_path": h(rng),
        "labels": {h(rng): h(rng) for _ in range(3)}, "driver": h(rng),
        "options": {h(rng): h(rng)}, "device": {h(rng): h(rng)},
        "config": {"file": h(rng), "policy": h(rng), "post_rotate": h(rng)}}))
    for k in range(rng.randint(3, 12)):
        kind = rng.choice(["gap", "stall", "mark", "marker", "device_lost", "device_back",
                           "retention", "segment", "unknown", "unknown"])
        at = rng.randint(0, n - 1)
        if kind == "gap":
            o = {"event": "gap", "segment": h(rng), "at": at, "lost": 5, "cause": h(rng)}
        elif kind == "stall":
            o = {"event": "stall", "segment": h(rng), "at": at, "source": h(rng), "count": 2}
        elif kind == "mark":
            o = {"event": "mark", "segment": h(rng), "at": at, "record": at,
                 "source": h(rng), "text": h(rng)}
        elif kind == "marker":
            o = {"event": "mark", "segment": h(rng), "at": at, "record": at,
                 "source": "marker", "rule": h(rng), "address": "0x00000080",
                 "be": "0xfe", "type": h(rng)}
        elif kind in ("device_lost", "device_back"):
            o = {"event": kind, "segment": h(rng), "at": at}
        elif kind == "retention":
            o = {"event": "retention", "name": h(rng), "capture": h(rng), "bytes": 1,
                 "reason": h(rng)}
        elif kind == "segment":
            o = {"event": "segment", "name": segname(rng), "records": 10, "gap_markers": 0,
                 "bytes": 100, "crc32": "0badf00d", "timing": segname(rng), "error": h(rng)}
        else:
            o = {"event": h(rng), "segment": h(rng), "at": at, "detail": h(rng)}
        o["time"] = t()
        ev.append(extra(o))
    ev.append(extra({"time": t(), "event": "ended", "state": h(rng), "stopped_by": h(rng),
        "decode": {h(rng): h(rng)}}))
    rng.shuffle(ev[1:-1])
    return "".join(json.dumps(o) + "\n" for o in ev)

rng = random.Random(18)
seg = os.path.join(clean_dir, "seg-000001.byu.gz")
n = 3000
rendered = 0
for i in range(41):
    name = cut(h(rng).replace("/", "|"), 200) or "x"
    d = os.path.join(tmp, "caps", str(i), name)
    os.makedirs(d)
    os.link(seg, os.path.join(d, "seg-000001.byu.gz"))
    with open(os.path.join(d, "manifest.jsonl"), "w") as f:
        if i == 40:  # the issue's line, added to a clean manifest by hand
            f.write(open(os.path.join(clean_dir, "manifest.jsonl")).read() +
                    '{"event":"<svg onload=alert(1)>"}\n')
        else:
            f.write(manifest(rng, n))
    out = os.path.join(tmp, "caps", str(i), "report.html")
    r = subprocess.run([bach, "report", d, "-o", out], capture_output=True)
    if r.returncode != 0:
        sys.exit("report %d exited %d: %s" % (i, r.returncode, r.stderr.decode("utf-8", "replace")))
    p = parse(out)
    extra_tags = p.tags - ref.tags
    if extra_tags or p.other:
        sys.exit("report %d (%s): bach does not write %s %s" % (i, d, sorted(extra_tags), p.other))
    for tag, a, v in p.values:
        if a == "src" and not v.startswith("data:image/png;base64,"):
            sys.exit("report %d: <%s %s=%r>" % (i, tag, a, v))
        if a == "style" and not re.fullmatch(r"width:[0-9.]+%;background:#(?:[0-9a-f]{3}){1,2}", v):
            sys.exit("report %d: <%s %s=%r>" % (i, tag, a, v))
    rendered += 1
print("%d hostile manifests rendered, no tag or attribute bach does not write" % rendered)
EOF
python3 "$T/check.py" "$BACH" "$T" "$T/clean" "$T/clean.html" || fail "a hostile manifest changed the page"
echo ok
