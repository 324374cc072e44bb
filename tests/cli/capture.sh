# bach capture: one capture in the foreground, its summary, Ctrl-C.
. "$TOP/tests/lib.sh"

# N records: exit 0, a summary that adds up, exactly bach gen's records
mkdir "$T/c"
$BACH capture --driver fake --option records=50000 --option seed=8 --output "$T/c" \
	2> "$T/err" || fail "bach capture exited $?: $(cat "$T/err")"
grep -q "50000 records produced, 50000 written, 0 lost" "$T/err" || fail "summary: $(cat "$T/err")"
C=$(ls -d "$T"/c/2*Z*)
$BACH gen --records 50000 --seed 8 -o "$T/g.byu"
zstd -dcq "$C"/seg-*.byu.zst | cmp -s - "$T/g.byu" || fail "bach capture differs from bach gen"
$BACH verify "$C" > /dev/null || fail "does not verify"

# Ctrl-C (SIGINT) drains and closes: exit 0, no .part, a prefix of gen's stream
mkdir "$T/i"
$BACH capture --driver fake --option rate=200000 --option seed=8 --output "$T/i" 2> "$T/err2" &
pid=$!
i=0
until ls "$T"/i/2*Z*/seg-000001.byu.zst.part > /dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "no segment after 20 s"; sleep 0.1
done
sleep 0.5
kill -INT $pid
wait $pid || fail "bach capture exited $? after SIGINT: $(cat "$T/err2")"
C=$(ls -d "$T"/i/2*Z*)
ls "$C" | grep -q part && fail ".part left after SIGINT"
n=$($BACH stat --json "$C" | sed 's/.*"records":\([0-9]*\).*/\1/')
[ "$n" -gt 0 ] || fail "nothing captured before SIGINT"
$BACH gen --records "$n" --seed 8 -o "$T/p.byu"
$BACH convert -q "$C" "$T/cap.byu"
same "$T/cap.byu" "$T/p.byu"
grep -q '"event":"ended","state":"clean"' "$C/manifest.jsonl" || fail "no clean end"

# usage errors exit 2 and name the problem
expect_status 2 $BACH capture --driver nosuch --output "$T"
expect_err "no driver 'nosuch'"
expect_status 2 $BACH capture --driver fake --option records=x --output "$T"
expect_err "records"
expect_status 2 $BACH capture --driver fake --output "$T/missing"
expect_status 2 $BACH ctl --socket "$T/none.sock" status
expect_err "is bachd running"
expect_status 2 $BACH ctl frobnicate

# configuration errors name the file and the line (bachd and bach capture)
BACHD="$(dirname "$BACH")/bachd"
printf '[bachd]\noutput = %s\npolicy = stall\n\nring_mb = lots\n' "$T" > "$T/bad.conf"
expect_status 2 "$BACHD" --check-config --config "$T/bad.conf"
expect_err "$T/bad.conf:5: ring_mb: want a number from 1 to 1048576"
expect_err "not 'lots'"
printf '[bachd]\nfrobnicate = 1\n' > "$T/bad2.conf"
expect_status 2 $BACH capture --config "$T/bad2.conf" --driver fake
expect_err "$T/bad2.conf:2: unknown setting 'frobnicate' (output, driver, policy,"
printf '[bachd]\npolicy = drop\n[driver]\nrecords = 10\n[nonsense]\nx = 1\n' > "$T/bad3.conf"
expect_status 2 "$BACHD" --check-config --config "$T/bad3.conf"
expect_err "$T/bad3.conf:6: unknown section [nonsense]"
printf '[bachd]\npolicy = drop\noutput = %s\n' "$T" > "$T/good.conf"
expect_status 0 "$BACHD" --check-config --config "$T/good.conf" --driver fake
expect_status 2 "$BACHD" --check-config --config "$T/missing.conf"
expect_err "missing.conf: No such file"

# no source or no place is a usage error, never a capture into "."
expect_status 2 "$BACHD"
expect_err "no source: --driver NAME"
expect_status 2 $BACH capture --driver fake
expect_err "no place to write: --output DIR"
# one writer per output directory, one bachd per control socket
mkdir "$T/one"
"$BACHD" --driver fake --option rate=50000 --output "$T/one" \
	--control-socket "$T/one.sock" 2> "$T/first.log" &
first=$!
i=0
until [ -S "$T/one.sock" ] && ls "$T"/one/2*Z*/seg-*.part > /dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "first bachd did not start"; sleep 0.1
done
expect_status 2 $BACH capture --driver fake --option records=10 --output "$T/one"
expect_err "another bachd or bach capture is writing there"
mkdir "$T/two"
expect_status 2 "$BACHD" --driver fake --option records=10 --output "$T/two" --control-socket "$T/one.sock"
expect_err "another bachd answers on it"
[ -z "$(ls "$T/two")" ] || fail "a refused bachd made a capture directory"
$BACH ctl --socket "$T/one.sock" status > /dev/null || fail "the first bachd lost its socket"
kill -TERM $first
wait $first || fail "first bachd exited $?"
ls "$T"/one/2*Z* | grep -q part && fail "the first capture was disturbed"

# bach capture's own lines keep a newline in the path on one line too
NL="$T/new
line"
mkdir "$NL"
expect_status 0 $BACH capture --driver fake --option records=10 --output "$NL"
[ "$(grep -c '^line' "$T/err")" -eq 0 ] || fail "a line was split: $(cat "$T/err")"
expect_err "capturing from fake into $T/new\nline/2"
expect_err "$T/new\nline/2"

# --control-socket: bach ctl's status, mark, rotate and stop reach a
# foreground capture; the socket goes with it
. "$TOP/tests/helpers/bachd_lib.sh"
mkdir "$T/cs"
bg $BACH capture --driver fake --option rate=100000 --output "$T/cs" \
	--control-socket "$T/cap.sock" 2> "$T/cs.log"
P=$BGPID
wait_until 10 "the control socket" test -S "$T/cap.sock"
"$BACH" ctl --socket "$T/cap.sock" status --json > "$T/st" || fail "status: $(cat "$T/st")"
[ "$(jq -r '.status.driver' "$T/st")" = fake ] || fail "status: $(cat "$T/st")"
[ "$(jq -r '.capturing' "$T/st")" = true ] || fail "not capturing: $(cat "$T/st")"
"$BACH" ctl --socket "$T/cap.sock" status > "$T/sum" || fail "summary: $(cat "$T/sum")"
grep -q "capture   $(capdir "$T/cs")" "$T/sum" || fail "summary: $(cat "$T/sum")"
"$BACH" ctl --socket "$T/cap.sock" mark phase one > "$T/r" || fail "mark: $(cat "$T/r")"
"$BACH" ctl --socket "$T/cap.sock" rotate > "$T/r" || fail "rotate: $(cat "$T/r")"
sleep 0.5
"$BACH" ctl --socket "$T/cap.sock" stop > "$T/r" || fail "stop: $(cat "$T/r")"
reap_within 20 "$P"
[ "$RC" -eq 0 ] || fail "bach capture exited $RC after bach ctl stop: $(cat "$T/cs.log")"
[ -e "$T/cap.sock" ] && fail "the control socket stayed behind"
C=$(capdir "$T/cs")
grep '"event":"mark"' "$C/manifest.jsonl" | grep -q '"source":"ctl","text":"phase one"' ||
	fail "no mark: $(cat "$C/manifest.jsonl")"
[ "$(evcount "$C" segment)" -ge 2 ] || fail "rotate made no second segment"
[ "$(ended_state "$C")" = clean ] || fail "not a clean end"
# a socket another capture answers on is refused, naming the setting
bg $BACH capture --driver fake --option rate=1000 --output "$T/cs" --control-socket "$T/cap.sock"
P=$BGPID
wait_until 10 "the control socket" test -S "$T/cap.sock"
expect_status 2 $BACH capture --driver fake --option records=10 --output "$T/cs" \
	--control-socket "$T/cap.sock"
expect_err "control_socket $T/cap.sock"
kill -INT "$P"
reap_within 20 "$P"

# -- by default a control socket, capture-PID.sock beside bachd's default
# (BACH_SOCKET is $T/bachd.sock), named in the first line, found by bach
# ctl, one per capture, gone at exit --
mkdir "$T/d" "$T/d2"
bg $BACH capture --driver fake --option rate=100000 --output "$T/d" 2> "$T/d.log"
P=$BGPID
wait_until 10 "the first line" grep -q '^capturing from' "$T/d.log"
C=$(capdir "$T/d")
[ "$(head -n 1 "$T/d.log")" = "capturing from fake into $C (Ctrl-C stops; control socket $T/capture-$P.sock)" ] ||
	fail "the first line does not name the socket: $(head -n 1 "$T/d.log")"
test -S "$T/capture-$P.sock" || fail "no socket at $T/capture-$P.sock: $(ls "$T")"
# no bachd there: bach ctl finds the one capture by itself; status names it
"$BACH" ctl status > "$T/sum" || fail "bach ctl status without --socket: $(cat "$T/sum")"
grep -q "^bach capture [0-9][0-9.]* (pid $P), up " "$T/sum" ||
	fail "status does not name bach capture: $(cat "$T/sum")"
grep -q '^capturing from fake' "$T/sum" || fail "summary: $(cat "$T/sum")"
"$BACH" ctl --socket "$T/capture-$P.sock" status --json > "$T/st" || fail "status --json: $(cat "$T/st")"
[ "$(jq -r '.bachd.program' "$T/st") $(jq -r '.bachd.pid' "$T/st")" = "bach capture $P" ] ||
	fail "status --json: $(cat "$T/st")"
# a second capture beside it has its own; bach ctl then asks which
bg $BACH capture --driver fake --option rate=1000 --output "$T/d2" 2> "$T/d2.log"
P2=$BGPID
wait_until 10 "the second capture's socket" test -S "$T/capture-$P2.sock"
expect_status 2 "$BACH" ctl status
expect_err "several bach captures answer beside it: --socket one of"
expect_err "  $T/capture-$P.sock"
expect_err "  $T/capture-$P2.sock"
# start is bachd's only; replies are for a person, errors on stderr
expect_status 2 "$BACH" ctl --socket "$T/capture-$P2.sock" start
expect_err "bach ctl: start: unknown request (bach capture:"
"$BACH" ctl --socket "$T/capture-$P2.sock" stop > "$T/r" || fail "stop: $(cat "$T/r")"
grep -q '^stopping: ' "$T/r" || fail "stop says: $(cat "$T/r")"
reap_within 20 "$P2"
[ ! -e "$T/capture-$P2.sock" ] || fail "the second capture left its socket"
# stop --wait returns once the capture has ended, and says how
wait_until 10 "records" sh -c "'$BACH' ctl status --json | grep -q '\"written\":[1-9]'"
"$BACH" ctl stop --wait > "$T/r" || fail "stop --wait: $(cat "$T/r")"
[ "$(ended_state "$C")" = clean ] || fail "stop --wait returned before the capture ended: $(ls "$C")"
ls "$C" | grep -q '\.part$' && fail "stop --wait returned with a .part left: $(ls "$C")"
[ "$(head -n 1 "$T/r")" = "stopped: $C" ] || fail "stop --wait says: $(cat "$T/r")"
grep -qx "  records   $(ended "$C" produced) produced, $(ended "$C" written) written, 0 lost" "$T/r" ||
	fail "stop --wait's figures are not the manifest's: $(cat "$T/r")"
grep -qx '  ended     clean (exit status 0)' "$T/r" || fail "stop --wait: $(cat "$T/r")"
reap_within 20 "$P"
[ "$RC" -eq 0 ] || fail "bach capture exited $RC after stop --wait: $(cat "$T/d.log")"
[ ! -e "$T/capture-$P.sock" ] || fail "the socket stayed behind"
# none: no socket, and the first line names none
bg $BACH capture --driver fake --option rate=1000 --output "$T/d" --control-socket none 2> "$T/n.log"
P=$BGPID
wait_until 10 "the first line" grep -q '^capturing from' "$T/n.log"
grep -q '(Ctrl-C stops)$' "$T/n.log" || fail "--control-socket none: $(head -n 1 "$T/n.log")"
[ -z "$(ls "$T" | grep '^capture-')" ] || fail "--control-socket none made one: $(ls "$T")"
kill -INT "$P"
reap_within 20 "$P"
# the server's strings are escaped: a capture directory with a newline and
# an escape sequence in its name neither splits the summary nor reaches
# the terminal raw
E=$(printf '%s/e\033[2Jx\nl' "$T")
mkdir "$E"
bg $BACH capture --driver fake --option rate=1000 --output "$E" 2> "$T/e.log"
P=$BGPID
wait_until 10 "the socket" test -S "$T/capture-$P.sock"
"$BACH" ctl status > "$T/sum" || fail "status: $(cat "$T/sum")"
if LC_ALL=C grep -q "$(printf '\033')" "$T/sum"; then
	fail "bach ctl status printed an escape sequence raw: $(cat -A "$T/sum")"
fi
grep -q '^l/' "$T/sum" && fail "bach ctl status split a line: $(cat -A "$T/sum")"
grep -qF "  capture   $T/e\x1b[2Jx\nl/2" "$T/sum" || fail "status: $(cat -A "$T/sum")"
kill -INT "$P"
reap_within 20 "$P"
echo ok
