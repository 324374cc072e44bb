# Split runs (docs/analysis.md section 7): bach plan's ranges, bach stat
# and bach mrc --range A:B --partial, and bach merge printing byte for
# byte what the unsplit command prints, text, --json and --csv (mrc:
# curves fully or set-associative, sampled, and --reuse), for 1, 2, 3, 7
# and 16 chunks
# and for cuts at a member start, inside a member, at a gap marker and just
# after one, at a segment boundary, an empty chunk and a chunk of a gap
# marker only; merging as a tree gives what one merge gives; partials that
# do not belong together are refused, exit 2 naming them; a damaged member
# in a chunk fails as the unsplit run does. Where the cuts may go is
# checked against the manifest and the segments' seek tables as written
# (zstd's seekable format), not against bach.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/partial_lib.sh"

# a capture with gap markers in several segments
split_capture
gen_traces 200000
# frames of 64 KiB, so that plan has frame starts to cut at (the 8 MiB
# default makes this small file one frame)
"$BACH" convert --zstd-frame-kb 64 "$T/g.byu" "$T/g.byu.zst" 2> "$T/err" || fail "convert: $(cat "$T/err")"

CMD=stat
CSV=
STATOPT=
# (a .byu.zst's records and frames from its seek table: before, plan
# took its bytes for raw records, a sixth of them, and so did it for
# bachd's default segments)
for tr in "$C" "$T/g.byu.gz" "$T/g.byu" "$T/g.byu.zst"; do
	for n in 1 2 3 7 16; do
		"$BACH" plan --chunks $n "$tr" > "$T/plan" 2> "$T/err" || fail "plan --chunks $n: $(cat "$T/err")"
		# as many as asked, where there are places enough to cut
		[ "$(wc -l < "$T/plan")" -eq $n ] || fail "plan --chunks $n $tr: $(cat "$T/plan")"
		# shellcheck disable=SC2046
		parts "$T/p" "$tr" $(cut -d' ' -f1 "$T/plan")
		same_as_whole "$tr" "$T/p" "$n chunks of $tr"
	done
done

# zstd's own file has no seek table: damaged to bach (docs/formats.md 10)
zstd -q -c "$T/g.byu" > "$T/plainz.byu.zst"
expect_status 1 "$BACH" plan --chunks 2 "$T/plainz.byu.zst"
expect_err "$T/plainz.byu.zst: missing seek table"

# plan's cuts are where the manifest's gap events, the segments and the
# frames their seek tables list put them, and its chunks cover the trace
# in order
"$BACH" plan --chunks 16 --json "$C" > "$T/plan.json" || fail "plan --json"
python3 - "$C" "$T/plan.json" << 'PY' || fail "plan --json: cuts not where they may go"
import glob, json, os, struct, sys
d, plan = sys.argv[1], json.load(open(sys.argv[2]))
gaps, segs, members, total = set(), set(), set(), 0
for line in open(d + "/manifest.jsonl"):
    e = json.loads(line)
    if e.get("event") == "gap":
        gaps.add(e["at"])
for f in sorted(glob.glob(d + "/seg-*.byu.zst")):
    segs.add(total)
    b = open(f, "rb").read()
    n = struct.unpack("<I", b[-9:-5])[0]
    tab = len(b) - (8 + 12 * n + 9)
    for i in range(n):
        c, u, _ = struct.unpack_from("<III", b, tab + 8 + 12 * i)
        members.add(total)
        total += u // 6
ch = plan["chunks"]
assert plan["records"] == total, (plan["records"], total)
assert ch[0]["start"] == 0 and ch[-1]["end"] == total
kinds = {"gap": gaps, "segment": segs, "member": members}
for a, b in zip(ch, ch[1:]):
    assert a["end"] == b["start"] and a["start"] < a["end"]
    assert b["start"] in kinds[b["cut"]], b
assert any(c["cut"] == "gap" for c in ch), "no cut at a gap marker"
PY

# cuts by hand: a gap marker (at and just after), a segment boundary, a
# member start and the middle of a member, an empty chunk, a chunk of one
# gap marker only
g=$(grep '"event":"gap"' "$C/manifest.jsonl" | sed -n 3p | sed 's/.*"at":\([0-9]*\).*/\1/')
s2=$(($(grep '"event":"segment"' "$C/manifest.jsonl" | head -n 1 | sed 's/.*"records":\([0-9]*\).*/\1/')))
[ "$g" -gt 10880 ] && [ "$s2" -gt $((g + 1)) ] || fail "gap at $g, segment 2 at $s2: no room for the cuts"
"$BACH" dump --range "$g:$((g + 1))" "$C" | grep -q GAP || fail "no gap marker at $g"
parts "$T/h" "$C" 0:10880 10880:10880 10880:12345 12345:$g $g:$((g + 1)) \
	$((g + 1)):$s2 $s2: 
same_as_whole "$C" "$T/h" "cuts by hand"
parts "$T/h" "$C" 0:$g $g:$((g + 1)) $((g + 1)):
same_as_whole "$C" "$T/h" "a chunk of a gap marker only"

# the filters are part of the options, and merge under them too
STATOPT="--type fetch,read --addr 0x100000-0x7fffffff"
parts "$T/f" "$C" 0:5000 5000:$g $g:
same_as_whole "$C" "$T/f" "filtered"
STATOPT=

# bach mrc, fully associative, --assoc N and --sample R (its near stack
# in a ring and in a table): the chunks' first references are replayed
# against the stack (or sets) before them (PARDA); --window N: the
# windows a cut falls in are united from the chunks' sets
CMD=mrc
CSV=--csv
for STATOPT in "" "--reuse" "--line 64 --kind d --sizes 1k,8k,64k,1M" \
	"--assoc 4" "--assoc 8 --line 64 --kind i --sizes 4k,64k,1M" \
	"--sample 0.01 --min 1k --max 1M" "--sample 0.001 --min 32 --max 4k" \
	"--window 10000" "--window 7777 --line 64 --kind d"; do
	trs="$C"
	[ -n "$STATOPT" ] || trs="$C $T/g.byu.gz"
	for tr in $trs; do
		for n in 1 3 7 16; do
			# shellcheck disable=SC2046
			parts "$T/p" "$tr" $("$BACH" plan --chunks $n "$tr" | cut -d' ' -f1)
			same_as_whole "$tr" "$T/p" "mrc $STATOPT, $n chunks of $tr"
		done
	done
	parts "$T/h" "$C" 0:10880 10880:10880 10880:12345 12345:$g $g:$((g + 1)) \
		$((g + 1)):$s2 $s2:
	same_as_whole "$C" "$T/h" "mrc $STATOPT, cuts by hand"
done
STATOPT="--type fetch --addr 0x100000-0x7fffffff"
parts "$T/f" "$C" 0:5000 5000:$g $g:
same_as_whole "$C" "$T/f" "mrc filtered"
STATOPT=
parts "$T/a" "$C" 0:1000 1000:$g $g:
"$BACH" merge --partial "$T/l" "$T/a.1" "$T/a.2" || fail "mrc: merge --partial (1 2)"
"$BACH" merge --partial "$T/all" "$T/a.1" "$T/a.2" "$T/a.3" || fail "mrc: merge --partial (1 2 3)"
"$BACH" merge --partial "$T/lt" "$T/l" "$T/a.3" || fail "mrc: merge ((1 2) 3)"
same "$T/lt" "$T/all"
"$BACH" mrc --range 0: --partial "$T/whole" "$C" || fail "mrc --partial whole"
same "$T/all" "$T/whole"
# what is not split yet says so, and partials of two commands do not mix
expect_status 2 "$BACH" mrc --window 1000 --type fetch --range 0:10 --partial "$T/q" "$C"
expect_err "--partial with --window: not with --type"
# windows are aligned at record 0: a merge must start at a window's start
"$BACH" mrc --window 1000 --range 500:1500 --partial "$T/w1" "$C" || fail "mrc --window 500:1500"
"$BACH" mrc --window 1000 --range 1500:4000 --partial "$T/w2" "$C" || fail "mrc --window 1500:4000"
expect_status 2 "$BACH" merge "$T/w1" "$T/w2"
expect_err "the first range starts at 500"
"$BACH" merge --partial "$T/w12" "$T/w1" "$T/w2" || fail "merge --partial of windows from 500"
"$BACH" mrc --window 1000 --range 0:500 --partial "$T/w0" "$C" || fail "mrc --window 0:500"
"$BACH" merge "$T/w0" "$T/w12" > "$T/m.txt" || fail "merge of windows"
"$BACH" mrc --window 1000 --range 0:4000 "$C" | cmp -s - "$T/m.txt" || fail "merged windows differ from mrc --range 0:4000"
"$BACH" stat --range 1000:$g --partial "$T/st" "$C" || fail "stat 1000:$g"
expect_status 2 "$BACH" merge "$T/a.1" "$T/st" "$T/a.3"
expect_err "$T/a.1 and $T/st: partials of different commands"
CMD=stat
CSV=

# a tree of merges is one merge: associativity over random splits
"$BACH" stat --partial "$T/whole" --range 0: "$C" || fail "stat --partial whole"
tree_merges 6 "$T/whole"

# standard output and input
"$BACH" stat --range 0:1000 --partial - "$C" > "$T/s.1" || fail "--partial -"
"$BACH" stat --range 1000: --partial - "$C" | "$BACH" merge "$T/s.1" - > "$T/m.txt" ||
	fail "merge reading standard input"
"$BACH" stat "$C" | cmp -s - "$T/m.txt" || fail "merge of - differs from stat"

# refusals: exit 2 naming the files
parts "$T/x" "$C" 0:1000 1000:2000 2000:
"$BACH" stat --range 1000:2000 --type fetch --partial "$T/o" "$C" || fail "stat --type"
expect_status 2 "$BACH" merge "$T/x.1" "$T/o" "$T/x.3"
expect_err "$T/x.1 and $T/o: partials with different options"
"$BACH" stat --range 1000:2000 --partial "$T/t" "$T/g.byu.gz" || fail "stat g"
expect_status 2 "$BACH" merge "$T/x.1" "$T/t" "$T/x.3"
expect_err "$T/x.1 and $T/t: partials of different traces"
expect_status 2 "$BACH" merge "$T/x.1" "$T/x.3"
expect_err "$T/x.1 and $T/x.3: their ranges leave a hole"
"$BACH" stat --range 500:1500 --partial "$T/v" "$C" || fail "stat 500:1500"
expect_status 2 "$BACH" merge "$T/x.1" "$T/v" "$T/x.2" "$T/x.3"
expect_err "their ranges overlap"
sed 's/"bach":"[^"]*"/"bach":"0.0.0-other"/' "$T/x.2" > "$T/ver"
expect_status 2 "$BACH" merge "$T/x.1" "$T/ver" "$T/x.3"
expect_err "$T/x.1 and $T/ver: partials of different bach versions"
expect_status 2 "$BACH" stat --partial "$T/q" --time "$C"
expect_status 2 "$BACH" merge --csv "$T/x.1" "$T/x.2" "$T/x.3"
expect_err "bach stat has no --csv"
# not a partial, or one cut short: exit 1 naming it
head -n 1 "$T/x.2" > "$T/cut"
expect_status 1 "$BACH" merge "$T/x.1" "$T/cut" "$T/x.3"
expect_err "$T/cut: not two lines of JSON"
expect_status 1 "$BACH" merge "$T/g.byu"
expect_err "$T/g.byu: "
# an mrc partial's binary section (version 3) cut short, or its count gone
"$BACH" mrc --range 0:5000 --partial "$T/m.1" "$C" || fail "mrc --partial 0:5000"
"$BACH" mrc --range 5000: --partial "$T/m.2" "$C" || fail "mrc --partial 5000:"
head -c -4 "$T/m.1" > "$T/mcut"
expect_status 1 "$BACH" merge "$T/mcut" "$T/m.2"
expect_err "$T/mcut: the binary section after line 2 is $(($(wc -c < "$T/m.1") - 4 - $(head -n 2 "$T/m.1" | wc -c))) bytes, not the header's \"words\""
sed '1s/"words":[0-9]*/"wordz":0/' "$T/m.1" > "$T/mnow"
expect_status 1 "$BACH" merge "$T/mnow" "$T/m.2"
expect_err "$T/mnow: line 1: \"words\" missing or not a whole number"

# a damaged member inside a chunk fails as the unsplit run does
damaged_member "$T/g.byu.gz"
fails_alike stat
fails_alike mrc --assoc 2
echo ok
