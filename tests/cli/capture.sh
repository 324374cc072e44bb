# bach capture: one capture in the foreground, its summary, Ctrl-C.
. "$TOP/tests/lib.sh"

# N records: exit 0, a summary that adds up, exactly bach gen's records
mkdir "$T/c"
$BACH capture --driver fake --option records=50000 --option seed=8 --output "$T/c" \
	2> "$T/err" || fail "bach capture exited $?: $(cat "$T/err")"
grep -q "50000 records produced, 50000 written, 0 lost" "$T/err" || fail "summary: $(cat "$T/err")"
C=$(ls -d "$T"/c/2*Z*)
$BACH gen --records 50000 --seed 8 -o "$T/g.byu"
zcat "$C"/seg-*.byu.gz | cmp -s - "$T/g.byu" || fail "bach capture differs from bach gen"
$BACH verify "$C" > /dev/null || fail "does not verify"

# Ctrl-C (SIGINT) drains and closes: exit 0, no .part, a prefix of gen's stream
mkdir "$T/i"
$BACH capture --driver fake --option rate=200000 --option seed=8 --output "$T/i" 2> "$T/err2" &
pid=$!
i=0
until ls "$T"/i/2*Z*/seg-000001.byu.gz.part > /dev/null 2>&1; do
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
echo ok
