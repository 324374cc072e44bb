# Every event bachd writes is one docs/bachd.md section 5 lists and one
# bach knows (lib/io/manifest_events.c): a capture that writes each of them
# (timing, an in-band marker, a user's mark, gaps, board stalls, a lost
# and returned device, retention of segments and of a whole capture) and a
# crashed one recovered, each line's event named as the docs spell a line,
# and bach verify of them warning of no unknown event.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

# the events docs/bachd.md section 5's table lists: its first column
awk '/^## / { s = ($2 == "5.") }
	s && /^\| event \| members \| when \|$/ { t = 1; next }
	t && !/^\|/ { t = 0 }
	t && /^\| `/ { sub(/^\| `/, ""); sub(/`.*/, ""); print }' \
	"$TOP/docs/bachd.md" | sort -u > "$T/docs"
[ "$(wc -l < "$T/docs")" -ge 9 ] ||
	fail "docs/bachd.md section 5 lists $(wc -l < "$T/docs") events: $(cat "$T/docs")"

# events CAP: the event of every line of CAP's manifest, as docs/bachd.md
# section 5 says a line begins: {"time":"...","event":"NAME"
events() {
	json_lines "$1/manifest.jsonl" || fail "$1/manifest.jsonl: not JSON lines"
	sed -n 's/^{"time":"[0-9TZ:.-]*","event":"\([^"]*\)".*/\1/p' "$1/manifest.jsonl" > "$T/ev"
	[ "$(wc -l < "$T/ev")" -eq "$(wc -l < "$1/manifest.jsonl")" ] ||
		fail "$1/manifest.jsonl: a line that does not begin as the docs say: $(grep -v '^{"time":"[^"]*","event":"' "$1/manifest.jsonl" | head -n 3)"
	sort -u "$T/ev"
}
# known CAP: CAP's events are all documented, and bach verify knows them
known() {
	events "$1" > "$T/ev.sorted"
	comm -23 "$T/ev.sorted" "$T/docs" > "$T/undoc"
	[ ! -s "$T/undoc" ] || fail "$1 has events docs/bachd.md does not list: $(cat "$T/undoc")"
	cat "$T/ev.sorted" >> "$T/written"
	expect_status 0 "$BACH" verify "$1"
	grep -q "unknown event" "$T/out" && fail "bach verify $1: $(grep "unknown event" "$T/out")"
	expect_out " 0 problems"
}
: > "$T/written"

# a capture for keep_captures to remove
mkdir "$T/caps"
"$BACH" capture --driver fake -O records=1000 -o "$T/caps" 2> "$T/log0" ||
	fail "capture 1: $(cat "$T/log0")"
old=$(capdir "$T/caps")
sleep 1.1 # a new capture name

S=$T/ctl.sock
bg "$BACHD" --driver fake -O seed=7 -O rate=600000 -O records=1500000 -O timing=1 \
	-O drop_every=50 -O stall_every=40:5 -O disconnect=300000:1 \
	--set rotate_mb=1 --set keep_bytes=1 --set keep_captures=1 \
	--set marker=io:0x80 --set marker_rate=5 \
	--output "$T/caps" --control-socket "$S" 2> "$T/log"
P=$BGPID
wait_until 20 "the control socket" test -S "$S"
"$BACH" ctl --socket "$S" mark "a mark" > /dev/null || fail "bach ctl mark"
reap_within 60 "$P"
[ "$RC" -eq 0 ] || fail "bachd exited $RC: $(tail -n 5 "$T/log")"
[ ! -e "$old" ] || fail "keep_captures=1 left $old"
C=$(capdir "$T/caps")
known "$C"
grep -q '"event":"retention","capture"' "$C/manifest.jsonl" || fail "no whole capture's retention event"
grep -q '"event":"retention","name"' "$C/manifest.jsonl" || fail "no segment's retention event"
grep -q '"event":"segment".*"timing"' "$C/manifest.jsonl" || fail "no timed segment"
grep -q '"event":"mark".*"source":"marker"' "$C/manifest.jsonl" || fail "no marker's mark"
grep -q '"event":"mark".*"source":"ctl"' "$C/manifest.jsonl" || fail "no user's mark"

# recovery's events: a recovered segment and a recovered end
mkdir "$T/crash"
crashed_capture "$T/crash" 3
expect_status 0 "$BACH" recover "$CRASHED"
grep -q '"event":"ended","state":"recovered"' "$CRASHED/manifest.jsonl" || fail "not recovered"
known "$CRASHED"

# every event the docs list was written, and so checked above
sort -u "$T/written" > "$T/all"
comm -13 "$T/all" "$T/docs" > "$T/unwritten"
[ ! -s "$T/unwritten" ] || fail "events the docs list that this test did not make bachd write: $(cat "$T/unwritten")"
echo ok
