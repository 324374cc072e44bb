#!/bin/sh
# bach convert: every import and export against golden files, byu <-> byu.gz
# round trips, concatenated gzip members, and bad inputs with their exit
# statuses. Set BACH_REGOLD=1 to rewrite the golden outputs on purpose.
. "$TOP/tests/lib.sh"
G="$GOLDEN/convert"

# hex_bytes: the "%02x"-style byte values of awk's output, as a printf
# format of octal escapes (dash's printf knows no \x).
AWK_BYTES='
function hex(s,    i, v) {
	v = 0
	s = tolower(s)
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
function byte(v) { printf "\\%03o", v % 256 }
function be32(v) { byte(int(v / 16777216)); byte(int(v / 65536)); byte(int(v / 256)); byte(v) }
function le32(v) { byte(v); byte(int(v / 256)); byte(int(v / 65536)); byte(int(v / 16777216)) }
'

# p2bin TEXT OUT: p2.txt lines (address type size attr proc time) to
# 12-byte p2AddrTr records
p2bin() {
	# shellcheck disable=SC2059
	printf "$(awk "$AWK_BYTES"'
		/^#/ || NF == 0 { next }
		{ le32(hex($1)); byte(hex($2)); byte($3); byte(hex($4)); byte($5); le32($6) }
	' "$1")" >"$2"
}

# byubin TEXT OUT: "address be control" lines to 6-byte records
byubin() {
	# shellcheck disable=SC2059
	printf "$(awk "$AWK_BYTES"'
		/^#/ || NF == 0 { next }
		{ be32(hex($1)); byte(hex($2)); byte(hex($3)) }
	' "$1")" >"$2"
}

# golden GOT NAME: GOT equals $G/NAME (or becomes it under BACH_REGOLD)
golden() {
	if [ -n "${BACH_REGOLD:-}" ]; then
		cp "$1" "$G/$2"
		return
	fi
	same "$1" "$G/$2"
}

# nothing named OUT, nor a temporary beside it, is left behind
no_output() {
	[ ! -e "$1" ] || fail "$1 left behind by a failed conversion"
	for f in "$(dirname "$1")"/.*"$(basename "$1")"*; do
		[ ! -e "$f" ] || fail "temporary $f left behind"
	done
}

# ---- imports: through csv, and through byu (both must agree) ----------

import_case() { # FORMAT INPUT GOLDEN SUMMARY [options...]
	fmt=$1 in=$2 gold=$3 summary=$4
	shift 4
	expect_status 0 "$BACH" convert "$@" --from "$fmt" --to csv "$in" "$T/$gold"
	expect_err "$summary"
	golden "$T/$gold" "$gold"
	expect_status 0 "$BACH" convert "$@" --from "$fmt" "$in" "$T/$gold.byu"
	expect_status 0 "$BACH" convert "$T/$gold.byu" "$T/$gold.2.csv"
	same "$T/$gold.2.csv" "$G/$gold"
}

import_case lackey "$G/lackey.txt" lackey.csv \
	"20 lines read, 20 records written, 0 skipped"
import_case din "$G/din.txt" din.csv \
	"8 lines read, 6 records written, 2 skipped"
import_case cis501 "$G/cis501.txt" cis501.csv \
	"8 lines read, 12 records written, 0 skipped" --mask-address
p2bin "$G/p2.txt" "$T/p2.bin"
[ "$(wc -c <"$T/p2.bin")" -eq 264 ] || fail "p2.bin is not 22 records"
import_case p2 "$T/p2.bin" p2.csv \
	"22 p2AddrTr records read, 21 records written, 3 skipped"
# p2AddrTr is another name for p2; standard input works too
expect_status 0 "$BACH" convert -q --from p2AddrTr --to csv - "$T/p2-stdin.csv" \
	<"$T/p2.bin"
same "$T/p2-stdin.csv" "$G/p2.csv"

# wide addresses: an error naming the line, or masked on request
expect_status 1 "$BACH" convert --from lackey "$G/lackey64.txt" "$T/l64.byu"
expect_err "line 3"
expect_err "above 4 GiB"
no_output "$T/l64.byu"
import_case lackey "$G/lackey64.txt" lackey64.csv \
	"5 lines read, 6 records written, 0 skipped" --mask-address
expect_status 1 "$BACH" convert --from cis501 "$G/cis501.txt" "$T/c.byu"
expect_err "cis501.txt: line 6: address above 4 GiB"

# CIS 501 fields as trace-format.html defines them (shared/references,
# "Penn CIS 501 instruction trace format"): flags R/W/-, branch T/N/-,
# the immediate a 64-bit signed decimal, registers 32-bit signed decimals,
# micro-ops counted from 1. Each bad line is line 2, after a good one.
cis_good='1 48d1de -1 -1 13 - - - 0 0 48d1e2 0 SET ADD'
cis_bad() { # LINE REASON
	printf '%s
%s
' "$cis_good" "$1" >"$T/cbad.trace"
	expect_status 1 "$BACH" convert --from cis501 "$T/cbad.trace" "$T/cbad.byu"
	expect_err "cbad.trace: line 2: $2"
	no_output "$T/cbad.byu"
}
cis_bad '2 48d1de -1 -1 13 X - - 1 0 48d1e2 0 SET ADD_IMM' "bad flags field 'X'"
cis_bad '2 48d1de -1 -1 13 r - - 1 0 48d1e2 0 SET ADD_IMM' "bad flags field 'r'"
cis_bad '1 48d237 -1 -1 -1 R Y - -25 0 48d239 48d220 J JMP_IMM' "bad branch field 'Y'"
cis_bad '1 48d1e2 -1 5 4294967341 - - - 0 0 48d1e9 0 CMP SUB' "bad register number '4294967341'"
cis_bad '1 48d1e2 2147483648 5 45 - - - 0 0 48d1e9 0 CMP SUB' "bad register number '2147483648'"
cis_bad '1 48d1e2 -1 -2147483649 45 - - - 0 0 48d1e9 0 CMP SUB' "bad register number '-2147483649'"
cis_bad '0 48d1e2 -1 5 45 - - - 0 0 48d1e9 0 CMP SUB' "micro-op number 0"
cis_bad '1 48d1e2 -1 5 45 - - - 9223372036854775808 0 48d1e9 0 CMP SUB' "bad immediate"
cis_bad '1 48d1e2 -1 5 45 - - - -9223372036854775809 0 48d1e9 0 CMP SUB' "bad immediate"
# the extremes that are valid import
{
	echo "$cis_good"
	echo '1 48d1e2 2147483647 -2147483648 -1 W N - -9223372036854775808 0 48d1e9 0 CMP SUB'
	echo '1 48d1e9 -1 -1 -1 - T - 9223372036854775807 0 48d1f0 48d231 JMP JMP_IMM'
} >"$T/cext.trace"
expect_status 0 "$BACH" convert --from cis501 --to csv "$T/cext.trace" "$T/cext.csv"
expect_err "3 lines read, 5 records written, 0 skipped"

# ---- exports ----------------------------------------------------------

byubin "$G/mix.txt" "$T/mix.byu"
[ "$(wc -c <"$T/mix.byu")" -eq 90 ] || fail "mix.byu is not 15 records"
for to in din dinx laplace csv; do
	expect_status 0 "$BACH" convert --to "$to" "$T/mix.byu" "$T/mix.$to"
	golden "$T/mix.$to" "mix.$to"
done
expect_status 0 "$BACH" convert --to din "$T/mix.byu" "$T/mix2.din"
expect_err "15 records read, 9 written, 6 skipped (no din equivalent)"
expect_status 0 "$BACH" convert --to csv "$T/mix.byu" "$T/mix2.csv"
expect_err "15 records read, 15 written, 0 skipped"
# the format from the name; standard output; gzip input
expect_status 0 "$BACH" convert "$T/mix.byu" "$T/mix3.din"
same "$T/mix3.din" "$G/mix.din"
expect_status 0 "$BACH" convert -q --to dinx "$T/mix.byu" -
same "$T/out" "$G/mix.dinx"
# dinx reads back (docs/formats.md 7.2): each reference is the quadword
# records of its span, so its export is the golden file again
expect_status 0 "$BACH" convert --from dinx "$G/mix.dinx" "$T/mixx.byu"
expect_err "9 lines read, 9 records written, 0 skipped"
expect_status 0 "$BACH" convert -q --to dinx "$T/mixx.byu" "$T/mixx.dinx"
same "$T/mixx.dinx" "$G/mix.dinx"
expect_status 0 "$BACH" dump "$T/mixx.byu"
expect_out "04016a08 3f NC_I_FETCH"
printf 'r 1000 8\nx 1000 4\n' >"$T/bad.dinx"
expect_status 1 "$BACH" convert --from dinx "$T/bad.dinx" "$T/bad.byu"
expect_err "bad.dinx: line 2: unknown reference type 'x' (r, w or i)"
expect_status 0 "$BACH" convert "$T/mix.byu" "$T/mix.byu.gz"
expect_status 0 "$BACH" convert --to laplace "$T/mix.byu.gz" "$T/mix2.laplace"
same "$T/mix2.laplace" "$G/mix.laplace"
# imports straight to exports
expect_status 0 "$BACH" convert --from din --to din "$G/din.txt" "$T/din2.din"
golden "$T/din2.din" din.din

# ---- Laplace, Trace Matcher, IDtrace: the documents' own examples -----

# dumps FILE.byu: what bach dump prints of it
dumps() { "$BACH" dump "$1"; }

# Laplace (shared/references, "Laplace: Raw Trace Formats"): the text
# example, a 4-byte load at 9a8b7c6d, is two quadwords' bytes 5..7 and 0
echo 'r 123456789abcdef0 4 9f8e7 9a8b7c6d' >"$T/lp.txt"
expect_status 0 "$BACH" convert --from laplace "$T/lp.txt" "$T/lp.byu"
expect_err "1 line read, 2 records written, 0 skipped"
printf '9a8b7c68 1f NC_D_READ\n9a8b7c70 fe NC_D_READ\n' >"$T/lp.want"
dumps "$T/lp.byu" >"$T/lp.got"
same "$T/lp.got" "$T/lp.want"
# the same record in the 18-byte binary form (packed, little-endian)
printf 'r\360\336\274\232\170\126\064\022\004\347\370\011\000\155\174\213\232' >"$T/lp.bin"
expect_status 0 "$BACH" convert --from laplace-bin "$T/lp.bin" "$T/lpb.byu"
expect_err "1 record read, 2 records written"
same "$T/lpb.byu" "$T/lp.byu"
# and bach writes it back as 18 bytes a reference: type, time = position,
# length, address space 0, address
expect_status 0 "$BACH" convert --to laplace-bin "$T/lp.byu" "$T/lp2.bin"
printf 'r\000\000\000\000\000\000\000\000\003\000\000\000\000\155\174\213\232r\001\000\000\000\000\000\000\000\001\000\000\000\000\160\174\213\232' >"$T/lp2.want"
same "$T/lp2.bin" "$T/lp2.want"
for bad in 'x 0 4 0 1000' 'r 0 0 0 1000' 'r 0 100 0 1000' 'r 0 4 0' 'r 0 4 0 1000 7' 'r 0 4 0 0x1000'; do
	printf 'r 0 4 0 2000\n%s\n' "$bad" >"$T/lpbad.txt"
	expect_status 1 "$BACH" convert --from laplace "$T/lpbad.txt" "$T/lpbad.byu"
	expect_err "lpbad.txt: line 2: "
	no_output "$T/lpbad.byu"
done
head -c 17 "$T/lp.bin" >"$T/lp17.bin"
expect_status 1 "$BACH" convert --from laplace-bin "$T/lp17.bin" "$T/lp17.byu"
expect_err "not a multiple of 18"

# Trace Matcher ("Trace Format"): the memory access example, MR8 at
# 00103fc4, is two quadwords; instruction and register records are skipped
cat >"$T/tm.txt" <<'EOF2'
1 clk 0 IT (1) 00000004 3c080001 A svc : lui t0,0x1
10 clk MR8 00103fc4 0010400000000000
14 clk R r8 00000000
15 clk MW2X 00103fc2 beef
EOF2
expect_status 0 "$BACH" convert --from tracematcher "$T/tm.txt" "$T/tm.byu"
expect_err "4 lines read, 3 records written, 2 skipped"
printf '00103fc0 0f NC_D_READ\n00103fc8 f0 NC_D_READ\n00103fc0 f3 D_WRITE\n' >"$T/tm.want"
dumps "$T/tm.byu" >"$T/tm.got"
same "$T/tm.got" "$T/tm.want"
# written back: time = position, clk, M<rw><size>, the address in 8 hex
# digits, zeros for the data bach never saw; fetches have no MR/MW record
expect_status 0 "$BACH" convert --to tracematcher "$T/tm.byu" "$T/tm2.txt"
printf '0 clk MR4 00103fc4 00000000\n1 clk MR4 00103fc8 00000000\n2 clk MW2 00103fc2 0000\n' >"$T/tm2.want"
same "$T/tm2.txt" "$T/tm2.want"
for bad in '10 clk MQ8 00103fc4 00' '10 clk MR8Z 00103fc4 00' '10 clk MR2 00103fc4 123456' \
	'x clk MR8 00103fc4 00' '10 clk MR8 00103fc4' '10 clk 0 IX (1) 4 0 A svc : nop' \
	'10 clk MR0 00103fc4 0' '10 clk MR8 00103fc4 00 junk'; do
	printf '%s\n' '10 clk MR8 00103fc4 00' "$bad" >"$T/tmbad.txt"
	expect_status 1 "$BACH" convert --from tracematcher "$T/tmbad.txt" "$T/tmbad.byu"
	expect_err "tmbad.txt: line 2: "
	no_output "$T/tmbad.byu"
done

# IDtrace (CSE-TR-203-94, A.1 "Cache Trace"): 0x21 a byte write, 0x13 an
# lword read, 0x60 a 16-byte instruction cache line, 0x50 a repeat end
printf '\041\003\020\000\000\023\006\040\000\000\140\020\060\000\000\120\000\000\000\000' >"$T/idt.bin"
expect_status 0 "$BACH" convert --from idtrace "$T/idt.bin" "$T/idt.byu"
expect_err "4 records read, 5 records written, 1 skipped"
printf '00001000 f7 D_WRITE\n00002000 3f NC_D_READ\n00002008 fc NC_D_READ\n00003010 00 NC_I_FETCH\n00003018 00 NC_I_FETCH\n' >"$T/idt.want"
dumps "$T/idt.byu" >"$T/idt.got"
same "$T/idt.got" "$T/idt.want"
# a basic-block entry (0x70, a branch trace's) is not a cache trace entry
printf '\041\003\020\000\000\160\000\020\000\000' >"$T/idtbad.bin"
expect_status 1 "$BACH" convert --from idtrace "$T/idtbad.bin" "$T/idtbad.byu"
expect_err "idtbad.bin: record 1 (byte offset 5): tag 0x70 is not a cache trace entry"
no_output "$T/idtbad.byu"
expect_status 0 "$BACH" convert --to idtrace "$T/idt.byu" "$T/idt2.bin"
# the lword read's two records are a word each; the line's two fetches are
# one line entry again (formats.md 7.6)
expect_err "5 records read, 4 written, 0 skipped (no idtrace equivalent), 1 fetches folded"
printf '\041\003\020\000\000\022\006\040\000\000\022\010\040\000\000\140\020\060\000\000' >"$T/idt2.want"
same "$T/idt2.bin" "$T/idt2.want"
# fetches in one line with a data reference between them: two entries
# (raw records: 00003010 NC_I_FETCH, 00002000 NC_D_READ BE# 3f, 00003018
# and 00003020 NC_I_FETCH)
printf '\000\000\060\020\000\220\000\000\040\000\077\320\000\000\060\030\000\220\000\000\060\040\000\220' >"$T/idt3.byu"
expect_status 0 "$BACH" convert -q --to idtrace "$T/idt3.byu" "$T/idt3.bin"
printf '\140\020\060\000\000\022\006\040\000\000\140\020\060\000\000\140\040\060\000\000' >"$T/idt3.want"
same "$T/idt3.bin" "$T/idt3.want"

# round trips: records each format carries whole come back byte for byte,
# from plain and from gzip-compressed files (and the Laplace text too)
expect_status 0 "$BACH" convert --from lackey "$G/lackey.txt" "$T/rt.byu"
for f in laplace laplace-bin; do
	expect_status 0 "$BACH" convert --to "$f" "$T/rt.byu" "$T/rt.$f"
	expect_status 0 "$BACH" convert --from "$f" "$T/rt.$f" "$T/rt-$f.byu"
	same "$T/rt-$f.byu" "$T/rt.byu"
	gzip -c "$T/rt.$f" >"$T/rt.$f.gz"
	expect_status 0 "$BACH" convert --from "$f" --to byu - "$T/rt-$f-gz.byu" <"$T/rt.$f.gz"
	same "$T/rt-$f-gz.byu" "$T/rt.byu"
done
expect_status 0 "$BACH" convert --from laplace --to laplace "$T/rt.laplace" "$T/rt2.laplace"
same "$T/rt2.laplace" "$T/rt.laplace"
# data reads and writes of 1, 2, 4 or 8 bytes inside a quadword
printf '%s\n' ' L 00001000,8' ' S 00001004,4' ' L 00001012,2' ' S 00001017,1' >"$T/rw.lackey"
expect_status 0 "$BACH" convert --from lackey "$T/rw.lackey" "$T/rw.byu"
for f in tracematcher idtrace; do
	expect_status 0 "$BACH" convert --to "$f" "$T/rw.byu" "$T/rw.$f"
	gzip -c "$T/rw.$f" >"$T/rw.$f.gz"
	expect_status 0 "$BACH" convert --from "$f" "$T/rw.$f.gz" "$T/rw-$f.byu"
	same "$T/rw-$f.byu" "$T/rw.byu"
done

# every import reads gzip: the CIS 501 traces ship as .trace.gz; many
# members read as one; a member cut short or garbage after one is damage
gzip -c "$G/cis501.txt" >"$T/c.trace.gz"
expect_status 0 "$BACH" convert --mask-address --from cis501 --to csv "$T/c.trace.gz" "$T/cgz.csv"
same "$T/cgz.csv" "$G/cis501.csv"
for f in lackey din; do
	gzip -c "$G/$f.txt" >"$T/$f.gz"
	expect_status 0 "$BACH" convert --from "$f" --to csv "$T/$f.gz" "$T/$f-gz.csv"
	same "$T/$f-gz.csv" "$G/$f.csv"
done
gzip -c "$T/p2.bin" >"$T/p2.bin.gz"
expect_status 0 "$BACH" convert --from p2 --to csv "$T/p2.bin.gz" "$T/p2-gz.csv"
same "$T/p2-gz.csv" "$G/p2.csv"
cat "$T/lackey.gz" "$T/lackey.gz" >"$T/l2.gz"
expect_status 0 "$BACH" convert --from lackey --to byu "$T/l2.gz" "$T/l2.byu"
expect_err "40 lines read, 40 records written"
head -c 60 "$T/c.trace.gz" >"$T/ccut.gz"
expect_status 1 "$BACH" convert --mask-address --from cis501 "$T/ccut.gz" "$T/ccut.byu"
expect_err "ccut.gz: truncated gzip member at byte offset 0"
no_output "$T/ccut.byu"
{ cat "$T/c.trace.gz"; echo junk; } >"$T/cjunk.gz"
expect_status 1 "$BACH" convert --mask-address --from cis501 "$T/cjunk.gz" "$T/cjunk.byu"
expect_err "cjunk.gz: not a gzip member at byte offset $(wc -c <"$T/c.trace.gz")"
no_output "$T/cjunk.byu"
# a bad line inside gzip input: named by its line in the uncompressed text
gzip -c "$G/lackey-bad.txt" >"$T/lbad.gz"
expect_status 1 "$BACH" convert --from lackey "$T/lbad.gz" "$T/lbad.byu"
expect_err "lbad.gz: line 4: unknown operation 'Q'"

# ---- a damaged input converted to a stream ---------------------------
# A named output is removed on failure; standard output cannot be taken
# back, so it gets every record before the damage (as many as bach dump
# prints), not the records short of the writer's last buffer (4 MiB raw, 64
# KiB blocks compressed) that it dropped once.
expect_status 0 "$BACH" gen --records 3000000 --seed 2 -o "$T/s.byu"
expect_status 0 "$BACH" convert "$T/s.byu" "$T/s.byu.zst"
python3 -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read())
for i in range(len(d) // 2, len(d) // 2 + 64):
    d[i] ^= 0x55
open(sys.argv[2], "wb").write(d)' "$T/s.byu.zst" "$T/sbad.byu.zst"
good=$("$BACH" dump "$T/sbad.byu.zst" 2>/dev/null | wc -l)
[ "$good" -gt 699050 ] || fail "damage too early to test the last buffer: $good records"
head -c $((good * 6)) "$T/s.byu" >"$T/sgood.byu"
for f in byu byu.gz byu.zst; do
	rc=0
	"$BACH" convert --to "$f" "$T/sbad.byu.zst" - >"$T/sout.$f" 2>"$T/err" || rc=$?
	[ $rc -eq 1 ] || fail "convert --to $f of a damaged input to stdout: not exit 1"
	grep -q "sbad.byu.zst: bad zstd frame at byte offset" "$T/err" ||
		fail "convert --to $f: no damage message: $(cat "$T/err")"
done
cmp -s "$T/sout.byu" "$T/sgood.byu" || fail "stdout .byu: not the $good records before the damage"
gzip -dc "$T/sout.byu.gz" >"$T/sgz.byu" 2>/dev/null
cmp -s "$T/sgz.byu" "$T/sgood.byu" || fail "stdout .byu.gz: not the $good records before the damage"
zstd -qdc "$T/sout.byu.zst" >"$T/szst.byu"
cmp -s "$T/szst.byu" "$T/sgood.byu" || fail "stdout .byu.zst: not the $good records before the damage"
expect_status 1 "$BACH" convert --to byu "$T/sbad.byu.zst" "$T/snamed.byu"
no_output "$T/snamed.byu"

# ---- byu <-> byu.gz ---------------------------------------------------

expect_status 0 "$BACH" gen --records 100000 --seed 3 -o "$T/a.byu"
expect_status 0 "$BACH" convert "$T/a.byu" "$T/a.byu.gz"
expect_status 0 "$BACH" convert "$T/a.byu.gz" "$T/a2.byu"
cmp -s "$T/a.byu" "$T/a2.byu" || fail "byu -> byu.gz -> byu differs"
if command -v gzip >/dev/null 2>&1; then
	gzip -dc "$T/a.byu.gz" >"$T/a3.byu" || fail "gzip cannot read a.byu.gz"
	cmp -s "$T/a.byu" "$T/a3.byu" || fail "gzip reads a.byu.gz differently"
	# a plain single-member gzip file reads too
	gzip -c "$T/a.byu" >"$T/plain.byu.gz"
	expect_status 0 "$BACH" convert "$T/plain.byu.gz" "$T/a4.byu"
	cmp -s "$T/a.byu" "$T/a4.byu" || fail "plain gzip differs"
fi
# every level gives the same records
expect_status 0 "$BACH" convert --level 1 --threads 1 "$T/a.byu" "$T/a1.byu.gz"
expect_status 0 "$BACH" convert --level 12 --threads 3 "$T/a.byu" "$T/a12.byu.gz"
for f in a1 a12; do
	expect_status 0 "$BACH" convert "$T/$f.byu.gz" "$T/$f.byu"
	cmp -s "$T/a.byu" "$T/$f.byu" || fail "level file $f.byu.gz differs"
done

# concatenated members: one trace, the two in order
expect_status 0 "$BACH" gen --records 54321 --seed 4 -o "$T/b.byu"
expect_status 0 "$BACH" convert "$T/b.byu" "$T/b.byu.gz"
cat "$T/a.byu.gz" "$T/b.byu.gz" >"$T/ab.byu.gz"
cat "$T/a.byu" "$T/b.byu" >"$T/ab.byu"
expect_status 0 "$BACH" convert "$T/ab.byu.gz" "$T/ab2.byu"
cmp -s "$T/ab.byu" "$T/ab2.byu" || fail "concatenated members differ"
expect_err "154321 records read"

# ---- bad inputs -------------------------------------------------------

# a malformed line: data error naming the line, no output
expect_status 1 "$BACH" convert --from lackey "$G/lackey-bad.txt" "$T/bad.byu"
expect_err "lackey-bad.txt: line 4: unknown operation 'Q'"
no_output "$T/bad.byu"
expect_status 1 "$BACH" convert --from lackey --to csv "$G/lackey-bad.txt" "$T/bad.csv"
expect_err "line 4"
no_output "$T/bad.csv"
# a p2 file of 13 bytes
head -c 13 "$T/p2.bin" >"$T/p2-13.bin"
expect_status 1 "$BACH" convert --from p2 "$T/p2-13.bin" "$T/p13.byu"
expect_err "multiple of 12"
no_output "$T/p13.byu"
# an unknown p2 request type, named by record and byte offset
{ head -c 24 "$T/p2.bin"; printf '\000\020\000\000\004\004\000\000\000\000\000\000'; } >"$T/p2-type.bin"
expect_status 1 "$BACH" convert --from p2 "$T/p2-type.bin" "$T/pt.byu"
expect_err "record 2 (byte offset 24): unknown request type 0x04"
no_output "$T/pt.byu"
# empty files are empty traces, in every format, both ways
: >"$T/empty.txt"
for from in lackey din cis501 p2 laplace laplace-bin tracematcher idtrace byu; do
	expect_status 0 "$BACH" convert --from "$from" --to byu.gz "$T/empty.txt" "$T/e.byu.gz"
	expect_status 0 "$BACH" convert "$T/e.byu.gz" "$T/e.byu"
	[ -f "$T/e.byu" ] && [ ! -s "$T/e.byu" ] || fail "$from: an empty input is not an empty trace"
	expect_status 0 "$BACH" verify "$T/e.byu.gz"
	expect_out "OK, 0 records"
done
# a truncated byu.gz
head -c 2000 "$T/a.byu.gz" >"$T/cut.byu.gz"
expect_status 1 "$BACH" convert "$T/cut.byu.gz" "$T/cut.byu"
no_output "$T/cut.byu"
# a missing file, a directory where a file belongs: usage/environment
expect_status 2 "$BACH" convert --from lackey "$T/nonexistent" "$T/m.byu"
expect_err "nonexistent"
no_output "$T/m.byu"
mkdir "$T/dir"
expect_status 2 "$BACH" convert --from din "$T/dir" "$T/d.byu"
no_output "$T/d.byu"
# unknown formats and missing arguments
expect_status 2 "$BACH" convert --from nosuch "$G/din.txt" "$T/u.byu"
expect_err "unknown format 'nosuch'"
no_output "$T/u.byu"
expect_status 2 "$BACH" convert --to nosuch "$T/mix.byu" "$T/u.txt"
expect_err "unknown format 'nosuch'"
expect_status 2 "$BACH" convert --from din --to din "$G/din.txt"
expect_status 2 "$BACH" convert --from din "$G/din.txt" "$T/u.what"
expect_err "cannot tell the output format"
# long lines: any length up to 1 MiB (a din line's comment, blanks after a
# lackey access); beyond, an error naming the file, the line and the limit
{
	echo " L 0421be0e,4"
	printf ' S 0421be10,8%5000s\n' ''
	printf ' I  04000b73,2%70000s\n' ''
} >"$T/long.lackey"
expect_status 0 "$BACH" convert --from lackey --to csv "$T/long.lackey" "$T/long.csv"
expect_err "3 lines read, 4 records written"
printf '2 4000b73 %70000s\n' 'comment' >"$T/long.din"
expect_status 0 "$BACH" convert --from din --to csv "$T/long.din" "$T/longdin.csv"
expect_err "1 line read, 1 record written"
{
	echo "0 1000"
	printf '1 2000 %1100000s\n' 'x'
	echo "2 3000"
} >"$T/huge.din"
expect_status 1 "$BACH" convert --from din "$T/huge.din" "$T/huge.byu"
expect_err "huge.din: line 2: longer than 1048576 bytes (the most a line may have)"
no_output "$T/huge.byu"
# a failed conversion leaves an existing OUT alone
echo keep >"$T/keep.byu"
expect_status 1 "$BACH" convert --from lackey "$G/lackey-bad.txt" "$T/keep.byu"
[ "$(cat "$T/keep.byu")" = keep ] || fail "a failed conversion replaced OUT"

# ---- an output that is an input: refused, the input untouched ----------

# same_input ARGS...: bach convert ARGS exits 2 naming the same file, and
# every file it was given is as it was
same_input() {
	cp "$T/mix.byu" "$T/si.byu"
	cp "$T/mix.byu.gz" "$T/si.byu.gz"
	cp "$G/din.txt" "$T/si.din"
	expect_status 2 "$BACH" convert "$@"
	expect_err "the same file as the input"
	same "$T/si.byu" "$T/mix.byu"
	same "$T/si.byu.gz" "$T/mix.byu.gz"
	same "$T/si.din" "$G/din.txt"
	ls -a "$T" | grep -q '^\.si\.' && fail "temporary left: $(ls -a "$T")"
	true
}
same_input --to din "$T/si.byu.gz" "$T/si.byu.gz"
same_input --to csv "$T/si.byu" "$T/si.byu"
same_input "$T/si.byu" "$T/si.byu"
same_input --from din --to din "$T/si.din" "$T/si.din"
same_input --from din --to byu "$T/si.din" "$T/si.din"
# through a hard link and a symbolic link
ln -f "$T/si.byu" "$T/hard.csv" 2>/dev/null || cp "$T/si.byu" "$T/hard.csv"
ln -sf si.byu "$T/soft.csv"
same_input "$T/si.byu" "$T/soft.csv"
[ -L "$T/soft.csv" ] || fail "the symbolic link was replaced"
if [ "$(stat -c %i "$T/si.byu")" = "$(stat -c %i "$T/hard.csv")" ]; then
	same_input "$T/si.byu" "$T/hard.csv"
fi
# - for standard input or output, when it is the other file
same_input --from byu --to csv - "$T/si.byu" <"$T/si.byu"
cp "$T/mix.byu" "$T/si.byu"
rc=0
"$BACH" convert --to csv "$T/si.byu" - >>"$T/si.byu" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "convert to - appended to its input: exit $rc"
expect_err "the same file as the input"
same "$T/si.byu" "$T/mix.byu"
# a capture directory: neither its segments nor a new file in it
mkdir "$T/scap"
cp "$T/mix.byu" "$T/scap/seg-000001.byu"
expect_status 2 "$BACH" convert --to byu "$T/scap" "$T/scap/seg-000001.byu"
expect_err "inside the capture directory"
same "$T/scap/seg-000001.byu" "$T/mix.byu"
expect_status 2 "$BACH" convert "$T/scap" "$T/scap/seg-000002.byu.gz"
expect_err "inside the capture directory"
[ "$(ls -a "$T/scap" | wc -l)" -eq 3 ] || fail "a file was added to the capture: $(ls -a "$T/scap")"

# Blocked members are inflated whole with libdeflate (lib/io/gzin.c
# inflate_whole()): more compressed bytes than the reader's 1 MiB input
# buffer, so members straddle it and are read in whole first, and more
# records than its 256 KiB output blocks, so members wait for the next
# block; from a file and through a pipe (short reads), written by the
# record encoder, by libdeflate and by gzip (one plain member: zlib), the
# same records as the raw trace and as gunzip gives.
expect_status 0 "$BACH" gen --records 1500000 --seed 9 -o "$T/big.byu"
expect_status 0 "$BACH" convert -q "$T/big.byu" "$T/big-record.byu.gz"
expect_status 0 "$BACH" convert -q --level 6 "$T/big.byu" "$T/big-libdeflate.byu.gz"
gzip -1 -c "$T/big.byu" >"$T/big-gzip.byu.gz"
for c in record libdeflate gzip; do
	[ "$(wc -c <"$T/big-$c.byu.gz")" -gt 1100000 ] ||
		fail "$c: the .byu.gz fits the input buffer"
	gunzip -c "$T/big-$c.byu.gz" | cmp -s - "$T/big.byu" ||
		fail "$c: gunzip does not give the trace back"
	expect_status 0 "$BACH" diff -q "$T/big.byu" "$T/big-$c.byu.gz"
	cat "$T/big-$c.byu.gz" | expect_status 0 "$BACH" diff -q "$T/big.byu" -
done

# csv shows a gap marker as dump --format csv does, as a gap with its lost
# count and the cause of the capture's manifest (docs/formats.md 5, 7.4):
# the whole capture, a range that starts past a gap, filtered, and a lone
# segment (cause unknown)
mkdir "$T/gcap"
expect_status 0 "$BACH" capture --driver fake --option records=30000 \
	--option seed=4 --option frame=1000 --option drop_every=4 \
	--output "$T/gcap"
C=$(ls -d "$T"/gcap/2*Z*)
"$BACH" dump --format csv "$C" >"$T/gdump.csv"
grep -q ',0x0f,GAP:lost=[0-9]*:cause=frames$' "$T/gdump.csv" ||
	fail "no gap markers in the capture: $(head -n 3 "$T/gdump.csv")"
expect_status 0 "$BACH" convert -q --to csv "$C" "$T/gconv.csv"
same "$T/gdump.csv" "$T/gconv.csv"
at=$(awk -F, '$5 ~ /^GAP:/ { n++; if (n == 2) { print $1; exit } }' "$T/gdump.csv")
expect_status 0 "$BACH" convert -q --range "$((at - 5)):" "$C" "$T/grange.csv"
awk -F, -v a="$((at - 5))" 'NR == 1 || $1 >= a' "$T/gdump.csv" >"$T/want.csv"
same "$T/want.csv" "$T/grange.csv"
expect_status 0 "$BACH" convert -q --type write "$C" "$T/gtype.csv"
"$BACH" dump --format csv --type write "$C" >"$T/want.csv"
grep -q GAP: "$T/want.csv" || fail "the filter dropped the gap markers"
same "$T/want.csv" "$T/gtype.csv"
S=$(ls "$C"/seg-*.byu* | head -n 1)
cp "$S" "$T/glone-$(basename "$S")"
expect_status 0 "$BACH" convert -q "$T/glone-$(basename "$S")" "$T/glone.csv"
grep -q ',GAP:lost=[0-9]*:cause=unknown$' "$T/glone.csv" ||
	fail "a lone segment's gap: $(grep -m 1 GAP: "$T/glone.csv")"

[ -z "${BACH_REGOLD:-}" ] || echo "golden files rewritten in $G"
exit 0
