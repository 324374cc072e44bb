# bachd under systemd's eyes: sd_notify (READY, STATUS, WATCHDOG,
# STOPPING) on a notify socket of our own, the watchdog falling silent while
# the writer is stuck, and the signals: SIGHUP rotates, SIGTERM and SIGINT
# drain, close and exit 0.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"
NL_OPT=
helper notify_listen
helper crc32

# notify_run DIR ARGS...: bachd with a notify socket DIR.sock and a
# 0.5 s watchdog; the datagrams go to DIR.notify, the log to DIR.log
notify_run() {
	d=$1
	shift
	mkdir "$d"
	bg "$T/notify_listen" -t 120 $NL_OPT -r "$d/*/seg-000001.*.part" "$d.sock" > "$d.notify"
	LPID=$BGPID
	wait_until 10 "the notify socket $d.sock" test -S "$d.sock"
	bg env -u WATCHDOG_PID NOTIFY_SOCKET="$d.sock" WATCHDOG_USEC=500000 \
		"$BACHD" --output "$d" --set ring_mb=8 "$@" 2> "$d.log"
	P=$BGPID
	wait_until 20 "READY=1 from bachd" grep -q 'READY=1' "$d.notify"
}

# the figures of the pings between READY and STOPPING: "COUNT MAXGAP"
pings() {
	awk '/READY=1/ { r = 1; p = $1 } /STOPPING=1/ { s = 1 }
	     r && !s && $2 == "WATCHDOG=1" { g = $1 - p; if (g > m) m = g; p = $1; n++ }
	     END { printf "%d %.3f\n", n, m }' "$1"
}

# -- A: READY, STATUS, WATCHDOG while data flows; SIGHUP rotates ----------
notify_run "$T/a" --driver fake --option records=800000 --option seed=3 \
	--option rate=250000
# READY first, and by then the capture directory and its first segment exist
head -n 1 "$T/a.notify" | grep -q ' READY=1' ||
	fail "the first notification is not READY=1: $(head -n 3 "$T/a.notify")"
sed -n 2p "$T/a.notify" | grep -q ' CHECK ok ' ||
	fail "READY=1 came before seg-000001.*.part existed: $(head -n 3 "$T/a.notify")"
# a moment of data on disk (a STATUS line counting written records), then SIGHUP
wait_until 20 "a STATUS line with records written" \
	grep -q ' STATUS=.*, [1-9][0-9]* written' "$T/a.notify"
C=$(capdir "$T/a")
kill -HUP "$P"
wait_until 20 "seg-000002 after SIGHUP" sh -c "ls '$C' | grep -q '^seg-000002'"
reap_within 60 "$P"
[ "$RC" -eq 0 ] || fail "A: bachd exited $RC: $(cat "$T/a.log")"
grep -q 'SIGHUP: starting a new segment' "$T/a.log" || fail "A: SIGHUP not logged: $(cat "$T/a.log")"
sleep 0.3 # the last datagrams
kill -TERM "$LPID"
reap "$LPID"
[ "$(grep -c 'READY=1' "$T/a.notify")" -eq 1 ] || fail "A: READY=1 more than once"
[ "$(grep -c ' STATUS=[0-9]* records/s' "$T/a.notify")" -ge 2 ] ||
	fail "A: fewer than 2 STATUS lines: $(cat "$T/a.notify")"
grep -q 'STOPPING=1' "$T/a.notify" || fail "A: no STOPPING=1 when the source ended"
set -- $(pings "$T/a.notify")
[ "$1" -ge 5 ] || fail "A: only $1 WATCHDOG=1 pings while data flowed"
awk -v g="$2" 'BEGIN { exit !(g < 1.25) }' ||
	fail "A: $2 s without a WATCHDOG=1 ping while data flowed (want one at least every second)"
check_closed "$C"
[ "$(ls "$C"/seg-* | grep -vc '\.gzi$')" -eq 2 ] || fail "A: SIGHUP: want 2 segments: $(ls "$C")"
[ "$(evcount "$C" segment)" -eq 2 ] || fail "A: want 2 segment events"
records "$C" "$T/a.byu"
"$BACH" gen --records 800000 --seed 3 -o "$T/gen3.byu"
same "$T/a.byu" "$T/gen3.byu"
[ "$(ended "$C" produced)" = 800000 ] && [ "$(ended "$C" written)" = 800000 ] &&
	[ "$(ended "$C" lost)" = 0 ] || fail "A: totals: $(grep ended "$C/manifest.jsonl")"

# -- B: SIGTERM drains, says STOPPING=1, exits 0 with a clean directory ---
notify_run "$T/b" --driver fake --option seed=5 --option rate=200000
wait_until 20 "three WATCHDOG=1 pings" sh -c "[ \$(grep -c WATCHDOG=1 '$T/b.notify') -ge 3 ]"
kill -TERM "$P"
reap_within 60 "$P"
[ "$RC" -eq 0 ] || fail "B: SIGTERM: bachd exited $RC: $(cat "$T/b.log")"
grep -q 'SIGTERM: draining and stopping' "$T/b.log" || fail "B: SIGTERM not logged"
sleep 0.3
kill -TERM "$LPID"
reap "$LPID"
grep -q 'STOPPING=1' "$T/b.notify" || fail "B: no STOPPING=1 after SIGTERM: $(cat "$T/b.notify")"
C=$(capdir "$T/b")
check_closed "$C"
[ "$(ended_state "$C")" = clean ] || fail "B: ended state $(ended_state "$C")"
w=$(ended "$C" written)
[ "$(ended "$C" produced)" = "$w" ] && [ "$(ended "$C" lost)" = 0 ] && [ "$w" -gt 0 ] ||
	fail "B: totals: $(grep ended "$C/manifest.jsonl")"
records "$C" "$T/b.byu"
[ "$(nrecs "$T/b.byu")" -eq "$w" ] || fail "B: $(nrecs "$T/b.byu") records on disk, manifest says $w"
is_gen_prefix "$T/b.byu" 5 || fail "B: the records are not bach gen's"

# -- C: SIGINT like SIGTERM (raw segments, no notify socket) ---------------
mkdir "$T/c"
bg env -u NOTIFY_SOCKET "$BACHD" --driver fake --option seed=6 --option rate=400000 \
	--no-compress --set ring_mb=8 --output "$T/c" 2> "$T/c.log"
P=$BGPID
# some data in the file first
wait_until 20 "data in the first segment" sh -c "[ -s \"\$(ls -d '$T/c'/2*/seg-000001.byu.part)\" ]"
kill -INT "$P"
reap_within 60 "$P"
[ "$RC" -eq 0 ] || fail "C: SIGINT: bachd exited $RC: $(cat "$T/c.log")"
grep -q 'SIGINT: draining and stopping' "$T/c.log" || fail "C: SIGINT not logged"
C=$(capdir "$T/c")
check_closed "$C"
[ "$(ended_state "$C")" = clean ] || fail "C: ended state $(ended_state "$C")"
w=$(ended "$C" written)
[ "$(ended "$C" produced)" = "$w" ] && [ "$(ended "$C" lost)" = 0 ] ||
	fail "C: totals: $(grep ended "$C/manifest.jsonl")"
records "$C" "$T/c.byu"
[ "$(nrecs "$T/c.byu")" -eq "$w" ] || fail "C: $(nrecs "$T/c.byu") records on disk, manifest says $w"
is_gen_prefix "$T/c.byu" 6 || fail "C: the records are not bach gen's"

# -- D: no WATCHDOG=1 while the writer is stuck in a write -----------------
# every segment write sleeps 3 s (a stuck disk); the source is as fast as
# it gets, so the writer is always mid-write or about to be
NL_OPT=-k # the listener's clock ticks, to see how long it has been silent
notify_run "$T/d" --driver fake --option seed=2 --set ring_mb=1 \
	--set test_writer_delay_ms=3000 --control-socket "$T/d.ctl"
wait_until 10 "the control socket" test -S "$T/d.ctl"
# status says so once a write has hung for 2 s
wait_until 30 "\"writer_blocked\":true in the status" \
	sh -c "'$BACH' ctl --socket '$T/d.ctl' status --json | grep -q '\"writer_blocked\":true'"
# after READY or a ping, a window of at least 2.5 s without one (run A
# showed that while data flows they come at least every second)
silent() {
	awk '/READY=1/ || $2 == "WATCHDOG=1" { p = $1 } p && $1 - p >= 2.5 { f = 1 }
	     END { exit !f }' "$T/d.notify"
}
wait_until 30 "a 2.5 s window without WATCHDOG=1" silent
# the drain would take 3 s a write: not what this case is about
kill -KILL "$P"
reap "$P"
kill -TERM "$LPID"
reap "$LPID"

# -- known trouble: checks that run last, each reported ----------------------
# SIGTERM stops a slowly paced source at once, not at its next frame (the
# fake board sends 4096 records a frame: 41 s apart at rate=100; replay
# paces 16384 records a slice: 164 s apart)
"$BACH" gen --records 50000 --seed 1 -o "$T/small.byu"
for src in "fake --option rate=100" "replay --option path=$T/small.byu --option rate=100"; do
	rm -rf "$T/e"
	mkdir "$T/e"
	bg "$BACHD" --driver $src --set ring_mb=1 --output "$T/e" 2> "$T/e.log"
	P=$BGPID
	wait_until 10 "the first segment" sh -c "ls '$T/e'/2*Z*/seg-000001.*"
	sleep 0.3
	kill -TERM "$P"
	n=60
	while alive "$P" && [ "$n" -gt 0 ]; do
		sleep 0.05
		n=$((n - 1))
	done
	if alive "$P"; then
		later "SIGTERM left bachd --driver ${src%% *} running for 3 s (its pacing sleep does not look at stop: drivers/${src%% *}.c)"
		kill -KILL "$P"
	fi
	reap "$P"
done
finish
