#!/bin/sh
# bach mrc: the exact curve equals bach sim at every size (two programs
# that share no code for the cache state), sampled curves near the exact
# one, the reuse histogram and working sets against the curve and an
# independent count, output formats, bad options and damaged traces.
. "$TOP/tests/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed: the checks cannot run"
SIZES="1k 2k 4k 8k 16k 64k 256k 1M"
LIST=1k,2k,4k,8k,16k,64k,256k,1M

$BACH gen --records 60000 --seed 21 -o "$T/gen.byu"
python3 "$TOP/tests/helpers/splice.py" "$T/gen.byu" "$T/gaps.byu" 13000

# sim_misses KIND ARGS...: total misses of bach sim's first cache, or the
# references it fetched ("refs")
sim_col() {
	what=$1
	shift
	$BACH sim --json "$@" | python3 -c '
import json, sys
c = json.load(sys.stdin)["caches"][0]
print(sum(c["misses" if sys.argv[1] == "misses" else "fetches"].values()))' "$what"
}

# exact TRACE LINE ASSOC KIND: bach mrc's points against bach sim at each size
exact() {
	trace=$1 line=$2 assoc=$3 kind=$4
	$BACH mrc --csv --line "$line" --sizes "$LIST" --assoc "$assoc" \
		--kind "$kind" "$trace" >"$T/curve.csv" || fail "mrc exited $?"
	for s in $SIZES; do
		spec="$s:$line:$assoc"
		case $kind in
		all) args="--l1 $spec" ;;
		i) args="--l1i $spec --l1d 1k:32:1" ;;
		d) args="--l1d $spec --l1i 1k:32:1" ;;
		esac
		[ "$kind" = d ] && first=1 || first=0
		got=$(awk -F, -v s="$s" '
			function bytes(x) { return x ~ /k$/ ? x * 1024 : x ~ /M$/ ? x * 1048576 : x }
			NR > 1 && $1 == bytes(s) { print $2, $3 }' "$T/curve.csv")
		# --l1d comes second in bach sim's list: take the cache by name
		want=$($BACH sim --json $args "$trace" | python3 -c '
import json, sys
r = json.load(sys.stdin)
c = [c for c in r["caches"] if c["name"] in ("l1", "l1" + sys.argv[1])][0]
print(sum(c["fetches"].values()), sum(c["misses"].values()))' "$([ "$kind" = all ] && echo "" || echo "$kind")")
		[ "$got" = "$want" ] ||
			fail "mrc --line $line --assoc $assoc --kind $kind at $s: refs misses '$got', bach sim says '$want'"
	done
}
exact "$T/gaps.byu" 32 full all
exact "$T/gaps.byu" 32 full i
exact "$T/gaps.byu" 32 full d
exact "$T/gaps.byu" 8 full all
exact "$T/gaps.byu" 64 4 all
exact "$T/gaps.byu" 32 2 d
exact "$T/gen.byu" 32 8 all
# sizes whose set counts are not powers of two
LIST=3k,12k,96k SIZES="3k 12k 96k" exact "$T/gaps.byu" 32 3 all

# the curve never rises with size (LRU's inclusion), and gap markers
# are counted
$BACH mrc --json --min 1k --max 4M "$T/gaps.byu" >"$T/full.json"
python3 - "$T/full.json" <<'EOF' || fail "the exact curve is not a curve: $(cat "$T/full.json")"
import json, sys
r = json.load(open(sys.argv[1]))
m = [p["misses"] for p in r["points"]]
assert r["line"] == 32 and r["assoc"] == "full" and r["sample"] == 1, r
assert r["flushes"] == 4, r
assert len(m) == 13 and all(a >= b for a, b in zip(m, m[1:])) and m[-1] > 0, m
assert all(abs(p["miss_ratio"] - p["misses"] / p["refs"]) < 1e-6 for p in r["points"])
EOF

# sampled: near the exact curve where the cache holds many sampled
# lines, and the same every run
$BACH gen --records 400000 --seed 3 -o "$T/big.byu"
$BACH mrc --json --min 64k --max 8M "$T/big.byu" >"$T/exact.json"
$BACH mrc --json --min 64k --max 8M --sample 0.1 "$T/big.byu" >"$T/s1.json"
$BACH mrc --json --min 64k --max 8M --sample 0.1 "$T/big.byu" >"$T/s2.json"
same "$T/s1.json" "$T/s2.json"
python3 - "$T/exact.json" "$T/s1.json" <<'EOF' || fail "the sampled curve is far from the exact one"
import json, sys
e = json.load(open(sys.argv[1]))["points"]
s = json.load(open(sys.argv[2]))
assert s["sample"] == 0.1
err = max(abs(a["miss_ratio"] - b["miss_ratio"]) for a, b in zip(e, s["points"]))
assert all(a["refs"] == b["refs"] for a, b in zip(e, s["points"]))
print("largest error", err)
assert err <= 0.02, err
EOF
# ... and not the exact curve itself: the test above can fail
cmp -s "$T/exact.json" "$T/s1.json" && fail "the sampled curve is the exact one"

# sizes too small for the sampled lines come from the near stack: at
# 4 lines it samples every line, so 128 bytes to 2 KiB at R = 0.01 are
# exact (evictions, renumbering and gap markers included); from 1 KiB
# it samples 1 line in 8, within 0.01 of the exact curve
for t in big gaps; do
	$BACH mrc --json --sizes 128,1k,2k "$T/$t.byu" >"$T/e.json"
	$BACH mrc --json --sizes 128,1k,2k --sample 0.01 "$T/$t.byu" >"$T/n.json"
	python3 - "$T/e.json" "$T/n.json" <<'EOF' || fail "$t: the near stack is not exact"
import json, sys
e = json.load(open(sys.argv[1]))["points"]
s = json.load(open(sys.argv[2]))["points"]
assert [(a["misses"], a["refs"]) for a in e] == \
       [(b["misses"], b["refs"]) for b in s], (e, s)
EOF
done
$BACH mrc --json --min 1k --max 8k "$T/big.byu" >"$T/e.json"
$BACH mrc --json --min 1k --max 8k --sample 0.01 "$T/big.byu" >"$T/n.json"
python3 - "$T/e.json" "$T/n.json" <<'EOF' || fail "the near stack's estimates are far from the exact curve"
import json, sys
e = json.load(open(sys.argv[1]))["points"]
s = json.load(open(sys.argv[2]))["points"]
err = [abs(a["miss_ratio"] - b["miss_ratio"]) for a, b in zip(e, s)]
print("near stack: errors", err)
assert max(err) <= 0.01 and max(err) > 0, err
EOF

# the reuse histogram adds up to the references and gives the curve:
# at 2^k lines, the misses are the cold ones and distances of 2^k or more
$BACH mrc --reuse --json "$T/gaps.byu" >"$T/reuse.json"
$BACH mrc --json --sizes 32,64,128,1k,32k,1M "$T/gaps.byu" >"$T/pow2.json"
python3 - "$T/reuse.json" "$T/pow2.json" <<'EOF' || fail "the reuse histogram disagrees with the curve"
import json, sys
h = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
b = [x["refs"] for x in h["buckets"]]
assert sum(b) + h["cold"] == h["references"], h
for p in c["points"]:
    lines = p["size"] // 32
    k = lines.bit_length() - 1
    want = h["cold"] + sum(b[k + 1:])
    assert p["misses"] == want, (p, want)
EOF

# working sets: windows cover the trace; lines and pages counted
# independently from bach dump
$BACH mrc --window 7000 --json --line 64 "$T/gaps.byu" >"$T/wss.json"
$BACH dump "$T/gaps.byu" >"$T/dump.txt"
python3 - "$T/wss.json" "$T/dump.txt" <<'EOF' || fail "working sets differ from an independent count"
import json, sys
w = json.load(open(sys.argv[1]))
recs = [l.split() for l in open(sys.argv[2])]
mem = {"I_FETCH", "NC_I_FETCH", "D_READ", "NC_D_READ", "D_WRITE", "WRITE_BACK"}
assert w["window"] == 7000 and w["line"] == 64
assert sum(x["records"] for x in w["windows"]) == len(recs)
for x in w["windows"]:
    part = recs[x["start"]:x["start"] + x["records"]]
    refs = []
    for a, be, t in part:
        if t in mem:
            want = ~int(be, 16) & 0xff
            lo = (want & -want).bit_length() - 1 if want else 0
            refs.append(int(a, 16) + lo)
    assert x["refs"] == len(refs), x
    assert x["lines"] == len({r >> 6 for r in refs}), x
    assert x["pages"] == len({r >> 12 for r in refs}), x
EOF

# formats: text, CSV and JSON carry the same points
$BACH mrc --sizes 4k,64k "$T/gaps.byu" >"$T/text"
$BACH mrc --csv --sizes 4k,64k "$T/gaps.byu" >"$T/csv"
head -n 1 "$T/csv" | grep -qx 'size,refs,misses,miss_ratio' || fail "CSV header: $(head -n 1 "$T/csv")"
awk -F, 'NR == 3 { print $2, $3 }' "$T/csv" >"$T/a"
awk '$1 == 64 && $2 == "KiB" { print $3, $4 }' "$T/text" >"$T/b"
same "$T/a" "$T/b"
$BACH mrc --reuse --csv "$T/gaps.byu" | head -n 2 | tail -n 1 | grep -q '^cold,,' || fail "reuse CSV"
$BACH mrc --window 50000 --csv "$T/gaps.byu" | head -n 1 | grep -qx 'start,records,refs,lines,pages' || fail "window CSV"
$BACH mrc --json --sizes 4k - <"$T/gaps.byu" | grep -q '"points":\[{"size":4096,' || fail "mrc of stdin"

# bad options: exit 2 with the option named
bad() {
	msg=$1
	shift
	expect_status 2 $BACH mrc "$@" "$T/gen.byu"
	expect_err "$msg"
}
bad "--line 12 is not a power of two" --line 12
bad "--line 4 is not a power of two from 8 to 65536" --line 4
bad "--line: 'x' is not a line size" --line x
bad "--sizes: '2k' is not larger than the size before it" --sizes 4k,2k
bad "--sizes: '1k' is not larger than the size before it" --sizes 1k,1k
bad "--sizes: 'lots' is not a size" --sizes 1k,lots
bad "size 1000 is not a multiple of LINE (32)" --sizes 1000
bad "size 4096 is not a multiple of LINE x ASSOC (384)" --sizes 4k --assoc 12
bad "--min/--max: --max 4k is below --min 8k" --min 8k --max 4k
bad "--sizes or --min and --max, not both" --sizes 4k --min 1k
bad "--assoc: '0' is not a number of ways or 'full'" --assoc 0
bad "--kind: 'x' is not i, d or all" --kind x
bad "--sample: '0' is not a rate in (0, 1]" --sample 0
bad "--sample: '1.5' is not a rate in (0, 1]" --sample 1.5
bad "--sample: 'abc' is not a rate in (0, 1]" --sample abc
bad "--sample needs --assoc full" --sample 0.5 --assoc 4
bad "--sample 1e-09 is below one line in 2^24" --sample 0.000000001
bad "--reuse and --window: one at a time" --reuse --window 10
bad "--reuse: reuse distances are fully associative" --reuse --assoc 4
bad "--window: '0' is not a number of records" --window 0
expect_status 2 $BACH mrc
expect_err "no TRACE given"

# the narrower vector paths (lib/cpus.h: BACH_SIMD), on a CPU that has
# the wider: the same curves, and the exact ones bach sim's
for simd in avx2 none; do
	for mode in "" "--sample 0.1" "--sample 0.01 --min 128 --max 2k" \
		"--assoc 4" "--kind d --line 64" "--reuse" "--window 1000"; do
		# shellcheck disable=SC2086 # the mode's words are options
		$BACH mrc --json $mode "$T/gaps.byu" >"$T/wide.json" || fail "mrc $mode"
		# shellcheck disable=SC2086
		BACH_SIMD=$simd $BACH mrc --json $mode "$T/gaps.byu" >"$T/narrow.json" ||
			fail "BACH_SIMD=$simd mrc $mode"
		cmp -s "$T/wide.json" "$T/narrow.json" ||
			fail "BACH_SIMD=$simd mrc $mode: not the curve of the widest path"
	done
	export BACH_SIMD=$simd
	exact "$T/gaps.byu" 32 full all
	unset BACH_SIMD
done

# damaged traces: exit 1, the file and offset named, nothing printed
head -c 6001 "$T/gen.byu" >"$T/cut.byu"
for mode in "" "--reuse" "--window 100" "--sample 0.5"; do
	# shellcheck disable=SC2086
	expect_status 1 $BACH mrc $mode "$T/cut.byu"
	expect_err "cut.byu"
	expect_err "offset 6000"
	[ -s "$T/out" ] && fail "mrc $mode printed a result for a damaged trace"
done
exit 0
