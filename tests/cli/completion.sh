# bash completion for bach and bachd: sourced in
# bash, its functions complete commands, options, driver names, driver
# options, [bachd] keys, the formats of --from, --to and --as, plot kinds,
# mrc --kind and ctl's commands, all taken from the programs' own tables
# (bach __complete, bach __options).
. "$TOP/tests/lib.sh"
BACHD="$(dirname "$BACH")/bachd"
command -v bash > /dev/null || skip "no bash"

cat > "$T/t.bash" << 'EOF'
set -u
. "$TOP/tools/completion/bach.bash"
# comp FUNCTION WORD...: the completions of the last WORD
comp() {
	local f=$1
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	"$f"
	printf '%s\n' "${COMPREPLY[@]}" | sort
}
fail() { echo "FAIL: $*" >&2; exit 1; }
# want LIST WORD...: the completions are exactly LIST (words, any order)
want() {
	local w=$(printf '%s\n' $1 | sort)
	shift
	local got=$(comp "$@")
	[ "$got" = "$w" ] || fail "'${*:2}': got [$(echo $got)], want [$(echo $w)]"
}
# has WORD... -- ARGS: every WORD is among the completions
has() {
	local words=() got
	while [ "$1" != -- ]; do words+=("$1"); shift; done
	shift
	got=$(comp "$@")
	for w in "${words[@]}"; do
		grep -qxF -- "$w" <<< "$got" || fail "'${*:2}': no '$w' in [$(echo $got)]"
	done
}

# bach's commands, from bach help
cmds=$("$BACH" help | sed -n '/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
[ $(wc -w <<< "$cmds") -ge 9 ] || fail "bach help lists [$cmds]"
has $cmds --version -- _bach "$BACH" ""
want verify _bach "$BACH" ve
want "capture convert ctl" _bach "$BACH" c
want capture _bach "$BACH" help cap
# a command's options, from its help
want --format _bach "$BACH" dump --fo
want "--from" _bach "$BACH" convert --fr
has -o --output --records --seed --pins -- _bach "$BACH" gen -
# formats: every one bach convert takes (its messages list them from the
# table of formats, as its help does), and no other
names() {
	"$BACH" convert "$1" nosuch a b 2>&1 |
		sed -n "s/.*unknown format 'nosuch' (\(.*\))\$/\1/p" | tr -d ,
}
from=$(names --from)
to=$(names --to)
[ $(wc -w <<< "$from") -ge 10 ] || fail "bach convert --from takes [$from]"
[ $(wc -w <<< "$to") -ge 9 ] || fail "bach convert --to takes [$to]"
want "$from" _bach "$BACH" convert --from ""
want "$to" _bach "$BACH" convert --to ""
want "$from" _bach "$BACH" diff --from-b ""
want tracematcher _bach "$BACH" convert --from tr
want "laplace laplace-bin" _bach "$BACH" convert --to lap
want "text csv jsonl" _bach "$BACH" dump -f ""
want "status start stop" _bach "$BACH" ctl st
has --socket --instance --json --timeout -- _bach "$BACH" ctl --
# drivers, from bachd --list-drivers
drivers=$("$BACHD" --list-drivers | sed -n 's/^\([a-z0-9_]*\): .*/\1/p')
want "$drivers" _bachd "$BACHD" --driver ""
want "$drivers" _bach "$BACH" capture -d ""
want "seed= status_every= stall_every=" _bachd "$BACHD" --driver fake -O s
want "serial= status_ms=" _bach "$BACH" capture --driver usb --option s
# [bachd] keys, from bachd --help
keys=$("$BACHD" --help | sed -n '/^Settings/,/^Drivers/s/^  \([a-z_]*\)=.*/\1=/p')
[ $(wc -w <<< "$keys") -ge 25 ] || fail "bachd --help lists [$keys]"
want "$keys" _bachd "$BACHD" --set ""
want "keep_bytes= keep_days= keep_captures=" _bachd "$BACHD" --set keep
want "stall drop" _bachd "$BACHD" --policy ""
# bachd's own options
has --driver --option --output --config --set --version --list-drivers \
	--check-config -- _bachd "$BACHD" --
want "--version" _bachd "$BACHD" --ver
# bach capture: bachd's options too
has --driver --option --output -- _bach "$BACH" capture --
# ... every one of them, as its help lists them all; and ctl's --wait
has --autostop --label --control-socket --no-io-uring --policy -- _bach "$BACH" capture --
has --wait -- _bach "$BACH" ctl --
# a trace argument completes file names
touch "$T/trace-one.byu"
want "$T/trace-one.byu" _bach "$BACH" dump "$T/trace-o"

# ---- every command, every option: exactly the tables -------------------
# The command table, as bach help prints it, and each command's getopt
# table, as `bach __options CMD` catches it from the command's own
# getopt_long() call: "-" completes to exactly that table, and "--" to its
# long options. Each is named in the command's help (so the table is the
# one the command parses with, not an empty one).
want "$cmds --help --version" _bach "$BACH" ""
for c in $cmds; do
	[ "$c" = help ] && continue
	opts=$("$BACH" __options "$c")
	want "$opts" _bach "$BACH" "$c" -
	want "$(printf '%s\n' $opts | grep -- '^--')" _bach "$BACH" "$c" --
	help=$("$BACH" help "$c")
	# capture's help names bachd's for the options they share
	[ "$c" != capture ] || help="$help $("$BACHD" --help)"
	for o in $opts; do
		case $o in --*) ;; *) continue ;; esac
		grep -qe "$o\([^a-z0-9-]\|\$\)" <<< "$help" ||
			fail "bach $c: $o is in its table, not in bach help $c"
	done
done
# known entries (docs/man/bach.1.scd), so that no table can be empty
for c_o in dump:--format dump:--count diff:--as diff:--from-b convert:--to \
	sim:--l1 sim:--l2 ctl:--instance gen:--pins mrc:--kind plot:--output \
	capture:--driver decode:--map; do
	has "${c_o#*:}" -- _bach "$BACH" "${c_o%%:*}" --
done
# sim's --l1, --l2, ... are whole (the help's parse offered --l)
want "--l1 --l1i --l1d --l2 --l3" _bach "$BACH" sim --l
# bachd: bach capture's table is bachd's own
want "$("$BACH" __options capture)" _bachd "$BACHD" -
want "$("$BACH" __options capture)" _bach "$BACH" capture -
# values: the lists the commands' own messages give (written by hand, so
# a reference apart from the tables)
msg() { "$BACH" "$@" 2>&1 | tail -n 2 | head -n 1; }
as=$(msg diff --as nosuch a b | sed -n "s/.*writes and reads: \(.*\))\$/\1/p" | tr -d ,)
[ $(wc -w <<< "$as") -ge 8 ] || fail "bach diff --as takes [$as]"
want "$as" _bach "$BACH" diff --as ""
kinds=$(msg plot nosuch -o x.svg | sed -n "s/.*is not a kind: \(.*\)\$/\1/p" | sed 's/,\| or / /g')
[ "$(echo $kinds)" = "map mix mrc wss" ] || fail "bach plot's kinds: [$kinds]"
want "$kinds" _bach "$BACH" plot ""
want "$kinds" _bach "$BACH" plot --line 64 ""
want "$T/trace-one.byu" _bach "$BACH" plot map "$T/trace-o"
mk=$(msg mrc --kind x a | sed -n "s/.*is not \(.*\)\$/\1/p" | sed 's/,\| or / /g')
[ "$(echo $mk)" = "i d all" ] || fail "bach mrc --kind: [$mk]"
want "$mk" _bach "$BACH" mrc --kind ""
# plan --slurm DIR -- CMD OPTION...: the commands that take --range and
# --partial, then CMD's own options and values
has mrc stat -- _bach "$BACH" plan t --slurm d -- ""
comp _bach "$BACH" plan t --slurm d -- "" | grep -qx merge && fail "plan -- offers merge"
want --line _bach "$BACH" plan t --slurm d -- mrc --li
want "$mk" _bach "$BACH" plan t --slurm d -- mrc --line 32 --kind ""
pins=$(msg gen -n 1 --pins x | sed -n "s/.*--pins: \(.*\), not 'x'\$/\1/p" | sed 's/,\| or / /g')
want "$pins" _bach "$BACH" gen --pins ""
want "status start stop rotate mark" _bach "$BACH" ctl ""
want "" _bach "$BACH" ctl mark ""
want "" _bach "$BACH" ctl --timeout ""
# --opt=VALUE, split by bash at the =
want "=text =csv =jsonl" _bach "$BACH" dump --format =
want "jsonl" _bach "$BACH" dump --format = j
want "laplace laplace-bin" _bach "$BACH" diff --from-b = lap
echo ok
EOF
export T
TOP="$TOP" BACH="$BACH" BACHD="$BACHD" bash "$T/t.bash" > "$T/out" 2> "$T/err" ||
	fail "$(cat "$T/err")"
grep -qx ok "$T/out" || fail "the completion test did not finish: $(cat "$T/out" "$T/err")"
exit 0
