# bachd's metrics file (metrics_file, metrics_interval): Prometheus text
# that promtool accepts, replaced whole every interval, whose final figures
# are the manifest's; a metrics directory that goes away never stops the
# capture. bach capture writes the same file.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"
command -v promtool > /dev/null || skip "no promtool (Debian package prometheus; scripts/deps.sh)"

# val NAME [FILE]: the value of the sample line NAME (labels included)
val() { awk -v n="$1" '$1 == n { print $2 }' "${2:-$T/final.prom}"; }
# int NAME: the same, as an integer
int() { val "$@" | awk '{ printf "%.0f\n", $1 - ($1 % 1) }'; }
# gapsum CAUSE: records the manifest's gap events of that cause lost
gapsum() {
	grep '"event":"gap"' "$C/manifest.jsonl" | grep "\"cause\":\"$1\"" |
		sed -n 's/.*"lost":\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }'
}

# -- bad settings: exit 2 naming the key, before anything is made ----------
mkdir "$T/caps" "$T/m"
# the captures on a tmpfs of their own where we may mount one, so that
# its free space moves only with what bachd writes (a shared disk's
# moves with everyone's)
slack=$((64 << 20))
if mount -t tmpfs -o size=256m bachtest "$T/caps" 2> /dev/null; then
	MOUNTS="$T/caps"
else
	slack=$((1 << 30))
	echo "no tmpfs (not root?): free space checked to within 1 GiB" >&2
fi
expect_status 2 "$BACHD" --driver fake --output "$T/caps" --set metrics_interval=0
expect_err "metrics_interval"
expect_status 2 "$BACHD" --driver fake --output "$T/caps" --set metrics_interval=1d --check-config
expect_err "metrics_interval"
printf '[bachd]\nmetrics_file = %s/m/x.prom\nmetrics_interval = soon\n' "$T" > "$T/bad.conf"
expect_status 2 "$BACHD" --driver fake --output "$T/caps" --config "$T/bad.conf" --check-config
expect_err "bad.conf:3: metrics_interval"
expect_status 2 "$BACHD" --driver fake --option records=1000 --output "$T/caps" \
	--set metrics_file="$T/nodir/bachd.prom"
expect_err "metrics_file $T/nodir/bachd.prom: No such file or directory"
expect_status 2 "$BACH" capture --driver fake --option records=1000 --output "$T/caps" \
	--set metrics_file="$T/nodir/bachd.prom"
expect_err "metrics_file $T/nodir/bachd.prom"
[ "$(ncaps "$T/caps")" -eq 0 ] || fail "a refused start left a capture: $(ls "$T/caps")"
printf '[bachd]\nmetrics_file = %s/m/bachd.prom\nmetrics_interval = 2\n' "$T" > "$T/ok.conf"
"$BACHD" --driver fake --output "$T/caps" --config "$T/ok.conf" --check-config > "$T/out" ||
	fail "--check-config refused metrics_file and metrics_interval"

# -- a capture with every kind of loss, watched through its metrics --------
M=$T/m/bachd.prom
bg "$BACHD" --driver fake --option seed=3 --option rate=400000 --option records=2400000 \
	--option drop_every=40 --option corrupt_every=55 --option overflow_every=30:777 \
	--option stall_every=20:2 --policy drop --set ring_mb=8 --set rotate_seconds=1 \
	--output "$T/caps" --set metrics_file="$M" --set metrics_interval=1 \
	--control-socket "$T/ctl.sock" 2> "$T/log"
P=$BGPID
up1() { grep -qx 'bach_up 1' "$M"; }
wait_until 20 "bach_up 1 in the metrics file" up1
wait_until 10 "the control socket" test -S "$T/ctl.sock"
"$BACH" ctl --socket "$T/ctl.sock" status --json > "$T/st" || fail "status: $(cat "$T/st")"
cp "$M" "$T/live.prom"
promtool check metrics < "$T/live.prom" > "$T/promtool" 2>&1 ||
	fail "promtool rejects the live metrics: $(cat "$T/promtool")"
# replaced whole every second: every read is a complete file, and it moves
n=0
while alive "$P" && [ "$n" -lt 40 ]; do
	cp "$M" "$T/read.prom" 2> /dev/null || fail "the metrics file vanished while bachd ran"
	grep -q '^bach_ring_fill_ratio ' "$T/read.prom" ||
		fail "read $n: a metrics file cut short: $(tail -n 2 "$T/read.prom")"
	[ "$(grep -c '^# TYPE ' "$T/read.prom")" -ge 20 ] || fail "read $n: families missing"
	n=$((n + 1))
	sleep 0.1
done
[ "$(val bach_capture_uptime_seconds "$T/read.prom" | cut -d. -f1)" -gt \
	"$(val bach_capture_uptime_seconds "$T/live.prom" | cut -d. -f1)" ] ||
	fail "the metrics file was not rewritten within 4 s"
reap_within 60 "$P"
[ "$RC" -eq 0 ] || fail "bachd exited $RC: $(tail -n 5 "$T/log")"
cp "$M" "$T/final.prom"
promtool check metrics < "$T/final.prom" > "$T/promtool" 2>&1 ||
	fail "promtool rejects the final metrics: $(cat "$T/promtool")"
[ "$(ls -A "$T/m")" = bachd.prom ] || fail "left beside the metrics file: $(ls -A "$T/m")"
for fam in bach_up bach_build_info bach_records_produced_total bach_records_written_total \
	bach_records_lost_total bach_ring_fill_ratio bach_board_fifo_fill_records \
	bach_stalls_total bach_segments_total bach_written_bytes_total \
	bach_output_free_bytes bach_capture_start_time_seconds; do
	grep -q "^# HELP $fam " "$T/final.prom" || fail "no HELP for $fam"
	grep -q "^# TYPE $fam " "$T/final.prom" || fail "no TYPE for $fam"
done

# -- the final figures are the manifest's -----------------------------------
C=$(capdir "$T/caps")
[ "$(val bach_up)" = 0 ] || fail "bach_up $(val bach_up) after the capture ended"
[ "$(int bach_records_produced_total)" -eq 2400000 ] ||
	fail "produced $(int bach_records_produced_total), the fake board sampled 2400000"
for k in produced written; do
	[ "$(int bach_records_${k}_total)" -eq "$(ended "$C" $k)" ] ||
		fail "metrics $k $(int bach_records_${k}_total), manifest $(ended "$C" $k)"
done
lost=0
for cause in overflow frames corrupt ring device disk; do
	v=$(int "bach_records_lost_total{cause=\"$cause\"}")
	[ -n "$v" ] || fail "no lost_total for cause $cause"
	[ "$v" -eq "$(gapsum $cause)" ] ||
		fail "lost to $cause: metrics $v, the manifest's gap events $(gapsum $cause)"
	lost=$((lost + v))
done
for cause in overflow frames corrupt; do
	[ "$(gapsum $cause)" -gt 0 ] || fail "the faults made no $cause gap: a weak test"
done
[ "$lost" -eq "$(ended "$C" lost)" ] || fail "lost by cause sums to $lost, ended says $(ended "$C" lost)"
[ "$(int bach_gap_markers_total)" -eq "$(ended "$C" gap_markers)" ] || fail "gap markers differ"
[ "$(int bach_segments_total)" -eq "$(ended "$C" segments)" ] || fail "segments differ"
[ "$(int bach_segments_total)" -ge 2 ] || fail "rotate_seconds=1 made one segment"
[ "$(int bach_written_bytes_total)" -eq "$(ended "$C" bytes)" ] || fail "bytes differ"
[ "$(int bach_written_bytes_total)" -eq "$(cat "$C"/seg-*.$SEG | wc -c)" ] || fail "bytes are not the segments' sizes"
[ "$(int bach_board_stalls_total)" -eq "$(ended "$C" board_stalls)" ] || fail "board stalls differ"
[ "$(int bach_records_in_flight)" -eq 0 ] || fail "records still in flight at the end"
[ "$(int bach_ring_size_blocks)" -eq $((8 * 1048576 / 65280)) ] || fail "ring blocks $(int bach_ring_size_blocks)"
[ "$(int bach_timing_buffer_bytes)" -eq 0 ] || fail "clock buffers $(int bach_timing_buffer_bytes) without timing"
[ "$(int bach_corrupt_frames_total)" -gt 0 ] || fail "no corrupt frames counted"
[ "$(int bach_board_fifo_size_records)" -eq 65536 ] || fail "board FIFO size $(int bach_board_fifo_size_records)"
gw=$(sed -n '1s/.*"device":{[^}]*"gateware":"\([^"]*\)".*/\1/p' "$C/manifest.jsonl")
ver=$(sed -n 's/.*"bachd":{"version":"\([^"]*\)".*/\1/p' "$T/st")
grep -qx "bach_build_info{version=\"$ver\",gateware=\"$gw\",driver=\"fake\"} 1" "$T/final.prom" ||
	fail "build info: $(grep '^bach_build_info' "$T/final.prom"), want version $ver gateware $gw"
# the start time is the manifest's started line's, to the second or so
st0=$(date -u -d "$(sed -n '1s/^{"time":"\([^"]*\)".*/\1/p' "$C/manifest.jsonl")" +%s)
[ $(($(int bach_capture_start_time_seconds) - st0)) -ge -1 ] &&
	[ $(($(int bach_capture_start_time_seconds) - st0)) -le 2 ] ||
	fail "start time $(val bach_capture_start_time_seconds), the manifest began at $st0"
# disk free as df sees it (give or take what was written meanwhile)
df_free=$(df -B1 --output=avail "$T/caps" | tail -n 1)
d=$(($(int bach_output_free_bytes) - df_free))
[ "${d#-}" -le "$slack" ] || fail "free bytes $(int bach_output_free_bytes), df says $df_free"
check_closed_light() { "$BACH" verify -q "$1" > "$T/v" 2>&1 || fail "$1 does not verify: $(cat "$T/v")"; }
check_closed_light "$C"

# -- another master on the bus: the board's off-bus count, shown everywhere --
# The fake board's foreign=N:C: after every N frames another master runs C
# cycles (docs/bachd.md section 3), so F full frames give C * ((F - 1) / N).
M3=$T/m/offbus.prom
: > "$T/log3" # as journald's stream (<N> prefixes), for the notice below
bg env JOURNAL_STREAM="$(stat -c %d:%i "$T/log3")" \
	"$BACHD" --driver fake --option rate=40960 --option foreign=3:13 \
	--option status_every=1 --output "$T/caps" --set metrics_file="$M3" \
	--set metrics_interval=1 --control-socket "$T/ctl3.sock" 2> "$T/log3"
P=$BGPID
wait_until 10 "the control socket" test -S "$T/ctl3.sock"
offbus_json() {
	"$BACH" ctl --socket "$T/ctl3.sock" status --json > "$T/st3" &&
		jq -e '.status.board.off_bus // .board.off_bus' "$T/st3"
}
wait_until 20 "an off-bus count in the status" sh -c \
	"'$BACH' ctl --socket '$T/ctl3.sock' status --json | grep -q '\"off_bus\":[1-9]'"
"$BACH" ctl --socket "$T/ctl3.sock" status > "$T/sum3" || fail "status: $(cat "$T/sum3")"
s=$(sed -n 's/.*, \([0-9]*\) cycles off the bus$/\1/p' "$T/sum3")
j=$(offbus_json) || fail "no board.off_bus in the status: $(cat "$T/st3")"
[ -n "$s" ] && [ "$s" -gt 0 ] && [ $((s % 13)) -eq 0 ] && [ "$s" -le "$j" ] ||
	fail "summary says '$s' off the bus, JSON later $j: $(cat "$T/sum3")"
kill -TERM "$P"
reap_within 20 "$P"
[ "$RC" -eq 0 ] || fail "bachd exited $RC: $(tail -n 5 "$T/log3")"
C3=$(capdir "$T/caps")
F=$(($(ended "$C3" produced) / 4096))
want=$((13 * ((F - 1) / 3)))
[ "$want" -gt 0 ] || fail "only $F frames: a weak test"
[ "$(ended "$C3" board_off_bus)" = "$want" ] ||
	fail "ended board_off_bus $(ended "$C3" board_off_bus), $F frames make $want"
promtool check metrics < "$M3" > "$T/promtool" 2>&1 ||
	fail "promtool rejects the metrics: $(cat "$T/promtool")"
[ "$(int bach_board_off_bus_cycles_total "$M3")" = "$want" ] ||
	fail "metrics off bus $(int bach_board_off_bus_cycles_total "$M3"), want $want"
grep -q "^<5>fake: the board saw $want ADS#s while the CPU was off the bus" "$T/log3" ||
	fail "no off-bus notice: $(cat "$T/log3")"

# -- a metrics directory that goes away: a warning, the capture goes on ------
mkdir "$T/m2"
bg "$BACHD" --driver fake --option rate=200000 --set ring_mb=8 --output "$T/caps" \
	--set metrics_file="$T/m2/b.prom" --set metrics_interval=1 2> "$T/log2"
P=$BGPID
wait_until 20 "the second metrics file" test -s "$T/m2/b.prom"
rm -rf "$T/m2"
wait_until 10 "the warning about the metrics file" grep -q "metrics file $T/m2/b.prom: No such file or directory (the capture goes on)" "$T/log2"
sleep 2.5
[ "$(grep -c "metrics file $T/m2/b.prom" "$T/log2")" -eq 1 ] ||
	fail "the same metrics failure logged again and again: $(cat "$T/log2")"
alive "$P" || fail "bachd died when its metrics directory went away: $(tail -n 5 "$T/log2")"
mkdir "$T/m2"
wait_until 10 "the metrics file again" test -s "$T/m2/b.prom"
grep -q "metrics file $T/m2/b.prom: written again" "$T/log2" || fail "no notice that metrics are back"
kill -TERM "$P"
reap_within 30 "$P"
[ "$RC" -eq 0 ] || fail "bachd exited $RC after losing its metrics directory"
grep -qx 'bach_up 0' "$T/m2/b.prom" || fail "bach_up is not 0 after SIGTERM"
C2=$(capdir "$T/caps")
[ "$(int bach_records_written_total "$T/m2/b.prom")" -eq "$(ended "$C2" written)" ] ||
	fail "after SIGTERM: metrics written $(int bach_records_written_total "$T/m2/b.prom"), manifest $(ended "$C2" written)"

# -- a FIFO at the temporary .NAME.tmp: refused, never waited on ----------
# (bachd opened it for writing and waited for a reader for
# ever, deaf to SIGTERM; only SIGKILL ended it)
mkdir "$T/m4" "$T/caps4"
mkfifo "$T/m4/.f.prom.tmp"
bg "$BACHD" --driver fake --option records=1000 --output "$T/caps4" \
	--set metrics_file="$T/m4/f.prom" 2> "$T/log4"
reap_within 10 "$BGPID"
[ "$RC" -eq 2 ] || fail "a FIFO at the metrics temporary: exit $RC: $(cat "$T/log4")"
grep -q "metrics_file $T/m4/f.prom: $T/m4/.f.prom.tmp is a FIFO, not a regular file" "$T/log4" ||
	fail "the error does not name the FIFO: $(cat "$T/log4")"
[ -p "$T/m4/.f.prom.tmp" ] || fail "the FIFO was removed or replaced"
[ "$(ncaps "$T/caps4")" -eq 0 ] || fail "a refused start made a capture: $(ls "$T/caps4")"
bg "$BACH" capture --driver fake --option records=1000 --output "$T/caps4" \
	--set metrics_file="$T/m4/f.prom" 2> "$T/log4"
reap_within 10 "$BGPID"
[ "$RC" -eq 2 ] || fail "bach capture, a FIFO at the metrics temporary: exit $RC"
grep -q "$T/m4/.f.prom.tmp is a FIFO" "$T/log4" || fail "bach capture: $(cat "$T/log4")"
# one that appears while bachd runs: a warning, and SIGTERM still ends it
rm "$T/m4/.f.prom.tmp"
bg "$BACHD" --driver fake --option rate=200000 --set ring_mb=8 --output "$T/caps4" \
	--set metrics_file="$T/m4/f.prom" --set metrics_interval=1 2> "$T/log4"
P=$BGPID
wait_until 20 "the metrics file" test -s "$T/m4/f.prom"
mkfifo "$T/m4/.f.prom.tmp"
wait_until 10 "the warning about the FIFO" grep -q "metrics file $T/m4/f.prom: $T/m4/.f.prom.tmp is a FIFO, not a regular file: not written (the capture goes on)" "$T/log4"
kill -TERM "$P"
reap_within 20 "$P"
[ "$RC" -eq 0 ] || fail "bachd exited $RC with a FIFO beside its metrics file: $(tail -n 5 "$T/log4")"
rm "$T/m4/.f.prom.tmp"
# a symbolic link there is refused likewise, by name
ln -s "$T/m4/elsewhere" "$T/m4/.f.prom.tmp"
expect_status 2 "$BACHD" --driver fake --option records=1000 --output "$T/caps4" \
	--set metrics_file="$T/m4/f.prom"
expect_err "$T/m4/.f.prom.tmp is a symbolic link, not a regular file"
[ ! -e "$T/m4/elsewhere" ] || fail "written through the link"

# -- bach capture writes the same file --------------------------------------
mkdir "$T/caps3"
"$BACH" capture --driver fake --option records=300000 --option drop_every=9 \
	--output "$T/caps3" --set metrics_file="$T/c.prom" 2> "$T/log3" ||
	fail "bach capture with metrics_file: $(cat "$T/log3")"
promtool check metrics < "$T/c.prom" > "$T/promtool" 2>&1 ||
	fail "promtool rejects bach capture's metrics: $(cat "$T/promtool")"
C3=$(capdir "$T/caps3")
for k in produced written; do
	[ "$(int bach_records_${k}_total "$T/c.prom")" -eq "$(ended "$C3" $k)" ] ||
		fail "bach capture: metrics $k differs from the manifest"
done
[ "$(int 'bach_records_lost_total{cause="frames"}' "$T/c.prom")" -eq "$(ended "$C3" lost)" ] ||
	fail "bach capture: lost to frames differs from the manifest"
# -- instance_name and metrics_labels: every series its instance's ---------
# (two instances wrote the same series, bach_up 1, which node_exporter's
# textfile collector refuses); label values escaped as the text format
# wants: a hostile one still passes promtool, and reads back as given
mkdir "$T/caps5"
expect_status 2 "$BACH" capture --driver fake --option records=1000 --output "$T/caps5" \
	--set metrics_labels=room --set metrics_file="$T/l.prom"
expect_err "metrics_labels: no label.room"
for bad in a.b 9a __a cause room, ,room 'a b'; do
	expect_status 2 "$BACHD" --driver fake --output "$T/caps5" --label room=x \
		--set metrics_labels="$bad" --check-config
	expect_err "metrics_labels: want label keys"
done
[ "$(ncaps "$T/caps5")" -eq 0 ] || fail "a refused start made a capture"
hostile=$(printf 'b"2\\x\ny\377z')
BACHD_INSTANCE=lab1 "$BACH" capture --driver fake --option records=30000 --output "$T/caps5" \
	--label room="$hostile" --label rack=r7 --label other=no --set metrics_labels=room,rack \
	--set min_free=1k \
	--set metrics_file="$T/l.prom" 2> "$T/log5" || fail "labelled capture: $(cat "$T/log5")"
promtool check metrics < "$T/l.prom" > "$T/promtool" 2>&1 ||
	fail "promtool rejects escaped labels: $(cat "$T/promtool")"
# (the file's bytes: \" \\ \n escaped, the stray byte \377 as U+FFFD)
L=$(printf 'instance_name="lab1",room="b\\"2\\\\x\\ny\357\277\275z",rack="r7"')
grep -qxF "bach_up{$L} 0" "$T/l.prom" || fail "bach_up: $(grep '^bach_up' "$T/l.prom")"
grep -qxF "bach_records_lost_total{$L,cause=\"ring\"} 0" "$T/l.prom" ||
	fail "lost: $(grep '^bach_records_lost_total' "$T/l.prom")"
grep -qF "bach_build_info{$L,version=" "$T/l.prom" || fail "build info: $(grep '^bach_build_info' "$T/l.prom")"
[ "$(grep -v '^#' "$T/l.prom" | grep -vcF "{$L")" -eq 0 ] ||
	fail "series without the labels: $(grep -v '^#' "$T/l.prom" | grep -vF "{$L")"
grep -qxF "bach_records_written_total{$L} 30000" "$T/l.prom" || fail "written, labelled"
grep -qxF "bach_output_min_free_bytes{$L} 1000" "$T/l.prom" || fail "min_free=1k: $(grep min_free "$T/l.prom")"
# instance_name in the configuration wins over the environment's
BACHD_INSTANCE=lab1 "$BACH" capture --driver fake --option records=1000 --output "$T/caps5" \
	--set instance_name=lab2 --set metrics_file="$T/l2.prom" --set min_free=3% 2> "$T/log5" ||
	fail "$(cat "$T/log5")"
grep -qx 'bach_up{instance_name="lab2"} 0' "$T/l2.prom" || fail "instance_name: $(grep '^bach_up' "$T/l2.prom")"
# a percentage floor in bytes, as the disk guard reckons it
[ "$(int 'bach_output_min_free_bytes{instance_name="lab2"}' "$T/l2.prom")" -eq \
	$(($(int 'bach_output_size_bytes{instance_name="lab2"}' "$T/l2.prom") / 100 * 3)) ] ||
	fail "min_free=3%: $(grep -e min_free -e size_bytes "$T/l2.prom")"
echo ok
