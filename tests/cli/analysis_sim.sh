#!/bin/sh
# bach sim against tests/models/dinero.py, a model written from Dinero IV's
# sources and man page (not from bach's code), number for number on
# generated traces with gap markers and odd records; text output; bad
# options and damaged traces with their exit statuses.
. "$TOP/tests/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed: the reference model cannot run"
MODEL="$TOP/tests/models/dinero.py"
SAME="$TOP/tests/models/same_json.py"

$BACH gen --records 40000 --seed 5 -o "$T/gen.byu"
python3 "$TOP/tests/helpers/splice.py" "$T/gen.byu" "$T/gaps.byu" 9000
$BACH gen --records 30000 --seed 11 -o "$T/b.byu"
python3 "$TOP/tests/helpers/splice.py" "$T/b.byu" "$T/tail.byu" 1000000

# compare TRACE ARGS...: bach sim --json and the model agree on every number
compare() {
	trace=$1
	shift
	$BACH sim --json "$@" "$trace" >"$T/bach.json" ||
		fail "bach sim $* $trace exited $?"
	python3 "$MODEL" "$@" "$trace" >"$T/model.json" ||
		fail "the model failed on $* $trace"
	python3 "$SAME" "$T/bach.json" "$T/model.json" >"$T/diff" ||
		fail "bach sim $* $(basename "$trace") differs from the model: $(cat "$T/diff")"
}

# every policy, split and unified L1, two and three levels, lines that
# split references (4 bytes), lines smaller and larger below, set counts
# that are not powers of two, fully associative and hashed sets, a TLB
compare "$T/gaps.byu" --l1i 8k:32:2 --l1d 8k:32:2 --l2 256k:32:4
compare "$T/gaps.byu" --l1 4k:16:4:fifo:wt:nwa --l2 32k:64:8:random
compare "$T/gaps.byu" --l1 2k:4:full --l2 16k:8:2:wt --l3 64k:64:4:nwa
compare "$T/gaps.byu" --l1i 1k:32:full:random --l1d 3k:32:3:lru:wb:nwa --tlb 16:4
compare "$T/gaps.byu" --l1i 512:32:1 --l1d 1k:32:2:wt:nwa --l2 12k:32:6:fifo --tlb 8:full
compare "$T/gaps.byu" --l1 8k:64:full:fifo --l2 32k:32:32:lru --l3 128k:128:full:random:wt
compare "$T/tail.byu" --l1 1k:8:1 --l2 4k:8:2:wt:wa --seed 7
compare "$T/tail.byu" --l1 2k:32:64:random:nwa --l2 8k:16:4:random --seed 3
compare "$T/tail.byu" --l1i 1k:64:2 --l1d 1k:64:2:wt --l2 24k:32:3:random:nwa --l3 96k:64:3
compare "$T/gen.byu" --l1 16k:32:4 --l2 256k:32:8:random --seed 12345

# the comparison can fail: another seed draws other victims
$BACH sim --json --l1 2k:32:4:random --seed 1 "$T/gen.byu" >"$T/s1.json"
$BACH sim --json --l1 2k:32:4:random --seed 2 "$T/gen.byu" >"$T/s2.json"
python3 "$SAME" "$T/s1.json" "$T/s2.json" >/dev/null &&
	fail "random replacement ignores --seed"

# the counts add up: fetches are the references, gap markers flush
python3 - "$T/bach.json" <<'EOF' || fail "bach sim's totals do not add up"
import json, sys
r = json.load(open(sys.argv[1]))
l1 = r["caches"][0]
assert r["records"] == r["references"] + r["skipped"] + r["flushes"], r
assert sum(l1["fetches"].values()) == r["references"], r
EOF
$BACH sim --json --l1 8k:32:2 "$T/gaps.byu" | grep -q '"flushes":4,' ||
	fail "4 gap markers are not 4 flushes"

# the same trace as .byu.gz, on standard input and as a capture directory
$BACH convert -q "$T/gaps.byu" "$T/gaps.byu.gz"
$BACH sim --json --l1 8k:32:2 --l2 64k:32:4 "$T/gaps.byu" >"$T/raw.json"
$BACH sim --json --l1 8k:32:2 --l2 64k:32:4 "$T/gaps.byu.gz" >"$T/gz.json"
same "$T/raw.json" "$T/gz.json"
$BACH sim --json --l1 8k:32:2 --l2 64k:32:4 - <"$T/gaps.byu.gz" >"$T/stdin.json"
same "$T/raw.json" "$T/stdin.json"

# text: one table per cache with the same numbers
$BACH sim --l1i 8k:32:2 --l1d 8k:32:2 --l2 256k:32:4 --tlb 16:4 "$T/gaps.byu" >"$T/text"
$BACH sim --json --l1i 8k:32:2 --l1d 8k:32:2 --l2 256k:32:4 --tlb 16:4 "$T/gaps.byu" >"$T/json"
grep -q '^l1d: 8 KiB, 32-byte lines, 2-way, LRU, write-back, write-allocate$' "$T/text" ||
	fail "text lacks the l1d heading: $(cat "$T/text")"
grep -q '^tlb: 16 entries, 4-way, 4 KiB pages, LRU$' "$T/text" || fail "text lacks the TLB"
python3 - "$T/text" "$T/json" <<'EOF' || fail "text and JSON disagree"
import json, sys
text = open(sys.argv[1]).read().split("\n\n")
js = json.load(open(sys.argv[2]))
for block, c in zip(text[1:], js["caches"]):
    rows = {l[:21].strip(): l[21:].split() for l in block.splitlines()[1:]}
    assert block.startswith(c["name"] + ":"), block
    k = c["fetches"]
    assert rows["demand fetches"] == [str(sum(k.values())), str(k["ifetch"]), str(k["read"]), str(k["write"])], rows
    m = c["misses"]
    assert rows["demand misses"][0] == str(sum(m.values())), rows
    assert rows["bytes from memory"] == [str(c["bytes_from_memory"])], rows
    assert rows["bytes to memory"] == [str(c["bytes_to_memory"])], rows
EOF

# bad configurations: exit 2, the option named
bad() {
	msg=$1
	shift
	expect_status 2 $BACH sim "$@" "$T/gen.byu"
	expect_err "$msg"
}
bad "--l1d: SIZE 3000 is not a multiple of LINE 32" --l1i 8k:32:2 --l1d 3000:32:4
bad "--l1: LINE 48 is not a power of two" --l1 16k:48:4
bad "--l1: LINE 2 is not a power of two from 4 to 65536 bytes" --l1 16k:2:4
bad "--l1: SIZE 16384 is not a multiple of LINE x ASSOC (96)" --l1 16k:32:3
bad "--l2: ASSOC 8 x LINE 32 is larger than SIZE 128" --l1 1k:32:1 --l2 128:32:8
bad "--l1: SIZE 16 is smaller than LINE 32" --l1 16:32:1
bad "--l1: two replacement policies ('fifo')" --l1 16k:32:4:lru:fifo
bad "--l1: two write policies ('wt')" --l1 16k:32:4:wb:wt
bad "--l1: unknown POLICY 'plru'" --l1 16k:32:4:plru
bad "--l1: unknown POLICY ''" --l1 16k:32:4:
bad "--l1: '16k:32' is not SIZE:LINE:ASSOC" --l1 16k:32
bad "--l1: SIZE '16q' is not a size" --l1 16q:32:4
bad "--l1: ASSOC 'four' is not a number of ways or 'full'" --l1 16k:32:four
bad "--l1: SIZE 2147483648 holds 67108864 lines, more than 16777216" --l1 2G:32:full
bad "--tlb: ENTRIES 65 is not a multiple of ASSOC 4" --l1 8k:32:2 --tlb 65:4
bad "--tlb: '64' is not ENTRIES:ASSOC" --l1 8k:32:2 --tlb 64
bad "--l1i and --l1d go together" --l1i 8k:32:2
bad "--l1 is a unified L1: not with --l1i and --l1d" --l1 8k:32:2 --l1i 8k:32:2 --l1d 8k:32:2
bad "no L1: give --l1 SPEC" --l2 64k:32:4
bad "--l3 needs --l2" --l1 8k:32:2 --l3 1M:64:8
bad "--l2 given twice" --l1 8k:32:2 --l2 64k:32:4 --l2 64k:32:4
bad "--seed: not a number: 'x'" --l1 8k:32:2 --seed x
expect_status 2 $BACH sim --l1 8k:32:2
expect_err "no TRACE given"
expect_status 2 $BACH sim --l1 8k:32:2 "$T/missing.byu"
expect_err "missing.byu"
expect_status 2 $BACH sim --bogus "$T/gen.byu"

# damaged traces: exit 1 with the file and the offset, and no table
head -c 60001 "$T/gen.byu" >"$T/cut.byu"
expect_status 1 $BACH sim --l1 8k:32:2 "$T/cut.byu"
expect_err "cut.byu"
expect_err "offset 60000"
[ -s "$T/out" ] && fail "a damaged trace printed results: $(cat "$T/out")"
$BACH convert -q "$T/gen.byu" "$T/gen.byu.gz"
size=$(wc -c <"$T/gen.byu.gz")
head -c $((size - 100)) "$T/gen.byu.gz" >"$T/cut.byu.gz"
expect_status 1 $BACH sim --json --l1 8k:32:2 "$T/cut.byu.gz"
expect_err "cut.byu.gz"
: >"$T/empty.byu"
# an empty trace is a valid one (docs/formats.md section 2): no reference
expect_status 0 $BACH sim --json --l1 8k:32:2 "$T/empty.byu"
expect_out '"records":0,"references":0,"skipped":0,"flushes":0'
expect_out '"misses":{"ifetch":0,"read":0,"write":0}'
exit 0
