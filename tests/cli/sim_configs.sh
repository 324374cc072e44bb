#!/bin/sh
# bach sim --configs FILE: every configuration of FILE in one pass, each
# printing exactly what its own bach sim run prints (docs/analysis.md
# section 2.2): the JSON array's entries against the separate runs' --json,
# parsed by Python's json and byte for byte, and the text after each
# header against the separate runs' text; on a capture with gap markers
# and on a trace imported from Dinero's din text (written here by
# Python); the same output on 1, 2 and 5 threads; the command line's
# options holding for every line; bad lines refused naming FILE:LINE.
. "$TOP/tests/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed: the JSON cannot be compared"

# a capture with gap markers (frames lost on the link)
mkdir "$T/caps"
$BACH capture --driver fake --option records=150000 --option drop_every=7 \
	--policy drop --output "$T/caps" 2>"$T/log" || fail "capture: $(cat "$T/log")"
C=$(ls -d "$T"/caps/2*Z*)

# an imported trace: Dinero's din text (label address; 0 read, 1 write,
# 2 fetch), code runs, a stack and a heap, written by Python
python3 - "$T/trace.din" <<'EOF'
import random, sys
r = random.Random(3)
pc, out = 0x10000, []
for i in range(60000):
    if r.random() < 0.1:
        pc = 0x10000 + 4 * r.randrange(1 << 14)
    out.append("2 %x" % pc)
    pc += 4
    x = r.random()
    if x < 0.3:
        out.append("%d %x" % (r.randrange(2), 0x7fff0000 - 4 * r.randrange(256)))
    elif x < 0.5:
        out.append("%d %x" % (r.randrange(2), 0x400000 + 4 * r.randrange(1 << 16)))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF
$BACH convert -q --from din "$T/trace.din" "$T/imported.byu.gz" ||
	fail "the din trace does not import"

# 31 configurations: sizes, line sizes, ways, LRU/FIFO/random, wb/wt,
# wa/nwa, split and unified L1, with and without L2, L3 and a TLB, a seed
# of their own; comments, blank lines and --opt=value; L1s of an earlier
# line, with and without an L2 (simulated once: not a random one of
# another seed)
cat >"$T/sweep" <<'EOF'
# a design sweep

--l1 1k:32:1
--l1 4k:16:2
--l1 8k:32:4   # the default policies
--l1 16k:64:8:fifo
--l1 2k:32:full
--l1 4k:32:4:random --seed 5
--l1 4k:32:4:random
	--l1=8k:32:2:wt:nwa
--l1 8k:8:2:wt
--l1i 8k:32:2 --l1d 8k:32:2
--l1i 4k:32:4:fifo --l1d 4k:32:4:wt --l2 64k:64:8
--l1i 8k:32:2 --l1d 8k:32:2 --l2 128k:32:4:random --l3 512k:64:16
--l1 16k:32:4 --tlb 32:4
--l1i 8k:32:4 --l1d 8k:32:4 --l2 256k:64:full --tlb 16:full
--l1 3k:32:3 --l2 24k:32:6:nwa
--l1 1k:4:2 --l2 4k:64:1:wt
--l1 32k:32:8:lru:wb:wa
--l1i 2k:16:1 --l1d 4k:16:1:random --l2 32k:32:4:fifo:wt --tlb 8:2
# an L1 an earlier line has, without an L2: that line's L1 and its own TLB
--l1 8k:32:4 --tlb 16:4
--l1 4k:32:4:random --tlb 8:full
--l1i 8k:32:4 --l1d 8k:32:4
--l1 8k:32:2:wt:nwa --tlb 4:2
--l1 1k:32:1
--l1i 2k:16:1 --l1d 4k:16:1:random --seed 4 --tlb 2:full
# and with an L2: that line's L1 sends below it to this one's L2
--l1i 8k:32:4 --l1d 8k:32:4 --l2 64k:64:4:fifo --tlb 8:2
--l1i 8k:32:2 --l1d 8k:32:2 --l2 32k:32:8:wt --l3 256k:64:4:random
--l1 1k:4:2 --l2 8k:64:2:nwa
--l1i 2k:16:1 --l1d 4k:16:1:random --l2 16k:64:2:random
--l1 3k:32:3 --l2 12k:32:6
--l1 8k:32:2:wt:nwa --l2 16k:32:4
--l1 8k:32:2:wt:nwa --l2 64k:64:2:random --tlb 4:full
EOF
grep -v '^#' "$T/sweep" | sed 's/#.*//' | grep -v '^[[:space:]]*$' >"$T/lines"
[ "$(wc -l <"$T/lines")" -eq 31 ] || fail "the sweep lost lines"

# check FILE TRACE OPTIONS...: --configs FILE against one bach sim run a
# line of FILE, each with the OPTIONS before the line's
check() {
	file=$1
	trace=$2
	shift 2
	$BACH sim --json "$@" --configs "$file" "$trace" >"$T/all.json" ||
		fail "bach sim --configs $file $trace exited $?"
	$BACH sim "$@" --configs "$file" "$trace" >"$T/all.txt" ||
		fail "bach sim --configs $file $trace (text) exited $?"
	: >"$T/one.json"
	: >"$T/one.txt"
	grep -n '' "$file" | sed 's/#.*//' >"$T/numbered"
	while IFS= read -r nl; do
		no=${nl%%:*}
		l=${nl#*:}
		case $l in *[!\ \	]*) ;; *) continue ;; esac
		# shellcheck disable=SC2086 # the line's words are options
		$BACH sim --json "$@" $l "$trace" >>"$T/one.json" ||
			fail "bach sim $* $l exited $?"
		[ ! -s "$T/one.txt" ] || echo >>"$T/one.txt"
		# shellcheck disable=SC2086 # the words, one space apart
		echo "== $file:$no: $(echo $l)" >>"$T/one.txt"
		$BACH sim "$@" $l "$trace" >>"$T/one.txt"
	done <"$T/numbered"
	python3 - "$T/all.json" "$T/one.json" <<'EOF' || fail "--configs $file on $trace $*: the JSON entries differ from the separate runs"
import json, sys
whole = open(sys.argv[1]).read()
runs = open(sys.argv[2]).read().splitlines()
arr = json.loads(whole)
assert len(arr) == len(runs), (len(arr), len(runs))
for i, (a, r) in enumerate(zip(arr, runs)):
    assert a == json.loads(r), (i, a, r)
# byte for byte: "[", the runs' lines joined by ",", "]"
assert whole == "[\n" + ",\n".join(runs) + "\n]\n", "not byte-identical"
EOF
	same "$T/all.txt" "$T/one.txt"
}

check "$T/sweep" "$C"
[ "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$T/all.json")" -eq 31 ] ||
	fail "not 31 entries: $(head -c 300 "$T/all.json")"
grep -q '"flushes":[1-9]' "$T/all.json" || fail "the capture has no gap markers: nothing flushed"
grep -q '^== .*/sweep:3: --l1 1k:32:1$' "$T/all.txt" || fail "no header naming line 3: $(head -n 3 "$T/all.txt")"
grep -q '^== .*/sweep:10: --l1=8k:32:2:wt:nwa$' "$T/all.txt" || fail "no header naming line 10"
check "$T/sweep" "$T/imported.byu.gz"

# the command line's options hold for every line: a seed (a line's own
# --seed wins, as it would after it), a filter, an L2 the lines lack
cat >"$T/small" <<'EOF'
--l1 4k:32:4:random --seed 5
--l1 4k:32:4:random
--l1i 2k:32:2 --l1d 2k:32:2:wt
--l1 4k:32:4:random --tlb 4:2
EOF
check "$T/small" "$C" --seed 9 --type fetch,read --addr 0-0x7fffffff --l2 64k:64:4:random
grep -q '"name":"l2","size":65536' "$T/all.json" || fail "the command line's --l2 is not in every configuration"
$BACH sim --json --configs "$T/small" "$C" >"$T/seed1.json"
$BACH sim --json --seed 9 --configs "$T/small" "$C" >"$T/seed9.json"
python3 - "$T/seed1.json" "$T/seed9.json" <<'EOF' || fail "--seed on the command line: not for the lines without their own"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a[0] == b[0] and a[1] != b[1], "seed"
EOF

# the threads change nothing
for n in 1 2 5; do
	$BACH sim --json --threads $n --configs "$T/sweep" "$C" >"$T/t$n.json" ||
		fail "--threads $n exited $?"
done
same "$T/t1.json" "$T/t2.json"
same "$T/t1.json" "$T/t5.json"

# a damaged trace fails as bach sim alone does: status and message
$BACH gen --records 20000 --seed 2 -o "$T/g.byu.gz"
cut_member "$T/g.byu.gz" "$T/cut.byu.gz"
expect_status 1 $BACH sim --l1 8k:32:2 "$T/cut.byu.gz"
cp "$T/err" "$T/err.one"
expect_status 1 $BACH sim --configs "$T/sweep" "$T/cut.byu.gz"
[ ! -s "$T/out" ] || fail "a damaged trace printed results: $(head -n 3 "$T/out")"
same "$T/err.one" "$T/err"

# bad lines: usage errors (2) naming FILE:LINE and the option, before
# any record is read, nothing printed
bad() { # LINE MESSAGE
	printf '# ok\n--l1 8k:32:2\n%s\n--l1 4k:32:1\n' "$1" >"$T/bad"
	expect_status 2 $BACH sim --configs "$T/bad" "$C"
	[ ! -s "$T/out" ] || fail "'$1' printed: $(head -n 3 "$T/out")"
	expect_err "$T/bad:3: $2"
}
bad '--l1 8k:32:3' '--l1: SIZE 8192 is not a multiple of LINE x ASSOC (96)'
bad '--l1i 8k:32:2' '--l1i and --l1d go together'
bad '--l2 64k:32:4' 'no L1'
bad '--l1 8k:32:2 --l1 4k:32:2' '--l1 given twice'
bad '--l1 8k:32:2 --json' '--json goes on the command line'
bad '--l1 8k:32:2 --type fetch' '--type goes on the command line'
bad '--l1 8k:32:2 --bogus 3' "unknown option '--bogus'"
bad '--l1' '--l1 needs a value'
bad 'l1 8k:32:2' "'l1' is not an option"
bad '--l1 8k:32:2 --tlb 3:2' '--tlb: ENTRIES 3 is not a multiple of ASSOC 2'
bad '--l1 8k:32:2 --seed x' "--seed: not a number: 'x'"
bad "--l1 8k:32:2$(printf ' --seed 1%.0s' $(seq 200))" 'more than 256 words'
printf -- '--l1 8k:32:2\n' >"$T/one"
expect_status 2 $BACH sim --l1 4k:32:1 --configs "$T/one" "$C"
expect_err "$T/one:1: --l1 is on the command line already"
printf '# nothing\n\n' >"$T/none"
expect_status 2 $BACH sim --configs "$T/none" "$C"
expect_err "$T/none holds no configuration"
expect_status 2 $BACH sim --configs "$T/missing" "$C"
expect_err "$T/missing: No such file or directory"
expect_status 2 $BACH sim --threads 2 --l1 8k:32:2 "$C"
expect_err "--threads: only with --configs"
expect_status 2 $BACH sim --threads 0 --configs "$T/one" "$C"
expect_err "--threads: 1 to 64"
echo ok
