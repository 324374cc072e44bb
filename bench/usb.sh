#!/bin/sh
# The usb driver's cost, measured against the emulated board (not part of
# make check or make bench; docs/usb.md section 8 has the figures):
#
#   BUILD=build bench/usb.sh
#   BENCH_RECORDS=20000000   records per run (6 bytes each)
#   BENCH_DIR=$BUILD/bench-data
#
# Each run moves BENCH_RECORDS records from the emulated board
# (tests/helpers/usb_board.c on umockdev) through bachd --driver usb into
# raw segments, so compression does not hide the driver. usb_board reports
# the CPU seconds (user + system, getrusage) of itself and of bachd.
# bachd's CPU per MB then splits, roughly, into:
#   - the capture pipeline (frame parser, ring, writer), measured on its
#     own by `bach capture --driver fake` less the cost of making the
#     records (`bach gen`), which the fake board does in-process;
#   - the rest: the usb driver, libusb and umockdev's usbfs emulation,
#     which moves every URB's bytes over a socket (twice: read, then
#     written back) where a kernel copies them once.
# The driver is not the bottleneck when that rest, per MB, is far below
# the time a MB takes on the wire: 25 ms at USB 2 (40 MB/s), 2.9 ms at
# USB 3 (350 MB/s).
set -eu
BUILD=${BUILD:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
BACH="$BUILD/bin/bach"
BACHD="$BUILD/bin/bachd"
N=${BENCH_RECORDS:-20000000}
D=${BENCH_DIR:-$BUILD/bench-data}/usb
MB=$(awk "BEGIN { printf \"%.1f\", $N * 6 / 1e6 }")

rm -rf "$D"
mkdir -p "$D"
trap 'rm -rf "$D"' EXIT

pkg-config --exists umockdev-1.0 ||
	{ echo "bench/usb.sh: umockdev-1.0 missing (scripts/deps.sh)" >&2; exit 2; }
# shellcheck disable=SC2046
${CC:-cc} -std=gnu11 -O2 -o "$D/usb_board" "$TOP/tests/helpers/usb_board.c" \
	-I"$TOP/include" -I"$TOP/drivers" "$TOP/drivers/board_model.c" \
	"$TOP/drivers/common.c" "$TOP/lib/bus/frame.c" "$TOP/lib/bus/gen.c" \
	$(pkg-config --cflags --libs umockdev-1.0 gio-2.0 glib-2.0) -ldeflate -pthread

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }

# usb NAME EMULATOR-OPTIONS -- BACHD-OPTIONS: one capture; sets WALL, BACHD_CPU,
# EMU_CPU, SENT (bytes on the emulated link) and XFERS (the driver's choice)
usb() {
	name=$1
	shift
	eopts=""
	while [ "$1" != "--" ]; do eopts="$eopts $1"; shift; done
	shift
	mkdir "$D/$name"
	t0=$(now)
	# shellcheck disable=SC2086
	"$D/usb_board" records="$N" $eopts -- "$BACHD" --driver usb "$@" \
		--output "$D/$name" 2> "$D/$name.log" ||
		{ echo "usb run $name failed:"; tail -n 5 "$D/$name.log"; exit 1; }
	WALL=$(calc "$(now) - $t0")
	line=$(tail -n 1 "$D/$name.log")
	SENT=$(echo "$line" | sed 's/.*sent \([0-9]*\) bytes.*/\1/')
	EMU_CPU=$(echo "$line" | sed 's/.*emulator \([0-9.]*\) s.*/\1/')
	BACHD_CPU=$(echo "$line" | sed 's/.* \([0-9.]*\) s$/\1/')
	XFERS=$(grep -o '"transfers":[0-9]*,"transfer_bytes":[0-9]*' \
		"$D/$name"/2*Z*/manifest.jsonl | sed 's/"transfers":\([0-9]*\),"transfer_bytes":\([0-9]*\)/\1 x \2 B/')
	rm -rf "$D/$name"
}

# cpu CMD...: user + system seconds of CMD (its wall seconds: wall)
cpu() {
	/usr/bin/time -f "%e %U %S" -o "$D/time" "$@" > /dev/null 2>&1
	awk '{ printf "%.3f", $2 + $3 }' "$D/time"
}
wall() { awk '{ print $1 }' "$D/time"; }

echo "usb driver cost: $N records ($MB MB) per run, $(nproc) CPUs"
echo
gen=$(cpu "$BACH" gen --records "$N" --seed 1 -o "$D/gen.byu")
rm -f "$D/gen.byu"
mkdir "$D/fake"
fake=$(cpu "$BACH" capture --driver fake --option records="$N" --no-compress --output "$D/fake")
fake_wall=$(wall)
rm -rf "$D/fake"
pipe=$(calc "$fake - $gen")
printf '%-44s %8s s CPU  %7s ms/MB\n' "bach gen (making the records)" "$gen" "$(calc "$gen * 1000 / $MB" 2)"
printf '%-44s %8s s CPU  %7s ms/MB  (%s s wall)\n' "bach capture --driver fake, raw" "$fake" "$(calc "$fake * 1000 / $MB" 2)" "$fake_wall"
printf '%-44s %8s s CPU  %7s ms/MB\n' "  the capture pipeline (fake less gen)" "$pipe" "$(calc "$pipe * 1000 / $MB" 2)"
echo
for board in "speed=480" "speed=480 bridge=ftdi" "speed=5000"; do
	# shellcheck disable=SC2086
	usb run $board -- --no-compress
	mbs=$(calc "$SENT / 1e6" 1)
	rest=$(calc "$BACHD_CPU - $pipe")
	echo "emulated board, $board: $mbs MB in $WALL s ($(calc "$SENT / 1e6 / $WALL" 0) MB/s), transfers $XFERS"
	printf '  %-42s %8s s CPU  %7s ms/MB\n' "bachd --driver usb, raw" "$BACHD_CPU" "$(calc "$BACHD_CPU * 1000 / $mbs" 2)"
	printf '  %-42s %8s s CPU  %7s ms/MB\n' "  driver + libusb + usbfs emulation" "$rest" "$(calc "$rest * 1000 / $mbs" 2)"
	printf '  %-42s %8s s CPU  %7s ms/MB\n' "the emulated board (usb_board)" "$EMU_CPU" "$(calc "$EMU_CPU * 1000 / $mbs" 2)"
done
echo
usb deflate speed=480 --
echo "with compression (bachd's default, level 1): $(calc "$SENT / 1e6 / $WALL" 0) MB/s, bachd $(calc "$BACHD_CPU * 1000 / ($SENT / 1e6)" 2) ms CPU per MB"
echo
echo "one MB on the wire: 25 ms at USB 2 high speed (40 MB/s), 2.9 ms at USB 3 (350 MB/s)"
