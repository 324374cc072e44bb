# Every command that reads, at every path it opens by name (a capture's
# segment, its *.part, a segment's .gzi and .time.gz, manifest.jsonl, and
# the capture directory itself as the user names it), meets a FIFO, a
# directory, a symbolic link out of the capture (to a copy of the file
# that was there, and to a FIFO) and a truncated file. None may hang
# (each run is under timeout), die by a signal or exit with a status its
# documentation does not give; each says what it refused, naming the
# path, or handles it as documented: a file found in a capture is read
# only when it is a regular file and never through a symbolic link
# (docs/formats.md section 4), an index or sidecar beside a trace may be
# a link to a regular file, and a FIFO named on the command line is a
# stream. Before the fix, a FIFO segment, .part, .gzi or .time.gz hung
# verify, stat, dump --range, dump --time, index, report, ...
. "$TOP/tests/lib.sh"

mkdir "$T/out" "$T/outside" "$T/ref.d" "$T/rout"
# compressor = record: .byu.gz segments, for the one path the default
# .byu.zst has not (its .gzi index: a .byu.zst's index is inside it) and
# gzip's truncated members
"$BACH" capture --driver fake -O records=200000 -O timing=1 --set rotate_mb=1 \
	--set compressor=record -o "$T/out" 2> "$T/log" || fail "capture: $(cat "$T/log")"
R=$(ls -d "$T"/out/*)
[ -f "$R/seg-000002.byu.gz" ] && [ -f "$R/seg-000002.byu.gz.gzi" ] &&
	[ -f "$R/seg-000001.time.gz" ] || fail "the capture lacks a file: $(ls "$R")"
# two user marks for --between (B in the second segment), and an
# unfinished segment as a crash leaves it
m='{"time":"2026-11-21T22:30:00.500Z","event":"mark","segment":"seg-00000'
{
	echo "${m}1.byu.gz\",\"at\":1000,\"record\":1000,\"source\":\"ctl\",\"text\":\"A\"}"
	echo "${m}2.byu.gz\",\"at\":199000,\"record\":199000,\"source\":\"ctl\",\"text\":\"B\"}"
} >> "$R/manifest.jsonl"
head -c 40000 "$R/seg-000002.byu.gz" > "$R/seg-000003.byu.gz.part"
mv "$R" "$T/ref"
R="$T/ref"
mkfifo "$T/outside/fifo"
W="$T/w"     # the directory commands look in (bach ls)
X="$W/cap"   # the capture under test, a fresh copy each run
SEG1="$R/seg-000001.byu.gz"

# the file at POS: the path bach opens by name
path_of() {
	case $1 in
	seg) echo "$X/seg-000002.byu.gz" ;;
	part) echo "$X/seg-000003.byu.gz.part" ;;
	gzi) echo "$X/seg-000002.byu.gz.gzi" ;;
	time) echo "$X/seg-000001.time.gz" ;;
	man) echo "$X/manifest.jsonl" ;;
	dir) echo "$X" ;;
	esac
}

# spoil POS KIND: a fresh copy of the capture with KIND at POS
spoil() {
	rm -rf "$W" "$T/outside/victim" "$T/victim.copy"
	mkdir "$W"
	cp -a "$R" "$X"
	f=$(path_of "$1")
	case $2 in
	fifo) rm -rf "$f" && mkfifo "$f" ;;
	dir) rm -rf "$f" && mkdir "$f" ;;
	link) # out of the capture, to a copy of what was there
		cp -a "$f" "$T/outside/victim"
		rm -rf "$f" && ln -s "$T/outside/victim" "$f"
		cp -a "$T/outside/victim" "$T/victim.copy" ;;
	linkfifo) rm -rf "$f" && ln -s "$T/outside/fifo" "$f" ;;
	cut) # a regular file cut in half (the capture: its first segment)
		if [ -d "$f" ]; then
			rm -rf "$f"
			s=$(stat -c %s "$SEG1")
			head -c $((s / 2)) "$SEG1" > "$f"
		else
			s=$(stat -c %s "$f")
			head -c $((s / 2)) "$f" > "$T/cut"
			cat "$T/cut" > "$f"
		fi ;;
	esac
}

# the command CMD runs, on $X
set_cmd() {
	case $1 in
	dump) set -- "$BACH" dump "$X" ;;
	range) set -- "$BACH" dump --range 190000:190003 "$X" ;;
	dtime) set -- "$BACH" dump --time "$X" ;;
	between) set -- "$BACH" dump --between A B "$X" ;;
	stat) set -- "$BACH" stat "$X" ;;
	stime) set -- "$BACH" stat --time "$X" ;;
	verify) set -- "$BACH" verify "$X" ;;
	ls) set -- "$BACH" ls "$W" ;;
	report) set -- "$BACH" report "$X" -o "$T/r.html" ;;
	plot) set -- "$BACH" plot map "$X" -o "$T/p.png" ;;
	index) set -- "$BACH" index "$X" ;;
	diff) set -- "$BACH" diff "$X" "$R" ;;
	convert) set -- "$BACH" convert "$X" "$T/c.byu" ;;
	laplace) set -- "$BACH" convert --to laplace "$X" "$T/c.lp" ;;
	sim) set -- "$BACH" sim --l1 8k:32:2 "$X" ;;
	mrc) set -- "$BACH" mrc "$X" ;;
	replay) set -- "$BACH" capture --driver replay -O "path=$X" -o "$T/rout" ;;
	rtime) set -- "$BACH" capture --driver replay -O "path=$X" -O pace=original \
		-o "$T/rout" ;;
	recover) set -- "$BACH" recover "$X" ;;
	esac
	CMD=$*
}

# what CMD, POS and KIND must give: W_RC (empty: any documented status)
# and W_TXT, a line of the output (empty: none asked for). With W_SAME,
# standard output must be the command's on the untouched capture. An
# error must name the file, unless W_OTHER says it is about another.
want() {
	cmd=$1 pos=$2 kind=$3
	n=$(basename "$(path_of "$pos")")
	W_RC= W_TXT= W_SAME= W_OTHER=
	# what a reader that refuses a file says of it
	case $kind in
	fifo | linkfifo) what="not a regular file (a FIFO), not read" ;;
	dir) what="not a regular file (a directory), not read" ;;
	link) what="a symbolic link, not read" ;;
	esac
	[ "$kind" != linkfifo ] || case $pos in
	seg | part | man) what="a symbolic link, not read" ;; # in a capture
	esac
	case $pos.$kind in
	seg.cut) what="truncated gzip member" ;;
	esac
	# and the status of a command that stops there
	case $cmd in
	verify) stop=1 ;;
	replay | rtime) stop=4 ;;
	*) stop=2 ;;
	esac
	case $pos in
	seg)
		W_TXT="$n: $what" W_RC=$stop
		case $cmd.$kind in
		*.cut) [ $stop != 2 ] || [ "$cmd" = diff ] || W_RC=1 ;;
		esac
		if [ "$cmd" = recover ]; then
			W_RC=0 W_TXT=
			case $kind in
			fifo) W_TXT="$n: a FIFO: left alone" ;;
			dir) W_TXT="$n: a directory: left alone" ;;
			link | linkfifo) W_TXT="$n: a symbolic link: left alone" ;;
			esac
		fi ;;
	part)
		W_TXT="$n: $what" W_RC=1
		[ "$cmd.$kind" != verify.cut ] || W_RC=0 W_TXT="$n: unfinished segment"
		if [ "$cmd" = recover ]; then # closed, or named and left: exit 1
			W_RC=1
			case $kind in
			cut) W_RC=0 W_TXT= ;;
			fifo) W_TXT="$n: a FIFO: left alone" ;;
			dir) W_TXT="$n: a directory: left alone" ;;
			link | linkfifo) W_TXT="$n: a symbolic link: left alone" ;;
			esac
		fi ;;
	gzi) # readers find the members from the file
		case $cmd.$kind in
		range.*) W_RC=0 W_SAME=1 ;;
		verify.link) W_RC=0 ;;
		verify.cut) W_RC=0 W_TXT="warning: $X/$n: " ;;
		verify.*) W_RC=0 W_TXT="warning: $X/$n: $what (ignored" ;;
		index.cut) W_RC=0 ;;
		index.link | index.linkfifo) W_RC=2 W_TXT="$n: not a regular file (a symbolic link), not replaced" ;;
		index.fifo) W_RC=2 W_TXT="$n: not a regular file (a FIFO), not replaced" ;;
		index.dir) W_RC=2 W_TXT="$n: not a regular file (a directory), not replaced" ;;
		esac ;;
	time) # a sidecar may be a link to a regular file
		case $cmd.$kind in
		verify.*) ;; # not read today: no hang, named if refused
		*.link) W_RC=0; [ "$cmd" != dtime ] || W_SAME=1 ;;
		*.cut) W_RC=1 W_TXT="$n: truncated gzip member"
			[ $stop = 2 ] || W_RC=$stop ;;
		replay.*) W_RC=4 W_TXT="$n: $what" ;;
		*) W_RC=2 W_TXT="$n: $what" ;;
		esac ;;
	man)
		case $cmd.$kind in
		between.cut) W_RC=2 W_OTHER=1 W_TXT="no mark matching 'A' in $X" ;;
		*.cut) [ "$cmd" != verify ] || W_RC=1 ;;
		verify.*) W_RC=1 W_TXT="$n: $what" ;;
		ls.*) W_RC=1 W_TXT="$n: $what" ;;
		recover.*) W_RC=1 W_TXT="$n: $what: not recovered" ;;
		*) W_RC=2 W_TXT="$n: $what" ;;
		esac ;;
	dir) # named by the user: followed, and a FIFO is a stream
		case $kind in
		link) W_RC=0
			case $cmd in
			dump | range | dtime | stat | stime) W_SAME=1 ;;
			esac ;;
		dir)
			case $cmd in
			ls | recover) W_RC=0 ;;
			replay | rtime) ;; # found when the source starts
			report) W_RC=2 W_TXT="$X: no manifest.jsonl: not a capture directory" ;;
			*) W_RC=2 W_TXT="$X: not a capture directory" ;;
			esac ;;
		cut)
			case $cmd in
			ls | recover | index) W_RC=0 ;;
			between) W_RC=2 W_TXT="needs one capture directory" ;;
			convert | laplace) W_RC=2 W_TXT="$X: cannot tell the input format" ;;
			rtime) W_RC=2 W_TXT="$X.time.gz, which is missing" ;;
			replay) W_RC=4 W_TXT="$X: truncated gzip member" ;;
			diff) W_RC=2 W_TXT="$X: truncated gzip member" ;;
			*) W_RC=1 W_TXT="$X: truncated gzip member" ;;
			esac ;;
		fifo | linkfifo) # fed the first segment
			case $cmd in
			dump | range | stat | verify | sim | mrc) W_RC=0 ;;
			plot) W_RC=2 W_TXT="twice: give a file, not $X (a FIFO)" ;;
			diff) W_RC=1 ;; # the first segment only
			ls | recover) W_RC=0 ;;
			dtime | stime) W_RC=2 W_TXT="no timing sidecar for $X" ;;
			between) W_RC=2 W_TXT="needs one capture directory" ;;
			convert | laplace) W_RC=2 W_TXT="$X: cannot tell the input format" ;;
			report) W_RC=2 W_TXT="$X: not a capture directory or a trace file (a FIFO)" ;;
			index) W_RC=2 W_TXT="$X: not a regular file (a FIFO), not read" ;;
			replay | rtime) W_RC=2 W_TXT="$X: not a regular file or a capture directory" ;;
			esac ;;
		esac ;;
	esac
}

# reference outputs, on the untouched capture at the same path
for cmd in dump range dtime stat stime; do
	spoil none none
	set_cmd $cmd
	$CMD > "$T/ref.d/$cmd" 2>&1 || fail "$CMD on the untouched capture: $(cat "$T/ref.d/$cmd")"
done

runs=0
check() { # CMD POS...: every kind at each
	cmd=$1
	shift
	for pos in "$@"; do
		for kind in fifo dir link linkfifo cut; do
			spoil $pos $kind
			set_cmd $cmd
			want $cmd $pos $kind
			feeder=
			if [ $pos = dir ] && [ $kind = fifo -o $kind = linkfifo ]; then
				# a writer, as the user of a named pipe has one
				timeout 20 cat "$SEG1" 2> /dev/null > "$(path_of $pos)" &
				feeder=$!
			fi
			set +e
			timeout 20 $CMD > "$T/o" 2> "$T/e"
			rc=$?
			set -e
			if [ -n "$feeder" ]; then
				kill $feeder 2> /dev/null || true
				wait $feeder 2> /dev/null || true
			fi
			runs=$((runs + 1))
			what="$cmd at $pos, a $kind ($CMD)"
			[ $rc -ne 124 ] || fail "$what: still running after 20 s"
			[ $rc -lt 128 ] || fail "$what: died by signal $((rc - 128)): $(cat "$T/e")"
			case $cmd.$rc in
			replay.[0-5] | rtime.[0-5] | *.[012]) ;;
			*) fail "$what: exit $rc, which its help does not give: $(cat "$T/e")" ;;
			esac
			[ -z "$W_RC" ] || [ $rc -eq "$W_RC" ] ||
				fail "$what: exit $rc, expected $W_RC: $(head -c 600 "$T/e") $(tail -n 3 "$T/o")"
			cat "$T/o" "$T/e" > "$T/all"
			[ -z "$W_TXT" ] || grep -qF -- "$W_TXT" "$T/all" ||
				fail "$what: the output lacks '$W_TXT': $(head -c 800 "$T/all")"
			# an error names the file it is about
			[ $rc -eq 0 ] || [ $rc -eq 1 -a $cmd = diff ] || [ -n "$W_OTHER" ] ||
				grep -qF "$(basename "$(path_of $pos)")" "$T/all" ||
				fail "$what: exit $rc and the file is not named: $(head -c 600 "$T/all")"
			[ -z "$W_SAME" ] || same "$T/ref.d/$cmd" "$T/o"
			# nothing outside the capture is written through a link
			if [ $kind = link ] && ! [ $pos = dir -a $cmd = recover ]; then
				[ ! -d "$T/outside/victim" ] || diff -r "$T/outside/victim" "$T/victim.copy" > /dev/null ||
					fail "$what: changed the directory the link points to"
				[ -d "$T/outside/victim" ] || same "$T/outside/victim" "$T/victim.copy"
			fi
			[ -p "$T/outside/fifo" ] || fail "$what: replaced the FIFO the link points to"
		done
	done
}

check dump seg dir
check range gzi seg
check dtime time seg
check between man seg dir
check stat seg dir
check stime time
check verify seg part gzi man time dir
check ls man dir
check report seg man dir
check plot seg dir
check index seg gzi dir
check diff seg dir
check convert seg dir
check laplace time
check sim seg dir
check mrc seg dir
check replay seg time dir
check rtime time
check recover seg part man dir
echo "hostile paths: $runs runs"
echo ok
