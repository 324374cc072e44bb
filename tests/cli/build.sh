# Building is not installing: plain make only checks
# for the libraries and names the Debian packages of those missing; bach
# itself loads none of the drivers' libraries; NO_USB=1 and NO_SIGROK=1
# build everything else without them. A changed header rebuilds the unit
# tests and helpers that include it.
. "$TOP/tests/lib.sh"
[ -z "${BACH_SANITIZED:-}" ] || skip "the build knobs are checked in the plain pass"

# nothing found by pkg-config: exit 2, every package named, nothing installed
mkdir "$T/nopc"
set +e
PKG_CONFIG_LIBDIR="$T/nopc" PKG_CONFIG_PATH= "$TOP/scripts/deps.sh" --check 2> "$T/err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "deps.sh --check with no libraries exited $rc"
for p in zlib1g-dev libdeflate-dev libjansson-dev liburing-dev libinih-dev \
	libsystemd-dev libusb-1.0-0-dev libsigrok-dev libzip-dev; do
	expect_err "$p"
done
expect_err "make deps"
PKG_CONFIG_LIBDIR="$T/nopc" PKG_CONFIG_PATH= NO_USB=1 NO_SIGROK=1 \
	"$TOP/scripts/deps.sh" --check 2> "$T/err" && fail "still exit 0"
grep -qE "libusb|libsigrok" "$T/err" && fail "NO_USB/NO_SIGROK still want them: $(cat "$T/err")"
"$TOP/scripts/deps.sh" --check || fail "deps.sh --check fails here, where make built"

# bach prints records without loading libusb, libsigrok or glib
if ldd "$BACH" | grep -E "libusb|libsigrok|libglib|libcairo"; then
	fail "bach links a driver's library"
fi
$BACH gen --records 100 -o "$T/g.byu"
[ "$($BACH dump "$T/g.byu" | wc -l)" -eq 100 ] || fail "bach dump"

# a header rebuilds the tests and helpers that include it (their .d files,
# from -MMD, are read by make): make -n -W HEADER shows what a change to it
# would rebuild, with libbach.a held as it is (-o), which would relink
# every test anyway
case $BUILD in /*) B=$BUILD ;; *) B=$TOP/$BUILD ;; esac
for t in tests/test_timing:lib/io/timing.h \
	tests/helpers/crc32:lib/exit.h; do
	bin=${t%%:*} h=${t#*:}
	grep -q "$h" "$B/$bin.d" || fail "$B/$bin.d: does not name $h"
	make -n -C "$TOP" NO_DEPS=1 BUILD="$BUILD" -W "$h" -o "$BUILD/libbach.a" \
		"$BUILD/$bin" > "$T/n" 2>&1 || fail "make -n $BUILD/$bin: $(cat "$T/n")"
	grep -q -- "-o $BUILD/$bin " "$T/n" ||
		fail "a change to $h does not rebuild $BUILD/$bin: $(cat "$T/n")"
done

# a build without either library: every other command, and clear refusals
make -s -C "$TOP" -j2 BUILD="$T/b" NO_USB=1 NO_SIGROK=1 > "$T/make.log" 2>&1 ||
	fail "make NO_USB=1 NO_SIGROK=1: $(cat "$T/make.log")"
for p in bin/bach bin/bachd lib/bach/bach-acquire; do
	if ldd "$T/b/$p" | grep -E "libusb|libsigrok|libglib"; then
		fail "$p links a library the knobs left out"
	fi
done
"$T/b/bin/bachd" --list-drivers > "$T/drv" 2>&1
grep -q "^fake" "$T/drv" && grep -q "^replay" "$T/drv" || fail "drivers: $(cat "$T/drv")"
grep -qE "^(usb|sigrok)" "$T/drv" && fail "drivers: $(cat "$T/drv")"
"$T/b/bin/bach" capture --driver fake --option records=1000 --output "$T" > /dev/null 2>&1 ||
	fail "bach capture without usb and sigrok"
printf '$timescale 1ns $end\n' > "$T/x.vcd"
expect_status 2 "$T/b/bin/bach" decode "$T/x.vcd" -o "$T/x.byu"
expect_err "x.vcd: cannot read a logic-analyzer capture: this bach was built without libsigrok (make NO_SIGROK=1)"
echo ok
