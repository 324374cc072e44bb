# Split runs of bach sim (docs/analysis.md section 7): bach sim --range A:B
# --partial and bach merge print byte for byte what the unsplit bach sim
# prints, as text and --json, for 1, 2, 3, 7 and 16 chunks of bach plan
# and for hierarchies of every kind (L1 only; L1i/L1d, L2 and a TLB; FIFO;
# random, hashed and searched; write-through and no-write-allocate; three
# levels; random caches below write-back ones, whose copy-back at the end
# draws on from the last record's draws), filtered too; for cuts at a member start, inside a member, at a
# gap marker and just after one, at a segment boundary, an empty chunk and
# a chunk of a gap marker only. Merging as a tree gives what one merge
# gives (random groupings); the merged partial is the one the whole range
# writes. Refusals: other options (exit 2 naming the files), a trace that
# changed or is gone, or was read from standard input (exit 2 naming it);
# a damaged member in a chunk fails as the unsplit run does.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/partial_lib.sh"

CMD=sim
CSV=
# a capture with gap markers in several segments, and a generated trace
split_capture
gen_traces 150000

for STATOPT in "--l1 8k:32:2" \
	"--l1i 8k:32:2 --l1d 8k:32:4 --l2 64k:32:8 --tlb 16:4" \
	"--l1 4k:16:4:fifo:wt:nwa --l2 32k:64:8:random --seed 7" \
	"--l1i 1k:32:full:random --l1d 3k:32:3:lru:wb:nwa --l2 16k:8:2:wt --l3 64k:64:4:nwa --tlb 8:full" \
	"--l1 2k:32:64:random --l2 8k:16:4:fifo:wt" \
	"--l1 4k:16:4 --l2 32k:64:8:random --l3 64k:64:4:random"; do
	trs="$C"
	[ "$STATOPT" != "--l1 8k:32:2" ] || trs="$C $T/g.byu.gz $T/g.byu"
	for tr in $trs; do
		for n in 1 2 3 7 16; do
			# shellcheck disable=SC2046
			parts "$T/p" "$tr" $("$BACH" plan --chunks $n "$tr" | cut -d' ' -f1)
			same_as_whole "$tr" "$T/p" "$n chunks of $tr"
		done
	done
done

# bach merge has no --csv for sim, as sim has none
expect_status 2 "$BACH" merge --csv "$T"/p.*
expect_err "bach sim has no --csv"

# cuts by hand: a gap marker (at and just after), a segment boundary, a
# member start and the middle of a member, an empty chunk, a chunk of one
# gap marker only
gap_and_segment
for STATOPT in "--l1i 8k:32:2 --l1d 8k:32:4 --l2 64k:32:8 --tlb 16:4" \
	"--l1 4k:16:4:fifo:wt:nwa --l2 32k:64:8:random --seed 7"; do
	hand_cuts "$T/h"
	# a range of the trace, merged, is sim --range over it
	parts "$T/h" "$C" 5000:9000 9000:$g $g:$((g + 20000))
	"$BACH" merge --json "$T"/h.* > "$T/m.txt" || fail "merge of 5000:$((g + 20000))"
	# shellcheck disable=SC2086
	"$BACH" sim --json $STATOPT --range 5000:$((g + 20000)) "$C" | cmp -s - "$T/m.txt" ||
		fail "merged 5000:$((g + 20000)) differs from sim --range"
done

# the filters are part of the options, and random replacement draws by
# the records' positions in the unfiltered trace
STATOPT="--l1 2k:32:64:random --l2 8k:16:4:random --type fetch,read --addr 0x100000-0x7fffffff"
parts "$T/f" "$C" 0:5000 5000:$g $g:$((g + 7)) $((g + 7)):
same_as_whole "$C" "$T/f" "filtered"

# a tree of merges is one merge, and the partial of the whole range:
# associativity over random splits and groupings, and random trees over
# 16 chunks
STATOPT="--l1i 1k:32:full:random --l1d 3k:32:3:lru:wb:nwa --l2 16k:8:2:wt --l3 64k:64:4:nwa --tlb 8:full"
split_trees 4 5

# the state's layout (docs/formats.md section 11), read with Python's
# own base64: per set SET, N, then N pairs TAG, RANK << 1 | DIRTY
python3 - "$T/whole" << 'PY' || fail "the state is not the documented layout"
import base64, json, struct, sys
head, data = [json.loads(l) for l in open(sys.argv[1])]
assert head["command"] == "sim" and head["paths"], head
for name, c in data["caches"].items():
    spec = head["options"]["caches"][name]
    b = base64.b64decode(c["state"], validate=True)
    w = struct.unpack("<%dI" % (len(b) // 4), b)
    nsets = spec["size"] // spec["line"] // spec["assoc"]
    i, last, lines = 0, -1, 0
    while i < len(w):
        s, n = w[i], w[i + 1]
        assert last < s < nsets and 0 < n <= spec["assoc"], (name, s, n)
        tags = w[i + 2:i + 2 + 2 * n:2]
        ranks = sorted(f >> 1 for f in w[i + 3:i + 2 + 2 * n:2])
        assert ranks == list(range(n)), (name, s)
        assert all(t % nsets == s for t in tags), (name, s)
        if spec["write"] == "through":
            assert not any(f & 1 for f in w[i + 3:i + 2 + 2 * n:2])
        last, i, lines = s, i + 2 + 2 * n, lines + n
    assert lines <= spec["size"] // spec["line"]
PY

# refusals: other options, exit 2 naming the files
STATOPT="--l1 8k:32:2 --l2 64k:32:4"
parts "$T/x" "$C" 0:1000 1000:2000 2000:
"$BACH" sim --l1 8k:32:2 --l2 64k:32:8 --range 1000:2000 --partial "$T/o" "$C" || fail "sim other options"
expect_status 2 "$BACH" merge "$T/x.1" "$T/o" "$T/x.3"
expect_err "$T/x.1 and $T/o: partials with different options"
"$BACH" sim $STATOPT --seed 2 --range 1000:2000 --partial "$T/o" "$C" || fail "sim --seed 2"
"$BACH" merge "$T/x.1" "$T/o" "$T/x.3" > /dev/null || fail "--seed is no option without a random cache"
"$BACH" sim --l1 8k:32:2:random --range 0:1000 --partial "$T/o1" "$C" || fail "sim random"
"$BACH" sim --l1 8k:32:2:random --seed 2 --range 1000: --partial "$T/o2" "$C" || fail "sim random --seed 2"
expect_status 2 "$BACH" merge "$T/o1" "$T/o2"
expect_err "$T/o1 and $T/o2: partials with different options"
"$BACH" stat --range 1000:2000 --partial "$T/st" "$C" || fail "stat"
expect_status 2 "$BACH" merge "$T/x.1" "$T/st" "$T/x.3"
expect_err "$T/x.1 and $T/st: partials of different commands"
# a state that does not fit its options: exit 1 naming the partial
sed 's/"state":"[^"]*"/"state":"AAAAAA=="/' "$T/x.2" > "$T/bad"
expect_status 1 "$BACH" merge "$T/x.1" "$T/bad" "$T/x.3"
expect_err "$T/bad: line 2: cache"

# the merge reads the start of each chunk again: the trace a partial names
# must still be the one it was made from
cp "$T/g.byu" "$T/m.byu"
parts "$T/y" "$T/m.byu" 0:70000 70000:
"$BACH" merge "$T"/y.* > "$T/m.txt" || fail "merge of m.byu"
head -c 600000 "$T/g.byu" >> "$T/m.byu"
expect_status 2 "$BACH" merge "$T"/y.*
expect_err "$T/m.byu: not the trace $T/y.2 was made from"
rm "$T/m.byu"
expect_status 2 "$BACH" merge "$T"/y.*
expect_err "$T/m.byu: not the trace $T/y.2 was made from"
# read from standard input, it cannot be read again
"$BACH" sim $STATOPT --range 0:70000 --partial "$T/s.1" - < "$T/g.byu" || fail "sim - 0:70000"
"$BACH" sim $STATOPT --range 70000: --partial "$T/s.2" - < "$T/g.byu" || fail "sim - 70000:"
expect_status 2 "$BACH" merge "$T"/s.*
expect_err "$T/s.2: its trace was read from standard input"

# a damaged member inside a chunk fails as the unsplit run does
damaged_member "$T/g.byu.gz"
# shellcheck disable=SC2086
fails_alike sim $STATOPT
echo ok
