# bachd --driver usb against an emulated board: real libusb in a real
# bachd, talking usbfs to tests/helpers/usb_board.c on umockdev, which
# answers with the fake driver's board model (drivers/board_model.c).
# Skips only where umockdev cannot run.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

# the emulated board, built by make tests with the project's flags
# (sanitized in the sanitized pass) where umockdev's files are
case ${BUILD:=build} in /*) EMU=$BUILD ;; *) EMU=$TOP/$BUILD ;; esac
EMU=$EMU/tests/helpers/usb_board
if [ ! -x "$EMU" ]; then
	pkg-config --exists umockdev-1.0 gio-2.0 glib-2.0 2> /dev/null ||
		skip "umockdev-1.0 development files missing (scripts/deps.sh installs libumockdev-dev): the board cannot be emulated here"
	fail "$EMU is not built: make tests"
fi
set +e
"$EMU" --check 2> "$T/check.err"
rc=$?
set -e
[ $rc -eq 77 ] && skip "umockdev cannot run here: $(tail -n 1 "$T/check.err")"
[ $rc -eq 0 ] || fail "usb_board --check exited $rc: $(cat "$T/check.err")"

# cap NAME [EMULATOR OPTIONS] -- [BACHD OPTIONS]: a capture into $T/NAME
# through the emulated board; bachd's exit status in $RC, both logs in
# $T/NAME.log, the capture directory in $C
cap() {
	name=$1
	shift
	mkdir -p "$T/$name"
	eopts=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		eopts="$eopts $1"
		shift
	done
	[ $# -gt 0 ] && shift
	set +e
	# shellcheck disable=SC2086
	timeout 60 "$EMU" $eopts -- "$BACHD" --driver usb "$@" \
		--output "$T/$name" > "$T/$name.log" 2>&1
	RC=$?
	set -e
	[ $RC -ne 124 ] || fail "$name: bachd hung (killed after 60 s): $(tail -n 5 "$T/$name.log")"
	C=$(ls -d "$T/$name"/2*Z* 2> /dev/null | head -n 1 || true)
}

log_has() { # NAME TEXT
	grep -qF -- "$2" "$T/$1.log" || fail "$1: log lacks '$2': $(tail -n 8 "$T/$1.log")"
}

man_has() { # TEXT: the manifest of $C has it
	grep -qF -- "$1" "$C/manifest.jsonl" || fail "$C/manifest.jsonl lacks '$1': $(cat "$C/manifest.jsonl")"
}

no_part() {
	! ls "$C" | grep -q '\.part$' || fail "$C: a .part was left: $(ls "$C")"
}

# prefix FILE SEED: FILE holds the first records of bach gen --seed SEED
prefix() {
	n=$(($(wc -c < "$1") / 6))
	[ "$n" -gt 0 ] || fail "$1 holds no records"
	$BACH gen --records "$n" --seed "$2" -o "$T/prefix.byu"
	same "$1" "$T/prefix.byu"
}

# 1. N records through libusb equal bach gen's, and the manifest names the board
cap plain records=200000 seed=5 serial=LAB-7 gw=1.3 --
[ $RC -eq 0 ] || fail "plain capture exited $RC: $(cat "$T/plain.log")"
$BACH gen --records 200000 --seed 5 -o "$T/g5.byu"
$BACH convert -q "$C" "$T/plain.byu"
same "$T/plain.byu" "$T/g5.byu"
$BACH verify "$C" > /dev/null || fail "plain capture does not verify"
man_has '"driver":"usb"'
man_has '"serial":"LAB-7","gateware":"1.3"'
man_has '"usb":"1209:4243","usb_path":"1-2","usb_speed":"high"'
man_has '"event":"ended","state":"clean","produced":200000,"written":200000,"lost":0'
no_part
# a board an earlier host left capturing: stopped and drained at open,
# nothing of that capture gets in
cap running records=200000 seed=5 running=1 rate=400000 --
[ $RC -eq 0 ] || fail "running board: exit $RC: $(tail -n 5 "$T/running.log")"
$BACH convert -q "$C" "$T/running.byu"
same "$T/running.byu" "$T/g5.byu"

# 2. timing deltas, short packets (frames straddle transfers at odd
# places) and the largest frames through the smallest transfers
cap short records=300000 seed=3 short=3000 -- --option timing=1
[ $RC -eq 0 ] || fail "short packets: exit $RC: $(tail -n 5 "$T/short.log")"
$BACH gen --records 300000 --seed 3 -o "$T/g3.byu"
$BACH convert -q "$C" "$T/short.byu"
same "$T/short.byu" "$T/g3.byu"
cap big records=300000 seed=3 frame=65535 -- --option timing=1 --option xfer_kib=16 --option xfers=4
[ $RC -eq 0 ] || fail "big frames: exit $RC: $(tail -n 5 "$T/big.log")"
man_has '"transfers":4,"transfer_bytes":16384'
$BACH convert -q "$C" "$T/big.byu"
same "$T/big.byu" "$T/g3.byu"

# 2b. the board's FT2232H bridge: 245 synchronous FIFO mode set by vendor
# requests, two status bytes at the start of every packet (and alone once
# per latency timer), channel A on endpoints 0x81 and 0x02
cap ftdi bridge=ftdi records=300000 seed=3 short=3000 -- --option timing=1
[ $RC -eq 0 ] || fail "ftdi bridge: exit $RC: $(tail -n 5 "$T/ftdi.log")"
man_has '"bridge":"ftdi","endpoints":"02 81"'
$BACH convert -q "$C" "$T/ftdi.byu"
same "$T/ftdi.byu" "$T/g3.byu"
cap ftdiplain bridge=ftdi records=1000 -- --option bridge=plain
[ $RC -eq 2 ] || fail "ftdi bridge taken as plain: exit $RC, expected 2"
log_has ftdiplain "bytes came, not one frame (an FTDI bridge not in 245 FIFO mode? see the option bridge=)"

# 3. the same board as fake: with link and FIFO faults, the usb capture
# and the fake capture hold the same trace and the same gaps
F="records=300000 seed=4 frame=1000 drop_every=7 corrupt_every=5 overflow_every=3:100 status_every=4"
cap faults $F --
[ $RC -eq 0 ] || fail "faults: exit $RC: $(tail -n 5 "$T/faults.log")"
mkdir "$T/fakecap"
set --
for o in $F; do set -- "$@" --option "$o"; done
$BACH capture --driver fake "$@" --output "$T/fakecap" 2> "$T/fakecap.log" ||
	fail "fake capture: $(cat "$T/fakecap.log")"
FC=$(ls -d "$T"/fakecap/2*Z*)
$BACH convert -q "$C" "$T/faults.byu"
$BACH convert -q "$FC" "$T/fake.byu"
same "$T/faults.byu" "$T/fake.byu"
grep -o '"event":"gap".*' "$C/manifest.jsonl" | sed 's/"time":"[^"]*",//' > "$T/gaps.usb"
grep -o '"event":"gap".*' "$FC/manifest.jsonl" | sed 's/"time":"[^"]*",//' > "$T/gaps.fake"
[ -s "$T/gaps.usb" ] || fail "faults: no gap in the manifest"
same "$T/gaps.usb" "$T/gaps.fake"
grep -o '"produced":[0-9]*,"written":[0-9]*,"lost":[0-9]*' "$C/manifest.jsonl" > "$T/tot.usb"
grep -o '"produced":[0-9]*,"written":[0-9]*,"lost":[0-9]*' "$FC/manifest.jsonl" > "$T/tot.fake"
same "$T/tot.usb" "$T/tot.fake"

# 4. the board test patterns, bit-exact
cap counter records=100000 -- --option pattern=counter
[ $RC -eq 0 ] || fail "counter pattern: exit $RC: $(tail -n 5 "$T/counter.log")"
man_has '"source":"counter"'
$BACH dump "$C" | awk '$1 != sprintf("%08x", (NR - 1) * 8) || $2 != "00" || $3 != "D_READ" { bad++ }
	END { if (bad || NR != 100000) { print NR " records, " bad " wrong"; exit 1 } }' ||
	fail "the counter pattern came through wrong"
cap lfsr records=100000 -- --option pattern=lfsr --option timing=1
[ $RC -eq 0 ] || fail "lfsr pattern: exit $RC: $(tail -n 5 "$T/lfsr.log")"
"$EMU" --lfsr 100000 "$T/lfsr.ref"
$BACH convert -q "$C" "$T/lfsr.byu"
same "$T/lfsr.byu" "$T/lfsr.ref"

# 5. an endpoint STALL: cleared, nothing lost; one that persists ends the
# capture with a clear error, never a hang
cap stall records=300000 seed=3 halt=500000:1 --
[ $RC -eq 0 ] || fail "stall: exit $RC: $(tail -n 5 "$T/stall.log")"
log_has stall "IN endpoint stalled after"
log_has stall "the IN endpoint stalled (1 so far); halt cleared, capture goes on"
$BACH convert -q "$C" "$T/stall.byu"
same "$T/stall.byu" "$T/g3.byu"
cap stuck records=300000 seed=3 halt=500000:1000 --
[ $RC -eq 4 ] || fail "persistent stall: exit $RC, expected 4: $(tail -n 5 "$T/stuck.log")"
log_has stuck "the IN endpoint stalled 16 times in a row; clearing the halt does not help"
man_has '"event":"ended","state":"source_error"'
no_part
$BACH convert -q "$C" "$T/stuck.byu"
prefix "$T/stuck.byu" 3

# 6. unplugged mid-stream: the segment closes with device_lost, the
# capture ends (exit 4), every record before the unplug is there
cap unplug records=300000 seed=3 disconnect=100000:0 replug=0 --
[ $RC -eq 4 ] || fail "unplug: exit $RC, expected 4: $(tail -n 5 "$T/unplug.log")"
log_has unplug "board EMU-3 unplugged after"
log_has unplug "usb: device_lost: board EMU-3 at 1-2 unplugged"
man_has '"event":"device_lost"'
man_has '"event":"ended","state":"source_error"'
no_part
$BACH convert -q "$C" "$T/unplug.byu"
[ $(($(wc -c < "$T/unplug.byu") / 6)) -ge 100000 ] || fail "unplug: records before it missing"
prefix "$T/unplug.byu" 3

# 7. unplugged in the middle of a frame, back 1 s later (reconnect=1):
# the cut frame is a gap (cause device), the capture resumes in a new
# segment from the board's next START, and the totals add up
cap replug records=300000 seed=3 disconnect=100000:1 cut=1000 -- --option reconnect=1
[ $RC -eq 0 ] || fail "replug: exit $RC: $(tail -n 5 "$T/replug.log")"
log_has replug "usb: device_back: board EMU-3 back at 1-2"
man_has '"event":"device_back","segment":"seg-000002.byu.zst"'
grep '"event":"gap"' "$C/manifest.jsonl" | grep -q '"cause":"device"' ||
	fail "replug: no gap with cause device: $(cat "$C/manifest.jsonl")"
lost=$(grep '"event":"gap"' "$C/manifest.jsonl" | sed 's/.*"lost":\([0-9]*\).*/\1/')
[ "$lost" -gt 0 ] && [ "$lost" -le 65535 ] || fail "replug: $lost records lost to the cut frame"
[ "$(ls "$C" | grep -c 'seg-.*\.byu\.zst$')" -eq 2 ] || fail "replug: not two segments: $(ls "$C")"
no_part
zstd -dcq "$C/seg-000002.byu.zst" > "$T/replug2.byu"
same "$T/replug2.byu" "$T/g3.byu"
zstd -dcq "$C/seg-000001.byu.zst" > "$T/replug1.byu"
n1=$(($(wc -c < "$T/replug1.byu") / 6 - 1))	# the last record is the gap marker
head -c $((n1 * 6)) "$T/replug1.byu" > "$T/replug1r.byu"
prefix "$T/replug1r.byu" 3
man_has "\"produced\":$((n1 + lost + 300000)),\"written\":$((n1 + 300000)),\"lost\":$lost"
$BACH verify "$C" > /dev/null || fail "replug capture does not verify"

# 7b. the same with timing: the board back counts its clock from 0 again
# (its new START); the capture's clocks go on from the last one
# (docs/formats.md 3.2): segment 2's record i at that clock plus 2i, the
# board's own
cap replugt records=300000 seed=3 disconnect=100000:1 cut=1000 -- \
	--option reconnect=1 --option timing=1
[ $RC -eq 0 ] || fail "replug with timing: exit $RC: $(tail -n 5 "$T/replugt.log")"
$BACH dump --time "$C/seg-000001.byu.zst" > "$T/rt1" || fail "replug with timing: dump --time of segment 1"
$BACH dump --time "$C/seg-000002.byu.zst" > "$T/rt2" || fail "replug with timing: dump --time of segment 2"
last=$(tail -n 1 "$T/rt1" | awk '{ print $4 }')
awk -v l="$last" '$4 != l + 2 * (NR - 1) { print NR ": " $0; exit 1 }' "$T/rt2" ||
	fail "replug with timing: segment 2's clocks do not go on from $last"
$BACH dump --time "$C" > /dev/null || fail "replug with timing: dump --time of the capture"
$BACH verify "$C" > /dev/null || fail "replug with timing: does not verify"

# 8. a board that stops sending: a time-out ends the capture, no hang
start=$(date +%s)
cap silent records=300000 seed=3 silent_at=100000 -- --option timeout=2 --option status_ms=500
[ $RC -eq 4 ] || fail "silent board: exit $RC, expected 4: $(tail -n 5 "$T/silent.log")"
[ $(($(date +%s) - start)) -lt 20 ] || fail "silent board: took $(($(date +%s) - start)) s"
log_has silent "is silent: not a byte in 2 s, though STATUS was asked every 500 ms"
no_part
$BACH convert -q "$C" "$T/silent.byu"
prefix "$T/silent.byu" 3
# ... also behind an FTDI bridge, whose status packets keep coming
cap ftdisilent bridge=ftdi records=300000 seed=3 silent_at=100000 -- --option timeout=2 --option status_ms=500
[ $RC -eq 4 ] || fail "silent board behind FTDI: exit $RC, expected 4: $(tail -n 5 "$T/ftdisilent.log")"
log_has ftdisilent "is silent: not a byte in 2 s"

# 9. gateware of another major version is refused (exit 2, no capture)
cap major gw=2.1 --
[ $RC -eq 2 ] || fail "gateware 2.1: exit $RC, expected 2: $(tail -n 5 "$T/major.log")"
log_has major "runs gateware 2.1, but this bach speaks gateware 1.x"
[ -z "$C" ] || fail "gateware 2.1: a capture directory was made"

# 10. SIGTERM mid-stream: STOP, its ACK, drain, exit 0, a prefix of gen's
mkdir "$T/term"
"$EMU" seed=7 rate=200000 --pid-file "$T/term.pid" -- "$BACHD" --driver usb \
	--output "$T/term" 2> "$T/term.log" &
emu=$!
PIDS="$PIDS $emu"
wait_until 20 "the first segment" sh -c "ls '$T'/term/2*Z*/seg-000001.byu.zst.part"
sleep 0.5
kill -TERM "$(cat "$T/term.pid")"
reap $emu
[ $RC -eq 0 ] || fail "SIGTERM: exit $RC: $(tail -n 5 "$T/term.log")"
! grep -q "does not acknowledge STOP" "$T/term.log" || fail "SIGTERM: STOP unanswered"
C=$(ls -d "$T"/term/2*Z*)
man_has '"event":"ended","state":"clean"'
no_part
$BACH convert -q "$C" "$T/term.byu"
prefix "$T/term.byu" 7

# 11. which board: two alike need serial= or path=
cap two records=1000 serial=BRD-A second=BRD-B --
[ $RC -eq 2 ] || fail "two boards: exit $RC, expected 2"
log_has two "2 boards 1209:4243"
log_has two "choose one with serial=S or path=P"
cap byserial records=1000 serial=BRD-A second=BRD-B -- --option serial=BRD-B
[ $RC -eq 0 ] || fail "serial=BRD-B: exit $RC: $(tail -n 5 "$T/byserial.log")"
man_has '"serial":"BRD-B"'
man_has '"usb_path":"1-3"'
cap bypath records=1000 serial=BRD-A second=BRD-B -- --option path=1-2
[ $RC -eq 0 ] || fail "path=1-2: exit $RC: $(tail -n 5 "$T/bypath.log")"
man_has '"serial":"BRD-A"'
cap noserial records=1000 -- --option serial=NOPE
[ $RC -eq 2 ] || fail "serial=NOPE: exit $RC, expected 2"
log_has noserial "no board 1209:4243 with serial NOPE found"

# 12. bad options and what the board cannot do: exit 2, named
cap badopt records=1000 -- --option vid_pid=12:zz
[ $RC -eq 2 ] || fail "vid_pid=12:zz: exit $RC, expected 2"
log_has badopt "option vid_pid: want VVVV:PPPP"
cap badpol records=1000 -- --option policy=fast
[ $RC -eq 2 ] || fail "policy=fast: exit $RC, expected 2"
log_has badpol "option policy: stall or drop, not 'fast'"
cap nocap records=1000 caps=0 --
[ $RC -eq 2 ] || fail "stall without the capability: exit $RC, expected 2"
log_has nocap "policy=stall needs the hold output (capability STALL)"
cap invalid records=1000 -- --option high_water=100 --option low_water=200
[ $RC -eq 2 ] || fail "watermarks: exit $RC, expected 2"
log_has invalid "refused CONFIGURE: INVALID"

# 13. usbfs's memory budget: too much asked is refused at open (exit 2);
# a kernel that refuses a transfer halfway ends the capture (exit 4)
# after the ones already out came back
cap toobig records=1000 -- --option xfers=64 --option xfer_kib=1024
[ $RC -eq 2 ] || fail "64 MiB of transfers: exit $RC, expected 2"
log_has toobig "64 transfers of 1048576 bytes are more than the kernel lets usbfs hold (16 MiB"
cap nomem records=1000 mem=4000000 --
[ $RC -eq 4 ] || fail "ENOMEM on submit: exit $RC, expected 4: $(tail -n 5 "$T/nomem.log")"
log_has nomem "the kernel refused IN transfer 11 of 32 (393216 bytes each): LIBUSB_ERROR_NO_MEM"
echo ok
