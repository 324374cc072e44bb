# Split runs, for tests/cli/partial.sh, partial_sim.sh, partial_configs.sh and gap_counts.sh (sourced): the
# command CMD with the options STATOPT, its formats "" --json and CSV.

# parts OUTPREFIX TRACE RANGE...: a partial per range, OUTPREFIX.1 ...
parts() {
	pre=$1
	tr=$2
	shift 2
	i=0
	rm -f "$pre".*
	for r in "$@"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		"$BACH" $CMD --range "$r" --partial "$pre.$i" $STATOPT "$tr" 2> "$T/err" ||
			fail "$CMD --range $r --partial: $(cat "$T/err")"
	done
}

# same_as_whole TRACE PREFIX WHAT: merging PREFIX.* prints what $CMD does
same_as_whole() {
	for fmt in "" --json $CSV; do
		# shellcheck disable=SC2086
		"$BACH" $CMD $fmt $STATOPT "$1" > "$T/w.txt" || fail "$CMD $fmt $1"
		"$BACH" merge $fmt "$2".* > "$T/m.txt" 2> "$T/err" || fail "merge $fmt ($3): $(cat "$T/err")"
		cmp -s "$T/w.txt" "$T/m.txt" ||
			fail "merge $fmt ($3) differs from $CMD $STATOPT: $(diff "$T/w.txt" "$T/m.txt" | head -5)"
	done
}

# split_capture [RECORDS]: $C, a capture of RECORDS (300000) with gap
# markers in several segments (of bachd's default, .byu.zst)
split_capture() {
	mkdir "$T/caps"
	"$BACH" capture --driver fake --option records="${1:-300000}" --option drop_every=7 \
		--option overflow_every=5:300 --policy drop --set rotate_mb=1 \
		--output "$T/caps" 2> "$T/log" || fail "capture: $(cat "$T/log")"
	C=$(ls -d "$T"/caps/2*Z*)
	[ "$(ls "$C"/seg-*.byu.zst | wc -l)" -gt 1 ] || fail "one segment only"
}

# gen_traces RECORDS: $T/g.byu.gz, RECORDS of bach gen, and as $T/g.byu
gen_traces() {
	"$BACH" gen --records "$1" -o "$T/g.byu.gz" 2> "$T/err" || fail "gen"
	"$BACH" convert "$T/g.byu.gz" "$T/g.byu" 2> "$T/err" || fail "convert: $(cat "$T/err")"
}

# damaged_member GZ: $T/d.byu.gz, GZ with its second member damaged
damaged_member() {
	cp "$1" "$T/d.byu.gz"
	"$BACH" index "$T/d.byu.gz" > /dev/null 2>&1 || true
	off=$(od -An -t u8 -j 24 -N8 "$T/d.byu.gz.gzi")
	rm -f "$T/d.byu.gz.gzi"
	printf '\377\377\377\377\377\377\377\377' |
		dd of="$T/d.byu.gz" bs=1 seek=$((off + 100)) conv=notrunc 2> /dev/null
}

# fails_alike ARGS...: bach ARGS on $T/d.byu.gz and on a chunk of it
# inside the damage fail alike, exit 1 with the same message, and the
# chunk writes no partial
fails_alike() {
	rm -f "$T/dp"
	set +e
	"$BACH" "$@" "$T/d.byu.gz" > /dev/null 2> "$T/e1"
	w=$?
	"$BACH" "$@" --range 5000:30000 --partial "$T/dp" "$T/d.byu.gz" > /dev/null 2> "$T/e2"
	p=$?
	set -e
	[ $w -eq 1 ] && [ $p -eq 1 ] || fail "damaged member: $1 exit $w, the chunk's $p"
	cmp -s "$T/e1" "$T/e2" || fail "damaged member, $1: $(cat "$T/e1") vs $(cat "$T/e2")"
	[ ! -e "$T/dp" ] || fail "$1: a partial written for a damaged chunk"
}

# tree_merges K WHOLE: for K random cuts A, B of $C, the partials of
# 0:A A:B B: merged ((1 2) 3), (1 (2 3)) and at once are all WHOLE
tree_merges() {
	awk -v k="$1" 'BEGIN { srand(23); for (i = 0; i < k; i++) { a = int(rand() * 254862); b = int(rand() * 254862); if (a > b) { t = a; a = b; b = t } print a, b } }' > "$T/splits"
	while read -r a b; do
		parts "$T/a" "$C" "0:$a" "$a:$b" "$b:"
		"$BACH" merge --partial "$T/l" "$T/a.1" "$T/a.2" || fail "merge --partial (1 2)"
		"$BACH" merge --partial "$T/r" "$T/a.2" "$T/a.3" || fail "merge --partial (2 3)"
		"$BACH" merge --partial "$T/all" "$T/a.3" "$T/a.1" "$T/a.2" || fail "merge --partial (1 2 3)"
		"$BACH" merge --partial "$T/lt" "$T/l" "$T/a.3" || fail "merge ((1 2) 3)"
		"$BACH" merge --partial "$T/rt" "$T/a.1" "$T/r" || fail "merge (1 (2 3))"
		same "$T/lt" "$T/all"
		same "$T/rt" "$T/all"
		same "$T/all" "$2"
	done < "$T/splits"
}

# gap_and_segment: $g, the position of $C's third gap marker, and $s2, the
# start of its second segment, with room before them for hand_cuts
gap_and_segment() {
	g=$(grep '"event":"gap"' "$C/manifest.jsonl" | sed -n 3p | sed 's/.*"at":\([0-9]*\).*/\1/')
	s2=$(($(grep '"event":"segment"' "$C/manifest.jsonl" | head -n 1 | sed 's/.*"records":\([0-9]*\).*/\1/')))
	[ "$g" -gt 10880 ] && [ "$s2" -gt $((g + 1)) ] || fail "gap at $g, segment 2 at $s2: no room for the cuts"
	"$BACH" dump --range "$g:$((g + 1))" "$C" | grep -q GAP || fail "no gap marker at $g"
}

# hand_cuts PREFIX: partials of $C cut at a member start and inside a
# member, an empty chunk, at a gap marker and just after one, a segment
# boundary, and a chunk of a gap marker only, each set merged to the
# whole run (gap_and_segment first)
hand_cuts() {
	parts "$1" "$C" 0:10880 10880:10880 10880:12345 12345:$g $g:$((g + 1)) \
		$((g + 1)):$s2 $s2:
	same_as_whole "$C" "$1" "cuts by hand"
	parts "$1" "$C" 0:$g $g:$((g + 1)) $((g + 1)):
	same_as_whole "$C" "$1" "a chunk of a gap marker only"
}

# random_trees SEED: the partials of bach plan's 16 chunks of $C merged
# as two random trees of bach merge --partial (groupings of 2 to 4
# neighbours), each root byte for byte the partial of the whole range
random_trees() {
	# shellcheck disable=SC2046
	parts "$T/t" "$C" $("$BACH" plan --chunks 16 "$C" | cut -d' ' -f1)
	total=$("$BACH" plan --chunks 1 "$C" | sed 's/^0:\([0-9]*\) .*/\1/')
	# shellcheck disable=SC2086
	"$BACH" $CMD $STATOPT --partial "$T/whole" --range "0:$total" "$C" ||
		fail "$CMD --partial 0:$total"
	python3 - "$BACH" "$T" 16 "$T/whole" "$1" << 'PY' || fail "a random tree of merges differs from the whole"
import random, subprocess, sys
bach, t, n, whole = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
random.seed(int(sys.argv[5]))
for trial in range(2):
    nodes = [f"{t}/t.{i}" for i in range(1, n + 1)]
    k = 0
    while len(nodes) > 1:
        i = random.randrange(len(nodes) - 1)
        j = random.randint(i + 2, min(len(nodes), i + 4))
        k += 1
        out = f"{t}/tree.{trial}.{k}"
        subprocess.run([bach, "merge", "--partial", out] + nodes[i:j], check=True)
        nodes[i:j] = [out]
    a, b = open(nodes[0]).read(), open(whole).read()
    assert a == b, (a[:400], b[:400])
PY
}

# split_trees K SEED: $T/whole, the partial of $CMD $STATOPT over all of
# $C, is what bach merge --partial gives for K random splits merged as
# trees (tree_merges K) and for two random trees of merges over bach
# plan's 16 chunks (random_trees SEED)
split_trees() {
	# shellcheck disable=SC2086
	"$BACH" $CMD $STATOPT --partial "$T/whole" --range 0: "$C" ||
		fail "$CMD $STATOPT --partial whole"
	tree_merges "$1" "$T/whole"
	random_trees "$2"
}
