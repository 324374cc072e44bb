# The manual pages: bach(1), bachd(8) and
# bachd.conf(5) are scdoc sources that build, render without a warning,
# install, and name every command, option, driver and [bachd] key the
# programs themselves list, so that they cannot drift apart.
. "$TOP/tests/lib.sh"
BACHD="$(dirname "$BACH")/bachd"
command -v scdoc > /dev/null || skip "no scdoc (scripts/deps.sh installs it)"
command -v groff > /dev/null || skip "no groff (scripts/deps.sh installs groff-base)"

for p in bach.1 bachd.8 bachd.conf.5; do
	scdoc < "$TOP/docs/man/$p.scd" > "$T/$p" 2> "$T/err" ||
		fail "scdoc $p: $(cat "$T/err")"
	groff -man -ww -z "$T/$p" 2> "$T/err"
	[ ! -s "$T/err" ] || fail "groff warns on $p: $(cat "$T/err")"
	if command -v man > /dev/null; then
		MANWIDTH=80 man -l "$T/$p" > "$T/$p.txt" 2> "$T/err" ||
			fail "man -l $p: $(cat "$T/err")"
	else
		groff -man -Tutf8 "$T/$p" > "$T/$p.txt" 2> /dev/null
	fi
	# no formatting left over, no empty page
	[ "$(wc -l < "$T/$p.txt")" -gt 40 ] || fail "$p renders to $(wc -l < "$T/$p.txt") lines"
	! grep -n '\*[a-z-]*\*\|^[0-9a-z.]*([0-9])$' "$T/$p.txt" | grep -v '(1)\|(5)\|(8)' ||
		fail "$p: scdoc markup left in the text"
done

# section TITLE FILE: the lines of one section of a rendered page
section() { awk -v s="$1" '/^[A-Z]/ { on = ($0 == s) } on' "$2"; }

# bach(1): every command of `bach help` has its entry under COMMANDS
$BACH help | sed -n '/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' > "$T/cmds"
[ "$(wc -l < "$T/cmds")" -ge 9 ] || fail "bach help lists $(cat "$T/cmds")"
section COMMANDS "$T/bach.1.txt" > "$T/sec"
while read -r c; do
	grep -qE "^       $c( |$)" "$T/sec" || fail "bach(1) has no entry for bach $c"
	# ... and every option that command's help lists
	[ "$c" != help ] || continue
	$BACH help "$c" | grep -E '^ +-' | sed -E 's/^ +//; s/   *[^ -].*//' |
		grep -oE -- '--[a-z][a-z-]*' | sort -u > "$T/opts"
	while read -r o; do
		grep -q -- "$o" "$T/bach.1.txt" ||
			echo "$o" >> "$T/missing.$c"
	done < "$T/opts"
done < "$T/cmds"
grep -q -- '--version' "$T/bach.1.txt" || fail "bach(1) lacks --version"

# bachd(8): every option of bachd --help, every driver
"$BACHD" --help | sed -n '1,/^Settings/p' | grep -E '^ +-' |
	sed -E 's/^ +//; s/   *[^ -].*//' | grep -oE -- '--[a-z][a-z-]*' | sort -u > "$T/dopts"
[ "$(wc -l < "$T/dopts")" -ge 15 ] || fail "bachd --help lists $(cat "$T/dopts")"
section OPTIONS "$T/bachd.8.txt" > "$T/sec"
while read -r o; do
	grep -q -- "$o" "$T/sec" || fail "bachd(8) OPTIONS lacks $o"
done < "$T/dopts"
"$BACHD" --list-drivers | sed -n 's/^\([a-z0-9_]*\): .*/\1/p' > "$T/drivers"
while read -r d; do
	grep -qw "$d" "$T/sec" || fail "bachd(8) does not name driver $d"
done < "$T/drivers"
# bach capture takes bachd's options: bach(1) names the page that has them
grep -q 'bachd(8)' "$T/bach.1.txt" || fail "bach(1) does not point to bachd(8)"

# bachd.conf(5): every [bachd] key, an entry each
"$BACHD" --help | sed -n '/^Settings/,/^Drivers/s/^  \([a-z_]*\)=.*/\1/p' > "$T/keys"
[ "$(wc -l < "$T/keys")" -ge 25 ] || fail "bachd --help lists $(cat "$T/keys")"
section SETTINGS "$T/bachd.conf.5.txt" > "$T/sec"
while read -r k; do
	grep -qE "^       $k = " "$T/sec" || fail "bachd.conf(5) has no entry for $k"
done < "$T/keys"
# ... and no entry for a key bachd does not know
grep -E '^       [a-z_]+ = ' "$T/sec" | sed -E 's/^ +([a-z_]+) = .*/\1/' |
	while read -r k; do
		grep -qx "$k" "$T/keys" || fail "bachd.conf(5) documents '$k', which bachd does not know"
	done

# bach's per-command options: all named somewhere in bach(1)
if ls "$T"/missing.* > /dev/null 2>&1; then
	for f in "$T"/missing.*; do
		echo "bach(1) lacks bach ${f##*.} options: $(tr '\n' ' ' < "$f")"
	done
	fail "bach(1) lacks options (above)"
fi

# make install puts them (and the completion) in place
make -s -C "$TOP" BUILD="$BUILD" NO_DEPS=1 DESTDIR="$T/dest" PREFIX=/usr \
	install-man install-completion > "$T/make.log" 2>&1 ||
	fail "make install-man install-completion: $(cat "$T/make.log")"
for f in man1/bach.1 man8/bachd.8 man5/bachd.conf.5; do
	same "$T/${f#*/}" "$T/dest/usr/share/man/$f"
done
for f in bach bachd; do
	[ -s "$T/dest/usr/share/bash-completion/completions/$f" ] ||
		fail "no completion installed for $f"
done
exit 0
