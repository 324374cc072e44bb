# bench/soak.sh for a minute (make bench runs it for ten): bachd at a high
# rate, a segment a second, retention and post_rotate on, status polled,
# SIGHUPs; RSS and open fds must stay flat, the accounting add up and
# what is left verify (bench/soak.sh states the criteria).
. "$TOP/tests/lib.sh"
# ASan's quarantine (256 MiB by default) fills as memory is freed: RSS
# then grows without a leak, so a sanitized run allows for it
slack=8192
[ -n "${BACH_SANITIZED:-}" ] && slack=$((300 * 1024))
SOAK_SECONDS=${SOAK_SECONDS:-60} SOAK_KEEP=${SOAK_KEEP:-64M} \
	SOAK_RSS_SLACK=$slack BACH="$BACH" sh "$TOP/bench/soak.sh" ||
	fail "the soak failed (above)"
