#!/bin/sh
# bach convert, decode and gen stopped by SIGINT, SIGTERM or SIGHUP while
# they write: the temporary output (.NAME.XXXXXX) is removed, nothing is
# left behind, and the command dies by the signal (the shell sees 128+N).
. "$TOP/tests/lib.sh"

# interrupted SIG CMD...: run CMD (with the signals at their defaults, as
# from a terminal), wait until its output appears in $T/o, send SIG, and
# require death by SIG with $T/o left empty
interrupted() {
	sig=$1
	shift
	rm -rf "$T/o"
	mkdir "$T/o"
	env --default-signal=HUP,INT,TERM "$@" 2>"$T/err" &
	pid=$!
	n=0
	while [ -z "$(ls -A "$T/o")" ]; do
		n=$((n + 1))
		if [ $n -gt 600 ] || ! kill -0 $pid 2>/dev/null; then
			kill -KILL $pid 2>/dev/null || true
			fail "no output appeared from $*: $(cat "$T/err")"
		fi
		sleep 0.05
	done
	kill -"$sig" $pid
	rc=0
	wait $pid || rc=$?
	case $sig in HUP) num=1 ;; INT) num=2 ;; TERM) num=15 ;; esac
	[ $rc -eq $((128 + num)) ] ||
		fail "$* after SIG$sig: exit $rc, expected death by the signal: $(cat "$T/err")"
	[ -z "$(ls -A "$T/o")" ] ||
		fail "$* left after SIG$sig: $(ls -A "$T/o")"
}

for sig in INT TERM HUP; do
	interrupted $sig "$BACH" gen --records 4000000000 -o "$T/o/big.byu.gz"
done
# convert waits on a FIFO no one writes: the output exists, the run is
# still going when the signal comes, however fast the machine
mkfifo "$T/fifo"
interrupted TERM "$BACH" convert -q --from byu --to byu.gz "$T/fifo" "$T/o/in.byu.gz"
interrupted INT "$BACH" convert -q --from byu --to csv "$T/fifo" "$T/o/in.csv"
interrupted HUP "$BACH" gen --records 3000000 --pins bin -o "$T/o/pins.bin"
# a VCD whose last change is 200 million samples after the others: the
# decoder is still walking them when the signal comes
"$BACH" gen --records 100 --pins vcd -o "$T/bus.vcd"
echo '#200000000' >> "$T/bus.vcd"
interrupted INT "$BACH" decode -q "$T/bus.vcd" -o "$T/o/bus.byu"

# an ignored signal stays ignored (nohup): the command runs to its end
rm -rf "$T/o"
mkdir "$T/o"
env --ignore-signal=HUP "$BACH" gen --records 3000000 -o "$T/o/n.byu.gz" &
pid=$!
while [ -z "$(ls -A "$T/o")" ]; do sleep 0.05; done
kill -HUP $pid
wait $pid || fail "gen under nohup died of SIGHUP"
[ -f "$T/o/n.byu.gz" ] || fail "gen under nohup left no output: $(ls -A "$T/o")"
echo "interrupt: ok"
