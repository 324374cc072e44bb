#!/bin/sh
# --type, --addr and --port on dump, stat, convert, sim, mrc and plot: each
# command's output on the filtered trace equals its output on the records
# tests/helpers/filter_ref.py keeps (from the BYU bytes, not from bach),
# written to a file of their own; dump's and the exports' positions are
# those of the whole trace; gap markers stay; --range composes; bad lists
# and spans are usage errors naming the token.
. "$TOP/tests/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed: the reference cannot run"
REF="python3 $TOP/tests/helpers/filter_ref.py"

$BACH gen --records 60000 --seed 5 -o "$T/gen.byu"
# gap markers every 7000 records, and the odd records at the end
python3 "$TOP/tests/helpers/splice.py" "$T/gen.byu" "$T/t.byu" 7000
$BACH dump "$T/t.byu" | grep -q GAP: || fail "no gap markers in the trace"

n=0
# check ARGS...: every command with ARGS on t.byu against the reference
check() {
	n=$((n + 1))
	$REF "$T/t.byu" "$T/ref.byu" "$T/ref.idx" "$@"
	kept=$(wc -l < "$T/ref.idx")
	all=$(($(wc -c < "$T/t.byu") / 6))
	[ "$kept" -gt 8 ] && [ "$kept" -lt "$all" ] || fail "$*: the reference keeps $kept of $all"
	# dump: the records, each at its position in the whole trace
	$BACH dump --format csv "$@" "$T/t.byu" > "$T/got.csv" || fail "dump $*"
	cut -d, -f1 "$T/got.csv" | tail -n +2 > "$T/got.idx"
	same "$T/ref.idx" "$T/got.idx"
	$BACH dump --format csv "$T/ref.byu" | cut -d, -f2- > "$T/want"
	cut -d, -f2- "$T/got.csv" > "$T/got"
	same "$T/want" "$T/got"
	$BACH dump "$@" "$T/t.byu" > "$T/got"
	$BACH dump "$T/ref.byu" > "$T/want"
	same "$T/want" "$T/got"
	# stat: what the kept records hold, gap markers among them
	$BACH stat --json "$@" "$T/t.byu" > "$T/got"
	$BACH stat --json "$T/ref.byu" > "$T/want"
	same "$T/want" "$T/got"
	case " $* " in *" --range "*) return ;; esac # only dump and stat have it
	# convert: to .byu the kept records; an export numbers them by position
	$BACH convert -q "$@" "$T/t.byu" "$T/conv.byu" || fail "convert $*"
	same "$T/ref.byu" "$T/conv.byu"
	$BACH convert -q "$@" "$T/t.byu" "$T/conv.csv"
	# (the export writes a gap marker as dump does, docs/formats.md 7.4)
	same "$T/got.csv" "$T/conv.csv"
	$BACH convert --to din "$@" "$T/t.byu" "$T/got.din" 2> "$T/err"
	grep -q ", $((all - kept)) filtered out$" "$T/err" || fail "convert $*: $(cat "$T/err")"
	$BACH convert -q --to din "$T/ref.byu" "$T/want.din"
	same "$T/want.din" "$T/got.din"
	# sim and mrc: the numbers of the kept records (gap markers flush)
	$BACH sim --json --l1 8k:32:2 --l2 64k:32:4 "$@" "$T/t.byu" > "$T/got"
	$BACH sim --json --l1 8k:32:2 --l2 64k:32:4 "$T/ref.byu" > "$T/want"
	same "$T/want" "$T/got"
	$BACH mrc --csv --max 64k "$@" "$T/t.byu" > "$T/got"
	$BACH mrc --csv --max 64k "$T/ref.byu" > "$T/want"
	same "$T/want" "$T/got"
	# plot: the picture of the kept records, their gaps where they are
	for k in mix wss; do
		$BACH plot $k --title x "$@" "$T/t.byu" -o "$T/got.svg" || fail "plot $k $*"
		$BACH plot $k --title x "$T/ref.byu" -o "$T/want.svg"
		same "$T/want.svg" "$T/got.svg"
	done
}

check --type fetch
check --type D_READ,nc_d_read,IO
check --type write,special,INVALID
check --addr 0x1000-0x3007
check --addr 0x4000-0x4000
check --addr 0xf0100-0xf7fff
check --port 0x60-0x64
check --port 0x3f8-0x3ff --addr 0x0-0xfffff --type io,read
check --type fetch --range 1000:40000
check --addr 0xf0000-0xfffff --range 30000:
# convert --range with a filter: the export numbers from the whole trace;
# the gap markers stay
$BACH convert -q --range 1000:40000 --type io,special "$T/t.byu" "$T/conv.csv"
$BACH dump --format csv "$T/t.byu" |
	awk -F, 'NR == 1 || ($1 >= 1000 && $1 < 40000 &&
		($5 ~ /^(IO_READ|IO_WRITE|SPECIAL|INT_ACK)$/ || $5 ~ /^GAP:/))' > "$T/want"
grep -q ',GAP:lost=[0-9]*:cause=unknown$' "$T/want" || fail "no gap marker in the range"
[ "$(wc -l < "$T/want")" -gt 100 ] || fail "too few I/O and special cycles: $(wc -l < "$T/want")"
same "$T/want" "$T/conv.csv"

# --time: each kept record keeps its clock (dump, stat, and an export's
# time field)
mkdir "$T/c"
$BACH capture --driver fake --option records=20000 --option seed=3 \
	--option frame=1000 --option drop_every=3 --option timing=1 \
	--output "$T/c" 2> "$T/err" || fail "capture: $(cat "$T/err")"
C=$(ls -d "$T"/c/2*Z*)
$BACH dump --time "$C" | awk '$3 ~ /^(NC_)?I_FETCH$|^GAP:/' > "$T/want"
grep -q GAP: "$T/want" || fail "no gap markers in the capture"
$BACH dump --time --type fetch "$C" > "$T/got"
same "$T/want" "$T/got"
$BACH dump --time "$C" | awk '$3 ~ /^(NC_)?I_FETCH$/ { print $4 }' > "$T/want"
$BACH convert -q --to laplace --type fetch "$C" "$T/l.txt"
awk 'function h(s,  i, v) { v = 0; for (i = 1; i <= length(s); i++)
	v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	{ print h($2) }' "$T/l.txt" > "$T/got"
same "$T/want" "$T/got"
$BACH stat --time --json --type fetch "$C" > "$T/got"
$BACH dump --time --type fetch "$C" | awk '$4 != "-" { t++ }
	END { printf "\"timed\":%d,\"untimed\":0,", t }' > "$T/want"
grep -qF "$(cat "$T/want")" "$T/got" || fail "stat --time --type fetch: $(cat "$T/got"), want $(cat "$T/want")"

# a capture's marks drawn where the kept records around them are: the
# capture with no filter and a filter that keeps everything draw the same
$BACH plot mix --title x --type fetch,read,write,io,special,invalid "$T/t.byu" -o "$T/got.svg"
$BACH plot mix --title x "$T/t.byu" -o "$T/want.svg"
same "$T/want.svg" "$T/got.svg"

# bad lists and spans: exit 2 naming what is wrong
expect_status 2 $BACH dump --type fetch,bogus "$T/t.byu"
expect_err "--type: unknown type 'bogus'"
expect_status 2 $BACH stat --type "" "$T/t.byu"
expect_err "--type: unknown type ''"
expect_status 2 $BACH sim --l1 8k:32:2 --addr 0x2000-0x1000 "$T/t.byu"
expect_err "--addr: not LO-HI with LO <= HI < 2^32: '0x2000-0x1000'"
expect_status 2 $BACH mrc --port 5 "$T/t.byu"
expect_err "--port: not LO-HI"
expect_status 2 $BACH convert --addr 0-0x100000000 "$T/t.byu" "$T/x.byu"
expect_err "--addr: not LO-HI"
[ ! -e "$T/x.byu" ] || fail "a refused convert left its output"
expect_status 2 $BACH plot mix --type nope "$T/t.byu" -o "$T/x.svg"
expect_err "--type: unknown type 'nope'"
echo ok
