#!/bin/sh
# bach decode on inquire cycles, each waveform written by hand
# as a logic analyzer's CSV capture (state mode: one line a bus clock):
# the record the data sheets give, and what the summary says without
# hitm_n; and the repeats a back-off makes without ken_n, counted.
. "$TOP/tests/lib.sh"

# csv FILE: the waveform on stdin, one clock a line: the strobes asserted
# (ADS BRDY BOFF HLDA AHOLD EADS HITM, comma-separated, or -), the address
# pins (hex) and the cycle: rd (a data read, CACHE# high), wb (a
# writeback: memory write, CACHE# low), wr (a data write), - (no cycle)
csv() {
	{
		printf 'ads_n'
		i=3
		while [ $i -le 31 ]; do printf ',a%d' $i; i=$((i + 1)); done
		echo ',mio,dc,wr,cache_n,brdy_n,na_n,ken_n,boff_n,hlda,ahold,eads_n,hitm_n'
		while read -r on addr cyc; do
			a=$((addr))
			lo() { case ",$on," in *",$1,"*) printf 0 ;; *) printf 1 ;; esac; }
			hi() { case ",$on," in *",$1,"*) printf 1 ;; *) printf 0 ;; esac; }
			lo ADS
			i=3
			while [ $i -le 31 ]; do printf ',%d' $(((a >> i) & 1)); i=$((i + 1)); done
			case $cyc in
			rd) printf ',1,1,0,1' ;;
			wb) printf ',1,1,1,0' ;;
			wr) printf ',1,1,1,1' ;;
			*) printf ',0,0,0,1' ;;
			esac
			printf ',%s,1,1,%s,%s,%s,%s,%s\n' "$(lo BRDY)" "$(lo BOFF)" \
				"$(hi HLDA)" "$(hi AHOLD)" "$(lo EADS)" "$(lo HITM)"
		done
	} > "$1"
}

# decodes CAPTURE WANT [ARGS...]: bach dump of the decoded trace is WANT
decodes() {
	f=$1 gives=$2
	shift 2
	expect_status 0 "$BACH" decode "$@" "$f" -o "$T/got.byu"
	"$BACH" dump "$T/got.byu" > "$T/got.txt"
	printf "%s\n" "$gives" > "$T/want.txt"
	cmp -s "$T/got.txt" "$T/want.txt" ||
		fail "$f ($*): decoded $(cat "$T/got.txt"), the data sheets give $gives"
}

# AHOLD inside HLDA is sampled but not effective (K5 5.2.5);
# the read after it is the CPU's own, at its own address.
csv "$T/hlda.csv" <<'W'
- 0 -
HLDA,EADS 0x5550 -
HLDA 0xdeadbee8 -
HLDA,AHOLD 0xdeadbee8 -
ADS 0x12340 rd
BRDY 0x12340 rd
- 0 -
W
decodes "$T/hlda.csv" "00012340 00 NC_D_READ"

# Two inquires in one AHOLD episode; the second comes while
# HITM# answers the first, and EADS# is ignored while HITM# is asserted:
# the writeback is the first line's.
csv "$T/twoinq.csv" <<'W'
- 0 -
AHOLD 0x800 -
AHOLD 0xdeadbee8 -
AHOLD,EADS 0x4d0 -
AHOLD 0xdeadbee8 -
AHOLD,HITM 0xdeadbee8 -
AHOLD,HITM,EADS 0x7e8 -
AHOLD,HITM,ADS 0xdeadbee8 wb
AHOLD,HITM,BRDY 0xdeadbee8 wb
AHOLD,HITM,BRDY 0xdeadbee8 wb
AHOLD,HITM,BRDY 0xdeadbee8 wb
AHOLD,HITM,BRDY 0xdeadbee8 wb
- 0 -
W
decodes "$T/twoinq.csv" "000004c0 00 WRITE_BACK"
expect_err "hitm_n: a writeback under AHOLD takes the address of the inquire that hit"
expect_err "1 writebacks under AHOLD recorded at the inquire's address"
# without hitm_n, which inquire hit is unknown: the last, said and counted
echo "hitm_n = none" > "$T/nohitm.map"
decodes "$T/twoinq.csv" "000007e0 00 WRITE_BACK" --map "$T/nohitm.map"
expect_err "hitm_n not captured: after several inquires in one AHOLD episode, the last one's"
expect_err "1 of them after several inquires in one AHOLD episode"

# Without ken_n, one record per ADS#; a cycle a back-off
# aborted is recorded again at its restart, and the summary counts the
# cycles perhaps open at a back-off: never fewer than the repeats.
N=20000
"$BACH" gen --records $N --seed 5 --pins vcd --bus wait=2,boff=4,ken=30 \
	-o "$T/boff.vcd"
echo "ken_n = none" > "$T/noken.map"
expect_status 0 "$BACH" decode --map "$T/noken.map" "$T/boff.vcd" -o "$T/x.byu"
recs=$(($(wc -c < "$T/x.byu") / 6))
unsure=$(sed -n 's/^ *\([0-9]*\) cycles open, or perhaps open, at a back-off.*/\1/p' "$T/err")
[ -n "$unsure" ] || fail "no count of the repeats: $(cat "$T/err")"
[ $((recs - N)) -gt 0 ] || fail "no repeats to count ($recs records)"
[ $((recs - N)) -le "$unsure" ] ||
	fail "$((recs - N)) repeats, $unsure counted: $(cat "$T/err")"
# every record bach gen wrote is there, in order, beside the repeats
"$BACH" gen --records $N --seed 5 -o "$T/ref.byu"
"$BACH" dump "$T/ref.byu" | cut -c1-11 > "$T/ref.txt"
"$BACH" dump "$T/x.byu" | cut -c1-11 > "$T/x.txt"
awk 'BEGIN { j = 0 } NR == FNR { want[n++] = $0; next } $0 == want[j] { j++ }
	END { if (j != n) { print "record " j " of " n " missing"; exit 1 } }' \
	"$T/ref.txt" "$T/x.txt" || fail "records lost"
# with KEN#, cycles are followed: the trace is exact, nothing counted
expect_status 0 "$BACH" decode "$T/boff.vcd" -o "$T/y.byu"
same "$T/y.byu" "$T/ref.byu"
if grep -q "perhaps open" "$T/err"; then fail "counted with KEN#"; fi
echo ok
