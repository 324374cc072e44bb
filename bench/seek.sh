#!/bin/sh
# Random access (README.md, "Performance"): seek to record 10^9 of a
# capture of 10^9 + 10 records and dump 10 records, in at most 50 ms:
# through the segments' .gzi indexes (.byu.gz, compressor = record), and
# through the seek tables of .byu.zst segments (bachd's default),
# both in this one run. The captures are made by the fake board (its
# records are bach gen's) under $SEEK_DIR, kept between runs (about 2 GiB
# and 3 GiB; SEEK_CLEAN=1 removes them after). SEEK_RECORDS=N for a
# smaller trial.
set -eu
BUILD=${BUILD:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
BACH="$TOP/$BUILD/bin/bach"
. "$TOP/bench/lib.sh"
missed=0
N=${SEEK_RECORDS:-1000000000}
DIR=${SEEK_DIR:-$TOP/build/bench-seek}
TOTAL=$((N + 10))

# the 10 records, independently (bach gen's stream is the board's), made
# before the timing so as not to compete with it
mkdir -p "$DIR"
"$BACH" gen --records $TOTAL --seed 1 -o - 2>/dev/null |
	tail -c 60 | od -An -v -tx1 -w6 |
	awk 'BEGIN { split("INVALID INT_ACK INVALID SPECIAL INVALID IO_READ INVALID IO_WRITE I_FETCH NC_I_FETCH INVALID INVALID D_READ NC_D_READ WRITE_BACK D_WRITE", n, " ") }
	{ t = index("0123456789abcdef", substr($6, 1, 1)); print $1 $2 $3 $4 " " $5 " " n[t] }' > "$DIR/want.txt"

# what any command costs to start, for comparison
start=999
for i in 1 2 3 4 5; do
	t0=$(now)
	"$BACH" help > /dev/null
	t=$(calc "($(now) - $t0) * 1000")
	start=$(calc "$t < $start ? $t : $start")
done
echo "seek: bach help (starting the program alone): $(fmt "$start") ms, best of 5"

# seek_in NAME SUFFIX BACHD-SETTINGS...: the capture $DIR/NAME (made when
# absent) of SUFFIX segments, timed
seek_in() {
	name=$1
	suffix=$2
	shift 2
	cap=$(ls -d "$DIR"/$name/*/ 2>/dev/null | head -n 1 || true)
	if [ -z "$cap" ]; then
		need=$((TOTAL / 1000000 * 4)) # MB: about 2.2 (zstd: 2.7) bytes a record, with room
		avail=$(df -Pm "$(dirname "$DIR")" | awk 'NR == 2 { print $4 }')
		[ "$avail" -gt "$need" ] ||
			{ echo "seek: $avail MB free, $need MB needed for $TOTAL records"; exit 2; }
		rm -rf "${DIR:?}/$name"
		mkdir -p "$DIR/$name"
		t0=$(now)
		"$BACH" capture --driver fake --option records=$TOTAL --option seed=1 \
			"$@" --output "$DIR/$name" > /dev/null 2>&1
		echo "seek: made a capture of $TOTAL records ($suffix) in $(fmt "$(calc "$(now) - $t0")") s"
		cap=$(ls -d "$DIR"/$name/*/ | head -n 1)
	fi
	echo "seek: $cap: $(ls "$cap" | grep -c "\\.$suffix\$") $suffix segments, $(du -sm "$cap" | cut -f1) MB"

	best=999
	for i in 1 2 3 4 5; do
		t0=$(now)
		"$BACH" dump --range $N:$TOTAL "$cap" > "$DIR/got.txt"
		t=$(calc "($(now) - $t0) * 1000")
		echo "seek: run $i: $(fmt "$t") ms"
		best=$(calc "$t < $best ? $t : $best")
	done
	cmp -s "$DIR/got.txt" "$DIR/want.txt" || { echo "seek: the records differ from bach gen's"; missed=1; }
	# the library alone: bench/seek10 (libbach.a, nothing else to load) says
	# how long the seek and the 10 records took inside it
	lib=999 inproc=999
	for i in 1 2 3 4 5; do
		t0=$(now)
		"$TOP/$BUILD/bench/seek10" "$cap" $N > "$DIR/got10.txt" 2> "$DIR/in.txt"
		t=$(calc "($(now) - $t0) * 1000")
		lib=$(calc "$t < $lib ? $t : $lib")
		inproc=$(calc "$(cat "$DIR/in.txt") < $inproc ? $(cat "$DIR/in.txt") : $inproc")
	done
	cmp -s "$DIR/got10.txt" "$DIR/want.txt" || { echo "seek: seek10's records differ"; missed=1; }
	echo "seek: bench/seek10: $(fmt "$lib") ms whole, $(fmt "$inproc") ms of it in the library (best of 5)"
	# dump is bach's own command: it starts no helper (bach-acquire, bach-draw)
	if command -v strace > /dev/null; then
		strace -f -e trace=execve -o "$DIR/exec.txt" "$BACH" dump --range $N:$TOTAL "$cap" > /dev/null
		execs=$(grep -c 'execve(' "$DIR/exec.txt" || true)
		check "dump --range starts no other program (strace)" "$execs == 1" "$execs execve"
	fi
	check "dump --range $N:$TOTAL of the $suffix capture (best of 5)" "$best <= 50" "$(fmt "$best") ms"
	check "the same through libbach, whole program (best of 5)" "$lib <= 50" "$(fmt "$lib") ms"
	[ -z "${SEEK_CLEAN:-}" ] || rm -rf "${DIR:?}/$name"
}

seek_in "$TOTAL" byu.gz --set compressor=record
echo
seek_in "$TOTAL-zstd" byu.zst --set compressor=zstd
exit $missed
