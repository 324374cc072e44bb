# Split sweeps: bach sim --configs FILE --range A:B --partial writes one
# partial holding every configuration's, and bach merge prints byte for
# byte what the unsplit bach sim --configs FILE prints, as text and --json,
# for 1, 2, 3, 7 and 16 chunks of bach plan and a FILE of LRU, FIFO and
# random caches, write-back and write-through, L2, L3 and TLBs; for cuts at
# a gap marker and just after one, a segment boundary, a member start and
# inside a member, an empty chunk and a chunk of a gap marker only. Each
# configuration's entry is what bach sim with the line's options writes
# for the range alone; a tree of merges is one merge (random groupings)
# and the merged partial is the whole range's. Refusals: another FILE's
# contents, a plain bach sim partial, overlapping ranges or a hole (exit 2
# naming the files), a trace that changed (exit 2 naming it); a damaged
# member in a chunk fails as the unsplit run does.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/partial_lib.sh"

CMD=sim
CSV=
split_capture
gen_traces 150000

cat > "$T/sweep.txt" << 'EOF'
# a sweep: one configuration a line
--l1 8k:32:2
--l1i 8k:32:2 --l1d 8k:32:4 --l2 64k:32:8 --tlb 16:4

--l1 4k:16:4:fifo:wt:nwa --l2 32k:64:8:random --seed 7   # FIFO over random
--l1i 1k:32:full:random --l1d 3k:32:3:lru:wb:nwa --l2 16k:8:2:wt --l3 64k:64:4:nwa --tlb 8:full
--l1=2k:32:64:random --l2 8k:16:4:fifo:wt --seed=3
--l1 4k:16:4 --l2 32k:64:8:random --tlb 16:4
--l1 8k:32:2 --tlb 4:full   # line 2's L1, simulated once
--l1=2k:32:64:random --seed=3 --tlb 4:2
--l1 4k:16:4 --l2 16k:32:2:fifo   # line 8's L1 sends to this L2
EOF
STATOPT="--configs $T/sweep.txt"

for tr in "$C" "$T/g.byu.gz" "$T/g.byu"; do
	for n in 1 2 3 7 16; do
		# shellcheck disable=SC2046
		parts "$T/p" "$tr" $("$BACH" plan --chunks $n "$tr" | cut -d' ' -f1)
		same_as_whole "$tr" "$T/p" "$n chunks of $tr"
	done
done

# each configuration's entry is bach sim's own partial of the range: the
# line's options, and the state
"$BACH" sim $STATOPT --range 20000:90000 --partial "$T/sw" "$C" || fail "sweep 20000:90000"
i=0
grep -v '^ *\(#\|$\)' "$T/sweep.txt" | sed 's/#.*//' | while read -r line; do
	# shellcheck disable=SC2086
	"$BACH" sim $line --range 20000:90000 --partial "$T/one.$i" "$C" || fail "sim $line"
	i=$((i + 1))
done
python3 - "$T/sw" "$T/one" << 'PY' || fail "a sweep's partial is not its lines' partials"
import json, sys
head, data = [json.loads(l) for l in open(sys.argv[1])]
lines = head["options"]["configs"]
assert [l["line"] for l in lines] == [2, 3, 5, 6, 7, 8, 9, 10, 11], lines
assert lines[2]["text"] == "--l1 4k:16:4:fifo:wt:nwa --l2 32k:64:8:random --seed 7"
assert head["configs_file"].endswith("/sweep.txt"), head
assert len(data["configs"]) == 9
for i, (l, d) in enumerate(zip(lines, data["configs"])):
    h1, d1 = [json.loads(x) for x in open("%s.%d" % (sys.argv[2], i))]
    assert l["options"] == h1["options"], (i, l, h1["options"])
    assert d == d1, i
    for k in ("trace", "paths", "start", "end", "records", "range_crc",
              "bach", "command", "format", "version"):
        assert head[k] == h1[k], (i, k)
PY
# the state does not depend on the threads
"$BACH" sim $STATOPT --threads 1 --range 20000:90000 --partial "$T/sw1" "$C" || fail "--threads 1"
same "$T/sw" "$T/sw1"

# cuts by hand (partial_sim.sh's)
gap_and_segment
hand_cuts "$T/h"
# a range merged is sim --configs --range over it
parts "$T/h" "$C" 5000:9000 9000:$g $g:$((g + 20000))
"$BACH" merge --json "$T"/h.* > "$T/m.txt" || fail "merge of 5000:$((g + 20000))"
# shellcheck disable=SC2086
"$BACH" sim --json $STATOPT --range 5000:$((g + 20000)) "$C" | cmp -s - "$T/m.txt" ||
	fail "merged 5000:$((g + 20000)) differs from sim --configs --range"

# the command line's options hold for every line, filters too
STATOPT="--configs $T/sweep.txt --type fetch,read --addr 0x100000-0x7fffffff"
parts "$T/f" "$C" 0:5000 5000:$g $g:$((g + 7)) $((g + 7)):
same_as_whole "$C" "$T/f" "filtered"
STATOPT="--configs $T/sweep.txt"

# a tree of merges is one merge, and the partial of the whole range;
# random trees over 16 chunks
split_trees 2 11

# refusals, exit 2 naming the files: another FILE's contents, a plain
# bach sim partial, overlapping ranges, a hole
parts "$T/x" "$C" 0:1000 1000:2000 2000:
sed 's/--l2 64k:32:8/--l2 64k:32:4/' "$T/sweep.txt" > "$T/other.txt"
"$BACH" sim --configs "$T/other.txt" --range 1000:2000 --partial "$T/o" "$C" || fail "sim other configs"
expect_status 2 "$BACH" merge "$T/x.1" "$T/o" "$T/x.3"
expect_err "$T/x.1 and $T/o: partials with different options"
# the same lines in a file of another name merge (the first names it)
grep -v '^#' "$T/sweep.txt" > "$T/copy.txt"
sed -i '1i # the same lines' "$T/copy.txt"
"$BACH" sim --configs "$T/copy.txt" --range 1000:2000 --partial "$T/o" "$C" || fail "sim copy.txt"
"$BACH" merge "$T/x.1" "$T/o" "$T/x.3" > "$T/m.txt" || fail "merge with copy.txt"
"$BACH" sim $STATOPT "$C" | cmp -s - "$T/m.txt" || fail "merge with copy.txt differs"
"$BACH" sim --l1 8k:32:2 --range 1000:2000 --partial "$T/o" "$C" || fail "sim --l1"
expect_status 2 "$BACH" merge "$T/x.1" "$T/o" "$T/x.3"
expect_err "$T/x.1 and $T/o: partials with different options"
"$BACH" sim $STATOPT --range 500:2000 --partial "$T/o" "$C" || fail "sim 500:2000"
expect_status 2 "$BACH" merge "$T/x.1" "$T/o" "$T/x.3"
expect_err "$T/x.1 and $T/o: their ranges overlap"
expect_status 2 "$BACH" merge "$T/x.1" "$T/x.3"
expect_err "$T/x.1 and $T/x.3: their ranges leave a hole"
# --partial FILE over the configurations' FILE: refused, FILE kept
cp "$T/sweep.txt" "$T/keep.txt"
expect_status 2 "$BACH" sim --configs "$T/keep.txt" --range 0:10 --partial "$T/keep.txt" "$C"
expect_err "$T/keep.txt: the same file as the input $T/keep.txt"
same "$T/keep.txt" "$T/sweep.txt"
# a partial not of its lines: exit 1 naming it
sed 's/"state":"[^"]*"/"state":"AAAAAA=="/' "$T/x.2" > "$T/bad"
expect_status 1 "$BACH" merge "$T/x.1" "$T/bad" "$T/x.3"
expect_err "$T/bad: line 2: cache"
python3 - "$T/x.2" "$T/bad" << 'PY'
import json, sys
head, data = [json.loads(l) for l in open(sys.argv[1])]
data["configs"].pop()
with open(sys.argv[2], "w") as f:
    for o in (head, data):
        f.write(json.dumps(o, sort_keys=True, separators=(",", ":")) + "\n")
PY
expect_status 1 "$BACH" merge "$T/x.1" "$T/bad" "$T/x.3"
expect_err "$T/bad: line 2: \"configs\" not one state per configuration"

# the merge reads each chunk's start again: the trace must be the one
cp "$T/g.byu" "$T/m.byu"
parts "$T/y" "$T/m.byu" 0:70000 70000:
"$BACH" merge "$T"/y.* > /dev/null || fail "merge of m.byu"
head -c 600000 "$T/g.byu" >> "$T/m.byu"
expect_status 2 "$BACH" merge "$T"/y.*
expect_err "$T/m.byu: not the trace $T/y.2 was made from"

# a damaged member inside a chunk fails as the unsplit run does
damaged_member "$T/g.byu.gz"
fails_alike sim --configs "$T/sweep.txt"
echo ok
