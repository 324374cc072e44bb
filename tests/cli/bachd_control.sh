# bachd's control socket (bach ctl and raw clients): status, mark, rotate,
# stop, start; malformed requests and strangers get an error and change
# nothing. Then the replay round trip: a capture played back through
# bachd is the same capture.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"
helper notify_listen
helper ctl_raw
helper crc32
helper gapwalk

# a socket that user nobody can reach, so that only its mode keeps them out
chmod 0711 "$T"
mkdir -m 0755 "$T/pub"
S=$T/pub/ctl.sock
ctl() { "$BACH" ctl --socket "$S" "$@"; }
raw() { "$T/ctl_raw" "$@"; }
# ok_alive: bachd still answers and still captures
ok_alive() {
	alive "$P" || fail "bachd died: $(tail -n 5 "$T/log")"
	ctl status --json > "$T/st" || fail "status after $1: $(cat "$T/st")"
	grep -q '"capturing":true' "$T/st" || fail "not capturing after $1: $(cat "$T/st")"
}

# stopped: a stop may answer at once and drain after: wait until idle
idle() { ctl status --json 2> /dev/null | grep -q '"capturing":false'; }
stopped() { wait_until 30 "bachd to become idle after stop" idle; }

mkdir "$T/caps"
bg "$T/notify_listen" -t 120 "$T/notify.sock" > "$T/notify"
LPID=$BGPID
wait_until 10 "the notify socket" test -S "$T/notify.sock"
# stderr connected to the journal, as systemd does it: JOURNAL_STREAM is
# the device and inode of stderr (systemd.exec(5)); the log has <N> prefixes
: > "$T/log"
bg env NOTIFY_SOCKET="$T/notify.sock" JOURNAL_STREAM="$(stat -c %d:%i "$T/log")" \
	"$BACHD" --driver fake --option seed=7 \
	--option rate=200000 --set ring_mb=8 --output "$T/caps" \
	--control-socket "$S" 2> "$T/log"
P=$BGPID
wait_until 20 "the control socket" test -S "$S"
# the socket opens before the capture starts: wait for its first segment too
first_seg() { ls "$T"/caps/2*Z*/seg-000001.* > /dev/null 2>&1; }
wait_until 20 "the first segment" first_seg
[ "$(stat -c %a "$S")" = 600 ] || fail "control socket mode $(stat -c %a "$S"), want 600"
C1=$(capdir "$T/caps")

# -- status: every counter; polls are not logged at info -------------------
bg "$BACH" ctl --socket "$S" status > /dev/null
CPID=$BGPID
reap "$CPID"
[ "$RC" -eq 0 ] || fail "bach ctl status exited $RC"
ctl status --json > "$T/st"
for k in '"ok":true' '"capturing":true' '"running":true' '"driver":"fake"' \
	'"bachd":{"version":"' "\"pid\":$P," '"gateware":"1.0"' \
	"\"capture\":\"$C1\"" '"segment":"seg-000001.'$SEG'.part"' '"produced":' \
	'"written":' '"lost":0' '"lost_by":{' '"overflow":0' '"frames":0' \
	'"corrupt":0' '"ring":0' '"device":0' '"disk":0' '"gap_markers":0' \
	'"bytes":' '"segments":0' '"stalls":' '"stall_ns":' '"ring_used":' \
	'"ring_blocks":' '"timing_bytes":0' '"corrupt_frames":0' '"writer_blocked":false'; do
	grep -qF -- "$k" "$T/st" || fail "status lacks $k: $(cat "$T/st")"
done
[ "$(wc -l < "$T/st")" -eq 1 ] || fail "status is not one line"
# start time and uptime: bachd's and the capture's, agreeing with the clock
now=$(date +%s)
cap_start=$(sed -n 's/.*"status":{.*"start_unix":\([0-9]*\)\.[0-9]*,.*/\1/p' "$T/st")
cap_up=$(sed -n 's/.*"status":{.*"uptime_seconds":\([0-9]*\)\.[0-9]*,.*/\1/p' "$T/st")
d_up=$(sed -n 's/.*"bachd":{[^}]*"uptime_seconds":\([0-9]*\)\.[0-9]*}.*/\1/p' "$T/st")
[ -n "$cap_start" ] && [ -n "$cap_up" ] && [ -n "$d_up" ] ||
	fail "status lacks start_unix or uptime_seconds: $(cat "$T/st")"
[ $((now - cap_start)) -ge 0 ] && [ $((now - cap_start)) -le 120 ] ||
	fail "capture start_unix $cap_start, now $now"
[ $((now - cap_start - cap_up)) -ge -1 ] && [ $((now - cap_start - cap_up)) -le 2 ] ||
	fail "uptime $cap_up s does not match start $cap_start (now $now)"
[ "$d_up" -ge "$cap_up" ] || fail "bachd up $d_up s, less than its capture's $cap_up s"
grep -q "\"start_time\":\"$(date -u -d "@$cap_start" +%Y-%m-%dT%H:%M:%SZ)\"" "$T/st" ||
	fail "start_time is not start_unix as UTC: $(cat "$T/st")"
# the summary, for a person
ctl status > "$T/sum" || fail "status summary: $(cat "$T/sum")"
grep -q "^bachd [0-9.]* (pid $P), up " "$T/sum" || fail "summary: $(cat "$T/sum")"
grep -qF '"bachd":{"version":"' "$T/st" && grep -qF '"program":"bachd",' "$T/st" ||
	fail "status does not name its program: $(cat "$T/st")"
grep -q "^capturing from fake (gateware 1.0)$" "$T/sum" || fail "summary: $(cat "$T/sum")"
grep -qF "  capture   $C1" "$T/sum" || fail "summary lacks the capture: $(cat "$T/sum")"
grep -q "^  started   $(date -u -d "@$cap_start" +%Y-%m-%dT%H:%M:%SZ), running for " "$T/sum" ||
	fail "summary lacks the start: $(cat "$T/sum")"
grep -q '^  records   [1-9][0-9]* produced, [0-9]* written, 0 lost' "$T/sum" ||
	fail "summary lacks the records: $(cat "$T/sum")"
if grep -q '^{' "$T/sum"; then fail "the summary is JSON: $(cat "$T/sum")"; fi
ctl --json status | grep -q '^{"ok":true,' || fail "--json before the command"
# the board's own figures, from its last status frame (one each 1M records)
wait_until 15 "the board's status in bach ctl status" sh -c \
	"'$BACH' ctl --socket '$S' status --json | grep -q '\"board\":{\"fifo_fill\":[0-9]*,\"fifo_size\":65536,\"records\":[1-9][0-9]*,.*\"clock_hz\":66666666,\"off_bus\":0}}'"
# a poller must not flood the journal: status is logged at debug only
if grep -q "request 'status' from pid $CPID" "$T/log"; then
	fail "a status poll was logged at info: $(grep "pid $CPID" "$T/log")"
fi

# -- mark: the text, JSON-escaped, in the manifest --------------------------
ctl mark 'he said "hi" \ back\slash ünïcødé' > "$T/r" || fail "mark: $(cat "$T/r")"
printf 'mark tab\there\001ctl\n' | raw "$S" > "$T/r"
grep -q '"ok":true' "$T/r" || fail "raw mark: $(cat "$T/r")"
wait_until 10 "the marks in the manifest" grep -q 'tab' "$C1/manifest.jsonl"
grep -q "^<6>control: request 'mark he said .* from pid [0-9]* uid $(id -u) gid $(id -g)$" "$T/log" ||
	fail "the peer of a mark request not logged at info: $(cat "$T/log")"
grep -qF '"text":"he said \"hi\" \\ back\\slash ünïcødé"' "$C1/manifest.jsonl" ||
	fail "mark text not escaped right: $(grep mark "$C1/manifest.jsonl")"
grep -qF '"text":"tab\u0009here\u0001ctl"' "$C1/manifest.jsonl" ||
	fail "control characters not escaped: $(grep mark "$C1/manifest.jsonl")"
grep '"event":"mark"' "$C1/manifest.jsonl" | grep -q "\"segment\":\"seg-000001.$SEG\",\"at\":[0-9]" ||
	fail "a mark without its position"

# -- malformed requests: an error each, and the capture goes on -----------
printf 'status' | raw "$S" > "$T/r" || fail "no reply to a request without newline"
grep -q '"ok":false,"error":"a request is one line' "$T/r" || fail "no newline: $(cat "$T/r")"
ok_alive "no newline"
printf 'sta\000tus\n' | raw "$S" > "$T/r" || fail "no reply to a NUL byte"
grep -q '"ok":false,"error":"malformed request: a NUL byte"' "$T/r" || fail "NUL: $(cat "$T/r")"
ok_alive "a NUL byte"
{ head -c 5000 /dev/zero | tr '\0' s; echo; } | raw "$S" > "$T/r" || fail "no reply to 5000 bytes"
grep -q '"ok":false,"error":"request too long"' "$T/r" || fail "5000 bytes: $(cat "$T/r")"
grep -q 'request longer than 4095 bytes refused' "$T/log" || fail "long request not logged"
ok_alive "5000 bytes"
for req in frobnicate 'mark' 'mark ' 'status please' 'STATUS' ''; do
	printf '%s\n' "$req" | raw "$S" > "$T/r" || fail "no reply to '$req'"
	grep -q '"ok":false,"error":"unknown request' "$T/r" || fail "'$req': $(cat "$T/r")"
	ok_alive "'$req'"
done
grep -q "unknown request 'frobnicate'" "$T/log" || fail "unknown request not logged"
# a client that says nothing, and one that hangs up without reading
raw -n "$S" < /dev/null > "$T/r" || fail "no reply to a silent client"
grep -q '"ok":false,"error":"no request line' "$T/r" || fail "silent client: $(cat "$T/r")"
ok_alive "a silent client"
printf 'status\n' | raw -c "$S"
printf 'stop\n' | raw -c "$S" # handled: this one stops the capture
stopped
ctl start > "$T/r" || fail "start after a hung-up stop: $(cat "$T/r")"
wait_until 20 "the second capture" sh -c "[ \$(ls -d '$T/caps'/2*Z* | wc -l) -eq 2 ]"
C2=$(capdir "$T/caps")
ok_alive "a client that hung up"
# bach ctl itself refuses what it cannot send
expect_status 2 "$BACH" ctl --socket "$S" frobnicate
expect_status 2 "$BACH" ctl --socket "$S" mark
# an instance name is one path component without control characters
# (a newline went into the socket path and split the message in two)
for bad in "$(printf 'a\nb')" "$(printf 'a\033[2Jb')" "$(printf 'a\302\233b')" a/b .. ""; do
	expect_status 2 "$BACH" ctl --instance "$bad" status
	expect_err "--instance: a unit instance name"
	[ "$(wc -l < "$T/err")" -eq 2 ] || fail "--instance '$bad': $(cat -A "$T/err")"
	LC_ALL=C grep -q "$(printf '\033\|\302\233')" "$T/err" && fail "a control character printed raw: $(cat -A "$T/err")"
done
expect_err "not ''"
expect_status 2 "$BACH" ctl --instance "$(printf 'a\nb')" status
expect_err "not 'a\nb'"
# a socket path given: named with its newline escaped
expect_status 2 "$BACH" ctl --socket "$(printf '%s/no\nsuch' "$T")" status
expect_err "$T/no\\nsuch: No such file or directory"
ok_alive "bach ctl usage errors"

# -- nobody else may talk to it --------------------------------------------
if command -v setpriv > /dev/null 2>&1 && id nobody > /dev/null 2>&1; then
	ng=$(id -gn nobody)
	expect_status 2 setpriv --reuid=nobody --regid="$ng" --clear-groups \
		"$BACH" ctl --socket "$S" stop
	expect_err "Permission denied"
	ok_alive "a stranger"
else
	echo "no setpriv or no user nobody: the stranger case is not run"
fi

# -- rotate, stop, status, start, stop --------------------------------------
wait_until 20 "records in the second capture" sh -c \
	"'$BACH' ctl --socket '$S' status --json | grep -q '\"written\":[1-9]'"
ctl rotate > "$T/r" || fail "rotate: $(cat "$T/r")"
grep -qx 'rotated: the next segment is open' "$T/r" || fail "rotate says: $(cat "$T/r")"
wait_until 20 "seg-000002 after rotate" test -e "$C2/seg-000002.$SEG.part"
test -e "$C2/seg-000001.$SEG" || fail "rotate: seg-000001 not closed"
ctl stop > "$T/r" || fail "stop: $(cat "$T/r")"
stopped
alive "$P" || fail "bachd exited on stop"
ctl status --json > "$T/st" || fail "status when idle: $(cat "$T/st")"
grep -q '"capturing":false' "$T/st" && grep -q '"running":false' "$T/st" ||
	fail "idle status: $(cat "$T/st")"
for k in produced written lost; do
	[ "$(jnum "$k" "$T/st")" = "$(ended "$C2" "$k")" ] ||
		fail "idle status $k $(jnum "$k" "$T/st"), manifest $(ended "$C2" "$k")"
done
# replies for a person; errors on stderr; --json gives the reply as it is
expect_status 2 "$BACH" ctl --socket "$S" stop
[ ! -s "$T/out" ] || fail "an error reply on stdout: $(cat "$T/out")"
expect_err "bach ctl: stop: not capturing"
ctl --json stop > "$T/r" && fail "stop when idle said ok"
[ "$(cat "$T/r")" = '{"ok":false,"error":"not capturing"}' ] || fail "stop --json when idle: $(cat "$T/r")"
ctl rotate > "$T/r" 2> /dev/null && fail "rotate when idle said ok"
ctl mark idle > "$T/r" 2> /dev/null && fail "mark when idle said ok"
ctl start > "$T/r" || fail "start: $(cat "$T/r")"
grep -qx 'started: a new capture (bach ctl status)' "$T/r" || fail "start says: $(cat "$T/r")"
ctl start --json > "$T/r" && fail "start twice said ok"
grep -q '"error":"already capturing"' "$T/r" || fail "start twice: $(cat "$T/r")"
wait_until 20 "a third capture directory" sh -c "[ \$(ls -d '$T/caps'/2*Z* | wc -l) -eq 3 ]"
C3=$(capdir "$T/caps")
# a second of it, so that a STATUS line comes from the new capture
third() {
	awk '/STATUS=idle/ { f = 0; next } /STATUS=[0-9].*, [1-9][0-9]* written/ { f = 1 }
	     END { exit !f }' "$T/notify"
}
wait_until 20 "STATUS from the third capture" third
ctl mark 'in the third' > "$T/r" || fail "mark in the third capture"
grep -qx 'marked at the record the source delivers next' "$T/r" || fail "mark says: $(cat "$T/r")"
ctl stop > "$T/r" || fail "second stop: $(cat "$T/r")"
grep -q '^stopping: ' "$T/r" || fail "stop says: $(cat "$T/r")"
stopped

# every capture is closed and is bach gen's stream, all its records there
for c in "$C1" "$C2" "$C3"; do
	check_closed "$c"
	[ "$(ended_state "$c")" = clean ] || fail "$c: ended $(ended_state "$c")"
	w=$(ended "$c" written)
	[ "$(ended "$c" produced)" = "$w" ] && [ "$(ended "$c" lost)" = 0 ] ||
		fail "$c: totals: $(grep ended "$c/manifest.jsonl")"
	records "$c" "$T/recs.byu"
	[ "$(nrecs "$T/recs.byu")" -eq "$w" ] || fail "$c: $(nrecs "$T/recs.byu") records, manifest $w"
	is_gen_prefix "$T/recs.byu" 7 || fail "$c: records are not bach gen's"
done
[ "$(ls "$C2"/seg-* | grep -vc '\.gzi$')" -ge 2 ] || fail "rotate: $(ls "$C2")"
grep -q 'in the third' "$C3/manifest.jsonl" || fail "the mark in the third capture is missing"

# SIGTERM when idle: exit 0
kill -TERM "$P"
reap_within 30 "$P"
[ "$RC" -eq 0 ] || fail "idle bachd exited $RC on SIGTERM"
test -e "$S" && fail "control socket left behind"
sleep 0.2
kill -TERM "$LPID"
reap "$LPID"

# STATUS lines from a restarted capture count from that capture's start
awk '$2 ~ /^STATUS=[0-9]/ { split($2, a, "="); if (a[2] + 0 > 1e12) { print; bad = 1 } }
     END { exit bad }' "$T/notify" > "$T/badstatus" ||
	later "STATUS after bach ctl stop + start is nonsense (bachd.c tick: static prev_written): $(head -n 1 "$T/badstatus")"
# and records/s is a rate: the written count's change over the time between
# two STATUS lines of one capture, however many requests came in between
awk '/STATUS=idle/ { p = 0; next }
     $2 ~ /^STATUS=[0-9]/ {
	split($2, a, "="); r = a[2] + 0
	w = $0; sub(/ written.*/, "", w); sub(/.* /, "", w); w += 0
	if (p && $1 - t > 0.05 && w > pw) {
		x = (w - pw) / ($1 - t)
		if (r < x / 2 || r > x * 2) { printf "%s records/s, but %d written in %.3f s\n", r, w - pw, $1 - t; bad = 1; exit }
	}
	p = 1; t = $1; pw = w
     }
     END { exit bad }' "$T/notify" > "$T/badrate" ||
	later "STATUS records/s is not per second when requests wake the main loop (bachd.c tick counts loop turns): $(cat "$T/badrate")"

# a long mark (1500 two-byte characters) and a byte that is not UTF-8: the
# manifest must hold the whole text and stay valid JSON in UTF-8
mkdir "$T/m"
bg "$BACHD" --driver fake --option seed=7 --option rate=100000 --set ring_mb=8 \
	--output "$T/m" --control-socket "$S" 2> "$T/m.log"
P=$BGPID
wait_until 20 "the control socket" test -S "$S"
long=$(awk 'BEGIN { for (i = 0; i < 1500; i++) printf "é" }')
[ "$(printf '%s' "$long" | wc -c)" -eq 3000 ] || fail "awk made a mark of $(printf '%s' "$long" | wc -c) bytes"
ctl mark "$long" > /dev/null || fail "a 3000-byte mark refused"
printf 'mark bad \377 byte\n' | raw "$S" > /dev/null
ctl stop > /dev/null || fail "stop (marks)"
stopped
kill -TERM "$P"
reap_within 30 "$P"
M=$(capdir "$T/m")
grep -qF "\"text\":\"$long\"" "$M/manifest.jsonl" ||
	later "a 3000-byte mark is cut short in the manifest (capture.c write_marks: esc[1024])"
grep -av '"text":"bad ' "$M/manifest.jsonl" > "$T/m1.jsonl"
json_lines "$T/m1.jsonl" > "$T/json.err" 2>&1 ||
	later "a long mark makes the manifest invalid JSON/UTF-8 (cut inside a character): $(tail -n 1 "$T/json.err")"
grep -a '"text":"bad ' "$M/manifest.jsonl" > "$T/m2.jsonl" || fail "the mark with byte 0xff is missing"
json_lines "$T/m2.jsonl" > "$T/json.err" 2>&1 ||
	later "a mark with a byte that is not UTF-8 makes the manifest invalid JSON (manifest.c json_escape copies it): $(tail -n 1 "$T/json.err")"

# -- start right after stop, stop --wait: a slow disk makes stops slow -------
# every segment write sleeps 300 ms, so a stop takes that long to drain
mkdir "$T/w"
bg "$BACHD" --driver fake --option seed=3 --option rate=100000 --set ring_mb=4 \
	--set test_writer_delay_ms=300 --output "$T/w" --control-socket "$S" 2> "$T/w.log"
P=$BGPID
wait_until 20 "the control socket" test -S "$S"
wait_until 20 "the first segment" sh -c "ls '$T'/w/2*Z*/seg-000001.* > /dev/null 2>&1"
W1=$(capdir "$T/w")
# start right after stop waits for the stop instead of failing
ctl stop > /dev/null || fail "stop (slow disk)"
ctl start > "$T/r" 2> "$T/r.err" ||
	fail "start right after stop failed: $(cat "$T/r" "$T/r.err")"
[ "$(ls -d "$T"/w/2*Z* | wc -l)" -eq 2 ] || fail "start after stop: $(ls "$T/w")"
W2=$(capdir "$T/w")
[ "$(ended_state "$W1")" = clean ] || fail "the stopped capture did not end cleanly"
check_closed "$W1"
# stop --wait returns once the capture has ended, and says how
wait_until 20 "records in the second capture" sh -c \
	"'$BACH' ctl --socket '$S' status --json | grep -q '\"written\":[1-9]'"
ctl stop --wait > "$T/r" || fail "stop --wait: $(cat "$T/r")"
[ "$(ended_state "$W2")" = clean ] || fail "stop --wait returned before the capture ended: $(ls "$W2")"
check_closed "$W2"
idle || fail "stop --wait returned, bachd still capturing"
[ "$(head -n 1 "$T/r")" = "stopped: $W2" ] || fail "stop --wait says: $(cat "$T/r")"
grep -qx "  records   $(ended "$W2" produced) produced, $(ended "$W2" written) written, 0 lost" "$T/r" ||
	fail "stop --wait's figures are not the manifest's: $(cat "$T/r"; grep ended "$W2/manifest.jsonl")"
grep -qx '  ended     clean (exit status 0)' "$T/r" || fail "stop --wait: $(cat "$T/r")"
# --json: the server's reply; --timeout bounds the wait (exit 2)
ctl start > /dev/null || fail "start after stop --wait"
expect_status 2 "$BACH" ctl --socket "$S" --timeout 0.1 stop --wait
expect_err "no reply within 0.1 s"
stopped
ctl start > /dev/null || fail "start after a stop --wait gave up"
ctl --json stop --wait > "$T/r" || fail "--json stop --wait: $(cat "$T/r")"
grep -q '^{"ok":true,"state":"stopped","exit_status":0,"status":{"running":false,' "$T/r" ||
	fail "stop --wait --json: $(cat "$T/r")"
[ "$(ls -d "$T"/w/2*Z* | wc -l)" -eq 4 ] || fail "four captures wanted: $(ls "$T/w")"
# a start held while bachd exits (SIGTERM during the drain) is told so,
# and starts nothing
ctl start > /dev/null || fail "a fifth start"
wait_until 20 "a fifth capture" sh -c "[ \$(ls -d '$T'/w/2*Z* | wc -l) -eq 5 ]"
n0=$(grep -c "request 'start'" "$T/w.log")
ctl stop > /dev/null || fail "stop before a held start"
bg "$BACH" ctl --socket "$S" start > "$T/held" 2>&1
H=$BGPID
wait_until 10 "bachd to take the start" sh -c "[ \$(grep -c \"request 'start'\" '$T/w.log') -gt $n0 ]"
kill -TERM "$P"
reap_within 30 "$H"
[ "$RC" -eq 2 ] || fail "a start held while bachd exits: exit $RC: $(cat "$T/held")"
grep -q "bach ctl: start: exiting: no capture started" "$T/held" || fail "held start: $(cat "$T/held")"
reap_within 30 "$P"
[ "$RC" -eq 0 ] || fail "bachd (slow disk) exited $RC"
[ "$(ls -d "$T"/w/2*Z* | wc -l)" -eq 5 ] || fail "a capture started as bachd exited: $(ls "$T/w")"

# -- the control group: its members may, others may not ---------------------
if command -v setpriv > /dev/null 2>&1 && id nobody > /dev/null 2>&1 &&
	getent group nogroup > /dev/null && getent group daemon > /dev/null; then
	mkdir "$T/g"
	# JOURNAL_STREAM inherited, but stderr is a file, not that stream:
	# plain lines, no <N> prefixes
	bg env JOURNAL_STREAM="$(stat -c %d:%i /dev/null)" \
		"$BACHD" --driver fake --option rate=100000 --set ring_mb=8 --output "$T/g" \
		--control-socket "$S" --set control_group=nogroup \
		--set log_level=debug 2> "$T/g.log"
	P=$BGPID
	wait_until 20 "the control socket" test -S "$S"
	[ "$(stat -c '%a %G' "$S")" = "660 nogroup" ] ||
		fail "group socket: $(stat -c '%a %G' "$S")"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$BACH" ctl --socket "$S" status \
		> "$T/r" 2>&1 || fail "a member of the control group was refused: $(cat "$T/r")"
	expect_status 2 setpriv --reuid=nobody --regid=daemon --clear-groups \
		"$BACH" ctl --socket "$S" status
	expect_err "Permission denied"
	grep -q "^bachd: control: request 'status' from pid [0-9]* uid $(id -u nobody) gid $(getent group nogroup | cut -d: -f3)$" "$T/g.log" ||
		fail "the group member's request not logged: $(cat "$T/g.log")"
	! grep -q '^<' "$T/g.log" ||
		fail "<N> prefixes with stderr not the journal: $(cat "$T/g.log")"
	kill -TERM "$P"
	reap_within 30 "$P"
	[ "$RC" -eq 0 ] || fail "group bachd exited $RC"
fi

# -- replay round trip ------------------------------------------------------
mkdir "$T/r1" "$T/r2" "$T/r3" "$T/r4"
"$BACHD" --driver fake --option records=300000 --option seed=13 --set rotate_mb=1 \
	--set ring_mb=8 --output "$T/r1" 2> "$T/log" || fail "capture for replay: $(cat "$T/log")"
R1=$(capdir "$T/r1")
[ "$(ls "$R1"/seg-* | grep -vc '\.gzi$')" -eq 2 ] || fail "want 2 segments to replay: $(ls "$R1")"
records "$R1" "$T/r1.byu"
"$BACH" gen --records 300000 --seed 13 -o "$T/gen13.byu"
"$BACH" gen --records 300000 --seed 13 -o "$T/gen13.byu.gz"
same "$T/r1.byu" "$T/gen13.byu"
n=2
for input in "$R1" "$T/gen13.byu" "$T/gen13.byu.gz"; do
	"$BACHD" --driver replay --option path="$input" --set ring_mb=8 \
		--output "$T/r$n" 2> "$T/log" || fail "replay of $input: $(cat "$T/log")"
	R=$(capdir "$T/r$n")
	check_closed "$R"
	grep -q '"event":"started".*"driver":"replay"' "$R/manifest.jsonl" || fail "no replay started event"
	[ "$(ended "$R" produced)" = 300000 ] && [ "$(ended "$R" written)" = 300000 ] ||
		fail "replay of $input: totals $(grep ended "$R/manifest.jsonl")"
	records "$R" "$T/rr.byu"
	same "$T/rr.byu" "$T/gen13.byu"
	n=$((n + 1))
done
# a board stream dump (raw_dump) of a clean session and of one with frames
# lost on the link and board overflows: the replay is the same trace, with
# the same gaps, and the same totals
for faults in "" "--option drop_every=7 --option overflow_every=5:300"; do
	rm -rf "$T/bs" "$T/bsr"
	mkdir "$T/bs" "$T/bsr"
	"$BACHD" --driver fake --option records=300000 --option seed=13 $faults \
		--set raw_dump=yes --set ring_mb=8 --output "$T/bs" 2> "$T/log" ||
		fail "raw_dump capture ($faults): $(cat "$T/log")"
	D=$(capdir "$T/bs")
	[ -s "$D/board-stream.bin" ] || fail "no board-stream.bin: $(ls "$D")"
	check_closed "$D"
	"$BACHD" --driver replay --option path="$D/board-stream.bin" --set ring_mb=8 \
		--output "$T/bsr" 2> "$T/log" || fail "replay of the board stream ($faults): $(cat "$T/log")"
	R=$(capdir "$T/bsr")
	check_closed "$R"
	grep -q '"input":"board stream"' "$R/manifest.jsonl" || fail "the replay did not take it for a board stream"
	records "$D" "$T/bs.byu"
	records "$R" "$T/bsr.byu"
	same "$T/bsr.byu" "$T/bs.byu"
	for k in produced written lost gap_markers; do
		[ "$(ended "$D" $k)" = "$(ended "$R" $k)" ] ||
			fail "board stream replay ($faults): $k $(ended "$R" $k), the capture said $(ended "$D" $k)"
	done
	grep '"event":"gap"' "$D/manifest.jsonl" | sed 's/.*"at"/"at"/' > "$T/g.d"
	grep '"event":"gap"' "$R/manifest.jsonl" | sed 's/.*"at"/"at"/' > "$T/g.r"
	same "$T/g.r" "$T/g.d"
	if [ -z "$faults" ]; then
		same "$T/bsr.byu" "$T/gen13.byu"
	else
		[ "$(ended "$R" lost)" -gt 0 ] || fail "the faults lost nothing"
		"$T/gapwalk" "$T/gen13.byu" "$T/bsr.byu" > "$T/walk" ||
			fail "board stream replay: not gen minus the gaps: $(cat "$T/walk")"
	fi
done
finish
