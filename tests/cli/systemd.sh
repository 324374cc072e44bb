# The service files: `make install` puts them in place with the paths
# substituted, systemd-analyze finds the unit clean and hardened (overall
# exposure at most 2.0), the example configuration is valid and runs, and
# the sysusers, tmpfiles and udev files do what they say.
. "$TOP/tests/lib.sh"
BACHD="$(dirname "$BACH")/bachd"

command -v systemd-analyze > /dev/null ||
	skip "systemd-analyze not installed (Debian package systemd)"

# install into a staging root; DESTDIR must not leak into the files
R="$T/root"
if [ -n "${BACH_SANITIZED:-}" ]; then
	set -- SANITIZE=address,undefined
else
	set --
fi
make -s -C "$TOP" install NO_DEPS=1 BUILD="${BUILD:-build}" "$@" \
	DESTDIR="$R" PREFIX=/usr/local > "$T/make.log" 2>&1 ||
	fail "make install: $(cat "$T/make.log")"
UNIT="$R/usr/local/lib/systemd/system/bachd.service"
for f in usr/local/bin/bach usr/local/bin/bachd \
	usr/local/lib/systemd/system/bachd.service \
	usr/local/lib/sysusers.d/bach.conf usr/local/lib/tmpfiles.d/bach.conf \
	lib/udev/rules.d/60-bach.rules etc/bach/bachd.conf.example; do
	[ -f "$R/$f" ] || fail "make install did not install /$f: $(cd "$R" && find . -type f)"
done
[ -x "$R/usr/local/bin/bachd" ] || fail "bachd not executable"
[ "$(stat -c %a "$UNIT")" = 644 ] || fail "unit mode $(stat -c %a "$UNIT")"
[ ! -e "$R/etc/bach/bachd.conf" ] || fail "install must not write bachd.conf"
grep -qx 'ExecStart=/usr/local/bin/bachd --config /etc/bach/bachd.conf' "$UNIT" ||
	fail "ExecStart not substituted: $(grep ExecStart "$UNIT")"
grep -q '@[a-z]*@' "$UNIT" && fail "unsubstituted: $(grep '@[a-z]*@' "$UNIT")"
grep -qF "$R" "$UNIT" && fail "DESTDIR leaked into the unit"
cmp -s "$TOP/systemd/bachd.conf.example" "$R/etc/bach/bachd.conf.example" ||
	fail "example config differs"
# other directories on request
make -s -C "$TOP" install NO_DEPS=1 BUILD="${BUILD:-build}" "$@" \
	DESTDIR="$T/root2" PREFIX=/usr SYSCONFDIR=/opt/etc \
	UDEVRULESDIR=/etc/udev/rules.d > "$T/make.log" 2>&1 ||
	fail "make install (2): $(cat "$T/make.log")"
grep -qx 'ExecStart=/usr/bin/bachd --config /opt/etc/bach/bachd.conf' \
	"$T/root2/usr/lib/systemd/system/bachd.service" || fail "PREFIX=/usr ExecStart"
[ -f "$T/root2/etc/udev/rules.d/60-bach.rules" ] || fail "UDEVRULESDIR ignored"
[ -f "$T/root2/opt/etc/bach/bachd.conf.example" ] || fail "SYSCONFDIR ignored"

# the unit, as installed, with ExecStart pointing at the staged binary
# (verify wants it to exist)
mkdir "$T/unit"
sed "s|^ExecStart=/usr/local/bin/bachd |ExecStart=$R/usr/local/bin/bachd |" \
	"$UNIT" > "$T/unit/bachd.service"
grep -q "^ExecStart=$R/" "$T/unit/bachd.service" || fail "ExecStart rewrite"
(cd "$T/unit" && systemd-analyze verify --man=no ./bachd.service) \
	> "$T/verify" 2>&1 || fail "systemd-analyze verify: $(cat "$T/verify")"
# verify warns (unknown key, bad value) and still exits 0: any word about
# our unit is a failure
grep -q 'bachd' "$T/verify" && fail "systemd-analyze verify: $(cat "$T/verify")"
for k in Type=notify NotifyAccess=main WatchdogSec=30s Restart=on-failure \
	RestartPreventExitStatus=2 User=bach Group=bach StateDirectory=bach \
	RuntimeDirectory=bach ProtectSystem=strict 'CapabilityBoundingSet=' \
	'RestrictAddressFamilies=AF_UNIX AF_NETLINK' \
	'DeviceAllow=char-usb_device rw' DevicePolicy=closed UMask=0027; do
	grep -q "^$k\( \|\$\)" "$UNIT" || fail "unit lacks $k"
done
grep -q '^DynamicUser=yes' "$UNIT" && fail "DynamicUser: the udev rule needs group bach"
grep -q '^PrivateDevices=yes' "$UNIT" && fail "PrivateDevices hides the board"
# io_uring is not in @system-service (systemd 252): the unit must add it
if ! systemd-analyze syscall-filter @system-service | grep -q io_uring_setup; then
	grep '^SystemCallFilter=@system-service' "$UNIT" | grep -q 'io_uring_setup' &&
		grep '^SystemCallFilter=@system-service' "$UNIT" | grep -q 'io_uring_enter' &&
		grep '^SystemCallFilter=@system-service' "$UNIT" | grep -q 'io_uring_register' ||
		fail "SystemCallFilter refuses io_uring"
fi

# hardening: overall exposure at most 2.0
(cd "$T/unit" && systemd-analyze security --offline=yes ./bachd.service) \
	> "$T/security" 2>&1 || fail "systemd-analyze security: $(cat "$T/security")"
exposure=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$T/security")
[ -n "$exposure" ] || fail "no overall exposure line: $(tail -n 3 "$T/security")"
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' ||
	fail "exposure $exposure > 2.0: $(grep '✗' "$T/security")"
echo "exposure $exposure"

# the example configuration: valid, and it runs (output and socket moved
# to the test's directory, the fake board unpaced and limited)
EX="$R/etc/bach/bachd.conf.example"
expect_status 0 "$BACHD" --check-config --config "$EX"
expect_out "configuration OK (driver fake, output /var/lib/bach/captures)"
sed "s|^output = .*|output = $T/cap|; s|^control_socket = .*|control_socket = $T/bachd.sock|" \
	"$EX" > "$T/bachd.conf"
grep -q "^output = $T/cap\$" "$T/bachd.conf" || fail "output rewrite"
expect_status 0 "$BACHD" --check-config --config "$T/bachd.conf"
expect_out "output $T/cap)"
mkdir "$T/cap"
expect_status 0 "$BACHD" --config "$T/bachd.conf" --option rate=0 \
	--option records=100000
C=$(ls -d "$T"/cap/2*Z)
grep -q '"event":"ended","state":"clean","produced":100000,"written":100000,"lost":0' \
	"$C/manifest.jsonl" || fail "example config capture: $(cat "$C/manifest.jsonl")"
grep -q '"policy":"stall"' "$C/manifest.jsonl" || fail "policy"
[ ! -e "$T/bachd.sock" ] || fail "control socket left behind"
# every [bachd] key the daemon knows (its settings table, as --help prints
# it) is in the example, and every key in the example is one it knows (an
# unknown key fails --check-config above)
"$BACHD" --help | sed -n '/^Settings/,/^Drivers/s/^  \([a-z_]*\)=.*/\1/p' > "$T/keys"
[ "$(wc -l < "$T/keys")" -ge 15 ] || fail "bachd --help lists the settings: $(cat "$T/keys")"
while read -r k; do
	grep -q "^$k = " "$EX" || fail "example config lacks $k"
done < "$T/keys"

# sysusers and tmpfiles, applied to the staging root (chown needs root)
if [ "$(id -u)" -eq 0 ] && command -v systemd-sysusers > /dev/null &&
	command -v systemd-tmpfiles > /dev/null; then
	systemd-sysusers --root="$R" bach.conf > "$T/log" 2>&1 ||
		fail "systemd-sysusers: $(cat "$T/log")"
	grep -q '^bach:x:[0-9]*:[0-9]*:bach capture daemon:/var/lib/bach:' "$R/etc/passwd" ||
		fail "no user bach: $(cat "$R/etc/passwd")"
	grep -q '^bach:x:' "$R/etc/group" || fail "no group bach"
	uid=$(sed -n 's/^bach:x:\([0-9]*\):.*/\1/p' "$R/etc/passwd")
	gid=$(sed -n 's/^bach:x:\([0-9]*\):.*/\1/p' "$R/etc/group")
	systemd-tmpfiles --root="$R" --create bach.conf > "$T/log" 2>&1 ||
		fail "systemd-tmpfiles: $(cat "$T/log")"
	[ "$(stat -c '%a %u %g' "$R/var/lib/bach")" = "750 $uid $gid" ] ||
		fail "/var/lib/bach: $(stat -c '%a %u %g' "$R/var/lib/bach")"
	[ "$(stat -c '%a %u %g' "$R/var/lib/bach/captures")" = "750 $uid $gid" ] ||
		fail "/var/lib/bach/captures"
	[ "$(stat -c '%a %u %g' "$R/etc/bach")" = "755 0 0" ] || fail "/etc/bach"
else
	echo "sysusers/tmpfiles: not checked (needs root and systemd-sysusers)"
fi

# the udev rule: the board, to group bach, 0660
RULE="$R/lib/udev/rules.d/60-bach.rules"
grep -q '^ATTRS{idVendor}=="1209", ATTRS{idProduct}=="4243", GROUP="bach", MODE="0660"$' "$RULE" ||
	fail "udev rule: $(grep -v '^#' "$RULE")"
if command -v udevadm > /dev/null && udevadm verify --help > /dev/null 2>&1; then
	udevadm verify "$RULE" > "$T/log" 2>&1 || fail "udevadm verify: $(cat "$T/log")"
else
	echo "udev rule: udevadm verify not available (systemd 255 and later)"
fi
echo ok
