# The command lines of bach and bachd agree with each other and with their
# help: -o is the output everywhere, -O a driver or
# input-format option; --version and -V; bachd --help names every driver
# built in; help texts print no printf escapes.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

# -- -o is the output, -O a driver option, in bachd and bach capture --
mkdir "$T/caps" "$T/daemon"
expect_status 0 $BACH capture --driver fake -O records=1000 -O seed=7 -o "$T/caps"
C=$(echo "$T"/caps/*/)
$BACH gen --records 1000 --seed 7 -o "$T/want.byu"
$BACH convert -q --to byu "$C" "$T/got.byu"
same "$T/want.byu" "$T/got.byu"
expect_status 0 "$BACHD" --driver fake -O records=1000 -o "$T/daemon"
[ "$(ls "$T/daemon" | wc -l)" -eq 1 ] || fail "bachd -o made no capture"
# the long options are as they were
mkdir "$T/long"
expect_status 0 $BACH capture --driver fake --option records=10 --output "$T/long"
# the old meaning is caught with a message, not taken for a directory
expect_status 2 $BACH capture --driver fake -o records=10 -O x
expect_err "-O KEY=VALUE"
expect_status 2 "$BACHD" --driver fake -o records=10
expect_err "-o is --output DIR; a driver option is -O KEY=VALUE"
expect_status 2 "$BACHD" --driver fake -O "$T/daemon"
expect_err "want KEY=VALUE"
# bach gen and decode: -o the output, as before
$BACH gen --records 10 -o "$T/g.byu"
[ "$(wc -c < "$T/g.byu")" -eq 60 ] || fail "bach gen -o"
# ... and every help says so
"$BACHD" --help > "$T/h.bachd"
$BACH help capture > "$T/h.capture"
$BACH help decode > "$T/h.decode"
$BACH help gen > "$T/h.gen"
grep -q '^  -o, --output DIR ' "$T/h.bachd" || fail "bachd --help: -o is not --output"
grep -q '^  -O, --option KEY=VALUE ' "$T/h.bachd" || fail "bachd --help: -O is not --option"
grep -q '^  -o, --output DIR ' "$T/h.capture" || fail "bach help capture: -o"
grep -q '^  -O, --option KEY=VALUE ' "$T/h.capture" || fail "bach help capture: -O"
grep -q -- '-o FILE' "$T/h.gen" || fail "bach help gen: -o"
grep -q -- '-o, --output' "$T/h.decode" || fail "bach help decode: -o"
# the sidecar's name as bach decode makes it: NAME.time.gz beside
# NAME.byu.gz (decode_time.sh), not the output's whole name + .time.gz
grep -q 'NAME\.byu\.gz' "$T/h.decode" && grep -q 'NAME\.time\.gz' "$T/h.decode" &&
	! grep -q 'OUT\.time\.gz' "$T/h.decode" ||
	fail "bach help decode: the sidecar's name: $(cat "$T/h.decode")"
# bach help capture gives every exit status bach(1) lists for it
sed -n '/^Exit status/,/^$/p' "$T/h.capture" | tr '\n' ' ' > "$T/exits"
nums=$(grep -B1 '\*bach capture\* only' "$TOP/docs/man/bach.1.scd" | head -n 1 | tr -cd '0-9')
[ -n "$nums" ] || fail "bach.1.scd: no exit statuses for bach capture"
for n in 0 1 2 $(echo "$nums" | sed 's/./& /g'); do
	grep -q "[ :]$n [a-z]" "$T/exits" ||
		fail "bach help capture lacks exit status $n (bach(1) lists it): $(cat "$T/exits")"
done

# -- every long option of a getopt table is in the help that goes with it --
# longopts FILE: the names in FILE's table "static const struct option opts[]"
longopts() {
	sed -n '/static const struct option opts\[\] = {/,/^[[:space:]]*};/p' "$1" |
		sed -n 's/^[[:space:]]*{ "\([a-z-]*\)",.*/\1/p'
}
$BACH help ctl > "$T/h.ctl"
for pair in "daemon/args.c:$T/h.capture" "daemon/args.c:$T/h.bachd" \
	"tools/bach/ctl.c:$T/h.ctl"; do
	src=${pair%%:*}
	help=${pair#*:}
	names=$(longopts "$TOP/$src")
	[ "$(echo "$names" | wc -w)" -ge 4 ] || fail "$src: no option table found"
	for o in $names; do
		grep -qE -- "^ +(-[a-zA-Z], )?--$o( |\$)" "$help" ||
			fail "$(basename "$help"): --$o ($src's table) is not among its options"
	done
done

# -- versions --
expect_status 0 "$BACHD" --version
grep -qx 'bachd [0-9][0-9.]*' "$T/out" || fail "bachd --version: $(cat "$T/out")"
cp "$T/out" "$T/v1"
expect_status 0 "$BACHD" -V
same "$T/v1" "$T/out"
expect_status 0 $BACH --version
grep -qx 'bach [0-9][0-9.]*' "$T/out" || fail "bach --version: $(cat "$T/out")"
cp "$T/out" "$T/v2"
expect_status 0 $BACH -V
same "$T/v2" "$T/out"
[ "$(cut -d' ' -f2 "$T/v1")" = "$(cut -d' ' -f2 "$T/v2")" ] ||
	fail "bach and bachd differ in version"
grep -q -- '--version' "$T/h.bachd" || fail "bachd --help lacks --version"

# -- bachd --help names every driver of --list-drivers --
"$BACHD" --list-drivers | sed -n 's/^\([a-z0-9_]*\): .*/\1/p' > "$T/drivers"
[ "$(wc -l < "$T/drivers")" -ge 4 ] || fail "--list-drivers lists $(cat "$T/drivers")"
names=$(grep '^  -d, --driver NAME' "$T/h.bachd" | sed 's/.*source: //')
for d in $(cat "$T/drivers"); do
	case ", $names," in
	*", $d,"*) ;;
	*) fail "bachd --help's --driver line ($names) lacks $d" ;;
	esac
	grep -q "^$d: " "$T/h.bachd" || fail "bachd --help lacks driver $d's options"
	grep -q "^$d: " "$T/h.capture" || fail "bach help capture lacks driver $d"
done

# -- no printf escapes left in any help --
for c in $($BACH help | sed -n 's/^  \([a-z]*\)  .*/\1/p'); do
	$BACH help "$c" > "$T/h.$c" 2>&1 || true
	if grep -n '%%' "$T/h.$c"; then
		fail "bach help $c prints a printf escape"
	fi
done
if grep -n '%%' "$T/h.bachd"; then fail "bachd --help prints %%"; fi
[ -s "$T/h.gen" ] && grep -q 'PCT% of cycles' "$T/h.gen" || fail "bach help gen: PCT% lost"

# -- the progress line: its first rate is not 0.00 M/s --
mkdir "$T/prog"
# about 2.6 s at 3 M records/s; stderr is not a terminal: a line per 5 s,
# then the summary. Under a terminal (script(1)) a line per 0.5 s.
if command -v script > /dev/null 2>&1; then
	script -qec "$BACH capture --driver fake -O rate=2000000 -O records=6000000 -o '$T/prog'" \
		/dev/null > "$T/prog.tty" 2>&1 || fail "bach capture under script(1) failed"
	tr '\r' '\n' < "$T/prog.tty" | grep ' M/s' > "$T/lines" || true
	[ -s "$T/lines" ] || fail "no progress line: $(cat "$T/prog.tty")"
	first=$(head -n 1 "$T/lines")
	case $first in
	*" 0.00 M/s"*) fail "the first progress line shows 0.00 M/s: $first" ;;
	esac
	rate=$(echo "$first" | sed 's/.* \([0-9.]*\) M\/s.*/\1/')
	[ "$(awk "BEGIN { print ($rate >= 1.0 && $rate <= 3.0) }")" = 1 ] ||
		fail "first progress line's rate $rate M/s, the source gives 2"
	# no progress line counts more segments than the summary: it counted
	# the open one too, which is dropped when it stays empty (the board
	# unplugged after the last record; also a last line after the close)
	rm -rf "$T/prog"
	mkdir "$T/prog"
	script -qec "$BACH capture --driver fake -O rate=1000000 -O records=200704 -O disconnect=200704:1 -o '$T/prog'" \
		/dev/null > "$T/prog.tty" 2>&1 || fail "bach capture under script(1) failed"
	tr '\r' '\n' < "$T/prog.tty" > "$T/lines"
	sum=$(sed -n 's/.* written, .* \([0-9]*\) segments*, .*/\1/p' "$T/lines")
	[ -n "$sum" ] || fail "no summary: $(cat "$T/lines")"
	[ "$sum" -eq "$(ls "$T"/prog/*/ | grep -c '^seg-.*\.byu\.zst$')" ] ||
		fail "the summary's $sum segments are not those on disk: $(ls "$T"/prog/*/)"
	sed -n 's/.* lost, \([0-9]*\) segments*.*/\1/p' "$T/lines" > "$T/segs"
	[ -s "$T/segs" ] || fail "no segments in the progress lines: $(cat "$T/lines")"
	while read -r k; do
		[ "$k" -le "$sum" ] || fail "a progress line says $k segments, the summary $sum"
	done < "$T/segs"
else
	echo "no script(1): the progress line under a terminal not checked"
fi
exit 0
