# One default control socket for bachd and bach ctl:
# a bachd run by hand with no control_socket listens where bach ctl looks,
# so the README's example (bachd ..., then bach ctl status) works, for
# root (/run/bach/bachd.sock), for a user ($XDG_RUNTIME_DIR/bach/) and
# under systemd ($RUNTIME_DIRECTORY).
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"
unset BACH_SOCKET RUNTIME_DIRECTORY XDG_RUNTIME_DIR || true

# ctl_ok ENV...: bach ctl status, with ENV, answers from a running capture
ctl_ok() {
	env "$@" "$BACH" ctl status --json > "$T/st" 2> "$T/st.err" &&
		grep -q '"capturing":true' "$T/st"
}

# -- under systemd: the unit's RuntimeDirectory= --
mkdir "$T/rt" "$T/o1"
bg env RUNTIME_DIRECTORY="$T/rt" "$BACHD" --driver fake -O rate=100000 \
	-o "$T/o1" --set ring_mb=4 2> "$T/o1.log"
P=$BGPID
wait_until 20 "the socket in RUNTIME_DIRECTORY" test -S "$T/rt/bachd.sock"
ctl_ok RUNTIME_DIRECTORY="$T/rt" || fail "bach ctl under the same unit: $(cat "$T/st.err")"
grep -q "control socket $T/rt/bachd.sock (the default" "$T/o1.log" ||
	fail "bachd does not say where its socket is: $(cat "$T/o1.log")"
# BACH_SOCKET names it for both sides too
ctl_ok BACH_SOCKET="$T/rt/bachd.sock" || fail "BACH_SOCKET: $(cat "$T/st.err")"
# a second bachd with the same default: warned, runs on without a socket
mkdir "$T/o2"
expect_status 0 env RUNTIME_DIRECTORY="$T/rt" "$BACHD" --driver fake \
	-O records=1000 -o "$T/o2" --set ring_mb=4
expect_err "control socket $T/rt/bachd.sock: another bachd answers on it: running without one"
ctl_ok RUNTIME_DIRECTORY="$T/rt" || fail "the first bachd lost its socket"
kill -TERM "$P"
reap "$P"
[ "$RC" -eq 0 ] || fail "bachd exited $RC"
[ ! -e "$T/rt/bachd.sock" ] || fail "bachd left its socket"
# none: no socket at all
bg env RUNTIME_DIRECTORY="$T/rt" "$BACHD" --driver fake -O rate=100000 \
	-o "$T/o1" --set ring_mb=4 --set control_socket=none 2> "$T/none.log"
P=$BGPID
wait_until 20 "a second capture" sh -c "[ \$(ls -d '$T/o1'/2*Z* | wc -l) -eq 2 ]"
sleep 0.3
[ ! -e "$T/rt/bachd.sock" ] || fail "control_socket = none made a socket"
kill -TERM "$P"
reap "$P"

# -- a user: $XDG_RUNTIME_DIR/bach/bachd.sock, made with its directory --
NOBODY=$(id -u nobody 2> /dev/null || true)
if [ "$(id -u)" -eq 0 ] && [ -n "$NOBODY" ] && command -v setpriv > /dev/null; then
	chmod 755 "$T"
	mkdir -m 700 "$T/xdg" && chown nobody "$T/xdg"
	mkdir -m 777 "$T/u"
	# a script, not a function: bg's pid is then the program's own
	printf '#!/bin/sh\nexec setpriv --reuid=%s --regid=%s --clear-groups env XDG_RUNTIME_DIR="%s" "$@"\n' \
		"$NOBODY" "$(id -g nobody)" "$T/xdg" > "$T/as_user"
	chmod 755 "$T/as_user"
fi
if [ -x "$T/as_user" ] && ! "$T/as_user" test -x "$BACHD"; then
	# a clone in a private directory (mktemp -d makes one 0700)
	echo "nobody cannot run $BACHD (a directory above it is closed to"
	echo "other users): the user's default not checked"
elif [ -x "$T/as_user" ]; then
	# the README's example, as that user
	bg "$T/as_user" "$BACHD" --driver fake -O rate=100000 -o "$T/u" --set ring_mb=4 \
		2> "$T/u.log"
	P=$BGPID
	wait_until 20 "the user's socket" test -S "$T/xdg/bach/bachd.sock"
	[ "$(stat -c %a "$T/xdg/bach")" = 750 ] || fail "mode of $T/xdg/bach"
	"$T/as_user" "$BACH" ctl status > "$T/st" 2> "$T/st.err" ||
		fail "bach ctl status as the user: $(cat "$T/st.err")"
	grep -q '^capturing from fake' "$T/st" || fail "status: $(cat "$T/st")"
	kill -TERM "$P"
	reap "$P"
	# no bachd of the user's own: the service's socket is tried, and the
	# message names both
	expect_status 2 "$T/as_user" "$BACH" ctl status
	expect_err "/run/bach/bachd.sock: "
	expect_err "looked for $T/xdg/bach/bachd.sock first"
else
	echo "not root, or no user nobody: the user's default not checked"
fi

# -- root: /run/bach/bachd.sock, in a private /run --
if [ "$(id -u)" -eq 0 ] && unshare -m true 2> /dev/null; then
	mkdir "$T/r"
	cat > "$T/root.sh" << EOF
set -eu
mount -t tmpfs tmpfs /run
"$BACHD" --driver fake -O rate=100000 -o "$T/r" --set ring_mb=4 2> "$T/r.log" &
p=\$!
n=0
until [ -S /run/bach/bachd.sock ]; do
	n=\$((n + 1)); [ \$n -lt 400 ] || { echo "no /run/bach/bachd.sock"; exit 1; }
	sleep 0.05
done
"$BACH" ctl status > "$T/r.st"
kill -TERM \$p
wait \$p
[ ! -e /run/bach/bachd.sock ] || { echo "socket left"; exit 1; }
EOF
	unshare -m sh "$T/root.sh" || fail "root's default: $(cat "$T/r.log")"
	grep -q '^capturing from fake' "$T/r.st" || fail "root status: $(cat "$T/r.st")"
else
	echo "not root or no mount namespace: root's default not checked"
fi
exit 0
