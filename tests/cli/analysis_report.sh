#!/bin/sh
# bach report in a real browser: headless Chromium renders the page to
# PNG with no console message, and every image of it decodes (checked by
# a copy of the page with a script added; the report itself has none).
# The checks are first shown to fail on a page with a broken image and a
# script error. Skips (77) only when chromium cannot be installed.
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

# the checks can fail
cat >"$T/bad.html" <<'EOT'
<!DOCTYPE html><html><body><img alt="x" src="data:image/png;base64,AAAA">
<script>undefined_function();</script></body></html>
EOT
render "$T/bad.html"
[ -s "$T/bad.html.console" ] || fail "a script error was not seen on the console: $(cat "$T/bad.html.log")"
[ "$(images "$T/bad.html")" = "0 1" ] || fail "a broken image was not seen: '$(images "$T/bad.html")'"

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

# bad input: exit 2 (usage), 1 (damaged data); no page left behind
expect_status 2 $BACH report "$T/cap"
expect_err "no -o FILE.html given"
expect_status 2 $BACH report -o "$T/x.html"
expect_err "no CAPTURE given"
expect_status 2 $BACH report "$T/g.byu" -o "$T/x.html"
expect_err "not a capture directory"
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
[ -e "$T/x.html" ] && fail "a failed report left its page"
exit 0
