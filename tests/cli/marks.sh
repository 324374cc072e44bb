# Marks where they happened: `bach ctl mark` and SIGUSR1 to `bach capture`
# carry the source index read when they were asked for ("record"), placed
# at that record's trace position ("at"), not at the writer's block.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

S=$T/ctl.sock
ctl() { "$BACH" ctl --socket "$S" "$@"; }
# mark_field TEXT KEY CAP: member KEY of the mark event with TEXT
mark_field() {
	grep '"event":"mark"' "$3/manifest.jsonl" | grep -F "\"text\":\"$1\"" |
		sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"
}
# gen_rec N: record N of the fake's workload, independently of any capture
gen_rec() { "$BACH" gen --records $(($1 + 1)) --seed 7 | "$BACH" dump --skip "$1" -; }

# finish: stop bachd's capture, end bachd; the capture in $C
finish() {
	ctl stop > /dev/null
	wait_until 30 "the capture to close" grep -q '"event":"ended"' "$(capdir "$T/caps")/manifest.jsonl"
	kill -TERM "$P"
	reap_within 20 "$P"
	C=$(capdir "$T/caps")
}

# -- bachd, lossless: each mark between the produced counts around it -----
mkdir "$T/caps"
bg "$BACHD" --driver fake --option seed=7 --option rate=400000 --option frame=1000 \
	--set ring_mb=8 --output "$T/caps" --control-socket "$S" 2> "$T/log"
P=$BGPID
first_seg() { ls "$T"/caps/2*Z*/seg-000001.* > /dev/null 2>&1; }
wait_until 20 "the first segment" first_seg
: > "$T/bounds"
for i in 1 2 3 4 5 6; do
	ctl status --json > "$T/st0" || fail "status: $(cat "$T/st0")"
	ctl mark "m$i" > /dev/null || fail "mark m$i refused"
	ctl status --json > "$T/st1" || fail "status: $(cat "$T/st1")"
	echo "m$i $(jnum produced "$T/st0") $(jnum produced "$T/st1")" >> "$T/bounds"
	sleep 0.13
done
finish
snapped=0
while read -r text lo hi; do
	rec=$(mark_field "$text" record "$C")
	at=$(mark_field "$text" at "$C")
	[ -n "$rec" ] && [ -n "$at" ] || fail "mark $text: no record/at: $(grep "$text" "$C/manifest.jsonl")"
	[ "$lo" -le "$rec" ] && [ "$rec" -le "$hi" ] ||
		fail "mark $text: record $rec is not between the produced counts $lo and $hi around it"
	# lossless, no gap markers: the trace index is the source index
	[ "$at" -eq "$rec" ] || fail "mark $text: at $at, record $rec (stall, nothing lost)"
	[ $((rec % 10880)) -eq 0 ] && snapped=$((snapped + 1))
	grep -F "\"text\":\"$text\"" "$C/manifest.jsonl" | grep -q '"source":"ctl"' ||
		fail "mark $text: not source ctl"
done < "$T/bounds"
[ "$snapped" -lt 6 ] || fail "every mark on a block boundary (10880 records)"
"$BACH" verify -q "$C" > "$T/v" 2>&1 || fail "verify: $(cat "$T/v")"

# -- drop with frames lost: "at" still names the record the source had ----
rm -rf "$T/caps"/*
bg "$BACHD" --driver fake --option seed=7 --option rate=400000 --option frame=1000 \
	--option drop_every=5 --policy drop --set ring_mb=8 --output "$T/caps" \
	--control-socket "$S" 2> "$T/log"
P=$BGPID
wait_until 20 "the first segment" first_seg
for i in 1 2 3 4; do
	ctl mark "d$i" > /dev/null || fail "mark d$i refused"
	sleep 0.15
done
finish
[ "$(evcount "$C" gap)" -gt 0 ] || fail "drop_every=5 lost nothing"
for i in 1 2 3 4; do
	rec=$(mark_field "d$i" record "$C")
	at=$(mark_field "d$i" at "$C")
	[ "$at" -lt "$rec" ] || [ "$at" -eq "$rec" ] || fail "d$i: at $at past record $rec"
	got=$("$BACH" dump --skip "$at" -n 1 "$C")
	case $got in
	*" GAP:"*) ;; # the record was lost: the mark stands at its gap
	*) [ "$got" = "$(gen_rec "$rec")" ] ||
		fail "d$i: trace record $at is '$got', the source's record $rec is '$(gen_rec "$rec")'" ;;
	esac
done

# -- bach capture: SIGUSR1 marks --------------------------------------------
rm -rf "$T/caps"/*
bg "$BACH" capture --driver fake --option seed=7 --option rate=300000 \
	--option records=900000 --output "$T/caps" 2> "$T/log"
P=$BGPID
wait_until 20 "the first segment" first_seg
sleep 0.5
kill -USR1 "$P"
sleep 0.5
kill -USR1 "$P"
reap_within 30 "$P"
[ "$RC" -eq 0 ] || fail "bach capture with SIGUSR1 exited $RC: $(cat "$T/log")"
C=$(capdir "$T/caps")
r1=$(mark_field 'SIGUSR1 #1' record "$C")
r2=$(mark_field 'SIGUSR1 #2' record "$C")
[ -n "$r1" ] && [ -n "$r2" ] || fail "SIGUSR1 marks missing: $(grep mark "$C/manifest.jsonl")"
[ "$r1" -gt 0 ] && [ "$r1" -lt "$r2" ] && [ "$r2" -lt 900000 ] ||
	fail "SIGUSR1 marks at $r1 and $r2"
# about half a second apart at 300000 records a second
d=$((r2 - r1))
[ "$d" -gt 75000 ] && [ "$d" -lt 400000 ] || fail "SIGUSR1 marks $d records apart, 0.5 s at 300000/s"
[ "$(mark_field 'SIGUSR1 #1' at "$C")" -eq "$r1" ] || fail "SIGUSR1 #1: at is not its record"
grep -F '"text":"SIGUSR1 #2"' "$C/manifest.jsonl" | grep -q '"source":"signal"' || fail "not source signal"
exit 0
