# bach dump, stat, verify and gen through the real binary.
. "$TOP/tests/lib.sh"
G="$GOLDEN/tools"

# gen: deterministic, golden first lines, .gz output is blocked gzip
$BACH gen --records 5000 --seed 7 -o "$T/a.byu"
$BACH gen --records 5000 --seed 7 > "$T/b.byu"
same "$T/a.byu" "$T/b.byu"
[ "$(wc -c < "$T/a.byu")" -eq 30000 ] || fail "gen wrote $(wc -c < "$T/a.byu") bytes"
$BACH gen --records 5000 --seed 7 -o "$T/a.byu.gz"
gzip -dc "$T/a.byu.gz" | cmp -s - "$T/a.byu" || fail "zcat of gen .gz differs"
expect_status 2 $BACH gen --seed 7
expect_err "--records N is required"
expect_status 2 $BACH gen --records many
expect_err "not a count: 'many'"

# dump: the reference text line for every record
$BACH dump "$T/a.byu" > "$T/dump.txt"
[ "$(wc -l < "$T/dump.txt")" -eq 5000 ] || fail "dump printed $(wc -l < "$T/dump.txt") lines"
head -n 40 "$T/dump.txt" > "$T/head.txt"
same "$T/head.txt" "$G/gen-seed7-head40.txt"
# an independent reader: od + awk prints the same reference lines
od -An -v -tx1 -w6 "$T/a.byu" | awk '
BEGIN { split("INVALID INT_ACK INVALID SPECIAL INVALID IO_READ INVALID IO_WRITE I_FETCH NC_I_FETCH INVALID INVALID D_READ NC_D_READ WRITE_BACK D_WRITE", n, " ") }
{ t = index("0123456789abcdef", substr($6, 1, 1)); print $1 $2 $3 $4 " " $5 " " n[t] }' > "$T/od.txt"
same "$T/dump.txt" "$T/od.txt"
$BACH dump "$T/a.byu.gz" | cmp -s - "$T/dump.txt" || fail "dump of .gz differs"
$BACH dump -n 3 --skip 10 "$T/a.byu" > "$T/part.txt"
sed -n 11,13p "$T/dump.txt" | cmp -s - "$T/part.txt" || fail "-n/--skip"
cat "$T/a.byu" | $BACH dump - | cmp -s - "$T/dump.txt" || fail "dump of stdin"
cat "$T/a.byu.gz" | $BACH dump - | cmp -s - "$T/dump.txt" || fail "dump of gzip stdin"
$BACH dump -n 2 --format csv "$T/a.byu" > "$T/csv"
same "$T/csv" "$G/dump-2.csv"
$BACH dump -n 2 --format jsonl "$T/a.byu" > "$T/jsonl"
same "$T/jsonl" "$G/dump-2.jsonl"
expect_status 2 $BACH dump --format xml "$T/a.byu"
expect_err "unknown format 'xml'"
# INVALID records are printed too
printf '\000\020\000\000\000\140\000\020\000\010\000\220' > "$T/inv.byu"
$BACH dump "$T/inv.byu" > "$T/inv.txt"
printf '00100000 00 INVALID\n00100008 00 NC_I_FETCH\n' | cmp -s - "$T/inv.txt" || fail "INVALID dump: $(cat "$T/inv.txt")"

# stat: golden text and JSON
$BACH stat "$T/a.byu" > "$T/stat.txt"
same "$T/stat.txt" "$G/gen-seed7-stat.txt"
$BACH stat --json "$T/a.byu.gz" > "$T/stat.json"
same "$T/stat.json" "$G/gen-seed7-stat.json"
# type counts and distinct lines, counted independently with awk
awk '{ c[$3]++; if ($3 ~ /FETCH|READ$|WRITE_BACK|D_WRITE/ && $3 !~ /^IO/) l[substr($1, 1, 6) int((index("0123456789abcdef", substr($1, 7, 1)) - 1) / 2)]++ }
END { for (k in c) printf "%s %d\n", k, c[k]; n = 0; for (k in l) n++; printf "lines %d\n", n }' "$T/dump.txt" | sort > "$T/awk.txt"
awk '/^  [A-Z_]+ +[0-9]+ / && $2 > 0 { print $1, $2 } /^distinct lines/ { print "lines", $3 }' "$T/stat.txt" | sort > "$T/statcounts.txt"
same "$T/awk.txt" "$T/statcounts.txt"
# several traces count as one
$BACH stat --json "$T/a.byu" "$T/a.byu.gz" | grep -q '"records":10000,' || fail "two traces"

# verify
expect_status 0 $BACH verify "$T/a.byu" "$T/a.byu.gz"
expect_out "a.byu.gz: OK, 5000 records, blocked gzip, 2 members"
expect_out "verify: 2 files, 10000 records, 0 problems"
expect_status 1 $BACH verify "$T/inv.byu"
expect_out "inv.byu: record 0 (byte offset 0): INVALID cycle type"
head -c 29999 "$T/a.byu" > "$T/trunc.byu"
expect_status 1 $BACH verify "$T/trunc.byu"
expect_out "truncated record at byte offset 29994 (5 of 6 bytes)"
expect_status 1 $BACH dump "$T/trunc.byu"
expect_err "truncated record at byte offset 29994"
[ "$(wc -l < "$T/out")" -eq 4999 ] || fail "dump of a truncated file should print the whole records"
n=$(wc -c < "$T/a.byu.gz")
head -c $((n - 28)) "$T/a.byu.gz" > "$T/noeof.byu.gz"
expect_status 1 $BACH verify "$T/noeof.byu.gz"
expect_out "missing EOF block"
: > "$T/empty.byu"
expect_status 0 $BACH verify "$T/empty.byu"
expect_out "empty.byu: OK, 0 records"
# one of a thing is singular: 1 record, 1 member, 1 file (not "1 records")
$BACH gen --records 1 -o "$T/one.byu.gz"
expect_status 0 $BACH verify "$T/one.byu.gz"
expect_out "one.byu.gz: OK, 1 record, blocked gzip"
expect_out "verify: 1 file, 1 record, 0 problems"
expect_status 0 $BACH index "$T/one.byu.gz"
expect_out "one.byu.gz.gzi: 1 member, 1 record"
expect_status 2 $BACH verify "$T/missing.byu"
expect_err "missing.byu: No such file"
expect_status 2 $BACH stat "$T/missing.byu"
expect_status 2 $BACH dump "$T/missing.byu"
# a capture directory verifies segment by segment; damage names the segment
mkdir "$T/cap"
$BACH gen --records 100 --seed 1 -o "$T/cap/seg-000001.byu.gz"
cp "$T/noeof.byu.gz" "$T/cap/seg-000002.byu.gz"
expect_status 1 $BACH verify "$T/cap"
expect_out "seg-000001.byu.gz: OK, 100 records"
expect_out "seg-000002.byu.gz: missing EOF block"
# one rule for directories, in every command: a directory that holds
# neither a manifest nor a segment is not a capture (exit 2); a capture
# without a closed segment holds no records
mkdir "$T/notcap" "$T/empty-cap"
echo '{"event":"started"}' > "$T/empty-cap/manifest.jsonl"
for d in "$T/notcap" /etc; do
	for c in dump stat verify; do
		expect_status 2 $BACH $c "$d"
		expect_err "$d: not a capture directory"
	done
	expect_status 2 $BACH convert "$d" "$T/fromdir.byu"
	expect_err "$d: not a capture directory"
	[ ! -e "$T/fromdir.byu" ] || fail "convert of $d left an output"
done
# a capture with no segment and nothing unfinished is an empty trace
for c in dump stat verify; do
	expect_status 0 $BACH $c "$T/empty-cap"
done
expect_out "empty-cap: no segments: the capture holds no records"
expect_status 0 $BACH convert "$T/empty-cap" "$T/fromdir.byu"
[ -f "$T/fromdir.byu" ] && [ ! -s "$T/fromdir.byu" ] || fail "convert of an empty capture: not an empty trace"
expect_status 0 $BACH stat "$T/fromdir.byu"
expect_out "records            0"
# a crash before the first segment closed: only a .part, nothing readable yet
mkdir "$T/part-cap"
: > "$T/part-cap/seg-000001.byu.gz.part"
expect_status 1 $BACH stat "$T/part-cap"
expect_err "part-cap: no closed segment: 1 unfinished (*.part)"
# and with no manifest at all, which bachd makes before any segment: damage
expect_status 1 $BACH verify "$T/part-cap"
expect_out "seg-000001.byu.gz.part: unfinished segment"
expect_out "part-cap: no manifest.jsonl"
# an empty file named .gz is not gzip
: > "$T/nothing.byu.gz"
expect_status 1 $BACH dump "$T/nothing.byu.gz"
expect_err "nothing.byu.gz: empty file: not gzip"

# a failed write to standard output is an error (exit 2), never success
for c in "stat" "stat --json" "verify" "dump" "help stat"; do
	# shellcheck disable=SC2086
	expect_status 2 sh -c "$BACH $c '$T/a.byu' > /dev/full"
	expect_err "standard output: No space left on device"
done

# a device as output is written in place, never replaced by a file
$BACH convert -q --to byu.gz "$T/a.byu" /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a device"
$BACH gen --records 10 -o /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a device"

# bach ctl against a server that never replies: a timeout, not a hang
S="$T/silent.sock"
perl -MSocket -e 'socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!";
	bind($s, pack_sockaddr_un($ARGV[0])) or die "bind: $!";
	listen($s, 5) or die "listen: $!"; sleep 60' "$S" &
spid=$!
trap 'kill $spid 2>/dev/null || true; rm -rf "$T"' EXIT
n=0
while [ ! -S "$S" ]; do
	n=$((n + 1))
	[ $n -lt 200 ] || fail "the silent server did not start"
	sleep 0.05
done
expect_status 2 timeout 30 $BACH ctl --socket "$S" --timeout 1 status
expect_err "$S: no reply within 1 s"
start=$(date +%s)
expect_status 2 timeout 30 $BACH ctl --socket "$S" status
expect_err "$S: no reply within 5 s"
[ $(($(date +%s) - start)) -ge 4 ] || fail "the default timeout is not 5 s"
kill $spid || true
expect_status 2 $BACH ctl --socket "$S" --timeout 0 status
expect_err "--timeout: seconds, more than 0"
expect_status 2 $BACH ctl --socket "$T/nosuch.sock" status
expect_err "nosuch.sock: No such file or directory"

# help
expect_status 0 $BACH help dump
expect_out "usage: bach dump"
for c in dump stat verify convert gen; do
	$BACH $c --help | grep -q "usage: bach $c" || fail "$c --help"
done
expect_status 2 $BACH frobnicate
expect_status 2 $BACH
echo ok
