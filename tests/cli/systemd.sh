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
	usr/local/lib/systemd/system/bachd@.service \
	usr/local/lib/systemd/system/bach-failure@.service \
	usr/local/lib/sysusers.d/bach.conf usr/local/lib/tmpfiles.d/bach.conf \
	lib/udev/rules.d/60-bach.rules etc/bach/bachd.conf.example; do
	[ -f "$R/$f" ] || fail "make install did not install /$f: $(cd "$R" && find . -type f)"
done
[ -x "$R/usr/local/bin/bachd" ] || fail "bachd not executable"
# ... and the rest of what the Makefile's "make install" lists: the
# library, its headers and bach.pc, the Python module, the manual pages
# and the completion
for f in usr/local/lib/libbach.so.0 usr/local/include/bach/bach.h \
	usr/local/lib/pkgconfig/bach.pc usr/local/share/man/man1/bach.1 \
	usr/local/share/man/man8/bachd.8 usr/local/share/man/man5/bachd.conf.5 \
	usr/local/share/bash-completion/completions/bach \
	usr/local/share/bash-completion/completions/bachd \
	"$(cd "$R" && echo usr/local/lib/python3*/dist-packages/bach/_lib.py)"; do
	[ -e "$R/$f" ] || fail "make install did not install /$f: $(cd "$R" && find . -type f)"
done
# bach runs capture and decode from bach-acquire, found beside it as
# installed; bach itself loads none of libusb, libsigrok and glib
[ -x "$R/usr/local/lib/bach/bach-acquire" ] && [ -x "$R/usr/local/lib/bach/bach-draw" ] || fail "bach-acquire or bach-draw not installed"
"$R/usr/local/bin/bach" help capture > "$T/h" 2>&1 || fail "installed bach help capture: $(cat "$T/h")"
grep -q "^Drivers and their options" "$T/h" || fail "installed bach help capture: $(cat "$T/h")"
if ldd "$R/usr/local/bin/bach" | grep -E "libusb|libsigrok|libglib|libcairo"; then
	fail "bach loads a driver's library"
fi
# without it: a clear error, exit 2
mkdir "$T/alone" && cp "$R/usr/local/bin/bach" "$T/alone/"
expect_status 2 "$T/alone/bach" capture --driver fake --output "$T"
expect_err "cannot run bach-acquire (looked for $T/alone/../lib/bach/bach-acquire and"
[ "$(stat -c %a "$UNIT")" = 644 ] || fail "unit mode $(stat -c %a "$UNIT")"
[ ! -e "$R/etc/bach/bachd.conf" ] || fail "install must not write bachd.conf"
grep -qx 'ExecStart=/usr/local/bin/bachd --config /etc/bach/bachd.conf' "$UNIT" ||
	fail "ExecStart not substituted: $(grep ExecStart "$UNIT")"
TMPL="$R/usr/local/lib/systemd/system/bachd@.service"
FAILU="$R/usr/local/lib/systemd/system/bach-failure@.service"
grep -qx 'ExecStart=/usr/local/bin/bachd --config /etc/bach/%i.conf --control-socket /run/bach-%i/bachd.sock' "$TMPL" ||
	fail "template ExecStart: $(grep ExecStart "$TMPL")"
grep -qx 'ExecStart=/usr/local/lib/bach/bach-failure %i' "$FAILU" ||
	fail "bach-failure@ ExecStart: $(grep ExecStart "$FAILU")"
[ -x "$R/usr/local/lib/bach/bach-failure" ] || fail "bach-failure not installed executable"
for u in "$UNIT" "$TMPL" "$FAILU"; do
	grep -q '@[a-z]*@' "$u" && fail "unsubstituted in $u: $(grep '@[a-z]*@' "$u")"
	grep -qF "$R" "$u" && fail "DESTDIR leaked into $u"
done
for u in "$UNIT" "$TMPL"; do
	grep -qx 'OnFailure=bach-failure@%n.service' "$u" || fail "$u: no OnFailure="
done
# the template is the plain unit but for the instance's own config,
# socket, runtime and state directories, its name for the metrics (and
# comments)
strip() { grep -v -e '^#' -e '^Description=' -e '^ExecStart=' -e '^StateDirectory=' \
	-e '^RuntimeDirectory=' -e '^Environment=BACHD_INSTANCE=' "$1"; }
strip "$UNIT" > "$T/plain.cmp"
strip "$TMPL" > "$T/tmpl.cmp"
cmp -s "$T/plain.cmp" "$T/tmpl.cmp" ||
	fail "bachd@.service drifted from bachd.service: $(diff "$T/plain.cmp" "$T/tmpl.cmp")"
grep -qx 'RuntimeDirectory=bach-%i' "$TMPL" || fail "template runtime directory"
grep -qx 'Environment=BACHD_INSTANCE=%i' "$TMPL" || fail "template: no BACHD_INSTANCE (instance_name)"
grep -qx 'StateDirectory=bach bach/%i' "$TMPL" || fail "template state directories"
# the metrics directory is not a state directory (systemd would chown it
# to group bach, and then who reads the metrics reads every capture)
for u in "$UNIT" "$TMPL"; do
	grep -qx 'ReadWritePaths=-/var/lib/bach-metrics' "$u" || fail "$u: metrics not writable"
	grep '^StateDirectory=' "$u" | grep -q metrics && fail "$u: metrics is a state directory"
done
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
# the template, as an instance, and the failure unit, as bachd's would run
sed "s|^ExecStart=/usr/local/bin/bachd |ExecStart=$R/usr/local/bin/bachd |" \
	"$TMPL" > "$T/unit/bachd@.service"
sed "s|^ExecStart=/usr/local/lib/bach/|ExecStart=$R/usr/local/lib/bach/|" \
	"$FAILU" > "$T/unit/bach-failure@.service"
for inst in bachd@board1.service bach-failure@bachd.service.service \
	bach-failure@bachd@board1.service.service; do
	(cd "$T/unit" && systemd-analyze verify --man=no "./$inst") \
		> "$T/verify" 2>&1 || fail "systemd-analyze verify $inst: $(cat "$T/verify")"
	grep -q 'bach' "$T/verify" && fail "systemd-analyze verify $inst: $(cat "$T/verify")"
done
# ... and it catches a broken template (the check can fail)
sed 's/^RuntimeDirectory=.*/&\nRuntimeDirectry=oops/' "$T/unit/bachd@.service" > "$T/bad@.service"
(cd "$T" && systemd-analyze verify --man=no ./bad@x.service) > "$T/verify" 2>&1 || true
grep -q "Unknown key 'RuntimeDirectry'" "$T/verify" ||
	fail "systemd-analyze verify missed a bad key in a template: $(cat "$T/verify")"
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
(cd "$T/unit" && systemd-analyze security --offline=yes ./bachd@board1.service) \
	> "$T/security" 2>&1 || fail "systemd-analyze security (template): $(cat "$T/security")"
exposure=$(sed -n 's/.*Overall exposure level for bachd@board1.service: \([0-9.]*\).*/\1/p' "$T/security")
awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.0) }' ||
	fail "template exposure ${exposure:-none} > 2.0: $(tail -n 3 "$T/security")"

# bach-failure: the report goes to BACH_FAILURE_COMMAND (unit as $1), or
# out to the journal; a failing command is a failure of the unit
BF="$R/usr/local/lib/bach/bach-failure"
BACH_FAILURE_COMMAND="cat > '$T/report'; echo \"\$1\" > '$T/unitname'" \
	"$BF" bachd@board1.service > "$T/bf.out" 2>&1 || fail "bach-failure: $(cat "$T/bf.out")"
grep -qx "bachd@board1.service failed on $(hostname)" "$T/report" ||
	fail "bach-failure report: $(head -n 3 "$T/report")"
[ "$(cat "$T/unitname")" = bachd@board1.service ] || fail "the command's \$1: $(cat "$T/unitname")"
expect_status 0 env -u BACH_FAILURE_COMMAND "$BF" bachd.service
grep -qx "bachd.service failed on $(hostname)" "$T/out" || fail "bach-failure to stdout: $(cat "$T/out")"
expect_status 3 env BACH_FAILURE_COMMAND='cat > /dev/null; exit 3' "$BF" bachd.service
expect_err "BACH_FAILURE_COMMAND exited 3"
expect_status 2 "$BF"

# the example configuration: valid, and it runs (output and socket moved
# to the test's directory, the fake board unpaced and limited)
EX="$R/etc/bach/bachd.conf.example"
# (its output directory is the unit's StateDirectory: checked to exist)
if [ -d /var/lib/bach/captures ]; then
	expect_status 0 "$BACHD" --check-config --config "$EX"
	expect_out "configuration OK (driver fake, output /var/lib/bach/captures)"
else
	expect_status 2 "$BACHD" --check-config --config "$EX"
	expect_err "output directory /var/lib/bach/captures: No such file or directory"
fi
sed "s|^output = .*|output = $T/cap|; s|^control_socket = .*|control_socket = $T/bachd.sock|; s|^metrics_file = .*|metrics_file = $T/bachd.prom|" \
	"$EX" > "$T/bachd.conf"
grep -q "^metrics_file = $T/bachd.prom\$" "$T/bachd.conf" || fail "metrics_file rewrite"
grep -q "^output = $T/cap\$" "$T/bachd.conf" || fail "output rewrite"
mkdir "$T/cap"
expect_status 0 "$BACHD" --check-config --config "$T/bachd.conf"
expect_out "output $T/cap)"
expect_status 0 "$BACHD" --config "$T/bachd.conf" --option rate=0 \
	--option records=100000
C=$(ls -d "$T"/cap/2*Z)
grep -q '"event":"ended","state":"clean","produced":100000,"written":100000,"lost":0' \
	"$C/manifest.jsonl" || fail "example config capture: $(cat "$C/manifest.jsonl")"
grep -q '"policy":"stall"' "$C/manifest.jsonl" || fail "policy"
grep -qx 'bach_records_written_total 100000' "$T/bachd.prom" ||
	fail "example config metrics: $(cat "$T/bachd.prom")"
[ ! -e "$T/bachd.sock" ] || fail "control socket left behind"
# every [bachd] key the daemon knows (its settings table, as --help prints
# it) is in the example, and every key in the example is one it knows (an
# unknown key fails --check-config above)
"$BACHD" --help | sed -n '/^Settings/,/^Drivers/s/^  \([a-z_]*\)=.*/\1/p' > "$T/keys"
[ "$(wc -l < "$T/keys")" -ge 15 ] || fail "bachd --help lists the settings: $(cat "$T/keys")"
while read -r k; do
	grep -Eq "^$k =( |$)" "$EX" || fail "example config lacks $k"
done < "$T/keys"

# two instances of the template side by side, as systemd would start them
# (its ExecStart with %i, RuntimeDirectory made for it): each its own
# config, socket and output; bach ctl --instance finds each; one stopping
# leaves the other alone. Needs a writable /run.
I1=bachtest$$a I2=bachtest$$b
if [ -w /run ] && mkdir "/run/bach-$I1" "/run/bach-$I2" 2> /dev/null; then
	IPIDS=""
	trap 'for p in $IPIDS; do kill -KILL "$p" 2> /dev/null || true; done; rm -rf "/run/bach-$I1" "/run/bach-$I2" "$T"' EXIT
	exec_args=$(sed -n 's/^ExecStart=[^ ]* //p' "$TMPL")
	for i in $I1 $I2; do
		mkdir "$T/$i"
		sed "s|^output = .*|output = $T/$i|; s|^metrics_file = .*|metrics_file = $T/$i.prom|" \
			"$EX" > "$T/$i.conf"
		# shellcheck disable=SC2086
		set -- $(echo "$exec_args" | sed "s|%i|$i|g; s|/etc/bach/|$T/|")
		BACHD_INSTANCE=$i "$BACHD" "$@" 2> "$T/$i.log" &
		IPIDS="$IPIDS $!"
		eval "pid_$i=\$!"
	done
	for i in $I1 $I2; do
		n=0
		until "$BACH" ctl --instance "$i" status --json > "$T/$i.st" 2> /dev/null; do
			n=$((n + 1))
			[ "$n" -lt 200 ] || fail "bach ctl --instance $i: no answer: $(cat "$T/$i.log")"
			sleep 0.05
		done
		grep -q "\"capture\":\"$T/$i/2" "$T/$i.st" ||
			fail "instance $i does not capture into its own output: $(cat "$T/$i.st")"
		# its metrics are its own series (node_exporter refuses the same twice)
		grep -q "^bach_records_written_total{instance_name=\"$i\"} " "$T/$i.prom" ||
			fail "instance $i's metrics lack instance_name: $(grep written_total "$T/$i.prom")"
	done
	eval "kill -TERM \$pid_$I1; wait \$pid_$I1" || fail "instance $I1 did not stop cleanly"
	[ ! -e "/run/bach-$I1/bachd.sock" ] || fail "instance $I1 left its socket"
	"$BACH" ctl --instance "$I2" status > "$T/sum" ||
		fail "instance $I2 lost its socket when $I1 stopped: $(cat "$T/sum")"
	grep -q "^capturing from fake" "$T/sum" || fail "instance $I2: $(cat "$T/sum")"
	eval "kill -TERM \$pid_$I2; wait \$pid_$I2" || fail "instance $I2 did not stop cleanly"
	expect_status 2 "$BACH" ctl --instance "$I2" status
	expect_err "/run/bach-$I2/bachd.sock"
	expect_status 2 "$BACH" ctl --instance ../etc status
	expect_err "--instance"
else
	echo "template instances: not run (needs a writable /run)"
fi

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
	# the metrics: a group of their own, set-group-ID, for node_exporter
	mgid=$(sed -n 's/^bach-metrics:x:\([0-9]*\):.*/\1/p' "$R/etc/group")
	[ -n "$mgid" ] || fail "no group bach-metrics: $(cat "$R/etc/group")"
	[ "$(stat -c '%a %u %g' "$R/var/lib/bach-metrics")" = "2750 $uid $mgid" ] ||
		fail "/var/lib/bach-metrics: $(stat -c '%a %u %g' "$R/var/lib/bach-metrics")"
	[ ! -e "$R/var/lib/bach/metrics" ] || fail "/var/lib/bach/metrics still made"
	# bachd as user bach (the unit's UMask) writes its metrics there: the
	# file is group bach-metrics's, which reads it; not another capture
	if command -v setpriv > /dev/null; then
		chmod 755 "$T" "$R" "$R/var" "$R/var/lib"
		(umask 0027 && setpriv --reuid="$uid" --regid="$gid" --clear-groups \
			"$BACHD" --driver fake --option records=1000 \
			--output "$R/var/lib/bach/captures" \
			--set metrics_file="$R/var/lib/bach-metrics/m.prom") > "$T/log" 2>&1 ||
			fail "bachd as bach with metrics: $(cat "$T/log")"
		[ "$(stat -c '%a %g' "$R/var/lib/bach-metrics/m.prom")" = "640 $mgid" ] ||
			fail "metrics file: $(stat -c '%a %g' "$R/var/lib/bach-metrics/m.prom")"
		reader() { setpriv --reuid=65534 --regid=65534 --groups="$mgid" "$@"; }
		reader grep -q '^bach_up ' "$R/var/lib/bach-metrics/m.prom" ||
			fail "a member of bach-metrics cannot read the metrics"
		reader ls "$R/var/lib/bach/captures" > /dev/null 2>&1 &&
			fail "a member of bach-metrics can list the captures"
	fi
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
