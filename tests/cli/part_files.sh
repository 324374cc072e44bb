# Files named on the command line are read for what they hold, as
# standard input is: an unfinished segment (bachd's default
# *.byu.zst.part) is zstd, never raw records, and is only read; bach
# verify on a crashed capture names its .part and leaves it as it was.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

# a capture left by a crash: kill -9 while its first segment is written
mkdir "$T/crash"
crashed_capture "$T/crash" 3
K=$CRASHED
PART="$K/seg-000001.$SEG.part"
[ -f "$PART" ] || fail "no .part after the crash"
ls -l --time-style=+%s.%N "$PART" > "$T/before.ls"
cksum < "$PART" > "$T/before.sum"

# dump: the records of bach gen --seed 3, then the unfinished end named
expect_status 1 $BACH dump "$PART"
expect_err "seg-000001.$SEG.part: missing seek table"
expect_err "an unfinished segment"
n=$(wc -l < "$T/out")
[ "$n" -gt 0 ] || fail "dump of the .part printed nothing"
$BACH gen --records "$n" --seed 3 | $BACH dump - > "$T/want"
same "$T/want" "$T/out"
# the same through standard input
expect_status 1 sh -c "$BACH dump - < '$PART'"
same "$T/want" "$T/out"
expect_status 1 $BACH stat "$PART"
expect_err "an unfinished segment"
expect_status 1 $BACH verify "$PART"
expect_out "an unfinished segment"

# verify of the capture: the .part named, read, not damage
expect_status 0 $BACH verify "$K"
expect_out "seg-000001.$SEG.part: unfinished segment:"
# ... and nothing of it changed: read-only, even its times
ls -l --time-style=+%s.%N "$PART" > "$T/after.ls"
cksum < "$PART" > "$T/after.sum"
same "$T/before.sum" "$T/after.sum"
same "$T/before.ls" "$T/after.ls"

# other names that do not say: sniffed
$BACH gen --records 1000 --seed 5 -o "$T/g.byu.gz"
$BACH gen --records 1000 --seed 5 -o "$T/g.byu"
cp "$T/g.byu.gz" "$T/gz-by-another-name"
cp "$T/g.byu" "$T/raw-by-another-name"
$BACH dump "$T/g.byu" > "$T/want"
$BACH dump "$T/gz-by-another-name" > "$T/got1"
$BACH dump "$T/raw-by-another-name" > "$T/got2"
same "$T/want" "$T/got1"
same "$T/want" "$T/got2"
# a named pipe is sniffed as standard input is
mkfifo "$T/fifo"
cat "$T/g.byu.gz" > "$T/fifo" &
$BACH dump "$T/fifo" > "$T/got3"
wait
same "$T/want" "$T/got3"
# a raw segment left unfinished (.byu.part) stays raw
cp "$T/g.byu" "$T/seg-000001.byu.part"
$BACH dump "$T/seg-000001.byu.part" > "$T/got4"
same "$T/want" "$T/got4"
# a name that says gzip is read as gzip: damage is found, never raw
cp "$T/g.byu" "$T/not-really.byu.gz"
expect_status 1 $BACH dump "$T/not-really.byu.gz"
exit 0
