# bachd killed with SIGKILL at ten moments: the next start recovers the
# unfinished segment (cut to its last complete block, closed, recorded in
# the manifest) and closes the capture (an "ended" event with state
# recovered, even when no segment was unfinished), and what is kept is
# exactly the start of the stream.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"
helper crc32
mkdir "$T/out"

# the frames of a .byu.zst, read by zstd's format documents alone
ZF="python3 $TOP/tests/helpers/zstd_frames.py"

# seg_records FILE: records in a segment
seg_records() {
	case $1 in
	*.gz) zcat "$1" | wc -c | awk '{ print $1 / 6 }' ;;
	*.zst) zstd -dcq "$1" | wc -c | awk '{ print $1 / 6 }' ;;
	*) wc -c < "$1" | awk '{ print int($1 / 6) }' ;;
	esac
}
# le16 FILE OFFSET: the little-endian 16-bit value at OFFSET
le16() { od -An -tu2 -j "$2" -N2 "$1" | tr -d ' '; }
# first2 FILE OFFSET: the two bytes at OFFSET, in hex
first2() { od -An -tx1 -j "$2" -N2 "$1" | tr -d ' '; }

# check_recovered OLD NEW: NEW is OLD (a copy of the .part as the crash
# left it) cut to its last complete block, and closed
check_recovered() {
	old=$1 new=$2
	osz=$(wc -c < "$old") nsz=$(wc -c < "$new")
	case $new in
	*.gz)
		# every complete member kept, then the EOF block
		k=$((nsz - 28))
		[ "$k" -ge 0 ] || fail "$new: $nsz bytes, no room for the EOF block"
		cmp -s -n "$k" "$old" "$new" || fail "$new: not the start of the unfinished segment"
		tail -c 28 "$new" | cmp -s - "$T/eof28" || fail "$new: does not end in the EOF block"
		# the EOF block was written before the crash: kept as it was
		cmp -s -n "$nsz" "$old" "$new" && return 0
		if [ "$k" -lt "$osz" ] && [ "$(first2 "$old" "$k")" = 1f8b ] &&
			[ $((k + 18)) -le "$osz" ]; then
			b=$(($(le16 "$old" $((k + 16))) + 1))
			[ $((k + b)) -gt "$osz" ] ||
				fail "$new: cut at $k, but a whole member of $b bytes followed ($osz bytes were there)"
		fi
		;;
	*.zst)
		# every whole frame kept (RFC 8878), then the seek table of
		# those (docs/formats.md section 10), which zstd itself checks
		tab=$($ZF table "$new") || fail "$new: $tab"
		set -- $tab # frames, table bytes, their compressed, decompressed sizes
		k=$((nsz - $2))
		[ "$3" -eq "$k" ] || fail "$new: the seek table's frames are $3 bytes, $k precede it"
		cmp -s -n "$k" "$old" "$new" || fail "$new: not the start of the unfinished segment"
		nf=$1
		set -- $($ZF whole "$old")
		[ "$1" -eq "$k" ] && [ "$2" -eq "$nf" ] ||
			fail "$new: $nf frames, $k bytes kept, but the unfinished segment had $2 whole frames, $1 bytes ($osz bytes were there)"
		zstd -q -t "$new" || fail "$new: zstd -t rejects it"
		;;
	*)
		[ "$nsz" -eq $((osz - osz % 6)) ] || fail "$new: $nsz bytes kept of $osz"
		cmp -s -n "$nsz" "$old" "$new" || fail "$new: not the start of the unfinished segment"
		;;
	esac
}

# nothing_whole PART: the unfinished segment held no whole record (a raw
# one under 6 bytes; a gzip one whose first member is not complete; a
# zstd one whose first frame is not)
nothing_whole() {
	sz=$(wc -c < "$1")
	case $1 in
	*.gz.part)
		[ "$sz" -lt 18 ] || [ "$(first2 "$1" 0)" != 1f8b ] ||
			[ $(($(le16 "$1" 16) + 1)) -gt "$sz" ] ||
			{ [ $(($(le16 "$1" 16) + 1)) -eq 28 ] && cmp -s -n 28 "$1" "$T/eof28"; } ;;
	*.zst.part) [ "$($ZF whole "$1" | cut -d' ' -f2)" -eq 0 ] ;;
	*) [ "$sz" -lt 6 ] ;;
	esac
}
# the 28-byte BGZF EOF block: a member with no records
printf '\037\213\010\004\000\000\000\000\000\377\006\000\102\103\002\000\033\000\003\000\000\000\000\000\000\000\000\000' > "$T/eof28"

# -- ten kills at deterministic pseudo-random moments ------------------------
recovered=0
i=1
while [ "$i" -le 10 ]; do
	delay=0.$(((i * 37 + 11) % 9 + 1))
	# raw, the default .byu.zst, and twice .byu.gz (its members and the
	# .gzi that htslib's bgzip makes: compressor = record)
	# .byu.zst in frames of one 64 KiB block: the default 8 MiB frames
	# hold more than these kills leave in a .part (nothing whole, removed:
	# zstd.sh crashes a capture of the default frames), and what is tested
	# here is the cut at the last whole frame
	mode="--set zstd_frame_kb=64"
	[ $((i % 2)) -eq 0 ] && mode=--no-compress
	[ $((i % 4)) -eq 3 ] && mode="--set compressor=record"
	before=$(ncaps "$T/out")
	bg "$BACHD" --driver fake --option seed=8 --option rate=3000000 $mode \
		--set rotate_mb=8 --set ring_mb=16 --output "$T/out" 2> "$T/a.log"
	P=$BGPID
	wait_until 20 "capture $i" sh -c "[ \$(ls -d '$T/out'/2*Z* | wc -l) -gt $before ]"
	A=$(capdir "$T/out")
	wait_until 20 "the first segment of capture $i" sh -c "ls '$A' | grep -q '^seg-000001'"
	sleep "$delay"
	kill -KILL "$P"
	reap "$P"
	[ "$RC" -eq 137 ] || fail "kill $i: bachd exited $RC before the kill: $(cat "$T/a.log")"
	# the unfinished segment as the crash left it
	rm -rf "$T/crash"
	mkdir "$T/crash"
	parts=$(ls "$A" | grep -c '\.part$' || true)
	[ "$parts" -le 1 ] || fail "kill $i: $parts unfinished segments"
	[ "$parts" -eq 0 ] || cp "$A"/*.part "$T/crash/"
	# the next start recovers it, and then captures as ever
	"$BACHD" --driver fake --option records=1000 --set ring_mb=4 --output "$T/out" \
		2> "$T/b.log" || fail "kill $i: the start after the crash exited $?: $(cat "$T/b.log")"
	if [ "$parts" -eq 1 ]; then
		recovered=$((recovered + 1))
		grep -q 'recovered 1 capture left unfinished by an earlier run' "$T/b.log" ||
			fail "kill $i: recovery not logged: $(cat "$T/b.log")"
		part=$(ls "$T/crash")
		seg=${part%.part}
		ev=$(grep "\"event\":\"segment\",\"name\":\"$seg\"" "$A/manifest.jsonl") ||
			fail "kill $i: no segment event for $seg"
		echo "$ev" | grep -q '"recovered":true' || fail "kill $i: $ev"
		if echo "$ev" | grep -q '"removed":true'; then
			# allowed only when no whole record was there
			[ -e "$A/$seg" ] && fail "kill $i: $ev, but $seg is there"
			nothing_whole "$T/crash/$part" || fail "kill $i: $seg was removed, but held whole records"
			echo "kill $i after ${delay}s${mode:+ ($mode)}: $part of $(wc -c < "$T/crash/$part") bytes: nothing whole, removed"
		else
			[ -f "$A/$seg" ] || fail "kill $i: $seg not there after recovery: $(ls "$A")"
			check_recovered "$T/crash/$part" "$A/$seg"
			[ "$(echo "$ev" | sed 's/.*"records":\([0-9]*\).*/\1/')" -eq "$(seg_records "$A/$seg")" ] ||
				fail "kill $i: $ev, but the file holds $(seg_records "$A/$seg") records"
			[ "$(echo "$ev" | sed 's/.*"bytes":\([0-9]*\).*/\1/')" -eq "$(wc -c < "$A/$seg")" ] ||
				fail "kill $i: $ev, but the file has $(wc -c < "$A/$seg") bytes"
			[ "$(echo "$ev" | sed 's/.*"crc32":"\([0-9a-f]*\)".*/\1/')" = "$("$T/crc32" "$A/$seg" | cut -d' ' -f1)" ] ||
				fail "kill $i: the CRC of $seg is not the manifest's"
			echo "kill $i after ${delay}s${mode:+ ($mode)}: $part of $(wc -c < "$T/crash/$part") bytes recovered as $(wc -c < "$A/$seg") bytes"
		fi
		tail -n 1 "$A/manifest.jsonl" | grep -q '"event":"ended","state":"recovered","segments_recovered":1' ||
			fail "kill $i: no recovered ended event: $(tail -n 1 "$A/manifest.jsonl")"
	else
		echo "kill $i: no unfinished segment at that moment (between two segments)"
		grep -q 'recovered 1 capture left unfinished by an earlier run' "$T/b.log" ||
			fail "kill $i: the capture was not closed: $(cat "$T/b.log")"
		# a kill between a segment's rename and its manifest line leaves
		# a closed segment the manifest does not name: recovery names it
		# (orphan), and counts it
		if grep -q '"orphan":true' "$A/manifest.jsonl"; then
			n=1
			echo "kill $i: the last segment was closed but not yet named: named as an orphan"
		else
			n=0
		fi
		tail -n 1 "$A/manifest.jsonl" | grep -q "\"event\":\"ended\",\"state\":\"recovered\",\"segments_recovered\":$n" ||
			fail "kill $i: no recovered ended event with $n segments: $(tail -n 1 "$A/manifest.jsonl")"
	fi
	# every closed segment is named in the manifest, once
	for f in "$A"/seg-*; do
		[ -e "$f" ] || continue # none: a .part with nothing whole, removed
		case $f in *.gzi) continue ;; esac # an index, beside its segment
		[ "$(grep -c "\"event\":\"segment\",\"name\":\"${f##*/}\"" "$A/manifest.jsonl")" -eq 1 ] ||
			fail "kill $i: ${f##*/} is not named once in the manifest"
	done
	ls "$A" | grep -q '\.part$' && fail "kill $i: .part left after recovery"
	# the segments that have records verify (an empty raw one: see below)
	for f in "$A"/seg-*; do
		case $f in *.gzi) continue ;; esac
		[ -s "$f" ] || continue # none, or an empty raw one
		"$BACH" verify -q "$f" > "$T/v" 2>&1 || fail "kill $i: $f does not verify: $(cat "$T/v")"
		# and each .byu.gz has its index, the one htslib's bgzip makes
		case $f in *.byu.gz) ;; *) continue ;; esac
		[ -s "$f.gzi" ] || fail "kill $i: no index for $f: $(ls "$A")"
		command -v bgzip > /dev/null || continue
		cp "$f" "$T/ix.gz" && rm -f "$T/ix.gz.gzi" && bgzip -r "$T/ix.gz"
		same "$f.gzi" "$T/ix.gz.gzi"
	done
	# all of them together: the start of bach gen's stream, nothing else
	records "$A" "$T/a.byu"
	is_gen_prefix "$T/a.byu" 8 || fail "kill $i: the records kept are not the start of bach gen's"
	# the capture after it is whole
	B=$(capdir "$T/out")
	check_closed "$B"
	[ "$(ended "$B" written)" = 1000 ] || fail "kill $i: the next capture: $(grep ended "$B/manifest.jsonl")"
	i=$((i + 1))
done
[ "$recovered" -ge 7 ] || fail "only $recovered of 10 kills left an unfinished segment"
# recovery happens once: no capture is ended twice
for c in "$T/out"/2*Z*; do
	[ "$(evcount "$c" ended)" -le 1 ] || fail "$c: $(evcount "$c" ended) ended events"
done

# -- a timed capture killed while its third segment was written
# (docs/formats.md 3.2): its unfinished sidecar is recovered up to its last
# whole member, cut (or filled without a time) to the records its segment
# kept, and named in the segment event; the capture reads with --time and
# verifies. Oracles: Python's zlib (tests/helpers/sidecar.py) and the fake
# board's clocks (record k at bus clock 2k: nothing is lost here).
SC="python3 $TOP/tests/helpers/sidecar.py"
mkdir "$T/tm"
bg "$BACHD" --driver fake --option seed=8 --option rate=300000 --option timing=1 \
	--set rotate_mb=1 --set ring_mb=8 --set zstd_frame_kb=64 --output "$T/tm" 2> "$T/tm.log"
P=$BGPID
wait_until 30 "whole members in the third sidecar" sh -c \
	"[ \$(stat -c %s '$T'/tm/2*Z*/seg-000003.time.gz.part 2>/dev/null || echo 0) -gt 300 ]"
kill -KILL "$P"
reap "$P"
A=$(capdir "$T/tm")
cp -rp "$A" "$T/tm2" # for the untimed case below
mkdir "$T/tmcrash"
cp "$A"/*.part "$T/tmcrash/"
"$BACH" recover "$A" 2> "$T/rec.log" || fail "recover: $(cat "$T/rec.log")"
ls "$A" | grep -q '\.part$' && fail "timed: .part left: $(ls "$A")"
: > "$T/want"
for s in "$A"/seg-*.$SEG; do
	n=${s##*/}
	n=${n%.$SEG}
	ev=$(grep "\"event\":\"segment\",\"name\":\"$n.$SEG\"" "$A/manifest.jsonl")
	echo "$ev" | grep -q "\"timing\":\"$n.time.gz\",\"clock_hz\":66666666,\"timing_bytes\":$(wc -c < "$A/$n.time.gz"),\"timing_crc32\":\"$($SC crc32 "$A/$n.time.gz")\"" ||
		fail "timed: $n: the event is not the sidecar's: $ev"
	$SC entries "$A/$n.time.gz" > "$T/got"
	recs=$(echo "$ev" | sed 's/.*"records":\([0-9]*\).*/\1/')
	[ "$(wc -l < "$T/got")" -eq "$recs" ] || fail "timed: $n: $(wc -l < "$T/got") entries for $recs records"
	if [ -e "$T/tmcrash/$n.time.gz.part" ]; then
		# the whole members' entries the crash left, up to the records
		# kept, then none
		$SC entries "$T/tmcrash/$n.time.gz.part" | head -n "$recs" > "$T/w"
		k=$(wc -l < "$T/w")
		[ "$k" -gt 0 ] || fail "timed: no whole member in $n.time.gz.part"
		while [ "$k" -lt "$recs" ]; do echo -; k=$((k + 1)); done >> "$T/w"
		same "$T/got" "$T/w"
		echo "$ev" | grep -q '"recovered":true' || fail "timed: $ev"
		echo "timed: $n.time.gz.part of $(wc -c < "$T/tmcrash/$n.time.gz.part") bytes recovered with $recs entries"
	fi
	cat "$T/got" >> "$T/want"
done
grep -q '"recovered":true' "$A/manifest.jsonl" || fail "timed: nothing was recovered"
# record k at clock 2k, or none
awk '$1 != "-" && $1 != 2 * (NR - 1) { print NR ": " $0; exit 1 }' "$T/want" ||
	fail "timed: the clocks are not the board's"
"$BACH" dump --time "$A" > "$T/d" 2> "$T/err" || fail "timed: dump --time exited $?: $(cat "$T/err")"
awk '{ print $4 }' "$T/d" | cmp -s - "$T/want" || fail "timed: dump --time is not the sidecars' entries"
"$BACH" stat --time "$A" > /dev/null 2> "$T/err" || fail "timed: stat --time: $(cat "$T/err")"
"$BACH" verify "$A" > "$T/v" || fail "timed: does not verify: $(cat "$T/v")"

# nothing whole in the unfinished sidecar: left alone, and its segment
# reads untimed (docs/formats.md 3.2)
part=$(ls "$T/tm2" | grep 'time\.gz\.part$')
[ -n "$part" ] || fail "untimed: no unfinished sidecar in the copy: $(ls "$T/tm2")"
cut_member "$T/tm2/$part" "$T/p" && cat "$T/p" > "$T/tm2/$part"
"$BACH" recover "$T/tm2" 2> "$T/rec.log" || fail "recover: $(cat "$T/rec.log")"
[ -e "$T/tm2/$part" ] || fail "untimed: $part was not left alone"
n=${part%.time.gz.part}
grep "\"name\":\"$n.$SEG\"" "$T/tm2/manifest.jsonl" | grep -q '"timing"' &&
	fail "untimed: the event of $n names a sidecar"
"$BACH" dump --time "$T/tm2" > "$T/d" 2> "$T/err" || fail "untimed: dump --time exited $?: $(cat "$T/err")"
recs=$("$BACH" dump "$T/tm2/$n.$SEG" | wc -l)
[ "$(tail -n "$recs" "$T/d" | awk '$4 != "-"' | wc -l)" -eq 0 ] || fail "untimed: $n has clocks"
[ "$(head -n $(($(wc -l < "$T/d") - recs)) "$T/d" | awk '$4 == "-"' | wc -l)" -eq 0 ] ||
	fail "untimed: the segments before $n lost their clocks"
"$BACH" stat --time "$T/tm2" > /dev/null 2> "$T/err" || fail "untimed: stat --time: $(cat "$T/err")"
"$BACH" verify "$T/tm2" > "$T/v" || fail "untimed: does not verify: $(cat "$T/v")"
grep -qF "$part: unfinished timing sidecar" "$T/v" || fail "untimed: verify does not name $part: $(cat "$T/v")"

# -- known trouble: checks that run last, each reported ----------------------
# what the writer has taken reaches the disk: a crash loses at most the
# unfinished block (docs/design.md section 4), not a megabyte of buffered members
mkdir "$T/dur"
bg "$BACHD" --driver fake --option seed=8 --option rate=400000 --set ring_mb=8 \
	--output "$T/dur" --control-socket "$T/dur.sock" 2> "$T/dur.log"
P=$BGPID
wait_until 20 "the control socket" test -S "$T/dur.sock"
wait_until 30 "300000 records written" sh -c \
	"'$BACH' ctl --socket '$T/dur.sock' status --json > '$T/st' && [ \$(sed -n 's/.*\"written\":\([0-9]*\).*/\1/p' '$T/st') -ge 300000 ]"
w=$(jnum written "$T/st")
kill -KILL "$P"
reap "$P"
"$BACHD" --driver fake --option records=1000 --set ring_mb=4 --output "$T/dur" 2> "$T/b.log" ||
	fail "start after the crash: $(cat "$T/b.log")"
D=$(ls -d "$T/dur"/2*Z* | head -n 1)
records "$D" "$T/dur.byu"
got=$(nrecs "$T/dur.byu")
is_gen_prefix "$T/dur.byu" 8 || fail "durability: not the start of bach gen's stream"
[ $((got * 2)) -ge "$w" ] ||
	later "a crash lost $((w - got)) of $w records the writer had taken: only $got survived (finished members wait in memory, segio.c)"

# a raw segment killed before its first write is recovered as an empty
# file, which bach verify calls damage
mkdir "$T/empty"
bg "$BACHD" --driver fake --option seed=8 --option rate=20000 --no-compress \
	--set ring_mb=4 --output "$T/empty" 2> "$T/e.log"
P=$BGPID
wait_until 20 "the first segment" sh -c "ls '$T/empty'/2*Z*/seg-000001.byu.part"
kill -KILL "$P"
reap "$P"
"$BACHD" --driver fake --option records=1000 --set ring_mb=4 --output "$T/empty" 2> "$T/b.log" ||
	fail "start after the crash: $(cat "$T/b.log")"
E=$(ls -d "$T/empty"/2*Z* | head -n 1)
ls "$E" | grep -q '\.part$' && fail "empty: .part left"
grep -q '"recovered":true' "$E/manifest.jsonl" || fail "empty: not recovered"
"$BACH" verify "$E" > "$T/v" 2>&1 ||
	later "a raw segment recovered with no records does not verify (recover.c keeps a 0-byte .byu): $(grep -v '^verify:' "$T/v" | head -n 1)"
finish
